"""The items the spiders yield and the pipeline stores (plain dataclasses).

One :class:`PageItem` per request that ends (answer, error or refusal), carrying the links
of the page that are kept and, for citing pages, the check of each university it should
link to. :class:`PageErrorItem` marks pages already stored (the first hop of a redirect
loop). Field names follow :class:`store.models.Page`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LinkRecord:
    """A hyperlink of a page: target (absolute, fragment dropped), anchor text, nofollow,
    whether it leaves the source page's university (or, for external pages, points into
    a university), and where it was found (``Link.found_in``: ``html`` an ``<a>``/``<area>``
    of the fetched HTML; speculative: ``script`` a URL literal of a script, ``json`` a
    value of a JSON block; ``rendered`` only in the page's DOM after its scripts ran)."""

    target: str
    anchor: str
    nofollow: bool
    external: bool = True
    found_in: str = "html"


@dataclass(frozen=True)
class CitationCheck:
    """The check of one citing page against one university."""

    university_id: int
    citing_url: str
    source: str  # majestic | ahrefs | urls | crawl
    status: str  # verified | missing | error
    anchor: str | None = None
    target_url: str | None = None


@dataclass
class PageItem:
    """A fetched (or refused) URL with its HTTP facts and kept links."""

    url: str
    fingerprint: str | None
    role: str  # university | external | citing
    university_id: int | None
    depth: int | None = None
    http_status: int | None = None
    content_type: str | None = None
    charset: str | None = None
    body: bytes | None = None
    content_length: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    fetched_at: dt.datetime | None = None
    fetch_error: str | None = None
    redirect_to: str | None = None
    warc_file: str | None = None
    warc_offset: int | None = None
    # an archived page (crawler.archive.facts): ``url`` is then the memento URL
    archive: str | None = None
    original_url: str | None = None
    captured_at: dt.datetime | None = None
    capture_status: str | None = None
    links: list[LinkRecord] = field(default_factory=list)
    citations: list[CitationCheck] = field(default_factory=list)

    @property
    def error_kind(self) -> str | None:
        """The kind of the fetch error (``http_404``, ``robots``, ``timeout`` ...)."""
        return None if self.fetch_error is None else self.fetch_error.split(":", 1)[0]


@dataclass(frozen=True)
class PageErrorItem:
    """Set the fetch error of an already stored page (e.g. the start of a redirect loop)."""

    url: str
    fetch_error: str
