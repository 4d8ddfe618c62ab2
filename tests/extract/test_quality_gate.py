"""Quality gate: main-text F1 on a fixed subset of the Scrapinghub benchmark.

30 pages (every 6th by item id), extracted with the project's default ``[extract]``
options (language filter off, so that every page is scored) and scored as in
``bench/extraction.py``; trafilatura with its defaults 0.965 on the same pages. The
floors, the figures measured when they were pinned and the digest of the pages are the
gate ``extraction`` of tests/quality_gates.toml: a change that loses more than about a
point fails here; the full figures are in bench/results/extraction.md.
"""

from __future__ import annotations

import dataclasses

import pytest

from core.settings import Settings
from extract import ExtractOptions, extract_page
from extract.evaluate import aeb_counts, scores_from_counts
from tests.quality_gates import floors


@pytest.mark.slow
def test_extraction_quality_gate(aeb_pages):
    floor = floors("extraction")
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
    assert tokens.f1 >= floor["token_f1"], tokens
    assert tokens.precision >= floor["token_precision"], tokens
    assert tokens.recall >= floor["token_recall"], tokens
    assert shingles.f1 >= floor["shingle4_f1"], shingles
