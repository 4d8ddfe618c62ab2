"""``webometrics db upgrade | downgrade | current``: the schema's migrations."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 10


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "db",
        help="create or migrate the database schema (Alembic)",
        description="Manage the database schema with Alembic migrations.",
    )
    dbsub = p.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    up = dbsub.add_parser("upgrade", help="upgrade the schema (to head by default)")
    up.add_argument("revision", nargs="?", default="head")
    up.set_defaults(func=_upgrade)
    down = dbsub.add_parser(
        "downgrade", help="downgrade the schema (one step by default; 'base' drops every table)"
    )
    down.add_argument("revision", nargs="?", default="-1")
    down.set_defaults(func=_downgrade)
    cur = dbsub.add_parser("current", help="print the schema revision and the code's head")
    cur.set_defaults(func=_current)


def _upgrade(ctx: Context) -> int:
    from store import schema

    engine = ctx.engine(check_schema=False)
    before = schema.current_revision(engine)
    schema.upgrade(engine, ctx.args.revision)
    after = schema.current_revision(engine)
    if before == after:
        print(f"schema already at {after}: nothing to do")
        return 0
    print(f"schema upgraded {before or 'empty'} -> {after}")
    if after == schema.head_revision(engine):
        # a migration may change a view's SQL, which no fingerprint sees: compute again
        from store import aggregates

        done = aggregates.refresh_if_stale(engine, force=True)
        if not done["aggregate_fresh"]:
            print(f"figures computed again: {aggregates.describe(done)}")
    return 0


def _downgrade(ctx: Context) -> int:
    from store import schema

    engine = ctx.engine(check_schema=False)
    before = schema.current_revision(engine)
    schema.downgrade(engine, ctx.args.revision)
    print(f"schema downgraded {before or 'empty'} -> {schema.current_revision(engine) or 'base'}")
    return 0


def _current(ctx: Context) -> int:
    from store import schema, session

    engine = ctx.engine(check_schema=False)
    current, head = schema.current_revision(engine), schema.head_revision(engine)
    state = "up to date" if current == head else "out of date: run `webometrics db upgrade`"
    print(
        f"database: {session.display_url(engine)}\ncurrent:  {current or 'empty'}\n"
        f"head:     {head}\nstate:    {state}"
    )
    return 0 if current == head else 3
