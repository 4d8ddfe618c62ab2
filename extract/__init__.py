"""HTML → main text, title, date, language; text → normalised tokens and shingle hashes.

A library of plain functions and small objects over bytes and strings: it knows no
database, no Scrapy. The stable API:

- :func:`extract_page` (``extract.page``): HTML bytes or text → :class:`PageExtraction`
  with ``text``, ``title``, ``date``, ``sitename``, ``language``, ``language_score``,
  ``status`` and ``reason``; never raises on bad input.
- :func:`shingle_hashes` (``extract.shingles``): text → sorted distinct ``uint64`` hashes
  of its k-word shingles; :class:`Shingler` for many texts.
- :func:`tokenize`, :func:`normalize` (``extract.tokens``).

Heavy modules (trafilatura, py3langid) load on first use of :func:`extract_page`.

Examples
--------
>>> from extract import shingle_hashes, tokenize
>>> tokenize("Ёлки-палки", "ru")
['елки', 'палки']
>>> shingle_hashes("Ёлки-палки", k=2, language="ru").size
1
"""

from __future__ import annotations

from typing import Any

from extract.shingles import Shingler, shingle_hashes, shingle_hashes_from_tokens
from extract.tokens import normalize, stem_words, tokenize, words

__all__ = [
    "ExtractOptions",
    "PageExtraction",
    "Shingler",
    "extract_page",
    "normalize",
    "shingle_hashes",
    "shingle_hashes_from_tokens",
    "stem_words",
    "tokenize",
    "words",
]

_LAZY = {
    "extract_page": "extract.page",
    "ExtractOptions": "extract.page",
    "PageExtraction": "extract.page",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'extract' has no attribute {name!r}")
