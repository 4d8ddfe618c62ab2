"""Locks that survive a PostgreSQL restart (issue 36, fault 4): the crawl lock is a
session-level advisory lock, which a server restart ends while the crawl runs on. A
second crawl started right after the restart, and another once the first crawl took
its lock again, are both refused (exit 4, naming the first) and make no run; the first
finishes.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from store.models import CrawlRun
from store.session import session_scope

from .conftest import LocalWeb, migrated_engine
from .test_db_outage import (
    PrivatePostgres,
    _crawl_args,
    _env,
    _pages,
    _universities,
    wait_for_pages,
)


@pytest.fixture
def slow_site() -> Iterator[LocalWeb]:
    """The outage tests' site, each answer taking a second: a crawl of a minute or more."""
    pages = _pages()
    for answer in pages.values():
        answer.delay = 1.0
    with LocalWeb(pages) as web:
        yield web


@pytest.fixture
def private_pg() -> Iterator[PrivatePostgres]:
    pg = PrivatePostgres()
    yield pg
    pg.server.stop()


@pytest.mark.slow
@pytest.mark.requires_postgres
def test_a_second_crawl_is_refused_after_a_restart_of_postgresql(
    tmp_path: Path, slow_site: Any, private_pg: PrivatePostgres
) -> None:
    pg = private_pg
    db = pg.server.create_database()
    engine = migrated_engine(db)
    args = _crawl_args(db, _universities(tmp_path), slow_site.proxy_url)
    first = subprocess.Popen(
        args, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_pages(engine, first, 10)
    engine.dispose()
    pg.stop()
    time.sleep(1.0)
    pg.start()
    seconds = []
    for _ in range(2):  # at once, then once the first surely took its lock again
        started = time.monotonic()
        second = subprocess.run(args, env=_env(tmp_path), capture_output=True, text=True)
        seconds.append(time.monotonic() - started)
        assert first.poll() is None, f"the first crawl ended first ({seconds} s)"
        assert second.returncode == 4, second.stderr[-3000:]
        assert "the crawl lock on this PostgreSQL database is held by" in second.stderr
        time.sleep(2)
    _out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err[-3000:]
    with session_scope(engine) as s:
        runs = s.scalars(select(CrawlRun)).all()
        assert [r.status for r in runs] == ["finished"]  # the refused made no run
    engine.dispose()
