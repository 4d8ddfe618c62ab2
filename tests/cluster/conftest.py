"""Fixtures of the clustering tests: Reuters-21578 stories and their shingles (real data).

The shared data must be present (``WEBOMETRICS_DATA`` or ``../shared/data``); a missing
corpus fails the tests (:class:`~core.exceptions.DataNotFoundError`), never skips.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from corpora.reuters import ReutersDocument, load_reuters
from extract import Shingler


@pytest.fixture(scope="session")
def reuters_2000(shared_data: Path) -> list[ReutersDocument]:
    """The first 2,000 stories in file order."""
    return load_reuters(limit=2000, path=shared_data / "reuters21578")


@pytest.fixture(scope="session")
def reuters_sets(reuters_2000: list[ReutersDocument]) -> list[np.ndarray]:
    """1-word shingles (stemmed, without stop words) of the first 2,000 stories."""
    return Shingler(k=1, language="en").hashes_many(d.text for d in reuters_2000)


@pytest.fixture(scope="session")
def reuters_sets_k2(reuters_2000: list[ReutersDocument]) -> list[np.ndarray]:
    """2-word shingles of the first 2,000 stories."""
    return Shingler(k=2, language="en").hashes_many(d.text for d in reuters_2000)
