"""Exact single-link clustering on Jaccard similarity, without an n x n matrix.

The baseline of the paper's Table 1 (seed 000_d819228b9213e10a.txt): two documents
link when the Jaccard similarity of their shingle sets exceeds the threshold ``t``;
the clusters are the connected components of that threshold graph and the
dendrogram is Kruskal's order over its minimum spanning forest (Gower & Ross 1969).

The intersections ``|A ∩ B|`` of all pairs are the products of a sparse binary
document x shingle matrix ``X`` with its transpose, computed by blocks of rows
against the rows that follow (the upper triangle), so no n x n matrix is ever held.
Frequent shingles make a sparse product expensive (each shingle of document
frequency df costs df² operations), so the shingle columns are split: the ``h``
most frequent ones form a dense float32 matrix multiplied with BLAS (exact for counts
below 2^24), the rest stay sparse; ``h`` is chosen to minimise a cost estimate
(:func:`choose_dense_columns`). ``J > t`` is tested as ``|A ∩ B| > t · |A ∪ B|``;
documents without shingles link to nothing.

Complexity: time O(n² · h + Σ_{w ∉ H} df_w² + n²) (the last term is the threshold
test, done blockwise on floats), memory O(nnz(X) + n · h + block · n) with blocks of
about 16 M entries; E threshold edges add O(E log E) for the dendrogram.

References
----------
J. C. Gower, G. J. S. Ross, "Minimum spanning trees and single linkage cluster
analysis", *Applied Statistics* 18 (1969) 54-64.
P. Jaccard, "Étude comparative de la distribution florale ...", 1901.

Examples
--------
>>> import numpy as np
>>> sets = [np.array([1, 2, 3, 4], np.uint64), np.array([1, 2, 3, 5], np.uint64),
...         np.array([9], np.uint64)]
>>> ExactSingleLink(threshold=0.5).fit(sets).labels_.tolist()
[0, 0, 1]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.sparse import csr_matrix

from cluster.base import POSITIVE, THRESHOLD, Constraints, Estimator
from cluster.unionfind import single_linkage
from core import defaults as D


@dataclass(frozen=True)
class ShingleMatrix:
    """The binary document x shingle matrix of a corpus.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_shingles), float32
        ``X[d, w] = 1`` when document ``d`` holds shingle ``w`` (columns index the
        sorted distinct shingle hashes; column indices sorted in every row).
    sizes : ndarray of int64, shape (n_documents,)
        Number of distinct shingles of every document.
    """

    X: csr_matrix
    sizes: np.ndarray

    @classmethod
    def from_sets(cls, shingle_sets: Sequence[np.ndarray]) -> ShingleMatrix:
        """Build the matrix from one uint64 array of shingle hashes per document.

        Duplicates within a document count once. O(S log S) for S shingles.
        """
        n = len(shingle_sets)
        lengths = np.fromiter((len(s) for s in shingle_sets), dtype=np.int64, count=n)
        if lengths.sum() == 0:
            X = csr_matrix((n, 0), dtype=np.float32)
            return cls(X, np.zeros(n, dtype=np.int64))
        values = np.concatenate([np.asarray(s, dtype=np.uint64) for s in shingle_sets])
        _, cols = np.unique(values, return_inverse=True)
        rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
        X = csr_matrix(
            (np.ones(values.shape[0], dtype=np.float32), (rows, cols.reshape(-1))),
            shape=(n, int(cols.max()) + 1),
        )
        X.sum_duplicates()
        X.data[:] = 1.0
        X.sort_indices()
        return cls(X, np.diff(X.indptr).astype(np.int64))

    @property
    def n_documents(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    def shared_rows(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Every document's shingles held by two or more documents (the only ones that can
        be shared), as a CSR structure over the shared columns, renumbered ``0 ..``.

        Returns
        -------
        indptr : ndarray of int64, shape (n_documents + 1,)
        indices : ndarray of int32
        n_shared : int
            Number of shared columns.
        """
        cached = self.__dict__.get("_shared")
        if cached is None:
            X = self.X
            df = np.bincount(X.indices, minlength=X.shape[1])
            shared = df >= 2
            remap = np.cumsum(shared) - 1
            keep = shared[X.indices]
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[keep]
            indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
            cached = (indptr, remap[X.indices[keep]].astype(np.int32), int(shared.sum()))
            object.__setattr__(self, "_shared", cached)
        return cached

    def pair_intersections(
        self, i: np.ndarray, j: np.ndarray, block_bytes: int = 1 << 20
    ) -> np.ndarray:
        """``|A_i ∩ A_j|`` for many document pairs, exactly.

        For each pair the shared shingles of the document with fewer of them are looked
        up in a boolean table (documents x shared shingle columns) of the other
        document's, built for the documents of one chunk of pairs at a time.
        Time O(Σ min(|A_i|, |A_j|) + table fills), memory O(block_bytes).

        Parameters
        ----------
        i, j : ndarray of int, same shape
        block_bytes : int
            Memory of one table and of one chunk of looked-up shingles.

        Returns
        -------
        ndarray of int64
        """
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        out = np.zeros(i.shape[0], dtype=np.int64)
        indptr, indices, n_shared = self.shared_rows()
        if i.shape[0] and n_shared:
            lens_all = np.diff(indptr)
            swap = lens_all[i] > lens_all[j]
            small, big = np.where(swap, j, i), np.where(swap, i, j)
            order = np.argsort(big, kind="stable")
            small, big = small[order], big[order]
            lens = lens_all[small]
            csum = np.cumsum(lens)
            # one table of at most max_rows documents x shared columns (flat, int32 index)
            max_rows = max(1, min(block_bytes, 2**31 - 1) // n_shared)
            max_elems = max(1, block_bytes // 16)
            start, n = 0, small.shape[0]
            while start < n:
                done = int(csum[start - 1]) if start else 0
                stop = max(start + 1, int(np.searchsorted(csum, done + max_elems, side="right")))
                chunk_big = big[start:stop]
                new_row = np.r_[True, chunk_big[1:] != chunk_big[:-1]]  # `big` is sorted
                local = np.cumsum(new_row) - 1
                if int(local[-1]) >= max_rows:
                    cut = int(np.searchsorted(local, max_rows, side="left"))
                    stop = start + cut
                    chunk_big, new_row, local = chunk_big[:cut], new_row[:cut], local[:cut]
                rows = chunk_big[new_row]
                rl = lens_all[rows]
                table = np.zeros(rows.shape[0] * n_shared, dtype=bool)
                base = np.arange(rows.shape[0], dtype=np.int32) * np.int32(n_shared)
                table[np.repeat(base, rl) + indices[_gather(indptr, rows, rl)]] = True
                sl = lens[start:stop]
                flat = np.repeat(local.astype(np.int32) * np.int32(n_shared), sl)
                flat += indices[_gather(indptr, small[start:stop], sl)]
                hits = np.zeros(flat.shape[0] + 1, dtype=np.int32)
                np.cumsum(table[flat], out=hits[1:])
                ends = np.cumsum(sl)
                out[order[start:stop]] = hits[ends] - hits[ends - sl]
                start = stop
        same = i == j  # a document's own unshared shingles count too
        out[same] = self.sizes[i[same]]
        return out

    def pair_jaccard(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Exact Jaccard similarity of many document pairs (0 when both are empty).

        Parameters
        ----------
        i, j : ndarray of int, same shape

        Returns
        -------
        ndarray of float64
        """
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        inter = self.pair_intersections(i, j).astype(np.float64)
        union = self.sizes[i] + self.sizes[j] - inter
        return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def _gather(indptr: np.ndarray, rows: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Positions in a CSR ``indices`` array of all entries of ``rows``, row after row."""
    total = int(lens.sum())
    offs = np.zeros(rows.shape[0], dtype=np.int64)
    np.cumsum(lens[:-1], out=offs[1:])
    return np.repeat(indptr[rows].astype(np.int64) - offs, lens) + np.arange(total)


def choose_dense_columns(df_sorted_desc: np.ndarray, n: int) -> int:
    """How many of the most frequent shingle columns to multiply densely.

    Minimises ``n² · h / dense_rate + Σ_{rank >= h} df² / sparse_rate`` over ``h`` in
    0, 64, 128, ... 4096, with rates measured on 2 cores (about 2·10^10 dense and
    5·10^7 sparse multiply-adds per second).

    Parameters
    ----------
    df_sorted_desc : ndarray
        Document frequencies of the columns, largest first.
    n : int
        Number of documents.

    Returns
    -------
    int
    """
    sq = df_sorted_desc.astype(np.float64) ** 2
    tail = np.concatenate([np.cumsum(sq[::-1])[::-1], [0.0]])
    best_h, best_cost = 0, np.inf
    for h in (0, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096):
        h = min(h, sq.shape[0])
        cost = (n * n / 2.0) * h / 2e10 + tail[h] / 2.0 / 5e7
        if cost < best_cost:
            best_h, best_cost = h, cost
    return best_h


def threshold_edges(
    matrix: ShingleMatrix,
    threshold: float,
    block_entries: int = D.CLUSTER_BLOCK_ENTRIES,
    dense_columns: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs ``i < j`` with Jaccard similarity above ``threshold``, exactly.

    Parameters
    ----------
    matrix : ShingleMatrix
    threshold : float
        In [0, 1); pairs with ``J > threshold`` are returned.
    block_entries : int
        Size of one dense block of intersections (rows x columns).
    dense_columns : int, optional
        How many of the most frequent columns to multiply densely; default
        :func:`choose_dense_columns`.

    Returns
    -------
    i, j : ndarray of int64
    sim : ndarray of float64
    """
    X, sizes = matrix.X, matrix.sizes
    n = matrix.n_documents
    if n < 2 or X.shape[1] == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.empty(0, dtype=np.float64)
    df = np.diff(X.tocsc().indptr)
    order = np.argsort(-df, kind="stable")
    h = choose_dense_columns(df[order], n) if dense_columns is None else int(dense_columns)
    h = max(0, min(h, X.shape[1]))
    heavy, light = order[:h], order[h:]
    D = X[:, heavy].toarray() if h else None  # n x h float32
    XL = X[:, light].tocsr() if light.shape[0] else None
    XLT = XL.T.tocsr() if XL is not None else None
    sizes_f = sizes.astype(np.float32)
    out_i: list[np.ndarray] = []
    out_j: list[np.ndarray] = []
    out_s: list[np.ndarray] = []
    rows = max(1, block_entries // n)
    for start in range(0, n - 1, rows):
        stop = min(n, start + rows)
        # intersections of rows [start, stop) with columns [start, n)
        inter = np.zeros((stop - start, n - start), dtype=np.float32)
        if D is not None:
            np.matmul(D[start:stop], D[start:].T, out=inter)
        if XL is not None and XLT is not None:
            part = (XL[start:stop] @ XLT[:, start:]).tocoo()
            inter[part.row, part.col] += part.data
        union = sizes_f[start:stop, None] + sizes_f[None, start:] - inter
        # a float32 pre-test, slightly loose; the float64 test below decides
        hit = inter > np.float32(threshold - 1e-6) * union
        hit &= inter > 0
        # upper triangle only: column index > row index
        r_idx, c_idx = np.nonzero(hit)
        c_abs = c_idx + start
        r_abs = r_idx + start
        keep = c_abs > r_abs
        r_idx, c_idx, r_abs, c_abs = r_idx[keep], c_idx[keep], r_abs[keep], c_abs[keep]
        iv = inter[r_idx, c_idx].astype(np.float64)
        uv = sizes[r_abs] + sizes[c_abs] - iv
        sim = iv / uv
        exact = sim > threshold  # re-check in float64 against the float32 test
        out_i.append(r_abs[exact].astype(np.int64))
        out_j.append(c_abs[exact].astype(np.int64))
        out_s.append(sim[exact])
    return np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_s)


class ExactSingleLink(Estimator):
    """Exact single-link clustering of shingle sets at a Jaccard threshold.

    Parameters
    ----------
    threshold : float, default ``[cluster] threshold`` (0.3)
        Documents link when their Jaccard similarity exceeds it; in (0, 1).
    block_entries : int, default ``CLUSTER_BLOCK_ENTRIES`` (2**24)
        Entries of one dense block of intersections (memory ~ 12 bytes each).

    Attributes
    ----------
    labels_ : ndarray of int, shape (n_documents,)
        Clusters: connected components of the threshold graph, numbered in order of
        their first document.
    linkage_matrix_ : ndarray of shape (n_documents - 1, 4)
        SciPy linkage matrix, height ``1 - J`` for every merge above the threshold;
        the components left apart are joined at height 1.0 (see
        :func:`cluster.unionfind.single_linkage`).
    n_edges_ : int
        Pairs above the threshold.
    n_dense_columns_ : int
        Frequent shingles multiplied densely.

    Raises
    ------
    ParameterError
        ``threshold`` outside (0, 1) (a ``ValueError``).

    Notes
    -----
    Complexity: see the module docstring; no n x n matrix is held.
    """

    _parameter_constraints: ClassVar[Constraints] = {
        "threshold": [THRESHOLD],
        "block_entries": [POSITIVE],
    }
    _settings_keys: ClassVar[Mapping[str, str]] = {"threshold": "cluster.threshold"}
    _resource_params = ("block_entries",)

    def __init__(
        self,
        *,
        threshold: float = D.CLUSTER_THRESHOLD,
        block_entries: int = D.CLUSTER_BLOCK_ENTRIES,
    ) -> None:
        self.threshold = threshold
        self.block_entries = block_entries

    def fit(self, shingle_sets: Sequence[np.ndarray] | ShingleMatrix) -> ExactSingleLink:
        """Cluster the documents.

        Parameters
        ----------
        shingle_sets : sequence of ndarray of uint64, or ShingleMatrix
            The shingle hashes of every document.

        Returns
        -------
        self
        """
        self.check_params()
        matrix = (
            shingle_sets
            if isinstance(shingle_sets, ShingleMatrix)
            else ShingleMatrix.from_sets(shingle_sets)
        )
        n = matrix.n_documents
        X = matrix.X
        if n >= 2 and X.shape[1]:
            df = np.sort(np.diff(X.tocsc().indptr))[::-1]
            self.n_dense_columns_ = choose_dense_columns(df, n)
        else:
            self.n_dense_columns_ = 0
        i, j, sim = threshold_edges(matrix, float(self.threshold), self.block_entries)
        self.n_edges_ = int(i.shape[0])
        self.linkage_matrix_, self.labels_ = single_linkage(n, i, j, sim)
        return self

    def fit_predict(self, shingle_sets: Sequence[np.ndarray] | ShingleMatrix) -> np.ndarray:
        """:meth:`fit` and return :attr:`labels_`."""
        return self.fit(shingle_sets).labels_
