"""Consensus of Leiden runs on the activity clustering's graph: worth its time?

Issue 21 asks for class F within 0.005 of the textbook method (tf-idf, exact 16-NN,
Leiden) on every labelled corpus, measured with one Leiden seed. ``bench/activity.py``'s
seed study shows that one seed moves class F by more than that on the small corpora. A
standard way to take the seed out of a graph clustering is **consensus clustering**
(Lancichinetti & Fortunato 2012; the ensemble of ECG, Poulin & Théberge 2019): run
Leiden ``E`` times with different seeds, weight each edge by the share of the runs that
put its two ends together (``w · (0.05 + 0.95 · share)``), and run Leiden once more on
the reweighted graph.

For each corpus this builds the default ``ActivityClusterer()``'s graph once (from raw
text), then clusters it with Leiden seeds 1-5 (RB, resolution 1, five iterations: the
default's clusters) alone and through a consensus of ``E`` members of ``I`` iterations
each (:data:`VARIANTS`), and reports class F per seed (mean, sd, seed 1) and the seconds
of the Leiden step. The textbook's class F by seed comes from ``bench/results/
activity.json`` (its seed study), for issue 21's goal lines. A last row times the Leiden
step on the 20,000 Reuters stories of ``bench/activity.py``'s scaling table, against
the 0.5 x textbook time budget there.

Run: ``.venv/bin/python bench/consensus.py [--corpora bbc,lenta]`` (about 6 min); writes
``bench/results/consensus.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, load_averages, machine, run_date, write_results  # noqa: E402
from corpora.activity import corpus_names, load_activity_corpus  # noqa: E402

SEEDS = (1, 2, 3, 4, 5)
VARIANTS = ((8, 2), (16, 2))
"""Consensus members ``E`` and Leiden iterations ``I`` of each member."""
FLOOR = 0.05
"""The weight share an edge keeps when no member puts its ends together (ECG's)."""
SCALE_DOCS = 20_000


def plain(n: int, i: np.ndarray, j: np.ndarray, w: np.ndarray, seed: int) -> np.ndarray:
    """The default's clusters: Leiden with ``[activity]``'s quality, iterations and the
    clusters' resolution (the smallest: RB at 1, five iterations)."""
    from cluster.nested_leiden import igraph_leiden
    from core import defaults as D

    return igraph_leiden(
        n, i, j, w, quality=D.ACTIVITY_QUALITY, resolution=min(D.ACTIVITY_RESOLUTION),
        seed=seed, n_iterations=D.ACTIVITY_ITERATIONS,
    ).labels  # fmt: skip


def consensus(
    n: int, i: np.ndarray, j: np.ndarray, w: np.ndarray, seed: int, members: int, iters: int
) -> np.ndarray:
    """Leiden on the graph reweighted by how often ``members`` seeded runs join each edge."""
    import igraph as ig

    graph = ig.Graph(n=n, edges=np.column_stack([i, j]))
    weights = w.astype(np.float64).tolist()
    together = np.zeros(len(i))
    try:
        for m in range(members):
            ig.set_random_number_generator(random.Random(seed * 1000 + m))
            found = graph.community_leiden(
                objective_function="modularity", weights=weights, n_iterations=iters
            )
            labels = np.asarray(found.membership)
            together += labels[i] == labels[j]
    finally:
        ig.set_random_number_generator(random)
    return plain(n, i, j, w * (FLOOR + (1 - FLOOR) * together / members), seed)


def methods() -> list[tuple[str, Any]]:
    """Name and clustering function ``(n, i, j, w, seed) -> labels`` of each method."""
    out: list[tuple[str, Any]] = [("Leiden (default)", plain)]
    for e, it in VARIANTS:
        out.append(
            (
                f"consensus {e}x{it}",
                lambda n, i, j, w, s, e=e, it=it: consensus(n, i, j, w, s, e, it),
            )
        )
    return out


def graph_of(texts: list[str], languages: list[str | None]) -> tuple[int, Any, Any, Any, float]:
    """The default estimator's k-NN graph of the texts, and the seconds to build it."""
    from cluster import ActivityClusterer
    from cluster.knn import knn_edges

    t0 = time.perf_counter()
    model = ActivityClusterer().fit(texts, languages)
    seconds = time.perf_counter() - t0
    i, j, w = knn_edges(model.graph_.neighbours, model.graph_.similarities)
    return len(texts), i, j, w, seconds


def corpus_rows(name: str) -> list[dict[str, Any]]:
    """Class F by seed and Leiden seconds of every method on one corpus."""
    from cluster import score_clustering

    corpus = load_activity_corpus(name)
    n, i, j, w, _ = graph_of(corpus.texts, corpus.languages)
    rows = []
    for label, run in methods():
        scores, seconds = [], []
        for seed in SEEDS:
            t0 = time.perf_counter()
            labels = run(n, i, j, w, seed)
            seconds.append(time.perf_counter() - t0)
            scores.append(round(float(score_clustering(corpus.labels, labels)["f_class"]), 4))
        rows.append(
            {"corpus": name, "method": label, "f_by_seed": scores,
             "seconds": round(float(np.mean(seconds)), 3)}
        )  # fmt: skip
    return rows


def scale_rows() -> list[dict[str, Any]]:
    """Leiden seconds of every method on the 20,000 Reuters stories (seed 1)."""
    from bench.activity import reuters_scale

    texts, _labels = reuters_scale(SCALE_DOCS)
    n, i, j, w, fit = graph_of(texts, ["en"] * len(texts))
    rows = []
    for label, run in methods():
        t0 = time.perf_counter()
        run(n, i, j, w, 1)
        rows.append(
            {"method": label, "seconds": round(time.perf_counter() - t0, 3), "fit": round(fit, 2)}
        )
    return rows


def textbook_by_seed() -> dict[str, list[float]]:
    """The textbook method's class F by seed per corpus, from ``activity.json``."""
    path = RESULTS / "activity.json"
    if not path.exists():
        return {}
    report = json.loads(path.read_text(encoding="utf-8"))
    return {
        r["corpus"]: r["f_class_by_seed"]
        for r in report.get("seed_rows", [])
        if r.get("method") == "anchor" and "error" not in r
    }


def goal_lines(rows: list[dict[str, Any]], textbook: dict[str, list[float]]) -> list[str]:
    """Issue 21's class F line per method: with seed 1, and on the means over the seeds."""
    lines = []
    for label, _run in methods():
        mine = {r["corpus"]: r["f_by_seed"] for r in rows if r["method"] == label}
        both = [c for c in mine if c in textbook]
        seed1 = [c for c in both if mine[c][0] < textbook[c][0] - 0.005]
        means = [c for c in both if np.mean(mine[c]) < np.mean(textbook[c]) - 0.005]
        lines.append(
            f"- {label}: within 0.005 of the textbook with seed 1 on {len(both) - len(seed1)} "
            f"of {len(both)} corpora (short: {', '.join(seed1) or 'none'}); on the means "
            f"over seeds {SEEDS[0]}-{SEEDS[-1]} on {len(both) - len(means)} of {len(both)} "
            f"(short: {', '.join(means) or 'none'})"
        )
    return lines


def markdown(report: dict[str, Any]) -> str:
    textbook = report["textbook"]
    out = [
        "# Consensus of Leiden runs on the activity graph (`bench/consensus.py`)",
        "",
        f"{report['machine']}; {report['date']}; load averages (1, 5, 15 min) "
        f"{report['load_before']} before, {report['load_after']} after. Each corpus's graph "
        "is the default `ActivityClusterer()`'s; only the Leiden step differs. *Leiden s*: "
        "the mean seconds of that step per seed.",
        "",
        "## Issue 21's class F line",
        "",
        *goal_lines(report["rows"], textbook),
        "",
        "## Class F over Leiden seeds " + f"{SEEDS[0]}-{SEEDS[-1]}",
        "",
        "| corpus | method | mean | sd | seed 1 | min-max | Leiden s | textbook mean | "
        "textbook seed 1 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        f = r["f_by_seed"]
        ref = textbook.get(r["corpus"])
        ref_txt = f"{np.mean(ref):.4f} | {ref[0]:.4f}" if ref else "- | -"
        out.append(
            f"| {r['corpus']} | {r['method']} | {np.mean(f):.4f} | {np.std(f):.4f} | "
            f"{f[0]:.4f} | {min(f):.3f}-{max(f):.3f} | {r['seconds']:.3f} | {ref_txt} |"
        )
    out += ["", f"## Leiden seconds at {SCALE_DOCS:,} Reuters stories (seed 1)", ""]
    out += ["| method | Leiden s | graph s (terms, weights, neighbours, default Leiden) |"]
    out += ["|---|---:|---:|"]
    out += [f"| {r['method']} | {r['seconds']:.2f} | {r['fit']:.2f} |" for r in report["scale"]]
    out += ["", report["conclusion"], ""]
    return "\n".join(out)


def conclusion(rows: list[dict[str, Any]], scale: list[dict[str, Any]]) -> str:
    """What the table says about adopting a consensus as the default."""
    base = {r["corpus"]: r for r in rows if r["method"] == "Leiden (default)"}
    parts = []
    for label, _run in methods()[1:]:
        mine = [r for r in rows if r["method"] == label]
        gains = [float(np.mean(r["f_by_seed"]) - np.mean(base[r["corpus"]]["f_by_seed"]))
                 for r in mine]  # fmt: skip
        sd = [float(np.std(r["f_by_seed"])) for r in mine]
        extra = next(s["seconds"] for s in scale if s["method"] == label) - scale[0]["seconds"]
        parts.append(
            f"{label}: mean class F {np.mean(gains):+.4f} over the corpora (from "
            f"{min(gains):+.4f} to {max(gains):+.4f}), mean sd over seeds {np.mean(sd):.4f} "
            f"against {np.mean([np.std(r['f_by_seed']) for r in base.values()]):.4f}, "
            f"{extra:+.2f} s at {SCALE_DOCS:,} stories"
        )
    return "Against the default Leiden step: " + "; ".join(parts) + "."


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=",".join(corpus_names()), help="comma-separated")
    args = parser.parse_args(argv)
    before = load_averages()
    rows: list[dict[str, Any]] = []
    for name in [c for c in args.corpora.split(",") if c]:
        rows += corpus_rows(name)
        means = [
            f"{r['method']} {np.mean(r['f_by_seed']):.4f}" for r in rows if r["corpus"] == name
        ]
        print(f"{name}: " + "; ".join(means), flush=True)
    scale = scale_rows()
    report = {
        "machine": machine(),
        "date": run_date(),
        "load_before": before,
        "seeds": SEEDS,
        "variants": VARIANTS,
        "rows": rows,
        "scale": scale,
        "textbook": textbook_by_seed(),
        "conclusion": conclusion(rows, scale),
        "load_after": load_averages(),
    }
    md = markdown(report)
    print(md)
    write_results(RESULTS / "consensus", report, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
