"""The crawl stage: a recorded crawl run of the outgoing and/or citing environment.

:func:`run` imports the universities file (when given), opens a crawl run (or resumes the
unfinished run of the job directory), then runs each direction as its own process
(:mod:`crawler.run`; Twisted's reactor cannot be restarted within one process), showing
progress from the JSON lines it prints. The outgoing phase crawls the universities'
sites; the citing phase fetches the citing candidates (backlink exports, URL lists, the
test web's citing files, links found in stored pages). Both phases share the job's
frontier, so a page fetched by the first is not fetched again by the second. At the end
each citing candidate is decided from the stored pages (verified / missing / error), and
the run's environment rows and statistics are computed from what is stored.

Job directory: ``--jobdir`` / ``[crawl] jobdir``, else a temporary folder removed at the
end. A crawl killed in any way (even SIGKILL) and started again with the same job
directory resumes its run: stored pages stay, queued requests are sent, answers that
arrived but were not stored yet are replayed without a new fetch.

The package: this module holds :func:`run`; :mod:`.job` the job directory, its state and
the phase job files; :mod:`.citing` the citing candidates; :mod:`.processes` running and
watching the crawler processes; :mod:`.farm` crawl farms (:func:`work`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import shutil
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from core.exceptions import ParameterError, StageError
from core.settings import Settings
from webometrics.stages.crawl.citing import _citing_candidates
from webometrics.stages.crawl.farm import (
    _check_farm,
    _farm_frontier,
    _publish,
    _unpublish,
    work,
)
from webometrics.stages.crawl.job import (
    FRONTIER_FILE,
    STATE_FILE,
    CrawlOptions,
    _absolute_url,
    _open_run,
    _phase_job,
    _universities,
    _write_state,
)
from webometrics.stages.crawl.processes import _merge_scrapy_stats, _run_children

__all__ = ["DIRECTIONS", "FRONTIER_FILE", "STATE_FILE", "CrawlOptions", "run", "work"]

log = logging.getLogger(__name__)

DIRECTIONS = ("outgoing", "citing", "both")


def run(
    engine: Engine,
    settings: Settings,
    *,
    universities_file: str | None = None,
    direction: str = "both",
    proxy: str | None = None,
    backlinks: Sequence[str] = (),
    urls: Sequence[str] = (),
    testbed_dir: str | None = None,
    jobdir: str | None = None,
    progress: bool = False,
    pipeline_run_id: int | None = None,
    redis: str | None = None,
    processes: int | None = None,
) -> dict[str, Any]:
    """Crawl the outgoing and/or citing environment of the universities.

    Parameters
    ----------
    engine : Engine
        The database (schema at head).
    settings : Settings
        ``[crawl]`` and ``[extract]`` are used.
    universities_file : str, optional
        A universities TOML file: imported, and only its universities are crawled (else
        every stored university).
    direction : {"outgoing", "citing", "both"}
    proxy : str, optional
        HTTP proxy for every request (``webometrics testbed serve`` for the test web).
    backlinks, urls : sequence of str
        Backlink exports (Majestic / Ahrefs CSV) and URL lists of citing pages.
    testbed_dir : str, optional
        A built test web: its per-university citing files are used as backlink exports.
    jobdir : str, optional
        The job directory (resumable); default ``[crawl] jobdir`` or a temporary one.
    progress : bool
        Show a progress bar.
    pipeline_run_id : int, optional
        The whole-pipeline run this crawl belongs to.
    redis : str, optional
        A crawl farm: the Redis URL of the shared frontier (default ``[crawl]
        redis_url``). The database must be a server every process can reach
        (PostgreSQL); crawler processes on other machines join with
        :func:`work` (``webometrics crawl-worker``).
    processes : int, optional
        Crawler processes started here (default ``[crawl] processes``); more than one
        needs ``redis``.

    Returns
    -------
    dict
        The run's statistics: ``run_id``, pages, bytes, errors by kind, links,
        citations by status, environment sizes, per-phase Scrapy statistics.

    Raises
    ------
    ParameterError
        An unknown direction, or several processes without Redis.
    ConfigError
        No universities, an unreadable citing source, an unreachable Redis server, or a
        crawl farm on SQLite.
    StageError
        A crawl process failed or was killed (the run is kept; start again with the same
        job directory to resume).
    """
    from crawler.storage import finalize_run, resolve_citations, update_run
    from store.models import CrawlRun
    from store.session import session_scope

    if direction not in DIRECTIONS:
        raise ParameterError(f"direction {direction!r} must be one of {', '.join(DIRECTIONS)}")
    opts = CrawlOptions(
        universities_file=universities_file,
        direction=direction,
        proxy=proxy,
        backlinks=tuple(backlinks),
        urls=tuple(urls),
        testbed_dir=testbed_dir,
        jobdir=jobdir or settings.crawl.jobdir,
        progress=progress,
        pipeline_run_id=pipeline_run_id,
        redis=redis or settings.crawl.redis_url,
        processes=settings.crawl.processes if processes is None else processes,
    )
    farm = _check_farm(engine, opts)
    names = None
    if universities_file:
        from core.universities import parse_universities
        from store.universities import import_universities

        specs = parse_universities(universities_file)
        import_universities(engine, specs)
        names = [spec.name for spec in specs]
    universities = _universities(engine, names)
    temporary = opts.jobdir is None
    job_path = Path(opts.jobdir or tempfile.mkdtemp(prefix="webometrics-crawl-"))
    job_path.mkdir(parents=True, exist_ok=True)
    db_url = _absolute_url(engine)
    run_id, state, resumed = _open_run(
        engine, settings, opts, job_path, [u["id"] for u in universities]
    )
    if resumed:
        log.info("resuming crawl run %d from %s", run_id, job_path)
    phases = ["outgoing", "citing"] if direction == "both" else [direction]
    scrapy_stats: dict[str, Any] = {}
    with session_scope(engine) as s:
        row = s.get(CrawlRun, run_id)
        if row is not None and isinstance(row.stats, dict):
            scrapy_stats = dict(row.stats.get("scrapy", {}))
    candidates: list[Any] = []
    skipped: dict[str, int] = {}
    try:
        for phase in phases:
            if phase == "citing":
                cand_file = job_path / "citing-candidates.json"
                if cand_file.is_file():
                    from crawler.storage import CitingCandidate

                    stored = json.loads(cand_file.read_text(encoding="utf-8"))
                    candidates = [CitingCandidate(**c) for c in stored["candidates"]]
                    skipped = stored.get("skipped", {})
                else:
                    candidates, skipped = _citing_candidates(engine, opts, universities)
                    cand_file.write_text(
                        json.dumps(
                            {
                                "candidates": [c.__dict__ for c in candidates],
                                "skipped": skipped,
                            }
                        ),
                        encoding="utf-8",
                    )
            if phase in state.get("phases_done", []):
                continue
            job_file = _phase_job(
                settings,
                opts,
                job_path,
                run_id,
                phase,
                universities,
                db_url,
                candidates if phase == "citing" else None,
            )
            if farm is not None:
                _publish(farm, settings, run_id, phase, job_file)
            outcome = _run_children(job_file, phase, progress, opts.processes, db_url=db_url)
            phase_stats = outcome.get("stats") or {}
            scrapy_stats[phase] = _merge_scrapy_stats(scrapy_stats.get(phase, {}), phase_stats)
            code = outcome["returncode"]
            if code != 0:
                if code < 0:
                    what = f"killed by {signal.Signals(-code).name}"
                elif code == 130:
                    what = "interrupted"
                else:
                    what = f"failed (exit {code})"
                update_run(
                    engine,
                    run_id,
                    status="interrupted" if code < 0 or code == 130 else "failed",
                    finished_at=dt.datetime.now(dt.UTC),
                    error=f"{phase} crawl {what}: {outcome.get('stderr', '')[-2000:]}",
                    stats={"scrapy": scrapy_stats},
                )
                raise StageError(
                    f"crawl run {run_id}: the {phase} crawl {what}; what was stored is kept. "
                    f"Start it again with --jobdir {job_path} to resume"
                    + ("" if not temporary else " (use --jobdir to make crawls resumable)")
                    + (f". Log: {job_path / (phase + '.log')}" if not temporary else "")
                )
            state.setdefault("phases_done", []).append(phase)
            _write_state(job_path, state)
        redirects: dict[str, str] = {}
        frontier_file = job_path / FRONTIER_FILE
        shared = _farm_frontier(farm, settings, run_id) if farm is not None else None
        if shared is not None:
            redirects = shared.redirects()
        elif frontier_file.is_file():
            from crawler.frontier import Frontier

            frontier = Frontier(frontier_file)
            try:
                redirects = frontier.redirects()
            finally:
                frontier.close()
        citations: dict[str, int] = {}
        if "citing" in phases:
            citations = dict(
                resolve_citations(
                    engine,
                    run_id,
                    candidates,
                    redirects,
                    max_redirects=settings.crawl.max_redirects,
                )
            )
        stats = finalize_run(engine, run_id)
        stats["citing_candidates"] = len(candidates)
        stats["citing_skipped"] = skipped
        stats["citing_checked"] = citations
        stats["scrapy"] = scrapy_stats
        stats["resumed"] = bool(resumed)
        if shared is not None:
            stats["processes"] = opts.processes
            stats["farm_workers"] = shared.counts()["joined"]
        update_run(
            engine, run_id, status="finished", finished_at=dt.datetime.now(dt.UTC), stats=stats
        )
        if shared is not None:  # the shared frontier is no longer needed
            _unpublish(farm, settings, run_id)
            shared.clear()
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):
            update_run(
                engine,
                run_id,
                status="interrupted",
                finished_at=dt.datetime.now(dt.UTC),
                error="interrupted by the user",
                stats={"scrapy": scrapy_stats},
            )
        raise
    finally:
        if farm is not None:
            with contextlib.suppress(Exception):
                _unpublish(farm, settings, run_id)
        if temporary:
            shutil.rmtree(job_path, ignore_errors=True)
    stats["run_id"] = run_id
    return stats
