"""A proxy that goes away mid-crawl (issue 36, fault 1): the test web's server is stopped
while a crawl runs through it. The crawl stops as interrupted (exit 1, the resume command
printed) once its fetches fail for a connection reason across hosts in a row; pasted
when the server is back, that command completes the crawl (every page answered, no
connection failure left). With the stop turned off, a crawl whose failures dominate says
so in its summary and its run row.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from store.models import CrawlRun, Page
from store.session import session_scope
from tests.cli import FAST_CRAWL, REPO, cli_env, start_webometrics

from .conftest import Answer, LocalWeb, html, migrated_engine, write_universities

UNIVERSITIES = ("alpha", "beta", "gamma")
PAGES_EACH = 30


def _site() -> tuple[dict[str, Answer], list[dict[str, Any]]]:
    """Three universities, each a home page linking to 30 pages; every answer takes
    20 ms, so the crawl is under way when the server stops."""
    pages: dict[str, Answer] = {}
    unis = []
    for name in UNIVERSITIES:
        base = f"http://www.{name}-university.edu"
        links = [f"/p{i}.html" for i in range(PAGES_EACH)]
        pages[f"{base}/"] = html(name.title(), *links)
        for link in links:
            pages[base + link] = html(f"{name} {link}")
        unis.append({"name": f"{name.title()} University",
                     "domains": [f"{name}-university.edu"], "home": [f"{base}/"]})  # fmt: skip
    for answer in pages.values():
        answer.delay = 0.02
    return pages, unis


def crawl_until_stopped(
    tmp_path: Path, db: str, outage_failures: int, stop_after: int
) -> tuple[subprocess.CompletedProcess[str], dict[str, Answer], int]:
    """Start a crawl through the test web, stop the server after ``stop_after`` requests;
    the crawl's outcome, the pages and the server's port."""
    pages, unis = _site()
    universities = write_universities(tmp_path / "u.toml", *unis)
    env = {
        **FAST_CRAWL,
        "WEBOMETRICS_CRAWL__OUTAGE_FAILURES": str(outage_failures),
        "WEBOMETRICS_CRAWL__RETRY_TIMES": "1",
        "WEBOMETRICS_CRAWL__FLUSH_SECONDS": "0.5",
    }
    web = LocalWeb(pages).__enter__()
    port = web.port
    proc = start_webometrics(
        "crawl", "--universities", str(universities), "--direction", "outgoing",
        "--proxy", web.proxy_url, "--jobdir", str(tmp_path / "job"), "--no-progress",
        db=db, cwd=tmp_path, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while len(web.requests) < stop_after and proc.poll() is None:
        assert time.monotonic() < deadline, "the crawl did not get going"
        time.sleep(0.05)
    web.__exit__()  # the proxy goes away
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), pages, port


@pytest.mark.slow
def test_a_crawl_whose_proxy_goes_away_stops_to_resume(tmp_path: Path, migrated_url: str) -> None:
    done, pages, port = crawl_until_stopped(tmp_path, migrated_url, 10, stop_after=15)
    assert done.returncode == 1, done.stderr[-3000:]
    message = done.stderr[done.stderr.index("webometrics: error:") :]
    assert "interrupted" in message and "connection reason" in message, message
    assert "When the proxy or the network is back, resume it with:" in message, message
    resume = message.split("resume it with:\n", 1)[1].splitlines()[0].strip()
    engine = migrated_engine(migrated_url)
    with session_scope(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "interrupted", run.error
        assert "went away" in (run.error or "")
        assert run.settings["resume"] == resume
    # the server is back on its port: the pasted command completes the crawl
    with LocalWeb(pages, port=port) as web:
        again = subprocess.run(
            [sys.executable, "-m", "webometrics", *shlex.split(resume)[1:]],
            cwd=REPO, env=cli_env(None, {**FAST_CRAWL}), capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr[-3000:]
        assert web.requests
    with session_scope(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "finished" and run.stats["resumed"]
        stored = dict(s.execute(select(Page.url, Page.fetch_error)).all())
    engine.dispose()
    assert set(pages) <= set(stored)
    failed = {url: err for url, err in stored.items() if err}
    assert not failed, failed


@pytest.mark.slow
def test_a_crawl_whose_failures_dominate_says_so(tmp_path: Path, migrated_url: str) -> None:
    done, _pages, _port = crawl_until_stopped(tmp_path, migrated_url, 0, stop_after=5)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "webometrics: warning: crawl run 1:" in done.stderr
    assert "got no answer (connection_refused" in done.stderr
    engine = migrated_engine(migrated_url)
    with session_scope(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "finished"
        assert "got no answer" in run.stats["warning"]
        refused = run.stats["errors"]["connection_refused"]
        assert refused * 2 > run.stats["pages_recorded"]
    engine.dispose()
    listed = subprocess.run(
        [sys.executable, "-m", "webometrics", "runs"], cwd=REPO,
        env=cli_env(migrated_url), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "warning: " in listed.stdout and "got no answer" in listed.stdout
