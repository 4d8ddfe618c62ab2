"""Writes that outlive a database outage: a batch whose write fails because the database
cannot be reached is written again with bounded exponential back-off, the same batch,
until it is stored or the retry window is spent.

Only errors of the connection are retried (the server restarting, a fail-over, a
dropped socket, SQLite's busy file); an error of the statement itself (a constraint, a
missing table) is raised at once. The window (``[crawl] store_retry_seconds``, 60 s by
default) covers a restart or a fail-over; past it :class:`StoreUnavailableError` is
raised and the crawl stops with its state kept, to be resumed.

Back-off: 0.5 s, 1 s, 2 s, ... doubling up to :data:`MAX_DELAY`, the last wait cut so
that the attempts end within the window; at most ``log2(window) + window / MAX_DELAY``
attempts.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError

from core.exceptions import DatabaseError

log = logging.getLogger(__name__)

T = TypeVar("T")

#: first and longest wait between two attempts (seconds)
FIRST_DELAY = 0.5
MAX_DELAY = 10.0

#: SQLite's messages of a file that is busy or briefly unreachable (not of a bad statement)
_SQLITE_TRANSIENT = ("locked", "busy", "disk i/o error", "unable to open database")


class StoreUnavailableError(DatabaseError):
    """The database stayed unreachable for the whole retry window."""


def is_connection_error(exc: BaseException) -> bool:
    """True when ``exc`` (or what it wraps) says the database could not be reached.

    Parameters
    ----------
    exc : BaseException
        What a write raised: a :class:`~core.exceptions.DatabaseError` from
        :func:`store.session.session_scope` or a SQLAlchemy ``DBAPIError``.

    Returns
    -------
    bool
        True for an invalidated connection, psycopg's ``OperationalError`` (server
        restarting, connection refused or dropped) and SQLite's busy or unreachable file.
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, DBAPIError):
            if cur.connection_invalidated:
                return True
            orig = cur.orig
            module = type(orig).__module__ or ""
            name = type(orig).__name__
            if module.startswith("psycopg") and name in ("OperationalError", "InterfaceError"):
                return True
            if module.startswith("sqlite3") and name == "OperationalError":
                return any(m in str(orig).lower() for m in _SQLITE_TRANSIENT)
            return False
        cur = cur.__cause__ or cur.__context__
    return False


def retried(
    write: Callable[[], T],
    window: float,
    *,
    what: str = "a write",
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call ``write()`` until it succeeds, retrying connection errors for ``window`` s.

    Parameters
    ----------
    write : callable
        One attempt (one transaction); it is called again as it is.
    window : float
        Seconds from the first failure after which no attempt is started (0: no retry).
    what : str
        What is written, for the log.
    sleep : callable
        How to wait (the test of the back-off passes its own).

    Returns
    -------
    The value of the attempt that succeeded.

    Raises
    ------
    StoreUnavailableError
        The database stayed unreachable for ``window`` seconds; the last error is its
        cause.
    Exception
        Any error that is not a connection error, at once.

    Examples
    --------
    >>> from sqlalchemy.exc import OperationalError
    >>> import sqlite3
    >>> attempts = []
    >>> def write():
    ...     attempts.append(1)
    ...     if len(attempts) < 3:
    ...         raise OperationalError("INSERT", {}, sqlite3.OperationalError("database is locked"))
    ...     return "stored"
    >>> waits = []
    >>> retried(write, 60, sleep=waits.append)
    'stored'
    >>> waits
    [0.5, 1.0]
    """
    start: float | None = None
    delay = FIRST_DELAY
    attempt = 0
    while True:
        attempt += 1
        try:
            result = write()
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            now = time.monotonic()
            if start is None:
                start = now
            left = window - (now - start)
            if left <= 0:
                raise StoreUnavailableError(
                    f"the database stayed unreachable for {window:g} s ({attempt} attempts): "
                    f"{_reason(exc)}"
                ) from exc
            wait = min(delay, left, MAX_DELAY)
            log.warning(
                "%s failed, the database is unreachable (%s): attempt %d, next in %.1f s, "
                "giving up in %.0f s",
                what,
                _reason(exc),
                attempt,
                wait,
                left,
            )
            sleep(wait)
            delay = min(delay * 2, MAX_DELAY)
            continue
        if attempt > 1:
            log.warning("%s stored after %d attempts", what, attempt)
        return result


def _reason(exc: BaseException) -> str:
    """The driver's message, on one line."""
    cur: BaseException | None = exc
    while cur is not None:
        if isinstance(cur, DBAPIError):
            return " ".join(str(cur.orig).split())[:300]
        cur = cur.__cause__
    return " ".join(str(exc).split())[:300]
