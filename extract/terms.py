"""Term counts of texts: the weighted representation of a document (bag of stemmed words).

A *term* is a normalised word (:func:`extract.tokens.words`) that is not a stop word of
the text's language, has at least :data:`MIN_TERM_LENGTH` characters and is not made of
digits only, Snowball-stemmed per language (by script when the language is unknown, as
:func:`extract.tokens.tokenize` does). The counts of a document are what tf-idf weighting
(:mod:`cluster.weighting`) and the activity clustering (:class:`cluster.ActivityClusterer`)
start from; the extract stage stores them beside the shingles so that clustering never
tokenises a page twice.

:class:`TermCounter` memoises each distinct word's term (or its rejection), so a corpus
costs one regular-expression pass per text plus one stemmer call per distinct word.

Complexity: O(L) per text of L characters; memory O(V) for a memo of V distinct words
(bounded by ``max_memo``).

Examples
--------
>>> term_counts("The universities and university rankings of 2015", "en")
{'universiti': 2, 'rank': 1}
>>> term_counts("Университеты и университетские рейтинги 2015 г.", "ru")
{'университет': 1, 'университетск': 1, 'рейтинг': 1}
>>> tc = TermCounter()
>>> tc.counts("Running dogs run") == {'run': 2, 'dog': 1}
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from extract.tokens import memo_missing, stem_words, stopwords_for, words

__all__ = ["MIN_TERM_LENGTH", "TermCounter", "merge_counts", "term_counts", "top_terms"]

MIN_TERM_LENGTH = 2
"""Words shorter than this (in characters, before stemming) are not terms."""


class TermCounter:
    """Count the terms of many texts of one language with one memo.

    Parameters
    ----------
    language : str, optional
        ISO 639-1 code (stop list and stemmer); ``None``: English and Russian stop words
        and each word stemmed by its script.
    max_memo : int
        The memo is emptied when it would hold more words than this (bounds memory).

    Examples
    --------
    >>> TermCounter(language="ru").counts("Кошки и коты, кошка!")
    {'кошк': 2, 'кот': 1}
    """

    def __init__(self, *, language: str | None = None, max_memo: int = 1 << 20) -> None:
        self.language = language
        self.max_memo = max_memo
        self._stop = stopwords_for(language)
        self._memo: dict[str, str | None] = {}

    def _fill(self, distinct: set[str]) -> None:
        memo = self._memo
        missing = memo_missing(memo, distinct, self.max_memo)  # type: ignore[arg-type]
        if not missing:
            return
        keep = [
            w
            for w in missing
            if len(w) >= MIN_TERM_LENGTH and not w.isdigit() and w not in self._stop
        ]
        memo.update(dict.fromkeys(missing))
        if keep:
            memo.update(zip(keep, stem_words(keep, self.language), strict=True))

    def counts(self, text: str) -> dict[str, int]:
        """The term counts of one text (terms in order of first occurrence)."""
        toks = words(text)
        if not toks:
            return {}
        self._fill(set(toks))
        memo = self._memo
        out: Counter[str] = Counter(t for t in map(memo.__getitem__, toks) if t is not None)
        return dict(out)

    def counts_many(self, texts: Iterable[str]) -> list[dict[str, int]]:
        """:meth:`counts` of every text, in order."""
        return [self.counts(t) for t in texts]


def term_counts(text: str, language: str | None = None) -> dict[str, int]:
    """The term counts of one text (see the module docstring).

    Parameters
    ----------
    text : str
    language : str, optional
        ISO 639-1 code; ``None``: by script (English and Russian).

    Returns
    -------
    dict of str to int
    """
    return TermCounter(language=language).counts(text)


def merge_counts(many: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The sum of several term-count mappings (a site's pages into one domain document).

    Examples
    --------
    >>> merge_counts([{"a": 1, "b": 2}, {"b": 1}])
    {'a': 1, 'b': 3}
    """
    total: Counter[str] = Counter()
    for c in many:
        total.update(c)
    return dict(total)


def top_terms(counts: Mapping[str, int], max_terms: int) -> dict[str, int]:
    """The ``max_terms`` most frequent terms (ties: the smaller term first), all when fewer.

    Examples
    --------
    >>> top_terms({"b": 2, "a": 2, "c": 1}, 2)
    {'a': 2, 'b': 2}
    """
    if len(counts) <= max_terms:
        return dict(counts)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:max_terms]
    return dict(ranked)
