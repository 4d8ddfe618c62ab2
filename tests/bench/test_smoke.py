"""Every benchmark script imports, explains itself, and runs on tiny data.

``bench/`` is a package (``bench/__init__.py``) under ruff and mypy. Each script with a
``__main__`` block has ``main(argv)``; ``--help`` must work (argparse, nothing run), and
the script declares either ``SMOKE_ARGV``, the arguments that run it on tiny data into a
temporary folder (run here, in this process: it must return 0 or None and write nothing
into ``bench/results/``), or ``SMOKE_SKIP``, why it cannot run in seconds (a crawl, a
database, PostgreSQL, an hour of data). CONTRIBUTING.md ("Add a benchmark") says what a
new script provides.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"


def scripts() -> list[str]:
    """The benchmark scripts: the modules of bench/ with a ``__main__`` block."""
    return sorted(
        p.stem for p in BENCH.glob("*.py") if 'if __name__ == "__main__"' in p.read_text("utf-8")
    )


def smoked() -> list[str]:
    return [name for name in scripts() if hasattr(importlib.import_module(f"bench.{name}"),
                                                  "SMOKE_ARGV")]  # fmt: skip


def results_state() -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in (BENCH / "results").rglob("*") if p.is_file()}


def test_bench_is_a_package() -> None:
    assert (BENCH / "__init__.py").exists()
    assert len(scripts()) >= 20  # the scan finds the scripts


@pytest.mark.parametrize("name", scripts())
def test_script_imports_and_explains_itself(name: str, capsys: pytest.CaptureFixture) -> None:
    module = importlib.import_module(f"bench.{name}")
    assert module.__doc__ and module.__doc__.strip(), f"bench/{name}.py has no docstring"
    assert "argv" in inspect.signature(module.main).parameters, "main(argv=None) takes argv"
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out
    smoke, skip = getattr(module, "SMOKE_ARGV", None), getattr(module, "SMOKE_SKIP", None)
    assert (smoke is None) != (skip is None), (
        f"bench/{name}.py declares SMOKE_ARGV (arguments that run it on tiny data into a "
        "temporary folder) or SMOKE_SKIP (why it cannot run in seconds), one of them"
    )
    if smoke is not None:
        assert isinstance(smoke, list) and all(isinstance(a, str) for a in smoke)
    else:
        assert isinstance(skip, str) and len(skip) > 10, "say why, in a sentence"


@pytest.mark.slow  # whole benchmarks, if on tiny data: 30-40 s on two shared cores
@pytest.mark.parametrize("name", smoked())
def test_script_runs_on_tiny_data(name: str, capsys: pytest.CaptureFixture) -> None:
    module = importlib.import_module(f"bench.{name}")
    before = results_state()
    assert module.main(list(module.SMOKE_ARGV)) in (0, None)
    out = capsys.readouterr().out
    assert out.strip(), f"bench/{name}.py printed nothing: a benchmark prints its table"
    assert results_state() == before, "a smoke run writes into a temporary folder only"
