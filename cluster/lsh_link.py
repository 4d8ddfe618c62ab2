"""The paper's modified LSH single-link agglomeration (Korelin, Blekanov, Sergeev 2015).

A MinHash form of LSH-link (Koga, Ishibashi, Watanabe 2007), as described in seed
000_d819228b9213e10a.txt, section «Иерархическая кластеризация с использованием LSH».
Every document starts as its own cluster. With a threshold ``t < 1``, an initial
number of rows per band ``r0``, a minimum ``r_min`` and a step ``Δ``, level by level:

1. cut the MinHash signatures into ``b = num_perm // r`` bands of ``r`` rows and hash
   every document's slice of every band into a bucket; a bucket keeps at most one
   document per cluster (the others of that cluster are dropped, the one kept is
   chosen at random with the seed);
2. among the documents sharing a bucket, take the pairs of *different* clusters whose
   similarity exceeds ``t`` (``similarity="jaccard"``: exact Jaccard of the shingle
   sets; ``"signature"``: the fraction of equal MinHash rows);
3. merge those clusters (single link, union of connected components);
4. stop when ``r - Δ < r_min``, else ``r = r - Δ`` and go to 1.

A large ``r`` lets only very similar documents collide; lowering it admits less similar
pairs level by level, so merges come roughly in single-link order. Pairs whose
similarity was computed once are not computed again at later levels. The similarity
of level ``r`` at which the S-curve ``1 - (1 - s^r)^b`` rises is ``(1/b)^(1/r)``,
recorded with every level.

Complexity, for n documents, P = num_perm, L = (r0 - r_min) // Δ + 1 levels and C_l
new candidate pairs at level l (pairs of distinct clusters sharing a bucket, not yet
compared): time O(n · P · L · log(n · P) + Σ_l C_l · c_sim), where c_sim is O(P) for
signatures and O(|A| + |B|) for exact Jaccard; memory O(n · P + S + max_l C_l) with
S shingles in the corpus (needed for exact Jaccard only). Fitted from signatures
memory-mapped from a :class:`~cluster.sigstore.SignatureStore`, with the shingles of the
candidate pairs fetched from a :class:`~cluster.sigstore.ShingleSource`, memory is
O(n + M + max_l C_l) for a working budget M (``band_memory_mb``): levels band the
signatures in row chunks and hash partitions on disk (:func:`cluster.lsh.candidate_pairs`),
with the same pairs. With buckets bounded by the one-document-per-cluster rule, C_l grows
about linearly with n on text collections (measured in ``bench/table1.py``), hence the
paper's "about linear time".

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev, "Применение модифицированного алгоритма
LSH для кластеризации внешнего окружения веб-пространства университетов", 2015 (seed
000_d819228b9213e10a.txt).
H. Koga, T. Ishibashi, T. Watanabe, "Fast agglomerative hierarchical clustering
algorithm using Locality-Sensitive Hashing", *Knowledge and Information Systems* 12
(2007) 25-53.

Examples
--------
>>> import numpy as np
>>> base = np.arange(200, dtype=np.uint64)
>>> sets = [base, base[:190], np.arange(1000, 1200, dtype=np.uint64), base[5:]]
>>> model = LSHLink(threshold=0.5, r0=8, r_min=2, step=2, num_perm=64).fit(sets)
>>> model.labels_.tolist()
[0, 0, 1, 0]
>>> [lvl.r for lvl in model.levels_]
[8, 6, 4, 2]
>>> model.linkage_matrix_.shape
(3, 4)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from cluster.base import N_JOBS, NONE, POSITIVE, SEED, THRESHOLD, Constraints, Estimator, Options
from cluster.lsh import level_pairs, s_curve_threshold
from cluster.minhash import NUM_PERM, MinHasher, MinHashSignatures
from cluster.sigstore import ShingleSource, pair_jaccard_segments
from cluster.single_link import ShingleMatrix
from cluster.unionfind import connected_labels, single_linkage
from core import defaults as D
from core.choices import SCHEMES, SIMILARITIES
from core.exceptions import ParameterError


@dataclass
class LSHLevel:
    """One level of :class:`LSHLink`.

    Attributes
    ----------
    r, b : int
        Rows per band and bands.
    s_curve : float
        ``(1/b)^(1/r)``, the similarity near which the level's S-curve rises.
    n_candidates : int
        Distinct candidate pairs of different clusters from the buckets.
    n_compared : int
        Of those, pairs whose similarity was computed (not compared at an earlier level).
    n_linked : int
        Pairs whose similarity exceeds the threshold.
    n_clusters : int
        Clusters after the level.
    seconds : float
    labels : ndarray of int
        Canonical labels after the level.
    """

    r: int
    b: int
    s_curve: float
    n_candidates: int
    n_compared: int
    n_linked: int
    n_clusters: int
    seconds: float
    labels: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The level without its labels, JSON-ready."""
        return {
            "r": self.r,
            "b": self.b,
            "s_curve": round(self.s_curve, 6),
            "n_candidates": self.n_candidates,
            "n_compared": self.n_compared,
            "n_linked": self.n_linked,
            "n_clusters": self.n_clusters,
            "seconds": round(self.seconds, 4),
        }


class LSHLink(Estimator):
    """The paper's LSH single-link agglomeration over MinHash signatures.

    The defaults are the settings' (``[cluster]`` and ``[minhash]``), chosen by the sweep
    of ``bench/table1.py`` on Reuters-21578: ``LSHLink()`` is what ``webometrics cluster
    --method paper`` runs (:meth:`from_settings` with the run's settings).

    Parameters
    ----------
    threshold : float, default ``[cluster] threshold`` (0.3)
        ``t``: clusters merge when two of their documents sharing a bucket have a
        similarity above it; in (0, 1).
    r0 : int, default ``[cluster] r0`` (12)
        Rows per band at the first level; 1 .. num_perm.
    r_min : int, default ``[cluster] r_min`` (4)
        Smallest rows per band; 1 .. r0.
    step : int, default ``[cluster] step`` (4)
        ``Δ``, how much r decreases per level; >= 1.
    num_perm : int, default ``[minhash] num_perm`` (1024)
        MinHash permutations.
    seed : int, default ``[minhash] seed`` (1)
        Seed of the permutations and of which document a bucket keeps.
    similarity : {"jaccard", "signature", "weighted"}, default ``[cluster] similarity``
        Exact Jaccard of the shingle sets, or the fraction of equal MinHash rows; or
        ``"weighted"``: the paper's schedule on weighted documents (:meth:`fit` then
        takes term-count mappings): tf-idf vectors (:class:`cluster.weighting.
        TfidfWeighting`) signed by weighted MinHash
        (:class:`cluster.weighted_minhash.WeightedMinHasher`, ``num_perm`` samples), the
        same banding level by level, and the exact cosine of each candidate pair against
        ``threshold``.
    scheme : str, default ``[minhash] scheme`` ("affine32")
        datasketch permutation scheme (:data:`core.choices.SCHEMES`).
    max_pairs : int or None, default ``CLUSTER_MAX_PAIRS`` (50,000,000)
        Fail (``ValueError``) rather than generate more candidate pairs at one level.
    n_jobs : int, default 1
        Threads signing the shingle sets (:meth:`MinHasher.sign`; ``-1`` all cores; from
        the settings ``[minhash] workers``); the clusters do not depend on it.
    band_memory_mb : int, default ``[cluster] band_memory_mb`` (1024)
        Working memory of a level's banding (:func:`cluster.lsh.candidate_pairs`: above
        it, hash partitions on disk) and of its similarity blocks; the clusters do not
        depend on it.

    Attributes
    ----------
    labels_ : ndarray of int, shape (n_documents,)
        Final clusters, numbered in order of their first document.
    levels_ : list of LSHLevel
        Labels and statistics after every level (r, b, S-curve similarity).
    linkage_matrix_ : ndarray of shape (n_documents - 1, 4)
        SciPy linkage matrix of the linked pairs, height ``1 - similarity`` (Kruskal
        order over every pair linked at any level); clusters never linked are joined
        at height 1.0. ``fcluster(linkage_matrix_, 1 - t, "distance")`` with a float
        just below ``1 - threshold`` gives :attr:`labels_`.
    signatures_ : MinHashSignatures
        The signatures used.
    n_compared_ : int
        Pairs whose similarity was computed, over all levels.

    Raises
    ------
    ParameterError
        From :meth:`fit`: a parameter outside what is allowed (a ``ValueError``).
    """

    _parameter_constraints: ClassVar[Constraints] = {
        "threshold": [THRESHOLD],
        "num_perm": [NUM_PERM],
        "r0": [POSITIVE],
        "r_min": [POSITIVE],
        "step": [POSITIVE],
        "seed": [SEED],
        "similarity": [Options(SIMILARITIES)],
        "scheme": [Options(SCHEMES)],
        "max_pairs": [POSITIVE, NONE],
        "n_jobs": [N_JOBS],
        "band_memory_mb": [POSITIVE],
    }
    _settings_keys: ClassVar[Mapping[str, str]] = {
        "threshold": "cluster.threshold",
        "r0": "cluster.r0",
        "r_min": "cluster.r_min",
        "step": "cluster.step",
        "num_perm": "minhash.num_perm",
        "seed": "minhash.seed",
        "similarity": "cluster.similarity",
        "scheme": "minhash.scheme",
        "n_jobs": "minhash.workers",
        "band_memory_mb": "cluster.band_memory_mb",
    }
    _resource_params = ("max_pairs", "n_jobs", "band_memory_mb")

    def __init__(
        self,
        *,
        threshold: float = D.CLUSTER_THRESHOLD,
        r0: int = D.CLUSTER_R0,
        r_min: int = D.CLUSTER_R_MIN,
        step: int = D.CLUSTER_STEP,
        num_perm: int = D.MINHASH_NUM_PERM,
        seed: int = D.MINHASH_SEED,
        similarity: str = D.CLUSTER_SIMILARITY,
        scheme: str = D.MINHASH_SCHEME,
        max_pairs: int | None = D.CLUSTER_MAX_PAIRS,
        n_jobs: int = 1,
        band_memory_mb: int = D.CLUSTER_BAND_MEMORY_MB,
    ) -> None:
        self.threshold = threshold
        self.r0 = r0
        self.r_min = r_min
        self.step = step
        self.num_perm = num_perm
        self.seed = seed
        self.similarity = similarity
        self.scheme = scheme
        self.max_pairs = max_pairs
        self.n_jobs = n_jobs
        self.band_memory_mb = band_memory_mb

    def _validate(self) -> None:
        if self.r0 > self.num_perm:
            raise ParameterError(
                f"r0={self.r0!r} must be an integer in 1..num_perm={self.num_perm} "
                "(a band cannot have more rows than the signature)"
            )
        if self.r_min > self.r0:
            raise ParameterError(f"r_min={self.r_min!r} must be an integer in 1..r0={self.r0}")

    def rows_per_level(self) -> list[int]:
        """The r of every level: r0, r0 - Δ, ... while r >= r_min."""
        self.check_params()
        return list(range(int(self.r0), int(self.r_min) - 1, -int(self.step)))

    def fit(
        self,
        shingle_sets: Sequence[np.ndarray] | ShingleSource | None = None,
        signatures: MinHashSignatures | None = None,
        progress: Callable[[LSHLevel], None] | None = None,
    ) -> LSHLink:
        """Run the levels.

        Parameters
        ----------
        shingle_sets : sequence of ndarray of uint64, or ShingleSource, optional
            The shingle hashes of every document (empty arrays allowed: such documents
            stay alone). Needed to sign (without ``signatures``) and for
            ``similarity="jaccard"``; a :class:`~cluster.sigstore.ShingleSource` gives
            the shingles of the candidate pairs on demand instead of all at once.
        signatures : MinHashSignatures, optional
            Precomputed signatures of the same documents, e.g. memory-mapped from a
            :class:`~cluster.sigstore.SignatureStore`; they must have been made with this
            model's num_perm, seed and scheme. The clusters are those of signing here.
        progress : callable, optional
            Called with every finished :class:`LSHLevel`.

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            A parameter is outside what is allowed, or neither shingle sets nor
            signatures are given, or ``similarity="jaccard"`` without shingle sets.
        ValueError
            ``signatures`` do not match the documents or the parameters.
        """
        self.check_params()
        memory = int(self.band_memory_mb) << 20
        if self.similarity == "weighted":
            signatures, similarity = self._weighted(shingle_sets, signatures)  # type: ignore[arg-type]
        else:
            hasher = MinHasher(num_perm=int(self.num_perm), seed=int(self.seed), scheme=self.scheme)
            signatures = check_signatures(hasher, shingle_sets, signatures, self.similarity)
            if signatures is None:
                signatures = hasher.sign(shingle_sets, n_jobs=self.n_jobs)  # type: ignore[arg-type]
            similarity = pair_similarity_function(self.similarity, shingle_sets, signatures, memory)
        n = len(signatures)
        self.signatures_ = signatures
        active = ~signatures.empty
        rng = np.random.default_rng(int(self.seed))
        labels = np.arange(n, dtype=np.int64)
        tested = np.empty(0, dtype=np.int64)  # sorted codes i*n+j of compared pairs
        edges_i: list[np.ndarray] = []
        edges_j: list[np.ndarray] = []
        edges_s: list[np.ndarray] = []
        self.levels_: list[LSHLevel] = []
        self.n_compared_ = 0
        t = float(self.threshold)
        for r in self.rows_per_level():
            t0 = time.perf_counter()
            b = int(self.num_perm) // r
            level_seed = int(rng.integers(0, 2**63 - 1))
            pairs, codes = level_pairs(
                signatures.hashvalues,
                r,
                b,
                labels=labels,
                active=active,
                max_pairs=self.max_pairs,
                seed=level_seed,
                memory_bytes=memory,
            )
            n_candidates = int(pairs.shape[0])
            # codes are sorted and distinct; drop the pairs compared at earlier levels
            fresh = np.ones(codes.shape[0], dtype=bool)
            if tested.shape[0]:
                pos = np.minimum(np.searchsorted(tested, codes), tested.shape[0] - 1)
                fresh = tested[pos] != codes
            pairs, codes = pairs[fresh], codes[fresh]
            if pairs.shape[0]:
                sim = similarity(pairs[:, 0], pairs[:, 1])
                link = sim > t
                edges_i.append(pairs[link, 0])
                edges_j.append(pairs[link, 1])
                edges_s.append(sim[link])
                tested = np.sort(np.concatenate([tested, codes]))
                n_linked = int(link.sum())
                if n_linked:
                    labels = connected_labels(n, np.concatenate(edges_i), np.concatenate(edges_j))
            else:
                n_linked = 0
            self.n_compared_ += int(pairs.shape[0])
            level = LSHLevel(
                r=r,
                b=b,
                s_curve=s_curve_threshold(r, b),
                n_candidates=n_candidates,
                n_compared=int(pairs.shape[0]),
                n_linked=n_linked,
                n_clusters=int(labels.max()) + 1 if n else 0,
                seconds=time.perf_counter() - t0,
                labels=labels.copy(),
            )
            self.levels_.append(level)
            if progress is not None:
                progress(level)
        cat = lambda xs, dt: np.concatenate(xs) if xs else np.empty(0, dtype=dt)  # noqa: E731
        self.linkage_matrix_, self.labels_ = single_linkage(
            n, cat(edges_i, np.int64), cat(edges_j, np.int64), cat(edges_s, np.float64)
        )
        return self

    def _weighted(
        self, documents: Sequence[Any] | None, signatures: MinHashSignatures | None
    ) -> tuple[MinHashSignatures, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
        """The signatures and pair similarity of ``similarity="weighted"``: tf-idf vectors of
        term-count mappings, ICWS signatures, exact cosine."""
        from cluster.knn import pair_cosine
        from cluster.weighted_minhash import EMPTY_SIGNATURE, WeightedMinHasher
        from cluster.weighting import TfidfWeighting

        if signatures is not None or documents is None:
            raise ParameterError(
                "similarity='weighted' fits term-count mappings (term -> count), one per "
                "document, and signs them itself; precomputed signatures are not taken"
            )
        if any(not isinstance(d, Mapping) for d in documents):
            raise ParameterError(
                "similarity='weighted' fits term-count mappings (term -> count), e.g. "
                "extract.terms.TermCounter().counts(text), not shingle sets"
            )
        X = TfidfWeighting().fit_transform(documents)  # TFIDF_MIN_DF, TFIDF_MAX_DF
        self.matrix_ = X
        if X.shape[1]:
            hasher = WeightedMinHasher(
                dim=X.shape[1], num_perm=int(self.num_perm), seed=int(self.seed)
            )
            hashvalues = hasher.sign(X, n_jobs=self.n_jobs)
        else:
            hashvalues = np.full((X.shape[0], int(self.num_perm)), EMPTY_SIGNATURE)
        sigs = MinHashSignatures(
            hashvalues=hashvalues,
            num_perm=int(self.num_perm),
            seed=int(self.seed),
            scheme="icws-datasketch",
            hash_func="tfidf",
            empty=np.diff(X.indptr) == 0,
        )
        return sigs, lambda i, j: pair_cosine(X, i, j).astype(np.float64)

    def fit_predict(self, shingle_sets: Sequence[np.ndarray], **kwargs: Any) -> np.ndarray:
        """:meth:`fit` and return :attr:`labels_`."""
        return self.fit(shingle_sets, **kwargs).labels_


def check_signatures(
    hasher: MinHasher,
    shingle_sets: Sequence[np.ndarray] | ShingleSource | None,
    signatures: MinHashSignatures | None,
    similarity: str,
) -> MinHashSignatures | None:
    """Check what a fit was given; return ``signatures`` (``None``: sign ``shingle_sets``).

    Raises
    ------
    ParameterError
        Neither is given, a :class:`ShingleSource` without signatures, or
        ``similarity="jaccard"`` without shingle sets.
    ValueError
        ``signatures`` do not match the documents or the hasher's parameters.
    """
    if shingle_sets is None and signatures is None:
        raise ParameterError("give the shingle sets, or precomputed signatures, to fit")
    if signatures is None:
        if isinstance(shingle_sets, ShingleSource):
            raise ParameterError(
                "a ShingleSource is not signed in a fit: sign it into a "
                "cluster.sigstore.SignatureStore and pass signatures=store.signatures()"
            )
        return None
    if shingle_sets is None and similarity == "jaccard":
        raise ParameterError(
            "similarity='jaccard' needs the shingle sets (a sequence or a ShingleSource) "
            "besides the signatures; or use similarity='signature'"
        )
    if shingle_sets is not None and len(signatures) != len(shingle_sets):
        raise ValueError(
            f"{len(signatures)} signatures for {len(shingle_sets)} documents: sign the same "
            "documents"
        )
    mine = {k: v for k, v in hasher.params.items() if k != "hash_func"}
    theirs = {k: v for k, v in signatures.params.items() if k != "hash_func"}
    if mine != theirs:
        raise ValueError(
            f"signatures made with {theirs} cannot be used by a model with {mine}: "
            "sign with the model's num_perm, seed and scheme"
        )
    return signatures


def pair_similarity_function(
    similarity: str,
    shingle_sets: Sequence[np.ndarray] | ShingleSource | None,
    signatures: MinHashSignatures,
    memory_bytes: int,
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """How a fit computes the similarity of candidate pairs ``(i, j)``.

    ``"jaccard"``: exact Jaccard, over a :class:`ShingleMatrix` of all the shingle sets,
    or fetched segment by segment from a :class:`ShingleSource`
    (:func:`~cluster.sigstore.pair_jaccard_segments`); ``"signature"``: the fraction of
    equal MinHash rows, compared in blocks of at most about ``memory_bytes``.
    """
    if similarity == "jaccard":
        if isinstance(shingle_sets, ShingleSource):
            source = shingle_sets
            return lambda i, j: pair_jaccard_segments(source, i, j, memory_bytes // 4)
        return ShingleMatrix.from_sets(shingle_sets).pair_jaccard  # type: ignore[arg-type]
    row = signatures.num_perm * (2 * signatures.hashvalues.dtype.itemsize + 1)
    block = int(min(65536, max(1024, memory_bytes // 4 // row)))
    return lambda i, j: signatures.pair_similarity(i, j, block=block)
