"""The labelled corpora for clustering by kind of activity, under one name each.

A registry over the corpus loaders of :mod:`corpora`: every corpus is given as
raw texts, a gold class per document and a language per document, so a clusterer and a
benchmark can treat them alike (``bench/activity.py``, the tuning of
:class:`cluster.activity.ActivityClusterer`).

=================  =====  =======  ====================================================
name               docs   classes  a document / its label
=================  =====  =======  ====================================================
reuters            11367  82       a Reuters-21578 story with a topic / its first topic
bbc                2225   5        a BBC article / its topic
webkb              4518   6        a 1997 university page / its page type (not other)
lenta              773    9        a Lenta.ru article (ru) / its rubric
tgcontest-ru       291    8        a Russian news text / its Toloka category
tgcontest-en       151    8        an English news text / its Toloka category
tgcontest-mixed    442    8        both of the above / the category
websites           556    7        a real website's home-page text / its activity
testweb            500    7        a test-web external site (joined pages) / its category
pooled-en          7450   26       bbc, webkb, websites and tgcontest-en pooled /
                                   its corpus and label (``bbc/tech``)
=================  =====  =======  ====================================================

``pooled-en`` stands in for a corpus of long texts in many classes that no default was
chosen on (issue 37 names one of 20 classes; none is in the shared data): the four English
corpora of long texts pooled, each class kept apart (``bbc/sport`` is not ``websites/
sports``), 2,134 characters a document on average. Its parts were among the corpora the
defaults were measured on, so it is a test of many classes and mixed kinds of text, not of
unseen words. :func:`corpus_names` lists it last; ``corpus_names(pooled=False)`` leaves it
out, as the leave-one-corpus-out choices must (its parts are there already).

Languages are ISO 639-1 codes: ``en`` for the English corpora, ``ru`` for Lenta, the
language of each text for tgcontest, and the detected language of each site for the
test web (459 en, 41 ru). ``testweb`` builds the local test web on first use (see
:mod:`corpora.testweb`; slow the first time, cached afterwards).

``limit`` draws a class-stratified random subset: the documents are shuffled with the
seed and ranked within their class; a document's key is its rank divided by its class
size (plus a random fraction), and the ``limit`` smallest keys are kept, so every class
keeps about its share. The subset is returned in corpus order. Time O(N log N).

Examples
--------
>>> from corpora.activity import corpus_names, load_activity_corpus
>>> "websites" in corpus_names()
True
>>> c = load_activity_corpus("websites", limit=70)
>>> len(c.texts), len(set(c.labels)), c.languages[0]
(70, 7, 'en')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ActivityCorpus:
    """A labelled corpus for activity clustering.

    Attributes
    ----------
    name : str
        Its registry name (:func:`corpus_names`).
    texts : list of str
        The raw text of each document.
    labels : list of str
        The gold class of each document.
    languages : list of str or None
        ISO 639-1 code of each document when known, else ``None``.
    note : str
        One line: what a document is and what its label is.
    """

    name: str
    texts: list[str]
    labels: list[str]
    languages: list[str | None]
    note: str

    def __post_init__(self) -> None:
        if not len(self.texts) == len(self.labels) == len(self.languages):
            raise ValueError(
                f"corpus {self.name}: {len(self.texts)} texts, {len(self.labels)} labels and "
                f"{len(self.languages)} languages; give one of each per document"
            )


def _corpus(name: str, docs: Sequence[Any], note: str, language: str | None) -> ActivityCorpus:
    """A corpus of loaded documents (``.text``, ``.label``; ``.language`` unless given)."""
    return ActivityCorpus(
        name,
        [d.text for d in docs],
        [str(d.label) for d in docs],
        [language or d.language for d in docs],
        note,
    )


def _reuters() -> ActivityCorpus:
    from corpora.reuters import load_reuters

    docs = [d for d in load_reuters() if d.label]
    note = "Reuters-21578 story (title and body) with at least one topic / its first TOPICS code"
    return _corpus("reuters", docs, note, "en")


def _bbc() -> ActivityCorpus:
    from corpora.bbc import load_bbc

    return _corpus("bbc", load_bbc(), "BBC News article (headline and body) / its topic", "en")


def _webkb() -> ActivityCorpus:
    from corpora.webkb import load_webkb

    note = "WebKB university page of 1997 (lxml text) / its page type, 'other' left out"
    return _corpus("webkb", load_webkb(), note, "en")


def _lenta() -> ActivityCorpus:
    from corpora.lenta import load_lenta

    return _corpus("lenta", load_lenta(), "Lenta.ru article (Russian) / its rubric", "ru")


def _tgcontest(language: str) -> Callable[[], ActivityCorpus]:
    def load() -> ActivityCorpus:
        from corpora.tgcontest_categories import load_tgcontest_categories

        docs = load_tgcontest_categories("all" if language == "mixed" else language)
        what = {"ru": "Russian", "en": "English", "mixed": "Russian and English"}[language]
        note = f"tgcontest {what} news text (title and text) / its Toloka gold category"
        return _corpus(f"tgcontest-{language}", docs, note, None)

    return load


def _websites() -> ActivityCorpus:
    from corpora.websites import load_websites

    note = "real website, cleaned home-page text (lemmatised, no stop words) / its activity"
    return _corpus("websites", load_websites(), note, "en")


def _testweb() -> ActivityCorpus:
    from corpora.testweb import load_testweb

    note = "external site of the local test web, its pages' main texts joined / its category"
    return _corpus("testweb", load_testweb(), note, None)


POOLED = {"pooled-en": ("bbc", "webkb", "websites", "tgcontest-en")}
"""Each pooled corpus and the corpora it pools (their classes kept apart)."""


def _pooled(name: str) -> Callable[[], ActivityCorpus]:
    def load() -> ActivityCorpus:
        parts = [_LOADERS[part]() for part in POOLED[name]]
        note = (f"a document of {', '.join(POOLED[name])} / its corpus and label "
                "(classes of different corpora kept apart)")  # fmt: skip
        return ActivityCorpus(
            name,
            [t for c in parts for t in c.texts],
            [f"{c.name}/{label}" for c in parts for label in c.labels],
            [lang for c in parts for lang in c.languages],
            note,
        )

    return load


_LOADERS: dict[str, Callable[[], ActivityCorpus]] = {
    "reuters": _reuters,
    "bbc": _bbc,
    "webkb": _webkb,
    "lenta": _lenta,
    "tgcontest-ru": _tgcontest("ru"),
    "tgcontest-en": _tgcontest("en"),
    "tgcontest-mixed": _tgcontest("mixed"),
    "websites": _websites,
    "testweb": _testweb,
    **{name: _pooled(name) for name in POOLED},
}


def corpus_names(*, pooled: bool = True) -> list[str]:
    """The names :func:`load_activity_corpus` knows, in the order of the module table
    (``pooled=False``: without the pooled corpora of :data:`POOLED`)."""
    return [name for name in _LOADERS if pooled or name not in POOLED]


def stratified_subset(labels: Sequence[str], limit: int, seed: int = 1) -> list[int]:
    """Indices of a class-stratified random subset of ``limit`` documents, in corpus order.

    Parameters
    ----------
    labels : sequence of str
        The class of every document.
    limit : int
        How many to keep (all when ``limit >= len(labels)``).
    seed : int, default 1
        Seed of the shuffle.

    Returns
    -------
    list of int

    Raises
    ------
    ValueError
        ``limit`` is below 1.

    Examples
    --------
    >>> labels = ["a"] * 6 + ["b"] * 2
    >>> keep = stratified_subset(labels, 4, seed=3)
    >>> len(keep), sorted(labels[i] for i in keep)
    (4, ['a', 'a', 'a', 'b'])
    """
    if limit < 1:
        raise ValueError(f"limit={limit}: must be >= 1 (or None for the whole corpus)")
    n = len(labels)
    if limit >= n:
        return list(range(n))
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    size: dict[str, int] = {}
    for label in labels:
        size[label] = size.get(label, 0) + 1
    seen: dict[str, int] = {}
    key = np.empty(n)
    jitter = rng.random(n)
    for i in order:
        label = labels[i]
        rank = seen.get(label, 0)
        seen[label] = rank + 1
        key[i] = (rank + jitter[i]) / size[label]
    return sorted(np.argsort(key, kind="stable")[:limit].tolist())


def load_activity_corpus(name: str, *, limit: int | None = None, seed: int = 1) -> ActivityCorpus:
    """A corpus of the registry, whole or as a stratified random subset.

    Parameters
    ----------
    name : str
        One of :func:`corpus_names`.
    limit : int, optional
        Keep this many documents (:func:`stratified_subset`); ``None``: all.
    seed : int, default 1
        Seed of the subset.

    Returns
    -------
    ActivityCorpus

    Raises
    ------
    ValueError
        An unknown name or a ``limit`` below 1.
    DataNotFoundError
        The shared data folder is missing.
    """
    if name not in _LOADERS:
        raise ValueError(f"unknown corpus {name!r}: use one of {', '.join(_LOADERS)}")
    corpus = _LOADERS[name]()
    if limit is None:
        return corpus
    keep = stratified_subset(corpus.labels, limit, seed)
    return ActivityCorpus(
        corpus.name,
        [corpus.texts[i] for i in keep],
        [corpus.labels[i] for i in keep],
        [corpus.languages[i] for i in keep],
        corpus.note,
    )
