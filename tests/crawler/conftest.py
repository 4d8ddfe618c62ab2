"""Fixtures of the crawler tests: a small local web, the shared test web, databases.

:class:`LocalWeb` is a real HTTP server on 127.0.0.1 that answers like the sites of a
dict of URLs; the crawler reaches it as its HTTP proxy (absolute-form requests), so the
pages can live at ordinary names (``www.alpha-university.edu``) without DNS, exactly as
with the shared test web (:mod:`testbed`). Every request is logged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html"})
    delay: float = 0.0


def html(title: str, *links: str | tuple[str, str] | tuple[str, str, str]) -> Answer:
    """An HTML page with links (``url``, ``(url, anchor)`` or ``(url, anchor, rel)``)."""
    items = []
    for link in links:
        if isinstance(link, str):
            link = (link, link)
        url, anchor, *rel = link
        rel_attr = f' rel="{rel[0]}"' if rel else ""
        items.append(f'<li><a href="{url}"{rel_attr}>{anchor}</a></li>')
    body = (
        f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
        f"<p>Some text about {title}.</p><ul>{''.join(items)}</ul></body></html>"
    )
    return Answer(body=body.encode("utf-8"), headers={"Content-Type": "text/html; charset=utf-8"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:
        if self.server.stopped:  # a kept-alive connection of a stopped server: dropped
            self.close_connection = True
            return
        path = self.path
        if path.startswith(("http://", "https://")):
            url = path
        else:
            url = f"http://{self.headers.get('Host', '')}{path}"
        answer = self.server.pages.get(url)
        if isinstance(answer, list):  # answers in turn, the last one from then on
            with self.server.lock:
                answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if answer is None:
            answer = Answer(404, b"<html><body>not found</body></html>")
        etag = answer.headers.get("ETag")
        if etag and self.headers.get("If-None-Match") == etag:  # a conditional request
            answer = Answer(304, b"", headers={"ETag": etag})
        with self.server.lock:
            self.server.log.append(
                {
                    "url": url,
                    "status": answer.status,
                    "time": time.time(),
                    "proxy_authorization": self.headers.get("Proxy-Authorization"),
                }
            )
        if answer.delay:
            time.sleep(answer.delay)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, pages: dict[str, Any], port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.pages = pages
        self.stopped = False
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()


class LocalWeb:
    """A dict of URLs served on 127.0.0.1 (as a proxy, or directly); on ``port`` when
    given (a server started again where a stopped one was). A URL mapped to a list of
    answers gets them in turn, the last one from then on (a 429, then the page)."""

    def __init__(self, pages: dict[str, Any], port: int = 0) -> None:
        self._server = _Server(pages, port)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def pages(self) -> dict[str, Any]:
        return self._server.pages

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.log)

    def fetched(self) -> list[str]:
        return [r["url"] for r in self.requests]

    def __enter__(self) -> LocalWeb:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


@pytest.fixture
def local_web() -> Iterator[Any]:
    """A factory: ``with local_web(pages) as web: ...``."""
    yield LocalWeb


# testbed_dir, testbed_manifest and testbed_server: tests/conftest.py


def fast_settings(**crawl: Any) -> Any:
    """Settings for test crawls: no politeness delays, short timeouts."""
    from core.settings import Settings

    base = {
        "download_delay": 0.0,
        "autothrottle": False,
        "download_timeout": 15.0,
        "concurrent_requests": 16,
        "concurrent_per_domain": 8,
        "retry_times": 1,
        "flush_seconds": 0.5,
    }
    base.update(crawl)
    return Settings().replace(crawl=base)


def migrated_engine(url: str) -> Any:
    from store import make_engine, schema

    engine = make_engine(url)
    schema.upgrade(engine)
    return engine


def write_universities(path: Path, *unis: dict[str, Any]) -> Path:
    """A universities TOML file."""
    lines = []
    for u in unis:
        lines.append("[[university]]")
        lines.append(f'name = "{u["name"]}"')
        lines.append(f'country = "{u.get("country", "USA")}"')
        lines.append("domains = [" + ", ".join(f'"{d}"' for d in u["domains"]) + "]")
        if u.get("home"):
            lines.append("home = [" + ", ".join(f'"{h}"' for h in u["home"]) + "]")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
