"""Union-find (disjoint sets) and the single-link dendrogram of a weighted edge list.

Single linkage over a graph equals Kruskal's algorithm over its minimum spanning
forest (Gower & Ross 1969): the merges of the dendrogram are the forest's edges in
order of decreasing similarity. :func:`single_linkage` first reduces the edges to a
spanning forest with :func:`scipy.sparse.csgraph.minimum_spanning_tree`, then runs
Kruskal with :class:`UnionFind` over at most n - 1 edges, and writes the merges in
SciPy's linkage format.

Complexity: :class:`UnionFind` operations in O(α(n)) amortised (path halving, union by
size); :func:`single_linkage` O(E log E) time and O(n + E) memory for E edges;
:func:`connected_labels` O(n + E).

References
----------
J. C. Gower, G. J. S. Ross, "Minimum spanning trees and single linkage cluster
analysis", *Applied Statistics* 18 (1969) 54-64.

Examples
--------
>>> import numpy as np
>>> i, j, sim = np.array([0, 2]), np.array([1, 3]), np.array([0.9, 0.5])
>>> Z, labels = single_linkage(5, i, j, sim)
>>> labels.tolist()
[0, 0, 1, 1, 2]
>>> Z[:2].tolist()
[[0.0, 1.0, 0.09999999999999998, 2.0], [2.0, 3.0, 0.5, 2.0]]
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree


class UnionFind:
    """Disjoint sets over ``0 .. n-1`` with path halving and union by size.

    Examples
    --------
    >>> uf = UnionFind(3)
    >>> uf.union(0, 2)
    True
    >>> uf.find(2) == uf.find(0), uf.union(2, 0)
    (True, False)
    """

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.size = [1] * n

    def find(self, x: int) -> int:
        """The representative of ``x``'s set."""
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> bool:
        """Join the sets of ``a`` and ``b``; ``False`` when they were already one set."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel clusters ``0, 1, ...`` in order of their first document.

    Examples
    --------
    >>> canonical_labels(np.array([7, 3, 7, 5])).tolist()
    [0, 1, 0, 2]
    """
    labels = np.asarray(labels)
    if labels.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inverse.reshape(-1)]


def connected_labels(n: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Canonical labels of the connected components of the graph with edges ``(i, j)``."""
    if n == 0:
        return np.empty(0, dtype=np.int64)
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    graph = coo_matrix((np.ones(i.shape[0], dtype=np.int8), (i, j)), shape=(n, n)).tocsr()
    _, labels = connected_components(graph, directed=False)
    return canonical_labels(labels)


def _dedupe_edges(
    n: int, i: np.ndarray, j: np.ndarray, sim: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct undirected edges as sorted codes ``min*n + max``, each with its largest sim."""
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keep = lo != hi
    codes = lo[keep] * np.int64(n) + hi[keep]
    sim = sim[keep]
    order = np.lexsort((-sim, codes))
    codes, sim = codes[order], sim[order]
    first = np.r_[True, codes[1:] != codes[:-1]] if codes.shape[0] else np.zeros(0, bool)
    return codes[first], sim[first]


def single_linkage(
    n: int, i: np.ndarray, j: np.ndarray, sim: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The single-link dendrogram of ``n`` points joined by weighted edges.

    Parameters
    ----------
    n : int
        Number of points.
    i, j : ndarray of int
        Edge end points (any order; duplicates keep their largest similarity; loops
        are ignored).
    sim : ndarray of float
        Edge similarity in [0, 1]; 1 (identical documents, distance 0) links too.

    Returns
    -------
    Z : ndarray of shape (n - 1, 4)
        SciPy linkage matrix: rows ``[a, b, 1 - similarity, size]`` in merge order, so
        that ``scipy.cluster.hierarchy.fcluster(Z, 1 - s, "distance")`` cuts at
        similarity ``s`` and ``dendrogram(Z)`` draws it. Components the edges leave
        apart are joined last at height 1.0 (similarity 0), so the tree is complete.
    labels : ndarray of int, shape (n,)
        Canonical labels of the connected components of the edges.
    """
    if n <= 1:
        return np.empty((0, 4), dtype=np.float64), np.zeros(n, dtype=np.int64)
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    sim = np.asarray(sim, dtype=np.float64)
    codes, sim = _dedupe_edges(n, i, j, sim)
    ei, ej = codes // n, codes % n
    if codes.shape[0]:
        # weights 2 - sim >= 1: strictly positive, so identical documents stay linked
        graph = coo_matrix((2.0 - sim, (ei, ej)), shape=(n, n)).tocsr()
        forest = minimum_spanning_tree(graph).tocoo()
        fi = np.minimum(forest.row, forest.col).astype(np.int64)
        fj = np.maximum(forest.row, forest.col).astype(np.int64)
        fcodes = fi * np.int64(n) + fj
        fsim = sim[np.searchsorted(codes, fcodes)]
        order = np.lexsort((fcodes, -fsim))
        fi, fj, fsim = fi[order], fj[order], fsim[order]
    else:
        fi = fj = np.empty(0, dtype=np.int64)
        fsim = np.empty(0, dtype=np.float64)
    uf = UnionFind(n)
    node = list(range(n))  # the linkage id of every set's current node, at its root
    Z = np.empty((n - 1, 4), dtype=np.float64)
    k = 0
    for a, b, s in zip(fi.tolist(), fj.tolist(), fsim.tolist(), strict=True):
        ra, rb = uf.find(a), uf.find(b)
        if ra == rb:
            continue
        na, nb = node[ra], node[rb]
        uf.union(ra, rb)
        root = uf.find(ra)
        Z[k] = (min(na, nb), max(na, nb), 1.0 - s, uf.size[root])
        node[root] = n + k
        k += 1
    labels_raw = np.fromiter((uf.find(x) for x in range(n)), dtype=np.int64, count=n)
    labels = canonical_labels(labels_raw)
    roots = sorted({uf.find(x) for x in range(n)})
    acc = roots[0]
    for r in roots[1:]:
        na, nb = node[acc], node[r]
        uf.union(acc, r)
        root = uf.find(acc)
        Z[k] = (min(na, nb), max(na, nb), 1.0, uf.size[root])
        node[root] = n + k
        acc = root
        k += 1
    return Z, labels
