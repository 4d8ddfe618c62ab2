"""``store/sql/*.sql``, the current SQL of every view: migrations at head create exactly
these views, on SQLite and PostgreSQL; a file edited without a migration that freezes and
re-creates it fails here; revision 0021 (views from the files) downgrades to 0020's views;
:mod:`store.analytics.views`' table clauses name columns the views have."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.sql.expression import TableClause

from migrations.views import FROZEN, frozen_files
from store import make_engine, schema
from store.analytics import views as analytics_views
from store.sql import dependents, statement, view_files, view_names, view_sql
from tests.stored_world import Facts

#: the revision that made store/sql the views' source, and the one before it
FILES_REVISION, BEFORE = "0021", "0020"


def _normalised(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip().removesuffix(";").strip()


def _definitions(conn: Connection) -> dict[str, str]:
    """Every view of the database: its SQL as the server keeps it (SQLite: the statement
    as written; PostgreSQL: ``pg_get_viewdef``, the server's own rendering)."""
    if conn.dialect.name == "sqlite":
        rows = conn.execute(text("SELECT name, sql FROM sqlite_master WHERE type = 'view'"))
        return {name: _normalised(sql) for name, sql in rows}
    rows = conn.execute(
        text(
            "SELECT viewname, pg_get_viewdef(c.oid, true) FROM pg_views v "
            "JOIN pg_class c ON c.relname = v.viewname "
            "WHERE v.schemaname = current_schema()"
        )
    )
    return {name: _normalised(sql) for name, sql in rows}


def _as(sql: str, name: str, alias: str) -> str:
    """The ``CREATE VIEW`` statement ``sql`` of view ``name`` creating ``alias`` instead."""
    return sql.replace(f"CREATE VIEW {name} AS", f"CREATE VIEW {alias} AS", 1)


@pytest.fixture
def head(migrated_url: str) -> Iterator[Engine]:
    engine = make_engine(migrated_url)
    yield engine
    engine.dispose()


def test_every_file_names_its_view_and_the_order_puts_readers_last() -> None:
    files = view_files()
    assert files, "no view file in store/sql"
    order = view_names()
    assert sorted(order) == sorted(files)
    for name, by_dialect in files.items():
        for path in by_dialect.values():
            assert path.read_text(encoding="utf-8").startswith(f"-- {name}: "), (
                f"{path.name} must open with `-- {name}: <what one row is>` for analysts"
            )
            assert "-- Columns: " in path.read_text(encoding="utf-8"), path.name
            assert statement(path).startswith(f"CREATE VIEW {name} AS")
        for reader in dependents([name], files)[1:]:
            assert order.index(reader) > order.index(name), (name, reader)


def test_head_creates_the_views_of_the_files(head: Engine) -> None:
    """The database at head has the files' views and no other, each defined as its file
    says (PostgreSQL: the file's view created under another name renders the same)."""
    with head.begin() as conn:
        stored = _definitions(conn)
        assert set(stored) == set(view_files()), "every view of head needs a store/sql file"
        for name in view_names():
            sql = view_sql(name, conn.dialect.name)
            if conn.dialect.name == "sqlite":
                assert stored[name] == _normalised(sql), f"store/sql/{name} differs from head"
                continue
            conn.execute(text(_as(sql, name, f"tmp_{name}")))
            mine = _definitions(conn)[f"tmp_{name}"]
            assert mine == stored[name], f"store/sql/{name} differs from head on PostgreSQL"
        if conn.dialect.name != "sqlite":
            conn.rollback()


def test_every_file_is_frozen_by_the_newest_migration_of_its_view() -> None:
    """Editing store/sql/<view>.sql needs a migration that freezes it
    (``scripts/freeze_views.py``) and re-creates it (``migrations.views.recreate``)."""
    frozen = frozen_files("9999")
    for name, by_dialect in view_files().items():
        assert name in frozen, f"{name}: freeze it for a new migration (CONTRIBUTING.md)"
        assert set(frozen[name]) == set(by_dialect), f"{name}: its dialect files changed"
        for dialect, path in by_dialect.items():
            copy = frozen[name][dialect]
            assert _normalised(statement(path)) == _normalised(statement(copy)), (
                f"store/sql/{path.name} differs from {copy.relative_to(FROZEN.parent)}: add a "
                "migration that freezes and re-creates it (CONTRIBUTING.md, add a migration)"
            )


def test_0021_downgrades_to_the_views_of_0020(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        schema.upgrade(engine, BEFORE)
        with engine.connect() as conn:
            before = _definitions(conn)
        schema.upgrade(engine, FILES_REVISION)
        with engine.connect() as conn:
            assert _definitions(conn) == before  # 0021 changes where the SQL lives, not what
        schema.downgrade(engine, BEFORE)
        assert schema.current_revision(engine) == BEFORE
        with engine.connect() as conn:
            assert _definitions(conn) == before
    finally:
        engine.dispose()


def test_the_files_views_give_the_stored_views_rows(filled_ro: Facts) -> None:
    """By behaviour too: on the stored world each file's view, created under another
    name, returns the rows of the view the migrations made."""
    engine = make_engine(filled_ro.url)
    try:
        with engine.connect() as conn:
            for name in view_names():
                conn.execute(text(_as(view_sql(name, conn.dialect.name), name, f"tmp_{name}")))
                query = "SELECT * FROM {} EXCEPT SELECT * FROM {}"
                for a, b in ((name, f"tmp_{name}"), (f"tmp_{name}", name)):
                    extra = conn.execute(text(query.format(a, b))).fetchall()
                    assert extra == [], f"{name}: rows of {a} missing from {b}"
                assert conn.execute(text(f"SELECT COUNT(*) FROM {name}")).scalar_one() == (
                    conn.execute(text(f"SELECT COUNT(*) FROM tmp_{name}")).scalar_one()
                )
            conn.rollback()
            if conn.dialect.name == "sqlite":  # DDL is not transactional in pysqlite
                for name in view_names():
                    conn.execute(text(f"DROP VIEW IF EXISTS tmp_{name}"))
                conn.commit()
    finally:
        engine.dispose()


def test_analytics_table_clauses_name_columns_of_the_files_views(head: Engine) -> None:
    """The readers' table clauses for views (:mod:`store.analytics.views`) stay in step
    with the files: every column they name is a column of the view."""
    clauses = [v for v in vars(analytics_views).values() if isinstance(v, TableClause)]
    assert clauses
    inspector = inspect(head)
    for clause in clauses:
        assert clause.name in view_files(), f"{clause.name}: no store/sql file"
        columns = {c["name"] for c in inspector.get_columns(clause.name)}
        assert {c.name for c in clause.c} <= columns, clause.name
