"""The command line as a test runs it: ``python -m webometrics`` in a child process.

The ``webometrics`` fixture (a pytest plugin of ``tests/conftest.py``) gives
:func:`run_webometrics`; a test that needs the process while it runs (to stop it, or to
start two at once) calls :func:`start_webometrics`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: a crawl of the loopback test web: no politeness delay, no throttle
FAST_CRAWL = {
    "WEBOMETRICS_CRAWL__DOWNLOAD_DELAY": "0",
    "WEBOMETRICS_CRAWL__AUTOTHROTTLE": "false",
}


def cli_env(db: str | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any ``WEBOMETRICS_*`` variable (so the caller's
    shell cannot change a test), with the database ``db`` and the ``extra`` variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    if db is not None:
        env["WEBOMETRICS_DB_URL"] = db
    env.update(extra or {})
    return env


def start_webometrics(
    *args: str,
    db: str | None = None,
    cwd: Path = REPO,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[str]:
    """Start ``python -m webometrics ARGS`` with its output piped (text)."""
    return subprocess.Popen(
        [sys.executable, "-m", "webometrics", *args],
        cwd=cwd,
        env=cli_env(db, env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_webometrics(
    *args: str,
    db: str | None = None,
    cwd: Path = REPO,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m webometrics ARGS`` to its end; its exit code and output."""
    return subprocess.run(
        [sys.executable, "-m", "webometrics", *args],
        cwd=cwd,
        env=cli_env(db, env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def webometrics() -> Callable[..., subprocess.CompletedProcess[str]]:
    """:func:`run_webometrics`: ``webometrics("cluster", "--unit", "domain", db=url)``."""
    return run_webometrics
