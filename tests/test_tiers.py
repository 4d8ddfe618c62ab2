"""The suite's tiers (tests/tiers.py): a slow fixture makes every test using it slow,
``--store-durations`` records call times and keeps what did not run, and a test measured
at a second or more is slow at the next collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import tiers

pytest_plugins = ["pytester"]

SUITE = """
import time
import pytest
from tests.tiers import slow_fixture

@pytest.fixture(scope="module")
@slow_fixture
def costly():
    return 1

@pytest.fixture
def through(costly):
    return costly

def test_direct(costly):
    assert costly == 1

def test_through_another_fixture(through):
    assert through == 1

def test_quick():
    assert True

def test_sleeps():
    time.sleep(0.2)
"""

CONFTEST = """
import pytest
from pathlib import Path
from tests import tiers

DURATIONS = Path({path!r})

def pytest_addoption(parser):
    tiers.add_option(parser)

def pytest_configure(config):
    config.addinivalue_line("markers", "slow: slow")
    if config.getoption("--store-durations"):
        config.pluginmanager.register(tiers.DurationRecorder(DURATIONS), "durations")

def pytest_collection_modifyitems(config, items):
    durations = tiers.measured_durations(DURATIONS)
    for item in items:
        if tiers.uses_a_slow_fixture(item) or tiers.measured_slow(item, durations):
            item.add_marker(pytest.mark.slow)
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, tmp_path: Path) -> tuple[pytest.Pytester, Path]:
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"test_gone.py::test_old": 3.5}), "utf-8")
    pytester.makeconftest(CONFTEST.format(path=str(durations)))
    pytester.makepyfile(test_suite=SUITE)
    pytester.syspathinsert(str(Path(tiers.__file__).resolve().parent.parent))
    return pytester, durations


def test_slow_fixtures_mark_their_users_and_durations_are_kept(
    suite: tuple[pytest.Pytester, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester, durations = suite
    monkeypatch.setattr(tiers, "SLOW_SECONDS", 0.1)
    fast = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:xdist", "-m", "not slow")
    fast.assert_outcomes(passed=2, deselected=2)  # test_quick and (not yet measured) sleeps

    stored = pytester.runpytest_inprocess(
        "-p", "no:randomly", "-p", "no:xdist", "--store-durations"
    )
    stored.assert_outcomes(passed=4)
    measured = json.loads(durations.read_text("utf-8"))
    assert measured["test_gone.py::test_old"] == 3.5  # a test that did not run keeps its figure
    assert measured["test_suite.py::test_sleeps"] >= 0.2
    assert measured["test_suite.py::test_quick"] < 0.1

    after = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:xdist", "-m", "not slow")
    after.assert_outcomes(passed=1, deselected=3)  # the sleeper is slow now


def test_a_broken_durations_file_says_what_to_do(tmp_path: Path) -> None:
    broken = tmp_path / "durations.json"
    broken.write_text("[1, 2", "utf-8")
    with pytest.raises(pytest.UsageError, match="make test-durations"):
        tiers.measured_durations(broken)
    assert tiers.measured_durations(tmp_path / "missing.json") == {}


def test_the_committed_file_is_a_measurement_of_this_suite() -> None:
    measured = tiers.measured_durations()
    assert measured, "tests/durations.json is empty: run `make test-durations`"
    assert all(seconds >= 0 for seconds in measured.values())
    assert any(test_id.startswith("tests/") for test_id in measured)
