"""The five keyword-signature methods of seed 004 (Peking University's Tianwang engine).

For page P_i: T_i, its N keywords of highest weight (N = 10, "about ten keywords is
best" per the Tianwang experiments), with weights W_i (keyword density: term frequency
over the number of content words; stop words dropped, words stemmed); Des(P_i), its
description — the meta description or the first 512 bytes of its text; we use the first
512 bytes of the whitespace-normalised main text (cut at a character boundary), since
meta descriptions are not stored; Con(T_i), the N keywords concatenated in weight order
(ties: alphabetical); Sort(T_i), the N keywords sorted. All fingerprints are MD5.

1. ``kw-des``: MD5(Des(P_i)) = MD5(Des(P_j));
2. ``kw-con``: MD5(Con(T_i)) = MD5(Con(T_j)) (same keywords, same weight order);
3. ``kw-sort``: MD5(Sort(T_i)) = MD5(Sort(T_j)) (same keywords, any order);
4. ``kw-con-weight``: as 2 and ``Σ(W_i - W_j)² / (Σ W_i² + Σ W_j²) < a``;
5. ``kw-sort-weight``: as 3 and the same weight test.

The weight vectors of 4 are aligned by rank, those of 5 by keyword; ``a`` = 0.05 (the
seed leaves it to tuning). Pairs come from hash buckets of the MD5 keys, then (4, 5) the
weight test per candidate. Time O(total tokens); memory O(n · N).

References
----------
Seed 004_c0888cd231dfb92b.txt, "keyword-based duplicate detection" (after Wang, Yan,
Li, *Search engines: principles, technology and systems*, Tianwang).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from dedup.base import (
    EMPTY,
    Corpus,
    NearDuplicateMethod,
    Signatures,
    keys_array,
    md5_key,
    pairs_from_keys,
)


def description(text: str, n_bytes: int = 512) -> str:
    """The first ``n_bytes`` bytes (UTF-8) of the whitespace-normalised text, whole
    characters only.

    Examples
    --------
    >>> description("Ёж  и\\nёлка", 5)
    'Ёж '
    """
    data = " ".join(text.split()).encode("utf-8")[:n_bytes]
    return data.decode("utf-8", errors="ignore")


def keywords(tokens: list[str], n: int) -> tuple[list[str], list[float]]:
    """The ``n`` keywords of highest density (ties: alphabetical) and their densities."""
    if not tokens:
        return [], []
    tf = Counter(tokens)
    best = sorted(tf.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    total = len(tokens)
    return [w for w, _ in best], [c / total for _, c in best]


def weight_distance(a: np.ndarray, b: np.ndarray) -> float:
    """``Σ(a - b)² / (Σ a² + Σ b²)``, 0 for equal vectors, at most 1 for non-negative ones.

    Examples
    --------
    >>> weight_distance(np.array([0.2, 0.1]), np.array([0.2, 0.1]))
    0.0
    """
    den = float(np.dot(a, a) + np.dot(b, b))
    return float(np.sum((a - b) ** 2)) / den if den else 0.0


class _KeywordMethod(NearDuplicateMethod):
    """Base of the keyword methods.

    Parameters
    ----------
    n_keywords : int, default 10
    stem : bool, default True
    """

    reference = "seed 004 (Tianwang keyword signatures)"
    sort_keywords = False
    weight_check = False

    def __init__(self, *, n_keywords: int = 10, stem: bool = True) -> None:
        self.n_keywords = n_keywords
        self.stem = stem

    def _validate(self) -> None:
        self._check(self.n_keywords >= 1, f"n_keywords must be >= 1, got {self.n_keywords}")

    def signatures(self, corpus: Corpus) -> Signatures:
        feats = []
        weights = np.zeros((len(corpus), self.n_keywords))
        for i, toks in enumerate(corpus.tokens(stem=self.stem, drop_stopwords=True)):
            words, w = keywords(toks, self.n_keywords)
            if not words:
                feats.append(EMPTY)
                continue
            if self.sort_keywords:
                order = sorted(range(len(words)), key=lambda k: words[k])
                words, w = [words[k] for k in order], [w[k] for k in order]
            weights[i, : len(w)] = w
            feats.append(keys_array([md5_key(" ".join(words))]))
        return Signatures(feats, data={"weights": weights})


class _WeightCheckMixin:
    """Adds the weight test ``Σ(W_i - W_j)² / (Σ W_i² + Σ W_j²) < a``."""

    def __init__(self, *, n_keywords: int = 10, stem: bool = True, a: float = 0.05) -> None:
        super().__init__(n_keywords=n_keywords, stem=stem)  # type: ignore[call-arg]
        self.a = a

    def pairs(self, signatures: Signatures) -> np.ndarray:
        cand = pairs_from_keys(signatures.features)
        w = signatures.data["weights"]
        if cand.shape[0] == 0:
            return cand
        a, b = w[cand[:, 0]], w[cand[:, 1]]
        den = (a * a).sum(axis=1) + (b * b).sum(axis=1)
        ratio = np.divide(((a - b) ** 2).sum(axis=1), den, out=np.zeros(len(den)), where=den > 0)
        return cand[ratio < self.a]


class KeywordDescriptionMethod(NearDuplicateMethod):
    """Seed 004 method 1: MD5 of the description (first 512 bytes of the text).

    Parameters
    ----------
    n_bytes : int, default 512
    """

    name = "kw-des"
    label = "Keywords 1: MD5(Des)"
    reference = "seed 004 (Tianwang keyword signatures)"

    def __init__(self, *, n_bytes: int = 512) -> None:
        self.n_bytes = n_bytes

    def _validate(self) -> None:
        self._check(self.n_bytes >= 1, f"n_bytes must be >= 1, got {self.n_bytes}")

    def signatures(self, corpus: Corpus) -> Signatures:
        feats = []
        for i in range(len(corpus)):
            des = description(corpus.text(i), self.n_bytes)
            feats.append(keys_array([md5_key(des)]) if des else EMPTY)
        return Signatures(feats)


class KeywordConMethod(_KeywordMethod):
    """Seed 004 method 2: MD5 of the top-N keywords in weight order."""

    name = "kw-con"
    label = "Keywords 2: MD5(Con)"


class KeywordSortMethod(_KeywordMethod):
    """Seed 004 method 3: MD5 of the sorted top-N keywords."""

    name = "kw-sort"
    label = "Keywords 3: MD5(Sort)"
    sort_keywords = True


class KeywordConWeightMethod(_WeightCheckMixin, _KeywordMethod):
    """Seed 004 method 4: MD5(Con) equal and the weight test.

    Parameters
    ----------
    n_keywords : int, default 10
    stem : bool, default True
    a : float, default 0.05
        Largest normalised squared weight difference.
    """

    name = "kw-con-weight"
    label = "Keywords 4: MD5(Con) + weights"


class KeywordSortWeightMethod(_WeightCheckMixin, _KeywordMethod):
    """Seed 004 method 5: MD5(Sort) equal and the weight test.

    Parameters
    ----------
    n_keywords : int, default 10
    stem : bool, default True
    a : float, default 0.05
    """

    name = "kw-sort-weight"
    label = "Keywords 5: MD5(Sort) + weights"
    sort_keywords = True
