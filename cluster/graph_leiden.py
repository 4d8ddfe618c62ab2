"""Leiden community detection on a weighted similarity graph of documents.

The Leiden algorithm (Traag, Waltman & van Eck 2019) moves nodes between communities
to raise a quality function, *refines* every community so that it stays well connected
(which Louvain does not guarantee), aggregates the refined communities into nodes and
repeats. It is the clustering of VOSviewer. This module runs it with ``leidenalg`` on a
``python-igraph`` graph whose nodes are documents and whose edge weights are their
similarities, for three quality functions (:data:`QUALITIES`):

``"rb"``
    Reichardt & Bornholdt's configuration model,
    ``Q = Σ_ij (A_ij - γ k_i k_j / 2m) δ(c_i, c_j)``; ``γ = 1`` is modularity, smaller
    ``γ`` gives fewer, larger communities.
``"modularity"``
    Newman-Girvan modularity (``"rb"`` at ``γ = 1``; no resolution of its own).
``"cpm"``
    the Constant Potts Model, ``Q = Σ_c (e_c - γ n_c (n_c - 1) / 2)``: a community's
    inner edge weight must exceed ``γ`` per pair of members, so ``γ`` is a density in
    similarity units, independent of the graph's size (no resolution limit).

Several resolutions give the levels of a hierarchy. They are run from the finest (the
largest ``γ``) to the coarsest, each level optimising the graph *aggregated* by the
level before (leidenalg's ``aggregate_partition``), so the levels are nested: a
cluster of a coarser level is a union of clusters of the finer one.

:func:`sparsify_neighbours` keeps, optionally, only the edges that are among the ``k``
strongest of either end (the union k-nearest-neighbour graph, as single-cell
analysis does before Leiden); on text this both speeds Leiden up and sharpens the
communities, since the many weak edges of frequent vocabulary otherwise tie topics
together.

:class:`ExactLeiden` is Leiden on the exact Jaccard graph (every pair above the
threshold, found as :class:`cluster.single_link.ExactSingleLink` finds them); it is the
reference for :class:`cluster.lsh_leiden.LSHLeiden`, which only looks at LSH candidates.

Complexity: one Leiden iteration is about O(E) for E edges (measured near-linear;
Traag et al. 2019); building the igraph graph O(n + E); :func:`sparsify_neighbours`
O(E log E). Memory O(n + E). The exact graph costs what
:func:`cluster.single_link.threshold_edges` costs.

References
----------
V. A. Traag, L. Waltman, N. J. van Eck, "From Louvain to Leiden: guaranteeing
well-connected communities", *Scientific Reports* 9 (2019) 5233.
J. Reichardt, S. Bornholdt, "Statistical mechanics of community detection",
*Physical Review E* 74 (2006) 016110.
V. A. Traag, P. Van Dooren, Y. Nesterov, "Narrow scope for resolution-limit-free
community detection", *Physical Review E* 84 (2011) 016114 (CPM).

Examples
--------
>>> import numpy as np
>>> i = np.array([0, 0, 1, 3, 3, 4, 2])
>>> j = np.array([1, 2, 2, 4, 5, 5, 3])
>>> w = np.array([0.9, 0.8, 0.9, 0.9, 0.8, 0.9, 0.1])
>>> levels = leiden_levels(6, i, j, w, quality="rb", resolutions=[1.0], seed=1)
>>> levels[0].labels.tolist()
[0, 0, 0, 1, 1, 1]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cluster.single_link import ShingleMatrix, threshold_edges
from cluster.unionfind import canonical_labels
from core.exceptions import ParameterError

QUALITIES = ("rb", "modularity", "cpm")
"""The quality functions Leiden can optimise."""

DEFAULT_RESOLUTION = {"rb": 0.2, "modularity": 1.0, "cpm": 0.05}
"""The resolution used when none is given (``rb`` and ``cpm`` chosen by ``bench/linkage.py``)."""


@dataclass
class LeidenLevel:
    """One level (one resolution) of a Leiden hierarchy.

    Attributes
    ----------
    resolution : float
        ``γ`` of the quality function (1.0 for modularity).
    n_clusters : int
        Communities, isolated documents included.
    quality : float
        The quality function's value at the partition found.
    seconds : float
        Time of this level's optimisation.
    labels : ndarray of int
        Canonical labels (clusters numbered in order of their first document).
    """

    resolution: float
    n_clusters: int
    quality: float
    seconds: float
    labels: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The level without its labels, JSON-ready."""
        return {
            "resolution": self.resolution,
            "n_clusters": self.n_clusters,
            "quality": round(self.quality, 6),
            "seconds": round(self.seconds, 4),
        }


def check_quality(quality: str, resolution: float | Sequence[float] | None) -> list[float]:
    """Validate a quality function and its resolution(s); return the resolutions, finest first.

    Parameters
    ----------
    quality : str
        One of :data:`QUALITIES`.
    resolution : float, sequence of float, or None
        ``None``: :data:`DEFAULT_RESOLUTION`. Modularity takes no resolution other
        than 1.

    Returns
    -------
    list of float
        Distinct resolutions, largest (finest) first.

    Raises
    ------
    ParameterError
        Unknown quality, a resolution <= 0, an empty list, or a resolution given to
        modularity.

    Examples
    --------
    >>> check_quality("rb", [0.1, 0.5, 0.1])
    [0.5, 0.1]
    """
    if quality not in QUALITIES:
        raise ParameterError(f"quality must be one of {', '.join(QUALITIES)}; got {quality!r}")
    if resolution is None:
        return [DEFAULT_RESOLUTION[quality]]
    values = [resolution] if isinstance(resolution, int | float) else list(resolution)
    if not values:
        raise ParameterError("resolution is an empty list: give one value or more (or None)")
    out: list[float] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
            raise ParameterError(f"every resolution must be a number > 0, got {v!r}")
        out.append(float(v))
    if quality == "modularity" and out != [1.0]:
        raise ParameterError(
            "modularity has no resolution parameter (it is quality='rb' at resolution 1): "
            "use quality='rb' to choose a resolution"
        )
    return sorted(set(out), reverse=True)


def sparsify_neighbours(
    n: int, i: np.ndarray, j: np.ndarray, w: np.ndarray, k: int | None
) -> np.ndarray:
    """Mask of the edges among the ``k`` strongest of either end (union k-NN graph).

    Parameters
    ----------
    n : int
        Number of nodes.
    i, j : ndarray of int
        Edge ends.
    w : ndarray of float
        Edge weights.
    k : int or None
        Neighbours kept per node; ``None`` keeps every edge. Ties go to the edge listed
        first, so the result is deterministic.

    Returns
    -------
    ndarray of bool
        One flag per edge.

    Examples
    --------
    >>> import numpy as np
    >>> i, j = np.array([0, 0, 0, 1]), np.array([1, 2, 3, 2])
    >>> w = np.array([0.9, 0.5, 0.2, 0.8])
    >>> sparsify_neighbours(4, i, j, w, 1).tolist()
    [True, False, True, True]
    """
    m = int(np.asarray(i).shape[0])
    if k is None or m == 0:
        return np.ones(m, dtype=bool)
    ends = np.concatenate([i, j]).astype(np.int64)
    weights = np.concatenate([w, w])
    edge = np.concatenate([np.arange(m), np.arange(m)])
    order = np.lexsort((edge, -weights, ends))
    ends, edge = ends[order], edge[order]
    first = np.searchsorted(ends, np.arange(n))
    rank = np.arange(2 * m) - first[ends]
    keep = np.zeros(m, dtype=bool)
    keep[edge[rank < k]] = True
    return keep


def build_graph(n: int, i: np.ndarray, j: np.ndarray, w: np.ndarray) -> Any:
    """An undirected igraph graph of ``n`` nodes with edge attribute ``weight``.

    Parameters
    ----------
    n : int
    i, j : ndarray of int
    w : ndarray of float

    Returns
    -------
    igraph.Graph
    """
    import igraph as ig

    g = ig.Graph(n=n, directed=False)
    if len(i):
        g.add_edges(np.column_stack([i, j]).astype(np.int64))
        g.es["weight"] = np.asarray(w, dtype=np.float64).tolist()
    return g


def _partition(graph: Any, quality: str, resolution: float) -> Any:
    import leidenalg as la

    weights = "weight" if graph.ecount() else None
    if quality == "rb":
        return la.RBConfigurationVertexPartition(
            graph, weights=weights, resolution_parameter=resolution
        )
    if quality == "cpm":
        return la.CPMVertexPartition(graph, weights=weights, resolution_parameter=resolution)
    return la.ModularityVertexPartition(graph, weights=weights)


def leiden_levels(
    n: int,
    i: np.ndarray,
    j: np.ndarray,
    w: np.ndarray,
    *,
    quality: str = "rb",
    resolutions: float | Sequence[float] | None = None,
    seed: int = 1,
    n_iterations: int = 2,
    graph: Any = None,
) -> list[LeidenLevel]:
    """Leiden at one or more resolutions on a weighted graph; nested levels, finest first.

    Parameters
    ----------
    n : int
        Number of nodes (documents); nodes without edges stay alone.
    i, j : ndarray of int
        Edge ends (each undirected edge once).
    w : ndarray of float
        Edge weights (similarities, > 0).
    quality : {"rb", "modularity", "cpm"}, default "rb"
    resolutions : float or sequence of float, optional
        See :func:`check_quality`.
    seed : int, default 1
        Seed of leidenalg's random number generator: the same graph and seed give the
        same levels.
    n_iterations : int, default 2
        Leiden iterations per level; a negative number iterates until no node moves.
    graph : igraph.Graph, optional
        The graph already built by :func:`build_graph` from the same edges.

    Returns
    -------
    list of LeidenLevel
        From the largest resolution to the smallest; each level's clusters are unions
        of the clusters of the level before.

    Raises
    ------
    ParameterError
        A bad quality, resolution, seed or iteration count.
    """
    import leidenalg as la

    res = check_quality(quality, resolutions)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**31:
        raise ParameterError(f"seed must be an integer in 0..2**31-1, got {seed!r}")
    if isinstance(n_iterations, bool) or not isinstance(n_iterations, int) or n_iterations == 0:
        raise ParameterError(
            "n_iterations must be a non-zero integer (negative: until stable), "
            f"got {n_iterations!r}"
        )
    if n == 0:
        return [LeidenLevel(r, 0, 0.0, 0.0, np.empty(0, dtype=np.int64)) for r in res]
    if graph is None:
        graph = build_graph(n, i, j, w)
    optimiser = la.Optimiser()
    optimiser.set_rng_seed(int(seed))
    levels: list[LeidenLevel] = []
    node_of_doc = np.arange(n, dtype=np.int64)  # document -> node of the current graph
    partition = None
    for r in res:
        t0 = time.perf_counter()
        if partition is None:
            partition = _partition(graph, quality, r)
        else:  # nest: node c of the aggregate is community c of the level before
            node_of_doc = np.asarray(partition.membership, dtype=np.int64)[node_of_doc]
            partition = partition.aggregate_partition()
            partition.resolution_parameter = r
        optimiser.optimise_partition(partition, n_iterations=n_iterations)
        labels = canonical_labels(np.asarray(partition.membership, dtype=np.int64)[node_of_doc])
        levels.append(
            LeidenLevel(
                resolution=r,
                n_clusters=int(labels.max()) + 1,
                quality=float(partition.quality()),
                seconds=time.perf_counter() - t0,
                labels=labels,
            )
        )
    return levels


class ExactLeiden:
    """Leiden on the exact Jaccard similarity graph of shingle sets.

    Parameters
    ----------
    threshold : float, default 0.2
        The lowest Jaccard similarity kept as an edge (pairs with ``J > threshold``);
        in (0, 1).
    resolution : float or sequence of float, optional
        See :func:`check_quality`; several give nested levels.
    quality : {"rb", "modularity", "cpm"}, default "rb"
    seed : int, default 1
    max_neighbours : int or None, default 20
        Keep only the edges among the strongest ``max_neighbours`` of either end
        (:func:`sparsify_neighbours`); ``None`` keeps every edge above the threshold.
    n_iterations : int, default 2
        Leiden iterations per level (negative: until stable).
    block_entries : int, default 2**24
        Block size of the exact pair search (see
        :func:`cluster.single_link.threshold_edges`).

    Attributes
    ----------
    labels_ : ndarray of int
        The clusters of the last (coarsest) level.
    levels_ : list of LeidenLevel
        Every resolution's clusters, finest first, nested.
    graph_stats_ : dict
        ``nodes``, ``pairs_above_threshold``, ``edges`` (after sparsifying),
        ``isolated`` (nodes without an edge) and the seconds of each phase.

    Raises
    ------
    ParameterError
        From :meth:`fit`: a parameter outside what is allowed (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.arange(100, dtype=np.uint64), np.arange(1000, 1100, dtype=np.uint64)
    >>> sets = [a, a[5:], a[:90], b, b[3:], b[:95]]
    >>> ExactLeiden(threshold=0.5, resolution=1.0).fit(sets).labels_.tolist()
    [0, 0, 0, 1, 1, 1]
    """

    def __init__(
        self,
        *,
        threshold: float = 0.2,
        resolution: float | Sequence[float] | None = None,
        quality: str = "rb",
        seed: int = 1,
        max_neighbours: int | None = 20,
        n_iterations: int = 2,
        block_entries: int = 1 << 24,
    ) -> None:
        self.threshold = threshold
        self.resolution = resolution
        self.quality = quality
        self.seed = seed
        self.max_neighbours = max_neighbours
        self.n_iterations = n_iterations
        self.block_entries = block_entries

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters (scikit-learn style)."""
        return {
            "threshold": self.threshold,
            "resolution": self.resolution,
            "quality": self.quality,
            "seed": self.seed,
            "max_neighbours": self.max_neighbours,
            "n_iterations": self.n_iterations,
            "block_entries": self.block_entries,
        }

    def _validate(self) -> None:
        if not isinstance(self.threshold, int | float) or not 0.0 < self.threshold < 1.0:
            raise ParameterError(f"threshold must be in (0, 1), got {self.threshold!r}")
        check_max_neighbours(self.max_neighbours)
        check_quality(self.quality, self.resolution)

    def fit(self, shingle_sets: Sequence[np.ndarray] | ShingleMatrix) -> ExactLeiden:
        """Find every pair above the threshold, then run Leiden.

        Parameters
        ----------
        shingle_sets : sequence of ndarray of uint64, or ShingleMatrix

        Returns
        -------
        self
        """
        self._validate()
        t0 = time.perf_counter()
        matrix = (
            shingle_sets
            if isinstance(shingle_sets, ShingleMatrix)
            else ShingleMatrix.from_sets(shingle_sets)
        )
        n = matrix.n_documents
        i, j, s = threshold_edges(matrix, float(self.threshold), self.block_entries)
        t1 = time.perf_counter()
        keep = sparsify_neighbours(n, i, j, s, self.max_neighbours)
        stats: dict[str, Any] = {"nodes": n, "pairs_above_threshold": int(i.shape[0])}
        i, j, s = i[keep], j[keep], s[keep]
        graph = build_graph(n, i, j, s)
        t2 = time.perf_counter()
        self.levels_ = leiden_levels(
            n, i, j, s,
            quality=self.quality, resolutions=self.resolution, seed=int(self.seed),
            n_iterations=self.n_iterations, graph=graph,
        )  # fmt: skip
        t3 = time.perf_counter()
        stats.update(
            edges=int(i.shape[0]),
            isolated=isolated_count(n, i, j),
            seconds={
                "pairs": round(t1 - t0, 4),
                "graph": round(t2 - t1, 4),
                "leiden": round(t3 - t2, 4),
            },
        )
        self.graph_stats_ = stats
        self.labels_ = self.levels_[-1].labels
        return self

    def fit_predict(self, shingle_sets: Sequence[np.ndarray] | ShingleMatrix) -> np.ndarray:
        """:meth:`fit` and return :attr:`labels_`."""
        return self.fit(shingle_sets).labels_


def check_max_neighbours(k: int | None) -> None:
    """Raise :class:`~core.exceptions.ParameterError` unless ``k`` is None or >= 1."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1):
        raise ParameterError(f"max_neighbours must be a positive integer or None, got {k!r}")


def isolated_count(n: int, i: np.ndarray, j: np.ndarray) -> int:
    """Number of the ``n`` nodes that are the end of no edge."""
    if n == 0:
        return 0
    touched = np.zeros(n, dtype=bool)
    touched[np.asarray(i, dtype=np.int64)] = True
    touched[np.asarray(j, dtype=np.int64)] = True
    return int(n - touched.sum())
