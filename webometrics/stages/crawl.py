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
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from webometrics.exceptions import ConfigError, ParameterError, StageError
from webometrics.settings import Settings

log = logging.getLogger(__name__)

DIRECTIONS = ("outgoing", "citing", "both")
STATE_FILE = "state.json"
FRONTIER_FILE = "frontier.sqlite"


@dataclass
class CrawlOptions:
    """What one crawl is asked to do (the command line's options)."""

    universities_file: str | None = None
    direction: str = "both"
    proxy: str | None = None
    backlinks: Sequence[str] = ()
    urls: Sequence[str] = ()
    testbed_dir: str | None = None
    jobdir: str | None = None
    progress: bool = True
    pipeline_run_id: int | None = None
    extra_settings: dict[str, Any] = field(default_factory=dict)


def _universities(engine: Engine, names: Sequence[str] | None) -> list[dict[str, Any]]:
    from store.models import University
    from store.session import session_scope

    with session_scope(engine) as s:
        query = select(University).order_by(University.id)
        if names is not None:
            query = query.where(University.name.in_(list(names)))
        rows = [
            {
                "id": u.id,
                "name": u.name,
                "domains": sorted(d.domain for d in u.domains),
                "start_urls": list(u.home_urls or [])
                or [f"https://{d.domain}/" for d in sorted(u.domains, key=lambda d: d.domain)],
            }
            for u in s.scalars(query)
        ]
    if not rows:
        raise ConfigError(
            "no universities to crawl: import some with `webometrics universities import "
            "FILE` or give --universities FILE"
        )
    return rows


def _absolute_url(engine: Engine) -> str:
    """The engine's URL for the crawl process (a relative SQLite path made absolute)."""
    url = engine.url
    db = url.database
    if (
        url.get_backend_name() == "sqlite"
        and db
        and db != ":memory:"
        and not db.startswith("file:")
    ):
        url = url.set(database=str(Path(db).resolve()))
    return url.render_as_string(hide_password=False)


def _read_state(jobdir: Path) -> dict[str, Any]:
    path = jobdir / STATE_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}


def _write_state(jobdir: Path, state: dict[str, Any]) -> None:
    tmp = jobdir / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
    os.replace(tmp, jobdir / STATE_FILE)


def _open_run(
    engine: Engine, settings: Settings, opts: CrawlOptions, jobdir: Path, uni_ids: list[int]
) -> tuple[int, dict[str, Any], bool]:
    """(run id, job state, resumed?)."""
    from store.models import CrawlRun
    from store.session import session_scope

    state = _read_state(jobdir)
    if state.get("run_id"):
        with session_scope(engine) as s:
            run = s.get(CrawlRun, state["run_id"])
            if run is not None and run.status != "finished" and run.kind == opts.direction:
                run.status = "running"
                run.finished_at = None
                run.error = None
                return run.id, state, True
    for name in (FRONTIER_FILE, FRONTIER_FILE + "-wal", FRONTIER_FILE + "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (jobdir / name).unlink()
    recorded = {
        "crawl": settings.crawl.model_dump(),
        "direction": opts.direction,
        "universities": uni_ids,
        "proxy": opts.proxy or settings.crawl.proxy,
        "backlinks": list(opts.backlinks),
        "urls": list(opts.urls),
        "testbed": opts.testbed_dir,
    }
    with session_scope(engine) as s:
        run = CrawlRun(
            kind=opts.direction,
            status="running",
            settings=recorded,
            stats={},
            pipeline_run_id=opts.pipeline_run_id,
        )
        s.add(run)
        s.flush()
        run_id = run.id
    state = {"run_id": run_id, "direction": opts.direction, "phases_done": []}
    _write_state(jobdir, state)
    return run_id, state, False


def _citing_candidates(
    engine: Engine, opts: CrawlOptions, universities: list[dict[str, Any]]
) -> tuple[list[Any], dict[str, int]]:
    from crawler.sources import (
        SourceReport,
        UniversityDomains,
        dedupe,
        read_backlinks,
        read_url_list,
        stored_candidates,
    )

    unis = [UniversityDomains(u["id"], frozenset(u["domains"])) for u in universities]
    report = SourceReport()
    for path in opts.backlinks:
        report.extend(read_backlinks(path, unis))
    for path in opts.urls:
        report.extend(read_url_list(path, unis))
    if opts.testbed_dir:
        report.extend(_testbed_candidates(Path(opts.testbed_dir), universities, unis))
    report.extend(stored_candidates(engine, unis))
    return dedupe(report.candidates), dict(report.skipped)


def _testbed_candidates(folder: Path, universities: list[dict[str, Any]], unis: list[Any]) -> Any:
    """The test web's per-university Majestic-style CSVs (``citing/<key>.majestic.csv``),
    matched to the crawled universities through its manifest."""
    from crawler.sources import SourceReport, read_backlinks

    manifest = folder / "manifest.json"
    if not manifest.is_file():
        raise ConfigError(
            f"{folder}: no manifest.json: build the test web with `webometrics testbed build "
            f"--out {folder}`"
        )
    data = json.loads(manifest.read_text(encoding="utf-8"))
    names = {u["name"] for u in universities}
    report = SourceReport()
    for uni in data.get("universities", []):
        if uni.get("name") not in names:
            continue
        path = folder / "citing" / f"{uni['key']}.majestic.csv"
        if path.is_file():
            report.extend(read_backlinks(path, unis))
    return report


def _phase_job(
    settings: Settings,
    opts: CrawlOptions,
    jobdir: Path,
    run_id: int,
    phase: str,
    universities: list[dict[str, Any]],
    db_url: str,
    candidates: list[Any] | None = None,
) -> Path:
    job: dict[str, Any] = {
        "direction": phase,
        "run_id": run_id,
        "db_url": db_url,
        "crawl": settings.crawl.model_dump(),
        "extract": {
            "extract": settings.extract.model_dump(mode="json"),
            "shingle": settings.shingle.model_dump(mode="json"),
            "workers": settings.crawl.extract_workers,
        },
        "proxy": opts.proxy or settings.crawl.proxy,
        "universities": universities,
        "frontier": str(jobdir / FRONTIER_FILE),
        "log_file": str(jobdir / f"{phase}.log"),
    }
    if candidates is not None:
        job["candidates"] = [
            {"url": c.url, "uni": c.university_id, "source": c.source} for c in candidates
        ]
    path = jobdir / f"{phase}.json"
    path.write_text(json.dumps(job), encoding="utf-8")
    return path


def _run_child(job_file: Path, phase: str, progress: bool) -> dict[str, Any]:
    """Run one phase's process, showing its progress; return its last JSON record.

    The progress lines are also appended to ``<phase>.progress.jsonl`` and the process's
    standard error to ``<phase>.stderr`` in the job folder.
    """
    from tqdm import tqdm

    cmd = [sys.executable, "-m", "crawler.run", str(job_file)]
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    bar = tqdm(desc=f"crawl {phase}", unit="page", disable=not progress, dynamic_ncols=True)
    last: dict[str, Any] = {}
    err_path = job_file.with_suffix(".stderr")
    with (
        open(err_path, "w", encoding="utf-8") as err,
        open(job_file.with_suffix(".progress.jsonl"), "a", encoding="utf-8") as records,
    ):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                records.write(line if line.endswith("\n") else line + "\n")
                last = record
                stored = int(record.get("stored") or 0)
                if stored > bar.n:
                    bar.update(stored - bar.n)
                bar.set_postfix(
                    queued=record.get("queued", 0),
                    errors=record.get("error_pages", 0),
                    refresh=False,
                )
            code = proc.wait()
        except BaseException:
            # Ctrl-C reaches the child too (same process group); let it store what it holds
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(60)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            raise
        finally:
            bar.close()
    last["returncode"] = code
    last["stderr"] = err_path.read_text(encoding="utf-8", errors="replace")[-4000:]
    return last


def _merge_scrapy_stats(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = out.get(key, 0) + value
    return out


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

    Returns
    -------
    dict
        The run's statistics: ``run_id``, pages, bytes, errors by kind, links,
        citations by status, environment sizes, per-phase Scrapy statistics.

    Raises
    ------
    ParameterError
        An unknown direction.
    ConfigError
        No universities, or an unreadable citing source.
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
    )
    names = None
    if universities_file:
        from webometrics.universities import import_universities, parse_universities

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
            outcome = _run_child(job_file, phase, progress)
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
        if frontier_file.is_file():
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
        update_run(
            engine, run_id, status="finished", finished_at=dt.datetime.now(dt.UTC), stats=stats
        )
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
        if temporary:
            shutil.rmtree(job_path, ignore_errors=True)
    stats["run_id"] = run_id
    return stats
