"""The captures an index lists, and which of them are kept.

A :class:`Capture` is one line (or row) of a Common Crawl URL index (see
:mod:`crawler.commoncrawl.index`): the URL, when it was captured, its media type and
status, and where its WARC record lies (file, offset, length).
:class:`CaptureSelector` keeps per wanted name (citing domain or host) the ``limit``
newest distinct URLs among the HTML captures that answered 200; :func:`capture_time`
reads a capture's timestamp.

Memory: ``limit`` captures per wanted name (at most twice that while adding).
"""

from __future__ import annotations

import datetime as dt
import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from core.choices import HTML_MEDIA_TYPES
from core.exceptions import ConfigError

#: media types kept as HTML pages
HTML_TYPES = HTML_MEDIA_TYPES


@dataclass(frozen=True, slots=True)
class Capture:
    """One capture listed by an index: where its WARC record lies, and what it was.

    ``where`` names the index file and line (or row) for messages; ``name`` is the wanted
    name (citing domain or host) the capture was found for.
    """

    url: str
    timestamp: str  # yyyymmddhhmmss
    mime: str | None
    mime_detected: str | None
    status: int | None
    digest: str | None
    filename: str
    offset: int
    length: int
    index_file: str
    where: str
    name: str = ""

    @property
    def byte_range(self) -> str:
        """The HTTP byte range of the record, ``bytes=first-last``."""
        return f"bytes={self.offset}-{self.offset + self.length - 1}"

    @property
    def collection(self) -> str | None:
        """The crawl (``CC-MAIN-2020-34``) named in the WARC file path, if any."""
        for part in self.filename.split("/"):
            if part.startswith("CC-MAIN-") and "." not in part:
                return part
        return None

    def is_page(self, mime_types: Iterable[str] = HTML_TYPES) -> bool:
        """True for a capture that answered 200 with one of ``mime_types`` (the detected
        type when the index has one, else the declared type).

        >>> c = Capture("http://a.org/", "20200101000000", "text/html", None, 200, None,
        ...             "f.warc.gz", 0, 10, "cdx", "cdx:1")
        >>> c.is_page(), c.is_page(["application/pdf"])
        (True, False)
        """
        if self.status != 200:
            return False
        mime = (self.mime_detected or self.mime or "").split(";", 1)[0].strip().lower()
        return mime in set(mime_types)


class CaptureSelector:
    """Per wanted name, the ``limit`` newest distinct URLs among the page captures.

    A URL counts once, with its newest capture; ties go to the smaller URL. Memory: at
    most ``2 * limit`` captures per name (the older ones are dropped as they fall out).

    >>> sel = CaptureSelector(limit=2)
    >>> def cap(url, ts):
    ...     return Capture(url, ts, "text/html", None, 200, None, "f", 0, 1, "i", "i:1",
    ...                    "a.org")
    >>> for url, ts in [("http://a.org/1", "2019"), ("http://a.org/2", "2020"),
    ...                 ("http://a.org/1", "2021"), ("http://a.org/3", "2018")]:
    ...     sel.add(cap(url, ts))
    >>> [(c.url, c.timestamp) for c in sel.chosen()["a.org"]]
    [('http://a.org/1', '2021'), ('http://a.org/2', '2020')]
    """

    def __init__(self, limit: int, mime_types: Iterable[str] = HTML_TYPES) -> None:
        if limit < 1:
            raise ConfigError(f"the limit per domain must be at least 1, not {limit}")
        self.limit = limit
        self.mime_types = tuple(mime_types)
        self._kept: dict[str, dict[str, Capture]] = {}
        self._floor: dict[str, tuple[str, str]] = {}
        self.seen = 0
        self.pages = 0

    def add(self, capture: Capture) -> None:
        self.seen += 1
        if not capture.is_page(self.mime_types):
            return
        self.pages += 1
        kept = self._kept.setdefault(capture.name, {})
        old = kept.get(capture.url)
        if old is not None:
            if capture.timestamp > old.timestamp:
                kept[capture.url] = capture
            return
        floor = self._floor.get(capture.name)
        if floor is not None and capture.timestamp < floor[0]:
            return  # ``limit`` URLs have newer captures already
        kept[capture.url] = capture
        if len(kept) > 2 * self.limit:
            best = self._best(kept.values())
            self._kept[capture.name] = {c.url: c for c in best}
            self._floor[capture.name] = (best[-1].timestamp, best[-1].url)

    def _best(self, captures: Iterable[Capture]) -> list[Capture]:
        return heapq.nsmallest(self.limit, captures, key=lambda c: (_neg(c.timestamp), c.url))

    def chosen(self) -> dict[str, list[Capture]]:
        """The chosen captures of every name, newest first."""
        return {name: self._best(kept.values()) for name, kept in sorted(self._kept.items())}


def _neg(timestamp: str) -> str:
    """A key that sorts digit strings in reverse order (newest first)."""
    return timestamp.translate(_REVERSE_DIGITS)


_REVERSE_DIGITS = str.maketrans("0123456789", "9876543210")


def capture_time(timestamp: str) -> dt.datetime | None:
    """A CDX timestamp as an aware datetime.

    >>> capture_time("20200808172741")
    datetime.datetime(2020, 8, 8, 17, 27, 41, tzinfo=datetime.timezone.utc)
    """
    try:
        return dt.datetime.strptime(timestamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    except ValueError:
        return None
