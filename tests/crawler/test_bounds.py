"""Bounded bodies whatever the settings: a gzip bomb and an endless chunked body, served
from a real HTTP server on 127.0.0.1, are recorded ``too_large`` and the crawler's memory
stays under a bound even at the largest allowed ``[crawl] max_response_bytes``."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import create_engine, select

from core.defaults import CRAWL_MAX_RESPONSE_BYTES_CEILING
from core.settings import CrawlSettings, Settings
from crawler.settings import scrapy_settings
from store.models import Page
from store.session import session_scope

from .conftest import write_universities

U = "http://www.bounded-u.edu"
MIB = 1 << 20


def gzip_bomb(mib: int) -> bytes:
    """A valid gzip member of ``mib`` MiB of zeros (about 1 KB per MiB), built in O(1 MiB)
    memory: one fully flushed deflate block of 1 MiB repeated, then the trailer."""
    chunk = bytes(MIB)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(chunk, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = struct.pack("<II", crc, (mib * MIB) & 0xFFFFFFFF)
    return header + block * mib + b"\x03\x00" + trailer  # 03 00: an empty final block


class _Handler(BaseHTTPRequestHandler):
    """A site behind a proxy: ``/`` links to ``/bomb`` (gzip) and ``/chunked`` (no length)."""

    protocol_version = "HTTP/1.1"
    server: BoundsWeb

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _send(self, body: bytes, **headers: str) -> None:
        self.send_response(200 if body or headers else 404)
        self.send_header("Content-Type", "text/html")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/":
            self._send(b"<html><body><a href='/bomb'>b</a> <a href='/chunked'>c</a></body></html>")
        elif path == "/bomb":
            self._send(self.server.bomb, Content_Encoding="gzip")
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            piece = b"<p>" + b"x" * (64 * 1024 - 7) + b"</p>"
            try:
                for _ in range(self.server.chunks):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the crawler hung up: what the test wants
                pass
        else:
            self._send(b"")


class BoundsWeb(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, bomb: bytes, chunks: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bomb = bomb
        self.chunks = chunks


@pytest.fixture
def web_factory() -> Iterator[Any]:
    servers: list[BoundsWeb] = []

    def start(bomb_mib: int, chunks: int) -> str:
        server = BoundsWeb(gzip_bomb(bomb_mib), chunks)
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def crawl(tmp_path: Path, proxy: str, max_bytes: int) -> tuple[subprocess.CompletedProcess, int]:
    """``webometrics crawl`` in a subprocess; its result and the peak RSS (KiB) of the
    command and every process it waited for (the Scrapy child included)."""
    unis = write_universities(
        tmp_path / "u.toml", {"name": "Bounded U", "domains": ["bounded-u.edu"], "home": [f"{U}/"]}
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    env.update(
        WEBOMETRICS_DB_URL=f"sqlite:///{tmp_path / 'w.db'}",
        WEBOMETRICS_CRAWL__DOWNLOAD_DELAY="0",
        WEBOMETRICS_CRAWL__AUTOTHROTTLE="false",
        WEBOMETRICS_CRAWL__RETRY_TIMES="0",
        WEBOMETRICS_CRAWL__MAX_RESPONSE_BYTES=str(max_bytes),
    )
    cli = [sys.executable, "-m", "webometrics"]
    subprocess.run([*cli, "db", "upgrade"], env=env, cwd=tmp_path, check=True, capture_output=True)
    measure = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)"
    )
    args = ["crawl", "--universities", str(unis), "--proxy", proxy, "--direction", "outgoing"]
    out = subprocess.run(
        [sys.executable, "-c", measure, *cli, *args, "--no-progress"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    rss_kib, rc = out.stdout.split()[-2:]
    out.returncode = int(rc)
    return out, int(rss_kib)


def fetch_errors(tmp_path: Path) -> dict[str, str | None]:
    engine = create_engine(f"sqlite:///{tmp_path / 'w.db'}")
    with session_scope(engine) as s:
        errors = {p.url: p.fetch_error for p in s.scalars(select(Page))}
    engine.dispose()
    return errors


@pytest.mark.slow
def test_a_gzip_bomb_at_the_largest_allowed_cap_stays_in_bounded_memory(
    tmp_path: Path, web_factory: Any
) -> None:
    """A 1 GiB bomb (1 MB on the wire) at max_response_bytes = the ceiling: refused as
    too_large, the crawl's peak RSS far below the inflated size (2.2 GB without the
    bound at max_response_bytes = 3 GB)."""
    proxy = web_factory(bomb_mib=1024, chunks=4)
    out, rss_kib = crawl(tmp_path, proxy, CRAWL_MAX_RESPONSE_BYTES_CEILING)
    assert out.returncode == 0, out.stderr
    errors = fetch_errors(tmp_path)
    assert errors[f"{U}/bomb"].startswith("too_large: ")
    assert "inflate to more than the cap of 67,108,864 bytes" in errors[f"{U}/bomb"]
    print(f"peak RSS {rss_kib / 1024:.0f} MiB")
    assert rss_kib * 1024 < 480 * MIB, f"peak RSS {rss_kib / 1024:.0f} MiB"


@pytest.mark.slow
def test_a_chunked_body_over_the_cap_is_too_large_not_cancelled(
    tmp_path: Path, web_factory: Any
) -> None:
    proxy = web_factory(bomb_mib=4, chunks=64)  # 4 MiB in 64 KiB chunks, no length
    out, _ = crawl(tmp_path, proxy, MIB)
    assert out.returncode == 0, out.stderr
    errors = fetch_errors(tmp_path)
    assert errors[f"{U}/"] is None
    chunked = errors[f"{U}/chunked"]
    assert chunked.startswith("too_large: received ") and "over the cap of 1,048,576" in chunked
    assert errors[f"{U}/bomb"].startswith("too_large: ")  # 4 MiB inflated > 1 MiB


def test_settings_refuse_a_cap_over_the_ceiling(tmp_path: Path) -> None:
    config = tmp_path / "webometrics.toml"
    config.write_text("[crawl]\nmax_response_bytes = 3_000_000_000\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    out = subprocess.run(
        [sys.executable, "-m", "webometrics", "--config", str(config), "db", "upgrade"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "webometrics.toml:2: crawl.max_response_bytes:" in out.stderr
    assert "over the hard ceiling of 67,108,864 bytes" in out.stderr
    with pytest.raises(ValueError, match="max_html_bytes to at most 67108864"):
        Settings().replace(extract={"max_html_bytes": 100 * MIB})


def test_the_ceiling_holds_when_validation_is_bypassed() -> None:
    """A settings object made without validation (3 GB) still gives Scrapy the ceiling."""
    loose = CrawlSettings.model_construct(
        **{**CrawlSettings().model_dump(), "max_response_bytes": 3 * 1024**3}
    )
    s = scrapy_settings(loose, frontier="f", db_url="sqlite://", run_id=1)
    assert s["DOWNLOAD_MAXSIZE"] == CRAWL_MAX_RESPONSE_BYTES_CEILING
    assert s["DOWNLOADER_MIDDLEWARES"]["crawler.limits.BoundedDecompressionMiddleware"] == 590
    assert "crawler.limits.BodySizeGuard" in s["EXTENSIONS"]
