"""Engines and the one managed session scope.

:func:`make_engine` builds an engine from a URL (SQLite gets WAL and foreign keys;
``read_only=True`` opens SQLite with ``mode=ro`` and PostgreSQL with read-only
transactions). :func:`session_scope` commits on success, rolls back on any error and
translates driver errors into :class:`core.exceptions.DatabaseError`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from core.defaults import DATABASE_CONNECT_TIMEOUT
from core.exceptions import DatabaseError, ReadOnlyDatabaseError, SchemaOutOfDateError
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


#: what SQLite says of a damaged file
_DAMAGED = ("database disk image is malformed", "file is not a database", "database corruption")


def damaged_database_advice(message: str, database: str | None = None) -> str | None:
    """What to do when ``message`` (a driver's error) says the SQLite file is damaged,
    else None.

    >>> damaged_database_advice("database disk image is malformed", "w.db")[:40]
    'the database file w.db is damaged: check'
    >>> damaged_database_advice("connection refused") is None
    True
    """
    if not any(text in message for text in _DAMAGED):
        return None
    name = database or "FILE"
    return (
        f"the database file {database or ''} is damaged: check it with `sqlite3 {name} "
        f"'PRAGMA integrity_check'` and restore it from your backup (`sqlite3 {name} "
        "'.recover'` saves what is still readable); nothing more was written"
    ).replace("file  is", "file is")


def database_error(exc: DBAPIError, url: str | None) -> DatabaseError:
    """The one-line :class:`DatabaseError` of a driver error: the database (password
    masked), the driver's first line, and what to do when the file is damaged."""
    orig = str(exc.orig if exc.orig is not None else exc).strip().splitlines()
    first = orig[0] if orig else type(exc).__name__
    shown = display_url(url) if url else None
    database = None
    if shown and shown.startswith("sqlite:///"):
        database = shown.removeprefix("sqlite:///")
    advice = damaged_database_advice(first, database)
    where = f"database {shown}" if shown else "the database"
    return DatabaseError(f"{where} failed: {first}" + (f"; {advice}" if advice else ""))


def display_url(url: Any) -> str:
    """A database URL (or an engine's) as shown to a user: the password masked, and an
    SQLite file opened read-only (``file:PATH?mode=ro``) shown as ``sqlite:///PATH``.

    >>> display_url("postgresql+psycopg://u:secret@127.0.0.1/db")
    'postgresql+psycopg://u:***@127.0.0.1/db'
    >>> display_url(make_engine("sqlite:///:memory:"))
    'sqlite:///:memory:'
    """
    url = getattr(url, "url", url)  # an Engine: its URL
    try:
        parsed = make_url(str(url) if not hasattr(url, "render_as_string") else url)
    except ArgumentError:
        return redact(str(url))
    database = parsed.database or ""
    if parsed.get_backend_name() == "sqlite" and database:  # the path as given, unquoted
        if database.startswith("file:"):
            database = database.removeprefix("file:").split("?", 1)[0]
        return f"sqlite:///{database}"
    return parsed.render_as_string(hide_password=True)


def _unwritable(database: str) -> str | None:
    """Why an SQLite file (or the folder its journal goes to) cannot be written, else
    None."""
    path = Path(database)
    folder = path.parent if str(path.parent) else Path(".")
    if path.exists() and not os.access(path, os.W_OK):
        return "the file cannot be written"
    if not os.access(folder, os.W_OK):
        return "its folder cannot be written (its journal goes there)"
    return None


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
            # a file nobody can change meanwhile (a read-only file, folder or mount): no
            # locks and no shared-memory file to create, which a read-only folder refuses
            mode = "immutable=1" if _unwritable(database) else "mode=ro"
            parsed = parsed.set(database=f"file:{database}?{mode}", query={"uri": "true"})
        elif database and database != ":memory:" and Path(database).exists():
            why = _unwritable(database)
            if why:
                raise ReadOnlyDatabaseError(
                    f"the database file {database} is read-only ({why}) and this command "
                    "writes to it: make it writable, or copy it where it can be written "
                    "and give --db-url sqlite:///COPY; the commands that only read work "
                    "on it as it is (runs, universities list, report, dashboard)"
                )
        kwargs["connect_args"] = {"timeout": 30, "check_same_thread": False}
    elif parsed.get_backend_name() == "postgresql":
        kwargs["pool_pre_ping"] = True
        # a server that accepts and never answers: give up after a while (a URL's own
        # ?connect_timeout= wins)
        connect_args: dict[str, Any] = {"connect_timeout": DATABASE_CONNECT_TIMEOUT}
        if read_only:
            connect_args["options"] = "-c default_transaction_read_only=on"
        kwargs["connect_args"] = connect_args
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
            f"cannot reach the database {display_url(engine.url)}: {exc.orig}; check "
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
        with suppress(DBAPIError):  # the connection may be gone with the server
            session.rollback()
        url = engine.engine.url.render_as_string(hide_password=False)  # a Connection too
        raise database_error(exc, url) from exc
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


__all__ = [
    "SQLAlchemyError",
    "check_connection",
    "damaged_database_advice",
    "database_error",
    "display_url",
    "make_engine",
    "redact",
    "session_scope",
]
