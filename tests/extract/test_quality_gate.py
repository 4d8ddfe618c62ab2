"""Quality gate: main-text F1 on a fixed subset of the Scrapinghub benchmark.

30 pages (every 6th by item id), extracted with the project's default ``[extract]``
options (language filter off, so that every page is scored) and scored as in
``bench/extraction.py``. Measured when pinned: token F1 0.968 (P 0.946, R 0.992), 4-gram
F1 0.965; trafilatura with its defaults 0.965 on the same pages. A change that loses
more than about a point fails here; the full figures are in bench/results/extraction.md.
"""

from __future__ import annotations

import dataclasses

import pytest

from core.settings import Settings
from extract import ExtractOptions, extract_page
from extract.evaluate import aeb_counts, scores_from_counts

FLOOR_TOKEN_F1 = 0.960
FLOOR_TOKEN_PRECISION = 0.935
FLOOR_TOKEN_RECALL = 0.980
FLOOR_SHINGLE4_F1 = 0.955


@pytest.mark.slow
def test_extraction_quality_gate(aeb_pages):
    subset = aeb_pages[::6][:30]
    assert len(subset) == 30
    options = dataclasses.replace(ExtractOptions.from_settings(Settings().extract), languages=())
    texts = [extract_page(p.html, p.url, options).text for p in subset]
    tokens = scores_from_counts(
        [aeb_counts(p.gold, t, 1) for p, t in zip(subset, texts, strict=True)]
    )
    shingles = scores_from_counts(
        [aeb_counts(p.gold, t, 4) for p, t in zip(subset, texts, strict=True)]
    )
    assert tokens.f1 >= FLOOR_TOKEN_F1, tokens
    assert tokens.precision >= FLOOR_TOKEN_PRECISION, tokens
    assert tokens.recall >= FLOOR_TOKEN_RECALL, tokens
    assert shingles.f1 >= FLOOR_SHINGLE4_F1, shingles
