"""The clusters `make demo` stores, scored against the test web's own site categories.

`make demo` crawls the local test web (``demo/testbed``), extracts, de-duplicates and
runs `webometrics cluster` with its defaults: one activity clustering per university and
direction. Every external site of the test web has a category of the paper in
``demo/testbed/manifest.json`` (``sites[domain].category``: universities, scientific,
search engines, social networks, media, news, other). This benchmark scores the final
level of every stored clustering against those categories (class F-measure, NMI, ARI,
:func:`cluster.evaluate.score_clustering`), then, on a copy of the database, adds for
comparison one global activity clustering (``--university all``) and the paper's LSH
single link over all domains (``--method paper --university all``), the measurement the
activity clustering issue started from (class F 0.11).

The goal line: the size-weighted mean class F of the per-university clusterings >= 0.75.

Run after `make demo`: ``.venv/bin/python bench/demo_clusters.py [--db demo/webometrics.db]
[--manifest demo/testbed/manifest.json]``; writes ``bench/results/demo_clusters.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from bench.common import RESULTS, run_date, write_results  # noqa: E402
from cluster.evaluate import score_clustering  # noqa: E402
from core.settings import Settings  # noqa: E402
from store import make_engine  # noqa: E402
from store.models import Cluster, Clustering, ClusterMember, Document  # noqa: E402
from store.session import session_scope  # noqa: E402
from webometrics.stages import cluster as stage  # noqa: E402

GOAL = 0.75


def categories(manifest: Path) -> dict[str, str]:
    """Registered domain → category of every site of the test web."""
    sites = json.loads(manifest.read_text("utf-8"))["sites"]
    return {d: s["category"] for d, s in sites.items() if s.get("category")}


def score_all(engine: Any, labels: dict[str, str]) -> list[dict[str, Any]]:
    """The scores of the final level of every stored clustering."""
    rows: list[dict[str, Any]] = []
    with session_scope(engine) as s:
        clusterings = s.scalars(select(Clustering).order_by(Clustering.id)).all()
        for c in clusterings:
            members = s.execute(
                select(Cluster.label, Document.domain)
                .join(ClusterMember, ClusterMember.cluster_id == Cluster.id)
                .join(Document, Document.id == ClusterMember.document_id)
                .where(Cluster.clustering_id == c.id, Cluster.level == -1)
            ).all()
            known = [(lab, d) for lab, d in members if d in labels]
            if not known:
                continue
            sc = score_clustering([labels[d] for _, d in known], [lab for lab, _ in known])
            rows.append(
                {
                    "clustering": c.id,
                    "method": c.algorithm,
                    "university": (c.filter or {}).get("university") or "all",
                    "direction": (c.filter or {}).get("direction"),
                    "documents": len(members),
                    "labelled": len(known),
                    "clusters": c.n_clusters,
                    "f_class": round(sc["f_class"], 3),
                    "nmi": round(sc["nmi"], 3),
                    "ari": round(sc["ari"], 3),
                    "seconds": c.seconds,
                }
            )
    return rows


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# The demo's clusters against the test web's categories (`bench/demo_clusters.py`)",
        "",
        f"{report['when']}; database `{report['db']}` (a copy, clustered again with the "
        "current defaults: per university and direction, then one global activity "
        "clustering and the paper's LSH single link over all domains). Class F, NMI and "
        "ARI of each clustering's final level against `sites[domain].category` of the "
        "manifest (domains the manifest lacks are left out of the scores).",
        "",
        f"- per-university activity clusterings, size-weighted mean class F "
        f"**{report['per_university_f']:.3f}** (goal >= {GOAL}: "
        f"{'met' if report['per_university_f'] >= GOAL else 'NOT met'}), all of them in "
        f"{report['per_university_seconds']} s",
        "",
        "| clustering | method | university | direction | documents | labelled | clusters "
        "| class F | NMI | ARI | seconds |",
        "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['clustering']} | {r['method']} | {r['university']} | {r['direction']} "
            f"| {r['documents']} | {r['labelled']} | {r['clusters']} | {r['f_class']:.3f} "
            f"| {r['nmi']:.3f} | {r['ari']:.3f} | {r['seconds']} |"
        )
    return "\n".join(lines) + "\n"


SMOKE_SKIP = "reads the database and manifest of a `make demo` run"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "demo" / "webometrics.db"))
    ap.add_argument("--manifest", default=str(ROOT / "demo" / "testbed" / "manifest.json"))
    ap.add_argument("--out", default=str(RESULTS / "demo_clusters"))
    args = ap.parse_args(argv)
    db, manifest = Path(args.db), Path(args.manifest)
    if not db.is_file() or not manifest.is_file():
        print(f"{db} or {manifest} is missing: run `make demo` first", file=sys.stderr)
        return 2
    labels = categories(manifest)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "demo.db"
        shutil.copy(db, copy)
        engine = make_engine(f"sqlite:///{copy}")
        stored = {r["clustering"] for r in score_all(engine, labels)}
        # the current defaults, as `webometrics cluster` runs them, then the comparisons
        t0 = time.perf_counter()
        per_uni_ids = {c.clustering_id for c in stage.run(engine, Settings()).clusterings}
        seconds = time.perf_counter() - t0
        stage.run(engine, Settings(), stage.ClusterScope(university="all"))
        stage.cluster_one(engine, Settings().replace(cluster={"method": "paper"}))
        rows = [r for r in score_all(engine, labels) if r["clustering"] not in stored]
        engine.dispose()
    per_uni = [r for r in rows if r["clustering"] in per_uni_ids]
    weight = sum(r["labelled"] for r in per_uni)
    report = {
        "when": run_date(),
        "db": str(db),
        "rows": rows,
        "per_university_seconds": round(seconds, 2),
        "per_university_f": round(
            sum(r["f_class"] * r["labelled"] for r in per_uni) / weight if weight else 0.0, 3
        ),
    }
    out = Path(args.out)
    text = markdown(report)
    write_results(out, report, text, newline=True)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
