"""The dashboard's read side has one reader module per page (``dashboard/readers/<page>.py``
for ``dashboard/views/<page>.py``): a page imports its own reader module and no other,
reads only through it (never an engine or a cache of its own), uses every reader the
module lists and no other; and each reader is defined in one module only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "dashboard"
PAGES = sorted(p.stem for p in (ROOT / "views").glob("*.py") if p.stem != "__init__")
READERS = sorted(p.stem for p in (ROOT / "readers").glob("*.py") if p.stem != "__init__")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _reader_imports(tree: ast.Module) -> dict[str, str]:
    """``{alias: reader module}`` of the ``from dashboard.readers import x as alias``."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "dashboard.readers":
            found.update({a.asname or a.name: a.name for a in node.names})
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "dashboard.readers."
        ):
            found[f"from {node.module}"] = (node.module or "").rsplit(".", 1)[1]
    return found


def _listed(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return []


def _defined(tree: ast.Module) -> set[str]:
    """The public names a module defines itself (functions and assignments)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_") and not n.isupper() and n != "__all__"}


def test_every_page_has_its_reader_module() -> None:
    assert set(PAGES) <= set(READERS), set(PAGES) - set(READERS)
    assert set(READERS) - set(PAGES) == {"common"}


@pytest.mark.parametrize("page", PAGES)
def test_a_page_reads_through_its_own_module_only(page: str) -> None:
    tree = _tree(ROOT / "views" / f"{page}.py")
    imported = _reader_imports(tree)
    assert list(imported.values()) == [page], imported
    (alias,) = imported
    used = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == alias
    }
    listed = _listed(_tree(ROOT / "readers" / f"{page}.py"))
    assert used == set(listed), f"used, not listed: {used - set(listed)}; listed, unused: " + str(
        set(listed) - used
    )
    source = (ROOT / "views" / f"{page}.py").read_text(encoding="utf-8")
    for own_read in ("read_engine", "st.cache_data", "write_engine"):
        assert own_read not in source, f"{page}.py reads by itself ({own_read})"


def test_each_reader_is_defined_once() -> None:
    where: dict[str, str] = {}
    for name in READERS:
        for reader in _defined(_tree(ROOT / "readers" / f"{name}.py")):
            assert reader not in where, f"{reader} defined in {where.get(reader)} and {name}"
            where[reader] = name
    assert len(where) > len(READERS)
