"""The examples in the crawler's docstrings run (crawler/ is outside pytest's doctest
paths because importing its Scrapy modules needs no reactor, but some need Scrapy)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "crawler.safety",
    "crawler.errors",
    "crawler.frontier",
    "crawler.settings",
    "crawler.sources",
    "crawler.links",
    "crawler.storage",
    "crawler.warc",
    "crawler.wiring",
    "crawler.retry_after",
    "crawler.script_links",
    "crawler.render",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if name in (
        "crawler.safety",
        "crawler.errors",
        "crawler.frontier",
        "crawler.settings",
        "crawler.sources",
        "crawler.retry_after",
        "crawler.script_links",
        "crawler.render",
    ):
        assert result.attempted > 0
