"""The current SQL of every view, one file per view, and what migrations create them with.

``store/sql/<view>.sql`` holds a view's ``CREATE VIEW`` statement, the same on SQLite and
PostgreSQL; a view whose SQL differs by dialect (JSON functions) has two files,
``<view>.sqlite.sql`` and ``<view>.postgresql.sql``. Each file opens with ``--`` comment
lines saying what the view holds (its grain and columns); the statement follows.

A migration never reads this folder directly: it reads a frozen copy of the files it
creates (``migrations/views/<revision>/``, made with ``scripts/freeze_views.py``), so that
an old revision keeps producing the schema it produced when a file is edited later. See
CONTRIBUTING.md, "Recipe: add a migration", and docs/storage.md.

Examples
--------
>>> names = view_names()
>>> names.index("v_environment") < names.index("v_category_share")
True
>>> view_sql("v_latest_cluster", "sqlite").startswith("CREATE VIEW v_latest_cluster AS")
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from sqlalchemy import Connection, text

#: the folder of the current view files
SQL_DIR = Path(__file__).parent

#: the dialects a view file may be written for; any other dialect reads the PostgreSQL file
DIALECTS = ("sqlite", "postgresql")

#: a view's files: ``{"": path}`` for one portable file, else ``{dialect: path}``
ViewFiles = Mapping[str, Mapping[str, Path]]

_CREATE = re.compile(r"CREATE VIEW (\w+) AS\b")


def view_files(directory: Path = SQL_DIR) -> dict[str, dict[str, Path]]:
    """The view files of ``directory``: view name -> ``{dialect or "": path}``."""
    files: dict[str, dict[str, Path]] = {}
    for path in sorted(directory.glob("*.sql")):
        stem, _, dialect = path.name.removesuffix(".sql").partition(".")
        if dialect and dialect not in DIALECTS:
            raise ValueError(f"{path}: the dialect must be one of {DIALECTS}, not {dialect!r}")
        files.setdefault(stem, {})[dialect] = path
    for name, by_dialect in files.items():
        if "" in by_dialect and len(by_dialect) > 1:
            raise ValueError(f"{directory}: {name} has a portable file and dialect files; keep one")
        if "" not in by_dialect and set(by_dialect) != set(DIALECTS):
            raise ValueError(f"{directory}: {name} needs a file for each of {DIALECTS}")
    return files


def statement(path: Path) -> str:
    """The ``CREATE VIEW`` statement of a view file: its header comments and a final
    semicolon removed; fails when the file creates another view than its name says."""
    lines = path.read_text(encoding="utf-8").splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    sql = "\n".join(lines).strip().removesuffix(";").rstrip()
    match = _CREATE.match(sql)
    name = path.name.split(".")[0]
    if match is None or match.group(1) != name:
        raise ValueError(f"{path} must hold `CREATE VIEW {name} AS ...` after its comments")
    return sql


def view_sql(
    name: str, dialect: str, files: ViewFiles | None = None, directory: Path = SQL_DIR
) -> str:
    """The ``CREATE VIEW`` statement of view ``name`` on ``dialect`` (``sqlite``,
    ``postgresql``; another dialect reads the PostgreSQL file)."""
    by_dialect = (view_files(directory) if files is None else files).get(name)
    if by_dialect is None:
        raise KeyError(f"no view file for {name} in {directory}: add {name}.sql")
    path = by_dialect.get("") or by_dialect["sqlite" if dialect == "sqlite" else "postgresql"]
    return statement(path)


def _uses(files: ViewFiles) -> dict[str, set[str]]:
    """For each view, the other views its SQL (of any dialect) reads."""
    uses: dict[str, set[str]] = {}
    for name, by_dialect in files.items():
        text = " ".join(statement(p) for p in by_dialect.values())
        words = set(re.findall(r"\b\w+\b", _CREATE.sub(" ", text)))
        uses[name] = {other for other in files if other != name and other in words}
    return uses


def view_names(files: ViewFiles | None = None, directory: Path = SQL_DIR) -> list[str]:
    """Every view of ``files`` (default: the files of ``directory``) in dependency order:
    a view after the views it reads, names in alphabetical order otherwise."""
    uses = _uses(view_files(directory) if files is None else files)
    order: list[str] = []
    pending = dict(sorted(uses.items()))
    while pending:
        ready = [n for n, needs in pending.items() if needs <= set(order)]
        if not ready:
            raise ValueError(f"the views {sorted(pending)} read each other in a cycle")
        order.extend(ready)
        for name in ready:
            del pending[name]
    return order


def dependents(names: Iterable[str], files: ViewFiles) -> list[str]:
    """``names`` and every view that reads one of them, directly or not, in dependency
    order."""
    uses = _uses(files)
    wanted = set(names)
    grew = True
    while grew:
        more = {n for n, needs in uses.items() if needs & wanted} - wanted
        wanted |= more
        grew = bool(more)
    return [n for n in view_names(files) if n in wanted]


def recreate_views(
    conn: Connection,
    names: Iterable[str],
    files: ViewFiles | None = None,
    directory: Path = SQL_DIR,
) -> list[str]:
    """Drop views ``names`` and the views that read them (dependents first), then create
    them all again from ``files`` (default: the files of ``directory``) in dependency
    order; returns the views re-created. ``conn``: a connection (in a migration,
    ``op.get_bind()``)."""
    files = view_files(directory) if files is None else files
    unknown = set(names) - set(files)
    if unknown:
        raise KeyError(f"no view file for {sorted(unknown)}: add <name>.sql first")
    todo = dependents(names, files)
    for name in reversed(todo):
        conn.exec_driver_sql(f"DROP VIEW IF EXISTS {name}")
    for name in todo:
        # through text(), as op.execute: a pyformat driver (psycopg) gets LIKE 'x%' escaped
        conn.execute(text(view_sql(name, conn.dialect.name, files)))
    return todo
