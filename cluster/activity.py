"""Activity clustering: tf-idf documents, an LSH k-nearest-neighbour graph, Leiden levels.

Sites of the same kind of activity share few words *in proportion to their size*, so the
Jaccard similarity of unweighted word sets (a near-duplicate measure) leaves most of
them alone under a global threshold and chains them together below it. This estimator
groups documents by kind of activity instead:

1. **Weighted terms.** Texts become term counts (:class:`extract.terms.TermCounter`:
   stemmed 1-word terms per language, stop words out) and the counts one count matrix
   (:class:`cluster.weighting.CountsBuilder`; the cluster stage streams the stored counts
   from the database into it batch by batch and passes the
   :class:`~cluster.weighting.TermCountMatrix`), then L2-normalised tf-idf vectors
   with sublinear tf and idf from the corpus being clustered
   (:class:`cluster.weighting.TfidfWeighting`; ``min_df`` and ``max_df`` drop the terms
   that cannot link documents or that every site shares).
2. **Neighbours.** ``candidates="auto"`` (the default) compares every pair exactly
   (:func:`cluster.knn.exact_knn`, blocked and threaded) while that is cheap
   (:data:`EXACT_WORK`, up to about 200,000 documents) and runs NN-descent
   (:func:`cluster.knn.nndescent_knn`, PyNNDescent) above, the choice of
   ``bench/knn.py``. ``"wminhash"``: candidates by Ioffe's consistent weighted sampling
   (:class:`cluster.weighted_minhash.WeightedMinHasher`) and LSH banding with capped
   buckets (:func:`cluster.knn.bucket_candidates`); ``"simhash"`` random hyperplanes
   instead; ``"exact"`` always compares every pair.
3. **A k-nearest-neighbour graph.** Every document keeps its ``n_neighbors`` most similar
   (exact cosine); with LSH candidates, improved by rounds of local join
   (:mod:`cluster.knn`). Documents with no weighted term are grouped with their exact
   duplicates (same term set) or stay alone.
4. **Leiden, then one k-means step.** Leiden (Traag et al. 2019; igraph's
   implementation, :func:`cluster.nested_leiden.igraph_leiden`) on the union k-NN graph,
   cosine weights, at the smallest ``resolution``; then each document moves to the
   cluster of one of its neighbours whose centroid it is more similar to than to its own
   cluster's without itself (``reassign`` passes, :mod:`cluster.reassign`): the clusters
   (``labels_``).
5. **Levels.** Each larger resolution splits every cluster on its own subgraph into
   sub-themes (:func:`cluster.nested_leiden.split_levels`), and each ``coarser``
   resolution merges whole clusters into broader groups
   (:func:`cluster.nested_leiden.merged_levels`), so the levels are nested, finest first,
   and the clusters are neither the finest nor the coarsest the analyst can look at.

Steps 1-4 are the estimator's named steps, as in a scikit-learn ``Pipeline``:
``weighting`` (:class:`~cluster.weighting.TfidfWeighting`), ``neighbours``
(:class:`~cluster.knn.KNeighbours`), ``communities``
(:class:`~cluster.nested_leiden.LeidenCommunities`, which also makes the levels of step 5)
and ``reassignment`` (:class:`~cluster.reassign.CentroidReassignment`). Each is built from
the clusterer's own parameters unless one is given (``set_params(neighbours=...)``,
``set_params(communities__seed=3)``, ``"passthrough"``; see :class:`ActivityClusterer`),
so a benchmark swaps a step instead of copying the code around it.

The defaults were chosen by leave-one-corpus-out over nine labelled corpora
(``bench/activity.py``, ``bench/results/activity.md``); no corpus has a setting of its own.

Complexity: tokenising O(L) for L characters; weighting O(N) for N (document, term)
entries; neighbours O(Σ_t df(t)² + n²) exact (below :data:`EXACT_WORK`), about
O(n^1.1 · k · d̄) by NN-descent for d̄ non-zeros a row; with LSH, signatures O(m · N),
candidates O(n · b · max_bucket), similarities O((C + refine · n · k²) · d̄) for C
candidate pairs; Leiden about O(n · k) per iteration; a reassignment pass O(N + n · c · d̄
· log s) (:mod:`cluster.reassign`). Memory O(N + n · k) besides the
exact step's dense blocks (O(threads · block · n)); never O(n²). Given a count matrix,
no per-document Python object is made (1,000,000 documents: ``bench/million.py``).

References
----------
S. Ioffe, "Improved Consistent Sampling, Weighted Minhash and L1 Sketching", ICDM 2010.
W. Dong, M. Charikar, K. Li, "Efficient k-nearest neighbor graph construction for generic
similarity measures", WWW 2011.
V. A. Traag, L. Waltman, N. J. van Eck, "From Louvain to Leiden: guaranteeing
well-connected communities", *Scientific Reports* 9 (2019) 5233.
M. Maier, M. Hein, U. von Luxburg, "Optimal construction of k-nearest-neighbor graphs
for identifying noisy clusters", *Theoretical Computer Science* 410 (2009) 1749-1764.
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed 000_d819228b9213e10a.txt (the
task: the external web environment of universities grouped by kind of activity).

Examples
--------
>>> texts = ["football match goal league team", "league team goal cup football",
...          "team football cup league goal", "bank shares market interest rates",
...          "market interest bank rates stock", "rates shares stock bank market"]
>>> model = ActivityClusterer(n_neighbors=2, min_df=1, max_df=1.0).fit(texts)
>>> model.labels_.tolist()
[0, 0, 0, 1, 1, 1]
>>> model.fit([]).labels_.tolist()
[]
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from cluster.base import NONE, Constraints, Estimator, Options, Predicate
from cluster.graph_leiden import LeidenLevel, check_quality
from cluster.knn import (
    EXACT_WORK,
    NEIGHBOUR_CONSTRAINTS,
    KNeighbours,
    auto_neighbours,
    exact_work,
)
from cluster.nested_leiden import (
    COMMUNITY_CONSTRAINTS,
    LeidenCommunities,
    coarser_resolutions,
    igraph_leiden,
    modularity,
    refined_levels,
)
from cluster.reassign import CentroidReassignment, cluster_sums
from cluster.unionfind import canonical_labels
from cluster.weighting import DF_CONSTRAINTS, CountsBuilder, TermCountMatrix, TfidfWeighting
from core import defaults as D
from core.choices import CANDIDATES
from core.exceptions import ParameterError

# igraph_leiden, modularity and refined_levels live in cluster.nested_leiden
__all__ = [
    "CANDIDATES",
    "EXACT_WORK",
    "STEPS",
    "ActivityClusterer",
    "auto_neighbours",
    "exact_work",
    "igraph_leiden",
    "modularity",
    "refined_levels",
    "step_settings_keys",
    "weighted_terms",
]

Document = str | Mapping[str, int]

STEPS = ("weighting", "neighbours", "communities", "reassignment")
"""The clusterer's steps, in the order :meth:`ActivityClusterer.fit` runs them."""

PASSTHROUGH = "passthrough"
"""A step left out: ``weighting`` (the documents are the weighted matrix already) or
``reassignment`` (Leiden's clusters as found), as in scikit-learn's ``Pipeline``."""

DEFAULT_STEPS: dict[str, tuple[type[Estimator], dict[str, str]]] = {
    "weighting": (TfidfWeighting, {"min_df": "min_df", "max_df": "max_df"}),
    "neighbours": (KNeighbours, {name: name for name in NEIGHBOUR_CONSTRAINTS}),
    "communities": (
        LeidenCommunities,
        {name: name for name in ("resolution", "coarser", "quality", "n_iterations", "seed")},
    ),
    "reassignment": (CentroidReassignment, {"passes": "reassign"}),
}
"""Each step's default: its class and, for each of its parameters, the clusterer's
parameter it takes (``reassignment``'s ``passes`` is the clusterer's ``reassign``)."""


def step_settings_keys(
    steps: Mapping[str, tuple[type[Estimator], Mapping[str, str]]],
) -> dict[str, str]:
    """The settings keys of the clusterer's parameters that its steps read: each step's
    ``_settings_keys`` under the clusterer's names for the step's parameters (so that
    :class:`ActivityClusterer` and, say, :class:`~cluster.knn.KNeighbours` cannot read a
    parameter from different settings).

    >>> keys = step_settings_keys(DEFAULT_STEPS)
    >>> keys["n_neighbors"], keys["reassign"]
    ('activity.n_neighbors', 'activity.reassign')
    """
    return {
        ours: cls._settings_keys[theirs]
        for cls, names in steps.values()
        for theirs, ours in names.items()
        if theirs in cls._settings_keys
    }


def _has(*methods: str) -> Predicate:
    what = " and ".join(f"{m}()" for m in methods)
    return Predicate(lambda v: all(callable(getattr(v, m, None)) for m in methods),
                     f"a step with {what}")  # fmt: skip


STEP_CONSTRAINTS: Constraints = {
    "weighting": [NONE, Options((PASSTHROUGH,)), _has("fit_transform")],
    "neighbours": [NONE, _has("fit")],
    "communities": [NONE, _has("fit", "levels", "resolutions", "n_levels")],
    "reassignment": [NONE, Options((PASSTHROUGH,)), _has("fit")],
}


class ActivityClusterer(Estimator):
    """Group documents by kind of activity (tf-idf, LSH k-NN graph, Leiden).

    The defaults are the settings' ``[activity]`` (chosen by leave-one-corpus-out,
    ``bench/results/activity.md``): ``ActivityClusterer()`` is what ``webometrics
    cluster`` runs (:meth:`from_settings` with the run's settings).

    Parameters
    ----------
    n_neighbors : int or "auto", default "auto"
        Neighbours kept per document (``k``); at most ``n - 1`` are used. ``"auto"``:
        :func:`auto_neighbours` (``round(2.5 ln n)``, 16 for 600 documents, 25 for
        20,000), since a k-NN graph needs k to grow like ``log n`` to keep the
        documents of one kind connected as the corpus grows (Maier, Hein & von Luxburg
        2009).
    resolution : float or sequence of float, default (2.0, 1.0)
        Leiden resolutions (``quality="rb"``: modularity at 1), one nested level each,
        finest first; the smallest gives ``labels_`` (the level whose ``role`` is
        ``"clusters"``).
    coarser : float or sequence of float, default (0.5,)
        Coarser levels as factors of the clusters' resolution (the smallest
        ``resolution``; 1 for ``quality="modularity"``), each between 0 and 1: one more
        level each at that resolution × factor, merging whole clusters of the level
        before (``role`` ``"coarser"``), stored for the analyst; ``()`` for none. They
        never change ``labels_``. No label-free rule measured chose a better grain than
        resolution 1 (``bench/results/grain.md``), so the coarser grain is offered, not
        chosen.
    quality : {"rb", "modularity", "cpm"}, default "rb"
    n_iterations : int, default 5
        Leiden iterations per level (negative: until no node moves). Five reached the
        class F of iterating to the end on the nine labelled corpora (mean 0.6647 against
        0.6652 over three seeds, equal on seven) in half the time at 20,000 stories.
    min_df : int, default 2
        Terms in fewer documents carry no weight.
    max_df : float, default 1.0
        Terms in more than this share of the documents carry no weight (1.0: none is cut;
        the smoothed idf already weighs a term of every document 1 against up to
        ``ln n + 1`` for a rare one, and cutting at 0.5 or 0.2 lowered class F in the
        leave-one-corpus-out measurements).
    candidates : {"auto", "exact", "nndescent", "wminhash", "simhash"}, default "auto"
        How candidate neighbours are found (:data:`core.choices.CANDIDATES`, see the
        module docstring); ``exact`` and ``nndescent`` force what ``auto`` chooses
        between (e.g. NN-descent to bound the time of a corpus just under the limit).
        ``auto``: ``exact`` (:func:`cluster.knn.exact_knn`) when :func:`exact_work` is at
        most :data:`EXACT_WORK`, else NN-descent (:func:`cluster.knn.nndescent_knn`,
        ``graph_stats_["candidates"] == "nndescent"``): at least 0.95 recall of the exact
        graph in less time than brute force at every size (``bench/results/knn.md``).
    num_perm : int, default 64
        Samples of the weighted MinHash (bits of the SimHash).
    rows : int, default 1
        Samples per LSH band (``simhash``: bits per band, e.g. 8).
    max_bucket : int, default 10
        Bucket cap of the banding (:func:`cluster.knn.bucket_candidates`).
    refine : int, default 1
        NN-descent local-join rounds after the LSH candidates.
    reassign : int, default 1
        Passes of centroid reassignment after Leiden (:mod:`cluster.reassign`): each
        document moves to the cluster of one of its neighbours whose centroid it is more
        similar to than to its own cluster's without itself; 0 keeps Leiden's clusters.
        One pass raised the mean class F over five seeds on 8 of the 9 labelled corpora
        (by 0.0097 on average) and lowered it on Lenta.ru by 0.006, and leave-one-corpus-out
        chose one pass of 0 to 3 for every corpus (``bench/results/alternatives.md``);
        more passes drift toward k-means' partition. The finer levels are split from the
        reassigned clusters, so the levels stay nested.
    seed : int, default 1
        Seed of the signatures, the bucket shuffles and Leiden.
    n_jobs : int, default 1
        Threads of the neighbour step (``-1``: every core; from the settings ``[minhash]
        workers``). The exact and LSH graphs do not depend on it; the NN-descent graph of a
        large corpus is the same for the same ``seed`` and ``n_jobs``.
    weighting : step, "passthrough" or None, default None
        The weighting step: ``fit_transform(counts)`` of a
        :class:`~cluster.weighting.TermCountMatrix` gives the L2-normalised rows, and
        ``vocabulary_`` their terms. ``None``: ``TfidfWeighting(min_df, max_df)``;
        ``"passthrough"``: the documents given to :meth:`fit` are the weighted matrix.
    neighbours : step or None, default None
        The neighbour step: ``fit(X)`` sets ``graph_`` (a
        :class:`~cluster.knn.KNNGraph`) and ``edges_`` (``(i, j, w)``). ``None``:
        :class:`~cluster.knn.KNeighbours` with ``n_neighbors``, ``candidates``,
        ``num_perm``, ``rows``, ``max_bucket``, ``refine``, ``seed`` and ``n_jobs``.
    communities : step or None, default None
        The community step: ``fit((n, i, j, w))`` sets ``clusters_`` (a
        :class:`~cluster.graph_leiden.LeidenLevel`), ``levels(graph, clusters)`` the
        levels around a partition, ``resolutions()`` and ``n_levels()``. ``None``:
        :class:`~cluster.nested_leiden.LeidenCommunities` with ``resolution``,
        ``coarser``, ``quality``, ``n_iterations`` and ``seed``.
    reassignment : step, "passthrough" or None, default None
        The reassignment step: ``fit(X, neighbours, labels)`` sets ``labels_`` and
        ``moved_``. ``None``: ``CentroidReassignment(passes=reassign)``;
        ``"passthrough"``: Leiden's clusters as found.

    Attributes
    ----------
    labels_ : ndarray of int
        Cluster of each document at the level of the smallest ``resolution`` (the
        clusters); clusters are numbered in order of their first document.
    levels_ : list of LeidenLevel
        Every level, finest first (nested): the finer ones, the clusters, the coarser
        ones (``role``).
    graph_stats_ : dict
        ``n_documents``, ``n_empty`` (documents without a weighted term), ``n_terms``
        (vocabulary), ``candidate_pairs``, ``refine_pairs``, ``edges``, ``isolated``,
        ``mean_similarity``, ``n_neighbors`` (used), ``seconds`` per step.
    vocabulary_ : list of str
        The weighted terms (columns of ``matrix_``).
    matrix_ : scipy.sparse.csr_matrix
        The documents' L2-normalised tf-idf vectors.
    graph_ : KNNGraph
        The neighbours and their similarities.
    steps_ : dict of str to step
        The fitted steps by name (:data:`STEPS`; a step left out is absent);
        ``weighting_`` is ``steps_["weighting"]``.

    Raises
    ------
    ParameterError
        In :meth:`fit`: a parameter outside what is allowed (a ``ValueError``).
    ValueError
        In :meth:`fit`: documents of mixed types, or an unknown language code (the
        message says what is allowed).

    Notes
    -----
    The four steps run in the order of :data:`STEPS`, as a scikit-learn ``Pipeline``'s:
    weighting → neighbours → communities → reassignment, then the community step's
    levels around the reassigned clusters. A step left ``None`` is built from the
    clusterer's own parameters at each :meth:`fit` (:attr:`named_steps`); a step given
    replaces it (``set_params(neighbours=KNeighbours(candidates="exact"))``), and
    ``set_params(step__param=value)`` sets a step's parameter: a given step's own, a
    default step's through the clusterer's parameter it is built from
    (``set_params(communities__seed=3)`` is ``set_params(seed=3)``, which the default
    neighbour step shares). ``get_params(deep=True)`` lists every step's parameters;
    :func:`cluster.base.clone` and ``sklearn.base.clone`` copy the clusterer with its
    steps. A step given is fitted in place (``steps_`` holds the fitted steps).
    """

    _parameter_constraints: ClassVar[Constraints] = {
        **{k: v for k, v in NEIGHBOUR_CONSTRAINTS.items() if k not in ("seed", "n_jobs")},
        "quality": COMMUNITY_CONSTRAINTS["quality"],
        "n_iterations": COMMUNITY_CONSTRAINTS["n_iterations"],
        **DF_CONSTRAINTS,
        "reassign": CentroidReassignment._parameter_constraints["passes"],
        "seed": NEIGHBOUR_CONSTRAINTS["seed"],
        "n_jobs": NEIGHBOUR_CONSTRAINTS["n_jobs"],
        **STEP_CONSTRAINTS,
    }
    _settings_keys: ClassVar[Mapping[str, str]] = {
        **step_settings_keys(DEFAULT_STEPS),
        # the tf-idf weighting reads no section of its own: the clusterer's are [activity]'s
        "min_df": "activity.min_df",
        "max_df": "activity.max_df",
    }
    _resource_params = ("n_jobs",)

    def __init__(
        self,
        *,
        n_neighbors: int | str = D.ACTIVITY_N_NEIGHBORS,
        resolution: float | Sequence[float] = D.ACTIVITY_RESOLUTION,
        coarser: float | Sequence[float] = D.ACTIVITY_COARSER,
        quality: str = D.ACTIVITY_QUALITY,
        n_iterations: int = D.ACTIVITY_ITERATIONS,
        min_df: int = D.ACTIVITY_MIN_DF,
        max_df: float = D.ACTIVITY_MAX_DF,
        candidates: str = D.ACTIVITY_CANDIDATES,
        num_perm: int = D.ACTIVITY_NUM_PERM,
        rows: int = D.ACTIVITY_ROWS,
        max_bucket: int = D.ACTIVITY_MAX_BUCKET,
        refine: int = D.ACTIVITY_REFINE,
        reassign: int = D.ACTIVITY_REASSIGN,
        seed: int = D.ACTIVITY_SEED,
        n_jobs: int = 1,
        weighting: Any = None,
        neighbours: Any = None,
        communities: Any = None,
        reassignment: Any = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.resolution = resolution
        self.coarser = coarser
        self.quality = quality
        self.n_iterations = n_iterations
        self.min_df = min_df
        self.max_df = max_df
        self.candidates = candidates
        self.num_perm = num_perm
        self.rows = rows
        self.max_bucket = max_bucket
        self.refine = refine
        self.reassign = reassign
        self.seed = seed
        self.n_jobs = n_jobs
        self.weighting = weighting
        self.neighbours = neighbours
        self.communities = communities
        self.reassignment = reassignment

    # -- the steps ---------------------------------------------------------------------
    def default_step(self, name: str) -> Any:
        """The step ``name`` (of :data:`STEPS`) as the clusterer's own parameters make it.

        >>> ActivityClusterer(reassign=2).default_step("reassignment")
        CentroidReassignment(passes=2)
        """
        cls, params = DEFAULT_STEPS[name]
        return cls(**{mine: getattr(self, theirs) for mine, theirs in params.items()})

    @property
    def named_steps(self) -> dict[str, Any]:
        """Each step by name, in order: the one given, or :meth:`default_step`
        (``"passthrough"`` for a step left out).

        >>> list(ActivityClusterer().named_steps)
        ['weighting', 'neighbours', 'communities', 'reassignment']
        """
        return {
            name: self.default_step(name) if getattr(self, name) is None else getattr(self, name)
            for name in STEPS
        }

    def _nested(self, name: str) -> Any:
        if name not in STEPS:
            return super()._nested(name)
        step = self.named_steps[name]
        return None if isinstance(step, str) else step

    def _set_nested(self, name: str, params: dict[str, Any]) -> None:
        if name not in STEPS or getattr(self, name) is not None:
            super()._set_nested(name, params)
            return
        mapping = DEFAULT_STEPS[name][1]
        unknown = [k for k in params if k not in mapping]
        if unknown:
            raise ParameterError(
                f"{', '.join(f'{name}__{k}' for k in unknown)}: not a parameter of the "
                f"default {name} step {DEFAULT_STEPS[name][0].__name__} (its parameters: "
                f"{', '.join(mapping)})"
            )
        for key, value in params.items():
            setattr(self, mapping[key], value)

    def result_params(self) -> dict[str, Any]:
        """The parameters the result depends on (``n_jobs`` left out), JSON-ready: a
        step given as its ``repr`` (``None``: the default step of the parameters)."""
        out = super().result_params()
        for name in STEPS:
            step = out[name]
            out[name] = step if step is None or isinstance(step, str) else repr(step)
        return out

    def resolutions(self) -> list[float]:
        """The resolutions of the clusters and finer levels, finest first (validated):
        the community step's."""
        if self.communities is None:
            return check_quality(self.quality, self.resolution)
        return list(self.communities.resolutions())

    def coarser_resolutions(self) -> list[float]:
        """The coarser levels' resolutions, finest first: the clusters' resolution times
        each ``coarser`` factor (validated;
        :func:`cluster.nested_leiden.coarser_resolutions`).

        Raises
        ------
        ParameterError
            A factor that is not a number between 0 and 1, exclusive.
        """
        return coarser_resolutions(self.quality, self.resolution, self.coarser)

    def n_levels(self) -> int:
        """The number of levels :meth:`fit` makes (the community step's)."""
        if self.communities is None:
            return len(self.resolutions()) + len(self.coarser_resolutions())
        return int(self.communities.n_levels())

    def _validate(self) -> None:
        if self.rows > self.num_perm:
            raise ParameterError(f"rows={self.rows} exceeds num_perm={self.num_perm}")
        self.coarser_resolutions()
        for name in STEPS:  # a step given checks its own parameters when it is fitted
            if getattr(self, name) is None:
                self.default_step(name).check_params()

    # -- the documents ------------------------------------------------------------------
    @staticmethod
    def term_counts(
        documents: Sequence[Document], languages: Sequence[str | None] | None = None
    ) -> list[Mapping[str, int]]:
        """Term counts of raw texts (one :class:`~extract.terms.TermCounter` per language;
        language detected with py3langid when not given) or the mappings as given.

        Raises
        ------
        ValueError
            Mixed str and mapping documents, ``languages`` of another length, or a
            language code without a tokenizer.
        """
        if not documents:
            return []
        texts = [isinstance(d, str) for d in documents]
        if all(texts):
            return _count_texts(documents, languages)  # type: ignore[arg-type]
        if any(texts) or not all(isinstance(d, Mapping) for d in documents):
            raise ValueError(
                "documents must be all raw texts (str) or all term-count mappings "
                "(term -> count), not a mix"
            )
        return list(documents)  # type: ignore[arg-type]

    @classmethod
    def count_matrix(
        cls,
        documents: Sequence[Document] | TermCountMatrix,
        languages: Sequence[str | None] | None = None,
    ) -> TermCountMatrix:
        """The documents' :class:`~cluster.weighting.TermCountMatrix`: as given, or built
        from the :meth:`term_counts` of texts or mappings.

        Raises
        ------
        ValueError
            As :meth:`term_counts`.
        """
        if isinstance(documents, TermCountMatrix):
            return documents
        return CountsBuilder().add(cls.term_counts(documents, languages)).build()

    # -- fit -----------------------------------------------------------------------------
    def fit(
        self,
        documents: Sequence[Document] | TermCountMatrix,
        languages: Sequence[str | None] | None = None,
        *,
        progress: Any = None,
    ) -> ActivityClusterer:
        """Cluster the documents.

        Parameters
        ----------
        documents : sequence of str, sequence of mapping str → int, or TermCountMatrix
            Raw texts, term counts (:mod:`extract.terms`), or the count matrix of term
            counts (:class:`~cluster.weighting.CountsBuilder`, read, not changed): the
            same clusters for the same documents, whichever is given.
        languages : sequence of str or None, optional
            ISO 639-1 code of each text (``None`` entries: detected); ignored for
            term-count documents.
        progress : callable, optional
            Called with each :class:`~cluster.graph_leiden.LeidenLevel` as it is found.

        Returns
        -------
        ActivityClusterer
            ``self``, fitted.
        """
        self.check_params()
        steps = self.named_steps
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        counts: TermCountMatrix | None = None
        weighting = steps["weighting"]
        if weighting == PASSTHROUGH:
            X = sp.csr_matrix(documents)  # type: ignore[arg-type]
            n = X.shape[0]
            vocabulary: list[str] = [str(t) for t in range(X.shape[1])]
        else:
            counts = self.count_matrix(documents, languages)
            n = len(counts)
        seconds["terms"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if counts is not None:
            X = weighting.fit_transform(counts) if n else sp.csr_matrix((0, 0), dtype=np.float32)
            vocabulary = list(weighting.vocabulary_) if n else []
        seconds["weights"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        graph = steps["neighbours"].fit(X).graph_
        i, j, w = steps["neighbours"].edges_
        seconds["neighbours"] = time.perf_counter() - t0
        edges = (n, i, j, w)
        t0 = time.perf_counter()
        chosen = steps["communities"].fit(edges).clusters_
        seconds["leiden"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        chosen, moved = self._reassigned(steps["reassignment"], X, graph.neighbours, chosen, edges)
        seconds["reassign"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        levels = steps["communities"].levels(edges, chosen)
        seconds["leiden"] += time.perf_counter() - t0
        if counts is not None:
            self._group_empty(counts.counts, np.diff(X.indptr) > 0, levels)
        if progress is not None:
            for level in levels:
                progress(level)
        degree = np.bincount(np.r_[i, j], minlength=n) if n else np.zeros(0, np.int64)
        self.steps_ = {name: step for name, step in steps.items() if step != PASSTHROUGH}
        self.matrix_ = X
        self.vocabulary_ = vocabulary
        self.weighting_ = weighting
        self.graph_ = graph
        self.levels_ = levels
        self.labels_ = chosen.labels
        n_empty = int(n - np.count_nonzero(np.diff(X.indptr))) if n else 0
        self.graph_stats_ = {
            "n_documents": n,
            "n_empty": n_empty,
            "n_terms": len(self.vocabulary_),
            "n_neighbors": int(graph.neighbours.shape[1]),
            **graph.stats,
            "edges": int(i.shape[0]),
            "reassigned": moved,
            "isolated": int(np.count_nonzero(degree == 0)),
            "mean_similarity": round(float(w.mean()), 4) if w.shape[0] else 0.0,
            "seconds": {key: round(v, 4) for key, v in seconds.items()},
        }
        return self

    def fit_predict(
        self,
        documents: Sequence[Document] | TermCountMatrix,
        languages: Sequence[str | None] | None = None,
    ) -> np.ndarray:
        """:meth:`fit`, then ``labels_``."""
        return self.fit(documents, languages).labels_

    @staticmethod
    def _reassigned(
        step: Any,
        X: sp.csr_matrix,
        neighbours: np.ndarray,
        level: LeidenLevel,
        edges: tuple[int, np.ndarray, np.ndarray, np.ndarray],
    ) -> tuple[LeidenLevel, int]:
        """The clusters after the reassignment step (``"passthrough"``: as given),
        renumbered, with their quality at the level's resolution, and the number of
        documents moved."""
        if step == PASSTHROUGH or level.labels.shape[0] == 0:
            return level, 0
        step.fit(X, neighbours, level.labels)
        if step.moved_ == 0:
            return level, 0
        labels = canonical_labels(step.labels_)
        n, i, j, w = edges
        return LeidenLevel(
            resolution=level.resolution,
            n_clusters=int(labels.max()) + 1,
            quality=modularity(n, i, j, w, labels, level.resolution),
            seconds=level.seconds,
            labels=labels,
        ), int(step.moved_)

    @staticmethod
    def _group_empty(counts: sp.csr_matrix, active: np.ndarray, levels: list[LeidenLevel]) -> None:
        """Documents without a weighted term join their exact duplicates (same term set,
        the columns of their row of the count matrix): a corpus of identical documents is
        one cluster, not n."""
        empty = np.flatnonzero(~active)
        if empty.shape[0] < 2:
            return
        key_of: dict[bytes, int] = {}
        n = counts.shape[0]
        first = np.arange(n)
        indptr, indices = counts.indptr, counts.indices  # sorted in every row
        for d in empty.tolist():
            terms = indices[indptr[d] : indptr[d + 1]]
            if terms.shape[0]:
                first[d] = key_of.setdefault(terms.tobytes(), d)
        if np.array_equal(first, np.arange(n)):
            return
        for level in levels:
            labels = level.labels.copy()
            labels[empty] = labels[first[empty]]
            level.labels = canonical_labels(labels)
            level.n_clusters = int(level.labels.max()) + 1


def _count_texts(
    texts: Sequence[str], languages: Sequence[str | None] | None
) -> list[Mapping[str, int]]:
    """Term counts per text (:func:`extract.terms.count_terms`: chunked in C, each
    distinct chunk stemmed once, the languages not given identified per batch)."""
    from extract.terms import count_terms

    return list(count_terms(texts, languages))


def weighted_terms(
    X: sp.csr_matrix, vocabulary: Sequence[str], labels: np.ndarray, *, top: int = 8
) -> dict[int, list[tuple[str, float]]]:
    """The terms that most set each cluster apart: its mean tf-idf vector minus the
    mean of the other documents, the ``top`` largest positive differences among the terms
    that at least two of its documents hold (any of its terms when none is shared).

    A term of one member only describes that member, not the cluster, yet in a cluster of
    two to four documents its tf-idf weighs a third to a half of the mean: without the
    rule such a cluster was named by one site's words. A cluster of one document keeps
    its own terms.

    Parameters
    ----------
    X : csr_matrix
        The documents' tf-idf vectors (``matrix_``).
    vocabulary : sequence of str
        Term of each column.
    labels : ndarray of int
        Cluster of each document.
    top : int
        Terms per cluster.

    Returns
    -------
    dict
        Cluster label → ``[(term, score), ...]``, best first.

    Notes
    -----
    The cluster sums stay sparse (a term absent from a cluster cannot score above 0), so
    time and memory are O(N) for N non-zeros of ``X`` plus a sort of each cluster's own
    terms, never O(clusters × terms) (1,000,000 documents: ``bench/million.py``).

    Examples
    --------
    >>> texts = ["oil price opec oil", "opec oil barrel", "goal match team", "team goal cup"]
    >>> m = ActivityClusterer(n_neighbors=1, min_df=1, max_df=1.0, resolution=1.0).fit(texts)
    >>> [t for t, _ in weighted_terms(m.matrix_, m.vocabulary_, m.labels_, top=2)[0]]
    ['oil', 'opec']
    """
    n = X.shape[0]
    labels = np.asarray(labels)
    out: dict[int, list[tuple[str, float]]] = {}
    if n == 0 or X.shape[1] == 0:
        return {int(c): [] for c in np.unique(labels)}
    sums = cluster_sums(X, labels)  # sparse: clusters × terms never made dense
    held = X.copy()
    held.eliminate_zeros()  # then the members holding each term have the pattern of sums
    held.data = np.ones(held.data.shape[0], dtype=X.dtype)
    holders = cluster_sums(held, labels)
    sizes = np.bincount(labels).astype(np.float64)
    total = np.zeros(X.shape[1], dtype=sums.dtype)
    np.add.at(total, sums.indices, sums.data)  # row by row, as a dense column sum adds
    for c in range(sums.shape[0]):
        # a term outside the cluster scores <= 0: only the cluster's own terms can be kept
        cols = sums.indices[sums.indptr[c] : sums.indptr[c + 1]]
        inside_sums = sums.data[sums.indptr[c] : sums.indptr[c + 1]]
        inside = inside_sums / sizes[c]
        rest = n - sizes[c]
        outside = (total[cols] - inside_sums) / rest if rest else np.zeros_like(inside)
        score = inside - outside
        shared = holders.data[holders.indptr[c] : holders.indptr[c + 1]] >= min(2.0, sizes[c])
        if np.any(shared & (score > 0)):
            score = np.where(shared, score, 0.0)
        best = np.argsort(-score, kind="stable")[:top]
        out[c] = [(vocabulary[cols[t]], round(float(score[t]), 4)) for t in best if score[t] > 0]
    return out
