"""A crawl outlives a database outage (issue 20): a PostgreSQL restart in the middle of a
crawl costs nothing; an outage longer than ``[crawl] store_retry_seconds`` stops the
crawl with its state kept, the run ``interrupted`` and the command that resumes it in
the message; after the resume, pages and links equal those of an uninterrupted crawl.

Each test starts its own PostgreSQL server (the session's shared one is never
restarted) and runs ``webometrics crawl`` as an operator does, without ``--jobdir``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from store.models import CrawlRun, Link, Page
from store.session import session_scope

from .conftest import html, migrated_engine, write_universities

A = "http://www.alpha-university.edu"
SECTIONS = 24
LEAVES = 4
RETRY_SECONDS = 4


def _pages() -> dict[str, Any]:
    """A site of 1 + 24 + 96 pages, each answering in 0.05 s, linking 24 external sites."""
    pages: dict[str, Any] = {}
    pages[f"{A}/"] = html("Home", *(f"/s{i}/" for i in range(SECTIONS)))
    for i in range(SECTIONS):
        ext = f"http://www.site{i}.org/"
        pages[f"{A}/s{i}/"] = html(
            f"Section {i}", *(f"/s{i}/p{j}.html" for j in range(LEAVES)), ext
        )
        pages[ext] = html(f"Site {i}")
        for j in range(LEAVES):
            pages[f"{A}/s{i}/p{j}.html"] = html(f"Page {i}.{j}", f"/s{(i + 1) % SECTIONS}/")
    for answer in pages.values():
        answer.delay = 0.05
    return pages


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    env.update(
        WEBOMETRICS_CRAWL__DOWNLOAD_DELAY="0",
        WEBOMETRICS_CRAWL__AUTOTHROTTLE="false",
        WEBOMETRICS_CRAWL__RETRY_TIMES="1",
        WEBOMETRICS_CRAWL__FLUSH_SECONDS="0.3",
        WEBOMETRICS_CRAWL__BATCH_SIZE="10",
        WEBOMETRICS_CRAWL__CONCURRENT_PER_DOMAIN="2",
        WEBOMETRICS_CRAWL__DOWNLOAD_TIMEOUT="15",
        WEBOMETRICS_CRAWL__ALLOW_PRIVATE_HOSTS="true",
        WEBOMETRICS_CRAWL__STORE_RETRY_SECONDS=str(RETRY_SECONDS),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    return env


def _crawl_args(db: str, unis: Path, proxy: str) -> list[str]:
    return [
        sys.executable, "-m", "webometrics", "--db-url", db, "crawl", "--universities",
        str(unis), "--direction", "outgoing", "--proxy", proxy, "--depth", "3", "--no-progress",
    ]  # fmt: skip


def _contents(engine: Any) -> tuple[set[tuple[Any, ...]], set[tuple[str, str]]]:
    """(pages as url, status, content hash; links as source url, target url)."""
    with session_scope(engine) as s:
        pages = set(s.execute(select(Page.url, Page.http_status, Page.content_hash)).all())
        links = set(
            s.execute(
                select(Page.url, Link.target_url).join(Page, Page.id == Link.source_page_id)
            ).all()
        )
    return pages, links


class PrivatePostgres:
    """This test's own PostgreSQL server (:class:`tests.conftest.PostgresServer`), with
    restart, stop and start."""

    def __init__(self) -> None:
        from tests.conftest import PostgresServer

        self.server = PostgresServer()
        self.server.start()

    def ctl(self, *args: str) -> None:
        s = self.server
        s._run("pg_ctl", "-D", str(s.data), "-l", str(s.root / "log"), "-w", "-t", "60", *args)

    def stop(self) -> None:
        self.ctl("-m", "fast", "stop")

    def start(self) -> None:
        s = self.server
        self.ctl("-o", f"-h 127.0.0.1 -p {s.port} -k {s.root} -F -c fsync=off", "start")


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    pg = PrivatePostgres()
    yield pg
    pg.server.stop()


@pytest.fixture(scope="module")
def site() -> Iterator[Any]:
    from .conftest import LocalWeb

    with LocalWeb(_pages()) as web:
        yield web


@pytest.fixture(scope="module")
def reference(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Pages and links of the uninterrupted crawl of the same scope."""
    tmp = tmp_path_factory.mktemp("reference")
    db = f"sqlite:///{tmp / 'ref.db'}"
    engine = migrated_engine(db)
    unis = _universities(tmp)
    done = subprocess.run(
        _crawl_args(db, unis, site.proxy_url), env=_env(tmp), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    contents = _contents(engine)
    engine.dispose()
    assert len(contents[0]) > SECTIONS * LEAVES and contents[1]
    return contents


def _universities(tmp: Path) -> Path:
    return write_universities(
        tmp / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )


def wait_for_pages(engine: Any, proc: subprocess.Popen[str], n: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        with session_scope(engine) as s:
            if s.scalar(select(func.count()).select_from(Page)) >= n:
                return
        time.sleep(0.05)
    raise AssertionError(f"the crawl did not store {n} pages: {proc.poll()}")


def _outage(
    pg: PrivatePostgres, seconds: float, site: Any, tmp_path: Path
) -> tuple[Any, subprocess.CompletedProcess[str]]:
    """Start ``webometrics crawl`` on a new database of ``pg``, stop the server for
    ``seconds`` once 20 pages are stored, start it again; (engine, finished command)."""
    db = pg.server.create_database()
    engine = migrated_engine(db)
    args = _crawl_args(db, _universities(tmp_path), site.proxy_url)
    proc = subprocess.Popen(
        args, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_pages(engine, proc, 20)
    engine.dispose()
    pg.stop()
    time.sleep(seconds)
    pg.start()
    out, err = proc.communicate(timeout=120)
    return engine, subprocess.CompletedProcess(args, proc.returncode, out, err)


@pytest.mark.slow
@pytest.mark.requires_postgres
def test_a_restart_of_postgresql_during_a_crawl_loses_nothing(
    tmp_path: Path, site: Any, reference: Any, private_postgres: PrivatePostgres
) -> None:
    # a restart (pg_ctl restart takes 0.2 s here: stretched to a second, so that writes
    # certainly meet it)
    engine, done = _outage(private_postgres, 1.0, site, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _contents(engine) == reference
    with session_scope(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "finished" and run.error is None
        assert run.stats["scrapy"]["outgoing"]["webometrics/store_retries"] >= 1
    # the run's own folder is gone once the run is finished
    assert not any((tmp_path / "state").rglob("crawl-*"))


@pytest.mark.slow
@pytest.mark.requires_postgres
def test_an_outage_past_the_retry_window_stops_the_crawl_to_resume(
    tmp_path: Path, site: Any, reference: Any, private_postgres: PrivatePostgres
) -> None:
    # the crawler gives up after RETRY_SECONDS; the crawl command waits as long to record it
    engine, done = _outage(private_postgres, RETRY_SECONDS + 2, site, tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    err = done.stderr
    # the wait is said on the console, not only in the job's log
    assert "webometrics: note: the database does not answer (since" in err, err[-3000:]
    assert "webometrics: error:" in err, err[-8000:]
    message = err[err.index("webometrics: error:") :]
    assert "interrupted" in message and "resume it with:" in message, message
    resume = message.split("resume it with:\n", 1)[1].splitlines()[0].strip()
    with session_scope(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "interrupted"
        assert "unreachable" in run.error
        assert run.settings["resume"] == resume
        jobdir = Path(run.settings["jobdir"])
    assert jobdir.is_dir() and (jobdir / "frontier.sqlite").is_file()
    assert jobdir.parent == tmp_path / "state" / "webometrics" / "crawls" / jobdir.parent.name
    # the operator's next step: the command of the message, as it is
    args = shlex.split(resume)
    assert args[0] == "webometrics"
    again = subprocess.run(
        [sys.executable, "-m", *args], env=_env(tmp_path), capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert _contents(engine) == reference
    with session_scope(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "finished" and run.stats["resumed"]
    assert not jobdir.exists()
