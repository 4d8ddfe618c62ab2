"""The capture facts an archived answer carries, and the page item they make.

The download handler (:mod:`crawler.archive.handler`) answers a request for an original
URL with the capture's status, headers and body, plus three headers of its own, so the
facts survive wherever an answer is kept (the frontier's stored answers, WARC files):

=========================  ==========================================================
``X-Webometrics-Archive``  the archive read (``wayback`` or ``commoncrawl``)
``X-Webometrics-Memento``  the capture's memento URL (the page's stored ``url``); for a
                           URL without a capture, the period's memento-style URL
``X-Webometrics-Capture``  ``none`` when the archive holds no capture in the period
``Memento-Datetime``       when the capture was made (RFC 7089; the Wayback Machine
                           sends it, the handler adds it for Common Crawl)
=========================  ==========================================================

Examples
--------
>>> memento_url("https://web.archive.org/", "20150315120000", "http://www.x.edu/a")
'https://web.archive.org/web/20150315120000id_/http://www.x.edu/a'
>>> unwrap_memento("/web/20150315120000id_/http://www.x.edu/a?b=1")
('20150315120000', 'http://www.x.edu/a?b=1')
>>> unwrap_memento("http://www.x.edu/") is None
True
"""

from __future__ import annotations

import datetime as dt
import re
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

from core.archives import CAPTURED, NO_CAPTURE

ARCHIVE_HEADER = b"X-Webometrics-Archive"
MEMENTO_HEADER = b"X-Webometrics-Memento"
CAPTURE_HEADER = b"X-Webometrics-Capture"
DATETIME_HEADER = b"Memento-Datetime"

_MEMENTO = re.compile(r"/web/(\d{1,14})(?:[a-z]{2}_)?/(\w+:/.*)$")


def memento_url(replay_prefix: str, timestamp: str, url: str) -> str:
    """The raw (``id_``) replay URL of a capture below a replay prefix."""
    return f"{replay_prefix.rstrip('/')}/web/{timestamp}id_/{url}"


def unwrap_memento(location: str) -> tuple[str, str] | None:
    """(timestamp, original URL) of a Wayback replay URL (absolute or a path), or None
    for a URL outside the replay."""
    m = _MEMENTO.search(location)
    if m is None:
        return None
    original = m.group(2)
    if original.startswith(("http:/", "https:/")) and not original.split(":", 1)[1].startswith(
        "//"
    ):
        original = original.replace(":/", "://", 1)  # a slash folded by a proxy
    return m.group(1), original


def period_memento(prefix: str, start: str, end: str, url: str) -> str:
    """The memento-style URL that names a URL in a period without a capture read: the
    period's days (``YYYYMMDD-YYYYMMDD*``) in place of a timestamp.

    >>> period_memento("https://web.archive.org", "20150101000000", "20151231235959",
    ...                "http://x.edu/")
    'https://web.archive.org/web/20150101-20151231*/http://x.edu/'
    """
    return f"{prefix.rstrip('/')}/web/{start[:8]}-{end[:8]}*/{url}"


def failed_capture(item: Any, crawl: Any) -> None:
    """Key a failed request of an archived crawl (``[crawl] archive`` set) by its period's
    memento-style URL, so that it never touches the live page of the same URL."""
    period = crawl.archive_period()
    if period is None:
        return
    from core.domains import normalize_url

    prefix = crawl.wayback_url if period.archive == "wayback" else crawl.commoncrawl_index_url
    item.archive = period.archive
    item.original_url = item.url
    item.url = period_memento(prefix, period.cdx_from, period.cdx_to, normalize_url(item.url))


def http_date(moment: dt.datetime) -> str:
    """An aware datetime as an HTTP date (``Memento-Datetime``)."""
    return format_datetime(moment.astimezone(dt.UTC), usegmt=True)


def _header(response: Any, name: bytes) -> str | None:
    raw = response.headers.get(name)
    return raw.decode("latin-1").strip() if raw else None


def apply_capture(item: Any, response: Any) -> None:
    """Give a page item the capture facts of its answer (nothing for a live answer).

    The item's ``url`` becomes the memento URL (one row per version of a URL) and its
    ``original_url`` the URL asked for; an answer without a capture is stored with
    ``capture_status`` ``no_capture`` and no HTTP status, and is no fetch error.
    """
    archive = _header(response, ARCHIVE_HEADER)
    if not archive:
        return
    item.archive = archive
    item.original_url = item.url
    item.url = _header(response, MEMENTO_HEADER) or item.url
    if (_header(response, CAPTURE_HEADER) or "").lower() == "none":
        item.capture_status = NO_CAPTURE
        item.http_status = None
        item.fetch_error = None
        item.body = None
        item.content_length = None
        item.content_type = None
        item.charset = None
        return
    item.capture_status = CAPTURED
    when = _header(response, DATETIME_HEADER)
    if when:
        try:
            item.captured_at = parsedate_to_datetime(when).astimezone(dt.UTC)
        except (TypeError, ValueError):
            item.captured_at = None
