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

Job directory: ``--jobdir`` / ``[crawl] jobdir``, else the run's own folder
``crawl-<run id>`` beside an SQLite file (``<name>-crawls/``) or in the user's state folder
(:func:`~webometrics.stages.pipeline.default_crawl_folder`), removed when the run is
finished and kept otherwise. A crawl killed in any way (even SIGKILL), stopped by a
database outage longer than ``[crawl] store_retry_seconds`` or interrupted, started again
with the same job directory resumes its run: stored pages stay, queued requests are sent,
answers that arrived but were not stored yet are replayed without a new fetch. The run
records the command that does so (``settings["resume"]``); every error says it.

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

from core.choices import DIRECTION_CHOICES
from core.exceptions import DatabaseError, ParameterError, StageError
from core.settings import Settings
from webometrics.liveness import Heartbeat
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
    _create_run,
    _open_run,
    _phase_job,
    _universities,
    _write_state,
    make_private,
    resume_command,
    write_private,
)
from webometrics.stages.crawl.processes import _merge_scrapy_stats, _run_children
from webometrics.stages.pipeline import default_crawl_folder

__all__ = ["DIRECTIONS", "FRONTIER_FILE", "STATE_FILE", "CrawlOptions", "run", "work"]

log = logging.getLogger(__name__)

DIRECTIONS = DIRECTION_CHOICES


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
        The job directory (resumable); default ``[crawl] jobdir``, else the run's own
        folder (see the module docstring).
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
        A crawl process failed or was killed, or the database stayed unreachable past
        ``[crawl] store_retry_seconds`` (the run is ``failed`` or ``interrupted``, its
        state kept; the message gives the command that resumes it).
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
    phases = ["outgoing", "citing"] if direction == "both" else [direction]
    if "citing" in phases:
        _check_sources(opts, universities)  # a rejected file: no run is made
    db_url = _absolute_url(engine)
    job_path, run_id, state, resumed = _job_folder(
        engine, settings, opts, [u["id"] for u in universities]
    )
    base = default_crawl_folder(engine)
    # the run's own folder, also when resumed with --jobdir: removed once it is finished
    own_folder = opts.jobdir is None or (
        base is not None and job_path == Path(base).resolve() / f"crawl-{run_id}"
    )
    resume = resume_command(settings, opts, job_path, db_url)
    _record_resume(engine, run_id, job_path, resume)
    if resumed:
        log.info("resuming crawl run %d from %s", run_id, job_path)
    scrapy_stats: dict[str, Any] = {}
    with session_scope(engine) as s:
        row = s.get(CrawlRun, run_id)
        if row is not None and isinstance(row.stats, dict):
            scrapy_stats = dict(row.stats.get("scrapy", {}))
    candidates: list[Any] = []
    skipped: dict[str, int] = {}
    beat = Heartbeat(engine, CrawlRun, run_id, settings.database.heartbeat_seconds)
    with beat:
        finished = False
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
                        write_private(
                            cand_file,
                            json.dumps(
                                {
                                    "candidates": [c.__dict__ for c in candidates],
                                    "skipped": skipped,
                                }
                            ),
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
                    _phase_failed(
                        engine,
                        run_id,
                        phase,
                        outcome,
                        scrapy_stats,
                        job_path,
                        resume,
                        settings.crawl.store_retry_seconds,
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
            finished = True
            if shared is not None:  # the shared frontier is no longer needed
                _unpublish(farm, settings, run_id)
                shared.clear()
        except BaseException as exc:
            _record_end(engine, run_id, exc, scrapy_stats, resume)
            raise
        finally:
            if farm is not None:
                with contextlib.suppress(Exception):
                    _unpublish(farm, settings, run_id)
            if own_folder and finished:  # kept until the run is finished, to resume it
                shutil.rmtree(job_path, ignore_errors=True)
    stats["run_id"] = run_id
    return stats


def _check_sources(opts: CrawlOptions, universities: list[dict[str, Any]]) -> None:
    """Read the citing sources given on the command line once before the run is made, so
    that a file refused (missing, unreadable, not a backlink export) makes no run."""
    from crawler.sources import UniversityDomains, read_backlinks, read_url_list

    unis = [UniversityDomains(u["id"], frozenset(u["domains"])) for u in universities]
    for path in opts.backlinks:
        read_backlinks(path, unis)
    for path in opts.urls:
        read_url_list(path, unis)


def _job_folder(
    engine: Engine, settings: Settings, opts: CrawlOptions, uni_ids: list[int]
) -> tuple[Path, int, dict[str, Any], bool]:
    """(job folder, run id, job state, resumed?): ``--jobdir`` when given (a crawl
    started again with it resumes its run), else a new run's own folder
    ``crawl-<run id>`` under :func:`~webometrics.stages.pipeline.default_crawl_folder`,
    kept until the run is finished."""
    if opts.jobdir is not None:
        job_path = Path(opts.jobdir).resolve()
        run_id, state, resumed = _open_run(engine, settings, opts, job_path, uni_ids)
        return job_path, run_id, state, resumed
    run_id = _create_run(engine, settings, opts, uni_ids)
    base = default_crawl_folder(engine)
    if base is None:  # an in-memory database: nothing could resume it anyway
        job_path = Path(tempfile.mkdtemp(prefix=f"crawl-{run_id}-"))
    else:
        job_path = Path(base).resolve() / f"crawl-{run_id}"
        Path(base).mkdir(parents=True, exist_ok=True)
    make_private(job_path)
    state = {"run_id": run_id, "direction": opts.direction, "phases_done": []}
    _write_state(job_path, state)
    return job_path, run_id, state, False


def _record_resume(engine: Engine, run_id: int, job_path: Path, resume: str) -> None:
    """Keep the job folder and the command that resumes the run with its settings."""
    from store.models import CrawlRun
    from store.session import session_scope

    with session_scope(engine) as s:
        row = s.get(CrawlRun, run_id)
        if row is not None:
            row.settings = {**(row.settings or {}), "jobdir": str(job_path), "resume": resume}


def _phase_failed(
    engine: Engine,
    run_id: int,
    phase: str,
    outcome: dict[str, Any],
    scrapy_stats: dict[str, Any],
    job_path: Path,
    resume: str,
    window: float,
) -> None:
    """Record a crawler process that did not finish and raise the error that says how
    to resume the run."""
    from crawler.run import EXIT_STORE_UNAVAILABLE
    from crawler.storage import update_run
    from crawler.storage.retry import retried

    code = outcome["returncode"]
    stderr = outcome.get("stderr", "")
    if code == EXIT_STORE_UNAVAILABLE:
        lost = _store_reason(outcome) or "the database stayed unreachable"
        reason = f"{phase} crawl stopped: {lost}"
        status = "interrupted"
    else:
        if code < 0:
            what = f"killed by {signal.Signals(-code).name}"
        elif code == 130:
            what = "interrupted"
        else:
            what = f"failed (exit {code})"
        reason = f"{phase} crawl {what}: {stderr[-2000:]}"
        status = "interrupted" if code < 0 or code == 130 else "failed"
    marked = ""
    try:
        # the database may still be coming back: wait for it as the writes did
        retried(
            lambda: update_run(
                engine,
                run_id,
                status=status,
                finished_at=dt.datetime.now(dt.UTC),
                error=reason,
                stats={"scrapy": scrapy_stats},
            ),
            window,
            what=f"marking crawl run {run_id} {status}",
        )
    except DatabaseError:
        marked = (
            f" (the run could not be marked {status}: the database is unreachable; the "
            "next command marks it once its heartbeat is older than the lease)"
        )
    log_file = job_path / f"{phase}.log"
    raise StageError(
        f"crawl run {run_id} {status}: {reason.splitlines()[0] if reason else ''}.\nWhat was "
        "stored is kept; so is the crawl's state (the answers fetched but not stored "
        f"included) in {job_path}{marked}. "
        + ("When the database is back, resume" if status == "interrupted" else "Resume")
        + f" it with:\n  {resume}\nLog: {log_file}"
    )


def _store_reason(outcome: dict[str, Any]) -> str | None:
    """Why the crawler process stopped storing (its ``store_unavailable:`` line)."""
    from crawler.pipelines import STORE_UNAVAILABLE

    marker = f"crawler.run: {STORE_UNAVAILABLE}: "
    for line in reversed(outcome.get("stderr", "").splitlines()):
        if line.startswith(marker):
            return line[len(marker) :].strip()
    return None


def _record_end(
    engine: Engine, run_id: int, exc: BaseException, scrapy_stats: dict[str, Any], resume: str
) -> None:
    """Mark a run that ended on an exception (unless it was already): ``interrupted`` on
    Ctrl-C or SIGTERM, else ``failed``, with the error; say how to resume it."""
    from crawler.storage import update_run
    from store.models import CrawlRun
    from store.session import session_scope

    interrupted = isinstance(exc, KeyboardInterrupt)
    with contextlib.suppress(Exception):
        with session_scope(engine) as s:
            row = s.get(CrawlRun, run_id)
            if row is None or row.status != "running":
                return  # recorded where it happened (_phase_failed)
        update_run(
            engine,
            run_id,
            status="interrupted" if interrupted else "failed",
            finished_at=dt.datetime.now(dt.UTC),
            error=(str(exc) or "interrupted by the user")
            if interrupted
            else f"{type(exc).__name__}: {exc}",
            stats={"scrapy": scrapy_stats},
        )
    if interrupted:
        log.warning("crawl run %d interrupted; resume it with:\n  %s", run_id, resume)
