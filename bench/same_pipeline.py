"""Does a change keep what the pipeline stores? The whole pipeline, before and after.

Builds the pipeline test world (``tests/pipeline_world.py``: a crawl of the local test
web, extract, dedup, the three clusterings and analyse, on SQLite) twice, with the code of
git revision ``REV`` (checked out in a temporary worktree) and with the working tree,
then compares what each stored by natural keys (ids and times differ from run to run):
the pages, their links, the documents (terms and shingles included), every clustering's
final partition with each cluster's theme terms and category, the domains' categories,
the figures the dashboard and the report read (every aggregate table of
``store.aggregates``), and the tables of ``webometrics report`` run by each code on its
own database (every CSV file). Exit 0 when all are identical, 1 otherwise.

Run: ``.venv/bin/python bench/same_pipeline.py b547797`` (about a minute per build);
writes ``bench/results/same_pipeline.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, machine, run_date  # noqa: E402
from core.shared_data import data_dir  # noqa: E402

BUILD = """
import sys
from pathlib import Path
from tests.pipeline_world import build_pipeline_world
print(build_pipeline_world(Path(sys.argv[1]), Path(sys.argv[2])).url)
"""
#: columns that differ between two runs of the same code (ids, times, file offsets)
VOLATILE = {
    "page": ("id", "fetched_at", "warc_offset", "warc_file", "extracted_at"),
    "document": ("id", "page_id", "created_at", "fetched_at"),
    "link": ("id", "source_page_id"),
}
SHOWN = 5  # rows shown of each thing that differs, each way
#: the saved figures (store.aggregates), compared without their ids
AGGREGATES = (
    "agg_environment",
    "agg_domain_count",
    "agg_table2",
    "agg_country_count",
    "agg_network_domain",
    "agg_citing_overlap",
    "agg_citing_rank",
)


def build(code: Path, folder: Path) -> Path:
    """The pipeline world built by the code in ``code``; its database file."""
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(code)}
    subprocess.run(
        [sys.executable, "-c", BUILD, str(folder), str(data_dir())],
        cwd=code,
        env=env,
        check=True,
    )
    db = folder / "pipeline.db"
    report = ["report", "--out", str(folder / "report")]
    subprocess.run(
        [sys.executable, "-m", "webometrics", "--db-url", f"sqlite:///{db}", "-q", *report],
        cwd=code,
        env=env,
        check=True,
    )
    return db


def _rows(db: sqlite3.Connection, table: str) -> list[str]:
    cols = [r[1] for r in db.execute(f"pragma table_info({table})")]
    keep = [c for c in cols if c not in VOLATILE.get(table, ("id",))]
    return sorted(map(repr, db.execute(f"select {', '.join(keep)} from {table}")))


def _partitions(db: sqlite3.Connection) -> list[str]:
    """Each clustering's final clusters as sets of document keys, with theme and category."""
    docs = dict(db.execute("select id, unit || ':' || key from document"))
    out = []
    for cid, algorithm, linkage, unit, filt in db.execute(
        "select id, algorithm, linkage, unit, filter from clustering"
    ):
        scope = json.loads(filt or "{}")
        members: dict[int, list[str]] = {}
        for cluster_id, doc in db.execute(
            "select c.id, m.document_id from cluster c join cluster_member m "
            "on m.cluster_id = c.id where c.clustering_id = ? and c.level = -1",
            (cid,),
        ):
            members.setdefault(cluster_id, []).append(docs[doc])
        clusters = sorted(
            (sorted(members.get(cluster_id, [])), theme, category)
            for cluster_id, theme, category in db.execute(
                "select id, theme_terms, category from cluster where clustering_id = ? "
                "and level = -1",
                (cid,),
            )
        )
        key = (algorithm, linkage, unit, scope.get("university"), scope.get("direction"))
        out.append(repr((key, clusters)))
    return sorted(out)


def stored(path: Path) -> dict[str, list[str]]:
    """What the pipeline stored, by natural keys."""
    db = sqlite3.connect(path)
    try:
        return {
            "pages": _rows(db, "page"),
            "links": _rows(db, "link"),
            "documents": _rows(db, "document"),
            "clusterings": _partitions(db),
            "domain categories": sorted(
                map(repr, db.execute("select domain, category, score from domain_category"))
            ),
            "figures (aggregates)": sorted(r for t in AGGREGATES for r in _rows(db, t)),
            "report tables (CSV)": sorted(
                repr((f.name, f.read_text(encoding="utf-8")))
                for f in (path.parent / "report").rglob("*.csv")
            ),
        }
    finally:
        db.close()


SMOKE_SKIP = "builds the pipeline test world twice, at a revision and now (minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the git revision to compare the working tree with")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="same-pipeline-") as tmp:
        old_code = Path(tmp) / "code"
        subprocess.run(
            ["git", "worktree", "add", "-q", str(old_code), args.rev], cwd=ROOT, check=True
        )
        try:
            before = stored(build(old_code, Path(tmp) / "before"))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_code)], cwd=ROOT)
        after = stored(build(ROOT, Path(tmp) / "after"))
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    lines = [
        "# The pipeline stores the same before and after (`bench/same_pipeline.py`)",
        "",
        f"{machine()}; {run_date()}. The pipeline test world built with revision "
        f"`{args.rev}` and with the working tree at `{head}`, compared by natural keys.",
        "",
        "| what | rows before | rows after | identical |",
        "|---|---:|---:|---|",
    ]
    same = True
    differ: list[str] = []
    for name, rows in before.items():
        equal = rows == after[name]
        same &= equal
        lines.append(f"| {name} | {len(rows)} | {len(after[name])} | {'yes' if equal else 'NO'} |")
        if not equal:
            gone, new = set(rows) - set(after[name]), set(after[name]) - set(rows)
            differ += [f"- {name}: before only `{r[:300]}`" for r in sorted(gone)[:SHOWN]]
            differ += [f"- {name}: after only `{r[:300]}`" for r in sorted(new)[:SHOWN]]
    if differ:
        lines += ["", f"What differs (at most {SHOWN} rows each way):", "", *differ]
    md = "\n".join(lines) + "\n"
    print(md)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "same_pipeline.md").write_text(md, encoding="utf-8")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
