"""n-min ("bottom-k") versus min-in-n-permutations sketches (seed 003).

Seed 003 compares two ways of reducing a document's shingle set to a fixed-size image
(Broder 1997): "the n minimal elements of one permutation" and "the minimal elements of
n permutations". Both use k-word shingles (k = 5 here; the seed used 10 and 20 words on
ROMIP, too long for the light edits of the Clough corpus) and images of n = 100.

n-min (:class:`NMinMethod`)
    One permutation (the shingle hashes mixed with a seeded MurmurHash3 finaliser); the
    image is the n smallest values. Broder's unbiased estimate of resemblance is
    ``|min_n(A' ∪ B') ∩ A' ∩ B'| / |min_n(A' ∪ B')|`` for images A', B'. Candidates are
    documents sharing an image element (hash buckets; buckets of more than
    ``max_bucket`` documents are skipped), pre-filtered by the count of shared elements
    (an estimate >= t needs at least ``t · min(|A'|, |B'|)`` of them), then estimated.
    Time O(total shingles · log n); memory O(n_docs · n).
min-in-n (:class:`MinInNMethod`)
    n permutations (MinHash); the image is the n minima, and the estimate is the share of
    equal positions. Candidates come from LSH bands (``bands x rows = n``) and are
    verified. Time O(n · total shingles); memory O(n_docs · n).

Duplicates are pairs whose estimate is at least ``threshold``. For seed 003's FPmax
clusters, the image elements are the features and ``ceil(threshold · n)`` shared
elements the support threshold (seed 003 used 85-100 of 100).

References
----------
D. I. Ignatov, S. O. Kuznetsov et al., seed 003_284e3196b8ef7b92.txt.
A. Z. Broder, "On the resemblance and containment of documents", 1997; A. Z. Broder,
"Identifying and filtering near-duplicate documents", CPM 2000 (both sketches).
"""

from __future__ import annotations

import math

import numpy as np

from dedup.base import (
    EMPTY,
    Corpus,
    NearDuplicateMethod,
    Signatures,
    pairs_from_keys,
)
from dedup.supershingles import group_keys, minhash_matrix


def bottom_k(shingles: np.ndarray, n: int, seed: int) -> np.ndarray:
    """The ``n`` smallest values of one seeded permutation of the shingle hashes, sorted.

    Examples
    --------
    >>> bottom_k(np.arange(10, dtype=np.uint64), 3, seed=1).shape
    (3,)
    """
    from extract.shingles import fmix64

    with np.errstate(over="ignore"):
        permuted = fmix64(np.asarray(shingles, dtype=np.uint64) ^ np.uint64(seed * 0x9E3779B1))
    if permuted.shape[0] <= n:
        return np.sort(permuted)
    return np.sort(np.partition(permuted, n - 1)[:n])


def bottom_k_resemblance(a: np.ndarray, b: np.ndarray, n: int) -> float:
    """Broder's estimate of resemblance from two bottom-n images.

    Examples
    --------
    >>> a = np.array([1, 2, 3], dtype=np.uint64)
    >>> bottom_k_resemblance(a, a, 3), bottom_k_resemblance(a, a + 10, 3)
    (1.0, 0.0)
    """
    union = np.union1d(a, b)[:n]
    if union.shape[0] == 0:
        return 0.0
    both = np.intersect1d(a, b, assume_unique=True)
    return float(np.intersect1d(union, both, assume_unique=True).shape[0]) / union.shape[0]


class NMinMethod(NearDuplicateMethod):
    """n-min: the n smallest values of one permutation ("bottom-k").

    Parameters
    ----------
    k : int, default 5
    n : int, default 100
        Image size.
    threshold : float, default 0.8
    seed : int, default 1
    max_bucket : int, default 2000
    """

    name = "n-min"
    label = "n-min (bottom-k) sketch"
    reference = "seed 003 (Ignatov, Kuznetsov et al.); Broder 2000"
    input = "shingles"
    comparison = "hash buckets of image elements, shared-count filter, estimate verified"

    def __init__(
        self,
        *,
        k: int = 5,
        n: int = 100,
        threshold: float = 0.8,
        seed: int = 1,
        max_bucket: int = 2000,
    ) -> None:
        self.k = k
        self.n = n
        self.threshold = threshold
        self.seed = seed
        self.max_bucket = max_bucket

    def _validate(self) -> None:
        self._check(self.k >= 1 and self.n >= 1, "k and n must be >= 1")
        self._check(0 < self.threshold <= 1, f"threshold must lie in (0, 1], got {self.threshold}")
        self._check(self.max_bucket >= 2, f"max_bucket must be >= 2, got {self.max_bucket}")

    def signatures(self, corpus: Corpus) -> Signatures:
        feats = [
            bottom_k(s, self.n, self.seed) if s.shape[0] else EMPTY for s in corpus.shingles(self.k)
        ]
        return Signatures(feats, min_common=math.ceil(self.threshold * self.n))

    def pairs(self, signatures: Signatures) -> np.ndarray:
        feats = signatures.features
        cand, shared = pairs_from_keys(feats, max_bucket=self.max_bucket, return_counts=True)
        sizes = np.fromiter((f.shape[0] for f in feats), dtype=np.int64, count=len(feats))
        need = self.threshold * np.minimum(sizes[cand[:, 0]], sizes[cand[:, 1]]) - 1e-9
        cand = cand[shared >= need]
        keep = [
            bottom_k_resemblance(feats[a], feats[b], self.n) >= self.threshold - 1e-12
            for a, b in cand.tolist()
        ]
        return cand[np.array(keep, dtype=bool)] if keep else cand


class MinInNMethod(NearDuplicateMethod):
    """min-in-n: the minima of n permutations (MinHash), LSH-banded and verified.

    Parameters
    ----------
    k : int, default 5
    n : int, default 100
        Permutations.
    threshold : float, default 0.8
    bands : int, default 20
        LSH bands for the candidates (``n`` must be a multiple).
    seed : int, default 1
    """

    name = "min-in-n"
    label = "min-in-n-permutations sketch"
    reference = "seed 003 (Ignatov, Kuznetsov et al.); Broder 1997"
    input = "shingles"
    comparison = "LSH bands of the image, verified by equal positions"

    def __init__(
        self, *, k: int = 5, n: int = 100, threshold: float = 0.8, bands: int = 20, seed: int = 1
    ) -> None:
        self.k = k
        self.n = n
        self.threshold = threshold
        self.bands = bands
        self.seed = seed

    def _validate(self) -> None:
        self._check(self.k >= 1 and self.n >= 1, "k and n must be >= 1")
        self._check(0 < self.threshold <= 1, f"threshold must lie in (0, 1], got {self.threshold}")
        self._check(
            self.bands >= 1 and self.n % self.bands == 0,
            f"n={self.n} must be a multiple of bands={self.bands}",
        )

    def signatures(self, corpus: Corpus) -> Signatures:
        hv, empty = minhash_matrix(corpus.shingles(self.k), self.n, self.seed)
        pos = group_keys(hv, self.n, tag=2)  # one key per (position, value)
        feats = [EMPTY if empty[i] else pos[i] for i in range(len(corpus))]
        return Signatures(
            feats,
            min_common=math.ceil(self.threshold * self.n),
            data={"hashvalues": hv, "bands": group_keys(hv, self.bands, tag=3), "empty": empty},
        )

    def pairs(self, signatures: Signatures) -> np.ndarray:
        hv = signatures.data["hashvalues"]
        empty = signatures.data["empty"]
        bands = signatures.data["bands"]
        cand = pairs_from_keys([EMPTY if empty[i] else bands[i] for i in range(len(hv))])
        if cand.shape[0] == 0:
            return cand
        est = np.count_nonzero(hv[cand[:, 0]] == hv[cand[:, 1]], axis=1) / self.n
        return cand[est >= self.threshold - 1e-12]
