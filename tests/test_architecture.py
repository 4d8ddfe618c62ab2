"""The import boundaries of docs/architecture.md's table, checked on the code.

The table in docs/architecture.md ("| package | stage | may import |") is the contract. Every
``import`` and ``from ... import`` of every module (at the top or inside a function) is
read with :mod:`ast`; a module may import only its own package and the packages its row
lists. The allowed graph must have no cycle, and no stage may import the command line.
Below the packages, the modules themselves: no two modules of the project import each
other, directly or through others, lazy (function-level) imports included.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
OUTSIDE = ("tests", "bench")
"""Packages outside the contract table: the tests and the benchmarks import every package."""
ROW = re.compile(r"^\| `(?P<package>\w+)` \| [^|]+ \| (?P<allowed>[^|]+) \|$")


def contract(page: str) -> dict[str, set[str]]:
    """``{package: packages it may import}`` from the table of docs/architecture.md."""
    section = page.split("| package | stage | may import |", 1)[1].split("\n\n", 1)[0]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        if m := ROW.match(line.strip()):
            allowed = m["allowed"].strip()
            table[m["package"]] = (
                set() if allowed == "—" else {a.strip() for a in allowed.split(",")}
            )
    return table


def imported_modules(source: str) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:  # `from webometrics import cli` imports a module
                yield node.lineno, f"{node.module}.{alias.name}"


def violations(table: dict[str, set[str]], root: Path = REPO) -> list[str]:
    """Every import that crosses a boundary, as ``path:line: what``."""
    found = []
    for package, allowed in sorted(table.items()):
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            in_stages = rel.parts[:2] == ("webometrics", "stages")
            seen: set[tuple[int, str]] = set()
            for line, module in imported_modules(path.read_text(encoding="utf-8")):
                top = module.split(".")[0]
                if top in table and top != package and top not in allowed:
                    if (line, top) not in seen:  # `from a.b import c`: once, as a.b
                        found.append(f"{rel}:{line}: {package} may not import {module}")
                    seen.add((line, top))
                if in_stages and (
                    module.startswith("webometrics.commands") or module == "webometrics.cli"
                ):
                    found.append(f"{rel}:{line}: a stage may not import {module}")
    return found


def cycle(table: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the allowed graph, or ``None``."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(table.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(table):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.fixture(scope="module")
def table() -> dict[str, set[str]]:
    return contract((REPO / "docs" / "architecture.md").read_text(encoding="utf-8"))


def test_the_table_names_every_package_once(table) -> None:
    packages = {  # tests/ and bench/ exercise every package: outside the contract
        p.name for p in REPO.iterdir() if (p / "__init__.py").exists() and p.name not in OUTSIDE
    }
    assert set(table) == packages, "docs/architecture.md's table and the packages differ"
    assert table["core"] == set(), "the kernel imports nothing of the project"
    assert all(allowed <= set(table) for allowed in table.values())
    assert "webometrics" not in set().union(*(a for p, a in table.items() if p != "webometrics"))


def test_the_allowed_graph_has_no_cycle(table) -> None:
    assert cycle(table) is None, cycle(table)


def test_no_import_crosses_a_boundary(table) -> None:
    assert violations(table) == []


def test_a_forbidden_import_is_caught(table, tmp_path: Path) -> None:
    """The check is not vacuous: copies of real modules with one forbidden import added
    (the store importing the command line; a stage importing a command) fail it."""
    for package in table:
        (tmp_path / package).mkdir()
    store = (REPO / "store" / "overrides.py").read_text(encoding="utf-8")
    (tmp_path / "store" / "overrides.py").write_text(
        store + "\n\ndef _late():\n    from webometrics.cli import main\n", encoding="utf-8"
    )
    (tmp_path / "webometrics" / "stages").mkdir()
    (tmp_path / "webometrics" / "stages" / "x.py").write_text(
        "from webometrics.commands import report\n", encoding="utf-8"
    )
    (tmp_path / "dashboard" / "data.py").write_text(
        "from analyse import networks\n", encoding="utf-8"
    )
    found = violations(table, tmp_path)
    assert any("store may not import webometrics.cli" in v for v in found), found
    assert any("a stage may not import webometrics.commands" in v for v in found), found
    assert any("dashboard may not import analyse" in v for v in found), found
    assert cycle({**table, "core": {"store"}}) is not None


def test_the_public_imports_still_work() -> None:
    """The names users and other code import from the package roots (issue 16 keeps
    them: the move changed folders, not the public API)."""
    from cluster import (  # noqa: F401
        ActivityClusterer,
        ExactSingleLink,
        LSHLeiden,
        LSHLink,
        MinHasher,
        TfidfWeighting,
        WeightedMinHasher,
        score_clustering,
    )
    from extract import Shingler, extract_page, shingle_hashes  # noqa: F401
    from store import analytics, queries

    assert callable(analytics.table2) and callable(queries.list_universities)


def private_imports(packages: set[str], root: Path = REPO) -> list[str]:
    """Every ``from <project module> import _name``: a name another module uses is public
    in its module (or the code belongs together)."""
    found = []
    for package in sorted(packages):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                if node.module.split(".")[0] not in packages:
                    continue  # another project's private name is its business
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        rel = path.relative_to(root)
                        found.append(f"{rel}:{node.lineno}: {node.module}.{alias.name}")
    return found


#: the longest function the orchestration code may hold (issue 22): stages and commands
#: call the libraries below them, split by concept as those are
MAX_FUNCTION_LINES = 80


def long_functions(folders: list[str], root: Path = REPO) -> list[str]:
    """Every function of ``folders`` longer than :data:`MAX_FUNCTION_LINES`."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > MAX_FUNCTION_LINES:
                        rel = path.relative_to(root)
                        found.append(f"{rel}:{node.lineno}: {node.name} ({length} lines)")
    return found


def test_no_module_imports_another_modules_private_name(table, tmp_path: Path) -> None:
    assert private_imports(set(table) | {"tests", "bench"}) == []
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "x.py").write_text(
        "from store.analytics.runs import _helper\nfrom scrapy.utils import _ok\n",
        encoding="utf-8",
    )
    assert private_imports({"store"}, tmp_path) == ["store/x.py:1: store.analytics.runs._helper"]


def test_no_stage_or_command_function_is_long(tmp_path: Path) -> None:
    assert long_functions(["webometrics/stages", "webometrics/commands"]) == []
    (tmp_path / "w").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "w" / "x.py").write_text(f"def short():\n    pass\n\n\ndef f():\n{body}")
    assert long_functions(["w"], tmp_path) == [f"w/x.py:5: f ({MAX_FUNCTION_LINES + 1} lines)"]


# -- modules: no import cycle, lazy imports included -------------------------------------

#: module cycles of the packages other work of this round still changes (issue 35), each
#: broken only by a function-level import; the test fails when one of them is gone, so
#: that the list only shrinks, and when any other appears
KNOWN_MODULE_CYCLES: list[set[str]] = [
    {"store.entities", "store.overrides"},
    {"testbed.build", "testbed.cache"},
]


def project_modules(packages: set[str], root: Path = REPO) -> dict[str, Path]:
    """``{dotted module name: file}`` of every module of ``packages`` (a package's
    ``__init__.py`` under the package's own name)."""
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join(parts)] = path
    return out


def module_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that module ``name`` imports, at the top or in a function
    (``from a.b import c`` imports module ``a.b.c`` when there is one, else ``a.b``;
    relative imports resolved). Imports under ``if TYPE_CHECKING:`` never run: left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[: len(package) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # a name inside a module: the module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def module_cycles(packages: set[str], root: Path = REPO) -> list[set[str]]:
    """The sets of modules that import one another in a cycle (the strongly connected
    components of the import graph with more than one module; Tarjan's algorithm)."""
    modules = project_modules(packages, root)
    graph = {name: sorted(module_imports(name, path, modules)) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_module_cycle_in_webometrics() -> None:
    """Issue 37: liveness -> stages.pipeline -> stages.crawl -> liveness is gone; the
    stage list and the folder defaults live in the leaf module webometrics.layout."""
    assert module_cycles({"webometrics"}) == []
    layout = REPO / "webometrics" / "layout.py"
    modules = project_modules({"webometrics"})
    assert module_imports("webometrics.layout", layout, modules) == set()


def test_no_module_cycle_in_any_package(table) -> None:
    cycles = module_cycles(set(table) | {"bench"})
    unexpected = [sorted(c) for c in cycles if c not in KNOWN_MODULE_CYCLES]
    assert unexpected == [], "modules that import each other (a lazy import counts too)"
    gone = [sorted(c) for c in KNOWN_MODULE_CYCLES if c not in cycles]
    assert gone == [], "a known cycle is gone: take it off KNOWN_MODULE_CYCLES"


def test_a_module_cycle_is_caught(tmp_path: Path) -> None:
    """Lazy and relative imports count; type-only imports do not."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("def g():\n    import pkg.a\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.e import x\n"
    )
    (pkg / "e.py").write_text("from pkg.d import y\n")
    assert module_cycles({"pkg"}, tmp_path) == [{"pkg.a", "pkg.sub.b", "pkg.c"}]


# -- names ----------------------------------------------------------------------------------
NAMED_PACKAGES = (
    "core",
    "crawler",
    "extract",
    "dedup",
    "cluster",
    "analyse",
    "store",
    "dashboard",
    "webometrics",
    "corpora",
    "testbed",
)
"""The project's packages whose public classes must each have a name of their own."""
SHARED_CLASS_NAMES: dict[str, str] = {}
"""Class names two modules may both define, each with why (none needed today)."""


def public_classes(packages: set[str] | tuple[str, ...], root: Path = REPO) -> dict[str, list[str]]:
    """``{class name: modules defining it}`` of every public module-level class (those
    under a top-level ``if``/``try`` included) of ``packages``."""
    found: dict[str, list[str]] = {}
    for package in sorted(packages):
        for path in sorted((root / package).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            body = list(ast.parse(path.read_text(encoding="utf-8")).body)
            while body:
                node = body.pop(0)
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    found.setdefault(node.name, []).append(module)
                elif isinstance(node, ast.If | ast.Try):
                    body.extend([*node.body, *node.orelse, *getattr(node, "finalbody", [])])
    return found


def shared_class_names(
    packages: set[str] | tuple[str, ...], root: Path = REPO
) -> dict[str, list[str]]:
    """The public class names that more than one module defines."""
    return {n: m for n, m in public_classes(packages, root).items() if len(m) > 1}


def test_no_two_public_classes_share_a_name() -> None:
    """Issue 37 item 3: different things have different names (the SQLite frontier is
    ``SQLiteFrontier`` beside the ``Frontier`` protocol, the graph reader's node is
    ``GraphCitingNode`` beside the stored ``CitingNode``, ...)."""
    shared = shared_class_names(NAMED_PACKAGES)
    unexpected = {n: m for n, m in shared.items() if n not in SHARED_CLASS_NAMES}
    assert unexpected == {}, (
        "rename one of each pair (or allow it, with why, in SHARED_CLASS_NAMES)"
    )
    stale = sorted(set(SHARED_CLASS_NAMES) - set(shared))
    assert stale == [], "these names are no longer shared: take them off SHARED_CLASS_NAMES"


def test_a_shared_class_name_is_caught(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two" / "sub").mkdir(parents=True)
    (tmp_path / "one" / "a.py").write_text("class Result:\n    pass\nclass _Private:\n    pass\n")
    (tmp_path / "two" / "sub" / "b.py").write_text(
        "try:\n    class Result:\n        pass\nexcept ImportError:\n    pass\n"
        "class _Private:\n    pass\ndef f():\n    class Local:\n        pass\n"
    )
    (tmp_path / "two" / "c.py").write_text("def f():\n    class Local:\n        pass\n")
    assert shared_class_names({"one", "two"}, tmp_path) == {"Result": ["one.a", "two.sub.b"]}


def test_every_stage_refreshes_the_figures_when_it_ends() -> None:
    """Each stage's ``run`` carries ``webometrics.stages.refreshes_figures``, so what it
    stored shows on the dashboard and in the report without a further command."""
    from webometrics.layout import ALL_STAGES
    from webometrics.stages.pipeline import stage_function

    missing = [n for n in ALL_STAGES if not getattr(stage_function(n), "refreshes_figures", 0)]
    assert missing == []
