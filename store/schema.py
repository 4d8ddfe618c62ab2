"""Alembic migrations driven from Python, and the schema-version check.

Every command that opens the database calls :func:`require_current`, which refuses a
schema that is not at Alembic's head with "run `webometrics db upgrade`".
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from core.exceptions import SchemaOutOfDateError
from store.session import check_connection, display_url


def migrations_dir() -> Path:
    """The folder of the Alembic environment (``migrations/``), found without importing
    it: the migrations import :mod:`store.models`, not the other way round."""
    spec = importlib.util.find_spec("migrations")
    if spec is None or spec.origin is None:  # pragma: no cover - a broken installation
        raise SchemaOutOfDateError("the migrations/ folder is not installed: reinstall webometrics")
    return Path(spec.origin).resolve().parent


def alembic_config(engine: Engine) -> Config:
    """An Alembic configuration bound to ``engine`` (no ini file needed)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    url = engine.url.render_as_string(hide_password=False)
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["engine"] = engine
    return cfg


def head_revision(engine: Engine) -> str | None:
    """The newest revision of the code."""
    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (``None`` for an empty database)."""
    check_connection(engine)
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Upgrade the schema to ``revision``; a no-op when already there."""
    check_connection(engine)
    command.upgrade(alembic_config(engine), revision)


def downgrade(engine: Engine, revision: str = "-1") -> None:
    """Downgrade the schema to ``revision`` (``base`` removes every table)."""
    check_connection(engine)
    command.downgrade(alembic_config(engine), revision)


def require_current(engine: Engine) -> None:
    """Raise :class:`SchemaOutOfDateError` unless the schema is at head."""
    current = current_revision(engine)
    head = head_revision(engine)
    if current != head:
        state = "empty" if current is None else f"at revision {current}"
        raise SchemaOutOfDateError(
            f"database {display_url(engine)} schema is out of date ({state}, code expects "
            f"{head}): run `webometrics db upgrade`"
        )
