"""First render time of each dashboard page on a generated database, with its figures
fresh and while they are stale (a crawl stored rows since they were computed).

The database (:func:`bench.dashboard_data.generate`, at the current schema): the paper's
nine universities in three countries, ``--domains`` external registered domains and
``--pages`` pages (the universities' own pages, the external pages they link to and the
citing pages that link to them), links, verified citations of every source (backlink
export, crawl, Common Crawl captures), two crawl runs and an older Common Crawl web-graph
run, domains without evidence (language and category ``unknown``), domain documents and
categories, a clustering per university and direction with four levels of cluster rows,
and a near-duplicate run over page documents. A migrated SQLite file, a PostgreSQL
server of its own (``--postgres``: initdb/pg_ctl on 127.0.0.1, as the tests start one)
or ``--db-url``.

Each page is rendered with Streamlit's ``AppTest`` (the server-side script run: every
query and element, not the browser's paint) after both Streamlit caches are cleared, so
the time includes opening the engine; the second (cached) render is kept too. As in a
running server, the app's modules, the libraries it warms in the background
(``dashboard.cache.warm_imports``) and the installed components are loaded once before
the first page is timed. Twice: **fresh**, after :func:`store.aggregates.refresh` (timed
as its own column), and **stale**, after a third crawl run then stored a tenth more pages
and links (what the database holds while a crawl runs: the pages read the figures of the
last refresh and show the stale banner, whose count of the new rows is timed with them).
The aggregates are the only read path, so both states read the same tables.
``network queries``: the Network page's SQL reads alone
(``analytics.environment_summary``, ``network_domains``, ``environment(domains=...)``).
Goal: <= 2 s per page in every state. Every run adds or replaces its line (database x
size) in ``bench/results/dashboard.json`` and rewrites ``.md`` from all lines; a line's
``views_before``, the render while stale before the aggregates became the only path
(the views were read then), is kept from the line it replaces.

Run: ``.venv/bin/python bench/dashboard.py --pages 1000000 --domains 100000 [--postgres]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# run as a script, this file's folder comes first on sys.path: keep bench/dashboard.py
# from shadowing the dashboard package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.common import RESULTS, machine_info, write_results  # noqa: E402
from bench.dashboard_data import generate  # noqa: E402

PAGES = {
    "Overview": "views/overview.py",
    "University": "views/university.py",
    "Countries": "views/countries.py",
    "Ranks": "views/ranks.py",
    "Network": "views/network.py",
    "Duplicates": "views/duplicates.py",
    "Runs": "views/runs.py",
}
GOAL_SECONDS = 2.0


def render_times(
    url: str, repeats: int = 1, only: list[str] | None = None
) -> dict[str, dict[str, float]]:
    """Cold and warm render seconds of every page (AppTest, caches cleared before each)."""
    import streamlit as st

    from tests import apptest

    os.environ["WEBOMETRICS_DB_URL"] = url
    for name in ("streamlit", "streamlit.runtime", "streamlit.runtime.scriptrunner_utils"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # import the app's modules once (a running server has them loaded after its first
    # page), so each page's figure is its own queries and elements
    primer = apptest.app(120)
    primer.switch_page(PAGES["Runs"])
    t = time.perf_counter()
    primer.run()
    from dashboard.cache import WARM_THREAD

    for thread in threading.enumerate():  # the libraries a server imports after its start
        if thread.name == WARM_THREAD:
            thread.join()
    print(f"(imports + Runs page, once per server: {time.perf_counter() - t:.2f} s)")
    out: dict[str, dict[str, float]] = {}
    for name, path in PAGES.items():
        if only and name not in only:
            continue
        cold = []
        warm = []
        for _ in range(repeats):
            st.cache_data.clear()
            st.cache_resource.clear()
            # the installed components scanned once, as a server does at its start (each
            # new AppTest scans them again: 0.6 s that no analyst's page waits for)
            at = apptest.app(120)
            at.switch_page(path)
            t = time.perf_counter()
            at.run()
            cold.append(time.perf_counter() - t)
            if at.exception:
                raise RuntimeError(f"{name}: {at.exception[0].message}")
            if at.error:  # e.g. a schema out of date: the page stopped at once
                raise RuntimeError(f"{name} shows an error: {at.error[0].value}")
            t = time.perf_counter()
            at.run()
            warm.append(time.perf_counter() - t)
        out[name] = {"cold_seconds": round(min(cold), 3), "warm_seconds": round(min(warm), 3)}
        cold_s, warm_s = out[name]["cold_seconds"], out[name]["warm_seconds"]
        print(f"{name:<11} first {cold_s:6.2f} s   cached {warm_s:6.2f} s", flush=True)
    return out


def _verdict(seconds: float) -> str:
    return "met" if seconds <= GOAL_SECONDS else f"missed by {seconds - GOAL_SECONDS:.2f} s"


def network_query_seconds(url: str, max_nodes: int = 300) -> float:
    """Seconds of the Network page's reads once it asks SQL for its domains (a new
    engine, as a first render)."""
    from store import analytics, make_engine

    engine = make_engine(url)
    t = time.perf_counter()
    run = analytics.latest_run_id(engine)
    analytics.environment_summary(engine, run_id=run, direction="outgoing")
    top = analytics.network_domains(engine, run_id=run, direction="outgoing", limit=max_nodes + 1)
    analytics.environment(
        engine, run_id=run, direction="outgoing", domains=[r.domain for r in top[:max_nodes]]
    )
    seconds = time.perf_counter() - t
    engine.dispose()
    return round(seconds, 3)


def impact_query_seconds(url: str) -> float:
    """Seconds of the Overview's impact figures read from the saved tables
    (``agg_citing_overlap``, ``agg_citing_rank``), a new
    engine."""
    from sqlalchemy import select

    from store import aggregates, make_engine

    engine = make_engine(url)
    t = time.perf_counter()
    with engine.connect() as conn:
        conn.execute(select(aggregates.CITING_OVERLAP_SOURCE)).all()
        conn.execute(select(aggregates.CITING_RANK_SOURCE)).all()
    seconds = time.perf_counter() - t
    engine.dispose()
    return round(seconds, 3)


def _size(pages: int, domains: int) -> str:
    return f"{pages:,} / {domains:,}"


def _cell(entry: dict[str, Any], page: str, state: str) -> str:
    if page not in entry.get(state, {}):
        return "–"  # a line measured before the page existed, or without this state
    seconds = entry[state][page]["cold_seconds"]
    mark = "" if seconds <= GOAL_SECONDS else " ✗"
    if state == "stale":
        was = entry.get("views_before", {}).get(page, {}).get("cold_seconds")
        if was is not None:
            return f"{was:.2f} → **{seconds:.2f}**{mark}"
    return f"{seconds:.2f}{mark}"


def _stale_rows(engine: Any) -> dict[str, int]:
    """Store what a crawl in progress adds after a refresh: a new crawl run, a tenth more
    pages (copies under new URLs) and links (copies in the new run)."""
    from sqlalchemy import text

    from store.models import CrawlRun
    from store.session import session_scope

    if engine.dialect.name == "postgresql":  # the generator wrote the ids itself
        with engine.begin() as conn:
            for t in ("crawl_run", "page", "link"):
                conn.execute(
                    text(f"SELECT setval(pg_get_serial_sequence('{t}', 'id'), MAX(id)) FROM {t}")
                )
    with session_scope(engine) as s:
        run = CrawlRun(kind="outgoing", status="running")
        s.add(run)
        s.flush()
        run_id = run.id
    with engine.begin() as conn:
        pages = conn.execute(
            text(
                "INSERT INTO page (url, host, registered_domain, university_id, role, "
                "extraction_status) SELECT url || '#stale', host, registered_domain, "
                "university_id, role, 'pending' FROM page WHERE id % 10 = 0"
            )
        ).rowcount
        links = conn.execute(
            text(
                "INSERT INTO link (run_id, source_page_id, target_url, target_host, "
                "target_domain, nofollow, external) SELECT :run, source_page_id, "
                "target_url, target_host, target_domain, nofollow, external FROM link "
                "WHERE id % 10 = 0"
            ),
            {"run": run_id},
        ).rowcount
    return {"stale pages": int(pages), "stale links": int(links)}


def markdown(lines: dict[str, dict[str, Any]]) -> str:
    """The table of every measured database x size."""
    pages = list(PAGES)
    md = [
        "# Dashboard: first render time per page, stale and fresh",
        "",
        "Generated database (`bench/dashboard_data.py`, at the schema revision shown): the "
        "paper's nine universities, `pages / domains` as given, links, verified citations of "
        "every source, two crawl runs and an older Common Crawl graph run, 15 % of domains "
        "without evidence (`unknown`). First render = the page's server-side script in "
        "Streamlit's AppTest with both caches cleared (engine, queries, elements; not the "
        "browser's paint), the app's modules, the libraries it warms in the background "
        "(`dashboard.cache.warm_imports`) and the installed components loaded once beforehand "
        "as in a running server. **stale**: after a third crawl run stored a tenth more "
        "pages and links since the figures were computed (the pages read the last refresh "
        "and show the stale banner); `a → b`: a = the same state before the aggregates "
        "became the only read path (the views were read while stale, schema 0014), b = now. "
        "**fresh**: right after the refresh (*aggregates* = its seconds). "
        "*network queries*: the Network page's SQL reads alone "
        "(`analytics.environment_summary`, `network_domains`, `environment(domains=...)`); "
        "*impact queries*: the Overview's impact figures (`agg_citing_overlap`, "
        "`agg_citing_rank`). Goal ≤ 2 s in every state (✗: missed).",
        "",
    ]
    ordered = sorted(lines.items(), key=lambda kv: (kv[1]["database"], kv[1]["pages_n"]))
    for state in ("stale", "fresh"):
        md += [
            f"**{state}**:",
            "",
            "| database | pages / domains | schema | environment rows | aggregates (s) | "
            + " | ".join(pages)
            + " | network queries (s) | impact queries (s) |",
            "|---|---|---|---:|---:|" + "---:|" * len(pages) + "---:|---:|",
        ]
        for _key, e in ordered:
            if state not in e:
                continue
            md.append(
                f"| {e['database']} | {_size(e['pages_n'], e['domains_n'])} | "
                f"{e['schema_revision']} | {e['rows'].get('environment rows', 0):,} | "
                f"{e['aggregate_seconds']:.1f} | "
                + " | ".join(_cell(e, p, state) for p in pages)
                + f" | {e['network_query_seconds']:.2f} | "
                + (f"{e['impact_query_seconds']:.2f} |" if "impact_query_seconds" in e else "– |")
            )
        md.append("")
    md += ["Cached renders (s, fresh):", ""]
    md += ["| database | pages / domains | " + " | ".join(pages) + " |"]
    md += ["|---|---|" + "---:|" * len(pages)]
    for _key, e in ordered:
        if "fresh" not in e:
            continue
        md.append(
            f"| {e['database']} | {_size(e['pages_n'], e['domains_n'])} | "
            + " | ".join(
                f"{e['fresh'][p]['warm_seconds']:.2f}" if p in e.get("fresh", {}) else "–"
                for p in pages
            )
            + " |"
        )
    any_line = next(iter(lines.values()))
    md += [
        "",
        f"Machine: {any_line['machine']['platform']}, {any_line['machine']['cpus']} CPUs, "
        f"Python {any_line['machine']['python']} (shared with other jobs, noisy). Repeat a "
        "line: `python bench/dashboard.py --pages N --domains M [--postgres]`.",
        "",
    ]
    return "\n".join(md)


SMOKE_SKIP = "builds a database of up to a million pages and renders every page"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--domains", type=int, default=10_000)
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--db-url", help="an empty database to fill (default: a temporary SQLite file)"
    )
    where.add_argument(
        "--postgres", action="store_true", help="start a PostgreSQL server of its own"
    )
    parser.add_argument("--repeats", type=int, default=1, help="best of N cold renders")
    parser.add_argument(
        "--page", action="append", choices=list(PAGES), help="time only this page (repeatable)"
    )
    parser.add_argument(
        "--no-stale", action="store_true", help="skip the renders while the figures are stale"
    )
    parser.add_argument("--no-save", action="store_true", help="print only")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --db-url: keep the database's generated data when it has some (to time "
        "the pages again after a change of the dashboard; implies --no-stale)",
    )
    args = parser.parse_args(argv)
    if args.reuse and not args.db_url:
        parser.error("--reuse needs --db-url (a database a previous run filled)")

    from sqlalchemy import func, select, text

    from store import aggregates, make_engine, schema

    tmp = tempfile.TemporaryDirectory(prefix="webometrics-bench-")
    server = None
    if args.postgres:
        from tests.conftest import PostgresServer

        server = PostgresServer()
        server.start()
        url = server.create_database()
    else:
        url = args.db_url or f"sqlite:///{Path(tmp.name) / 'bench.db'}"
    try:
        engine = make_engine(url)
        schema.upgrade(engine)
        revision = schema.current_revision(engine)
        t = time.perf_counter()
        with engine.connect() as conn:
            filled = bool(conn.execute(text("SELECT COUNT(*) FROM page")).scalar())
        if args.reuse and filled:
            args.no_stale = True
            with engine.connect() as conn:
                counts = {
                    "pages": int(conn.execute(text("SELECT COUNT(*) FROM page")).scalar() or 0)
                }
        else:
            counts = generate(engine, n_pages=args.pages, n_domains=args.domains)
        if engine.dialect.name == "postgresql":  # what autovacuum does after a bulk load
            with engine.connect() as conn:
                conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))
        gen_seconds = time.perf_counter() - t
        with engine.connect() as conn:
            counts["environment rows"] = int(
                conn.execute(select(func.count()).select_from(text("v_environment"))).scalar() or 0
            )
        print(
            f"generated in {gen_seconds:.1f} s: "
            + ", ".join(f"{k} {v:,}" for k, v in counts.items())
        )
        t = time.perf_counter()
        built = aggregates.refresh(engine)
        agg_seconds = time.perf_counter() - t
        print(f"aggregates in {agg_seconds:.1f} s: {built}")
        engine.dispose()
        print("== fresh")
        fresh = render_times(url, args.repeats, args.page)
        network = network_query_seconds(url)
        saved_impact = impact_query_seconds(url)
        print(f"network queries {network:.2f} s, impact queries {saved_impact:.2f} s")
        stale: dict[str, dict[str, float]] = {}
        if not args.no_stale:
            counts.update(_stale_rows(engine))
            engine.dispose()
            assert aggregates.fresh_run_ids(engine) is None
            print("== stale: " + ", ".join(f"{k} {v:,}" for k, v in counts.items() if "stale" in k))
            stale = render_times(url, args.repeats, args.page)
    finally:
        if server is not None:
            server.stop()
    database = "sqlite" if url.startswith("sqlite") else "postgresql"
    line: dict[str, Any] = {
        "goal_seconds": GOAL_SECONDS,
        "database": database,
        "pages_n": args.pages,
        "domains_n": args.domains,
        "schema_revision": revision,
        "rows": counts,
        "generate_seconds": round(gen_seconds, 1),
        "aggregate_seconds": round(agg_seconds, 1),
        "aggregates": built,
        "stale": stale,
        "fresh": fresh,
        "network_query_seconds": network,
        "impact_query_seconds": saved_impact,
        "all_within_goal": all(
            v["cold_seconds"] <= GOAL_SECONDS for v in [*fresh.values(), *stale.values()]
        ),
        "machine": machine_info("python", "platform", "cpus"),
        "command": "python bench/dashboard.py " + " ".join(argv or sys.argv[1:]),
    }
    if not args.no_save and not args.page:
        path = RESULTS / "dashboard.json"
        old = json.loads(path.read_text()) if path.exists() else {}
        lines = old.get("lines", {}) if isinstance(old, dict) else {}
        key = f"{database} {args.pages} {args.domains}"
        was = lines.get(key, {})
        if "views_before" in was or "before" in was:  # the stale state as it was measured
            line["views_before"] = was.get("views_before", was.get("before"))
        lines[key] = line
        result = {"goal_seconds": GOAL_SECONDS, "lines": lines}
        write_results(RESULTS / "dashboard", result, markdown(lines), indent=2, newline=True)
        print(f"wrote {path} and .md")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
