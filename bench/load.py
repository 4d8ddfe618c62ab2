"""Concurrent analysts (issue 20): 20 dashboard sessions at once on the demo database,
SQLite and PostgreSQL, two analysts overriding the same domain.

For each database: the real server (``webometrics dashboard`` on a free port of
127.0.0.1, as ``tests/dashboard/test_browser.py`` starts it) on the demo database (the
reduced demo the real pipeline makes from the local test web, ``tests/pipeline_world.py``;
or a copy of ``--demo``, e.g. ``make demo``'s ``demo/webometrics.db``, at the current
schema), and on PostgreSQL the same rows copied into a private server
(``tests/conftest.py``'s ``PostgresServer``: initdb/pg_ctl on 127.0.0.1). The saved
aggregates are made fresh first, so an override moves its domain in them as on a served
database.

The sessions are Streamlit's own websocket protocol (``/_stcore/stream``,
``tests/dashboard/test_load.py``'s ``StreamlitSession``): all opened at once, each asks
for a run of every page of ``st.navigation`` (the default page first, then the others in
an order of its own) and times it from the request to ``script_finished``: the page's
first render in that session, with the server's caches as the other sessions left them.
The first two sessions are analysts: from the default page they go to the University
page and submit its "Category override" form for the same domain at the same moment,
each with another category, a note and a name of its own (timed to the end of the page's
run again), then visit the other pages, while the other sessions read.
Afterwards the domain's override history must hold both notes, and the override must be
its newest action. Errors: an exception box, a compile error, a page not found, a
session that broke off, or an error message in the override form.

Protocol clients rather than browser tabs: four headless Chromium tabs opening the
Overview took 5.3 CPU-seconds and 1.5 GiB in Chromium against 1.5 CPU-seconds in the
server; twenty on two cores would time the browser. The form's submission is what a tab
sends: the widget states and the button's trigger.

Bounded: a fixed number of sessions, every run given ``--timeout`` seconds, loopback
only. Run: ``.venv/bin/python bench/load.py`` (about five minutes; ``--database sqlite``
for one). Writes ``bench/results/load.json`` and ``load.md``.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import RESULTS, load_averages, machine, run_date, write_results

REPO = Path(__file__).resolve().parents[1]
DATABASES = ("sqlite", "postgresql")


def demo_database(demo: Path | None, folder: Path) -> tuple[str, str]:
    """The demo database in ``folder``: the reduced demo the real pipeline makes from the
    local test web (``tests/pipeline_world.py``), or a copy of ``demo`` (SQLite's backup:
    the WAL's pages too) upgraded to the current schema. Returns its URL and what it is.

    Raises
    ------
    SystemExit
        ``demo`` lacks tables of the current schema (made before a revision changed).
    """
    from sqlalchemy import inspect

    from store import make_engine, schema
    from store.models import Base

    if demo is None:
        from core.shared_data import data_dir
        from tests.pipeline_world import build_pipeline_world

        t0 = time.perf_counter()
        url = build_pipeline_world(folder, data_dir()).url
        print(f"demo database built in {time.perf_counter() - t0:.0f} s", flush=True)
        return url, (
            "the demo database the real pipeline makes from the local test web "
            "(`tests/pipeline_world.py`: crawl both directions, extract, dedup, cluster "
            "three ways, analyse)"
        )
    path = folder / "demo.db"
    src, dst = sqlite3.connect(f"file:{demo}?mode=ro", uri=True), sqlite3.connect(path)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    schema.upgrade(engine)
    missing = sorted(set(Base.metadata.tables) - set(inspect(engine).get_table_names()))
    engine.dispose()
    if missing:
        raise SystemExit(
            f"{demo} lacks tables of the current schema ({', '.join(missing)}): it was made "
            "before a revision changed; run `make demo` again, or leave out --demo"
        )
    return url, f"a copy of {demo} at the current schema"


def copy_rows(src_url: str, dst_url: str) -> int:
    """Every row of every table of ``src_url`` into ``dst_url`` (both at the current
    schema; the target empty), in foreign-key order; PostgreSQL's id sequences are moved
    past the copied ids. Returns the rows copied."""
    from sqlalchemy import select, text

    from store import make_engine
    from store.models import Base

    src, dst = make_engine(src_url), make_engine(dst_url)
    total = 0
    try:
        with src.connect() as read, dst.begin() as write:
            for table in Base.metadata.sorted_tables:
                result = read.execution_options(yield_per=2000).execute(select(table))
                for part in result.mappings().partitions():
                    write.execute(table.insert(), [dict(r) for r in part])
                    total += len(part)
                if dst.dialect.name == "postgresql" and "id" in table.c:
                    write.execute(
                        text(
                            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                            f"COALESCE((SELECT MAX(id) FROM {table.name}), 0) + 1, false)"
                        )
                    )
    finally:
        src.dispose()
        dst.dispose()
    return total


def ready(url: str) -> bool:
    """Make the saved aggregates fresh (``aggregates.refresh`` when they are not);
    whether they had to be rebuilt. PostgreSQL is analysed first, as autovacuum would."""
    from sqlalchemy import text

    from store import aggregates, make_engine

    engine = make_engine(url)
    try:
        if engine.dialect.name == "postgresql":
            with engine.connect() as conn:
                conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))
        stale = aggregates.fresh_run_ids(engine) is None
        if stale:
            aggregates.refresh(engine)
        return stale
    finally:
        engine.dispose()


def measure(url: str, database: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The load on one served database: per page figures, errors, the override check."""
    from tests.dashboard.test_load import check_history, run_load, served, summary

    log = folder / f"dashboard-{database}.log"
    load_before = load_averages()
    t0 = time.perf_counter()
    with served(url, log) as address:
        started = time.perf_counter() - t0
        result = run_load(
            address, sessions=args.sessions, analysts=args.analysts, timeout=args.timeout
        )
    lost = check_history(url, result)
    tracebacks = log.read_text(errors="replace").count("Traceback")
    rows = summary(result)
    return {
        "database": database,
        "load_average_before": load_before,
        "server_start_seconds": round(started, 2),
        "load_seconds": round(result.seconds, 1),
        "pages": rows,
        "errors": result.errors(),
        "server_tracebacks": tracebacks,
        "domain": result.domain,
        "notes": result.notes,
        "override_messages": [r.successes[0] for r in result.overrides if r.successes],
        "lost": lost,
    }


def markdown(out: dict[str, Any]) -> str:
    md = [
        "# Concurrent analysts: dashboard sessions at once (issue 20)",
        "",
        f"`{out['command']}`, {out['date']}, {out['machine']}. The real server "
        "(`webometrics dashboard` on 127.0.0.1) on " + out["source"] + "; on PostgreSQL "
        "the same rows in a private server on the same machine. "
        f"**{out['sessions']} sessions at once** over Streamlit's websocket protocol, each "
        "visiting every page; the first "
        f"{out['analysts']} are analysts who go from the default page to the University "
        "page and set the override of the same domain through its form at the same "
        "moment, each with a note of its own, while the others read. Time = a page's "
        "first render in a session, from the request to the end of its script run (the "
        "server's caches as the other sessions left them; an override also clears them "
        "for everyone); *override* = the form's submission to "
        "the end of the page's run after it. Errors: exception boxes, compile errors, "
        "pages not found, sessions broken off, an error message in the override form. "
        "Sessions are protocol clients, not browser tabs (4 headless Chromium tabs "
        "opening the Overview: 5.3 CPU-s and 1.5 GiB in Chromium, 1.5 CPU-s in the "
        "server). Load average before (1, 5, 15 min; the machine is shared): "
        + "; ".join(
            f"{line['database']} {', '.join(map(str, line['load_average_before']))}"
            for line in out["lines"]
        )
        + ".",
        "",
        "| database | page | sessions | renders | errors | p50 (s) | p95 (s) | max (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for line in out["lines"]:
        for row in line["pages"]:
            md.append(
                f"| {line['database']} | {row['page']} | {row['sessions']} | "
                f"{row['renders']} | {row['errors']} | {row['p50_seconds']:.2f} | "
                f"**{row['p95_seconds']:.2f}** | {row['max_seconds']:.2f} |"
            )
    md += ["", "| database | domain | notes kept | lost | errors | server tracebacks | "
           "load (s) |", "|---|---|---:|---|---:|---:|---:|"]  # fmt: skip
    for line in out["lines"]:
        kept = len(line["notes"]) - sum(1 for x in line["lost"] if x.startswith("note lost"))
        md.append(
            f"| {line['database']} | {line['domain']} | {kept} of {len(line['notes'])} | "
            f"{'; '.join(line['lost']) or 'nothing'} | {len(line['errors'])} | "
            f"{line['server_tracebacks']} | {line['load_seconds']:.0f} |"
        )
    messages = [
        f"{line['database']}: {m}" for line in out["lines"] for m in line["override_messages"]
    ]
    if messages:
        md += ["", "What the analysts read after submitting: " + "; ".join(messages) + "."]
    errors = [f"{line['database']}: {e}" for line in out["lines"] for e in line["errors"]]
    if errors:
        md += ["", "Errors:", "", *(f"- {e}" for e in errors[:20])]
    md.append("")
    return "\n".join(md)


SMOKE_SKIP = "concurrent dashboard sessions on SQLite and PostgreSQL (about five minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="sessions at once (20)")
    parser.add_argument("--analysts", type=int, default=2, help="of them overriding (2)")
    parser.add_argument(
        "--database", action="append", choices=DATABASES, help="only this one (repeatable)"
    )
    parser.add_argument(
        "--demo",
        type=Path,
        help="copy this SQLite database (e.g. demo/webometrics.db of `make demo`) instead of "
        "building the demo database",
    )
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds one page's run may take (300)"
    )
    parser.add_argument("--no-save", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if not 1 <= args.analysts <= args.sessions:
        parser.error("--analysts must be between 1 and --sessions")
    databases = args.database or list(DATABASES)

    folder = Path(tempfile.mkdtemp(prefix="webometrics-load-"))
    lines = []
    try:
        sqlite_url, source = demo_database(args.demo and args.demo.resolve(), folder)
        for database in databases:
            if database == "sqlite":
                url = sqlite_url
                rebuilt = ready(url)
                lines.append(measure(url, database, args, folder))
            else:
                from tests.conftest import PostgresServer

                server = PostgresServer()
                server.start()
                try:
                    url = server.create_database()
                    from store import make_engine, schema

                    engine = make_engine(url)
                    schema.upgrade(engine)
                    engine.dispose()
                    copied = copy_rows(sqlite_url, url)
                    print(f"postgresql: {copied:,} rows copied", flush=True)
                    rebuilt = ready(url)
                    lines.append(measure(url, database, args, folder))
                finally:
                    server.stop()
            lines[-1]["aggregates_rebuilt"] = rebuilt
            print(markdown_line(lines[-1]), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out = {
        "command": " ".join(
            ["python bench/load.py", *(argv if argv is not None else sys.argv[1:])]
        ),
        "date": run_date(),
        "machine": machine(),
        "source": source,
        "sessions": args.sessions,
        "analysts": args.analysts,
        "timeout_seconds": args.timeout,
        "lines": lines,
    }
    md = markdown(out)
    print(md)
    if not args.no_save:
        write_results(RESULTS / "load", out, md, indent=2, newline=True)
        print(f"wrote {RESULTS / 'load.json'} and .md")
    return 0 if all(not line["errors"] and not line["lost"] for line in lines) else 1


def markdown_line(line: dict[str, Any]) -> str:
    """One database's figures as text, while the benchmark runs."""
    pages = ", ".join(f"{r['page']} p95 {r['p95_seconds']:.2f} s" for r in line["pages"])
    return (
        f"{line['database']}: {len(line['errors'])} errors, lost: {line['lost'] or 'nothing'};"
        f" {pages}"
    )


if __name__ == "__main__":
    sys.exit(main())
