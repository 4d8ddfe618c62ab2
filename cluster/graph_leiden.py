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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np

from cluster.base import (
    NONE,
    POSITIVE,
    SEED,
    THRESHOLD,
    Constraints,
    Estimator,
    Options,
    Predicate,
    check_param,
    is_int,
)
from cluster.single_link import ShingleMatrix, threshold_edges
from cluster.unionfind import canonical_labels
from core import defaults as D
from core.choices import QUALITIES
from core.exceptions import ParameterError

if TYPE_CHECKING:
    from core.settings import Settings

ITERATIONS = Predicate(
    lambda v: is_int(v) and v != 0, "a non-zero integer (negative: until stable)"
)
"""Leiden iterations per level."""

LEIDEN_CONSTRAINTS: Constraints = {
    "threshold": [THRESHOLD],
    "quality": [Options(QUALITIES)],
    "seed": [SEED],
    "max_neighbours": [POSITIVE, NONE],
    "n_iterations": [ITERATIONS],
}
"""The parameters every Leiden estimator shares (the resolution: :func:`check_quality`)."""

DEFAULT_RESOLUTION = D.LEIDEN_QUALITY_RESOLUTION
"""The resolution used when none is given (``core.defaults.LEIDEN_QUALITY_RESOLUTION``)."""


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
    role : {"finer", "clusters", "coarser"} or None
        In a hierarchy around one chosen partition (:func:`cluster.nested_leiden.
        refined_levels`, :func:`cluster.nested_leiden.merged_levels`): ``"clusters"`` the
        level that gives the clustering's labels, ``"finer"`` one that splits its
        clusters, ``"coarser"`` one that merges them; ``None`` elsewhere.
    """

    resolution: float
    n_clusters: int
    quality: float
    seconds: float
    labels: np.ndarray = field(repr=False)
    role: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The level without its labels, JSON-ready (``role`` only when it has one)."""
        out: dict[str, Any] = {
            "resolution": self.resolution,
            "n_clusters": self.n_clusters,
            "quality": round(self.quality, 6),
            "seconds": round(self.seconds, 4),
        }
        if self.role is not None:
            out["role"] = self.role
        return out


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


def modularity_resolution(settings: Settings, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The overrides of a Leiden estimator built from the settings, with ``resolution=None``
    when the quality is modularity and no resolution is given: modularity has none, and
    ``[cluster] resolution`` is the levels of ``rb`` and ``cpm``."""
    quality = overrides.get("quality", settings.cluster.quality)
    if quality == "modularity" and "resolution" not in overrides:
        return {**overrides, "resolution": None}
    return dict(overrides)


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


def edge_pairs(i: np.ndarray, j: np.ndarray) -> Iterator[tuple[int, int]]:
    """The edges ``(i[e], j[e])`` as python-igraph reads them fastest: an iterator of
    tuples of Python ints, consumed once by ``igraph.Graph(n, edges=...)`` or
    ``add_edges`` (374k edges: 0.07-0.09 s; a list of those tuples 0.13-0.18 s, an
    ``(E, 2)`` array 0.3-0.5 s; 5M edges: 1.9, 2.7 and 4.4 s), and no list of E tuples held.

    Examples
    --------
    >>> import numpy as np
    >>> list(edge_pairs(np.array([0, 1]), np.array([2, 3])))
    [(0, 2), (1, 3)]
    """
    return zip(np.asarray(i).tolist(), np.asarray(j).tolist(), strict=True)


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
        g.add_edges(edge_pairs(i, j))
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
    seed: int = D.MINHASH_SEED,
    n_iterations: int = D.LEIDEN_ITERATIONS,
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
    check_param("seed", seed, [SEED])
    check_param("n_iterations", n_iterations, [ITERATIONS])
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


class LeidenEstimator(Estimator):
    """What the Leiden estimators share: :data:`LEIDEN_CONSTRAINTS`, the resolution
    checked with the quality, and modularity taking no resolution from the settings."""

    quality: str
    resolution: float | Sequence[float] | None

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> Self:
        """The estimator of ``[cluster]`` and ``[minhash]`` (see
        :meth:`cluster.base.Estimator.from_settings`); modularity, which has no
        resolution, takes none from the settings."""
        return super().from_settings(settings, **modularity_resolution(settings, overrides))

    def _validate(self) -> None:
        check_quality(self.quality, self.resolution)


class ExactLeiden(LeidenEstimator):
    """Leiden on the exact Jaccard similarity graph of shingle sets.

    The defaults are those of :class:`cluster.lsh_leiden.LSHLeiden`, whose reference this
    is: ``[cluster]`` ``leiden_threshold``, ``resolution``, ``quality``,
    ``max_neighbours`` and ``[minhash] seed``.

    Parameters
    ----------
    threshold : float, default ``[cluster] leiden_threshold`` (0.02)
        The lowest Jaccard similarity kept as an edge (pairs with ``J > threshold``);
        in (0, 1).
    resolution : float, sequence of float or None, default ``[cluster] resolution``
        See :func:`check_quality`; several give nested levels (``None``: one level at
        :data:`DEFAULT_RESOLUTION`, the only choice of ``quality="modularity"``).
    quality : {"rb", "modularity", "cpm"}, default ``[cluster] quality`` ("rb")
    seed : int, default ``[minhash] seed`` (1)
        Seed of Leiden.
    max_neighbours : int or None, default ``[cluster] max_neighbours`` (20)
        Keep only the edges among the strongest ``max_neighbours`` of either end
        (:func:`sparsify_neighbours`); ``None`` keeps every edge above the threshold.
    n_iterations : int, default ``LEIDEN_ITERATIONS`` (2)
        Leiden iterations per level (negative: until stable).
    block_entries : int, default ``CLUSTER_BLOCK_ENTRIES`` (2**24)
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

    _parameter_constraints: ClassVar[Constraints] = {
        **LEIDEN_CONSTRAINTS,
        "block_entries": [POSITIVE],
    }
    _settings_keys: ClassVar[Mapping[str, str]] = {
        "threshold": "cluster.leiden_threshold",
        "resolution": "cluster.resolution",
        "quality": "cluster.quality",
        "seed": "minhash.seed",
        "max_neighbours": "cluster.max_neighbours",
    }
    _resource_params = ("block_entries",)

    def __init__(
        self,
        *,
        threshold: float = D.CLUSTER_LEIDEN_THRESHOLD,
        resolution: float | Sequence[float] | None = D.CLUSTER_RESOLUTION,
        quality: str = D.CLUSTER_QUALITY,
        seed: int = D.MINHASH_SEED,
        max_neighbours: int | None = D.CLUSTER_MAX_NEIGHBOURS,
        n_iterations: int = D.LEIDEN_ITERATIONS,
        block_entries: int = D.CLUSTER_BLOCK_ENTRIES,
    ) -> None:
        self.threshold = threshold
        self.resolution = resolution
        self.quality = quality
        self.seed = seed
        self.max_neighbours = max_neighbours
        self.n_iterations = n_iterations
        self.block_entries = block_entries

    def fit(self, shingle_sets: Sequence[np.ndarray] | ShingleMatrix) -> ExactLeiden:
        """Find every pair above the threshold, then run Leiden.

        Parameters
        ----------
        shingle_sets : sequence of ndarray of uint64, or ShingleMatrix

        Returns
        -------
        self
        """
        self.check_params()
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


def isolated_count(n: int, i: np.ndarray, j: np.ndarray) -> int:
    """Number of the ``n`` nodes that are the end of no edge."""
    if n == 0:
        return 0
    touched = np.zeros(n, dtype=bool)
    touched[np.asarray(i, dtype=np.int64)] = True
    touched[np.asarray(j, dtype=np.int64)] = True
    return int(n - touched.sum())
