"""One pass of centroid reassignment after Leiden: each document moves to the neighbouring
cluster whose centroid it is closer to (the last step of
:class:`cluster.activity.ActivityClusterer`).

Leiden places a document by the edges of the k-NN graph: a document of a boundary, with
neighbours in two clusters, goes where its edges weigh most, which is not always the
cluster whose vocabulary it shares. A k-means step corrects that (refining a graph or
hierarchical partition with k-means: Steinbach, Karypis & Kumar 2000, Zhao & Karypis
2004): each document is compared with the centroid of its own cluster *without itself*
(the leave-one-out centroid, so that a document of a small cluster is not held by its own
weight in it) and with the centroids of the clusters of its k nearest neighbours, and
moves to the most similar when that is more similar than its own and positive. All moves
of a pass are decided on the same centroids, then made (Lloyd's batch step).

Comparing only with the clusters of the neighbours keeps a pass at O(n · c · d̄ · log s)
for c distinct clusters among a document's own and its neighbours' (a mean of 1.6 on the
test web, 2.7 on Reuters, 4.2 on WebKB), d̄ terms a document and s terms a centroid,
whatever the number of clusters, where comparing with every centroid is a documents ×
clusters product; the two gave class F within 0.002 of each other on each of the nine
labelled corpora (``bench/results/alternatives.md``). One pass, not k-means to
convergence: further passes drift toward k-means' own partition, which is worse than
Leiden's on most corpora (k-means told the true k: ``bench/results/activity.md``), and
``bench/alternatives.py``, choosing among 0 to 3 passes leave-one-corpus-out, chose one
for every corpus.

References
----------
M. Steinbach, G. Karypis, V. Kumar, "A comparison of document clustering techniques",
KDD Workshop on Text Mining, 2000.
Y. Zhao, G. Karypis, "Empirical and theoretical comparisons of selected criterion
functions for document clustering", *Machine Learning* 55 (2004) 311-331.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> X = sp.csr_matrix(np.array([[1.0, 0.0], [0.96, 0.28], [0.28, 0.96], [0.0, 1.0],
...                             [0.6, 0.8]], dtype=np.float32))
>>> nb = np.array([[1, 4], [0, 4], [3, 4], [2, 4], [2, 3]])
>>> labels, moved = reassign(X, np.array([0, 0, 1, 1, 0]), nb)
>>> labels.tolist(), moved
([0, 0, 1, 1, 1], 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Self

import numba
import numpy as np
import scipy.sparse as sp

from cluster.base import Constraints, Estimator, Interval
from core import defaults as D

__all__ = ["CentroidReassignment", "centroid_sums", "cluster_sums", "reassign"]


class CentroidReassignment(Estimator):
    """``passes`` passes of centroid reassignment among neighbouring clusters
    (:func:`reassign`): the reassignment step of
    :class:`cluster.activity.ActivityClusterer` (``reassignment``; its ``reassign``).

    Parameters
    ----------
    passes : int, default ``[activity] reassign`` (1)
        Passes; 0 keeps the clusters as given.

    Attributes
    ----------
    labels_ : ndarray of int
        The clusters after the moves, not renumbered.
    moved_ : int
        Documents whose cluster changed.

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1.0, 0.0], [0.96, 0.28], [0.28, 0.96], [0.0, 1.0],
    ...                             [0.6, 0.8]], dtype=np.float32))
    >>> nb = np.array([[1, 4], [0, 4], [3, 4], [2, 4], [2, 3]])
    >>> step = CentroidReassignment().fit(X, nb, np.array([0, 0, 1, 1, 0]))
    >>> step.labels_.tolist(), step.moved_
    ([0, 0, 1, 1, 1], 1)
    """

    _parameter_constraints: ClassVar[Constraints] = {"passes": [Interval(int, 0, None)]}
    _settings_keys: ClassVar[Mapping[str, str]] = {"passes": "activity.reassign"}

    def __init__(self, *, passes: int = D.ACTIVITY_REASSIGN) -> None:
        self.passes = passes

    def fit(self, X: sp.csr_matrix, neighbours: np.ndarray, labels: np.ndarray) -> Self:
        """Move each document to the neighbouring cluster whose centroid it is closer to.

        Parameters
        ----------
        X : csr_matrix, shape (n, terms)
            The documents' L2-normalised vectors.
        neighbours : ndarray of int, shape (n, k)
            Each document's neighbours (``-1``: none).
        labels : ndarray of int, shape (n,)
            The clusters (0 .. c-1).

        Returns
        -------
        CentroidReassignment
            ``self``, fitted.
        """
        self.check_params()
        self.labels_, self.moved_ = reassign(X, labels, neighbours, passes=int(self.passes))
        return self


def cluster_sums(X: sp.csr_matrix, labels: np.ndarray) -> sp.csr_matrix:
    """Each cluster's sum of the rows of ``X``, in ``X``'s dtype (sparse, sorted indices):
    O(N) for N non-zeros of ``X``, never clusters × terms dense."""
    n = X.shape[0]
    k = int(labels.max()) + 1 if n else 0
    member = sp.csr_matrix((np.ones(n, dtype=X.dtype), (labels, np.arange(n))), shape=(k, n))
    sums = (member @ X).tocsr()
    sums.sort_indices()
    return sums


def centroid_sums(X: sp.csr_matrix, labels: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Each cluster's sum of the rows of ``X`` (:func:`cluster_sums`, in float64) and its
    squared norm."""
    sums = cluster_sums(X.astype(np.float64, copy=False), labels)
    norms = np.asarray(sums.multiply(sums).sum(axis=1), dtype=np.float64).ravel()
    return sums, norms


def reassign(
    X: sp.csr_matrix, labels: np.ndarray, neighbours: np.ndarray, passes: int = 1
) -> tuple[np.ndarray, int]:
    """Labels after ``passes`` passes of centroid reassignment among neighbouring clusters.

    Parameters
    ----------
    X : csr_matrix, shape (n, terms)
        The documents' L2-normalised vectors (a row of zeros never moves).
    labels : ndarray of int, shape (n,)
        The clusters (0 .. k-1).
    neighbours : ndarray of int, shape (n, k)
        Each document's neighbours (-1: none), whose clusters it is compared with.
    passes : int, default 1
        Passes; each stops early when no document moves.

    Returns
    -------
    labels : ndarray of int
        The clusters after the moves, not renumbered (a cluster left empty leaves a gap).
    moved : int
        Documents whose cluster changed.
    """
    labels = np.asarray(labels, dtype=np.int64)
    start = labels.copy()
    n = X.shape[0]
    if n == 0 or passes <= 0:
        return labels, 0
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    nb = np.ascontiguousarray(neighbours, dtype=np.int64).reshape(n, -1)
    for _ in range(passes):
        sums, norms = centroid_sums(X, labels)
        new = _pass(X.indptr, X.indices, X.data, sums.indptr, sums.indices, sums.data,
                    norms, labels, nb)  # fmt: skip
        if np.array_equal(new, labels):
            break
        labels = new
    return labels, int(np.count_nonzero(labels != start))


@numba.njit(cache=True, nogil=True)
def _dot(
    x_idx: np.ndarray, x_val: np.ndarray, s_ptr: np.ndarray, s_idx: np.ndarray,
    s_val: np.ndarray, c: int,
) -> float:  # fmt: skip
    """Dot product of a sparse row with cluster ``c``'s centroid sum (both with sorted
    indices): each of the row's terms looked up in the centroid by binary search."""
    s_idx, s_val = s_idx[s_ptr[c] : s_ptr[c + 1]], s_val[s_ptr[c] : s_ptr[c + 1]]
    total = 0.0
    for t in range(x_idx.shape[0]):
        at = np.searchsorted(s_idx, x_idx[t])
        if at < s_idx.shape[0] and s_idx[at] == x_idx[t]:
            total += x_val[t] * s_val[at]
    return total


@numba.njit(cache=True, nogil=True)
def _pass(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    s_ptr: np.ndarray,
    s_idx: np.ndarray,
    s_val: np.ndarray,
    norms: np.ndarray,
    labels: np.ndarray,
    nb: np.ndarray,
) -> np.ndarray:
    """One batch pass: each document's best cluster among its own (leave-one-out) and
    its neighbours' (ties keep the own, then the first neighbour's)."""
    n = labels.shape[0]
    new = labels.copy()
    for d in range(n):
        a, b = indptr[d], indptr[d + 1]
        if a == b:
            continue
        x_idx, x_val = indices[a:b], data[a:b]
        xx = 0.0
        for t in range(a, b):
            xx += data[t] * data[t]
        own = labels[d]
        on = _dot(x_idx, x_val, s_ptr, s_idx, s_val, own)
        rest = norms[own] - 2.0 * on + xx
        best, best_sim = own, -np.inf
        if rest > 1e-12 * max(norms[own], 1.0):
            best_sim = (on - xx) / np.sqrt(rest)
        for m in range(nb.shape[1]):
            j = nb[d, m]
            if j < 0:
                continue
            c = labels[j]
            seen = c == own
            for p in range(m):
                if nb[d, p] >= 0 and labels[nb[d, p]] == c:
                    seen = True
                    break
            if seen or norms[c] <= 0.0:
                continue
            dot = _dot(x_idx, x_val, s_ptr, s_idx, s_val, c)
            sim = dot / np.sqrt(norms[c])
            if dot > 0.0 and sim > best_sim:
                best, best_sim = c, sim
        new[d] = best
    return new
