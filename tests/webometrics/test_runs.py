"""No run left ``running`` (issue 20): SIGTERM is handled like Ctrl-C; a crawl killed
with SIGKILL is marked ``interrupted`` by the next command once its heartbeat is older
than the lease; ``webometrics runs`` lists it with the command that resumes it; a refused
input file makes no run."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from store.models import CrawlRun
from store.session import session_scope
from tests.cli import FAST_CRAWL, run_webometrics, start_webometrics
from tests.crawler.conftest import LocalWeb, html, migrated_engine, write_universities
from tests.crawler.test_db_outage import wait_for_pages

A = "http://www.alpha-university.edu"
LEASE_SECONDS = 6.0
"""The runs' heartbeat lease here: long enough that a command started right after the kill
(a fresh interpreter, 1-3 s on a busy machine) is still within it."""


def small_web() -> LocalWeb:
    pages = {f"{A}/": html("Home", *(f"/p{i}.html" for i in range(200)))}
    for i in range(200):
        pages[f"{A}/p{i}.html"] = html(f"Page {i}")
        pages[f"{A}/p{i}.html"].delay = 0.2  # a crawl of some 20 s: killed long before
    return LocalWeb(pages)


def runs_env(tmp_path: Path) -> dict[str, str]:
    """A quick crawl that stores in small batches and a short heartbeat lease."""
    return {
        **FAST_CRAWL,
        "WEBOMETRICS_CRAWL__FLUSH_SECONDS": "0.3",
        "WEBOMETRICS_CRAWL__BATCH_SIZE": "5",
        "WEBOMETRICS_CRAWL__CONCURRENT_PER_DOMAIN": "2",
        "WEBOMETRICS_CRAWL__ALLOW_PRIVATE_HOSTS": "true",
        "WEBOMETRICS_DATABASE__HEARTBEAT_SECONDS": "0.5",
        "WEBOMETRICS_DATABASE__RUN_LEASE_SECONDS": str(LEASE_SECONDS),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


def start_crawl(tmp_path: Path, web: LocalWeb, db: str) -> subprocess.Popen[str]:
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    return start_webometrics(
        "crawl", "--universities", str(unis), "--direction", "outgoing", "--proxy",
        web.proxy_url, "--depth", "1", "--no-progress", db=db, env=runs_env(tmp_path),
    )  # fmt: skip


def _run(engine: Any) -> CrawlRun:
    with session_scope(engine) as s:
        return s.scalars(select(CrawlRun)).one()


@pytest.mark.slow
def test_sigterm_marks_the_crawl_interrupted_and_says_how_to_resume(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    engine = migrated_engine(db)
    with small_web() as web:
        proc = start_crawl(tmp_path, web, db)
        wait_for_pages(engine, proc, 5)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err[-3000:]
    assert "terminated (SIGTERM); what was stored is kept" in err
    run = _run(engine)
    assert run.status == "interrupted" and run.error == "terminated (SIGTERM)"
    assert f"resume it with:\n  {run.settings['resume']}" in err
    assert Path(run.settings["jobdir"]).is_dir()  # kept to resume
    listed = run_webometrics("runs", db=db, env=runs_env(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert "interrupted" in listed.stdout
    assert f"resume: {run.settings['resume']}" in listed.stdout


@pytest.mark.slow
def test_a_killed_crawl_is_marked_interrupted_by_the_next_command(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    engine = migrated_engine(db)
    with small_web() as web:
        proc = start_crawl(tmp_path, web, db)
        wait_for_pages(engine, proc, 5)
        os.kill(proc.pid, signal.SIGKILL)  # the crawler process dies with it
        killed = time.monotonic()  # its last heartbeat was before this
        proc.communicate(timeout=30)
    run = _run(engine)
    assert run.status == "running" and run.heartbeat_at is not None
    env = runs_env(tmp_path)
    # within the lease the run may still be alive: left alone
    early = run_webometrics("runs", db=db, env=env)
    assert time.monotonic() - killed < LEASE_SECONDS, "the check came after the lease"
    assert "marked interrupted" not in early.stderr
    time.sleep(max(0.0, killed + LEASE_SECONDS + 0.5 - time.monotonic()))
    listed = run_webometrics("runs", db=db, env=env)
    assert listed.returncode == 0, listed.stderr
    assert f"crawl run {run.id} had no heartbeat since" in listed.stderr
    run = _run(engine)
    assert run.status == "interrupted" and "no heartbeat since" in run.error
    assert f"resume: {run.settings['resume']}" in listed.stdout


@pytest.mark.slow
def test_a_refused_backlinks_file_makes_no_run(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    engine = migrated_engine(db)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\x00\x01 not a backlink export\n")
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    for path in (bad, tmp_path / "missing.csv"):
        done = run_webometrics(
            "crawl", "--universities", str(unis), "--backlinks", str(path), "--no-progress",
            db=db, env=runs_env(tmp_path),
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert str(path.name) in done.stderr
    with session_scope(engine) as s:
        assert s.scalar(select(func.count()).select_from(CrawlRun)) == 0
