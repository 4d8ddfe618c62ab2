"""``store.analytics`` exports the row class of every reader: a caller that imports a
reader from the package can name (annotate, build a frame of) the rows it returns
without reaching into the module that defines them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

from store import analytics as A


def _modules() -> list[ModuleType]:
    return [
        importlib.import_module(f"{A.__name__}.{info.name}")
        for info in pkgutil.iter_modules(A.__path__)
    ]


def _row_readers(module: ModuleType) -> dict[str, str]:
    """The public functions ``module`` defines that return ``list[XRow]``, with ``XRow``
    (read from the annotation's text: the modules postpone their annotations)."""
    readers = {}
    for name, function in inspect.getmembers(module, inspect.isfunction):
        if name.startswith("_") or function.__module__ != module.__name__:
            continue
        returned = str(inspect.signature(function).return_annotation)
        match = re.fullmatch(r"list\[([A-Za-z]\w*Row)\]", returned)
        if match:
            readers[name] = match[1]
    return readers


def test_the_share_readers_are_found() -> None:
    from store.analytics import shares

    readers = _row_readers(shares)
    assert {"university_shares", "country_shares", "share_comparison"} <= set(readers)


@pytest.mark.parametrize("module", _modules(), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_readers_row_class_is_exported(module: ModuleType) -> None:
    missing = {
        f"{name} -> {row}"
        for name, row in _row_readers(module).items()
        if row not in A.__all__ or getattr(A, row) is not getattr(module, row)
    }
    assert not missing, (
        f"store.analytics does not export the row class of {sorted(missing)}: import it in "
        "store/analytics/__init__.py and add it to __all__"
    )
