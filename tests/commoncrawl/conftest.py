"""Fixtures of the Common Crawl index tests: the real WARC samples, a byte-range server,
and a database with universities and their stored citing environment.

:class:`RangeServer` (:class:`testbed.commoncrawl_server.ReleaseServer`) serves the files of
a folder on 127.0.0.1 and answers ``Range: bytes=a-b`` requests with 206 as
data.commoncrawl.org does; it logs every request (method, path, range, user agent, time)
and can be told to answer 404 for a path or 503 for its next requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testbed.commoncrawl_server import ReleaseServer

#: the byte-range server of the index tests (and of the web graph's download tests)
RangeServer = ReleaseServer


@pytest.fixture(scope="session")
def warc_samples(shared_data: Path) -> Path:
    """The real WARC files of ``shared/data/warc-samples`` (read in place)."""
    folder = shared_data / "warc-samples"
    if not folder.is_dir():
        pytest.fail(f"{folder} is missing: the index tests need the real WARC samples")
    return folder


@pytest.fixture
def range_server(warc_samples: Path) -> Iterator[ReleaseServer]:
    with RangeServer(warc_samples) as server:
        yield server


#: the test universities: their domains are linked from real pages of the samples
UNIVERSITIES = [
    {"name": "Twitter Institute", "country": "USA", "domains": ["twitter.com"]},
    {"name": "IANA University", "country": "USA", "domains": ["iana.org"]},
]
#: their stored citing environment (as the web graph command or a backlink crawl left it)
CITING = {
    "Twitter Institute": ["01spb.ru", "live-radsport.ch", "uraharajuku.st"],
    "IANA University": ["example.com"],
}


def seed_database(url: str, citing: dict[str, list[str]] | None = None) -> Any:
    """A migrated database with :data:`UNIVERSITIES` and a ``citing`` run whose
    environment holds ``citing`` (default :data:`CITING`); returns the engine."""
    from store import make_engine, schema
    from store.models import CrawlRun, Environment, University, UniversityDomain
    from store.session import session_scope

    engine = make_engine(url)
    schema.upgrade(engine)
    with session_scope(engine) as s:
        run = CrawlRun(kind="citing", status="finished")
        s.add(run)
        for spec in UNIVERSITIES:
            uni = University(name=spec["name"], country=spec["country"])
            uni.domains = [UniversityDomain(domain=d) for d in spec["domains"]]
            s.add(uni)
        s.flush()
        ids = {u.name: u.id for u in s.query(University)}
        for name, domains in (CITING if citing is None else citing).items():
            for d in domains:
                s.add(
                    Environment(
                        run_id=run.id,
                        university_id=ids[name],
                        domain=d,
                        direction="citing",
                        link_count=1,
                        page_count=1,
                    )
                )
    return engine


@pytest.fixture(name="seed_database")
def seed_database_fixture() -> Any:
    """:func:`seed_database`, for tests that seed their own database."""
    return seed_database


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[str, Any]:
    """(URL, engine) of a seeded SQLite database."""
    url = f"sqlite:///{tmp_path / 'cc.db'}"
    engine = seed_database(url)
    yield url, engine
    engine.dispose()


@pytest.fixture
def graph_db(sqlite_url: str) -> str:
    """A migrated SQLite database with the web graph tests' universities
    (:data:`tests.commoncrawl.graph_files.UNIVERSITIES`); its URL."""
    from store import make_engine, schema
    from tests.commoncrawl.graph_files import add_universities

    engine = make_engine(sqlite_url)
    schema.upgrade(engine)
    add_universities(engine)
    engine.dispose()
    return sqlite_url
