"""Bounded response bodies, whatever the settings: on the wire and after decompression.

``[crawl] max_response_bytes`` caps a response body;
:data:`core.defaults.CRAWL_MAX_RESPONSE_BYTES_CEILING` caps that setting (the settings
refuse a larger value) and is enforced here again, so a value that bypassed validation, a
request's ``download_maxsize`` meta key or ``0`` ("no limit" to Scrapy) never lets a body
grow past it:

* :class:`BodySizeGuard` counts the bytes of each response as they arrive (the
  ``bytes_received`` signal) and stops a download past the cap with
  :class:`ResponseTooLarge`. Scrapy itself refuses an announced ``Content-Length`` over the
  cap, but a chunked body (no length) it cancels, and the page would be recorded as
  ``cancelled``; stopped here it is recorded as ``too_large``.
* :class:`BoundedDecompressionMiddleware` replaces Scrapy's ``HttpCompressionMiddleware``:
  it decompresses at most the cap (a gzip bomb of 1 MB that inflates to 1 GB stops at the
  cap, read in chunks) and refuses the response with :class:`ResponseTooLarge`.

Memory per response is O(cap): the compressed body plus at most the cap decompressed.

Examples
--------
>>> body_limit(3 * 1024**3)  # a value over the ceiling is cut to it
67108864
>>> body_limit(0), body_limit(4096)
(67108864, 4096)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.utils._compression import _DecompressionMaxSizeExceeded

from core.defaults import CRAWL_MAX_RESPONSE_BYTES_CEILING

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

_RECEIVED = "webometrics_bytes_received"


def body_limit(limit: int | None) -> int:
    """The effective cap of a body: ``limit`` within ``(0, ceiling]``, else the ceiling."""
    if not limit or limit <= 0 or limit > CRAWL_MAX_RESPONSE_BYTES_CEILING:
        return CRAWL_MAX_RESPONSE_BYTES_CEILING
    return int(limit)


class ResponseTooLarge(StopDownload, IgnoreRequest):
    """A body over the cap (on the wire or decompressed); its text is the page's
    ``fetch_error`` (``too_large: ...``)."""

    def __init__(self, text: str) -> None:
        StopDownload.__init__(self, fail=True)
        self.text = text

    def __str__(self) -> str:
        return self.text


class BodySizeGuard:
    """Stops a download whose body passes the cap while it arrives (chunked bodies too).

    Parameters
    ----------
    limit : int
        ``DOWNLOAD_MAXSIZE``, bounded by the ceiling (:func:`body_limit`).
    """

    def __init__(self, limit: int) -> None:
        self.limit = body_limit(limit)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BodySizeGuard:
        guard = cls(crawler.settings.getint("DOWNLOAD_MAXSIZE"))
        crawler.signals.connect(guard.bytes_received, signal=signals.bytes_received)
        return guard

    def bytes_received(self, data: bytes, request: Request, spider: Any) -> None:
        received = request.meta.get(_RECEIVED, 0) + len(data)
        request.meta[_RECEIVED] = received
        limit = body_limit(request.meta.get("download_maxsize", self.limit))
        if received > limit:
            raise ResponseTooLarge(
                f"too_large: received {received:,} bytes, over the cap of {limit:,} "
                "([crawl] max_response_bytes); the body was not kept"
            )


class BoundedDecompressionMiddleware(HttpCompressionMiddleware):
    """Scrapy's ``HttpCompressionMiddleware`` with the cap bounded by the ceiling and a
    refusal recorded as ``too_large``."""

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Request | Response:
        limit = body_limit(request.meta.get("download_maxsize", self._max_size))
        request.meta["download_maxsize"] = limit
        self._max_size = body_limit(self._max_size)
        try:
            return super().process_response(request, response)
        except IgnoreRequest as exc:
            cause = exc.__cause__
            if not isinstance(cause, _DecompressionMaxSizeExceeded):
                raise
            raise ResponseTooLarge(
                f"too_large: {len(response.body):,} bytes compressed inflate to more than "
                f"the cap of {limit:,} bytes ([crawl] max_response_bytes; a compression "
                "bomb?); the body was not kept"
            ) from cause
