"""An approximate k-nearest-neighbour graph of weighted documents from LSH candidates.

Every document keeps its ``k`` most similar other documents, so that no document is left
alone because its site is larger or smaller than the others (a global similarity
threshold does that). The graph is built in two steps:

1. **LSH candidates.** The weighted MinHash signatures (:mod:`cluster.weighted_minhash`)
   are cut into ``b`` bands of ``r`` rows (:func:`cluster.lsh.band_keys`); documents that
   share a bucket are candidate pairs. A bucket larger than ``max_bucket`` (a term that
   dominates many documents) is shuffled with the seed and cut into runs of
   ``max_bucket`` documents, whose pairs only are taken, so the candidates stay
   O(n · b · max_bucket) however skewed the data.
2. **Exact similarity decides.** The cosine of every candidate pair is computed from the
   L2-normalised tf-idf vectors; each document keeps its ``k`` best. Then ``refine``
   rounds of NN-descent's *local join* (Dong, Charikar & Li 2011) compare the neighbours
   of every document with each other — a neighbour of a neighbour is likely a neighbour —
   and keep the better pairs: this recovers most of the neighbours the bands missed at
   the cost of O(n · k²) pair similarities per round.

Complexity: signatures O(m · N) for N non-zeros; candidates O(n · b · log n +
n · b · max_bucket); similarities O(C · d̄) for C pairs of d̄ non-zeros on average;
refinement O(rounds · n · k² · d̄). Memory O(n · b + C) while banding and O(n · k) for the
graph, never O(n²).

References
----------
W. Dong, M. Charikar, K. Li, "Efficient k-nearest neighbor graph construction for generic
similarity measures", *WWW* 2011, 577-586 (NN-descent).
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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from cluster.lsh import band_keys, pair_codes_in_groups, sorted_unique

__all__ = [
    "KNNGraph",
    "bucket_candidates",
    "exact_knn",
    "knn_edges",
    "local_join_pairs",
    "merge_top_k",
    "pair_cosine",
]

_PAIR_CHUNK = 100_000


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
        Signatures whose equal values mean equal samples.
    r, b : int
        Rows per band and bands (``r * b <= num_perm``).
    max_bucket : int, default 50
        A larger bucket is cut into runs of this many documents (in a seeded random
        order) and only the pairs within a run are taken.
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
    docs = np.arange(n, dtype=np.int64) if active is None else np.flatnonzero(active)
    if docs.shape[0] < 2 or b == 0:
        return np.empty(0, dtype=np.int64)
    # every (document, band) entry at once: band_keys seeds each band's keys differently,
    # so one sort groups the buckets of all bands; a seeded random number orders a bucket
    keys = band_keys(signatures[docs], r, b).ravel()
    doc = np.repeat(docs, b)
    tiebreak = np.random.default_rng(seed).random(keys.shape[0])
    order = np.lexsort((tiebreak, keys))
    keys, doc = keys[order], doc[order]
    starts = np.flatnonzero(_run_starts(keys))
    sizes = np.diff(np.r_[starts, keys.shape[0]])
    pos = np.arange(keys.shape[0]) - np.repeat(starts, sizes)
    run = (
        np.repeat(np.arange(starts.shape[0], dtype=np.int64), sizes)
        * (keys.shape[0] // max_bucket + 1)
        + pos // max_bucket
    )
    run_sizes = np.diff(np.r_[np.flatnonzero(_run_starts(run)), run.shape[0]])
    return sorted_unique(pair_codes_in_groups(doc, run_sizes, n))


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


def exact_knn(X: sp.spmatrix, k: int, block: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``k`` nearest neighbours by dot product (brute force in row blocks).

    The reference for the LSH graph, and the faster way for small corpora: O(Σ df² + n²)
    time, O(block · n) memory (``block`` default: rows whose similarities take at most
    256 MB, at most 2,048).
    """
    X = sp.csr_matrix(X, dtype=np.float32)
    n = X.shape[0]
    if block is None:
        block = int(max(16, min(2048, (256 << 20) // (4 * max(n, 1)))))
    kk = min(k, max(n - 1, 0))
    nb = np.full((n, k), -1, dtype=np.int64)
    sims = np.zeros((n, k), dtype=np.float32)
    if kk == 0:
        return nb, sims
    XT = X.T.tocsr()
    for s in range(0, n, block):
        S = (X[s : s + block] @ XT).toarray()
        rows = np.arange(S.shape[0])
        S[rows, s + rows] = -np.inf
        idx = np.argpartition(-S, kk - 1, axis=1)[:, :kk]
        val = np.take_along_axis(S, idx, 1)
        order = np.lexsort((idx, -val), axis=1)
        idx, val = np.take_along_axis(idx, order, 1), np.take_along_axis(val, order, 1)
        val[val <= 0] = 0
        idx[val <= 0] = -1
        nb[s : s + block, :kk] = idx
        sims[s : s + block, :kk] = val
    return nb, sims
