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

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from cluster.base import N_JOBS, POSITIVE, SEED, Constraints, Estimator, Interval, Options
from cluster.graph_leiden import ITERATIONS, LeidenLevel, check_quality
from cluster.knn import (
    KNNGraph,
    bucket_candidates,
    exact_knn,
    knn_edges,
    local_join_pairs,
    merge_top_k,
    nndescent_knn,
    pair_cosine,
)
from cluster.nested_leiden import (
    igraph_leiden,
    merged_levels,
    modularity,
    refined_levels,
    split_levels,
)
from cluster.reassign import cluster_sums, reassign
from cluster.unionfind import canonical_labels
from cluster.weighting import DF_CONSTRAINTS, CountsBuilder, TermCountMatrix, TfidfWeighting
from core import defaults as D
from core.choices import CANDIDATES, QUALITIES
from core.exceptions import ParameterError

# igraph_leiden, modularity and refined_levels live in cluster.nested_leiden
__all__ = [
    "CANDIDATES",
    "EXACT_WORK",
    "ActivityClusterer",
    "auto_neighbours",
    "exact_work",
    "igraph_leiden",
    "modularity",
    "refined_levels",
    "weighted_terms",
]

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


Document = str | Mapping[str, int]


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

    Raises
    ------
    ParameterError
        In :meth:`fit`: a parameter outside what is allowed (a ``ValueError``).
    ValueError
        In :meth:`fit`: documents of mixed types, or an unknown language code (the
        message says what is allowed).
    """

    _parameter_constraints: ClassVar[Constraints] = {
        "n_neighbors": [POSITIVE, Options(("auto",))],
        "quality": [Options(QUALITIES)],
        "n_iterations": [ITERATIONS],
        **DF_CONSTRAINTS,
        "candidates": [Options(CANDIDATES)],
        "num_perm": [POSITIVE],
        "rows": [POSITIVE],
        "max_bucket": [Interval(int, 2, None)],
        "refine": [Interval(int, 0, None)],
        "reassign": [Interval(int, 0, None)],
        "seed": [SEED],
        "n_jobs": [N_JOBS],
    }
    _settings_keys: ClassVar[Mapping[str, str]] = {
        "n_neighbors": "activity.n_neighbors",
        "resolution": "activity.resolution",
        "coarser": "activity.coarser",
        "quality": "activity.quality",
        "n_iterations": "activity.n_iterations",
        "min_df": "activity.min_df",
        "max_df": "activity.max_df",
        "candidates": "activity.candidates",
        "num_perm": "activity.num_perm",
        "rows": "activity.rows",
        "max_bucket": "activity.max_bucket",
        "refine": "activity.refine",
        "reassign": "activity.reassign",
        "seed": "activity.seed",
        "n_jobs": "minhash.workers",
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

    def resolutions(self) -> list[float]:
        """The resolutions of the clusters and finer levels, finest first (validated)."""
        return check_quality(self.quality, self.resolution)

    def coarser_resolutions(self) -> list[float]:
        """The coarser levels' resolutions, finest first: the clusters' resolution times
        each ``coarser`` factor (validated).

        Raises
        ------
        ParameterError
            A factor that is not a number between 0 and 1, exclusive.
        """
        factors = [self.coarser] if isinstance(self.coarser, int | float) else list(self.coarser)
        for v in factors:
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < 1:
                raise ParameterError(
                    f"coarser={self.coarser!r}: every coarser level is a factor of the "
                    "clusters' resolution between 0 and 1, exclusive (0.5: half of it), "
                    "or () for no coarser level"
                )
        top = min(self.resolutions())
        return sorted({top * float(v) for v in factors}, reverse=True)

    def n_levels(self) -> int:
        """The number of levels :meth:`fit` makes."""
        return len(self.resolutions()) + len(self.coarser_resolutions())

    def _validate(self) -> None:
        if self.rows > self.num_perm:
            raise ParameterError(f"rows={self.rows} exceeds num_perm={self.num_perm}")
        self.coarser_resolutions()

    # -- the steps ---------------------------------------------------------------------
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

    def _neighbours(self, X: sp.csr_matrix, active: np.ndarray, k: int) -> KNNGraph:
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
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        counts = self.count_matrix(documents, languages)
        seconds["terms"] = time.perf_counter() - t0
        n = len(counts)
        t0 = time.perf_counter()
        weighting = TfidfWeighting(min_df=self.min_df, max_df=self.max_df)
        X = weighting.fit_transform(counts) if n else sp.csr_matrix((0, 0), dtype=np.float32)
        seconds["weights"] = time.perf_counter() - t0
        active = np.diff(X.indptr) > 0 if n else np.zeros(0, dtype=bool)
        n_active = int(active.sum())
        wanted = auto_neighbours(n_active) if self.n_neighbors == "auto" else self.n_neighbors
        k = min(int(wanted), max(n_active - 1, 0))
        t0 = time.perf_counter()
        graph = self._neighbours(X, active, k)
        seconds["neighbours"] = time.perf_counter() - t0
        i, j, w = knn_edges(graph.neighbours, graph.similarities)
        t0 = time.perf_counter()
        quality, seed, iterations = self.quality, int(self.seed), int(self.n_iterations)
        res = self.resolutions()
        top = min(res)  # the clusters' resolution; the larger ones split the clusters
        chosen = igraph_leiden(n, i, j, w, quality=quality, resolution=top, seed=seed,
                               n_iterations=iterations)  # fmt: skip
        seconds["leiden"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        chosen, moved = self._reassigned(X, graph.neighbours, chosen, (n, i, j, w))
        seconds["reassign"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        levels = split_levels(n, i, j, w, chosen, resolutions=[r for r in res if r != top],
                              quality=quality, seed=seed, n_iterations=iterations)  # fmt: skip
        levels += merged_levels(n, i, j, w, chosen, resolutions=self.coarser_resolutions(),
                                quality=quality, seed=seed, n_iterations=iterations)  # fmt: skip
        seconds["leiden"] += time.perf_counter() - t0
        self._group_empty(counts.counts, active, levels)
        if progress is not None:
            for level in levels:
                progress(level)
        degree = np.bincount(np.r_[i, j], minlength=n) if n else np.zeros(0, np.int64)
        self.matrix_ = X
        self.vocabulary_ = weighting.vocabulary_ if n else []
        self.weighting_ = weighting
        self.graph_ = graph
        self.levels_ = levels
        self.labels_ = chosen.labels
        self.graph_stats_ = {
            "n_documents": n,
            "n_empty": int(n - active.sum()),
            "n_terms": len(self.vocabulary_),
            "n_neighbors": k,
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

    def _reassigned(
        self,
        X: sp.csr_matrix,
        neighbours: np.ndarray,
        level: LeidenLevel,
        edges: tuple[int, np.ndarray, np.ndarray, np.ndarray],
    ) -> tuple[LeidenLevel, int]:
        """The clusters after ``reassign`` passes of centroid reassignment
        (:func:`cluster.reassign.reassign`), renumbered, with their quality at the level's
        resolution, and the number of documents moved."""
        if self.reassign == 0 or level.labels.shape[0] == 0:
            return level, 0
        labels, moved = reassign(X, level.labels, neighbours, passes=int(self.reassign))
        if moved == 0:
            return level, 0
        labels = canonical_labels(labels)
        n, i, j, w = edges
        return LeidenLevel(
            resolution=level.resolution,
            n_clusters=int(labels.max()) + 1,
            quality=modularity(n, i, j, w, labels, level.resolution),
            seconds=level.seconds,
            labels=labels,
        ), moved

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


def auto_neighbours(n: int) -> int:
    """``round(2.5 ln n)`` neighbours for ``n`` documents, at least 5 and at most 50.

    Examples
    --------
    >>> [auto_neighbours(n) for n in (10, 150, 600, 2225, 20000, 10**6)]
    [6, 13, 16, 19, 25, 35]
    """
    return int(min(50, max(5, round(2.5 * math.log(max(n, 2))))))


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
