"""Fixtures of the Common Crawl index tests: the real WARC samples, a byte-range server,
and a database with universities and their stored citing environment.

:class:`RangeServer` serves the files of a folder on 127.0.0.1 and answers ``Range:
bytes=a-b`` requests with 206 as data.commoncrawl.org does; it logs every request (path,
range, user agent, time) and can be told to answer 404 for a path or 503 for its next
requests.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

_RANGE = re.compile(r"^bytes=(\d+)-(\d+)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = unquote(self.path.split("?", 1)[0]).lstrip("/")
        srv = self.server
        with srv.lock:
            srv.log.append(
                {
                    "path": path,
                    "range": self.headers.get("Range"),
                    "agent": self.headers.get("User-Agent"),
                    "time": time.monotonic(),
                }
            )
            failing = srv.fail_next > 0
            if failing:
                srv.fail_next -= 1
        if failing:
            self._send(503, b"busy")
            return
        file = (srv.root / path).resolve()
        if path in srv.missing or not file.is_file() or srv.root not in file.parents:
            self._send(404, b"not found")
            return
        data = file.read_bytes()
        m = _RANGE.match(self.headers.get("Range") or "")
        if m is None:
            self._send(200, data)
            return
        first, last = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
        if first >= len(data):
            self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
            return
        self._send(
            206, data[first : last + 1], {"Content-Range": f"bytes {first}-{last}/{len(data)}"}
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root.resolve()
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.missing: set[str] = set()
        self.fail_next = 0


class RangeServer:
    """The files below ``root`` over HTTP on 127.0.0.1, with byte ranges."""

    def __init__(self, root: Path) -> None:
        self._server = _Server(root)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.log)

    def answer_404(self, path: str) -> None:
        self._server.missing.add(path)

    def fail(self, n: int) -> None:
        """Answer 503 to the next ``n`` requests."""
        with self._server.lock:
            self._server.fail_next = n

    def __enter__(self) -> RangeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


@pytest.fixture(scope="session")
def warc_samples(shared_data: Path) -> Path:
    """The real WARC files of ``shared/data/warc-samples`` (read in place)."""
    folder = shared_data / "warc-samples"
    if not folder.is_dir():
        pytest.fail(f"{folder} is missing: the index tests need the real WARC samples")
    return folder


@pytest.fixture
def range_server(warc_samples: Path) -> Iterator[RangeServer]:
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
