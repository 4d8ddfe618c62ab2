"""Collection statistics of the lexical methods: document frequency, IDF, BM25, RIDF.

The lexical near-duplicate methods of seed 002 (A1-A3, A5, A7, A9, A10), I-Match and the
keyword signatures of seed 004 weigh each word of a document and keep a few. The weights
need statistics of the whole collection, gathered once by :class:`Lexicon` in
O(total tokens) time and O(vocabulary) memory:

* ``df`` document frequency, ``cf`` collection frequency, ``N`` documents, mean length;
* IDF ``log(N / df)``;
* BM25 (Robertson & Walker 1994; seed 002 prescribes k = 2, b = 0.75):
  ``w = idf_bm25 · tf (k + 1) / (tf + k (1 - b + b · dl / avgdl))`` with Lucene's
  non-negative ``idf_bm25 = log(1 + (N - df + 0.5) / (df + 0.5))`` (the seed does not
  fix the IDF form; Robertson's original goes negative for words in more than half of
  the documents, which would make such words unselectable rather than merely weak);
* residual IDF (Church & Gale 1995): ``ridf = -log2(df / N) + log2(1 - exp(-cf / N))``,
  the excess of the observed IDF over the IDF a Poisson model with the same collection
  frequency predicts.

References
----------
S. E. Robertson, S. Walker, "Some simple effective approximations to the 2-Poisson
model", SIGIR 1994.
K. W. Church, W. A. Gale, "Poisson mixtures", *Natural Language Engineering* 1(2), 1995.
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt, RCDL 2007.

Examples
--------
>>> lex = Lexicon.from_tokens([["a", "b", "b"], ["b", "c"]])
>>> lex.n_documents, lex.df_of("b"), round(lex.idf_of("a"), 3)
(2, 2, 0.693)
>>> top_terms({"x": 1.0, "y": 3.0, "z": 3.0}, 2)
['y', 'z']
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np


class Lexicon:
    """Document and collection frequencies of a tokenised collection.

    Attributes
    ----------
    vocabulary : dict of str to int
        Word → column.
    df, cf : ndarray of int64
        Document and collection frequency per column.
    n_documents : int
    mean_length : float
        Mean number of tokens per document (1 when the collection is empty).
    """

    def __init__(
        self, vocabulary: dict[str, int], df: np.ndarray, cf: np.ndarray, n: int, mean: float
    ) -> None:
        self.vocabulary = vocabulary
        self.df = df
        self.cf = cf
        self.n_documents = n
        self.mean_length = mean

    @classmethod
    def from_tokens(cls, documents: Sequence[Sequence[str]]) -> Lexicon:
        """Count the frequencies of a tokenised collection (one token list per document)."""
        df: Counter[str] = Counter()
        cf: Counter[str] = Counter()
        total = 0
        for toks in documents:
            cf.update(toks)
            df.update(set(toks))
            total += len(toks)
        vocab = {w: i for i, w in enumerate(df)}
        n = len(documents)
        return cls(
            vocab,
            np.fromiter((df[w] for w in vocab), dtype=np.int64, count=len(vocab)),
            np.fromiter((cf[w] for w in vocab), dtype=np.int64, count=len(vocab)),
            n,
            total / n if n and total else 1.0,
        )

    def df_of(self, word: str) -> int:
        """Document frequency of a word (0 when unseen)."""
        i = self.vocabulary.get(word)
        return int(self.df[i]) if i is not None else 0

    def idf(self) -> np.ndarray:
        """``log(N / df)`` per column."""
        return np.log(self.n_documents / np.maximum(self.df, 1))

    def idf_of(self, word: str) -> float:
        """``log(N / df)`` of one word (that of df = 1 when unseen)."""
        return math.log(self.n_documents / max(self.df_of(word), 1))

    def bm25_idf(self) -> np.ndarray:
        """Lucene's non-negative BM25 IDF per column."""
        df = self.df.astype(np.float64)
        return np.log1p((self.n_documents - df + 0.5) / (df + 0.5))

    def ridf(self) -> np.ndarray:
        """Residual IDF (Church & Gale 1995) per column, in bits."""
        n = float(self.n_documents)
        expected = -np.log2(-np.expm1(-self.cf / n))
        return -np.log2(self.df / n) - expected

    def bm25(
        self, tokens: Sequence[str], idf: np.ndarray, *, k: float = 2.0, b: float = 0.75
    ) -> dict[str, float]:
        """BM25 weight of every distinct word of one document."""
        tf = Counter(tokens)
        norm = k * (1.0 - b + b * len(tokens) / self.mean_length)
        vocab = self.vocabulary
        return {
            w: float(idf[vocab[w]]) * c * (k + 1.0) / (c + norm)
            for w, c in tf.items()
            if w in vocab
        }


def top_terms(weights: Mapping[str, float], n: int) -> list[str]:
    """The ``n`` heaviest words (ties: alphabetical), returned in alphabetical order."""
    best = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return sorted(w for w, _ in best)
