"""The k-nearest-neighbour graph: every way of building it against exact brute force.

Issue 21, item 2: the k-NN graph of the activity clustering at >= 0.95 recall of the exact
``k`` nearest neighbours in less time than exact brute-force cosine on the same matrix, at
every size from 1,000 to 1,000,000 documents. The matrix is the clusterer's own:
:func:`extract.terms.count_terms` term counts, then the tf-idf of
:class:`cluster.weighting.TfidfWeighting` with the ``[activity]`` caps (``min_df`` 2,
``max_df`` 1.0), rows L2-normalised, built once per corpus or size (in batches of 100,000
texts at the large sizes, the same weights); ``k`` is the clusterer's ``"auto"``
(:func:`cluster.activity.auto_neighbours`, ``round(2.5 ln n)``).

Methods (``--methods``, any of):

* ``brute`` — scikit-learn ``NearestNeighbors(metric="cosine", algorithm="brute")``
  (``fit`` then ``kneighbors`` of every row): the bar to beat. Above 20,000 documents,
  ``kneighbors`` of a random sample of 1,000 rows, its time multiplied by ``n / 1000``
  (marked *extrapolated*);
* ``exact`` — :func:`cluster.knn.exact_knn`, the project's exact blocked product
  (scikit-learn's compiled sparse-to-dense product, ``argpartition``), 2 threads; above
  100,000 documents timed on the 1,000 sample rows and extrapolated like ``brute``;
* ``topk`` — the exact top-k sparse product in C++ (``sparse_dot_topn.sp_matmul_topn``,
  not a dependency of the project: ``pip install sparse_dot_topn``), 2 threads; above
  100,000 documents timed on the sample rows and extrapolated;
* ``nndescent`` — :func:`cluster.knn.nndescent_knn`, PyNNDescent on the sparse matrix,
  ``1.5 k`` neighbours while building, 8 trees, seed 1, 2 threads; the time of its first
  call in the process (numba compiling) is shown apart;
* ``lsh`` — the earlier default: weighted MinHash (64 samples, bands of 1), capped
  buckets, one round of local join (``ActivityClusterer(candidates="wminhash")``);
* ``hnswlib`` — hnswlib (``M`` 16, ``ef_construction`` 100, ``ef`` 4k) on a 256-column
  ``TruncatedSVD`` of the matrix (hnswlib and faiss take dense vectors), its ``4 k`` best
  re-ranked by the exact cosine; to 20,000 documents;
* ``faiss`` — faiss ``IndexFlatIP`` (exact search) on the same SVD, ``4 k`` re-ranked:
  the best any ANN on the reduced matrix can do; to 20,000 documents. hnswlib and
  faiss-cpu are not dependencies of the project (``pip install hnswlib faiss-cpu``);
  without them these two rows say so.

Recall@k is the share of the exact ``k`` nearest neighbours found, counted with ties: a
returned neighbour counts when its exact cosine is at least the ``k``-th best exact
cosine of its row (less 1e-6), so that among equally similar documents any will do.
Up to 20,000 documents every row is checked against the exact graph (``topk``); above,
the 1,000 sample rows against their brute-force neighbours.

Sizes: 1,000, 5,000 and 20,000 are the first Reuters-21578 stories; 100,000, 300,000 and
1,000,000 the 21,578 stories and perturbed copies of them (``bench/activity.py``'s
:func:`reuters_scale`: each copy drops every word with probability 0.1, seeded). And
every real labelled corpus of :mod:`corpora.activity` at its own size (``testweb`` with
``--corpora``; it builds the local test web). A method whose time at a size, estimated
from its previous size (``n²`` for the exact ones, ``n^1.2`` for the others), is over
20 minutes is skipped and the table says so.

Run: ``.venv/bin/python bench/knn.py`` (about an hour on 2 cores; most of it NN-descent
and LSH at 300,000 and 1,000,000 documents); ``--sizes
1000,5000``, ``--corpora bbc,lenta`` (``--corpora ''``: none), ``--methods
brute,topk``, ``--quick`` (1k and 5k, the small corpora, into a temporary folder),
``--smoke`` (300 stories, three methods, a temporary folder),
``--render``, ``--append`` (add to the saved results: a row measured again keeps the
methods this run leaves out; the report lists the runs), ``--full-exact-to N`` (time
``exact`` and ``topk`` on every row up to N documents instead of on the sample rows:
300,000 takes about 11 minutes for ``exact``). Writes
``bench/results/knn.json`` (after every size, so a long run that is stopped keeps what
it measured) and ``knn.md``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    RESULTS,
    busy_seconds,
    load_averages,
    machine,
    peak_rss_mb,
    run_date,
    write_results,
)

SIZES = (1_000, 5_000, 20_000, 100_000, 300_000, 1_000_000)
CORPORA = ("reuters", "bbc", "webkb", "lenta", "tgcontest-ru", "tgcontest-en",
           "tgcontest-mixed", "websites")  # fmt: skip
METHODS = ("brute", "exact", "topk", "nndescent", "lsh", "hnswlib", "faiss")
LABELS = {
    "brute": "brute force (scikit-learn)",
    "exact": "exact_knn (blocked, threads)",
    "topk": "exact top-k C++ (sparse_dot_topn)",
    "nndescent": "NN-descent (PyNNDescent)",
    "lsh": "LSH + local join",
    "hnswlib": "hnswlib on SVD-256 + re-rank",
    "faiss": "faiss exact on SVD-256 + re-rank",
}
FULL_MAX = 20_000
"""Above this, brute force and recall use a sample of rows."""
SAMPLE = 1_000
SAMPLED_EXACT = 100_000
"""Above this, ``exact`` and ``topk`` are timed on the sample rows and extrapolated."""
MAX_SIZE = {"hnswlib": 20_000, "faiss": 20_000}
EXPONENT = {"brute": 2.0, "exact": 2.0, "topk": 2.0}
LIMIT_SECONDS = 1_200.0
THREADS = 2
SVD_DIMS = 256
RERANK = 4
BATCH = 100_000


# ---------------------------------------------------------------------------- matrices


def tfidf(texts: list[str], languages: list[str | None]) -> sp.csr_matrix:
    """The clusterer's tf-idf of the texts: its default weighting step
    (``ActivityClusterer().named_steps["weighting"]``) on the term counts, counted and
    appended to the count matrix in batches of 100,000 texts (the term count
    dictionaries of at most 100,000 texts alive at a time)."""
    from cluster.activity import ActivityClusterer
    from cluster.weighting import CountsBuilder
    from extract.terms import count_terms

    builder = CountsBuilder()
    for s in range(0, len(texts), BATCH):
        builder.add(count_terms(texts[s : s + BATCH], languages[s : s + BATCH]))
    weighting = ActivityClusterer().named_steps["weighting"]
    X: sp.csr_matrix = weighting.fit_transform(builder.build())
    return X


def size_data(n: int) -> tuple[list[str], list[str | None], str]:
    from bench.activity import reuters_scale

    texts, _ = reuters_scale(n)
    note = "first Reuters stories" if n <= 21_578 else "Reuters + perturbed copies"
    return texts, ["en"] * len(texts), note


def corpus_data(name: str) -> tuple[list[str], list[str | None], str]:
    from corpora.activity import load_activity_corpus

    c = load_activity_corpus(name)
    return c.texts, c.languages, c.note


# ---------------------------------------------------------------------------- methods


Result = tuple[np.ndarray, dict[str, Any]]


def run_exact(X: sp.csr_matrix, k: int, rows: np.ndarray | None = None) -> Result:
    from cluster.knn import exact_knn

    return exact_knn(X, k, n_jobs=THREADS, rows=rows)[0], {}


def run_topk(X: sp.csr_matrix, k: int, rows: np.ndarray | None = None) -> Result:
    """``sp_matmul_topn(A, Xᵀ, top_n=k + 1)`` (``A``: the rows), the row itself left out."""
    from sparse_dot_topn import sp_matmul_topn

    rows = np.arange(X.shape[0]) if rows is None else rows
    C = sp.csr_matrix(sp_matmul_topn(X[rows], X.T.tocsr(), top_n=k + 1, n_threads=THREADS))
    counts = np.diff(C.indptr)
    r = np.repeat(np.arange(rows.shape[0]), counts)
    pos = np.arange(C.indices.shape[0]) - np.repeat(C.indptr[:-1], counts)
    idx = np.full((rows.shape[0], k + 1), -1, dtype=np.int64)
    val = np.full((rows.shape[0], k + 1), -np.inf, dtype=np.float32)
    idx[r, pos], val[r, pos] = C.indices, C.data
    val[idx == rows[:, None]] = -np.inf
    order = np.argsort(-val, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(idx, order, 1), {}


def run_nndescent(X: sp.csr_matrix, k: int) -> Result:
    from cluster.knn import nndescent_knn

    return nndescent_knn(X, k, seed=1, n_jobs=THREADS)[0], {}


def run_lsh(X: sp.csr_matrix, k: int) -> Result:
    """The clusterer's neighbour step with ``candidates="wminhash"``."""
    from cluster.activity import ActivityClusterer

    step = ActivityClusterer(candidates="wminhash", n_jobs=THREADS).named_steps["neighbours"]
    g = step.set_params(n_neighbors=k).fit(X).graph_
    return g.neighbours, {"pairs": g.stats["candidate_pairs"] + g.stats["refine_pairs"]}


def _svd(X: sp.csr_matrix) -> np.ndarray:
    from sklearn.decomposition import TruncatedSVD

    dims = min(SVD_DIMS, X.shape[1] - 1)
    Z = TruncatedSVD(dims, random_state=1).fit_transform(X).astype(np.float32)
    Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)
    return Z


def _rerank(X: sp.csr_matrix, cand: np.ndarray, k: int) -> np.ndarray:
    from cluster.knn import pair_cosine

    n, c = cand.shape
    rows = np.repeat(np.arange(n), c)
    cols = cand.ravel()
    ok = (cols >= 0) & (cols != rows)
    s = np.full(rows.shape[0], -1.0, dtype=np.float32)
    s[ok] = pair_cosine(X, rows[ok], cols[ok])
    order = np.argsort(-s.reshape(n, c), axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cand, order, 1)


def run_hnswlib(X: sp.csr_matrix, k: int) -> Result:
    import hnswlib

    Z = _svd(X)
    index = hnswlib.Index(space="ip", dim=Z.shape[1])
    index.init_index(max_elements=Z.shape[0], M=16, ef_construction=100, random_seed=1)
    index.set_num_threads(THREADS)
    index.add_items(Z)
    c = min(RERANK * k, Z.shape[0])
    index.set_ef(max(c, 50))
    cand, _ = index.knn_query(Z, k=c)
    return _rerank(X, cand.astype(np.int64), k), {}


def run_faiss(X: sp.csr_matrix, k: int) -> Result:
    import faiss

    faiss.omp_set_num_threads(THREADS)
    Z = _svd(X)
    index = faiss.IndexFlatIP(Z.shape[1])
    index.add(Z)
    c = min(RERANK * k, Z.shape[0])
    _, cand = index.search(Z, c)
    return _rerank(X, cand.astype(np.int64), k), {}


RUNS: dict[str, Callable[..., Result]] = {
    "exact": run_exact,
    "topk": run_topk,
    "nndescent": run_nndescent,
    "lsh": run_lsh,
    "hnswlib": run_hnswlib,
    "faiss": run_faiss,
}


# ---------------------------------------------------------------------------- exact + recall


def brute(X: sp.csr_matrix, k: int, queries: np.ndarray | None) -> np.ndarray:
    """Brute-force neighbours (the row itself among them) of every row or of ``queries``."""
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=min(k + 1, X.shape[0]), metric="cosine", algorithm="brute")
    nn.fit(X)
    return nn.kneighbors(X if queries is None else X[queries])[1]


def timed(run: Callable[[], Any]) -> tuple[Any, Any, float]:
    """``run()``'s two results and its seconds: the best of 3 runs when one takes < 1 s."""
    t = time.perf_counter()
    a, b = run()
    best = time.perf_counter() - t
    for _ in range(2 if best < 1.0 else 0):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return a, b, best


def kth_similarity(X: sp.csr_matrix, rows: np.ndarray, cand: np.ndarray, k: int) -> np.ndarray:
    """Per row: the k-th best exact cosine among its exact candidates (self left out),
    and how many of them are positive."""
    from cluster.knn import pair_cosine

    n, c = cand.shape
    ii, jj = np.repeat(rows, c), cand.ravel()
    ok = (jj >= 0) & (jj != ii)
    s = np.zeros(ii.shape[0], dtype=np.float32)
    s[ok] = pair_cosine(X, ii[ok], jj[ok])
    s = -np.sort(-s.reshape(n, c), axis=1)[:, :k]
    positive = (s > 0).sum(axis=1)
    kth = np.where(positive > 0, s[np.arange(n), np.maximum(positive - 1, 0)], np.inf)
    return np.stack([kth, positive])


def recall(X: sp.csr_matrix, rows: np.ndarray, found: np.ndarray, ref: np.ndarray, k: int) -> float:
    """Tie-aware recall@k of ``found`` (rows ``rows`` of a method's table)."""
    from cluster.knn import pair_cosine

    kth, positive = ref
    found = found[:, :k]
    n, c = found.shape
    ii, jj = np.repeat(rows, c), found.ravel()
    ok = (jj >= 0) & (jj != ii)
    s = np.full(ii.shape[0], -np.inf, dtype=np.float32)
    s[ok] = pair_cosine(X, ii[ok], jj[ok])
    hits = (s.reshape(n, c) >= kth[:, None] - 1e-6).sum(axis=1)
    total = positive.sum()
    return float(np.minimum(hits, positive).sum() / total) if total else 1.0


# ---------------------------------------------------------------------------- one matrix


def measure(
    label: str, texts: list[str], languages: list[str | None], methods: list[str], note: str,
    previous: dict[str, tuple[int, float]], sampled_exact: int = SAMPLED_EXACT,
) -> dict[str, Any]:  # fmt: skip
    """Every method on the tf-idf of the texts; ``previous`` holds each method's last
    (size, seconds) for the skip estimate, updated; ``exact`` and ``topk`` are timed on
    the sample rows above ``sampled_exact`` documents."""
    from cluster.activity import EXACT_WORK, auto_neighbours, exact_work
    from cluster.knn import exact_knn

    t0 = time.perf_counter()
    X = tfidf(texts, languages)
    build = time.perf_counter() - t0
    n = X.shape[0]
    n_active = int((np.diff(X.indptr) > 0).sum())
    k = min(auto_neighbours(n_active), n_active - 1)
    work = exact_work(X)
    row: dict[str, Any] = {
        "label": label, "note": note, "documents": n, "terms": X.shape[1], "nnz": int(X.nnz),
        "k": k, "exact_work": work, "matrix_seconds": round(build, 2),
        "auto_picks": "exact" if work <= EXACT_WORK else "nndescent",
        "load": [load_averages()[0]], "methods": {},
    }  # fmt: skip
    print(f"{label}: {n:,} docs, {X.shape[1]:,} terms, {X.nnz:,} nnz, k={k}, "
          f"matrix {build:.1f} s", flush=True)  # fmt: skip
    sampled = n > FULL_MAX
    rng = np.random.default_rng(1)
    queries = np.sort(rng.choice(n, SAMPLE, replace=False)) if sampled else np.arange(n)
    # the exact neighbours and brute force's time
    if "brute" in methods or sampled:
        idx, _, secs = timed(lambda: (brute(X, k, queries if sampled else None), {}))
        est = secs * n / len(queries)
        ref = kth_similarity(X, queries, idx, k)
        row["methods"]["brute"] = {
            "seconds": round(est, 3),
            "recall": 1.0,
            "extrapolated": sampled,
            "sample_seconds": round(secs, 3),
        }
        previous["brute"] = (n, est)
        print(f"  brute: {est:.2f} s{' (extrapolated)' if sampled else ''}", flush=True)
    if not sampled:
        ref = kth_similarity(X, queries, exact_knn(X, k, n_jobs=THREADS)[0], k)
    busy0, cpu0, wall0 = busy_seconds(), time.process_time(), time.perf_counter()
    for m in [m for m in methods if m != "brute"]:
        skip = None
        if n > MAX_SIZE.get(m, n):
            skip = f"not run above {MAX_SIZE[m]:,} documents"
        elif m in previous:
            n0, s0 = previous[m]
            est = s0 * (n / n0) ** EXPONENT.get(m, 1.2)
            on_sample = m in ("exact", "topk") and n > sampled_exact
            if est > LIMIT_SECONDS and not on_sample and m != row["auto_picks"]:
                skip = f"estimated {est:,.0f} s from {n0:,} documents (> 20 min)"
        if skip:
            row["methods"][m] = {"skipped": skip}
            print(f"  {m}: skipped, {skip}", flush=True)
            continue
        module = {"topk": "sparse_dot_topn"}.get(m, m)
        if m in ("topk", "hnswlib", "faiss") and importlib.util.find_spec(module) is None:
            row["methods"][m] = {"skipped": f"{module} not installed"}
            continue
        extra: dict[str, Any] = {}
        if m == "nndescent" and "nndescent_compile" not in previous:
            from cluster.knn import nndescent_knn

            t = time.perf_counter()
            nndescent_knn(X[:2000], 10, n_jobs=THREADS)
            previous["nndescent_compile"] = (0, time.perf_counter() - t)
            extra["first_call_seconds"] = round(time.perf_counter() - t, 2)
        if m in ("exact", "topk") and n > sampled_exact:
            t = time.perf_counter()
            table, _ = RUNS[m](X, k, queries)
            secs = (time.perf_counter() - t) * n / len(queries)
            r = recall(X, queries, table, ref, k)
            row["methods"][m] = {"seconds": round(secs, 3), "recall": round(r, 4),
                                 "extrapolated": True}  # fmt: skip
            previous[m] = (n, secs)
            print(f"  {m}: {secs:.2f} s (extrapolated), recall {r:.4f}", flush=True)
            continue
        table, info, secs = timed(functools.partial(RUNS[m], X, k))
        previous[m] = (n, secs)
        r = recall(X, queries, table[queries], ref, k)
        row["methods"][m] = {"seconds": round(secs, 3), "recall": round(r, 4), **info, **extra}
        print(f"  {m}: {secs:.2f} s, recall {r:.4f}", flush=True)
    wall = time.perf_counter() - wall0
    row["others_cores"] = round(
        max(0.0, (busy_seconds() - busy0 - (time.process_time() - cpu0)) / max(wall, 1e-9)), 2
    )
    row["load"].append(load_averages()[0])
    row["peak_rss_mb"] = round(peak_rss_mb())
    return row


# ---------------------------------------------------------------------------- report


def _cell(r: dict[str, Any], m: str) -> str:
    c = r["methods"].get(m)
    if c is None:
        return "—"
    if "skipped" in c:
        return f"skipped: {c['skipped']}"
    s = f"{c['seconds']:.3f} s" if c["seconds"] < 1 else f"{c['seconds']:.2f} s"
    if c.get("extrapolated"):
        s += " (extrap.)"
    return f"{s}, {c['recall']:.3f}"


def _verdict(r: dict[str, Any], m: str) -> bool | None:
    c, b = r["methods"].get(m), r["methods"].get("brute")
    if not c or not b or "skipped" in c or m == "brute":
        return None
    return c["recall"] >= 0.95 and c["seconds"] < b["seconds"]


def _table(rows: list[dict[str, Any]], methods: list[str], lead: str) -> list[str]:
    out = [
        f"| {lead} | docs | k | Σdf²+n² | auto picks | "
        + " | ".join(LABELS[m] for m in methods)
        + " | others' cores |",
        "|---|---:|---:|---:|---|" + "---|" * len(methods) + "---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['label']} | {r['documents']:,} | {r['k']} | {r['exact_work']:.1e} "
            f"| {LABELS[r['auto_picks']]} | "
            + " | ".join(_cell(r, m) for m in methods)
            + f" | {r.get('others_cores', 0):.2f} |"
        )
    return out


def render(res: dict[str, Any]) -> str:
    for r in res["sizes"] + res["corpora"]:
        r["auto_picks"] = "exact" if r["exact_work"] <= res["exact_work_limit"] else "nndescent"
    methods = [m for m in METHODS if m in res["methods"]]
    sizes, corpora = res["sizes"], res["corpora"]
    out = [
        "# The k-NN graph against brute force (`bench/knn.py`, issue 21 item 2)",
        "",
        *[
            f"Run {i + 1}: {run['date']}, load averages {run.get('load_start')} before, "
            f"{run.get('load_end', '(stopped)')} after"
            + (
                f"; sizes {run['sizes']}, methods {', '.join(run['methods'])} (`--append`"
                + (
                    f", `--full-exact-to {run['full_exact_to']}`: exact and top-k timed on "
                    f"every row to {run['full_exact_to']:,} documents)"
                    if run.get("full_exact_to", SAMPLED_EXACT) != SAMPLED_EXACT
                    else ")"
                )
                if "sizes" in run
                else "; everything else"
            )
            + "."
            for i, run in enumerate(res.get("runs", []))
        ],
        *([""] if res.get("runs") else []),
        *[f"Note: {note}" for note in res.get("notes", [])],
        *([""] if res.get("notes") else []),
        f"{res['machine']}; {res['date']}; load averages (1, 5, 15 min) {res['load_start']} "
        f"before, {res.get('load_end', '(see the runs above)')} after. The 2 cores are shared with "
        "other work: *others' cores* is the number of cores other processes kept busy "
        "while a row's methods ran (from /proc/stat). Threads: 2 for every method that has "
        "them (scikit-learn's brute force uses one).",
        "",
        "Each cell: seconds (the best of 3 runs when one takes under a second), recall@k "
        "of the exact k nearest neighbours (tie-aware: a "
        "neighbour counts when its cosine is at least the k-th best exact one). "
        "*(extrap.)*: timed on 1,000 random rows and multiplied by n / 1,000 (brute force "
        "above 20,000 documents, the other two exact ones above 100,000 or a run's "
        "`--full-exact-to`); recall above 20,000 "
        "documents is measured on those 1,000 rows against their brute-force neighbours. "
        "A method is skipped where its time estimated from the previous size is over 20 "
        "minutes, or above 20,000 documents for the two methods on an SVD (their recall is "
        "far below 0.95 at every size to 20,000). *auto picks*: what "
        '`ActivityClusterer(candidates="auto")` runs (`exact_knn` while Σdf² + n² <= '
        f"{res['exact_work_limit']:.0e}, NN-descent above).",
        "",
    ]
    if sizes:
        out += ["## Sizes (Reuters-21578; perturbed copies above 21,578)", ""]
        out += _table(sizes, methods, "size")
        out += [""]
    if corpora:
        out += ["## Real corpora (each at its own size)", ""]
        out += _table(corpora, methods, "corpus")
        out += [""]
    compile_s = [c["first_call_seconds"] for r in sizes + corpora
                 for c in r["methods"].values() if "first_call_seconds" in c]  # fmt: skip
    if compile_s:
        out += [f"NN-descent's first call in the process (numba compiling PyNNDescent), not in "
                f"the times above: {compile_s[0]:.1f} s.", ""]  # fmt: skip
    out += ["## Goal: recall >= 0.95 in less time than brute force", ""]
    for r in sizes + corpora:
        ok = [LABELS[m] for m in methods if _verdict(r, m)]
        chosen = r["auto_picks"]
        v = _verdict(r, chosen)
        mark = "**met**" if v else ("not measured" if v is None else "**NOT met**")
        out.append(f"- {r['label']} ({r['documents']:,}): auto's choice ({LABELS[chosen]}) "
                   f"{mark}; every method that meets it: {', '.join(ok) or 'none'}")  # fmt: skip
    out += ["", "Matrix: " + "; ".join(
        f"{r['label']} {r['terms']:,} terms, {r['nnz']:,} non-zeros, built in "
        f"{r['matrix_seconds']:.1f} s" for r in sizes + corpora) + "."]  # fmt: skip
    return "\n".join(out) + "\n"


SMOKE_ARGV = ["--smoke"]
"""The arguments of the smoke test (tests/bench): tiny data, a temporary folder."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--quick", action="store_true", help="1k and 5k, small corpora, temp folder")
    ap.add_argument("--smoke", action="store_true",
                    help="300 stories, brute, exact and lsh, a temporary folder")  # fmt: skip
    ap.add_argument("--render", action="store_true", help="rewrite the .md from the .json")
    ap.add_argument(
        "--append",
        action="store_true",
        help="add the rows to the saved .json (same sizes: replaced)",
    )
    ap.add_argument(
        "--full-exact-to",
        type=int,
        default=SAMPLED_EXACT,
        metavar="N",
        help=f"time exact and topk on every row up to N documents (default {SAMPLED_EXACT:,}; "
        "above, on the sample rows, extrapolated)",
    )
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    out = Path(tempfile.mkdtemp()) if args.quick or args.smoke else Path(args.out)
    stem = out / "knn"
    if args.render:
        saved = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        stem.with_suffix(".md").write_text(render(saved), encoding="utf-8")
        return 0
    from cluster.activity import EXACT_WORK

    sizes = [int(s) for s in args.sizes.split(",") if s]
    names = [c for c in args.corpora.split(",") if c]
    if args.quick:
        sizes, names = [1_000, 5_000], ["lenta", "websites"]
    methods = [m for m in args.methods.split(",") if m]
    if args.smoke:
        sizes, names, methods = [300], [], ["brute", "exact", "lsh"]
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise SystemExit(f"unknown methods {unknown}: use {list(METHODS)}")
    brute(sp.identity(20, format="csr", dtype=np.float32), 3, None)  # imports, not timed
    res: dict[str, Any] = {
        "machine": machine("cores"), "date": run_date(), "load_start": load_averages(),
        "methods": methods, "exact_work_limit": EXACT_WORK, "threads": THREADS,
        "sizes": [], "corpora": [],
    }  # fmt: skip
    if args.append:
        saved = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        runs = saved.get("runs", [{k: saved[k] for k in ("date", "load_start", "load_end")
                                   if k in saved}])  # fmt: skip
        res["runs"] = [*runs, {"date": res["date"], "load_start": res["load_start"],
                               "sizes": sizes, "methods": methods,
                               "full_exact_to": args.full_exact_to}]  # fmt: skip
        res["methods"] = [m for m in METHODS if m in {*saved["methods"], *methods}]
        res["sizes"], res["corpora"] = saved["sizes"], saved["corpora"]
        res["date"], res["load_start"] = saved["date"], saved["load_start"]
    print(f"load averages {load_averages()}", flush=True)

    def put(rows: list[dict[str, Any]], row: dict[str, Any]) -> None:
        """Add a row; a row of the same label keeps the methods this run did not run."""
        same = [i for i, r in enumerate(rows) if r["label"] == row["label"]]
        if same:
            row["methods"] = {**rows[same[0]]["methods"], **row["methods"]}
            rows[same[0]] = row
        else:
            rows.append(row)

    def save() -> None:
        write_results(stem, res, render(res), newline=True, ensure_ascii=False)

    state: dict[str, tuple[int, float]] = {}  # all small: the skip estimate never applies
    for name in names:
        texts, languages, note = corpus_data(name)
        put(res["corpora"], measure(name, texts, languages, methods, note, state))
        save()
    previous = {key: v for key, v in state.items() if key == "nndescent_compile"}
    for n in sizes:
        texts, languages, note = size_data(n)
        row = measure(f"{n:,}", texts, languages, methods, note, previous, args.full_exact_to)
        put(res["sizes"], row)
        del texts, languages
        save()
    if args.append:
        res["runs"][-1]["load_end"] = load_averages()
    else:
        res["load_end"] = load_averages()
    res["sizes"].sort(key=lambda r: int(r["documents"]))
    save()
    print(render(res))
    print(f"wrote {stem}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
