"""Stages that must not overlap on one database exclude each other and name the holder
(exit 4), on SQLite and PostgreSQL; ``webometrics run`` holds them all without waiting
for itself; the top-level help lists every exit code."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import core.exceptions
from core.exceptions import RunLockedError
from store import make_engine
from tests.cli import FAST_CRAWL, start_webometrics
from tests.crawler.conftest import Answer, LocalWeb, html, write_universities
from webometrics.runlock import RunLock, stage_lock

A = "http://www.alpha-university.edu"


def _cli(*args: str, db: str, cwd: Path, wait: bool = True) -> subprocess.Popen[str]:
    proc = start_webometrics(*args, db=db, cwd=cwd, env=FAST_CRAWL)
    if wait:
        proc.wait(300)
    return proc


@pytest.mark.slow
def test_a_second_crawl_exits_4_naming_the_first(migrated_url: str, tmp_path: Path) -> None:
    """Two real crawls of a slow site: the second is refused at once and names the first."""
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    pages = {f"{A}/": html("Home", "/slow.html"), f"{A}/slow.html": Answer(body=b"x", delay=4.0)}
    args = ("crawl", "--universities", str(unis), "--direction", "outgoing", "--no-progress")
    with LocalWeb(pages) as web:
        first = _cli(*args, "--proxy", web.proxy_url, db=migrated_url, cwd=tmp_path, wait=False)
        deadline = time.monotonic() + 60
        while f"{A}/slow.html" not in web.fetched():  # the first crawl holds the lock
            assert time.monotonic() < deadline and first.poll() is None, first.communicate()
            time.sleep(0.1)
        second = _cli(*args, "--proxy", web.proxy_url, db=migrated_url, cwd=tmp_path)
        _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.returncode == 4
    message = second.stderr.read()
    assert "the crawl lock on " in message
    holder = rf"is held by webometrics crawl[^(]*\(pid {first.pid} on {socket.gethostname()},"
    assert re.search(holder, message), message
    assert re.search(r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)", message)
    assert "fetch and store the same pages twice" in message
    assert "docs/operations.md" in message


@pytest.mark.parametrize("stage", ["cluster", "analyse"])
def test_cluster_and_analyse_exclude_each_other(
    migrated_url: str, tmp_path: Path, stage: str
) -> None:
    engine = make_engine(migrated_url)
    with stage_lock(engine, "cluster" if stage == "analyse" else "analyse"):
        second = _cli(stage, db=migrated_url, cwd=tmp_path)
    assert second.returncode == 4, second.stderr.read()
    message = second.stderr.read()
    assert "the analysis lock on " in message
    assert f"(pid {os.getpid()} on {socket.gethostname()}, since " in message
    assert "`analyse` would read the clusterings `cluster` is rewriting" in message
    # a crawl and an extraction may run meanwhile: other locks
    with stage_lock(engine, "crawl"), stage_lock(engine, "extract"), stage_lock(engine, "analyse"):
        pass
    engine.dispose()


def test_a_pipeline_run_holds_every_stage_lock(migrated_url: str) -> None:
    """``webometrics run`` excludes stage commands (and they it), naming each other;
    it calls the stage functions, so it never waits for its own locks."""
    engine, other = make_engine(migrated_url), make_engine(migrated_url)
    with RunLock(engine, command="webometrics run --stages crawl,extract"):
        for stage in ("crawl", "extract", "dedup", "cluster", "analyse"):
            refused = pytest.raises(RunLockedError, match=r"held by webometrics run")
            with refused as info, stage_lock(other, stage):
                pass
            assert info.value.exit_code == 4
    refused = pytest.raises(RunLockedError, match=r"the dedup lock .* held by webometrics")
    with stage_lock(engine, "dedup"), refused, RunLock(other):
        pass
    refused = pytest.raises(RunLockedError, match="a pipeline run")
    with RunLock(other), refused, RunLock(engine):
        pass
    engine.dispose()
    other.dispose()


def test_top_level_help_lists_every_exit_code(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "webometrics", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    documented = re.findall(r"^(\d+)\s{2,}", core.exceptions.__doc__ or "", re.MULTILINE)
    assert {"0", "1", "2", "3", "4", "130"} <= set(documented)
    epilog = out.stdout.split("exit codes:", 1)[1]
    for code in documented:
        assert re.search(rf"(^|[\s,]){code} ", epilog), f"exit code {code} not in --help"
    assert "4 another run holds the run lock" in " ".join(epilog.split())
    # the epilog is made from core.exceptions.EXIT_CODES, which every error class keeps to
    assert set(documented) == {str(code) for code in core.exceptions.EXIT_CODES}
    errors = [
        cls
        for cls in vars(core.exceptions).values()
        if isinstance(cls, type) and issubclass(cls, core.exceptions.WebometricsError)
    ]
    assert len(errors) > 5
    assert all(cls.exit_code in core.exceptions.EXIT_CODES for cls in errors)
