"""A lock so that two pipeline runs against one database never overlap.

PostgreSQL: a session-level advisory lock (``pg_try_advisory_lock``), so runs started on
different machines of a team exclude each other. SQLite: an exclusive ``flock`` on
``<database file>.lock`` beside the database (processes on one machine).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from sqlalchemy import Connection, Engine, text

from core.exceptions import RunLockedError

LOCK_KEY = 0x7765_626F  # "webo": the advisory-lock key of pipeline runs


class RunLock:
    """Context manager holding the database's pipeline-run lock.

    Raises
    ------
    RunLockedError
        Another run holds the lock (exit code 4).
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._conn: Connection | None = None
        self._fd: int | None = None

    def lock_path(self) -> Path:
        database = self.engine.url.database or "memory"
        return Path(f"{database}.lock")

    def __enter__(self) -> RunLock:
        if self.engine.dialect.name == "postgresql":
            self._conn = self.engine.connect()
            got = self._conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": LOCK_KEY})
            if not got.scalar():
                self._conn.close()
                self._conn = None
                raise RunLockedError(
                    "another pipeline run holds the lock on this database; "
                    "wait for it to finish (runs never overlap)"
                )
            self._conn.commit()
        else:
            path = self.lock_path()
            self._fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(self._fd)
                self._fd = None
                raise RunLockedError(
                    f"another pipeline run holds {path}; wait for it to finish (runs never overlap)"
                ) from None
            os.ftruncate(self._fd, 0)
            os.write(self._fd, str(os.getpid()).encode())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._conn is not None:
            self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": LOCK_KEY})
            self._conn.commit()
            self._conn.close()
            self._conn = None
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
