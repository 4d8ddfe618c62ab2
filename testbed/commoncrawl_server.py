"""A local stand-in for ``data.commoncrawl.org``: a web graph release in the published
layout, served on 127.0.0.1 with the behaviour a download must survive.

:func:`publish` lays out a release written by :mod:`testbed.commoncrawl_graph` as Common
Crawl publishes it below ``projects/hyperlinkgraph/<release>/<level>/``: the domain graph
as one ``<release>-domain-vertices.txt.gz`` and one ``-edges.txt.gz``, the host graph as
``vertices/part-NNNNN-<uuid>-c000.txt.gz`` parts listed in ``<release>-host-vertices.paths.gz``
(and the edges likewise), the ranks as ``<release>-<level>-ranks.txt.gz``;
:func:`write_graphinfo` writes the list of releases (``graphinfo.json``, as
``index.commoncrawl.org`` serves it).

:class:`ReleaseServer` serves a folder over HTTP/1.1 as S3 behind CloudFront does: ``HEAD``
with ``Content-Length``, ``GET`` with ``Range: bytes=a-b`` / ``bytes=a-`` answered 206 with
``Content-Range`` (416 past the end), 404 for a missing key (or one told to be missing,
:meth:`answer_404`). For the tests and the
benchmark it can cut a connection after some bytes of a file (:meth:`cut`), send a
file's bytes spoilt once (:meth:`spoil`), answer ``503 Slow Down`` with ``Retry-After``
(:meth:`fail`), and hold a rate (bytes a second) so that a transfer takes time. Every
request is logged (method, path, range, user agent, time).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from testbed.commoncrawl_graph import GraphFiles

GRAPH_ROOT = "projects/hyperlinkgraph"
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


@dataclass(frozen=True)
class PublishedRelease:
    """The published paths (below the data root) of one laid-out release."""

    release: str
    level: str
    vertices: tuple[str, ...]
    edges: tuple[str, ...]
    ranks: str | None
    listings: tuple[str, ...]

    @property
    def files(self) -> tuple[str, ...]:
        return (*self.vertices, *self.edges, *((self.ranks,) if self.ranks else ()))


def _joined(parts: Sequence[Path], target: Path) -> None:
    """One gzip file of the parts' lines, as the domain graph is published."""
    with gzip.open(target, "wb", compresslevel=6) as out:
        for part in parts:
            with gzip.open(part, "rb") as fh:
                shutil.copyfileobj(fh, out)


def publish(files: GraphFiles, root: Path, *, seed: int = 0) -> PublishedRelease:
    """Lay out ``files`` below ``root`` in the published layout (see the module)."""
    release, level = files.release, files.level
    base = f"{GRAPH_ROOT}/{release}/{level}"
    folder = root / base
    folder.mkdir(parents=True, exist_ok=True)
    listings: list[str] = []
    out: dict[str, list[str]] = {"vertices": [], "edges": []}
    job = uuid.UUID(int=seed + 1)
    for kind, parts in (("vertices", files.vertices), ("edges", files.edges)):
        if level == "domain":
            path = f"{base}/{release}-{level}-{kind}.txt.gz"
            _joined(parts, root / path)
            out[kind].append(path)
            continue
        (folder / kind).mkdir(exist_ok=True)
        for k, part in enumerate(parts):
            path = f"{base}/{kind}/part-{k:05d}-{job}-c000.txt.gz"
            shutil.copyfile(part, root / path)
            out[kind].append(path)
        listing = f"{base}/{release}-{level}-{kind}.paths.gz"
        (root / listing).write_bytes(gzip.compress("".join(p + "\n" for p in out[kind]).encode()))
        listings.append(listing)
    ranks = None
    if files.ranks is not None:
        ranks = f"{base}/{release}-{level}-ranks.txt.gz"
        shutil.copyfile(files.ranks, root / ranks)
    return PublishedRelease(
        release, level, tuple(out["vertices"]), tuple(out["edges"]), ranks, tuple(listings)
    )


def write_graphinfo(root: Path, releases: Sequence[PublishedRelease | str]) -> Path:
    """``graphinfo.json`` as ``index.commoncrawl.org`` publishes it: the releases, newest
    first, each ``{"id", "crawls", "index", "location", "stats"}``."""
    entries = []
    for rel in releases:
        name = rel if isinstance(rel, str) else rel.release
        entries.append(
            {
                "id": name,
                "crawls": [],
                "index": f"https://data.commoncrawl.org/{GRAPH_ROOT}/{name}/index.html",
                "location": f"s3://commoncrawl/{GRAPH_ROOT}/{name}/",
                "stats": {"host": {"nodes": 0, "arcs": 0}, "domain": {"nodes": 0, "arcs": 0}},
            }
        )
    path = root / "graphinfo.json"
    path.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    return path


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _head(self, status: int, length: int, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        srv = self.server
        path = unquote(self.path.split("?", 1)[0]).lstrip("/")
        with srv.lock:
            srv.log.append(
                {
                    "method": self.command,
                    "path": path,
                    "range": self.headers.get("Range"),
                    "agent": self.headers.get("User-Agent"),
                    "time": time.monotonic(),
                }
            )
            failing = srv.fail_next > 0
            if failing:
                srv.fail_next -= 1
            cut = srv.cuts.pop(path, None) if body else None
            spoil = srv.spoils.pop(path, False) if body else False
        if failing:
            msg = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message>"
            self._head(503, len(msg) if body else 0, {"Retry-After": f"{srv.retry_after:g}"})
            if body:
                self.wfile.write(msg)
            return
        file = (srv.root / path).resolve()
        if path in srv.missing or not file.is_file() or srv.root not in file.parents:
            msg = b"<Error><Code>NoSuchKey</Code></Error>"
            self._head(404, len(msg) if body else 0)
            if body:
                self.wfile.write(msg)
            return
        size = file.stat().st_size
        first, last, status, headers = 0, size - 1, 200, {}
        m = _RANGE.match(self.headers.get("Range") or "")
        if m is not None:
            first = int(m.group(1))
            last = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            if first >= size:
                self._head(416, 0, {"Content-Range": f"bytes */{size}"})
                return
            status, headers = 206, {"Content-Range": f"bytes {first}-{last}/{size}"}
        self._head(status, last - first + 1, headers)
        if not body:
            return
        with file.open("rb") as fh:
            fh.seek(first)
            data = fh.read(last - first + 1)
        if spoil:  # the same length, other bytes: a check of the gzip stream sees it
            middle = len(data) // 2
            data = (
                data[:middle]
                + bytes(b ^ 0x5A for b in data[middle : middle + 64])
                + data[middle + 64 :]
            )
        if cut is not None:
            data = data[: max(0, cut - first)]
        self._send(data)
        if cut is not None:
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(2)

    def _send(self, data: bytes) -> None:
        rate = self.server.rate
        step = 1 << 16
        t0 = time.monotonic()
        for start in range(0, len(data), step):
            self.wfile.write(data[start : start + step])
            if rate:
                ahead = (start + step) / rate - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root.resolve()
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.fail_next = 0
        self.retry_after = 1.0
        self.cuts: dict[str, int] = {}
        self.missing: set[str] = set()
        self.spoils: dict[str, bool] = {}
        self.rate = 0.0


class ReleaseServer:
    """The files below ``root`` on 127.0.0.1 as data.commoncrawl.org serves them (see the
    module); a context manager. ``url`` is the data root (``http://127.0.0.1:PORT/``)."""

    def __init__(self, root: Path, *, rate: float = 0.0) -> None:
        self._server = _Server(root)
        self._server.rate = rate
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.log)

    def clear(self) -> None:
        with self._server.lock:
            self._server.log.clear()

    def cut(self, path: str, at: int) -> None:
        """Close the connection of the next GET of ``path`` after byte ``at`` of the file."""
        with self._server.lock:
            self._server.cuts[path] = at

    def spoil(self, path: str) -> None:
        """Send the next GET of ``path`` with 64 bytes in its middle changed."""
        with self._server.lock:
            self._server.spoils[path] = True

    def answer_404(self, path: str) -> None:
        """Answer 404 for ``path`` from now on, as for a missing key."""
        with self._server.lock:
            self._server.missing.add(path)

    def fail(self, n: int, retry_after: float = 1.0) -> None:
        """Answer ``503 Slow Down`` (with ``Retry-After``) to the next ``n`` requests."""
        with self._server.lock:
            self._server.fail_next = n
            self._server.retry_after = retry_after

    def __enter__(self) -> ReleaseServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


__all__ = ["PublishedRelease", "ReleaseServer", "publish", "write_graphinfo"]
