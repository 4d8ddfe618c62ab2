"""Importing a world-size ranking table (``webometrics universities import-ranks``): how
long reading, matching and storing take, and how the rows are matched.

The table is made from the packaged registry's real universities (Hipo's world list,
10,000+ records, ranked in their file order) with the paper's nine at their Table 2 ranks,
written the ways real tables are: a quarter of the rows with a URL on a ``www.`` host, a
quarter with the bare domain, a quarter with the name only (the registry's spelling, not
the stored one: ``St. Petersburg State University``), a quarter with both. The database
(SQLite, in a temporary folder) holds the nine universities of
``examples/korelin2015/universities.toml``, so nine rows match and the rest are
universities not studied, as when a whole Webometrics edition is imported.

Usage: ``.venv/bin/python bench/rank_import.py`` (writes ``bench/results/rank_import.md``
and ``.json``); ``--smoke`` imports the first 500 records and writes into a temporary
folder.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import RESULTS, load_averages, machine, peak_rss_mb, run_date, write_results

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "korelin2015"
SMOKE_ARGV = ["--smoke"]
"""The arguments of the smoke test (tests/bench): 500 records, a temporary folder."""
SMOKE_LIMIT = 500


def world_table(path: Path, limit: int | None = None) -> int:
    """Write the table (the first ``limit`` registry records and the nine); returns its
    rows."""
    from analyse.registries import Registry
    from core.universities import parse_universities

    nine = {u.domains[0]: u.rank for u in parse_universities(EXAMPLE / "universities.toml")}
    records = [r for r in Registry.load().records if r.source == "hipo"]
    if limit is not None:
        wanted = set(nine)
        records = records[:limit] + [r for r in records[limit:] if r.websites[0] in wanted]
    rows = []
    for i, rec in enumerate(records):
        domain = rec.websites[0]
        rank = nine.get(domain, 1000 + i)
        name, site = rec.name, ""
        if i % 4 == 0:
            site = f"https://www.{domain}/"
        elif i % 4 == 1:
            name, site = "", domain
        elif i % 4 == 3:
            site = domain
        if domain in nine:  # the nine by name or URL, as the Webometrics table writes them
            name, site = rec.name, ("" if i % 2 else f"http://www.{domain}/")
        rows.append((name, site, rank, rec.country))
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["University", "Web site", "World Rank", "Country"])
        w.writerows(rows)
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--smoke",
        action="store_true",
        help=f"the first {SMOKE_LIMIT} records; results into a temporary folder",
    )
    args = ap.parse_args(argv)
    from analyse.registries import Registry
    from core.rank_table import read_rank_table
    from core.universities import parse_universities
    from store import make_engine, schema
    from store.rank_editions import import_edition
    from store.universities import import_universities

    load_before = load_averages()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        n_rows = world_table(folder / "world.csv", SMOKE_LIMIT if args.smoke else None)
        engine = make_engine(f"sqlite:///{folder / 'bench.db'}")
        schema.upgrade(engine)
        import_universities(engine, parse_universities(EXAMPLE / "universities.toml"))
        t0 = time.perf_counter()
        table = read_rank_table(folder / "world.csv")
        t1 = time.perf_counter()
        registry = Registry.load()
        t2 = time.perf_counter()
        done = import_edition(engine, table, "world", registry=registry)
        t3 = time.perf_counter()
        bare = import_edition(engine, table, "world (no registries)", dry_run=True)
        t4 = time.perf_counter()
        engine.dispose()
    how = Counter(m.how for m in done.match.matched)
    result = {
        "date": run_date(),
        "machine": machine(),
        "load_before": load_before,
        "load_after": load_averages(),
        "rows": n_rows,
        "read_s": round(t1 - t0, 2),
        "registry_load_s": round(t2 - t1, 2),
        "match_and_store_s": round(t3 - t2, 2),
        "match_without_registries_s": round(t4 - t3, 2),
        "matched": len(done.match.matched),
        "matched_by": dict(how),
        "matched_without_registries": len(bare.match.matched),
        "unmatched": len(done.match.unmatched),
        "ambiguous": len(done.match.ambiguous),
        "unranked": done.match.unranked,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    r = result
    md = f"""# Importing a world-size ranking table

`python bench/rank_import.py` — {result["machine"]}; run {result["date"]}; load averages
{load_before} before, {result["load_after"]} after. A table of {n_rows:,} real universities
(the packaged registry's Hipo records, a quarter each with a URL, a bare domain, the name
only, both), the nine of `examples/korelin2015` stored (SQLite).

| step | seconds |
|---|--:|
| read and check the table (`core.rank_table`) | {result["read_s"]} |
| load the registries (`Registry.load`) | {result["registry_load_s"]} |
| match and store the edition (`import_edition`) | {result["match_and_store_s"]} |
| match only, no registries (`--no-registries --dry-run`) | {r["match_without_registries_s"]} |

Matched {result["matched"]} of the nine ({", ".join(f"{n} by {k}" for k, n in how.items())});
without the registries {result["matched_without_registries"]}. Unmatched rows:
{result["unmatched"]:,} (universities not studied), ambiguous: {result["ambiguous"]},
stored universities left without a rank: {len(done.match.unranked)}. Peak RSS
{result["peak_rss_mb"]} MB.
"""
    if args.smoke:
        with tempfile.TemporaryDirectory() as tmp:
            write_results(Path(tmp) / "rank_import", result, md)
    else:
        write_results(RESULTS / "rank_import", result, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
