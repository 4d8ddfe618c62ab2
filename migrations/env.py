"""Alembic environment wired to :mod:`store.models` (batch mode for SQLite)."""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import Connection, Engine

from store.models import Base
from store.session import make_engine

config = context.config
target_metadata = Base.metadata


def include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    """Leave the analyst views (revision 0002, names ``v_*``) out of autogenerate."""
    return not (
        type_ == "table" and reflected and compare_to is None and (name or "").startswith("v_")
    )


def _sqlite_views_safe(connection: Connection) -> None:
    """SQLite batch migrations recreate a table and rename it into place; modern ALTER TABLE
    re-checks every view during the rename and fails on the analyst views (alembic issue
    #1207). Legacy rename semantics keep the views, which refer to the table by name."""
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("PRAGMA legacy_alter_table=ON")


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        compare_type=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine: Engine | None = config.attributes.get("engine")
    if engine is None:
        engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as connection:
        _sqlite_views_safe(connection)
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=True,
            compare_type=True,
            include_object=include_object,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
