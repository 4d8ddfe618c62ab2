"""Engines and the one managed session scope.

:func:`make_engine` builds an engine from a URL (SQLite gets WAL and foreign keys;
``read_only=True`` opens SQLite with ``mode=ro`` and PostgreSQL with read-only
transactions). :func:`session_scope` commits on success, rolls back on any error and
translates driver errors into :class:`core.exceptions.DatabaseError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from core.exceptions import DatabaseError, SchemaOutOfDateError
from core.secrets import redact_url


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    with suppress(Exception):
        cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def redact(url: str) -> str:
    """The URL with its password hidden, for messages and logs
    (:func:`core.secrets.redact_url`)."""
    return redact_url(str(url))


def make_engine(url: str, *, read_only: bool = False, echo: bool = False) -> Engine:
    """Create an engine for ``url``.

    Parameters
    ----------
    url : str
        A SQLAlchemy URL, e.g. ``sqlite:///webometrics.db`` or
        ``postgresql+psycopg://user@127.0.0.1:5432/webometrics`` (``postgresql://`` is
        taken as psycopg 3).
    read_only : bool
        Open the database so that no statement can write.
    echo : bool
        Log every statement.

    Raises
    ------
    DatabaseError
        The URL is malformed or names an unknown driver.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseError(
            f"database URL {url!r} is malformed: {exc}; use e.g. sqlite:///webometrics.db "
            "or postgresql+psycopg://user:password@127.0.0.1:5432/dbname"
        ) from exc
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    kwargs: dict[str, Any] = {"echo": echo, "future": True}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if read_only and database and database != ":memory:":
            if not Path(database).exists():
                raise SchemaOutOfDateError(
                    f"database file {database} does not exist: run `webometrics db upgrade` "
                    "to create it (or point WEBOMETRICS_DB_URL at the right file)"
                )
            parsed = parsed.set(database=f"file:{database}?mode=ro", query={"uri": "true"})
        kwargs["connect_args"] = {"timeout": 30, "check_same_thread": False}
    elif parsed.get_backend_name() == "postgresql":
        kwargs["pool_pre_ping"] = True
        if read_only:
            kwargs["connect_args"] = {"options": "-c default_transaction_read_only=on"}
    try:
        engine = create_engine(parsed, **kwargs)
    except (ArgumentError, ImportError) as exc:
        raise DatabaseError(f"cannot use database URL {redact(url)}: {exc}") from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def check_connection(engine: Engine) -> None:
    """Open and close one connection; raise :class:`DatabaseError` with the URL if it fails."""
    try:
        with engine.connect():
            pass
    except (OperationalError, DBAPIError) as exc:
        raise DatabaseError(
            f"cannot reach the database {redact(str(engine.url))}: {exc.orig}; check "
            "WEBOMETRICS_DB_URL / [database] url and that the server is running"
        ) from exc


@contextmanager
def session_scope(engine: Engine | Connection, **kwargs: Any) -> Iterator[Session]:
    """A transactional scope: commit on success, roll back on error, always close.

    Bound to a :class:`~sqlalchemy.engine.Connection` inside a transaction, the session
    joins it (its commit does not end the outer transaction). Driver errors leave as
    :class:`DatabaseError` naming the database; every other exception is re-raised
    unchanged after the rollback.
    """
    factory = sessionmaker(bind=engine, expire_on_commit=False, **kwargs)
    session = factory()
    try:
        yield session
        session.commit()
    except OperationalError as exc:
        session.rollback()
        url = redact(str(engine.engine.url))  # a Connection has .engine too
        raise DatabaseError(f"database {url} failed: {exc.orig}") from exc
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


__all__ = ["SQLAlchemyError", "check_connection", "make_engine", "redact", "session_scope"]
