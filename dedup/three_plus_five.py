"""A12 "3+5": signatures of the three longest sentences, two of three must match (seed 002).

Seed 002: the signatures of a document's three longest sentences are computed; two
documents are duplicates when the signatures of their longest sentences match, or when
two of the three signatures match, in any order. (The seed then sorts a file of
signatures into chains of documents of non-decreasing length; with hash buckets that
sort is not needed: the rule is decided exactly by keys.) Each document is filed under
``L:<crc of its longest sentence>`` and under ``P:<crc a>,<crc b>`` for each unordered
pair of its three longest sentences (sorted crcs); sharing any key is the rule. Ties in
length go to the earlier sentence; a document with fewer sentences files what it has.
The seed does not explain the "5"; no parameter here depends on it. Seed 002 on ROMIP:
R 0.96, P 0.95, F 0.95, best of all, "especially good on small documents".
Time O(total characters); memory O(n).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A12).
"""

from __future__ import annotations

from itertools import combinations

from dedup.base import (
    EMPTY,
    Corpus,
    NearDuplicateMethod,
    Signatures,
    crc32_key,
    hash64,
    keys_array,
)
from dedup.long_sent import pick_sentences


class ThreePlusFiveMethod(NearDuplicateMethod):
    """A12: longest sentence equal, or two of the three longest sentences equal.

    Parameters
    ----------
    n_sentences : int, default 3
        How many of the longest sentences are signed.
    min_match : int, default 2
        How many of them must match when the longest ones differ.
    """

    name = "a12-3plus5"
    label = 'A12 "3+5"'
    reference = "seed 002 (Zelenkov & Segalovich 2007)"

    def __init__(self, *, n_sentences: int = 3, min_match: int = 2) -> None:
        self.n_sentences = n_sentences
        self.min_match = min_match

    def _validate(self) -> None:
        self._check(self.n_sentences >= 1, f"n_sentences must be >= 1, got {self.n_sentences}")
        self._check(
            1 <= self.min_match <= self.n_sentences,
            f"min_match must lie in 1..n_sentences, got {self.min_match}",
        )

    def signatures(self, corpus: Corpus) -> Signatures:
        feats = []
        for sents in corpus.sentences():
            if not sents:
                feats.append(EMPTY)
                continue
            chosen = pick_sentences(sents, [float(len(s)) for s in sents], self.n_sentences)
            crcs = [crc32_key(" ".join(s)) for s in chosen]
            keys = {hash64(f"L:{crcs[0]}")}
            for combo in combinations(sorted(set(crcs)), self.min_match):
                keys.add(hash64("P:" + ",".join(map(str, combo))))
            feats.append(keys_array(sorted(keys)))
        return Signatures(feats)
