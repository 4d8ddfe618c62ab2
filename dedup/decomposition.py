"""A11 "decomposition": length partitions and common inverted lists (seed 002).

Seed 002 describes the experimental A11 only as "based on the observation that the size
of a document in words separates well, and on finding the common lists of documents
having the same feature", reporting nearly 100 % recall and precision without figures.
Our reading: an exact similarity join over the documents' k-word shingle sets
(:func:`dedup.simjoin.jaccard_join`): documents are decomposed by size into
partitions (a pair with Jaccard >= t has sizes within a factor t, so only the same or the
neighbouring partition is searched) and candidates are found in the inverted lists
(shingle → documents) of a rare-first prefix of each document, then verified exactly.
Duplicates are pairs with Jaccard >= ``threshold``. With k = 5 and t = 0.8 this is
exactly the truth of the Reuters benchmark, so its figures there check that truth.
Time near-linear in the total shingles for high thresholds; memory O(total shingles).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A11).
S. Chaudhuri, V. Ganti, R. Kaushik, ICDE 2006 (prefix filter).
"""

from __future__ import annotations

import math

import numpy as np

from dedup.base import Corpus, NearDuplicateMethod, Signatures
from dedup.simjoin import jaccard_join


class DecompositionMethod(NearDuplicateMethod):
    """A11: exact Jaccard join of shingle sets within length partitions.

    Parameters
    ----------
    k : int, default 5
    threshold : float, default 0.8
    """

    name = "a11-decomposition"
    label = "A11 decomposition"
    reference = "seed 002 (Zelenkov & Segalovich 2007); Chaudhuri et al. 2006"
    input = "shingles"
    comparison = "length partitions + prefix-filtered inverted lists, verified exactly"

    def __init__(self, *, k: int = 5, threshold: float = 0.8) -> None:
        self.k = k
        self.threshold = threshold

    def _validate(self) -> None:
        self._check(self.k >= 1, f"k must be >= 1, got {self.k}")
        self._check(0 < self.threshold <= 1, f"threshold must lie in (0, 1], got {self.threshold}")

    def signatures(self, corpus: Corpus) -> Signatures:
        sets = corpus.shingles(self.k)
        sizes = [s.shape[0] for s in sets]
        # fpmax: a group must share a threshold fraction of the smallest member's shingles
        smallest = min((s for s in sizes if s), default=1)
        return Signatures(list(sets), min_common=max(1, math.ceil(self.threshold * smallest)))

    def pairs(self, signatures: Signatures) -> np.ndarray:
        pairs, sims = jaccard_join(signatures.features, self.threshold)
        self.similarities_ = sims
        return pairs
