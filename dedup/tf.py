"""A1 TF: CRC32 of the six words of highest normalised term frequency (seed 002).

Weight of a word: its frequency in the document divided by the document's largest term
frequency (the seed's "normalised in-document frequency"). See
:mod:`dedup.topwords` for the signature. Seed 002 on ROMIP: R 0.60, P 0.94,
F 0.73. A local method: no collection statistics. Time O(total tokens).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A1).

Examples
--------
>>> texts = ["alpha beta gamma delta epsilon zeta eta", "eta zeta epsilon delta gamma beta alpha"]
>>> TfMethod().fit(texts).pairs_.tolist()
[[0, 1]]
"""

from __future__ import annotations

from dedup.lexicon import Lexicon
from dedup.topwords import TopWordsMethod, normalized_tf


class TfMethod(TopWordsMethod):
    """A1: the six words of highest normalised tf."""

    name = "a1-tf"
    label = "A1 TF"
    reference = "seed 002 (Zelenkov & Segalovich 2007)"

    def weights(self, tokens: list[list[str]], lexicon: Lexicon) -> list[dict[str, float]]:
        return [normalized_tf(t) for t in tokens]
