"""The "six heaviest words" signature shared by A1, A2, A3 and A10 (seed 002).

A document's words (stop words dropped, Snowball-stemmed by default) are weighted by
the method; the ``n_words`` (6) heaviest (ties: alphabetical) are concatenated in
alphabetical order and the string is hashed with CRC32. Documents with equal CRC32 are
duplicates. The weighting is what distinguishes A1 (tf), A2 (BM25), A3 (tf·RIDF) and A10
(tf·optimal-frequency IDF). A document with fewer distinct words uses all of them.
Time O(total tokens + n · V_d log V_d) for V_d distinct words of a document; memory
O(vocabulary).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A1, A2, A3, A10).
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Sequence

from dedup.base import (
    EMPTY,
    Corpus,
    NearDuplicateMethod,
    Signatures,
    crc32_key,
    keys_array,
)
from dedup.lexicon import Lexicon, top_terms


def normalized_tf(tokens: Sequence[str]) -> dict[str, float]:
    """Term frequency divided by the document's largest term frequency.

    Examples
    --------
    >>> normalized_tf(["a", "b", "a"])
    {'a': 1.0, 'b': 0.5}
    """
    tf = Counter(tokens)
    if not tf:
        return {}
    top = max(tf.values())
    return {w: c / top for w, c in tf.items()}


class TopWordsMethod(NearDuplicateMethod):
    """Base class: CRC32 of the alphabetically sorted ``n_words`` heaviest words.

    Parameters
    ----------
    n_words : int, default 6
        Words in the signature (seed 002: 6).
    stem : bool, default True
        Snowball-stem the words first.
    """

    def __init__(self, *, n_words: int = 6, stem: bool = True) -> None:
        self.n_words = n_words
        self.stem = stem

    def _validate(self) -> None:
        self._check(self.n_words >= 1, f"n_words must be >= 1, got {self.n_words}")

    @abstractmethod
    def weights(self, tokens: list[list[str]], lexicon: Lexicon) -> list[dict[str, float]]:
        """Weight of every distinct word of every document."""

    def signatures(self, corpus: Corpus) -> Signatures:
        tokens = corpus.tokens(stem=self.stem, drop_stopwords=True)
        lexicon = Lexicon.from_tokens(tokens)
        feats = []
        for w in self.weights(tokens, lexicon):
            if not w:
                feats.append(EMPTY)
                continue
            feats.append(keys_array([crc32_key(" ".join(top_terms(w, self.n_words)))]))
        return Signatures(feats)
