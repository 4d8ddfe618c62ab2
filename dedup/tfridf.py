"""A3 TF*RIDF: CRC32 of the six words of highest tf · residual IDF (seed 002).

Weight of a word: normalised term frequency (tf / max tf) times its residual IDF
(Church & Gale 1995), which depends on the document frequency and the collection
frequency, as the seed says; the product form is our choice (the seed gives no formula).
Words with negative RIDF (spread as a Poisson model predicts, i.e. not topical) can only
fill a signature of a document with few words. Seed 002 on ROMIP: R 0.59, P 0.95, F 0.73.
Time O(total tokens); memory O(vocabulary).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A3).
K. W. Church, W. A. Gale, "Poisson mixtures", 1995 (residual IDF).
"""

from __future__ import annotations

from dedup.lexicon import Lexicon
from dedup.topwords import TopWordsMethod, normalized_tf


class TfRidfMethod(TopWordsMethod):
    """A3: the six words of highest tf · RIDF."""

    name = "a3-tfridf"
    label = "A3 TF*RIDF"
    reference = "seed 002 (Zelenkov & Segalovich 2007); Church & Gale 1995"

    def weights(self, tokens: list[list[str]], lexicon: Lexicon) -> list[dict[str, float]]:
        ridf = lexicon.ridf()
        vocab = lexicon.vocabulary
        return [{w: f * float(ridf[vocab[w]]) for w, f in normalized_tf(t).items()} for t in tokens]
