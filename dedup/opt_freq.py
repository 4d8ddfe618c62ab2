"""A10 Opt Freq: CRC32 of the six words of highest tf · "optimal frequency" IDF (seed 002).

The seed: a word's IDF is raised along a parabola when it is below an "optimal" IDF and
lowered along a hyperbola above it. Our reading (the seed gives no constants):
``g(idf) = (idf / opt)^2`` for ``idf <= opt`` and ``g(idf) = opt / idf`` above, with
``opt = log(1 / optimal_df)``, the IDF of a word in a fraction ``optimal_df`` (default
1 %) of the documents, so very rare words (typos, numbers) and very common ones both
weigh less than mid-frequency words. Weight = (tf / max tf) · g(idf). Seed 002 on ROMIP:
R 0.59, P 0.94, F 0.73. Time O(total tokens); memory O(vocabulary).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A10).
"""

from __future__ import annotations

import math

import numpy as np

from dedup.lexicon import Lexicon
from dedup.topwords import TopWordsMethod, normalized_tf


def optimal_idf_weight(idf: np.ndarray, optimum: float) -> np.ndarray:
    """Parabola up to the optimum, hyperbola beyond it (both 1 at the optimum).

    Examples
    --------
    >>> optimal_idf_weight(np.array([1.0, 2.0, 4.0]), 2.0).tolist()
    [0.25, 1.0, 0.5]
    """
    idf = np.asarray(idf, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(idf <= optimum, (idf / optimum) ** 2, optimum / idf)


class OptFreqMethod(TopWordsMethod):
    """A10: the six words of highest tf · g(IDF).

    Parameters
    ----------
    n_words : int, default 6
    stem : bool, default True
    optimal_df : float, default 0.01
        Fraction of documents at which a word's IDF is optimal, in (0, 1).
    """

    name = "a10-opt-freq"
    label = "A10 Opt Freq"
    reference = "seed 002 (Zelenkov & Segalovich 2007)"

    def __init__(self, *, n_words: int = 6, stem: bool = True, optimal_df: float = 0.01):
        super().__init__(n_words=n_words, stem=stem)
        self.optimal_df = optimal_df

    def _validate(self) -> None:
        super()._validate()
        self._check(
            0 < self.optimal_df < 1, f"optimal_df must lie in (0, 1), got {self.optimal_df}"
        )

    def weights(self, tokens: list[list[str]], lexicon: Lexicon) -> list[dict[str, float]]:
        g = optimal_idf_weight(lexicon.idf(), math.log(1.0 / self.optimal_df))
        vocab = lexicon.vocabulary
        return [{w: f * float(g[vocab[w]]) for w, f in normalized_tf(t).items()} for t in tokens]
