"""Domain documents: one registered domain as the union of its pages' shingle sets and the
sum of their term counts.

The paper clusters external *sites* (seed 000): a site's document is the union of the
shingle sets of its pages. Two caps keep documents comparable and bounded, both with
deterministic, sampling-sound choices:

- at most ``max_pages`` pages: the pages whose URL has the smallest XXH3-64 hash (a
  bottom-k sample of the URLs: uniform, reproducible, and stable when a re-crawl adds
  pages, since a new page enters only if its hash ranks among the k smallest);
- at most ``max_shingles`` shingles: the smallest shingle hashes of the union (a
  bottom-k sketch of the set, Broder 1997 / Cohen & Kaplan 2007; for two documents cut
  this way, the Jaccard similarity of the sketches estimates that of the full sets).

Before shingling, the site's template blocks (navigation, footers, cookie text repeated
across its pages; :mod:`extract.templates`) are removed when ``template_removal`` is on;
the templates are learnt from all the given pages, not only the sampled ones.

The same sampled, template-free page texts give the document's term counts (the weighted
representation, :mod:`extract.terms`): the sum of the pages' counts, each page counted
in its own language, cut to the ``max_terms`` most frequent terms
(:func:`extract.terms.top_terms`). A page document's counts are cut the same way
(:meth:`DomainDocumentBuilder.page_terms`).

Time O(total text length + S log S + T log T) for S shingles and T distinct terms;
memory O(S + T).

References
----------
A. Z. Broder, *On the resemblance and containment of documents*, SEQUENCES 1997.
E. Cohen, H. Kaplan, *Summarizing data using bottom-k sketches*, PODC 2007.

Examples
--------
>>> builder = DomainDocumentBuilder(k=1, max_pages=2, max_shingles=5, template_removal=False)
>>> pages = [PageText("https://a.org/1", "Alpha beta gamma", "en"),
...          PageText("https://a.org/2", "Gamma delta epsilon zeta", "en"),
...          PageText("https://a.org/3", "Eta theta", "en")]
>>> doc = builder.build(pages)
>>> doc.n_pages, len(doc.shingles) <= 5, doc.language
(2, True, 'en')
>>> doc.terms == merge_counts(builder.page_terms(p.text, "en") for p in pages if p.url in doc.urls)
True
>>> DomainDocumentBuilder(max_terms=2).page_terms("Rankings rank the ranked universities", "en")
{'rank': 3, 'universiti': 1}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import xxhash

from core import defaults as D
from extract.shingles import Shingler
from extract.templates import TemplateRemover
from extract.terms import TermCounter, merge_counts, top_terms

if TYPE_CHECKING:
    from core.settings import Settings

__all__ = [
    "DomainDocument",
    "DomainDocumentBuilder",
    "PageText",
    "cap_shingles",
    "select_pages",
    "union_shingles",
]


@dataclass(frozen=True)
class PageText:
    """A page's URL, main text and language: what a domain document is built from."""

    url: str
    text: str
    language: str | None = None


@dataclass
class DomainDocument:
    """A site's document.

    Attributes
    ----------
    shingles : numpy.ndarray of uint64
        Sorted distinct shingle hashes (at most ``max_shingles``).
    n_pages : int
        Pages used (after the ``max_pages`` cap).
    text_length : int
        Characters of the used pages' texts after template removal.
    language : str or None
        The language of most of the used text.
    urls : list of str
        The used pages' URLs.
    n_template_blocks : int
        Template blocks found on the site (0 when removal is off).
    template_removed_share : float
        Share of the site's text that was template.
    terms : dict of str to int
        Term counts of the used pages' texts after template removal, summed over the
        pages, at most ``max_terms`` (the most frequent; :func:`extract.terms.top_terms`).
    """

    shingles: np.ndarray
    n_pages: int
    text_length: int
    language: str | None
    urls: list[str] = field(default_factory=list)
    n_template_blocks: int = 0
    template_removed_share: float = 0.0
    terms: dict[str, int] = field(default_factory=dict)


def url_rank(url: str) -> int:
    """The sampling key of a URL (its XXH3-64 hash).

    Examples
    --------
    >>> url_rank("https://a.org/") == url_rank("https://a.org/")
    True
    """
    return xxhash.xxh3_64_intdigest(url.encode("utf-8", "surrogatepass"))


def select_pages(urls: Sequence[str], max_pages: int) -> list[int]:
    """Indices of the ``max_pages`` URLs with the smallest hashes (all when fewer), in
    rank order.

    Examples
    --------
    >>> select_pages(["a", "b", "c"], 5)
    [1, 2, 0]
    >>> len(select_pages(["a", "b", "c"], 2))
    2
    """
    if max_pages < 1:
        raise ValueError(f"max_pages={max_pages}: must be >= 1 ([domain] max_pages)")
    order = sorted(range(len(urls)), key=lambda i: (url_rank(urls[i]), urls[i]))
    return order[:max_pages]


def union_shingles(sets: Sequence[np.ndarray]) -> np.ndarray:
    """Sorted distinct union of ``uint64`` shingle arrays.

    Examples
    --------
    >>> union_shingles([np.array([3, 1], dtype=np.uint64), np.array([2, 3], dtype=np.uint64)])
    array([1, 2, 3], dtype=uint64)
    """
    nonempty = [np.asarray(s, dtype=np.uint64) for s in sets if len(s)]
    if not nonempty:
        return np.empty(0, dtype=np.uint64)
    return np.unique(np.concatenate(nonempty))


def cap_shingles(shingles: np.ndarray, max_shingles: int) -> np.ndarray:
    """The ``max_shingles`` smallest values of a sorted distinct array (bottom-k sketch).

    Examples
    --------
    >>> cap_shingles(np.array([1, 5, 9], dtype=np.uint64), 2)
    array([1, 5], dtype=uint64)
    """
    if max_shingles < 1:
        raise ValueError(f"max_shingles={max_shingles}: must be >= 1 ([domain] max_shingles)")
    return shingles[:max_shingles]


class DomainDocumentBuilder:
    """Build domain documents with one set of options (one object per run).

    Parameters
    ----------
    k, stem, stopwords : int, bool, bool
        Shingle options (``[shingle]``).
    max_pages, max_shingles, max_terms : int
        Caps (``[domain]``); ``max_terms`` also caps the term counts of page documents.
    template_removal : bool
        Remove the site's template blocks first (``[extract] template_removal``).
    template_min_pages, template_min_share : int, float
        Template thresholds (``[extract]``).
    """

    def __init__(
        self,
        *,
        k: int = D.SHINGLE_K,
        stem: bool = D.SHINGLE_STEM,
        stopwords: bool = D.SHINGLE_STOPWORDS,
        max_pages: int = D.DOMAIN_MAX_PAGES,
        max_shingles: int = D.DOMAIN_MAX_SHINGLES,
        max_terms: int = D.DOMAIN_MAX_TERMS,
        template_removal: bool = D.EXTRACT_TEMPLATE_REMOVAL,
        template_min_pages: int = D.EXTRACT_TEMPLATE_MIN_PAGES,
        template_min_share: float = D.EXTRACT_TEMPLATE_MIN_SHARE,
    ) -> None:
        if max_pages < 1 or max_shingles < 1 or max_terms < 1:
            raise ValueError(
                "max_pages, max_shingles and max_terms must be >= 1 ([domain] section)"
            )
        self.k = k
        self.stem = stem
        self.stopwords = stopwords
        self.max_pages = max_pages
        self.max_shingles = max_shingles
        self.max_terms = max_terms
        self.template_removal = template_removal
        self.template_min_pages = template_min_pages
        self.template_min_share = template_min_share
        self._shinglers: dict[str | None, Shingler] = {}
        self._counters: dict[str | None, TermCounter] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> DomainDocumentBuilder:
        """The builder of the ``[shingle]``, ``[domain]`` and ``[extract]`` settings."""
        return cls(
            k=settings.shingle.k,
            stem=settings.shingle.stem,
            stopwords=settings.shingle.stopwords,
            max_pages=settings.domain.max_pages,
            max_shingles=settings.domain.max_shingles,
            max_terms=settings.domain.max_terms,
            template_removal=settings.extract.template_removal,
            template_min_pages=settings.extract.template_min_pages,
            template_min_share=settings.extract.template_min_share,
        )

    def shingler(self, language: str | None) -> Shingler:
        """The (memoising) shingler of a language."""
        if language not in self._shinglers:
            self._shinglers[language] = Shingler(
                k=self.k, language=language, stem=self.stem, stopwords=self.stopwords
            )
        return self._shinglers[language]

    def page_shingles(self, text: str, language: str | None) -> np.ndarray:
        """One page's shingle hashes with the builder's options."""
        return self.shingler(language).hashes(text)

    def term_counter(self, language: str | None) -> TermCounter:
        """The (memoising) term counter of a language, one per builder."""
        counter = self._counters.get(language)
        if counter is None:
            counter = self._counters[language] = TermCounter(language=language)
        return counter

    def page_terms(self, text: str, language: str | None) -> dict[str, int]:
        """One page's term counts, at most ``max_terms`` (the most frequent)."""
        return top_terms(self.term_counter(language).counts(text), self.max_terms)

    def build(self, pages: Sequence[PageText]) -> DomainDocument:
        """The document of one domain from its pages (the ``ok`` ones).

        Raises
        ------
        ValueError
            No pages.
        """
        if not pages:
            raise ValueError("a domain document needs at least one page")
        texts = [p.text for p in pages]
        n_blocks, removed = 0, 0.0
        chosen = select_pages([p.url for p in pages], self.max_pages)
        if self.template_removal and len(pages) >= self.template_min_pages:
            remover = TemplateRemover(
                min_pages=self.template_min_pages, min_share=self.template_min_share
            ).fit(texts)
            n_blocks, removed = remover.n_template_blocks_, remover.removed_share_
            used = [remover.transform_one(texts[i]) for i in chosen]
        else:
            used = [texts[i] for i in chosen]
        sets = [
            self.page_shingles(text, pages[i].language)
            for i, text in zip(chosen, used, strict=True)
        ]
        shingles = cap_shingles(union_shingles(sets), self.max_shingles)
        terms = merge_counts(
            self.term_counter(pages[i].language).counts(text)
            for i, text in zip(chosen, used, strict=True)
        )
        weight: Counter[str | None] = Counter()
        for i, text in zip(chosen, used, strict=True):
            weight[pages[i].language] += len(text)
        language = weight.most_common(1)[0][0] if weight else None
        return DomainDocument(
            shingles=shingles,
            n_pages=len(chosen),
            text_length=sum(len(t) for t in used),
            language=language,
            urls=[pages[i].url for i in chosen],
            n_template_blocks=n_blocks,
            template_removed_share=round(removed, 4),
            terms=top_terms(terms, self.max_terms),
        )
