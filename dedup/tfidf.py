"""A2 TF*IDF: CRC32 of the six words of highest BM25 weight (seed 002).

Weight of a word: Okapi BM25 with k = 2 and b = 0.75 as the seed prescribes, over the
collection being de-duplicated (:class:`dedup.lexicon.Lexicon`; the IDF form is
Lucene's non-negative one, a choice documented there). See
:mod:`dedup.topwords` for the signature. Seed 002 on ROMIP: R 0.54, P 0.96,
F 0.69. Time O(total tokens); memory O(vocabulary).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A2).
S. E. Robertson, S. Walker, SIGIR 1994 (BM25).
"""

from __future__ import annotations

from dedup.lexicon import Lexicon
from dedup.topwords import TopWordsMethod


class TfIdfMethod(TopWordsMethod):
    """A2: the six words of highest BM25 weight.

    Parameters
    ----------
    n_words : int, default 6
    stem : bool, default True
    k : float, default 2.0
        BM25 term-frequency saturation.
    b : float, default 0.75
        BM25 length normalisation.
    """

    name = "a2-tfidf"
    label = "A2 TF*IDF"
    reference = "seed 002 (Zelenkov & Segalovich 2007); BM25"

    def __init__(self, *, n_words: int = 6, stem: bool = True, k: float = 2.0, b: float = 0.75):
        super().__init__(n_words=n_words, stem=stem)
        self.k = k
        self.b = b

    def _validate(self) -> None:
        super()._validate()
        self._check(self.k > 0, f"k must be > 0, got {self.k}")
        self._check(0 <= self.b <= 1, f"b must lie in [0, 1], got {self.b}")

    def weights(self, tokens: list[list[str]], lexicon: Lexicon) -> list[dict[str, float]]:
        idf = lexicon.bm25_idf()
        return [lexicon.bm25(t, idf, k=self.k, b=self.b) for t in tokens]
