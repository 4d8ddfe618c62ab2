"""WARC output of every response (ISO 28500, with :mod:`warcio`).

When ``[crawl] warc_dir`` is set, :class:`WarcMiddleware` writes a ``request`` and a
``response`` record for every answer the downloader gets (retried attempts and robots.txt
included), gzip-compressed one record per member, into
``webometrics-<run>-<time>-<pid>-<n>.warc.gz`` files of at most 1 GiB. The response record
holds the body as it came over the wire (before content decoding); its file and offset
are stored with the page (``Page.warc_file``, ``Page.warc_offset``), so the raw answer can
be found again. Reading WARC files back: :mod:`crawler.warc`.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response


MAX_WARC_BYTES = 1 << 30
_DROP_HEADERS = {b"transfer-encoding", b"content-length"}


class WarcWriterFile:
    """A rotating gzip WARC writer (one file at a time, at most ``max_bytes`` each)."""

    def __init__(self, folder: str | Path, prefix: str, max_bytes: int = MAX_WARC_BYTES) -> None:
        from warcio.warcwriter import WARCWriter

        self._writer_cls = WARCWriter
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.n = 0
        self.fh: Any = None
        self.writer: Any = None
        self.path: Path | None = None

    def _open(self) -> None:
        self.close()
        self.n += 1
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
        self.path = self.folder / f"{self.prefix}-{stamp}-{os.getpid()}-{self.n:05d}.warc.gz"
        self.fh = open(self.path, "ab")  # noqa: SIM115 - kept open across records
        self.writer = self._writer_cls(self.fh, gzip=True)
        info = self.writer.create_warcinfo_record(
            self.path.name,
            {
                "software": "webometrics crawler (Scrapy, warcio)",
                "format": "WARC File Format 1.1",
                "hostname": socket.gethostname(),
            },
        )
        self.writer.write_record(info)

    def write(self, records: list[Any]) -> tuple[str, int]:
        """Write records; return (file path, offset of the first one)."""
        if self.fh is None or self.fh.tell() >= self.max_bytes:
            self._open()
        offset = self.fh.tell()
        for record in records:
            self.writer.write_record(record)
        self.fh.flush()
        return str(self.path), offset

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def _headers(items: Any) -> list[tuple[str, str]]:
    out = []
    for name, values in items:
        if name.lower() in _DROP_HEADERS:
            continue
        for value in values:
            out.append((name.decode("latin-1"), value.decode("latin-1")))
    return out


class WarcMiddleware:
    """Write every downloaded answer to WARC files (downloader middleware)."""

    def __init__(self, folder: str, run_id: int) -> None:
        self.out = WarcWriterFile(folder, f"webometrics-{run_id}")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcMiddleware:
        folder = crawler.settings.get("WEBOMETRICS_WARC_DIR")
        if not folder:
            raise NotConfigured
        mw = cls(folder, crawler.settings.getint("WEBOMETRICS_RUN_ID"))
        from scrapy import signals

        crawler.signals.connect(mw.out.close, signal=signals.spider_closed)
        return mw

    def process_response(self, request: Request, response: Response) -> Response:
        if request.meta.get("wm_replayed"):
            return response
        from http import HTTPStatus

        from warcio.statusandheaders import StatusAndHeaders

        writer = self.out
        if writer.writer is None:
            writer._open()
        try:
            reason = HTTPStatus(response.status).phrase
        except ValueError:
            reason = "Unknown"
        body = response.body
        resp_headers = [*_headers(response.headers.items()), ("Content-Length", str(len(body)))]
        date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        warc_headers = {"WARC-Date": date}
        if response.ip_address is not None:
            warc_headers["WARC-IP-Address"] = str(response.ip_address)
        resp = writer.writer.create_warc_record(
            response.url,
            "response",
            payload=io.BytesIO(body),
            http_headers=StatusAndHeaders(
                f"{response.status} {reason}", resp_headers, protocol="HTTP/1.1"
            ),
            warc_headers_dict=warc_headers,
        )
        parts = urlsplit(request.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        req_headers = [("Host", parts.netloc), *_headers(request.headers.items())]
        req = writer.writer.create_warc_record(
            request.url,
            "request",
            payload=io.BytesIO(request.body or b""),
            http_headers=StatusAndHeaders(
                f"{request.method} {target} HTTP/1.1", req_headers, is_http_request=True
            ),
            warc_headers_dict={
                "WARC-Date": date,
                "WARC-Concurrent-To": resp.rec_headers.get_header("WARC-Record-ID"),
            },
        )
        path, offset = writer.write([resp, req])
        if request.meta.get("wm"):
            request.meta["wm_warc"] = (path, offset)
        return response
