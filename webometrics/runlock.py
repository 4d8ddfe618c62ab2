"""Locks so that work that must not overlap on one database never does, naming the holder.

Two locks of the same name never coexist on one database; the second gets
:class:`~core.exceptions.RunLockedError` (exit code 4) naming who holds the first: the
command, its process id and host, and since when.

==============  ===================================  ==========================================
lock            taken by                             why
==============  ===================================  ==========================================
``run``         ``webometrics run`` (and scheduled   two pipeline runs never overlap; a run
                runs), with every lock below         also excludes every stage command below
``crawl``       ``webometrics crawl``                two crawls would fetch and store the same
                                                     pages twice, per-run figures meaningless
``extract``     ``webometrics extract``              two would extract the same pages twice
``dedup``       ``webometrics dedup``                one's groups would replace the other's
``analysis``    ``webometrics cluster``, ``analyse`` ``analyse`` reads the clusterings and
                                                     categories ``cluster`` is rewriting
==============  ===================================  ==========================================

Stages under different locks may overlap (a ``crawl`` with an ``extract`` or a
``cluster``: each works on what was stored when it read it), and so may the commands that
take none: ``crawl-worker`` (it joins a crawl farm), ``import warc``, ``universities``,
``report``, ``dashboard``, the ``citing`` imports. A pipeline run calls the stages'
functions, not the commands, so it never waits for a lock it holds itself.

PostgreSQL: session-level advisory locks (``pg_try_advisory_lock``) on one connection, so
processes on different machines of a team exclude each other; the holder is found in
``pg_locks`` and ``pg_stat_activity`` (the lock connection's ``application_name`` carries
the command, pid and host; its start time is "since"). A server restart ends that session
and its locks while the holder runs on: a keeper thread looks at the connection every
:data:`KEEP_SECONDS` and takes the locks again on a new one as soon as the server is
back; and a second ``crawl`` (or ``run``) that gets the lock first still finds the first
crawl's run ``running`` with a fresh heartbeat (:func:`webometrics.liveness.live_crawl`)
and is refused, so two crawls never write at once. SQLite: an exclusive ``flock`` on
``<database file>.lock`` (``run``) or ``<database file>.<lock>.lock`` beside the database
(processes on one machine); the file holds the holder as JSON.

Examples
--------
>>> lock_for("cluster"), lock_for("analyse"), lock_for("crawl")
('analysis', 'analysis', 'crawl')
>>> holder_text({"command": "webometrics crawl", "pid": 42, "host": "h1",
...              "since": "2026-11-25 16:20:01"})
'webometrics crawl (pid 42 on h1, since 2026-11-25 16:20:01 UTC)'
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import logging
import os
import re
import socket
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError, OperationalError, PendingRollbackError

from core.defaults import RUN_LEASE_SECONDS
from core.exceptions import RunLockedError
from core.secrets import redact_text

log = logging.getLogger(__name__)

LOCK_KEY = 0x7765_626F  # "webo": the advisory-lock key of pipeline runs
#: how often a PostgreSQL lock's connection is looked at (and its locks taken again)
KEEP_SECONDS = 1.0

#: Each lock's second advisory-lock key (PostgreSQL) and what overlapping would spoil.
LOCKS: dict[str, tuple[int, str]] = {
    "run": (0, "pipeline runs never overlap"),
    "crawl": (1, "two crawls would fetch and store the same pages twice"),
    "extract": (2, "two extractions would extract the same pages twice"),
    "dedup": (3, "one deduplication's groups would replace the other's"),
    "analysis": (4, "`analyse` would read the clusterings `cluster` is rewriting"),
}

#: The lock of each stage command.
STAGE_LOCKS = {
    "crawl": "crawl",
    "extract": "extract",
    "dedup": "dedup",
    "cluster": "analysis",
    "analyse": "analysis",
}


def lock_for(stage: str) -> str:
    """The name of the lock a stage command takes."""
    return STAGE_LOCKS[stage]


def holder_text(holder: dict[str, Any] | None) -> str:
    """``command (pid N on host, since T UTC)``, from what the holder recorded."""
    if not holder:
        return "a process that left no record of itself"
    return (
        f"{holder.get('command') or 'webometrics'} (pid {holder.get('pid', '?')} on "
        f"{holder.get('host', '?')}, since {holder.get('since', '?')} UTC)"
    )


def _command_line() -> str:
    """This process's command line, any password in a URL masked, at most 200 chars."""
    args = [Path(sys.argv[0]).name if sys.argv else "webometrics", *sys.argv[1:]]
    if args[0] in ("__main__.py", "-m", "-c"):
        args[0] = "webometrics"
    return redact_text(" ".join(args))[:200]


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


class RunLock:
    """Context manager holding a named lock of the database (by default the pipeline-run
    lock, which also takes every stage lock).

    Parameters
    ----------
    engine : Engine
        The database.
    name : str
        ``"run"`` (a pipeline run) or a lock of :data:`LOCKS` (a stage command).
    command : str, optional
        What holds it, as told to a second comer (default: this process's command line,
        passwords masked).

    Raises
    ------
    RunLockedError
        Another process holds the lock (exit code 4); the message names the holder.
    """

    def __init__(self, engine: Engine, name: str = "run", *, command: str | None = None) -> None:
        if name not in LOCKS:
            raise ValueError(f"unknown lock {name!r}: one of {', '.join(LOCKS)}")
        self.engine = engine
        self.name = name
        self.names = list(LOCKS) if name == "run" else [name]
        self.holder = {
            "command": command or _command_line(),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": _now(),
        }
        self._conn: Connection | None = None
        self._fds: list[int] = []
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None

    # --- SQLite: flock on files beside the database ----------------------------
    def lock_path(self, name: str = "run") -> Path:
        database = self.engine.url.database or "memory"
        return Path(f"{database}.lock" if name == "run" else f"{database}.{name}.lock")

    def _take_file(self, name: str) -> None:
        path = self.lock_path(name)
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = json.loads(os.read(fd, 4096).decode("utf-8") or "null")
            except (ValueError, OSError):
                holder = None
            os.close(fd)
            raise self._refusal(name, holder, str(path)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(self.holder).encode("utf-8"), 0)
        self._fds.append(fd)

    # --- PostgreSQL: advisory locks on one connection ---------------------------
    @staticmethod
    def _keys(name: str) -> tuple[str, dict[str, int]]:
        second = LOCKS[name][0]
        if name == "run":  # the single-key form pipeline runs have always taken
            return "pg_try_advisory_lock(:k)", {"k": LOCK_KEY}
        return "pg_try_advisory_lock(:k, :s)", {"k": LOCK_KEY, "s": second}

    def _pg_holder(self, conn: Connection, name: str) -> dict[str, Any] | None:
        if name == "run":
            where = "l.classid = 0 AND l.objid = :k AND l.objsubid = 1"
            params = {"k": LOCK_KEY}
        else:
            where = "l.classid = :k AND l.objid = :s AND l.objsubid = 2"
            params = {"k": LOCK_KEY, "s": LOCKS[name][0]}
        row = conn.execute(
            text(
                "SELECT a.application_name, a.backend_start, a.client_addr, a.pid "
                "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                f"WHERE l.locktype = 'advisory' AND l.granted AND l.database = "
                f"(SELECT oid FROM pg_database WHERE datname = current_database()) AND {where}"
            ),
            params,
        ).first()
        if row is None:
            return None
        app, started, addr, backend = row
        found = re.fullmatch(r"webometrics (\S+) pid (\d+) on (.+)", app or "")
        holder: dict[str, Any] = {
            "command": f"webometrics {found.group(1)}" if found else (app or "a session"),
            "pid": int(found.group(2)) if found else f"of server backend {backend}",
            "host": found.group(3) if found else (addr or "the server"),
        }
        if started is not None:
            holder["since"] = started.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        return holder

    def _take_advisory(self) -> None:
        conn = self._locked_connection()
        if "crawl" in self.names:
            from webometrics.liveness import live_crawl

            running = live_crawl(self.engine, RUN_LEASE_SECONDS)
            if running is not None:  # a crawl whose lock a server restart took away
                self._unlock(conn)
                raise self._refusal("crawl", running, "this PostgreSQL database")
        self._conn = conn
        self._keeper = threading.Thread(target=self._keep, name=f"lock-{self.name}", daemon=True)
        self._keeper.start()

    @staticmethod
    def _unlock(conn: Connection) -> None:
        with contextlib.suppress(DBAPIError):
            conn.execute(text("SELECT pg_advisory_unlock_all()"))
            conn.commit()
        with contextlib.suppress(DBAPIError):
            conn.close()

    def _keep(self) -> None:
        """Look at the lock's connection every :data:`KEEP_SECONDS`; when the server
        ended its session (a restart), take the locks again on a new one."""
        lost = False
        while not self._stop.wait(KEEP_SECONDS):
            conn = self._conn
            try:
                if conn is None or conn.closed or conn.invalidated:
                    raise OSError("no connection")
                conn.execute(text("SELECT 1")).scalar()
                conn.commit()
                continue
            except (DBAPIError, OSError) as exc:
                if not lost:
                    log.warning(
                        "the %s lock's database session was lost (%s); taking the lock "
                        "again when the database is back",
                        self.name,
                        str(getattr(exc, "orig", exc) or exc).splitlines()[0],
                    )
                lost = True
                if conn is not None:
                    with contextlib.suppress(Exception):
                        conn.invalidate()
            try:
                self._conn = self._locked_connection()
            except RunLockedError as exc:
                log.error("the %s lock could not be taken again: %s", self.name, exc)
                self._conn = None
            except DBAPIError:
                continue  # the server is not back yet
            else:
                log.warning("the %s lock was taken again after the database came back", self.name)
                lost = False

    def _locked_connection(self) -> Connection:
        """A new connection holding every lock of :attr:`names` (else
        :class:`RunLockedError` naming the holder)."""
        conn = self.engine.connect()
        # the holder's description, found by a second comer in pg_stat_activity
        first = str(self.holder["command"]).split()
        what = first[1] if len(first) > 1 and first[0] == "webometrics" else self.name
        app = f"webometrics {what} pid {self.holder['pid']} on {self.holder['host']}"
        conn.execute(text("SELECT set_config('application_name', :a, false)"), {"a": app[:63]})
        taken: list[str] = []
        for name in self.names:
            call, params = self._keys(name)
            if conn.execute(text(f"SELECT {call}"), params).scalar():
                taken.append(name)
                continue
            holder = self._pg_holder(conn, name)
            conn.execute(text("SELECT pg_advisory_unlock_all()"))
            conn.commit()
            conn.close()
            raise self._refusal(name, holder, "this PostgreSQL database")
        conn.commit()
        return conn

    def _refusal(self, name: str, holder: dict[str, Any] | None, where: str) -> RunLockedError:
        why = LOCKS[name][1]
        if name == "run" or self.name == "run":
            what = "a pipeline run" if name == "run" else f"the {name} lock"
        else:
            what = f"the {name} lock"
        return RunLockedError(
            f"{what} on {where} is held by {holder_text(holder)}; {why}. Wait for it to "
            "finish and run this again (which stages may overlap: docs/operations.md)"
        )

    def __enter__(self) -> RunLock:
        if self.engine.dialect.name == "postgresql":
            self._take_advisory()
            return self
        try:
            for name in self.names:
                self._take_file(name)
        except RunLockedError:
            self._release_files()
            raise
        return self

    def _release_files(self) -> None:
        for fd in reversed(self._fds):
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._fds = []

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(10)
            self._keeper = None
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT pg_advisory_unlock_all()"))
                self._conn.commit()
            except DBAPIError as err:
                # the server closed the session (a restart or fail-over during the run):
                # its advisory locks went with it, so there is nothing left to release
                if not err.connection_invalidated and not isinstance(err, OperationalError):
                    raise
                log.warning(
                    "the %s lock's database session was closed during the run (%s); the "
                    "lock was released with it",
                    self.name,
                    str(err.orig).splitlines()[0] if err.orig else err,
                )
            except PendingRollbackError:
                # the session failed under the keeper thread as the run ended (the server
                # went away): it is invalid, and its advisory locks died with it
                log.warning(
                    "the %s lock's database session was lost as the run ended; the lock "
                    "was released with it",
                    self.name,
                )
            finally:
                with contextlib.suppress(DBAPIError, PendingRollbackError):
                    self._conn.close()
                self._conn = None
        self._release_files()


def stage_lock(engine: Engine, stage: str) -> RunLock:
    """The lock a stage command takes (:data:`STAGE_LOCKS`)."""
    return RunLock(engine, lock_for(stage))
