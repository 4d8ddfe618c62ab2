"""The grain of the activity clustering: which Leiden resolution, chosen without labels?

Issue 21, item 3. ``ActivityClusterer()`` takes its clusters from the level of resolution
1 (modularity) of its k-NN graph; the labelled corpora of ``../shared/data`` do not all
agree with that grain (BBC: 12 clusters for 5 topics). This benchmark builds each
corpus's graph once (the default estimator, from raw text), runs Leiden (RB quality) on
it at 25 resolutions from 4 down to 0.05 (3 seeds each), each partition finished as the
default finishes its own (one pass of centroid reassignment, :mod:`cluster.reassign`),
and compares label-free rules for choosing one of them:

- **max modularity**: the resolution whose partition has the largest modularity at
  resolution 1 (no parameter: the default's rule);
- **modularity within ε, coarsest**: the coarsest partition whose modularity is within
  a share ε of the largest (coarser partitions lose little modularity when the topics
  are real);
- **seed stability within ε**: among those, the partition whose three seeds agree most
  (mean pairwise ARI), ties to the coarser;
- **plateau within ε**: among those, the middle of the longest run of resolutions with
  the same number of clusters.

A rule with a parameter is measured leave-one-corpus-out: ε is the value of
:data:`EPSILONS` with the best mean class F on the *other* corpora, then applied to the
held-out one. The table also gives the oracle (the resolution with the best class F,
which needs the labels) and k-means told the true number of classes (scikit-learn, on the
anchor's tf-idf, as ``bench/activity.py``'s (d) row). A second table gives the levels every
activity clustering stores (``[activity]`` defaults): the finer one (resolution 2, splitting
the clusters), the clusters (resolution 1) and the coarser one (resolution 0.5, merging
whole clusters, :func:`cluster.nested_leiden.merged_levels`), with the class F an analyst
reaches by picking the best of the three.

Run: ``.venv/bin/python bench/grain.py [--corpora bbc,lenta]`` (``--smoke``: 60 documents
of two corpora, a temporary folder); writes
``bench/results/grain.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, load_averages, machine, run_date, write_results  # noqa: E402
from corpora.activity import corpus_names, load_activity_corpus  # noqa: E402

RESOLUTIONS = tuple(round(float(g), 4) for g in np.geomspace(4.0, 0.05, 25))
SEEDS = (1, 2, 3)
EPSILONS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1)

Row = dict[str, Any]
Rule = Callable[[list[Row], float], Row]


def levels(name: str, limit: int | None = None) -> dict[str, Any]:
    """The corpus's graph (the default estimator's) and its partition at every resolution."""
    from sklearn.metrics import adjusted_rand_score

    from bench.activity import run_kmeans
    from bench.steps import CachedNeighbours
    from cluster import ActivityClusterer, score_clustering
    from cluster.nested_leiden import modularity

    corpus = load_activity_corpus(name, limit=limit)
    n = len(corpus.texts)
    t0 = time.perf_counter()
    counts = ActivityClusterer.count_matrix(corpus.texts, corpus.languages)
    model = ActivityClusterer().fit(counts)
    fit_seconds = time.perf_counter() - t0
    i, j, w = model.steps_["neighbours"].edges_
    weights = w.astype(np.float64)
    # the default with its community step at each resolution (Leiden to the end), its
    # reassignment as it is: the partitions as the default finishes its own
    neighbours = CachedNeighbours(model.default_step("neighbours"))
    rows = []
    for gamma in RESOLUTIONS:
        labels = [
            ActivityClusterer(neighbours=neighbours, resolution=gamma, coarser=(), seed=s,
                              n_iterations=-1).fit(counts).labels_
            for s in SEEDS
        ]  # fmt: skip
        rows.append(
            {
                "resolution": gamma,
                "clusters": int(labels[0].max()) + 1 if n else 0,
                "f_class": float(score_clustering(corpus.labels, labels[0])["f_class"]),
                "modularity": float(modularity(n, i, j, weights, labels[0], 1.0)),
                "stability": float(
                    np.mean(
                        [adjusted_rand_score(a, b) for a, b in itertools.combinations(labels, 2)]
                    )
                ),
            }
        )
    classes = len(set(corpus.labels))
    kmeans, _ = run_kmeans(corpus.texts, corpus.languages, classes)
    return {
        "corpus": name,
        "documents": n,
        "classes": classes,
        "fit_seconds": round(fit_seconds, 2),
        "default": {
            "clusters": int(model.labels_.max()) + 1 if n else 0,
            "f_class": float(score_clustering(corpus.labels, model.labels_)["f_class"]),
        },
        "kmeans_f_class": float(score_clustering(corpus.labels, kmeans)["f_class"]),
        "stored": [
            {
                "role": lvl.role,
                "resolution": lvl.resolution,
                "clusters": int(lvl.n_clusters),
                "f_class": float(score_clustering(corpus.labels, lvl.labels)["f_class"]),
            }
            for lvl in model.levels_
        ],
        "levels": rows,
    }


def _near_best(rows: list[Row], eps: float) -> list[Row]:
    best = max(r["modularity"] for r in rows)
    return [r for r in rows if r["modularity"] >= (1 - eps) * best]


def max_modularity(rows: list[Row], eps: float = 0.0) -> Row:
    return max(rows, key=lambda r: (r["modularity"], r["resolution"]))


def coarsest(rows: list[Row], eps: float) -> Row:
    return min(_near_best(rows, eps), key=lambda r: r["resolution"])


def most_stable(rows: list[Row], eps: float) -> Row:
    near = [r for r in _near_best(rows, eps) if r["clusters"] > 1] or rows
    return max(near, key=lambda r: (round(r["stability"], 2), -r["resolution"]))


def plateau(rows: list[Row], eps: float) -> Row:
    runs: dict[int, list[Row]] = {}
    for r in _near_best(rows, eps):
        runs.setdefault(r["clusters"], []).append(r)
    longest = max(runs.values(), key=lambda run: (len(run), -run[0]["clusters"]))
    return longest[len(longest) // 2]


RULES: dict[str, tuple[Rule, bool]] = {
    "max modularity": (max_modularity, False),
    "modularity within ε, coarsest": (coarsest, True),
    "seed stability within ε": (most_stable, True),
    "plateau within ε": (plateau, True),
}


def leave_one_out(corpora: list[dict[str, Any]], rule: Rule, tuned: bool) -> dict[str, Row]:
    """Each corpus's choice, ε taken from the other corpora (best mean class F there)."""
    chosen = {}
    for held in corpora:
        others = [c for c in corpora if c is not held] or [held]
        eps = 0.0
        if tuned:
            eps = max(
                EPSILONS,
                key=lambda e: (np.mean([rule(c["levels"], e)["f_class"] for c in others]), -e),
            )
        chosen[held["corpus"]] = {**rule(held["levels"], eps), "eps": eps}
    return chosen


def markdown(report: dict[str, Any]) -> str:
    corpora = report["corpora"]
    lines = [
        "# The grain of the activity clustering, chosen without labels (`bench/grain.py`)",
        "",
        f"{report['machine']}; {report['date']}. Each corpus's k-NN graph is the default "
        "`ActivityClusterer()`'s; Leiden (RB) at 25 resolutions from 4 to 0.05, 3 seeds "
        "each. A rule with a parameter ε is measured leave-one-corpus-out (ε chosen on the "
        "other corpora). Oracle: the resolution with the best class F (needs the labels). "
        "k-means: told the true number of classes.",
        "",
        "| corpus | classes | default: clusters, F | "
        + " | ".join(f"{name}: γ, clusters, F" for name in RULES)
        + " | oracle: γ, clusters, F | k-means (true k) F |",
        "|---|---:|---:|" + "---:|" * len(RULES) + "---:|---:|",
    ]
    for c in corpora:
        oracle = max(c["levels"], key=lambda r: r["f_class"])
        cells = [
            f"{ch['resolution']:g}, {ch['clusters']}, {ch['f_class']:.3f}"
            + (f" (ε {ch['eps']:g})" if RULES[name][1] else "")
            for name in RULES
            for ch in [report["chosen"][name][c["corpus"]]]
        ]
        lines.append(
            f"| {c['corpus']} | {c['classes']} | {c['default']['clusters']}, "
            f"{c['default']['f_class']:.3f} | "
            + " | ".join(cells)
            + f" | {oracle['resolution']:g}, {oracle['clusters']}, {oracle['f_class']:.3f} | "
            f"{c['kmeans_f_class']:.3f} |"
        )
    lines += [
        "",
        "| rule | mean class F | corpora at or above k-means with the true k |",
        "|---|---:|---:|",
    ]
    for name, summary in report["summary"].items():
        lines.append(
            f"| {name} | {summary['mean_f']:.3f} | {summary['at_kmeans']} of {len(corpora)} |"
        )
    lines += ["", report["conclusion"], ""]
    if all("stored" in c for c in corpora):
        lines += stored_table(corpora)
    return "\n".join(lines)


def stored_table(corpora: list[dict[str, Any]]) -> list[str]:
    """The levels each activity clustering stores, with their class F, and their means."""
    roles = [(lvl["role"], lvl["resolution"]) for lvl in corpora[0]["stored"]]
    lines = [
        "## The levels an activity clustering stores",
        "",
        "The default `ActivityClusterer()` stores, beside its clusters, a finer level that "
        "splits each of them and a coarser one that merges whole clusters (Leiden on the "
        "graph of the clusters). The analyst picks either on the University page; *best "
        "stored* is the best of the three for the corpus (it needs the labels to choose).",
        "",
        "| corpus | classes | "
        + " | ".join(f"{role} (γ {gamma:g}): clusters, F" for role, gamma in roles)
        + " | best stored F | oracle F (25 resolutions) | k-means (true k) F |",
        "|---|---:|" + "---:|" * len(roles) + "---:|---:|---:|",
    ]
    for c in corpora:
        cells = [f"{lvl['clusters']}, {lvl['f_class']:.3f}" for lvl in c["stored"]]
        best = max(lvl["f_class"] for lvl in c["stored"])
        oracle = max(r["f_class"] for r in c["levels"])
        lines.append(
            f"| {c['corpus']} | {c['classes']} | " + " | ".join(cells) + f" | {best:.3f} | "
            f"{oracle:.3f} | {c['kmeans_f_class']:.3f} |"
        )
    means = [np.mean([c["stored"][k]["f_class"] for c in corpora]) for k in range(len(roles))]
    best_mean = float(np.mean([max(lvl["f_class"] for lvl in c["stored"]) for c in corpora]))
    at_kmeans = sum(
        max(lvl["f_class"] for lvl in c["stored"]) >= c["kmeans_f_class"] - 0.005 for c in corpora
    )
    lines += [
        "| **mean** | | "
        + " | ".join(f"{m:.3f}" for m in means)
        + f" | {best_mean:.3f} | "
        + f"{float(np.mean([max(r['f_class'] for r in c['levels']) for c in corpora])):.3f} | "
        + f"{float(np.mean([c['kmeans_f_class'] for c in corpora])):.3f} |",
        "",
        f"The best stored level reaches k-means told the true k on {at_kmeans} of "
        f"{len(corpora)} corpora.",
        "",
    ]
    return lines


def summarise(corpora: list[dict[str, Any]], chosen: dict[str, dict[str, Row]]) -> dict[str, Any]:
    kmeans = {c["corpus"]: c["kmeans_f_class"] for c in corpora}
    out = {}
    picks: dict[str, dict[str, float]] = {
        "default (resolution 1)": {c["corpus"]: c["default"]["f_class"] for c in corpora},
        **{name: {k: v["f_class"] for k, v in rows.items()} for name, rows in chosen.items()},
        "oracle (labels)": {c["corpus"]: max(r["f_class"] for r in c["levels"]) for c in corpora},
    }
    for name, fs in picks.items():
        out[name] = {
            "mean_f": float(np.mean(list(fs.values()))),
            "at_kmeans": sum(fs[c] >= kmeans[c] - 0.005 for c in fs),
        }
    return out


SMOKE_LIMIT = 60
SMOKE_ARGV = ["--smoke"]
"""The arguments of the smoke test (tests/bench): tiny data, a temporary folder."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora", default=",".join(corpus_names(pooled=False)), help="comma-separated"
    )
    smoke = f"{SMOKE_LIMIT} documents of two corpora, a temporary folder"
    parser.add_argument("--smoke", action="store_true", help=smoke)
    args = parser.parse_args(argv)
    before = load_averages()
    corpora = []
    names = ["websites", "lenta"] if args.smoke else [c for c in args.corpora.split(",") if c]
    for name in names:
        corpora.append(levels(name, SMOKE_LIMIT if args.smoke else None))
        print(f"{name}: {len(corpora[-1]['levels'])} levels", flush=True)
    chosen = {name: leave_one_out(corpora, rule, tuned) for name, (rule, tuned) in RULES.items()}
    summary = summarise(corpora, chosen)
    default = summary["default (resolution 1)"]["mean_f"]
    better = [n for n in RULES if summary[n]["mean_f"] > default + 0.005]
    best = max(RULES, key=lambda n: summary[n]["mean_f"])
    verdict = (
        f"the rules {', '.join(better)} beat the default's grain (mean class F {default:.3f})"
        if better
        else f"no rule beats the default's grain (mean class F {default:.3f}) by more than "
        f"0.005 (the best, {best}: {summary[best]['mean_f']:.3f})"
    )
    conclusion = (
        f"Leave-one-corpus-out, {verdict}; the oracle reaches "
        f"{summary['oracle (labels)']['mean_f']:.3f}. Load averages (1, 5, 15 min) "
        f"{before} before, {load_averages()} after."
    )
    report = {
        "machine": machine(),
        "date": run_date(),
        "resolutions": RESOLUTIONS,
        "epsilons": EPSILONS,
        "corpora": corpora,
        "chosen": chosen,
        "summary": summary,
        "conclusion": conclusion,
    }
    md = markdown(report)
    print(md)
    out = Path(tempfile.mkdtemp(prefix="grain-")) if args.smoke else RESULTS
    write_results(out / "grain", report, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
