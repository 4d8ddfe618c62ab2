"""SpotSigs: stop-word-anchored spot signatures, partitions and inverted-index pruning.

Theobald, Siddharth, Paepcke 2008 (seed 004). A *spot* is an antecedent — one of a few
frequent stop words — followed by the next ``chain`` words that are not stop words
(``the:company:said``); running text (the article) is rich in such spots while
navigation and ads are not, which makes the signature robust to page templates. A
document is the set of its spots (each hashed to 64 bits); two documents are duplicates
when the Jaccard similarity of their spot sets is at least ``threshold``.

Pairs come from the exact join of :func:`dedup.simjoin.jaccard_join`: the
SpotSigs *partitions* (sizes cut so that a similar pair lies in one partition or two
neighbouring ones, each with its own inverted index) and the *inverted-index pruning*
(only a rare-first prefix of each set is indexed and probed: a set that shares none of
those spots cannot reach the threshold), every candidate verified exactly.

Antecedents (our choice, the paper's English list extended; Russian added for this
project): English ``a an the is was were are there said this that be been has had
will``; Russian ``и в на не что это как был была были было по с к он она``. Unknown
language: both. Time near-linear in the total spots; memory O(total spots).

References
----------
M. Theobald, J. Siddharth, A. Paepcke, "SpotSigs: robust and efficient near duplicate
detection in large web collections", SIGIR 2008.
Seed 004_c0888cd231dfb92b.txt (SpotSigs).

Examples
--------
>>> spots(["the", "big", "company", "said", "it", "was", "a", "record"], {"the", "was", "a"},
...       {"the", "was", "a", "it"}, chain=2)
['the:big:company', 'was:record', 'a:record']
"""

from __future__ import annotations

import math

import numpy as np

from dedup.base import EMPTY, Corpus, NearDuplicateMethod, Signatures, hash64
from dedup.simjoin import jaccard_join

ANTECEDENTS: dict[str, frozenset[str]] = {
    "en": frozenset(
        {"a", "an", "the", "is", "was", "were", "are", "there", "said", "this", "that"}
        | {"be", "been", "has", "had", "will"}
    ),
    "ru": frozenset(
        {"и", "в", "на", "не", "что", "это", "как", "был", "была", "были", "было", "по"}
        | {"с", "к", "он", "она"}
    ),
}


def antecedents_for(language: str | None) -> frozenset[str]:
    """The antecedent words of a language (both lists when unknown or unlisted)."""
    if language in ANTECEDENTS:
        return ANTECEDENTS[language]
    return ANTECEDENTS["en"] | ANTECEDENTS["ru"]


def spots(
    tokens: list[str],
    antecedents: frozenset[str] | set[str],
    stop: frozenset[str] | set[str],
    *,
    chain: int = 2,
) -> list[str]:
    """The spots of a token stream: antecedent, then the next ``chain`` non-stop words
    (fewer at the end of the text; an antecedent followed by none makes no spot)."""
    out = []
    n = len(tokens)
    for i, t in enumerate(tokens):
        if t not in antecedents:
            continue
        words: list[str] = []
        j = i + 1
        while j < n and len(words) < chain:
            if tokens[j] not in stop:
                words.append(tokens[j])
            j += 1
        if words:
            out.append(":".join([t, *words]))
    return out


class SpotSigsMethod(NearDuplicateMethod):
    """SpotSigs: Jaccard of spot sets, partitioned and prefix-pruned join.

    Parameters
    ----------
    chain : int, default 2
        Non-stop words after the antecedent.
    threshold : float, default 0.5
        Jaccard similarity of spot sets for a duplicate.
    """

    name = "spotsigs"
    label = "SpotSigs"
    reference = "seed 004; Theobald et al. 2008"
    comparison = "length partitions + prefix-pruned inverted index, verified exactly"

    def __init__(self, *, chain: int = 2, threshold: float = 0.5) -> None:
        self.chain = chain
        self.threshold = threshold

    def _validate(self) -> None:
        self._check(self.chain >= 1, f"chain must be >= 1, got {self.chain}")
        self._check(0 < self.threshold <= 1, f"threshold must lie in (0, 1], got {self.threshold}")

    def signatures(self, corpus: Corpus) -> Signatures:
        from extract.tokens import stopwords_for

        feats = []
        for i, toks in enumerate(corpus.tokens()):
            lang = corpus.language(i)
            sp = spots(toks, antecedents_for(lang), stopwords_for(lang), chain=self.chain)
            feats.append(
                np.unique(np.array([hash64(s) for s in sp], dtype=np.uint64)) if sp else EMPTY
            )
        sizes = [f.shape[0] for f in feats if f.shape[0]]
        smallest = min(sizes, default=1)
        return Signatures(feats, min_common=max(1, math.ceil(self.threshold * smallest)))

    def pairs(self, signatures: Signatures) -> np.ndarray:
        pairs, sims = jaccard_join(signatures.features, self.threshold)
        self.similarities_ = sims
        return pairs
