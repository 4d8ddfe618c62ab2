"""The k-nearest-neighbour graph of L2-normalised tf-idf documents.

Every document keeps its ``k`` most similar other documents (cosine), so that no document
is left alone because its site is larger or smaller than the others (a global similarity
threshold does that). Three ways to build it, chosen by ``bench/knn.py``
(``bench/results/knn.md``, issue 21 item 2: at least 0.95 recall of the exact ``k``
nearest neighbours in less time than brute force at every size from 1,000 to 1,000,000):

1. **Exact, blocked** (:func:`exact_knn`): ``X Xᵀ`` a block of rows at a time into a
   dense block (scikit-learn's sparse-to-dense product, ``safe_sparse_dot``, compiled),
   only against the rows from the block's first row on (the product is symmetric: each
   similarity is computed once and offered to both rows), each row's ``k`` best kept by
   a compiled scan with a bounded heap (:mod:`cluster.topk_kernels`), the blocks in
   ``n_jobs`` threads with heaps of their own, merged after.
   Recall 1. Time O(Σ_t df(t)² + n²) over the threads, memory O(threads · block · n +
   n · k). The faster way up to about 200,000 documents (``Σ df² + n² <= 2·10¹¹``,
   :data:`EXACT_WORK`): on 2 threads 0.01 s for 1,000 Reuters stories,
   0.13 s for 5,000, 1.2 s for 20,000 and 38 s for 100,000, against 0.02, 0.29, 6.4 and
   about 214 s for scikit-learn's brute force (one thread, a slower selection of the
   top k); the top-k sparse product in C++ of ``sparse_dot_topn`` was slower (3.3 s at
   20,000, 78 s at 100,000).
2. **NN-descent** (:func:`nndescent_knn`; Dong, Charikar & Li 2011, PyNNDescent's
   implementation on the sparse matrix, cosine): random-projection trees give a first
   graph; rounds of *local join* (a neighbour of a neighbour is likely a neighbour) then
   improve it until fewer than 0.1 % of the entries change. Each document keeps
   ``1.5 k`` neighbours while the graph is built and the best ``k`` after (with ``k`` the
   recall at 100,000 documents was 0.93, with ``1.5 k`` 0.96). Time about
   O(n^1.1 · k · d̄) for d̄ non-zeros a row, memory O(n · k); the larger corpora: 317 s
   and recall 0.96 at 300,000 documents, 674 s and recall 1.00 at 1,000,000 (Reuters and
   its perturbed copies), where brute force takes about 1,650 s and 19,300 s.
   hnswlib and faiss take dense vectors only: on a 256-column SVD of the matrix, even
   exact search re-ranked by the true cosine finds only 0.77-0.92 of the neighbours from
   4,500 documents up (0.77 at 20,000).
3. **LSH candidates + local join** (the earlier way, ``candidates="wminhash"`` or
   ``"simhash"``): the weighted MinHash signatures (:mod:`cluster.weighted_minhash`)
   are cut into ``b`` bands of ``r`` rows (:func:`cluster.lsh.band_keys`); documents
   that share a bucket are candidate pairs (:func:`bucket_candidates`; a bucket larger
   than ``max_bucket`` is shuffled with the seed and cut into runs, so the candidates
   stay O(n · b · max_bucket)). The exact cosine of every candidate decides
   (:func:`merge_top_k`), then ``refine`` rounds of local join
   (:func:`local_join_pairs`) in numpy. Faster than NN-descent, slower than the exact
   product below 300,000 documents, and short of 0.95 recall from 4,500 documents up
   (0.87-0.92); kept as an option.

The tests hold :func:`exact_knn` to scikit-learn's ``NearestNeighbors`` and the others
to :func:`exact_knn`.

Complexity: see each function; the graph is O(n · k) memory, never O(n²).

References
----------
W. Dong, M. Charikar, K. Li, "Efficient k-nearest neighbor graph construction for generic
similarity measures", *WWW* 2011, 577-586 (NN-descent).
L. McInnes, PyNNDescent, https://github.com/lmcinnes/pynndescent (its implementation).
P. Indyk, R. Motwani, "Approximate nearest neighbors: towards removing the curse of
dimensionality", *STOC* 1998 (LSH).

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> X = sp.csr_matrix(np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0.9, 0.1]]))
>>> nb, sims = exact_knn(X, 1)
>>> nb.ravel().tolist()
[1, 0, 3, 2]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from cluster.base import N_JOBS, POSITIVE, SEED, Constraints, Estimator, Interval, Options
from cluster.lsh import band_keys, bucket_pairs, pair_codes_in_groups, sorted_unique
from cluster.minhash import effective_n_jobs
from core import defaults as D
from core.choices import CANDIDATES
from core.exceptions import ParameterError

__all__ = [
    "EXACT_WORK",
    "NEIGHBOUR_CONSTRAINTS",
    "KNNGraph",
    "KNeighbours",
    "auto_neighbours",
    "bucket_candidates",
    "exact_knn",
    "exact_work",
    "knn_edges",
    "local_join_pairs",
    "merge_top_k",
    "nndescent_knn",
    "pair_cosine",
]

NNDESCENT_BUILD = 1.5
"""Neighbours a document keeps while NN-descent builds the graph, per neighbour wanted."""
NNDESCENT_TREES = 8
"""Random-projection trees of NN-descent's first graph (PyNNDescent's default is 5 +
n^0.25, 23 at 100,000: more trees cost time and barely change the recall after the
local joins, 0.939 against 0.933 with 8 at 100,000 documents)."""

_PAIR_CHUNK = 100_000

EXACT_WORK = 2 * 10**11
"""``candidates="auto"`` finds the exact neighbours (:func:`cluster.knn.exact_knn`, the
blocked product in threads) while ``Σ_t df(t)² + n²`` (the multiply-adds of the sparse
product and the entries of the dense blocks) is at most this, and NN-descent
(:func:`cluster.knn.nndescent_knn`) above it. Both beat scikit-learn's brute-force cosine
at >= 0.95 recall (``bench/knn.py``, ``bench/results/knn.md``). The exact product is the
faster of the two up to 100,000 documents (Reuters and perturbed copies, ``Σ df² + n² =
4.7·10¹⁰``: 46 s on 2 threads against NN-descent's 109 s; 2.2 s against 17 s at 20,000)
and grows as n², NN-descent about linearly here (317 s at 300,000, where the exact
product would take about 450 s): they meet near 230,000 documents, ``2.5·10¹¹``, so the
limit is set a little below."""


def exact_work(X: sp.csr_matrix) -> int:
    """``Σ_t df(t)² + n²``: the work of the brute-force k-NN of the rows of ``X``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> exact_work(sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])))
    14
    """
    df = np.bincount(X.indices, minlength=X.shape[1]).astype(np.int64)
    return int((df * df).sum()) + int(X.shape[0]) ** 2


def auto_neighbours(n: int) -> int:
    """``round(2.5 ln n)`` neighbours for ``n`` documents, at least 5 and at most 50.

    Examples
    --------
    >>> [auto_neighbours(n) for n in (10, 150, 600, 2225, 20000, 10**6)]
    [6, 13, 16, 19, 25, 35]
    """
    return int(min(50, max(5, round(2.5 * math.log(max(n, 2))))))


def _run_starts(a: np.ndarray) -> np.ndarray:
    """Mask of the first element of every run of equal values of a sorted array."""
    mask = np.ones(a.shape[0], dtype=bool)
    mask[1:] = a[1:] != a[:-1]
    return mask


@dataclass
class KNNGraph:
    """The ``k`` nearest neighbours of every document and how they were found.

    Attributes
    ----------
    neighbours : ndarray of int64, shape (n, k)
        Neighbour indices, most similar first; ``-1`` pads a row with fewer than ``k``.
    similarities : ndarray of float32, shape (n, k)
        Their cosine similarities (0 where padded).
    stats : dict
        ``candidate_pairs``, ``refine_pairs``, ``isolated`` (documents without a
        neighbour of similarity > 0), ``mean_similarity``.
    """

    neighbours: np.ndarray = field(repr=False)
    similarities: np.ndarray = field(repr=False)
    stats: dict[str, Any] = field(default_factory=dict)


def pair_cosine(X: sp.csr_matrix, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Dot products of rows ``i`` and ``j`` of ``X`` (cosines when the rows are
    L2-normalised), in chunks of 100,000 pairs.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[0.6, 0.8], [1.0, 0.0]]))
    >>> [round(float(v), 2) for v in pair_cosine(X, np.array([0]), np.array([1]))]
    [0.6]
    """
    out = np.empty(len(i), dtype=np.float32)
    for s in range(0, len(i), _PAIR_CHUNK):
        a, b = i[s : s + _PAIR_CHUNK], j[s : s + _PAIR_CHUNK]
        out[s : s + _PAIR_CHUNK] = np.asarray(X[a].multiply(X[b]).sum(axis=1)).ravel()
    return out


def bucket_candidates(
    signatures: np.ndarray,
    r: int,
    b: int,
    *,
    max_bucket: int = 50,
    seed: int = 1,
    active: np.ndarray | None = None,
) -> np.ndarray:
    """Distinct candidate pairs ``min * n + max`` of LSH banding with capped buckets.

    Parameters
    ----------
    signatures : ndarray, shape (n, num_perm)
        One signature row per document (the weighted MinHash or SimHash values
        :class:`KNeighbours` computes, or the ``hashvalues`` of a
        :class:`cluster.minhash.MinHashSignatures`); equal values mean equal samples.
    r, b : int
        Rows per band and bands (``r * b <= num_perm``).
    max_bucket : int, default 50
        A larger bucket is cut into runs of this many documents (in a seeded random
        order) and only the pairs within a run are taken
        (:func:`cluster.lsh.bucket_pairs`, which does the banding).
    seed : int
        Seed of the shuffles.
    active : ndarray of bool, optional
        Only these documents take part (empty documents are left out).

    Returns
    -------
    ndarray of int64
        Sorted distinct pair codes.

    Raises
    ------
    ValueError
        ``max_bucket < 2``.
    """
    if max_bucket < 2:
        raise ValueError(f"max_bucket must be >= 2, got {max_bucket}")
    n = signatures.shape[0]
    if n < 2 or b == 0:
        return np.empty(0, dtype=np.int64)
    pairs = bucket_pairs(band_keys(signatures, r, b), active=active, seed=seed,
                         max_bucket=max_bucket)  # fmt: skip
    return pairs[:, 0] * n + pairs[:, 1]


def merge_top_k(
    n: int,
    k: int,
    i: np.ndarray,
    j: np.ndarray,
    s: np.ndarray,
    neighbours: np.ndarray | None = None,
    similarities: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` most similar of every document among pairs ``(i, j, s)`` (both
    directions) and an existing neighbour table.

    The pairs must be distinct and none may already be in the table (both hold for
    :func:`bucket_candidates` and :func:`local_join_pairs`). Ties keep the input order, so
    the result is deterministic. One stable sort of a float key ``2 u + (1 - s)``
    (similarities in (0, 1]) orders every document's entries best first.

    Returns
    -------
    neighbours : ndarray of int64, shape (n, k), ``-1`` padded
    similarities : ndarray of float32, shape (n, k)
    """
    src = [np.asarray(i, np.int64), np.asarray(j, np.int64)]
    dst = [np.asarray(j, np.int64), np.asarray(i, np.int64)]
    sim = [np.asarray(s, np.float32)] * 2
    if neighbours is not None and similarities is not None:
        ok = neighbours >= 0
        src.append(np.nonzero(ok)[0].astype(np.int64))
        dst.append(neighbours[ok])
        sim.append(similarities[ok])
    u, v, w = np.concatenate(src), np.concatenate(dst), np.concatenate(sim)
    keep = (u != v) & (w > 0)
    u, v, w = u[keep], v[keep], w[keep]
    key = 2.0 * u + (1.0 - np.minimum(w, 1.0).astype(np.float64))
    order = np.argsort(key, kind="stable")
    u, v, w = u[order], v[order], w[order]
    starts = np.searchsorted(u, np.arange(n))
    rank = np.arange(u.shape[0]) - starts[u]
    top = rank < k
    nb = np.full((n, k), -1, dtype=np.int64)
    sims = np.zeros((n, k), dtype=np.float32)
    nb[u[top], rank[top]] = v[top]
    sims[u[top], rank[top]] = w[top]
    return nb, sims


def local_join_pairs(neighbours: np.ndarray) -> np.ndarray:
    """Distinct codes ``min * n + max`` of the pairs of neighbours of a common document
    (NN-descent's local join), excluding pairs already neighbours."""
    n, k = neighbours.shape
    valid = neighbours >= 0  # a row's neighbours first, its -1 padding after
    codes = sorted_unique(pair_codes_in_groups(neighbours[valid], valid.sum(axis=1), n))
    rows = np.repeat(np.arange(n), k)
    cols = neighbours.ravel()
    has = cols >= 0
    known = sorted_unique(np.minimum(rows[has], cols[has]) * n + np.maximum(rows[has], cols[has]))
    return np.setdiff1d(codes, known, assume_unique=True)


def knn_edges(
    neighbours: np.ndarray, similarities: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The undirected union k-NN graph: each edge once (``i < j``), its cosine as weight."""
    n, k = neighbours.shape
    i = np.repeat(np.arange(n, dtype=np.int64), k)
    j = neighbours.ravel()
    w = similarities.ravel()
    ok = (j >= 0) & (w > 0)
    i, j, w = i[ok], j[ok], w[ok]
    codes = np.minimum(i, j) * n + np.maximum(i, j)
    order = np.argsort(codes, kind="stable")
    codes, w = codes[order], w[order]
    first = _run_starts(codes)
    codes = codes[first]
    return codes // n, codes % n, w[first].astype(np.float64)


def exact_knn(
    X: sp.spmatrix,
    k: int,
    block: int | None = None,
    *,
    n_jobs: int = 1,
    rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``k`` nearest neighbours by dot product (brute force in row blocks).

    The similarities of each block of rows to the others come from scikit-learn's
    ``safe_sparse_dot(..., dense_output=True)`` (the others times the block's transpose,
    a dense block) and are offered to a bounded heap per row by a compiled scan
    (:func:`cluster.topk_kernels.offer_block`); the heaps are then ordered most similar
    first, ties by the smaller index. For all rows the product is **symmetric**: a block
    is multiplied only by the rows from its own first row on, and each similarity to a
    later row is offered to both rows' heaps, so half of ``X Xᵀ`` is computed. With
    ``n_jobs`` > 1 each thread takes every ``n_jobs``-th block, its product and its
    offers, into heaps of its own, merged at the end. A heap keeps its ``k`` best under
    one total order (similarity, then the smaller index), so the result does not depend
    on the order of the offers, on ``n_jobs`` nor on the block size.

    Parameters
    ----------
    X : sparse matrix, shape (n, V)
        Rows L2-normalised (dot products are cosines).
    k : int
        Neighbours per row; at most ``n - 1``.
    block : int, optional
        Rows per block; default: a 64 MB float32 block, between 16 and 1,024 rows.
    n_jobs : int, default 1
        Threads (``-1``: every core).
    rows : ndarray of int, optional
        Only the neighbours of these rows (all by default), among all rows; then every
        block is multiplied by all rows (no symmetry to use).

    Returns
    -------
    neighbours : ndarray of int64, shape (len(rows), k)
        ``-1`` pads (similarity <= 0, or fewer than ``k`` other rows).
    similarities : ndarray of float32, shape (len(rows), k)

    Notes
    -----
    Time O(Σ_t df(t)² + n²) (the product, then the scan of the dense blocks), divided
    among the threads; memory O(threads · block · n) for the blocks and
    O(threads · n · k) for the heaps. One thread, 20,000 Reuters stories: 1.7 s, against
    2.65 s when every block was multiplied by all rows (each similarity computed twice)
    and 3.9 s with numpy's ``argpartition`` and ``lexsort`` in place of the heaps; 50,000
    stories and copies: 11.1 s against 15.8 s. Each similarity is computed once and
    offered to both rows, so the two always see the same value. A compiled product that
    summed each row's products into a dense accumulator itself (no dense block) was
    slower than scipy's (3.5 s at 20,000).
    """
    from sklearn.utils.extmath import safe_sparse_dot

    from cluster.topk_kernels import finish_heaps, merge_heaps, offer_block

    X = sp.csr_matrix(X, dtype=np.float32)
    n = X.shape[0]
    symmetric = rows is None
    rows = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    m = rows.shape[0]
    if block is None:
        block = int(max(16, min(1024, (64 << 20) // (4 * max(n, 1)))))
    kk = min(k, max(n - 1, 0))
    nb = np.full((m, k), -1, dtype=np.int64)
    sims = np.zeros((m, k), dtype=np.float32)
    if kk == 0 or m == 0:
        return nb, sims
    starts = range(0, m, block)
    heaps = [_Heaps(m, kk) for _ in range(min(effective_n_jobs(n_jobs), len(starts)))]

    def work(w: int) -> None:
        mine = heaps[w]
        for s in starts[w :: len(heaps)]:
            own = rows[s : s + block]
            others = _rows_from(X, int(own[0])) if symmetric else X
            S = np.asarray(safe_sparse_dot(others, X[own].T.tocsr(), dense_output=True),
                           dtype=np.float32)  # fmt: skip
            col0, mirror_from = (int(own[0]), int(own[-1]) + 1) if symmetric else (0, n)
            offer_block(S, s, own, col0, mirror_from, *mine.arrays())

    _each_thread(work, len(heaps))
    first = heaps[0]
    for other in heaps[1:]:
        merge_heaps(*first.arrays(), other.values, other.ids, other.size)
    finish_heaps(first.values, first.ids, first.size, nb[:, :kk], sims[:, :kk])
    return nb, sims


def _rows_from(X: sp.csr_matrix, start: int) -> sp.csr_matrix:
    """The rows of ``X`` from ``start`` on, sharing ``X``'s arrays (scipy's row slice
    copies them, O(nnz) for each block)."""
    at = X.indptr[start]
    return sp.csr_matrix(
        (X.data[at:], X.indices[at:], X.indptr[start:] - at),
        shape=(X.shape[0] - start, X.shape[1]),
        copy=False,
    )


def _each_thread(work: Any, threads: int) -> None:
    """``work(w)`` for ``w`` in ``range(threads)``, each in a thread of its own (in the
    caller's thread when there is one); the first error is raised."""
    if threads <= 1:
        work(0)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))


@dataclass
class _Heaps:
    """A heap set of :mod:`cluster.topk_kernels`: one bounded min-heap per row,
    ``values`` / ``ids`` (``m, k``), each heap's ``size`` and its ``root`` (the worst value
    kept once full, else 0)."""

    m: int
    k: int
    values: np.ndarray = field(init=False)
    ids: np.ndarray = field(init=False)
    size: np.ndarray = field(init=False)
    root: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.values = np.zeros((self.m, self.k), np.float32)
        self.ids = np.zeros((self.m, self.k), np.int64)
        self.size = np.zeros(self.m, np.int32)
        self.root = np.zeros(self.m, np.float32)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``values, ids, size, root``, as the kernels take them."""
        return self.values, self.ids, self.size, self.root


def _active_rows(X: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """``X`` as float32 CSR and the indices of its rows with a non-zero entry."""
    X = sp.csr_matrix(X, dtype=np.float32)
    X.sum_duplicates()
    X.eliminate_zeros()
    return X, np.flatnonzero(np.diff(X.indptr) > 0)


def _best_others(idx: np.ndarray, val: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of each row's candidates ``idx`` (``-1``: none) with similarities
    ``val``, the row itself left out, most similar first, ties by index; entries of
    similarity <= 0 become ``-1`` / 0.

    A row whose own index is not among its candidates (more than ``k`` exact duplicates
    rank above it) simply keeps its ``k`` best.
    """
    m = idx.shape[0]
    val = np.where(idx >= 0, val, -np.inf).astype(np.float32)
    val[idx == np.arange(m)[:, None]] = -np.inf
    order = np.lexsort((np.where(idx >= 0, idx, np.iinfo(np.int64).max), -val), axis=1)[:, :k]
    idx, val = np.take_along_axis(idx, order, 1), np.take_along_axis(val, order, 1)
    bad = ~(val > 0)
    idx[bad] = -1
    val[bad] = 0
    return idx, val


def _scatter(
    n: int, k: int, rows: np.ndarray, idx: np.ndarray, val: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The ``(n, k)`` tables from the ``(m, kk)`` ones of the active ``rows``."""
    nb = np.full((n, k), -1, dtype=np.int64)
    sims = np.zeros((n, k), dtype=np.float32)
    kk = idx.shape[1]
    nb[rows, :kk] = np.where(idx >= 0, rows[np.maximum(idx, 0)], -1)
    sims[rows, :kk] = val
    return nb, sims


def nndescent_knn(
    X: sp.spmatrix,
    k: int,
    *,
    seed: int = 1,
    n_jobs: int = 1,
    build: float = NNDESCENT_BUILD,
    n_trees: int = NNDESCENT_TREES,
) -> tuple[np.ndarray, np.ndarray]:
    """Approximate ``k`` nearest neighbours by cosine: NN-descent (PyNNDescent).

    ``pynndescent.NNDescent`` on the non-empty rows of the sparse matrix (its sparse
    cosine), keeping ``ceil(build · k)`` neighbours while it builds, then the best ``k``
    other rows of each. Fewer than ``4 (k + 1)`` non-empty rows: :func:`exact_knn`.

    Parameters
    ----------
    X : sparse matrix, shape (n, V)
        Rows L2-normalised.
    k : int
        Neighbours per row (at most ``m - 1``).
    seed : int, default 1
        PyNNDescent's ``random_state``.
    n_jobs : int, default 1
        Threads (``-1``: every core). The graph is the same for the same ``seed`` and
        ``n_jobs`` (PyNNDescent splits its work by thread), not across ``n_jobs``.
    build : float, default 1.5
        Neighbours kept while building, per neighbour wanted (:data:`NNDESCENT_BUILD`).
    n_trees : int, default 8
        Random-projection trees of the first graph (:data:`NNDESCENT_TREES`).

    Returns
    -------
    neighbours : ndarray of int64, shape (n, k)
        Most similar first; ``-1`` pads.
    similarities : ndarray of float32, shape (n, k)

    Notes
    -----
    The first call in a process compiles PyNNDescent's functions with numba (about 15 s
    here; what numba caches on disk is reused by later processes). Time about
    O(n^1.1 · build · k · d̄); memory O(n · build · k) besides ``X``.
    """
    X, rows = _active_rows(X)
    n, m = X.shape[0], rows.shape[0]
    kk = min(k, max(m - 1, 0))
    if kk == 0 or m < 4 * (kk + 1):
        return exact_knn(X, k, n_jobs=n_jobs)
    from pynndescent import NNDescent

    built = min(m, math.ceil(build * kk) + 1)
    index = NNDescent(
        X[rows],
        metric="cosine",
        n_neighbors=built,
        n_trees=n_trees,
        random_state=int(seed),
        n_jobs=effective_n_jobs(n_jobs),
        low_memory=True,
        compressed=True,
    )
    idx, dist = index.neighbor_graph
    idx = np.asarray(idx, dtype=np.int64)
    val = (1.0 - np.asarray(dist, dtype=np.float64)).astype(np.float32)
    return _scatter(n, k, rows, *_best_others(idx, val, kk))


NEIGHBOUR_CONSTRAINTS: Constraints = {
    "n_neighbors": [POSITIVE, Options(("auto",))],
    "candidates": [Options(CANDIDATES)],
    "num_perm": [POSITIVE],
    "rows": [POSITIVE],
    "max_bucket": [Interval(int, 2, None)],
    "refine": [Interval(int, 0, None)],
    "seed": [SEED],
    "n_jobs": [N_JOBS],
}
"""The constraints of the neighbour step's parameters (also the activity clusterer's)."""


class KNeighbours(Estimator):
    """The k-nearest-neighbour graph of L2-normalised rows: the neighbour step of
    :class:`cluster.activity.ActivityClusterer` (``neighbours``).

    The parameters are the clusterer's of the same names (see there); the defaults its
    ``[activity]`` settings. ``candidates="auto"``: :func:`exact_knn` while
    :func:`exact_work` is at most :data:`EXACT_WORK`, else :func:`nndescent_knn`;
    ``"wminhash"`` and ``"simhash"``: LSH candidates (:func:`bucket_candidates`), their
    exact cosine (:func:`merge_top_k`) and ``refine`` rounds of local join.

    Attributes
    ----------
    graph_ : KNNGraph
        Each row's neighbours (``-1`` pads), their cosine, and ``stats``
        (``candidates``: the mode run, ``candidate_pairs``, ``refine_pairs``).
    n_neighbors_ : int
        The ``k`` used: ``n_neighbors`` (``"auto"``: :func:`auto_neighbours` of the rows
        with a term), at most the rows with a term less one.
    edges_ : tuple of ndarray
        ``(i, j, w)``: the undirected union graph, each edge once, its cosine as weight
        (:func:`knn_edges`), what the community step partitions.

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0.9, 0.1]]))
    >>> step = KNeighbours(n_neighbors=1).fit(X)
    >>> step.graph_.neighbours.ravel().tolist(), step.graph_.stats["candidates"]
    ([1, 0, 3, 2], 'exact')
    """

    _parameter_constraints: ClassVar[Constraints] = NEIGHBOUR_CONSTRAINTS
    _settings_keys: ClassVar[Mapping[str, str]] = {
        "n_neighbors": "activity.n_neighbors",
        "candidates": "activity.candidates",
        "num_perm": "activity.num_perm",
        "rows": "activity.rows",
        "max_bucket": "activity.max_bucket",
        "refine": "activity.refine",
        "seed": "activity.seed",
        "n_jobs": "minhash.workers",
    }
    _resource_params = ("n_jobs",)

    def __init__(
        self,
        *,
        n_neighbors: int | str = D.ACTIVITY_N_NEIGHBORS,
        candidates: str = D.ACTIVITY_CANDIDATES,
        num_perm: int = D.ACTIVITY_NUM_PERM,
        rows: int = D.ACTIVITY_ROWS,
        max_bucket: int = D.ACTIVITY_MAX_BUCKET,
        refine: int = D.ACTIVITY_REFINE,
        seed: int = D.ACTIVITY_SEED,
        n_jobs: int = 1,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.candidates = candidates
        self.num_perm = num_perm
        self.rows = rows
        self.max_bucket = max_bucket
        self.refine = refine
        self.seed = seed
        self.n_jobs = n_jobs

    def _validate(self) -> None:
        if self.rows > self.num_perm:
            raise ParameterError(f"rows={self.rows} exceeds num_perm={self.num_perm}")

    def fit(self, X: sp.csr_matrix) -> KNeighbours:
        """Find each row's neighbours and the edges of the graph.

        Parameters
        ----------
        X : csr_matrix, shape (n, terms)
            L2-normalised rows (a row of zeros gets no neighbour).

        Returns
        -------
        KNeighbours
            ``self``, fitted.
        """
        self.check_params()
        n = X.shape[0]
        active = np.diff(X.indptr) > 0 if n else np.zeros(0, dtype=bool)
        n_active = int(active.sum())
        wanted = auto_neighbours(n_active) if self.n_neighbors == "auto" else self.n_neighbors
        k = min(int(wanted), max(n_active - 1, 0))
        self.n_neighbors_ = k
        self.graph_ = self._graph(X, active, k)
        self.edges_ = knn_edges(self.graph_.neighbours, self.graph_.similarities)
        return self

    def _graph(self, X: sp.csr_matrix, active: np.ndarray, k: int) -> KNNGraph:
        n = X.shape[0]
        stats: dict[str, Any] = {"candidates": None, "candidate_pairs": 0, "refine_pairs": 0}
        if k == 0 or int(active.sum()) < 2:
            return KNNGraph(np.full((n, k), -1, np.int64), np.zeros((n, k), np.float32), stats)
        mode = self.candidates
        if mode == "auto":  # the rule: EXACT_WORK (bench/results/knn.md)
            mode = "exact" if exact_work(X) <= EXACT_WORK else "nndescent"
        stats["candidates"] = mode
        if mode == "exact":
            nb, sims = exact_knn(X, k, n_jobs=self.n_jobs)
            stats["candidate_pairs"] = int(active.sum()) * (int(active.sum()) - 1) // 2
            return KNNGraph(nb, sims, stats)
        if mode == "nndescent":
            nb, sims = nndescent_knn(X, k, seed=int(self.seed), n_jobs=self.n_jobs)
            return KNNGraph(nb, sims, stats)
        signatures = self._signatures(X, mode)
        codes = bucket_candidates(
            signatures,
            self.rows,
            self.num_perm // self.rows,
            max_bucket=self.max_bucket,
            seed=self.seed,
            active=active,
        )
        i, j = codes // n, codes % n
        nb, sims = merge_top_k(n, k, i, j, pair_cosine(X, i, j))
        stats["candidate_pairs"] = int(codes.shape[0])
        for _ in range(self.refine):
            more = local_join_pairs(nb)
            if more.shape[0] == 0:
                break
            a, b = more // n, more % n
            nb, sims = merge_top_k(n, k, a, b, pair_cosine(X, a, b), nb, sims)
            stats["refine_pairs"] += int(more.shape[0])
        return KNNGraph(nb, sims, stats)

    def _signatures(self, X: sp.csr_matrix, mode: str) -> np.ndarray:
        if mode == "simhash":
            rng = np.random.RandomState(self.seed)
            planes = rng.standard_normal((X.shape[1], self.num_perm)).astype(np.float32)
            return np.asarray(X @ planes > 0, dtype=np.uint8)
        from cluster.weighted_minhash import WeightedMinHasher

        hasher = WeightedMinHasher(dim=X.shape[1], num_perm=self.num_perm, seed=self.seed)
        return hasher.sign(X, n_jobs=self.n_jobs)
