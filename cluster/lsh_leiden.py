"""Leiden community detection on the LSH candidate graph of MinHash signatures.

Single linkage chains: one similar pair is enough to join two clusters, so on topic
collections its clusters grow into a few giants and many singletons. This module
keeps the paper's candidate search (seed 000_d819228b9213e10a.txt: MinHash
signatures, cut into ``b`` bands of ``r`` rows, documents sharing a bucket are
candidates) and replaces the union of linked pairs by community detection:

1. sign the shingle sets (:class:`cluster.minhash.MinHasher`, datasketch's values);
2. for every ``r`` of the banding schedule, cut the signatures into ``b`` bands
   (``min(bands, num_perm // r)``) and take the pairs of documents sharing a bucket
   (:func:`cluster.lsh.bucket_pairs`; a bucket of more than ``max_bucket`` documents is
   cut into runs of that many, in a seeded random order); their union is the set of
   candidate pairs;
3. rank every document's candidates by a cheap estimate of their similarity, from
   1-bit sketches of the signatures (b-bit minwise hashing,
   :meth:`~cluster.minhash.MinHashSignatures.pair_bit_similarity`), and keep the
   ``max_candidates`` strongest of either end (:func:`cluster.lsh.strongest_candidates`);
4. compute each kept pair's similarity (``"signature"``: the fraction of equal
   MinHash rows; ``"jaccard"``: exact Jaccard of the shingle sets) and keep the pairs
   whose similarity exceeds ``threshold`` as edges, weighted by the similarity;
5. optionally keep only the edges among the ``max_neighbours`` strongest of either end
   (:func:`cluster.graph_leiden.sparsify_neighbours`);
6. run Leiden (Traag et al. 2019) with leidenalg on the python-igraph graph, seeded,
   for one or several resolutions (nested levels, finest first:
   :func:`cluster.graph_leiden.leiden_levels`).

A pair of Jaccard similarity ``s`` becomes a candidate with probability
``1 - (1 - s^r)^b`` in one banding, so the schedule sets which edges the graph can
hold: with 128 permutations, ``r = 3`` (42 bands) finds 9 pairs in 10 at ``s = 0.4``
and about 3 in 10 at ``s = 0.2``; the default, ``r = 2`` in 64 bands, finds 9 in 10 at
``s = 0.19``; each document still keeps its strongest neighbours, which is what the
communities are made of. Steps 2 and 3 keep the graph cheap where the S-curve lets many
weak pairs through. On the 11,367 labelled Reuters stories, 9 to 14 million pairs share
a bucket (the seed sets the permutations), most of them in a few large buckets (a 2-row
slice that hundreds of stories share says little), and fewer than one in fifty survives
step 5 as an edge. Cut at 128 documents, the buckets give up to half fewer candidates;
each document's ``8 · max_neighbours`` strongest by the 1-bit estimate (a 32nd of the
memory traffic of the similarity) hold its strongest neighbours. With ``max_neighbours``
10 the fit is 6 times faster on Reuters and 3.5 times on WebKB, and the mean class F
over five seeds on seven corpora 0.554 against 0.517
(``bench/results/leiden_defaults.md``). Ranking by the number of buckets a pair shares
instead, which costs nothing, lost 0.03 class F on BBC.

Complexity, for n documents, P permutations, schedule rows ``r_1..r_L`` and C candidate
pairs: signing O(P · S) for S shingles; banding O(n · P · L · log(n · P)); ranking
O(C · P / 64 + n · RANKING_LEVELS); similarity O(C' · P) (signature) or
O(C' · (|A| + |B|)) (Jaccard) for the C' <= min(C, 2 · n · max_candidates) pairs
kept; sparsifying O(E log E) for E edges; Leiden about O(E) per iteration. Memory
O(n · P + C) (plus the shingle matrix, O(S), for Jaccard); fitted from signatures
memory-mapped from a :class:`~cluster.sigstore.SignatureStore` (and Jaccard from a
:class:`~cluster.sigstore.ShingleSource`), O(n + M + C) for the working budget M
(``band_memory_mb``), with the same clusters.

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev, 2015 (seed 000_d819228b9213e10a.txt): the
LSH candidate search.
V. A. Traag, L. Waltman, N. J. van Eck, "From Louvain to Leiden: guaranteeing
well-connected communities", *Scientific Reports* 9 (2019) 5233.

Examples
--------
>>> import numpy as np
>>> a, b = np.arange(300, dtype=np.uint64), np.arange(5000, 5300, dtype=np.uint64)
>>> sets = [a, a[10:], a[:280], a[5:295], b, b[7:], b[:290], b[3:297]]
>>> model = LSHLeiden(threshold=0.5, resolution=[1.0, 0.5], seed=1).fit(sets)
>>> model.labels_.tolist()
[0, 0, 0, 0, 1, 1, 1, 1]
>>> [lvl.resolution for lvl in model.levels_]
[1.0, 0.5]
>>> model.graph_stats_["edges"]
12
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from cluster.base import N_JOBS, NONE, POSITIVE, Constraints, Interval, Options
from cluster.graph_leiden import (
    LEIDEN_CONSTRAINTS,
    LeidenEstimator,
    LeidenLevel,
    build_graph,
    check_quality,
    isolated_count,
    leiden_levels,
    sparsify_neighbours,
)
from cluster.lsh import check_banding, level_pairs, s_curve_threshold, strongest_candidates
from cluster.lsh_link import check_signatures, pair_similarity_function
from cluster.minhash import NUM_PERM, MinHasher, MinHashSignatures
from cluster.sigstore import ShingleSource
from core import defaults as D
from core.choices import LEIDEN_SIMILARITIES, SCHEMES
from core.exceptions import ParameterError

RANKING_LEVELS = 32
"""The levels on which the 1-bit estimate ranks candidate pairs (its standard deviation,
about 0.03, is one level)."""


class LSHLeiden(LeidenEstimator):
    """Leiden communities of the weighted LSH candidate graph.

    The defaults are the settings' (``[cluster]`` ``leiden_*``, ``resolution``,
    ``quality``, ``max_neighbours``, ``band_memory_mb`` and ``[minhash]``), the choice of
    ``bench/linkage.py`` on WebKB: ``LSHLeiden()`` is what ``webometrics cluster --method
    paper --linkage leiden`` runs (:meth:`from_settings` with the run's settings).

    Parameters
    ----------
    threshold : float, default ``[cluster] leiden_threshold`` (0.02)
        The lowest similarity kept as an edge (pairs with a similarity above it); in
        (0, 1).
    num_perm : int, default ``[minhash] num_perm`` (1024)
        MinHash permutations.
    seed : int, default ``[minhash] seed`` (1)
        Seed of the permutations and of Leiden: the same documents, parameters and seed
        give the same clusters.
    rows : int or sequence of int, default ``[cluster] leiden_rows`` (2)
        The banding schedule: rows per band of each banding; the candidate pairs are
        the union over them.
    bands : int or None, default ``[cluster] leiden_bands`` (64)
        Bands of every banding, at most: a banding of ``r`` rows has
        ``min(bands, num_perm // r)`` bands (fewer on short signatures); ``None``:
        ``num_perm // r``.
    resolution : float, sequence of float or None, default ``[cluster] resolution``
        Leiden's resolution ``γ``; several values give nested levels, finest first (see
        :func:`cluster.graph_leiden.check_quality`); ``None``: one level at
        :data:`cluster.graph_leiden.DEFAULT_RESOLUTION` of the quality, the only choice
        of ``quality="modularity"``.
    quality : {"rb", "modularity", "cpm"}, default ``[cluster] quality`` ("rb")
        Reichardt-Bornholdt configuration model, modularity, or Constant Potts Model.
    similarity : {"signature", "jaccard"}, default ``[cluster] leiden_similarity``
        Fraction of equal MinHash rows, or exact Jaccard of the shingle sets.
    max_neighbours : int or None, default ``[cluster] max_neighbours`` (20)
        Keep only the edges among the strongest ``max_neighbours`` of either end;
        ``None`` keeps every edge.
    max_candidates : int, "auto" or None, default ``[cluster] leiden_max_candidates``
        Score only the candidate pairs among the ``max_candidates`` of either end that
        seem the most similar (their 1-bit estimate,
        :func:`cluster.lsh.strongest_candidates`); ``"auto"``:
        ``LEIDEN_CANDIDATES_PER_NEIGHBOUR`` (8) times ``max_neighbours``, every candidate
        when ``max_neighbours`` is None; ``None`` scores every candidate.
    max_bucket : int or None, default ``[cluster] leiden_max_bucket`` (128)
        A bucket of more documents is cut into runs of ``max_bucket`` in a seeded random
        order and only the pairs within a run are candidates
        (:func:`cluster.lsh.bucket_pairs`); ``None`` never cuts. At least 2.
    n_iterations : int, default ``LEIDEN_ITERATIONS`` (2)
        Leiden iterations per level (negative: until no node moves).
    scheme : str, default ``[minhash] scheme`` ("affine32")
        datasketch permutation scheme (:data:`core.choices.SCHEMES`).
    max_pairs : int or None, default ``CLUSTER_MAX_PAIRS`` (50,000,000)
        Fail (``ValueError``) rather than generate more candidate pairs in one banding.
    n_jobs : int, default 1
        Threads signing the shingle sets (``-1`` all cores; from the settings ``[minhash]
        workers``); the clusters do not depend on it.
    band_memory_mb : int, default ``[cluster] band_memory_mb`` (1024)
        Working memory of a banding (:func:`cluster.lsh.candidate_pairs`) and of the
        similarity blocks; the clusters do not depend on it.

    Attributes
    ----------
    labels_ : ndarray of int, shape (n_documents,)
        The clusters of the last (coarsest) level, numbered in order of their first
        document.
    levels_ : list of LeidenLevel
        The clusters at every resolution, finest first; each level's clusters are
        unions of the previous level's.
    graph_stats_ : dict
        ``nodes``; ``candidate_pairs`` (distinct pairs sharing a bucket);
        ``pairs_scored`` (those whose similarity was computed, after
        ``max_candidates``); ``pairs_above_threshold``; ``edges`` (after sparsifying);
        ``isolated`` (documents without an edge); ``bandings`` (r, b, S-curve
        similarity and candidates of each); ``seconds`` of every phase.
    signatures_ : MinHashSignatures
        The signatures used.

    Raises
    ------
    ParameterError
        From :meth:`fit`: a parameter outside what is allowed (a ``ValueError``).
    """

    _parameter_constraints: ClassVar[Constraints] = {
        **LEIDEN_CONSTRAINTS,
        "num_perm": [NUM_PERM],
        "bands": [POSITIVE, NONE],
        "similarity": [Options(LEIDEN_SIMILARITIES)],
        "scheme": [Options(SCHEMES)],
        "max_pairs": [POSITIVE, NONE],
        "n_jobs": [N_JOBS],
        "band_memory_mb": [POSITIVE],
        "max_candidates": [POSITIVE, NONE, Options(("auto",))],
        "max_bucket": [Interval(int, 2, None), NONE],
    }
    _settings_keys: ClassVar[Mapping[str, str]] = {
        "threshold": "cluster.leiden_threshold",
        "num_perm": "minhash.num_perm",
        "seed": "minhash.seed",
        "rows": "cluster.leiden_rows",
        "bands": "cluster.leiden_bands",
        "resolution": "cluster.resolution",
        "quality": "cluster.quality",
        "similarity": "cluster.leiden_similarity",
        "max_neighbours": "cluster.max_neighbours",
        "max_candidates": "cluster.leiden_max_candidates",
        "max_bucket": "cluster.leiden_max_bucket",
        "scheme": "minhash.scheme",
        "n_jobs": "minhash.workers",
        "band_memory_mb": "cluster.band_memory_mb",
    }
    _resource_params = ("max_pairs", "n_jobs", "band_memory_mb")

    def __init__(
        self,
        *,
        threshold: float = D.CLUSTER_LEIDEN_THRESHOLD,
        num_perm: int = D.MINHASH_NUM_PERM,
        seed: int = D.MINHASH_SEED,
        rows: int | Sequence[int] = D.CLUSTER_LEIDEN_ROWS,
        bands: int | None = D.CLUSTER_LEIDEN_BANDS,
        resolution: float | Sequence[float] | None = D.CLUSTER_RESOLUTION,
        quality: str = D.CLUSTER_QUALITY,
        similarity: str = D.CLUSTER_LEIDEN_SIMILARITY,
        max_neighbours: int | None = D.CLUSTER_MAX_NEIGHBOURS,
        max_candidates: int | str | None = D.CLUSTER_LEIDEN_MAX_CANDIDATES,
        max_bucket: int | None = D.CLUSTER_LEIDEN_MAX_BUCKET,
        n_iterations: int = D.LEIDEN_ITERATIONS,
        scheme: str = D.MINHASH_SCHEME,
        max_pairs: int | None = D.CLUSTER_MAX_PAIRS,
        n_jobs: int = 1,
        band_memory_mb: int = D.CLUSTER_BAND_MEMORY_MB,
    ) -> None:
        self.threshold = threshold
        self.num_perm = num_perm
        self.seed = seed
        self.rows = rows
        self.bands = bands
        self.resolution = resolution
        self.quality = quality
        self.similarity = similarity
        self.max_neighbours = max_neighbours
        self.max_candidates = max_candidates
        self.max_bucket = max_bucket
        self.n_iterations = n_iterations
        self.scheme = scheme
        self.max_pairs = max_pairs
        self.n_jobs = n_jobs
        self.band_memory_mb = band_memory_mb

    def banding_schedule(self) -> list[tuple[int, int]]:
        """The ``(r, b)`` of every banding, in the order given.

        Raises
        ------
        ParameterError
            A row count below 1, or ``b * r > num_perm``.
        """
        rows = [self.rows] if isinstance(self.rows, int | np.integer) else list(self.rows)
        if not rows:
            raise ParameterError("rows is an empty schedule: give one rows-per-band value or more")
        out: list[tuple[int, int]] = []
        for r in rows:
            if isinstance(r, bool) or not isinstance(r, int | np.integer) or r < 1:
                raise ParameterError(f"rows per band must be integers >= 1, got {r!r}")
            if r > self.num_perm:
                raise ParameterError(
                    f"r={r} exceeds num_perm={self.num_perm}: a band cannot have more rows "
                    "than the signature"
                )
            b = int(self.num_perm) // int(r)
            if self.bands is not None:
                b = min(int(self.bands), b)
            check_banding(int(r), b, int(self.num_perm))
            out.append((int(r), b))
        return out

    def candidate_cap(self) -> int | None:
        """The candidates scored per document: ``max_candidates``, with ``"auto"``
        resolved against ``max_neighbours`` (``None``: every candidate)."""
        if self.max_candidates != "auto":
            return None if self.max_candidates is None else int(self.max_candidates)
        if self.max_neighbours is None:
            return None
        return D.LEIDEN_CANDIDATES_PER_NEIGHBOUR * int(self.max_neighbours)

    def resolutions(self) -> list[float]:
        """Validate the parameters; the resolution of every level, finest (largest) first.

        Raises
        ------
        ParameterError
            A parameter is outside what is allowed.
        """
        self.check_params()
        return check_quality(self.quality, self.resolution)

    def _validate(self) -> None:
        self.banding_schedule()
        super()._validate()

    def _signatures(
        self,
        shingle_sets: Sequence[np.ndarray] | ShingleSource | None,
        signatures: MinHashSignatures | None,
    ) -> MinHashSignatures:
        hasher = MinHasher(num_perm=int(self.num_perm), seed=int(self.seed), scheme=self.scheme)
        checked = check_signatures(hasher, shingle_sets, signatures, self.similarity)
        if checked is None:
            return hasher.sign(shingle_sets, n_jobs=self.n_jobs)  # type: ignore[arg-type]
        return checked

    def fit(
        self,
        shingle_sets: Sequence[np.ndarray] | ShingleSource | None = None,
        signatures: MinHashSignatures | None = None,
        progress: Callable[[LeidenLevel], None] | None = None,
    ) -> LSHLeiden:
        """Build the candidate graph and find its communities.

        Parameters
        ----------
        shingle_sets : sequence of ndarray of uint64, or ShingleSource, optional
            The shingle hashes of every document (empty arrays allowed: such documents
            stay alone). Needed to sign (without ``signatures``) and for
            ``similarity="jaccard"``; a :class:`~cluster.sigstore.ShingleSource` gives
            the shingles of the candidate pairs on demand.
        signatures : MinHashSignatures, optional
            Precomputed signatures of the same documents (e.g. memory-mapped from a
            :class:`~cluster.sigstore.SignatureStore`), made with this model's num_perm,
            seed and scheme. The clusters are those of signing here.
        progress : callable, optional
            Called with every finished :class:`~cluster.graph_leiden.LeidenLevel`.

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            A parameter is outside what is allowed, or neither shingle sets nor
            signatures are given, or ``similarity="jaccard"`` without shingle sets.
        ValueError
            ``signatures`` do not match the documents or the parameters, or a banding
            gives more than ``max_pairs`` candidate pairs.
        """
        self.check_params()
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        signatures = self._signatures(shingle_sets, signatures)
        n = len(signatures)
        memory = int(self.band_memory_mb) << 20
        self.signatures_ = signatures
        t1 = time.perf_counter()
        seconds["signatures"] = t1 - t0
        active = ~signatures.empty
        bandings: list[dict[str, Any]] = []
        found: list[np.ndarray] = []
        for r, b in self.banding_schedule():
            pairs, pair_codes = level_pairs(
                signatures.hashvalues,
                r,
                b,
                active=active,
                max_pairs=self.max_pairs,
                seed=int(self.seed),
                memory_bytes=memory,
                max_bucket=None if self.max_bucket is None else int(self.max_bucket),
            )
            found.append(pair_codes)
            bandings.append(
                {
                    "r": r,
                    "b": b,
                    "s_curve": round(s_curve_threshold(r, b), 6),
                    "candidates": int(pairs.shape[0]),
                }
            )
        codes = found[0] if len(found) == 1 else np.unique(np.concatenate(found))
        i, j = codes // max(n, 1), codes % max(n, 1)
        t2 = time.perf_counter()
        seconds["candidates"] = t2 - t1
        cap = self.candidate_cap()
        if cap is not None and i.shape[0] > cap:
            # rank by the 1-bit estimate, quantised: ties at a document's cut are drawn
            estimate = signatures.pair_bit_similarity(i, j)
            strength = 1 + (estimate * RANKING_LEVELS).astype(np.uint8)
            strong = strongest_candidates(n, i, j, strength, cap, int(self.seed))
            i, j = i[strong], j[strong]
        n_scored = int(i.shape[0])
        t3 = time.perf_counter()
        seconds["ranking"] = t3 - t2
        sim = pair_similarity_function(self.similarity, shingle_sets, signatures, memory)(i, j)
        above = sim > float(self.threshold)
        i, j, sim = i[above], j[above], sim[above]
        t4 = time.perf_counter()
        seconds["similarity"] = t4 - t3
        n_above = int(i.shape[0])
        keep = sparsify_neighbours(n, i, j, sim, self.max_neighbours)
        i, j, sim = i[keep], j[keep], sim[keep]
        graph = build_graph(n, i, j, sim)
        t5 = time.perf_counter()
        seconds["graph"] = t5 - t4
        self.levels_ = leiden_levels(
            n, i, j, sim,
            quality=self.quality, resolutions=self.resolution, seed=int(self.seed),
            n_iterations=int(self.n_iterations), graph=graph,
        )  # fmt: skip
        seconds["leiden"] = time.perf_counter() - t5
        if progress is not None:
            for level in self.levels_:
                progress(level)
        self.labels_ = self.levels_[-1].labels
        self.graph_stats_: dict[str, Any] = {
            "nodes": n,
            "candidate_pairs": int(codes.shape[0]),
            "pairs_scored": n_scored,
            "pairs_above_threshold": n_above,
            "edges": int(i.shape[0]),
            "isolated": isolated_count(n, i, j),
            "bandings": bandings,
            "seconds": {k: round(v, 4) for k, v in seconds.items()},
        }
        return self

    def fit_predict(self, shingle_sets: Sequence[np.ndarray], **kwargs: Any) -> np.ndarray:
        """:meth:`fit` and return :attr:`labels_`."""
        return self.fit(shingle_sets, **kwargs).labels_
