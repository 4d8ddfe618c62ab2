"""The suite's tiers: which tests ``make test-fast`` leaves out as ``slow``.

A test is slow when

- a fixture it uses runs a whole stage (a crawl of a test web, an extraction of a corpus,
  a quality gate's model): the fixture carries :func:`slow_fixture`, so every test using
  it is slow, whichever of them happens to pay the set-up in a run;
- its own call took :data:`SLOW_SECONDS` or more when the suite was last measured
  (``tests/durations.json``, written by ``make test-durations``, as pytest-split keeps a
  ``.test_durations`` file); a new test counts as quick until the file is measured again;
- it is marked ``@pytest.mark.slow`` by hand, or built on the pipeline-made world
  (``tests/conftest.py``).

The plug-in half: ``pytest --store-durations`` records each test's call time (every
worker's, gathered by xdist's controller) and rewrites ``tests/durations.json`` at the
end, keeping the measurements of tests that did not run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

DURATIONS_FILE = Path(__file__).resolve().parent / "durations.json"

#: a call this long on an idle two-core machine makes a test slow: the fast tier keeps
#: the tests that each take under a second
SLOW_SECONDS = 1.0

F = TypeVar("F", bound=Callable[..., Any])


def slow_fixture(fixture_function: F) -> F:
    """Mark a fixture that runs a whole stage; put it under ``@pytest.fixture``::

    @pytest.fixture(scope="module")
    @slow_fixture
    def crawled(tmp_path_factory): ...
    """
    fixture_function.slow_fixture = True  # type: ignore[attr-defined]
    return fixture_function


def uses_a_slow_fixture(item: pytest.Item) -> bool:
    """Whether a fixture ``item`` uses (directly or through another) is a
    :func:`slow_fixture`."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        getattr(definition.func, "slow_fixture", False)
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
    )


def measured_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """The call time of each test id at the last measurement (empty when never measured)."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text("utf-8")).items()}
    except FileNotFoundError:
        return {}
    except (ValueError, AttributeError) as exc:
        raise pytest.UsageError(
            f"{path} is not a JSON object of test ids and seconds ({exc}); "
            "delete it or run `make test-durations` to measure it again"
        ) from exc


def measured_slow(item: pytest.Item, durations: dict[str, float]) -> bool:
    """Whether ``item``'s call took :data:`SLOW_SECONDS` or more when last measured."""
    return durations.get(item.nodeid, 0.0) >= SLOW_SECONDS


class DurationRecorder:
    """Collects the call time of every test of a run and merges it into the file."""

    def __init__(self, path: Path = DURATIONS_FILE) -> None:
        self.path = path
        self.calls: dict[str, float] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.calls[report.nodeid] = round(report.duration, 3)

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput") or not self.calls:
            return  # an xdist worker: its reports reach the controller, which writes
        merged = {**measured_durations(self.path), **self.calls}
        text = json.dumps(dict(sorted(merged.items())), indent=0)
        self.path.write_text(text + "\n", "utf-8")


def add_option(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help=f"record each test's call time into {DURATIONS_FILE.name} (make test-durations)",
    )


def configure(config: pytest.Config) -> None:
    if config.getoption("--store-durations", default=False):
        config.pluginmanager.register(DurationRecorder(), "webometrics-durations")
