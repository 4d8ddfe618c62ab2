"""What both spiders share: the universities' domains, page items, redirects, errors.

Every request the spiders make ends in exactly one :class:`~crawler.items.PageItem`
(an answer, an error or a refusal), so the pipeline can tell the frontier when the page
is stored. Redirects are followed here, hop by hop: each hop is its own request (checked
by the safety rules and robots.txt, deduplicated), its page is stored with its 3xx status,
and a chain that comes back to one of its URLs or grows past ``[crawl] max_redirects`` is
recorded as ``redirect_loop`` / ``too_many_redirects`` on its pages.

Fetch errors are stored as ``"<kind>: <detail>"`` in ``Page.fetch_error``; the kinds are
listed in :mod:`crawler.errors`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin

import scrapy
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure
from w3lib.url import safe_url_string

from core.choices import is_text_media_type
from core.domains import host_of, in_domains, normalize_url
from core.entities import SiteRules
from core.session_ids import strip_session_ids
from core.settings import CrawlSettings
from crawler.archive.facts import apply_capture, failed_capture
from crawler.errors import classify_failure
from crawler.items import PageErrorItem, PageItem
from crawler.links import content_type
from crawler.outage import OUTAGE
from crawler.wiring import Frontier, WmMeta, frontier_of, request_meta, wm_of

_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class UniversityInfo:
    """A university as the spiders see it."""

    id: int
    name: str
    domains: frozenset[str]
    start_urls: tuple[str, ...]

    def owns(self, url: str) -> bool:
        """True when the URL's host is in one of the university's domains."""
        return in_domains(host_of(url), self.domains)


class Universities:
    """The crawled universities, looked up by id and by URL."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.all = [
            UniversityInfo(
                id=int(r["id"]),
                name=r["name"],
                domains=frozenset(d.lower() for d in r["domains"]),
                start_urls=tuple(r.get("start_urls") or ()),
            )
            for r in rows
        ]
        self.by_id = {u.id: u for u in self.all}
        self._by_domain = {d: u for u in self.all for d in u.domains}

    def get(self, uni_id: int | None) -> UniversityInfo | None:
        """The university with id ``uni_id`` (None for an unknown id or None)."""
        return None if uni_id is None else self.by_id.get(uni_id)

    def owner(self, url: str) -> UniversityInfo | None:
        """The university whose domains hold the URL's host, or None."""
        host = host_of(url)
        while host:
            u = self._by_domain.get(host)
            if u is not None:
                return u
            if "." not in host:
                return None
            host = host.split(".", 1)[1]
        return None


def _header(response: Response, name: bytes, limit: int) -> str | None:
    raw = response.headers.get(name)
    if not raw:
        return None
    return raw.decode("latin-1")[:limit]


def charset_of(response: Response, ctype: str | None) -> str | None:
    """The declared encoding (header, BOM or ``<meta>``), else the one Scrapy infers from
    a non-empty text body; None for binary or empty answers."""
    if not isinstance(response, TextResponse) or not is_text_media_type(ctype):
        return None
    declared = response._declared_encoding()  # private in Scrapy, but the only way
    if declared:
        return declared[:50]
    return response.encoding[:50] if response.body else None


class BaseSpider(scrapy.Spider):
    """Shared behaviour of the outgoing and citing spiders.

    Parameters
    ----------
    job : dict
        The job description written by :mod:`webometrics.stages.crawl`: ``universities``
        (id, name, domains, start_urls), ``crawl`` (the ``[crawl]`` section, read once
        into the attributes below) and the direction's own keys.

    Attributes
    ----------
    max_depth : int
        ``[crawl] depth``.
    max_pages : int
        ``[crawl] max_pages_per_university``.
    extra_pages : int
        ``[crawl] external_pages_per_domain``.
    max_redirects : int
        ``[crawl] max_redirects``.
    follow_sitemaps : bool
        ``[crawl] sitemaps``.
    script_links : bool
        ``[crawl] script_links`` (:mod:`crawler.script_links`).
    sites : SiteRules
        The web-entity rules (:mod:`core.entities`) of the job's ``site_rules``.
    """

    role = "external"

    def __init__(self, job: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.job = job
        self.universities = Universities(job["universities"])
        crawl = CrawlSettings.model_validate(job["crawl"])
        self.crawl = crawl
        self.max_depth: int = crawl.depth
        self.max_pages: int = crawl.max_pages_per_university
        self.extra_pages: int = crawl.external_pages_per_domain
        self.max_redirects: int = crawl.max_redirects
        self.follow_sitemaps: bool = crawl.sitemaps
        self.script_links: bool = crawl.script_links
        # the sites (web entities) external pages are budgeted by: the platform rules and
        # the analysts' rules the job carries (core.entities)
        self.sites = SiteRules.default().with_analyst(**(job.get("site_rules") or {}))

    def parse_page(self, response: Response) -> Iterator[Any]:
        """The callback of every request (each spider defines it)."""
        raise NotImplementedError

    # -- requests --------------------------------------------------------------------------
    def make_request(self, url: str, wm: WmMeta, *, priority: int = 0) -> scrapy.Request:
        """A request with the crawl facts ``wm`` whose answer goes to :meth:`parse_page` and
        failure to :meth:`on_error`."""
        return scrapy.Request(
            url,
            callback=self.parse_page,
            errback=self.on_error,
            meta=request_meta(wm),
            priority=priority,
        )

    @property
    def frontier(self) -> Frontier | None:
        """The running crawl's frontier (:func:`crawler.wiring.frontier_of`)."""
        return frontier_of(self.crawler)

    # -- items -------------------------------------------------------------------------------
    def page_item(self, response: Response) -> PageItem:
        """The page item of an answer: HTTP facts and the body (text types only)."""
        wm = wm_of(response)
        ctype = content_type(response)
        owner = self.universities.owner(response.url)
        item = PageItem(
            url=response.url,
            fingerprint=response.meta.get("wm_fp"),
            role="university" if owner is not None else self.role_of(wm),
            university_id=owner.id if owner is not None else wm.get("uni"),
            depth=wm.get("depth") if wm.get("kind") == "internal" else None,
            http_status=response.status,
            content_type=_header(response, b"Content-Type", 200),
            charset=charset_of(response, ctype),
            body=response.body if is_text_media_type(ctype) else None,
            content_length=len(response.body),
            etag=_header(response, b"ETag", 300),
            last_modified=_header(response, b"Last-Modified", 100),
            fetched_at=dt.datetime.now(dt.UTC),
        )
        warc = response.meta.get("wm_warc")
        if warc:
            item.warc_file, item.warc_offset = warc
        if not 200 <= response.status < 300 and response.status not in _REDIRECTS:
            reason = _http_reason(response.status)
            item.fetch_error = f"http_{response.status}: {reason}"
        apply_capture(item, response)  # an archived answer (crawler.archive.facts)
        return item

    def role_of(self, wm: WmMeta) -> str:
        """The role of a page outside every crawled university."""
        return "citing" if wm.get("kind") == "citing" else "external"

    def on_error(self, failure: Failure) -> Iterator[PageItem]:
        """A failed or refused request: one page item with the error and its reason."""
        request = failure.request  # type: ignore[attr-defined]
        if request.meta.get(OUTAGE):  # the network went away: fetched again on resume
            return
        wm = wm_of(request)
        owner = self.universities.owner(request.url)
        item = PageItem(
            url=request.url,
            fingerprint=request.meta.get("wm_fp"),
            role="university" if owner is not None else self.role_of(wm),
            university_id=owner.id if owner is not None else wm.get("uni"),
            depth=wm.get("depth") if wm.get("kind") == "internal" else None,
            fetched_at=dt.datetime.now(dt.UTC),
            fetch_error=classify_failure(failure)[:2000],
        )
        failed_capture(item, self.crawl)  # an archived crawl's failure: its own row
        yield item

    # -- redirects ---------------------------------------------------------------------------
    def is_redirect(self, response: Response) -> bool:
        return response.status in _REDIRECTS

    def follow_redirect(
        self, response: Response, item: PageItem, next_wm: Callable[[str], WmMeta]
    ) -> Iterator[Any]:
        """Store the hop and request the next one (or record why the chain ends).

        ``next_wm(target)`` gives the crawl facts of the next hop's request.
        """
        wm = wm_of(response)
        location = response.headers.get(b"Location")
        if not location:
            item.fetch_error = f"bad_redirect: {response.status} without a Location header"
            yield item
            return
        raw = urldefrag(urljoin(response.url, safe_url_string(location.decode("latin-1").strip())))[
            0
        ]
        target = strip_session_ids(raw)
        if target != raw and normalize_url(target) == normalize_url(response.url):
            target = raw  # a server that redirects to hand out its session id (Tomcat)
        chain = [*wm.get("chain", ()), response.url]
        item.redirect_to = target
        frontier = self.frontier
        if frontier is not None:
            frontier.record_redirect(normalize_url(response.url), target)
        seen = {normalize_url(u) for u in chain}
        problem = None
        if normalize_url(target) in seen:
            problem = "redirect_loop: " + " -> ".join([*chain, target])
        elif len(chain) > self.max_redirects:
            problem = f"too_many_redirects: more than {self.max_redirects} hops from {chain[0]}"
        if problem is not None:
            item.fetch_error = problem[:2000]
            yield item
            if self.crawl.archive is None:  # archived hops are keyed by their captures
                for url in chain[:-1]:
                    yield PageErrorItem(url=url, fetch_error=item.fetch_error)
            return
        # the next hop first: a page item comes last from its callback (a crawl farm
        # takes it as the sign that the page's requests are queued)
        hop = next_wm(target).copy()
        hop["chain"] = chain
        yield self.make_request(target, hop)
        yield item


def _http_reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "HTTP error"
