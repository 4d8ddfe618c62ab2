"""The doctests of the testbed package (pytest's --doctest-modules does not cover it)."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["paper_scale", "siteindex", "sites", "texts", "webkb"])
def test_doctests(name: str):
    module = importlib.import_module(f"testbed.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
