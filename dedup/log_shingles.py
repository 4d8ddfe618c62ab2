"""A8 Log Shingles: the shingles divisible by a power of two (seed 002).

Seed 002: "from all 5-word shingles, those divisible by powers of 2 are chosen". Our
reading: a document with S distinct shingle hashes keeps those divisible by ``2^j``,
``j = max(0, floor(log2(S / sample_size)))``, so every document keeps about
``sample_size`` to ``2 · sample_size`` shingles whatever its length (a sample growing with
the logarithm of the length is what "log" suggests; the seed leaves it open). The
samples are nested: the sample at level j contains that at j + 1. Two documents are
compared at the coarser level ``max(j_a, j_b)`` (both samples restricted to multiples of
``2^max``), and are duplicates when the resemblance of the restricted samples is at
least ``threshold``. Candidates are documents sharing a sampled shingle (hash buckets;
buckets of more than ``max_bucket`` documents, i.e. boilerplate, are skipped), then
verified. Seed 002 on ROMIP: R 0.39, P 0.97, F 0.56. The shingle hashes are finalised
by ``fmix64`` (:mod:`extract.shingles`), so their low bits are uniform.
Time O(total shingles + candidates · sample_size); memory O(n · sample_size).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A8).
"""

from __future__ import annotations

import numpy as np

from dedup.base import Corpus, NearDuplicateMethod, Signatures, pairs_from_keys


def sample_level(n_shingles: int, sample_size: int) -> int:
    """The power of two a document of ``n_shingles`` is sampled with.

    Examples
    --------
    >>> sample_level(10, 16), sample_level(100, 16), sample_level(1000, 16)
    (0, 2, 5)
    """
    if n_shingles <= sample_size:
        return 0
    return int(np.floor(np.log2(n_shingles / sample_size)))


class LogShinglesMethod(NearDuplicateMethod):
    """A8: shingles divisible by ``2^j``, compared at the coarser level.

    Parameters
    ----------
    k : int, default 5
    sample_size : int, default 16
        Shingles kept per document (between this and twice this).
    threshold : float, default 0.5
        Resemblance of the samples for a duplicate.
    max_bucket : int, default 1000
    """

    name = "a8-log-shingles"
    label = "A8 Log Shingles"
    reference = "seed 002 (Zelenkov & Segalovich 2007)"
    input = "shingles"
    comparison = "hash buckets of sampled shingles, then verified"

    def __init__(
        self, *, k: int = 5, sample_size: int = 16, threshold: float = 0.5, max_bucket: int = 1000
    ) -> None:
        self.k = k
        self.sample_size = sample_size
        self.threshold = threshold
        self.max_bucket = max_bucket

    def _validate(self) -> None:
        self._check(self.k >= 1, f"k must be >= 1, got {self.k}")
        self._check(self.sample_size >= 1, f"sample_size must be >= 1, got {self.sample_size}")
        self._check(0 < self.threshold <= 1, f"threshold must lie in (0, 1], got {self.threshold}")
        self._check(self.max_bucket >= 2, f"max_bucket must be >= 2, got {self.max_bucket}")

    def signatures(self, corpus: Corpus) -> Signatures:
        feats = []
        levels = []
        for h in corpus.shingles(self.k):
            j = sample_level(h.shape[0], self.sample_size)
            mask = np.uint64((1 << j) - 1)
            feats.append(h[(h & mask) == 0])
            levels.append(j)
        return Signatures(feats, data={"levels": np.array(levels, dtype=np.int64)})

    def pairs(self, signatures: Signatures) -> np.ndarray:
        cand = pairs_from_keys(signatures.features, max_bucket=self.max_bucket)
        feats = signatures.features
        levels = signatures.data["levels"]
        keep = np.zeros(cand.shape[0], dtype=bool)
        for p, (a, b) in enumerate(cand.tolist()):
            mask = np.uint64((1 << int(max(levels[a], levels[b]))) - 1)
            fa, fb = feats[a], feats[b]
            fa, fb = fa[(fa & mask) == 0], fb[(fb & mask) == 0]
            inter = np.intersect1d(fa, fb, assume_unique=True).shape[0]
            union = fa.shape[0] + fb.shape[0] - inter
            keep[p] = union > 0 and inter >= self.threshold * union - 1e-9
        return cand[keep]
