"""No run left ``running``: heartbeats of living runs, stale runs marked ``interrupted``.

A crawl run or a pipeline run writes the time into its row's ``heartbeat_at`` every
``[database] heartbeat_seconds`` while its process lives (:class:`Heartbeat`, a daemon
thread). A process killed without a word (kill -9, power loss, the OOM killer) stops
writing it; the next command that opens the database (:func:`mark_stale`, called by the
command line) finds ``running`` rows whose heartbeat is older than ``[database]
run_lease_seconds`` and marks them ``interrupted`` with the reason. Rows without a
heartbeat (runs of older versions, imports) are left as they are. Cost: one indexed
UPDATE-free SELECT of the running rows per command, a tiny UPDATE per heartbeat.

The lease outlasts a database outage the crawl waits through (``[crawl]
store_retry_seconds``): a run is not taken as dead because its heartbeat could not be
written while the database was away.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import Engine, Select, select

from store.models import CrawlRun, PipelineRun, utcnow
from store.session import session_scope

log = logging.getLogger(__name__)


class Heartbeat:
    """Write ``heartbeat_at`` of one run every ``seconds`` while the block runs.

    Parameters
    ----------
    engine : Engine
    model : type
        :class:`~store.models.CrawlRun` or :class:`~store.models.PipelineRun`.
    run_id : int
    seconds : float
        The interval (``[database] heartbeat_seconds``).

    Notes
    -----
    A failed write (the database away) is logged at debug level and tried again at the
    next beat. The first beat is written on entry.
    """

    def __init__(self, engine: Engine, model: Any, run_id: int, seconds: float) -> None:
        self.engine = engine
        self.model = model
        self.run_id = run_id
        self.seconds = seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self) -> None:
        """Write the time now (errors are logged, not raised)."""
        try:
            with session_scope(self.engine) as s:
                row = s.get(self.model, self.run_id)
                if row is not None:
                    row.heartbeat_at = utcnow()
        except Exception as exc:  # the database away: the next beat tries again
            log.debug("heartbeat of %s %d not written: %s", self.model.__name__, self.run_id, exc)

    def _loop(self) -> None:
        while not self._stop.wait(self.seconds):
            self.beat()

    def __enter__(self) -> Heartbeat:
        self.beat()
        self._thread = threading.Thread(
            target=self._loop, name=f"heartbeat-{self.run_id}", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)


@dataclass(frozen=True)
class StaleRun:
    """A run found dead and marked ``interrupted``."""

    kind: str  # "crawl" | "pipeline"
    run_id: int
    heartbeat_at: dt.datetime
    resume: str | None


_Run = TypeVar("_Run", CrawlRun, PipelineRun)


def _stale(model: type[_Run], cutoff: dt.datetime) -> Select[_Run]:
    """The ``running`` runs of ``model`` whose heartbeat is older than ``cutoff``."""
    return select(model).where(
        model.status == "running",
        model.heartbeat_at.is_not(None),
        model.heartbeat_at < cutoff,
    )


def _interrupt(
    kind: str, rows: Sequence[CrawlRun] | Sequence[PipelineRun], now: dt.datetime
) -> list[StaleRun]:
    """Mark ``rows`` (stale runs of ``kind``) interrupted, saying since when."""
    marked = []
    for row in rows:
        seen = row.heartbeat_at
        assert seen is not None  # as selected
        row.status = "interrupted"
        row.finished_at = seen
        row.error = (
            f"its process stopped without a word (killed, or the machine went down): "
            f"no heartbeat since {seen:%Y-%m-%d %H:%M:%S} UTC, marked interrupted at "
            f"{now:%Y-%m-%d %H:%M:%S} UTC"
        )
        settings = getattr(row, "settings", None) or {}
        marked.append(StaleRun(kind, row.id, seen, settings.get("resume")))
    return marked


def mark_stale(engine: Engine, lease_seconds: float) -> list[StaleRun]:
    """Mark ``interrupted`` every ``running`` crawl or pipeline run whose heartbeat is
    older than ``lease_seconds``; return them.

    Parameters
    ----------
    engine : Engine
        A writable engine, schema at head.
    lease_seconds : float
        ``[database] run_lease_seconds``.

    Returns
    -------
    list of StaleRun
        The runs marked, with the command that resumes a crawl (``None`` for a pipeline
        run, and for a crawl that recorded none).
    """
    now = utcnow()
    cutoff = now - dt.timedelta(seconds=lease_seconds)
    marked: list[StaleRun] = []
    with session_scope(engine) as s:
        marked += _interrupt("crawl", s.scalars(_stale(CrawlRun, cutoff)).all(), now)
        marked += _interrupt("pipeline", s.scalars(_stale(PipelineRun, cutoff)).all(), now)
    return marked


def process_record() -> dict[str, Any]:
    """This process as a run records it (``settings["process"]``): pid and host."""
    import os
    import socket

    return {"pid": os.getpid(), "host": socket.gethostname()}


def _process_alive(process: dict[str, Any] | None) -> bool:
    """Whether a recorded process may still run: on this host, its pid exists; on
    another, it cannot be told (the heartbeat says)."""
    import os
    import socket

    if not process or process.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(process["pid"]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, KeyError, TypeError):
        return True
    return True


def live_crawl(engine: Engine, lease_seconds: float) -> dict[str, Any] | None:
    """A crawl run of another process that is alive: ``running``, its heartbeat newer
    than the lease, and its process not known dead; its holder record (command, pid,
    host, since) or None.

    A lock can be lost while its holder runs on (a PostgreSQL restart ends the session
    of an advisory lock): the crawl's own heartbeat still says it runs, so a second
    crawl is refused by this (:class:`webometrics.runlock.RunLock`).
    """
    cutoff = utcnow() - dt.timedelta(seconds=lease_seconds)
    me = process_record()
    with session_scope(engine) as s:
        rows = s.scalars(
            select(CrawlRun).where(
                CrawlRun.status == "running",
                CrawlRun.heartbeat_at.is_not(None),
                CrawlRun.heartbeat_at >= cutoff,
            )
        ).all()
        for row in rows:
            process = (row.settings or {}).get("process")
            if process == me or not _process_alive(process):
                continue
            return {
                "command": f"crawl run {row.id}",
                "pid": (process or {}).get("pid", "?"),
                "host": (process or {}).get("host", "?"),
                "since": f"{row.started_at:%Y-%m-%d %H:%M:%S}",
                "heartbeat": f"{row.heartbeat_at:%Y-%m-%d %H:%M:%S}",
            }
    return None


def resume_hint(kind: str, row: Any, crawl: Any | None = None) -> str | None:
    """The command that resumes an unfinished run, or ``None``.

    A crawl run gives the command it recorded (``settings["resume"]``). A pipeline run
    gives its crawl's command while the crawl is unfinished, then the run command of the
    stages it still had to do (recorded with its unfinished stage: its database, proxy,
    direction... the secrets named by their environment variables), never a crawl that
    finished or a stage it was not asked for.
    """
    if row.status == "finished":
        return None
    if kind == "crawl":
        return (row.settings or {}).get("resume")
    entries = list(row.stages or [])
    done = {s.get("name") for s in entries if s.get("status") == "finished"}
    recorded = next((s["resume"] for s in reversed(entries) if s.get("resume")), None)
    if recorded is not None:
        todo = [name for name in recorded["todo"] if name not in done]
        command = recorded["command"]
    else:  # a run of an older version: the default stages, without its options
        from webometrics.layout import STAGES

        todo = [name for name in STAGES if name not in done]
        command = f"webometrics run --universities {row.universities_file}"
        if not row.universities_file:
            todo = []
    steps = []
    if crawl is not None and "crawl" in todo:
        if crawl.status == "finished":
            todo.remove("crawl")
        elif (crawl.settings or {}).get("resume"):
            steps.append(crawl.settings["resume"])
            todo.remove("crawl")
    if todo:
        steps.append(f"{command} --stages {','.join(todo)}")
    return " && ".join(steps) or None
