"""Real texts of real sites labelled by the paper's categories: training and test data of
the text model of categories (:mod:`analyse.text_model`).

Each shared corpus whose labels map onto the paper's categories gives *site samples*: a
few pages of one site (its registered domain, :func:`core.domains.registered_domain`),
labelled with the site's category, as the analyse stage reads up to ``[analyse]
pages_per_domain`` pages of a domain:

=====================  ===============================  ==========================
corpus                 labels kept                      category
=====================  ===============================  ==========================
``webkb``              every page (CS departments,      universities
                       1997; 5 class folders, 'other'
                       too)
``bbc``                every article                    news_portals
``lenta``              every article                    news_portals
``tgcontest``          every text but ``not_news``      news_portals
``websites``           Social Networking and Messaging  social_networks
                       News                             news_portals
                       Streaming Services               media
                       Travel, Sports, Photography,     other_organisations
                       Law and Government
=====================  ===============================  ==========================

A site is the registered domain of the page's URL (``bbc.co.uk`` and ``lenta.ru`` for the
corpora without URLs: each is *one* site). Cross-validation must keep a site's samples in
one fold (the ``site`` of a :class:`SiteSample` is its group): a single-site corpus such as
the BBC's is then tested on a model that never saw it, but all its samples are one fold.
A site's pages are cut, in the corpus's order, into samples of ``pages_per_sample``
pages; a site with many pages gives at most ``max_samples_per_site`` samples, chosen
with a seeded generator, so that the BBC, Lenta.ru or Cornell do not outweigh a hundred
one-page sites.

The corpora's licences forbid shipping their texts or anything derived from them (read
each ``SOURCE.txt`` of ``../shared/data``): a model is trained from them at run time
(``webometrics category train``), never shipped.

Loading all five corpora takes about 10 s (WebKB's HTML is parsed with lxml), O(size).

Examples
--------
>>> from corpora.site_kinds import load_site_kinds
>>> samples = load_site_kinds(["websites"])
>>> sorted({s.category for s in samples})
['media', 'news_portals', 'other_organisations', 'social_networks']
>>> len(samples), len({s.site for s in samples})  # 3 sites have two home pages in the data
(532, 529)
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.domains import registered_domain

__all__ = [
    "CORPORA",
    "WEBSITES_CATEGORIES",
    "SiteSample",
    "load_site_kinds",
    "site_samples",
]

CORPORA = ("webkb", "bbc", "lenta", "tgcontest", "websites")
"""The corpora :func:`load_site_kinds` reads, in its default order."""

WEBSITES_CATEGORIES = {
    "Social Networking and Messaging": "social_networks",
    "News": "news_portals",
    "Streaming Services": "media",
    "Travel": "other_organisations",
    "Sports": "other_organisations",
    "Photography": "other_organisations",
    "Law and Government": "other_organisations",
}
"""website-classification's kinds of activity -> the paper's categories."""


@dataclass(frozen=True, slots=True)
class SiteSample:
    """A few pages of one site with the site's category.

    Attributes
    ----------
    site : str
        The site's registered domain: the group of cross-validation.
    category : str
        A key of the shipped taxonomy (``universities``, ``news_portals`` ...).
    corpus : str
        One of :data:`CORPORA` (or ``database`` for texts read from a database).
    texts : tuple of str
        The pages' texts (a title first where the corpus has one).
    """

    site: str
    category: str
    corpus: str
    texts: tuple[str, ...]


def site_samples(
    pages: Iterable[tuple[str, str, str]],
    *,
    corpus: str,
    pages_per_sample: int = 5,
    max_samples_per_site: int = 20,
    seed: int = 1,
) -> list[SiteSample]:
    """Cut ``(site, category, text)`` pages into samples of one site each.

    Parameters
    ----------
    pages : iterable of (str, str, str)
        Site, category and text of each page, in a stable order; empty texts are dropped.
    corpus : str
        The name stored in each sample.
    pages_per_sample : int, default 5
    max_samples_per_site : int, default 20
        A site with more samples keeps this many, drawn with ``random.Random(seed)``.
    seed : int, default 1

    Returns
    -------
    list of SiteSample
        Sorted by site and category, then by the pages' order. The pages of one site
        with two categories (website-classification has ``www.youtube.com`` a social
        network and ``tv.youtube.com`` a streaming service) make samples of each.

    Raises
    ------
    ValueError
        ``pages_per_sample`` or ``max_samples_per_site`` below 1.

    Examples
    --------
    >>> pages = [("a.org", "media", "one"), ("a.org", "media", "two"), ("b.org", "media", "x")]
    >>> [(s.site, s.texts) for s in site_samples(pages, corpus="t", pages_per_sample=2)]
    [('a.org', ('one', 'two')), ('b.org', ('x',))]
    """
    if pages_per_sample < 1 or max_samples_per_site < 1:
        raise ValueError(
            f"pages_per_sample ({pages_per_sample}) and max_samples_per_site "
            f"({max_samples_per_site}) must be at least 1"
        )
    by_site: dict[tuple[str, str], list[str]] = defaultdict(list)
    for site, cat, text in pages:
        if text and text.strip():
            by_site[site, cat].append(text)
    rng = random.Random(seed)
    out: list[SiteSample] = []
    for site, cat in sorted(by_site):
        texts = by_site[site, cat]
        chunks = [
            tuple(texts[i : i + pages_per_sample]) for i in range(0, len(texts), pages_per_sample)
        ]
        if len(chunks) > max_samples_per_site:
            keep = sorted(rng.sample(range(len(chunks)), max_samples_per_site))
            chunks = [chunks[i] for i in keep]
        out.extend(SiteSample(site, cat, corpus, c) for c in chunks)
    return out


def _pages(name: str) -> list[tuple[str, str, str]]:
    """(site, category, text) of every usable page of one corpus."""
    if name == "webkb":  # ALL_CLASSES: a department's 'other' pages are the university's too
        from corpora.webkb import ALL_CLASSES, load_webkb

        return [(registered_domain(p.url), "universities", p.text) for p in load_webkb(ALL_CLASSES)]
    if name == "bbc":
        from corpora.bbc import load_bbc

        return [("bbc.co.uk", "news_portals", d.text) for d in load_bbc()]
    if name == "lenta":
        from corpora.lenta import load_lenta

        return [("lenta.ru", "news_portals", d.text) for d in load_lenta()]
    if name == "tgcontest":
        from corpora.tgcontest_categories import load_tgcontest_categories

        return [
            (registered_domain(d.url), "news_portals", d.text)
            for d in load_tgcontest_categories("all")
            if d.label != "not_news"
        ]
    if name == "websites":
        from corpora.websites import load_websites

        return [
            (registered_domain(d.url), WEBSITES_CATEGORIES[d.label], d.text)
            for d in load_websites()
        ]
    raise ValueError(f"unknown corpus {name!r}: use some of {', '.join(CORPORA)}")


def load_site_kinds(
    corpora: Sequence[str] = CORPORA,
    *,
    pages_per_sample: int = 5,
    max_samples_per_site: int = 20,
    seed: int = 1,
) -> list[SiteSample]:
    """Site samples of the shared corpora (see the module docstring).

    Parameters
    ----------
    corpora : sequence of str, default :data:`CORPORA`
    pages_per_sample, max_samples_per_site, seed
        As :func:`site_samples`.

    Returns
    -------
    list of SiteSample
        The corpora in the order given.

    Raises
    ------
    ValueError
        An unknown corpus name.
    DataNotFoundError
        The shared data folder is missing (``WEBOMETRICS_DATA``).
    """
    unknown = [c for c in corpora if c not in CORPORA]
    if unknown:
        raise ValueError(f"unknown corpus {unknown[0]!r}: use some of {', '.join(CORPORA)}")
    out: list[SiteSample] = []
    for name in dict.fromkeys(corpora):
        out.extend(
            site_samples(
                _pages(name),
                corpus=name,
                pages_per_sample=pages_per_sample,
                max_samples_per_site=max_samples_per_site,
                seed=seed,
            )
        )
    return out
