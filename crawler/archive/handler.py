"""Scrapy's download handler of an archived crawl: each URL answered from its capture.

:class:`ArchiveDownloadHandler` replaces the http(s) handlers when ``[crawl] archive`` is
set (:func:`scrapy_settings`). For a request of an original URL it

1. asks the archive's index for the URL's captures in the period
   (:mod:`crawler.archive.cdx`) and keeps the one nearest the period's middle;
2. fetches that capture raw: the Wayback Machine's ``id_`` replay
   (``<wayback_url>/web/<timestamp>id_/<url>``; a redirect of the archive to another
   timestamp of the same URL is followed, an archived redirect is handed to the spider as
   the redirect it was, its ``Location`` unwrapped to the original target), or Common
   Crawl's WARC record by HTTP byte range from ``<commoncrawl_data_url>/<filename>``
   (checked by :func:`crawler.commoncrawl.fetch.parse_capture`);
3. answers the request with the capture's status, headers and body, and the capture
   facts of :mod:`crawler.archive.facts` (a URL without a capture: 404 with
   ``X-Webometrics-Capture: none``, stored as ``no_capture``, not as an error).

Every request to an archive host goes through Scrapy's HTTP/1.1 handler (so the crawl's
proxy, timeouts and size limits apply) and is paced: at most ``[crawl] archive_rate``
requests a second per archive host, one at a time; a 429, 502, 503 or 504 answer or a
lost connection is retried ``[crawl] archive_retries`` times after the answer's
``Retry-After`` or ``archive_backoff * 2**attempt`` seconds. An archive that keeps
refusing gives the page the fetch error ``archive: ...`` (:class:`ArchiveUnavailableError`).

Statistics (Scrapy's): ``webometrics/archive_requests``, ``webometrics/archive_retries``,
``webometrics/archive_captures``, ``webometrics/archive_no_capture``.

Time: two archive requests per URL (Common Crawl: one more per crawl of the period that
holds no capture before one that does), at most ``archive_rate`` a second per host.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.core.downloader.handlers.base import BaseDownloadHandler
from scrapy.http import Headers, Response
from scrapy.responsetypes import responsetypes
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer, task

from core.archives import Period, timestamp_time
from core.domains import normalize_url
from crawler.archive.cdx import (
    CdxError,
    choose,
    collections_in,
    commoncrawl_query,
    parse_commoncrawl,
    parse_wayback,
    wayback_query,
)
from crawler.archive.facts import (
    ARCHIVE_HEADER,
    CAPTURE_HEADER,
    DATETIME_HEADER,
    MEMENTO_HEADER,
    http_date,
    memento_url,
    period_memento,
    unwrap_memento,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: answers of an archive that are retried (rate limit, overload, gateway)
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: redirects of the Wayback Machine to another timestamp of the same URL followed
MAX_ARCHIVE_REDIRECTS = 5
#: headers of the archive's answer not passed on with the capture
_HOP_HEADERS = frozenset(
    {b"transfer-encoding", b"connection", b"keep-alive", b"content-length", b"set-cookie"}
)


class ArchiveUnavailableError(OSError):
    """The archive kept refusing or answered something unreadable (``archive: ...``)."""


def retry_after(response: Response) -> float | None:
    """The seconds of a ``Retry-After`` header (a number or an HTTP date), or None.

    >>> from scrapy.http import Response
    >>> retry_after(Response("http://a/", headers={"Retry-After": "7"}))
    7.0
    >>> retry_after(Response("http://a/")) is None
    True
    """
    raw = response.headers.get(b"Retry-After")
    if not raw:
        return None
    text = raw.decode("latin-1").strip()
    if text.isdigit():
        return float(text)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def archive_settings(crawl: Any) -> dict[str, Any]:
    """The Scrapy settings an archived crawl adds (``[crawl] archive`` set): this handler
    for http and https, and the archive's keys. robots.txt and sitemaps are not read: the
    archive applies its own exclusions, and the live site's robots.txt has no say over a
    copy of its past (docs/archives.md)."""
    handler = "crawler.archive.handler.ArchiveDownloadHandler"
    return {
        "DOWNLOAD_HANDLERS": {"http": handler, "https": handler},
        "ROBOTSTXT_OBEY": False,
        "WEBOMETRICS_ARCHIVE": {
            "archive": crawl.archive,
            "from": crawl.archive_from,
            "to": crawl.archive_to,
            "rate": crawl.archive_rate,
            "retries": crawl.archive_retries,
            "backoff": crawl.archive_backoff,
            "wayback_url": crawl.wayback_url,
            "commoncrawl_index_url": crawl.commoncrawl_index_url,
            "commoncrawl_data_url": crawl.commoncrawl_data_url,
        },
    }


async def _sleep(seconds: float) -> None:
    from twisted.internet import reactor

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))  # type: ignore[arg-type]


class _Pace:
    """At most ``rate`` request starts a second per host, one request at a time."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.locks: dict[str, defer.DeferredLock] = {}
        self.last: dict[str, float] = {}

    async def run(self, host: str, fetch: Any) -> Any:
        lock = self.locks.setdefault(host, defer.DeferredLock())
        await maybe_deferred_to_future(lock.acquire())
        try:
            wait = self.last.get(host, -1e9) + self.interval - time.monotonic()
            if wait > 0:
                await _sleep(wait)
            self.last[host] = time.monotonic()
            return await fetch()
        finally:
            lock.release()


class ArchiveDownloadHandler(BaseDownloadHandler):
    """Answer http(s) requests from a web archive (see the module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler

        spec = dict(crawler.settings.getdict("WEBOMETRICS_ARCHIVE"))
        self.period = Period.parse(spec["archive"], spec["from"], spec["to"])
        self.retries = int(spec.get("retries", 5))
        self.backoff = float(spec.get("backoff", 2.0))
        self.wayback = str(spec.get("wayback_url") or "https://web.archive.org").rstrip("/")
        self.cc_index = str(spec.get("commoncrawl_index_url") or "").rstrip("/")
        self.cc_data = str(spec.get("commoncrawl_data_url") or "").rstrip("/")
        self.http = HTTP11DownloadHandler(crawler)
        self.pace = _Pace(float(spec.get("rate", 1.0)))
        self.stats = crawler.stats
        self._collections: list[dict[str, Any]] | None = None

    async def close(self) -> None:
        await self.http.close()

    # -- archive requests ----------------------------------------------------------------
    def _inner(self, url: str, outer: Request, headers: dict[str, str] | None) -> Request:
        meta: dict[str, Any] = {
            k: outer.meta[k]
            for k in ("proxy", "download_timeout", "download_maxsize")
            if k in outer.meta
        }
        inner = Request(url, headers=headers or {}, meta=meta, dont_filter=True)
        for name in (b"User-Agent", b"Proxy-Authorization"):
            value = outer.headers.get(name)
            if value and name not in inner.headers:
                inner.headers[name] = value
        return inner

    async def get(
        self, url: str, outer: Request, headers: dict[str, str] | None = None
    ) -> Response:
        """``url`` from the archive, paced and retried (see the module docstring)."""
        host = url.split("/", 3)[2]
        inner = self._inner(url, outer, headers)
        for attempt in range(self.retries + 1):
            try:
                response: Response = await self.pace.run(
                    host, lambda: self.http.download_request(inner)
                )
            except Exception:
                if attempt == self.retries:
                    raise
                self._inc("webometrics/archive_retries")
                await _sleep(self.backoff * 2**attempt)
                continue
            finally:
                self._inc("webometrics/archive_requests")
            if response.status in RETRY_STATUSES:
                if attempt == self.retries:
                    raise ArchiveUnavailableError(
                        f"{url} answered HTTP {response.status} after {attempt + 1} "
                        "attempt(s); the archive asks to slow down: lower [crawl] "
                        "archive_rate and resume the crawl"
                    )
                self._inc("webometrics/archive_retries")
                wait = retry_after(response)
                await _sleep(wait if wait is not None else self.backoff * 2**attempt)
                continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    # -- the answer ------------------------------------------------------------------------
    async def download_request(self, request: Request) -> Response:
        request.meta["dont_retry"] = True  # the archive's failures are retried here
        url = request.url
        try:
            if self.period.archive == "wayback":
                return await self._wayback(request, url)
            return await self._commoncrawl(request, url)
        except CdxError as exc:
            raise ArchiveUnavailableError(f"{self.period.archive} index: {exc}") from None

    def _no_capture(self, request: Request, memento: str) -> Response:
        self._inc("webometrics/archive_no_capture")
        headers = Headers()
        headers[ARCHIVE_HEADER] = self.period.archive
        headers[MEMENTO_HEADER] = memento
        headers[CAPTURE_HEADER] = "none"
        headers[b"Content-Type"] = "text/plain"
        return Response(request.url, status=404, headers=headers, body=b"", request=request)

    def _period_memento(self, prefix: str, url: str) -> str:
        """The memento-style URL of a URL without a capture: the period's days."""
        p = self.period
        return period_memento(prefix, p.cdx_from, p.cdx_to, normalize_url(url))

    def _capture(
        self,
        request: Request,
        status: int,
        headers: Headers,
        body: bytes,
        memento: str,
        timestamp: str,
    ) -> Response:
        self._inc("webometrics/archive_captures")
        out = Headers()
        for name, values in headers.items():
            if name.lower() not in _HOP_HEADERS:
                out.setlist(name, values)
        out[ARCHIVE_HEADER] = self.period.archive
        out[MEMENTO_HEADER] = memento
        out[DATETIME_HEADER] = http_date(timestamp_time(timestamp))
        cls = responsetypes.from_args(headers=out, url=request.url, body=body)
        return cls(request.url, status=status, headers=out, body=body, request=request)

    # -- the Wayback Machine -----------------------------------------------------------------
    async def _wayback(self, request: Request, url: str) -> Response:
        answer = await self.get(wayback_query(self.wayback, url, self.period), request)
        if answer.status == 404:
            rows: list[dict[str, str]] = []
        elif answer.status != 200:
            raise ArchiveUnavailableError(f"the CDX server answered HTTP {answer.status} for {url}")
        else:
            rows = parse_wayback(answer.body)
        row = choose(rows, self.period)
        if row is None:
            return self._no_capture(request, self._period_memento(self.wayback, url))
        timestamp = row["timestamp"]
        original = row.get("original") or url
        replay = memento_url(self.wayback, timestamp, original)
        for _ in range(MAX_ARCHIVE_REDIRECTS + 1):
            answer = await self.get(replay, request, {"Accept-Encoding": "gzip, identity"})
            location = answer.headers.get(b"Location")
            if answer.status not in (301, 302, 303, 307, 308) or not location:
                break
            target = unwrap_memento(location.decode("latin-1"))
            archived = answer.headers.get(DATETIME_HEADER) is not None
            if target is not None and not archived and _same(target[1], original):
                # the archive's own redirect to the capture it holds: follow it
                timestamp, replay = target[0], memento_url(self.wayback, *target)
                continue
            # an archived redirect: the spider follows it to the original target
            headers = answer.headers.copy()
            headers[b"Location"] = target[1] if target is not None else location
            memento = memento_url(self.wayback, timestamp, normalize_url(url))
            return self._capture(request, answer.status, headers, answer.body, memento, timestamp)
        else:
            raise ArchiveUnavailableError(f"{replay}: more than {MAX_ARCHIVE_REDIRECTS} redirects")
        if answer.status == 404 and answer.headers.get(DATETIME_HEADER) is None:
            # listed by the index, gone from the replay: no capture to read
            return self._no_capture(request, self._period_memento(self.wayback, url))
        memento = memento_url(self.wayback, timestamp, normalize_url(url))
        return self._capture(
            request, answer.status, answer.headers, answer.body, memento, timestamp
        )

    # -- Common Crawl ------------------------------------------------------------------------
    async def collections(self, request: Request) -> list[dict[str, Any]]:
        """The crawls of the period, nearest its middle first (collinfo.json, read once)."""
        if self._collections is None:
            import json

            answer = await self.get(f"{self.cc_index}/collinfo.json", request)
            if answer.status != 200:
                raise ArchiveUnavailableError(
                    f"{self.cc_index}/collinfo.json: HTTP {answer.status}"
                )
            try:
                info = json.loads(answer.body)
            except ValueError as exc:
                raise ArchiveUnavailableError(f"collinfo.json is not JSON: {exc}") from None
            self._collections = collections_in(info, self.period)
        return self._collections

    async def _commoncrawl(self, request: Request, url: str) -> Response:
        row = None
        coll: dict[str, Any] = {}
        for coll in await self.collections(request):
            answer = await self.get(commoncrawl_query(coll["cdx-api"], url, self.period), request)
            if answer.status == 404:  # "No Captures found"
                continue
            if answer.status != 200:
                raise ArchiveUnavailableError(f"{coll['cdx-api']} answered HTTP {answer.status}")
            row = choose(parse_commoncrawl(answer.body), self.period)
            if row is not None:
                break
        if row is None:
            return self._no_capture(request, self._period_memento(self.cc_index, url))
        timegate = str(coll.get("timegate") or f"{self.cc_index}/{coll['id']}/")
        return await self._warc_record(request, url, row, timegate)

    async def _warc_record(
        self, request: Request, url: str, row: dict[str, str], timegate: str
    ) -> Response:
        from core.exceptions import ConfigError
        from crawler.commoncrawl.captures import Capture
        from crawler.commoncrawl.fetch import parse_capture

        try:
            offset, length = int(row["offset"]), int(row["length"])
            capture = Capture(
                url=row["url"],
                timestamp=row["timestamp"],
                mime=row.get("mime"),
                mime_detected=row.get("mime-detected"),
                status=int(row["status"]) if row.get("status", "").isdigit() else None,
                digest=row.get("digest"),
                filename=row["filename"],
                offset=offset,
                length=length,
                index_file="cdx-api",
                where=f"index row of {url}",
            )
        except (KeyError, ValueError) as exc:
            raise ArchiveUnavailableError(f"an index row of {url} lacks {exc}") from None
        location = f"{self.cc_data}/{capture.filename.lstrip('/')}"
        answer = await self.get(
            location, request, {"Range": capture.byte_range, "Accept-Encoding": "identity"}
        )
        if answer.status != 206:
            raise ArchiveUnavailableError(
                f"{location} {capture.byte_range}: HTTP {answer.status}, not 206 Partial Content"
            )
        try:
            rec = parse_capture(answer.body[:length], capture, location)
        except ConfigError as exc:
            raise ArchiveUnavailableError(str(exc)) from None
        headers = Headers()
        for name, value in rec["headers"]:
            if name.lower() not in ("content-encoding", "transfer-encoding"):
                headers.appendlist(name, value)
        # pywb's replay URL form of the record in its crawl (the index server replays
        # nothing: it names the version; the index finds the record again)
        memento = f"{timegate.rstrip('/')}/{capture.timestamp}id_/{normalize_url(url)}"
        return self._capture(
            request, rec["status"], headers, rec["body"], memento, capture.timestamp
        )


def _same(a: str, b: str) -> bool:
    """True when two URLs are one (scheme and ``www.`` aside, as the archives key them)."""

    def key(u: str) -> str:
        n = normalize_url(u).split("://", 1)[-1]
        return n[4:] if n.startswith("www.") else n

    return key(a) == key(b)
