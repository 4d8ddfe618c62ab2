"""A4 Long Sent: CRC32 of the two longest sentences (seed 002).

The two sentences with the most words (ties: the earlier) are concatenated, longest
first, and hashed with CRC32; documents with equal CRC32 are duplicates. Sentences and
their words follow :mod:`dedup.sentences` (our rule, documented there: the
seed does not define a sentence). A document with one sentence is signed by it alone.
Seed 002 on ROMIP: R 0.84, P 0.80, F 0.82, the best of the published methods. A local
method. Time O(total characters); memory O(n).

References
----------
Yu. Zelenkov, I. Segalovich, seed 002_4dfeb6ddc067769c.txt (A4).

Examples
--------
>>> a = "A short one. This is by far the longest sentence of the text. Then a middle one here."
>>> b = "Another start. This is by far the longest sentence of the text. Then a middle one here."
>>> LongSentMethod().fit([a, b, "Unrelated words only."]).pairs_.tolist()
[[0, 1]]
"""

from __future__ import annotations

from dedup.base import (
    EMPTY,
    Corpus,
    NearDuplicateMethod,
    Signatures,
    crc32_key,
    keys_array,
)


def pick_sentences(sentences: list[list[str]], weights: list[float], n: int) -> list[list[str]]:
    """The ``n`` sentences of largest weight (ties: the earlier), heaviest first."""
    order = sorted(range(len(sentences)), key=lambda i: (-weights[i], i))[:n]
    return [sentences[i] for i in order]


def sentence_string(sentences: list[list[str]]) -> str:
    """The signed string: the sentences' words, sentences separated by `` | ``."""
    return " | ".join(" ".join(s) for s in sentences)


class LongSentMethod(NearDuplicateMethod):
    """A4: CRC32 of the ``n_sentences`` longest sentences.

    Parameters
    ----------
    n_sentences : int, default 2
    """

    name = "a4-long-sent"
    label = "A4 Long Sent"
    reference = "seed 002 (Zelenkov & Segalovich 2007)"

    def __init__(self, *, n_sentences: int = 2) -> None:
        self.n_sentences = n_sentences

    def _validate(self) -> None:
        self._check(self.n_sentences >= 1, f"n_sentences must be >= 1, got {self.n_sentences}")

    def signatures(self, corpus: Corpus) -> Signatures:
        feats = []
        for sents in corpus.sentences():
            if not sents:
                feats.append(EMPTY)
                continue
            chosen = pick_sentences(sents, [float(len(s)) for s in sents], self.n_sentences)
            feats.append(keys_array([crc32_key(sentence_string(chosen))]))
        return Signatures(feats)
