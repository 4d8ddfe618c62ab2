"""Site-template removal: drop text blocks repeated across many pages of one site.

Pages of one registered domain share navigation, footers, cookie notices, "share this"
lines and sign-up boxes; trafilatura removes most of them page by page but keeps some.
Across the pages of a site they stand out: the same block recurs on many pages. This is
the site-level *template detection* of Bar-Yossef & Rajagopalan (2002) and the
"frequent block" idea of Lin & Ho (2002) / Yi, Liu & Li's site style tree (2003),
reduced to text lines:

1. split every page's main text into blocks (its lines, i.e. trafilatura's paragraphs);
2. key each block by a 64-bit hash of its normalised form (NFKC, case folded,
   whitespace collapsed, digits mapped to ``0`` so that "© 2019" and "© 2020" match);
3. a block is *template* when it occurs on at least ``min_pages`` pages **and** on at
   least ``min_share`` of the site's pages;
4. remove the template blocks from each page; a page made only of template blocks
   becomes empty, unless every page of the site is (a site of identical pages is kept
   whole: near-duplicate removal is the dedup stage's job).

Time O(total text length); memory O(number of distinct blocks).

References
----------
Z. Bar-Yossef, S. Rajagopalan, *Template detection via data mining and its
applications*, WWW 2002.
L. Yi, B. Liu, X. Li, *Eliminating noisy information in Web pages for data mining*,
KDD 2003.

Examples
--------
>>> pages = [f"Home | News | Contact\\nStory number {i} about cats.\\n© 2019 Example Ltd"
...          for i in ("one", "two", "three", "four")]
>>> tr = TemplateRemover(min_pages=3, min_share=0.5).fit(pages)
>>> tr.n_template_blocks_
2
>>> tr.transform(pages)[0]
'Story number one about cats.'
>>> round(tr.removed_share_, 2)
0.59
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Self

import xxhash

from core import defaults as D
from extract.tokens import normalize

__all__ = ["TemplateRemover", "block_key", "remove_templates"]

_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")


def block_key(block: str) -> int | None:
    """The 64-bit key of a text block (``None`` for a block without letters or digits).

    Examples
    --------
    >>> block_key("© 2019  Example") == block_key("© 2020 EXAMPLE")
    True
    >>> block_key(" -- ") is None
    True
    """
    text = _DIGITS.sub("0", _SPACE.sub(" ", normalize(block)).strip())
    if not any(c.isalnum() for c in text):
        return None
    return xxhash.xxh3_64_intdigest(text)


def _blocks(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


class TemplateRemover:
    """Learn a site's template blocks from its pages' texts, then remove them.

    Parameters
    ----------
    min_pages : int
        A template block occurs on at least this many pages (``[extract]
        template_min_pages``).
    min_share : float
        ... and on at least this share of the site's pages (``template_min_share``).

    Attributes
    ----------
    template_keys_ : frozenset of int
        Keys (:func:`block_key`) of the template blocks.
    n_pages_ : int
        Pages seen by :meth:`fit`.
    n_template_blocks_ : int
        ``len(template_keys_)``.
    examples_ : list of str
        Up to 20 template blocks as first seen, most frequent first.
    all_template_ : bool
        Every fitted page is made only of template blocks (then pages are kept whole).
    removed_share_ : float
        Share of the characters of the fitted texts that :meth:`transform` removes
        (set by :meth:`fit`).

    Raises
    ------
    ValueError
        From :meth:`fit`: ``min_pages < 2`` or ``min_share`` outside (0, 1].
    """

    def __init__(
        self,
        *,
        min_pages: int = D.EXTRACT_TEMPLATE_MIN_PAGES,
        min_share: float = D.EXTRACT_TEMPLATE_MIN_SHARE,
    ) -> None:
        self.min_pages = min_pages
        self.min_share = min_share

    def fit(self, texts: Sequence[str]) -> Self:
        """Find the template blocks of one site's page texts."""
        if self.min_pages < 2:
            raise ValueError(f"min_pages={self.min_pages}: a template spans at least 2 pages")
        if not 0 < self.min_share <= 1:
            raise ValueError(f"min_share={self.min_share}: must be in (0, 1]")
        pages_with: Counter[int] = Counter()
        first_seen: dict[int, str] = {}
        for text in texts:
            keys = set()
            for block in _blocks(text):
                key = block_key(block)
                if key is not None:
                    keys.add(key)
                    first_seen.setdefault(key, block.strip())
            pages_with.update(keys)
        n = len(texts)
        need = max(self.min_pages, self.min_share * n)
        template = {k for k, c in pages_with.items() if c >= need}
        self.template_keys_ = frozenset(template)
        self.n_pages_ = n
        self.n_template_blocks_ = len(template)
        ranked = sorted(template, key=lambda k: (-pages_with[k], first_seen[k]))
        self.examples_ = [first_seen[k] for k in ranked[:20]]
        self.all_template_ = bool(texts) and all(
            all(k is None or k in template for k in map(block_key, _blocks(t))) for t in texts
        )
        total = sum(len(t) for t in texts)
        kept = sum(len(t) for t in self.transform(texts)) if template else total
        self.removed_share_ = (total - kept) / total if total else 0.0
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "template_keys_"):
            raise RuntimeError("TemplateRemover is not fitted: call fit(texts) first")

    def transform_one(self, text: str) -> str:
        """One page's text without the template blocks."""
        self._check_fitted()
        if not self.template_keys_:
            return text
        keys = [(b, block_key(b)) for b in _blocks(text)]
        if not any(k is not None and k not in self.template_keys_ for _, k in keys):
            return text if self.all_template_ else ""  # nothing of its own
        return "\n".join(b for b, k in keys if k not in self.template_keys_)

    def transform(self, texts: Iterable[str]) -> list[str]:
        """Every page's text without the template blocks."""
        return [self.transform_one(t) for t in texts]

    def fit_transform(self, texts: Sequence[str]) -> list[str]:
        """:meth:`fit` then :meth:`transform` on the same texts."""
        return self.fit(texts).transform(texts)


def remove_templates(
    texts: Sequence[str],
    *,
    min_pages: int = D.EXTRACT_TEMPLATE_MIN_PAGES,
    min_share: float = D.EXTRACT_TEMPLATE_MIN_SHARE,
) -> list[str]:
    """The texts of one site's pages with its template blocks removed.

    Examples
    --------
    >>> remove_templates(["a\\nmenu", "b\\nmenu", "c\\nmenu"], min_pages=3)
    ['a', 'b', 'c']
    >>> remove_templates(["a\\nmenu", "b\\nmenu"], min_pages=3)  # too few pages
    ['a\\nmenu', 'b\\nmenu']
    """
    return TemplateRemover(min_pages=min_pages, min_share=min_share).fit_transform(texts)
