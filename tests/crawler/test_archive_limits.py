"""An archived crawl keeps to the archive's rate limits: a 429 with Retry-After is waited
out, a 503 is retried after the back-off, requests to the archive are paced at ``[crawl]
archive_rate``, and an archive that keeps refusing gives the page the fetch error
``archive: ...`` (a clear error, in the archived run's own row). Also the command line's
answers to bad input (exit 2)."""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from store.models import Page
from store.session import session_scope
from tests.tiers import slow_fixture
from webometrics.stages import crawl

from .conftest import fast_settings, migrated_engine, write_universities

HOME = "http://www.flaky-university.edu/"
BUSY = HOME + "busy.html"
TS = "20150612101010"


class _Wayback(BaseHTTPRequestHandler):
    """A Wayback Machine (as an HTTP proxy) that refuses first, then answers: the CDX
    query of HOME answers 429 Retry-After: 1 once, its replay 503 once; BUSY's query
    always answers 429."""

    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self.server.lock:
            seen = self.server.seen
            key = (parts.path, query.get("url", ""))
            seen[key] = seen.get(key, 0) + 1
            first = seen[key] == 1
            self.server.log.append((time.monotonic(), self.path))
        headers: dict[str, str] = {}
        if parts.path == "/cdx/search/cdx" and query.get("url") == BUSY:
            status, body, headers = 429, b"slow down", {"Retry-After": "0"}
        elif parts.path == "/cdx/search/cdx":
            if first:
                status, body, headers = 429, b"slow down", {"Retry-After": "1"}
            else:
                rows = [["timestamp", "original", "statuscode"], [TS, HOME, "200"]]
                status, body = 200, json.dumps(rows).encode()
        elif parts.path == f"/web/{TS}id_/{HOME}" and first:
            status, body = 503, b"busy"
        elif parts.path == f"/web/{TS}id_/{HOME}":
            status = 200
            body = f'<html><body><h1>Flaky</h1><a href="{BUSY}">busy</a></body></html>'.encode()
            headers = {"Memento-Datetime": "Fri, 12 Jun 2015 10:10:10 GMT"}
        else:
            status, body = 404, b"not archived"
        self.send_response(status)
        for name, value in {"Content-Type": "text/html", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
@slow_fixture
def flaky(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("archive-limits")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Wayback)
    server.daemon_threads = True
    server.lock = threading.Lock()  # type: ignore[attr-defined]
    server.seen = {}  # type: ignore[attr-defined]
    server.log = []  # type: ignore[attr-defined]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    port = server.server_address[1]
    engine = migrated_engine(f"sqlite:///{tmp / 'limits.db'}")
    unis = write_universities(
        tmp / "u.toml",
        {"name": "Flaky University", "domains": ["flaky-university.edu"], "home": [HOME]},
    )
    settings = fast_settings(
        depth=1,
        proxy=f"http://127.0.0.1:{port}",
        jobdir=str(tmp / "job"),
        wayback_url="http://web.archive.org",
        archive="wayback",
        archive_from="2015",
        archive_to="2015",
        archive_rate=4.0,
        archive_retries=2,
        archive_backoff=0.3,
    )
    try:
        result = crawl.run(engine, settings, crawl.CrawlScope(universities_file=str(unis)))
    finally:
        server.shutdown()
        server.server_close()
    with session_scope(engine) as s:
        pages = {p.original_url: p for p in s.scalars(select(Page))}
        s.expunge_all()
    return {"result": result, "pages": pages, "log": list(server.log)}  # type: ignore[attr-defined]


def test_refusals_are_waited_out_and_the_page_is_read(flaky: dict[str, Any]) -> None:
    home = flaky["pages"][HOME]
    assert home.capture_status == "captured" and home.http_status == 200
    assert home.captured_at.strftime("%Y%m%d%H%M%S") == TS
    stats = flaky["result"].scrapy["outgoing"]
    # HOME: one 429 and one 503; BUSY: three 429 (two retries)
    assert stats["webometrics/archive_retries"] == 4


def test_retry_after_and_the_pace_are_kept(flaky: dict[str, Any]) -> None:
    log = flaky["log"]
    times = [t for t, _ in log]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.25 - 0.02  # archive_rate = 4 a second, one at a time
    cdx = [t for t, path in log if urlsplit(path).path.startswith("/cdx/") and "busy" not in path]
    assert cdx[1] - cdx[0] >= 1.0 - 0.02  # Retry-After: 1


def test_an_archive_that_keeps_refusing_is_a_clear_error(flaky: dict[str, Any]) -> None:
    busy = flaky["pages"][BUSY]
    assert busy.fetch_error.startswith("archive: ")
    assert "429" in busy.fetch_error and "archive_rate" in busy.fetch_error
    assert busy.url.startswith("http://web.archive.org/web/20150101-20151231*/")
    assert busy.archive == "wayback"
    assert flaky["result"].errors == {"archive": 1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--archive", "wayback", "--from", "2016", "--to", "2015"], "is after --to"),
        (["--archive", "wayback", "--from", "2015-13", "--to", "2016"], "is not a date"),
        (["--archive", "wayback"], "needs a period"),
        (["--from", "2015", "--to", "2016"], "without an archive"),
        (
            ["--archive", "commoncrawl", "--from", "2015", "--to", "2015", "--direction", "citing"],
            "commoncrawl-graph",
        ),
    ],
)
def test_bad_archive_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    from webometrics.cli import main

    db = f"sqlite:///{tmp_path / 'w.db'}"
    migrated_engine(db).dispose()
    unis = write_universities(
        tmp_path / "u.toml", {"name": "Flaky University", "domains": ["flaky-university.edu"]}
    )
    code = main(["--db-url", db, "crawl", "--universities", str(unis), "--no-progress", *args])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    with session_scope(migrated_engine(db)) as s:  # no run was made
        assert s.scalars(select(Page)).first() is None


def test_an_unknown_archive_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from webometrics.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["crawl", "--archive", "tape", "--from", "2015", "--to", "2015"])
    assert stop.value.code == 2
    assert "invalid choice: 'tape'" in capsys.readouterr().err
