"""Crawl farms: several crawler processes, here and on other machines, on one Redis
frontier. :func:`~webometrics.stages.crawl.run` announces each phase (:func:`publish`);
:func:`work` (``webometrics crawl-worker``) joins the announced phases until the run ends.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from core.exceptions import ConfigError, ParameterError, StageError
from core.secrets import has_secret
from core.settings import CrawlSettings, Settings
from store.session import redact
from webometrics.stages import StageResult
from webometrics.stages.crawl.job import (
    FRONTIER_FILE,
    PROXY_ENV,
    absolute_url,
    child_environment,
    write_private,
)
from webometrics.stages.crawl.processes import run_children

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkResult(StageResult):
    """What a crawl-farm worker did (:func:`work`)."""

    #: the crawl run it joined
    run_id: int
    #: the phases it worked on, in order
    phases: tuple[str, ...]
    #: pages stored by its processes
    stored: int


def check_farm(engine: Engine, crawl: CrawlSettings) -> Any:
    """The Redis connection of a crawl farm (``[crawl] redis_url``; None for a crawl
    without one).

    Raises
    ------
    ParameterError
        Several ``[crawl] processes`` without Redis.
    ConfigError
        An unreachable Redis server, or a database on SQLite.
    """
    if not crawl.redis_url:
        if crawl.processes > 1:
            raise ParameterError(
                f"--processes {crawl.processes} runs several crawler processes on one shared "
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

    return connect(crawl.redis_url)


def farm_frontier(server: Any, settings: Settings, run_id: int) -> Any:
    """The shared frontier of crawl run ``run_id`` on ``server``."""
    from crawler.redis_frontier import RedisFrontier, run_prefix

    return RedisFrontier(server, run_prefix(settings.crawl.redis_key, run_id))


def _active_key(settings: Settings) -> str:
    return f"{settings.crawl.redis_key}:active"


def publish(server: Any, settings: Settings, run_id: int, phase: str, job_file: Path) -> None:
    """Announce the phase so that `webometrics crawl-worker` processes can join it; the
    database URL is left out (each worker uses its own ``db_url``)."""
    job = json.loads(job_file.read_text(encoding="utf-8"))
    for key in ("db_url", "frontier", "log_file", "progress_file"):
        job.pop(key, None)
    announcement = {"run_id": run_id, "phase": phase, "job": job}
    server.set(_active_key(settings), json.dumps(announcement))


def unpublish(server: Any, settings: Settings, run_id: int) -> None:
    """Take back the announcement of crawl run ``run_id`` (if it is still the active one)."""
    raw = server.get(_active_key(settings))
    if raw and json.loads(raw).get("run_id") == run_id:
        server.delete(_active_key(settings))


def work(
    engine: Engine, settings: Settings, *, wait: float = 60.0, progress: bool = False
) -> WorkResult:
    """Join a crawl farm: run crawler processes on the phases ``webometrics crawl --redis``
    announces, until its run ends.

    Parameters
    ----------
    engine : Engine
        This machine's connection to the run's database (the coordinator's PostgreSQL).
    settings : Settings
        ``[crawl] redis_url`` (the shared frontier's Redis), ``redis_key`` and
        ``processes`` (crawler processes to run here).
    wait : float
        Seconds to wait for a crawl to join, and for the next phase after one ends.
    progress : bool
        Show a progress bar.

    Returns
    -------
    WorkResult
        ``run_id``, ``phases`` (the phases worked on), ``stored`` (pages stored here).

    Raises
    ------
    ConfigError
        No Redis URL, an unreachable server, SQLite, or a database without the run.
    StageError
        Nothing to join within ``wait`` seconds, or a crawler process failed.
    """
    url = settings.crawl.redis_url
    if not url:
        raise ConfigError("crawl-worker needs the farm's Redis: give --redis URL")
    server = check_farm(engine, settings.crawl)
    run_id: int | None = None
    done: list[str] = []
    stored = 0
    deadline = time.monotonic() + wait
    with tempfile.TemporaryDirectory(prefix="webometrics-worker-") as tmp:
        while (active := _next_phase(server, settings, run_id, done, deadline)) is not None:
            if run_id is None:
                _check_run(engine, int(active["run_id"]))
            run_id = int(active["run_id"])
            stored += _join_phase(engine, settings, Path(tmp), active, progress)
            done.append(active["phase"])
            deadline = time.monotonic() + wait
    if run_id is None:
        raise StageError(
            f"no crawl to join at {url} (key {settings.crawl.redis_key!r}) within {wait:g} s: "
            "start `webometrics crawl --redis URL` first, or wait longer (--wait)"
        )
    return WorkResult(run_id=run_id, phases=tuple(done), stored=stored)


def _next_phase(
    server: Any, settings: Settings, run_id: int | None, done: list[str], deadline: float
) -> dict[str, Any] | None:
    """The announced phase to join next (of run ``run_id`` once one is joined), waiting
    for one until ``deadline``; None when the joined run is over or nothing came."""
    while True:
        raw = server.get(_active_key(settings))
        active: dict[str, Any] | None = json.loads(raw) if raw else None
        if active is None or (run_id is not None and active["run_id"] != run_id):
            if run_id is not None or time.monotonic() > deadline:
                return None
        elif active["phase"] not in done:
            return active
        elif time.monotonic() > deadline:
            return None
        time.sleep(0.5)


def _check_run(engine: Engine, run_id: int) -> None:
    """Refuse a database that does not hold the announced run (another ``db_url``)."""
    from store.models import CrawlRun
    from store.session import session_scope

    with session_scope(engine) as s:
        if s.get(CrawlRun, run_id) is None:
            raise ConfigError(
                f"this worker's database has no crawl run {run_id}: "
                "set db_url to the database of `webometrics crawl --redis` "
                f"(now {engine.url.render_as_string(hide_password=True)})"
            )


def _join_phase(
    engine: Engine, settings: Settings, tmp: Path, active: dict[str, Any], progress: bool
) -> int:
    """Run ``[crawl] processes`` crawler processes on the announced phase; the pages they
    stored."""
    run_id = int(active["run_id"])
    phase = active["phase"]
    processes = settings.crawl.processes
    db_url = absolute_url(engine)
    job = dict(active["job"])
    job.update(
        db_url=redact(db_url),
        frontier=str(tmp / FRONTIER_FILE),
        log_file=str(tmp / f"{phase}.log"),
    )
    job_file = tmp / f"{phase}.json"
    write_private(job_file, json.dumps(job))
    log.info("joined crawl run %d, %s phase, with %d processes", run_id, phase, processes)
    outcome = run_children(
        job_file,
        phase,
        progress,
        processes,
        env=child_environment(db_url, _worker_crawl(settings, job)),
    )
    if outcome["returncode"] != 0:
        raise StageError(
            f"crawl run {run_id}: a {phase} crawler process failed (exit "
            f"{outcome['returncode']}): {outcome.get('stderr', '')[-2000:]}"
        )
    return int(outcome["stats"].get("webometrics/pages_stored", 0))


def _worker_crawl(settings: Settings, job: dict[str, Any]) -> CrawlSettings:
    """The ``[crawl]`` secrets a worker's processes get: its own Redis URL, and the
    farm's proxy (announced with its password masked) from this machine's settings.

    Raises
    ------
    ConfigError
        The farm crawls through a proxy with a password and this machine has no proxy.
    """
    announced = job.get("proxy")
    proxy = settings.crawl.proxy if has_secret(announced) else announced
    if has_secret(announced) and not has_secret(proxy):
        raise ConfigError(
            f"the farm crawls through the proxy {announced} (its password is not announced): "
            f"set {PROXY_ENV} (or [crawl] proxy) on this machine to that proxy's URL"
        )
    return settings.crawl.model_copy(update={"proxy": proxy})
