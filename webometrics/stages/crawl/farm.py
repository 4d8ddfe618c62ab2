"""Crawl farms: several crawler processes, here and on other machines, on one Redis
frontier. :func:`run` announces each phase (:func:`_publish`); :func:`work`
(``webometrics crawl-worker``) joins the announced phases until the run ends.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from core.exceptions import ConfigError, ParameterError, StageError
from core.settings import Settings
from store.session import redact
from webometrics.stages.crawl.job import FRONTIER_FILE, CrawlOptions, _absolute_url, write_private
from webometrics.stages.crawl.processes import _run_children

log = logging.getLogger(__name__)


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
            db_url = _absolute_url(engine)
            job.update(
                db_url=redact(db_url),
                frontier=str(Path(tmp) / FRONTIER_FILE),
                log_file=str(Path(tmp) / f"{phase}.log"),
            )
            job_file = Path(tmp) / f"{phase}.json"
            write_private(job_file, json.dumps(job))
            log.info(
                "joined crawl run %d, %s phase, with %d processes", run_id, phase, opts.processes
            )
            outcome = _run_children(job_file, phase, progress, opts.processes, db_url=db_url)
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
