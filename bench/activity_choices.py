"""How the activity clustering's defaults were chosen: candidates, then leave-one-corpus-out.

Two tables, on every labelled corpus of :mod:`corpora.activity`:

1. **Candidates.** :class:`cluster.activity.ActivityClusterer` with its defaults, its
   neighbours found three ways: ``wminhash`` (weighted MinHash, 64 samples in 64 bands of
   one, the default), ``simhash`` (random hyperplanes, 128 bits in 16 bands of 8) and
   ``exact`` (every pair). For each: the recall of the exact k nearest neighbours, the
   pairs whose cosine was computed, the seconds of the neighbour step and the class F of
   the clusters.
2. **Leave-one-corpus-out.** A grid of k (``auto`` = round(2.5 ln n), 10, 16, 24),
   ``max_df`` (0.2, 0.5, 1.0) and the clusters' Leiden resolution (2, 1, 0.7, 0.5). For each
   corpus held out, the grid point with the best mean class F on the *other* corpora is
   chosen and scored on the held-out one; the defaults are the point best on all. A
   setting chosen this way never saw the corpus it is scored on.

Scores are class F-measure (``cluster.evaluate.score_clustering``); term counts are made
once per corpus (:class:`extract.terms.TermCounter` of each document's language).

Run: ``.venv/bin/python bench/activity_choices.py [--corpora a,b]`` (about 15 minutes on
2 cores; ``--smoke``: 60 documents of two corpora, exact neighbours only, a temporary
folder); writes ``bench/results/activity_choices.{json,md}``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, run_date, write_results  # noqa: E402
from bench.steps import CachedNeighbours  # noqa: E402
from cluster.activity import ActivityClusterer  # noqa: E402
from cluster.evaluate import score_clustering  # noqa: E402
from cluster.knn import exact_knn  # noqa: E402
from corpora.activity import corpus_names, load_activity_corpus  # noqa: E402

CANDIDATES: dict[str, dict[str, Any]] = {
    "wminhash": {"candidates": "wminhash"},
    "simhash": {"candidates": "simhash", "num_perm": 128, "rows": 8},
    "exact": {"candidates": "exact"},
}
KS: list[int | str] = ["auto", 10, 16, 24]
MAX_DF = [0.2, 0.5, 1.0]
RESOLUTIONS = [2.0, 1.0, 0.7, 0.5]
"""Resolution of the clusters (the coarsest level; finer levels only split them)."""


def f_class(labels: list[str], predicted: np.ndarray) -> float:
    return round(float(score_clustering(labels, predicted)["f_class"]), 4)


def candidates_table(
    name: str, counts: list[Any], labels: list[str], candidates: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    rows = []
    reference: np.ndarray | None = None
    for cname, params in candidates.items():
        t0 = time.perf_counter()
        model = ActivityClusterer(**params, n_jobs=2).fit(counts)
        wall = time.perf_counter() - t0
        k = model.graph_stats_["n_neighbors"]
        if reference is None:
            reference = exact_knn(model.matrix_, k)[0]
        found = model.graph_.neighbours
        hits = sum(
            len(set(a[a >= 0].tolist()) & set(b[b >= 0].tolist()))
            for a, b in zip(found, reference, strict=True)
        )
        stats = model.graph_stats_
        rows.append(
            {
                "corpus": name,
                "candidates": cname,
                "n": len(counts),
                "k": k,
                "recall": round(hits / max(int((reference >= 0).sum()), 1), 3),
                "pairs": int(stats["candidate_pairs"] + stats["refine_pairs"]),
                "neighbour_seconds": round(stats["seconds"]["neighbours"], 2),
                "seconds": round(wall, 2),
                "f_class": f_class(labels, model.labels_),
            }
        )
        print(rows[-1], flush=True)
    return rows


def caps_table(name: str, counts: list[Any], labels: list[str]) -> list[dict[str, Any]]:
    """The defaults with each document-frequency cap loosened or tightened."""
    rows = []
    for min_df, max_df in [(1, 0.5), (2, 0.5), (2, 0.2), (2, 1.0), (1, 1.0)]:
        model = ActivityClusterer(min_df=min_df, max_df=max_df, n_jobs=2).fit(counts)
        rows.append(
            {
                "corpus": name,
                "min_df": min_df,
                "max_df": max_df,
                "terms": len(model.vocabulary_),
                "dropped": model.weighting_.n_dropped_,
                "f_class": f_class(labels, model.labels_),
            }
        )
    print(name, "caps", [(r["min_df"], r["max_df"], r["f_class"]) for r in rows], flush=True)
    return rows


def grid(name: str, counts: list[Any], labels: list[str]) -> dict[str, float]:
    out = {}
    for k, max_df in itertools.product(KS, MAX_DF):
        # the clusterer with k neighbours (the graph found once), Leiden to the end at
        # each resolution, no reassignment
        neighbours = CachedNeighbours(ActivityClusterer(n_neighbors=k, n_jobs=2).default_step(
            "neighbours"))  # fmt: skip
        for res in RESOLUTIONS:
            model = ActivityClusterer(
                max_df=max_df,
                resolution=res,
                coarser=(),
                n_iterations=-1,
                neighbours=neighbours,
                reassignment="passthrough",
            )
            out[f"k={k} max_df={max_df} resolution={res}"] = f_class(
                labels, model.fit(counts).labels_)  # fmt: skip
    print(name, "grid done", flush=True)
    return out


def loco(scores: dict[str, dict[str, float]]) -> tuple[list[dict[str, Any]], str]:
    corpora = sorted(scores)
    points = sorted(scores[corpora[0]])
    mean = {p: float(np.mean([scores[c][p] for c in corpora])) for p in points}
    rows = []
    for held in corpora:
        others = [c for c in corpora if c != held]
        best = max(points, key=lambda p: (np.mean([scores[c][p] for c in others]), p))
        rows.append(
            {
                "held_out": held,
                "chosen_on_others": best,
                "f_class_held_out": scores[held][best],
                "best_possible": max(scores[held].values()),
            }
        )
    return rows, max(points, key=lambda p: (mean[p], p))


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Choosing the activity clustering's defaults (`bench/activity_choices.py`)",
        "",
        f"{report['when']}, 2 cores. Class F against each corpus's gold classes.",
        "",
        "## Candidates: weighted MinHash vs SimHash vs every pair",
        "",
        "| corpus | n | k | candidates | recall of exact k-NN | pairs compared | "
        "neighbour s | total s | class F |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in report["candidates"]:
        lines.append(
            f"| {r['corpus']} | {r['n']} | {r['k']} | {r['candidates']} | {r['recall']:.3f} "
            f"| {r['pairs']:,} | {r['neighbour_seconds']} | {r['seconds']} "
            f"| {r['f_class']:.3f} |"
        )
    if report.get("caps"):
        lines += [
            "",
            "## The document-frequency caps (defaults otherwise)",
            "",
            "`min_df` 1 keeps the terms of one document only (they link no pair but weigh "
            "in the norm); `max_df` 1.0 keeps the terms of every document (site furniture).",
            "",
            "| corpus | min_df | max_df | terms kept | dropped by min_df | dropped by max_df "
            "| class F |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['corpus']} | {r['min_df']} | {r['max_df']} | {r['terms']:,} "
            f"| {r['dropped']['min_df']:,} | {r['dropped']['max_df']:,} | {r['f_class']:.3f} |"
            for r in report["caps"]
        ]
    lines += [
        "",
        "## Leave one corpus out",
        "",
        f"Grid: k in {KS}, max_df in {MAX_DF}, resolution in {RESOLUTIONS}. Best on all "
        f"corpora: **{report['best_overall']}**.",
        "",
        "| held out | chosen on the others | its class F there | best possible there |",
        "|---|---|---:|---:|",
    ]
    for r in report["loco"]:
        lines.append(
            f"| {r['held_out']} | {r['chosen_on_others']} | {r['f_class_held_out']:.3f} "
            f"| {r['best_possible']:.3f} |"
        )
    return "\n".join(lines) + "\n"


SMOKE_LIMIT = 60
SMOKE_ARGV = ["--smoke"]
"""The arguments of the smoke test (tests/bench): tiny data, a temporary folder."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=",".join(corpus_names(pooled=False)))
    ap.add_argument("--out", default=str(RESULTS / "activity_choices"))
    ap.add_argument(
        "--smoke",
        action="store_true",
        help=f"{SMOKE_LIMIT} documents of two corpora, exact neighbours, a temp folder",
    )
    ap.add_argument(
        "--caps-only",
        action="store_true",
        help="only rerun the caps table and merge it into the saved results",
    )
    args = ap.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="choices-")) / "activity_choices" if args.smoke else Path(
        args.out)  # fmt: skip
    corpora = "websites,lenta" if args.smoke else args.corpora
    candidates = {"exact": CANDIDATES["exact"]} if args.smoke else CANDIDATES
    cand_rows: list[dict[str, Any]] = []
    caps_rows: list[dict[str, Any]] = []
    scores: dict[str, dict[str, float]] = {}
    saved = json.loads(out.with_suffix(".json").read_text("utf-8")) if args.caps_only else {}
    for name in corpora.split(","):
        corpus = load_activity_corpus(name, limit=SMOKE_LIMIT if args.smoke else None)
        counts = ActivityClusterer.term_counts(corpus.texts, corpus.languages)
        caps_rows += caps_table(name, counts, corpus.labels)
        if not args.caps_only:
            cand_rows += candidates_table(name, counts, corpus.labels, candidates)
            scores[name] = grid(name, counts, corpus.labels)
    if args.caps_only:
        saved["caps"] = caps_rows
        report = saved
    else:
        loco_rows, best = loco(scores)
        report = {
            "when": run_date(),
            "candidates": cand_rows,
            "caps": caps_rows,
            "grid": scores,
            "loco": loco_rows,
            "best_overall": best,
        }
    text = markdown(report)
    write_results(out, report, text, newline=True)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
