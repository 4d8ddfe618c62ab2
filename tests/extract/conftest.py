"""Real pages for the extraction tests, loaded once per session from the shared data."""

from __future__ import annotations

import pytest

from extract.evaluate import AebPage, load_aeb

RUSSIAN_AEB = "c4a3637c6696f238cf9fe1c7fbb17bbb6731a71d4f5fe399b9b4fc3294a96a6b"  # gto-normativy.ru
RUSSIAN_AEB_LONG = "ff0f958ade714ebfaf5c0b42b1c0152a62063f4e6f72141406ccefc4a2677f21"  # vse-diety


@pytest.fixture(scope="session")
def aeb_pages() -> list[AebPage]:
    return load_aeb()


@pytest.fixture(scope="session")
def aeb_by_id(aeb_pages) -> dict[str, AebPage]:
    return {p.item_id: p for p in aeb_pages}


@pytest.fixture(scope="session")
def english_page(aeb_pages) -> AebPage:
    """An English news article of the benchmark (the first with > 2,000 gold characters)."""
    return next(p for p in aeb_pages if len(p.gold) > 2000 and p.gold.isascii())


@pytest.fixture(scope="session")
def russian_page(aeb_by_id) -> AebPage:
    """A real Russian article page (UTF-8 as published)."""
    return aeb_by_id[RUSSIAN_AEB_LONG]
