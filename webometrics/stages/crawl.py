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

from core.exceptions import ConfigError, ParameterError, StageError
from core.settings import Settings

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
    redis: str | None = None
    processes: int = 1
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
    if opts.redis:
        from crawler.redis_frontier import run_prefix

        job["redis"] = {
            "url": opts.redis,
            "prefix": run_prefix(settings.crawl.redis_key, run_id),
            "lease": settings.crawl.worker_lease,
        }
    if candidates is not None:
        job["candidates"] = [
            {"url": c.url, "uni": c.university_id, "source": c.source} for c in candidates
        ]
    path = jobdir / f"{phase}.json"
    path.write_text(json.dumps(job), encoding="utf-8")
    return path


def _run_children(job_file: Path, phase: str, progress: bool, processes: int = 1) -> dict[str, Any]:
    """Run one phase's crawler process(es), showing their progress; return the outcome.

    Each process prints JSON progress records; they are appended to
    ``<phase>.progress.jsonl`` (with the process number) and each process's standard
    error goes to ``<phase>.stderr`` (``<phase>.<n>.stderr`` for several processes) in
    the job folder. The outcome holds the summed Scrapy statistics of the processes'
    last records (``stats``), the first failing ``returncode`` (else 0) and the failing
    processes' standard error (``stderr``).
    """
    import queue
    import threading

    from tqdm import tqdm

    cmd = [sys.executable, "-m", "crawler.run", str(job_file)]
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    desc = f"crawl {phase}" + (f" ({processes} processes)" if processes > 1 else "")
    bar = tqdm(desc=desc, unit="page", disable=not progress, dynamic_ncols=True)
    err_paths = [
        job_file.with_suffix(".stderr" if processes == 1 else f".{n}.stderr")
        for n in range(processes)
    ]
    lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
    procs: list[subprocess.Popen[str]] = []
    last: list[dict[str, Any]] = [{} for _ in range(processes)]

    def pump(n: int, stream: Any) -> None:
        for line in stream:
            lines.put((n, line))
        lines.put((n, None))

    with open(job_file.with_suffix(".progress.jsonl"), "a", encoding="utf-8") as records:
        try:
            for n in range(processes):
                with open(err_paths[n], "w", encoding="utf-8") as err:
                    proc = subprocess.Popen(
                        cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env
                    )
                procs.append(proc)
                threading.Thread(target=pump, args=(n, proc.stdout), daemon=True).start()
            open_streams = processes
            while open_streams:
                n, line = lines.get()
                if line is None:
                    open_streams -= 1
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if processes > 1:
                    record["process"] = n
                records.write(json.dumps(record, default=str) + "\n")
                last[n] = record
                stored = sum(int(r.get("stored") or 0) for r in last)
                if stored > bar.n:
                    bar.update(stored - bar.n)
                bar.set_postfix(
                    queued=record.get("queued", 0),
                    errors=sum(int(r.get("error_pages") or 0) for r in last),
                    refresh=False,
                )
            codes = [proc.wait() for proc in procs]
        except BaseException:
            # Ctrl-C reaches the children too (same process group); let them store what
            # they hold
            for proc in procs:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGINT)
            for proc in procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(60)
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            raise
        finally:
            bar.close()
    stats: dict[str, Any] = {}
    for record in last:
        stats = _merge_scrapy_stats(stats, record.get("stats") or {})
    failing = [n for n, code in enumerate(codes) if code != 0]
    outcome = dict(last[0]) if processes == 1 else {}
    outcome["stats"] = stats
    outcome["returncode"] = codes[failing[0]] if failing else 0
    outcome["stderr"] = "\n".join(
        err_paths[n].read_text(encoding="utf-8", errors="replace")[-4000:] for n in (failing or [0])
    )
    return outcome


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
            outcome = _run_children(job_file, phase, progress, opts.processes)
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


# -- crawl farms: several crawler processes on one Redis frontier --------------------------


def _check_farm(engine: Engine, opts: CrawlOptions) -> Any:
    """The Redis connection of a crawl farm (None for a one-process crawl)."""
    if opts.processes < 1:
        raise ParameterError(f"--processes must be at least 1, got {opts.processes}")
    if not opts.redis:
        if opts.processes > 1:
            raise ParameterError(
                f"--processes {opts.processes} runs several crawler processes on one shared "
                "frontier: give --redis URL (or [crawl] redis_url) as well"
            )
        return None
    if engine.url.get_backend_name() == "sqlite":
        raise ConfigError(
            "a crawl farm (--redis) writes to one database from every crawler process: use "
            "PostgreSQL (db_url = postgresql+psycopg://USER@HOST/DB); SQLite takes one "
            "writer, so crawl without --redis on it"
        )
    from crawler.redis_frontier import connect

    return connect(opts.redis)


def _farm_frontier(server: Any, settings: Settings, run_id: int) -> Any:
    from crawler.redis_frontier import RedisFrontier, run_prefix

    return RedisFrontier(server, run_prefix(settings.crawl.redis_key, run_id))


def _active_key(settings: Settings) -> str:
    return f"{settings.crawl.redis_key}:active"


def _publish(server: Any, settings: Settings, run_id: int, phase: str, job_file: Path) -> None:
    """Announce the phase so that `webometrics crawl-worker` processes can join it; the
    database URL is left out (each worker uses its own ``db_url``)."""
    job = json.loads(job_file.read_text(encoding="utf-8"))
    for key in ("db_url", "frontier", "log_file", "progress_file"):
        job.pop(key, None)
    announcement = {"run_id": run_id, "phase": phase, "job": job}
    server.set(_active_key(settings), json.dumps(announcement))


def _unpublish(server: Any, settings: Settings, run_id: int) -> None:
    raw = server.get(_active_key(settings))
    if raw and json.loads(raw).get("run_id") == run_id:
        server.delete(_active_key(settings))


def work(
    engine: Engine,
    settings: Settings,
    *,
    redis: str | None = None,
    processes: int | None = None,
    wait: float = 60.0,
    progress: bool = False,
) -> dict[str, Any]:
    """Join a crawl farm: run crawler processes on the phases ``webometrics crawl --redis``
    announces, until its run ends.

    Parameters
    ----------
    engine : Engine
        This machine's connection to the run's database (the coordinator's PostgreSQL).
    settings : Settings
        ``[crawl] redis_url``, ``redis_key`` and ``processes`` are the defaults.
    redis : str, optional
        The shared frontier's Redis URL.
    processes : int, optional
        Crawler processes to run here.
    wait : float
        Seconds to wait for a crawl to join, and for the next phase after one ends.
    progress : bool
        Show a progress bar.

    Returns
    -------
    dict
        ``run_id``, ``phases`` (the phases worked on), ``stored`` (pages stored here).

    Raises
    ------
    ConfigError
        No Redis URL, an unreachable server, SQLite, or a database without the run.
    StageError
        Nothing to join within ``wait`` seconds, or a crawler process failed.
    """
    import time

    from store.models import CrawlRun
    from store.session import session_scope

    url = redis or settings.crawl.redis_url
    if not url:
        raise ConfigError("crawl-worker needs the farm's Redis: give --redis URL")
    opts = CrawlOptions(
        redis=url, processes=settings.crawl.processes if processes is None else processes
    )
    server = _check_farm(engine, opts)
    run_id: int | None = None
    done: list[str] = []
    stored = 0
    deadline = time.monotonic() + wait
    with tempfile.TemporaryDirectory(prefix="webometrics-worker-") as tmp:
        while True:
            raw = server.get(_active_key(settings))
            active = json.loads(raw) if raw else None
            if active is None or (run_id is not None and active["run_id"] != run_id):
                if run_id is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
                continue
            if active["phase"] in done:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.5)
                continue
            if run_id is None:
                with session_scope(engine) as s:
                    row = s.get(CrawlRun, active["run_id"])
                    if row is None:
                        raise ConfigError(
                            f"this worker's database has no crawl run {active['run_id']}: "
                            "set db_url to the database of `webometrics crawl --redis` "
                            f"(now {engine.url.render_as_string(hide_password=True)})"
                        )
            run_id = int(active["run_id"])
            phase = active["phase"]
            job = dict(active["job"])
            job.update(
                db_url=_absolute_url(engine),
                frontier=str(Path(tmp) / FRONTIER_FILE),
                log_file=str(Path(tmp) / f"{phase}.log"),
            )
            job_file = Path(tmp) / f"{phase}.json"
            job_file.write_text(json.dumps(job), encoding="utf-8")
            log.info(
                "joined crawl run %d, %s phase, with %d processes", run_id, phase, opts.processes
            )
            outcome = _run_children(job_file, phase, progress, opts.processes)
            if outcome["returncode"] != 0:
                raise StageError(
                    f"crawl run {run_id}: a {phase} crawler process failed (exit "
                    f"{outcome['returncode']}): {outcome.get('stderr', '')[-2000:]}"
                )
            stored += int(outcome["stats"].get("webometrics/pages_stored", 0))
            done.append(phase)
            deadline = time.monotonic() + wait
    if run_id is None:
        raise StageError(
            f"no crawl to join at {url} (key {settings.crawl.redis_key!r}) within {wait:g} s: "
            "start `webometrics crawl --redis URL` first, or wait longer (--wait)"
        )
    return {"run_id": run_id, "phases": done, "stored": stored}
