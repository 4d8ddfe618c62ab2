"""The outgoing spider: a university's own site and the external pages it links to.

From each university's start pages and the pages of the sitemaps its hosts' robots.txt
files name (seeds at depth 0, like the start pages) the spider crawls within the
university's registered domains, subdomains included, breadth-first to ``[crawl] depth``
and at most ``[crawl] max_pages_per_university`` requests. Every link
of a crawled page that leaves the university is stored (source, target, anchor,
nofollow); each distinct target is fetched once, and up to ``[crawl]
external_pages_per_domain`` more pages of each external domain (linked from its fetched
pages) for that domain's document. A target inside another crawled university is fetched
only if that university's own crawl does not reach it (see :mod:`crawler.frontier`).
External pages keep only their links into the crawled universities (the citing evidence).

Time and memory: linear in the pages fetched; the frontier holds one row per request.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import scrapy
from scrapy import signals
from scrapy.http import Response, TextResponse

from core.domains import normalize_url
from core.settings import CrawlSettings
from crawler.items import LinkRecord, PageItem
from crawler.links import page_links, sitemap_urls
from crawler.script_links import linked_scripts
from crawler.spiders.base import BaseSpider, UniversityInfo
from crawler.traps import PageVerdict, TrapGuard, TrapRules, memory_for
from crawler.wiring import WmMeta, level_of, wm_of


class OutgoingSpider(BaseSpider):
    """The outgoing environment of every university of the job."""

    name = "outgoing"

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> OutgoingSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.robots_parsed, signal=signals.robots_parsed)
        return spider

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for uni in self.universities.all:
            for url in uni.start_urls:
                yield self.internal(url, uni, 0)

    # -- requests ------------------------------------------------------------------------------
    def internal(
        self,
        url: str,
        uni: UniversityInfo,
        depth: int,
        pos: int = 0,
        src: str = "",
        priority: int = 0,
    ) -> scrapy.Request:
        """A page of the university at ``depth``, linked at place ``pos`` of page ``src``
        (counts against its page budget). A link the trap guard demoted (``priority``
        below 0) waits one level: it competes for the budget with the pages one link
        deeper, after them (:mod:`crawler.frontier`)."""
        wm: WmMeta = {
            "kind": "internal",
            "uni": uni.id,
            "depth": depth,
            "budget": (f"u{uni.id}", self.max_pages),
            "pos": pos,
            "src": src,
        }
        if priority < 0:
            wm["level"] = depth + 1
        return self.make_request(url, wm, priority=priority)

    def target(self, url: str, uni: UniversityInfo) -> scrapy.Request:
        """An external link target of the university (fetched once, no budget)."""
        kind = "deferred" if self.universities.owner(url) is not None else "external"
        return self.make_request(url, {"kind": kind, "uni": uni.id})

    def extra(
        self, url: str, uni_id: int, domain: str, hop: int, pos: int, src: str
    ) -> scrapy.Request:
        """One more page of an external domain, ``hop`` links from a target of the domain,
        linked at place ``pos`` of page ``src`` (counts against the domain's budget; see
        :mod:`crawler.frontier` for the order)."""
        wm: WmMeta = {
            "kind": "extra",
            "uni": uni_id,
            "depth": hop,
            "budget": (f"d{domain}", self.extra_pages),
            "pos": pos,
            "src": src,
        }
        return self.make_request(url, wm, priority=-1)

    def hop(self, wm: WmMeta) -> Callable[[str], WmMeta]:
        """The crawl facts of the next hop of a redirect chain, given its target."""

        def next_wm(target: str) -> WmMeta:
            kind = wm.get("kind")
            uni = self.universities.get(wm.get("uni"))
            if kind in ("internal", "sitemap") and uni is not None:
                if uni.owns(target):
                    same = wm.copy()
                    same.pop("chain", None)
                    return same
                owner = self.universities.owner(target)
                return {"kind": "deferred" if owner else "external", "uni": uni.id}
            outside: WmMeta = {"uni": wm.get("uni")}
            if kind is not None:
                outside["kind"] = "external" if kind == "extra" else kind
            return outside

        return next_wm

    def robots_parsed(self, robotparser: Any, request: scrapy.Request) -> None:
        """Schedule the sitemaps a university host's robots.txt names."""
        if not self.follow_sitemaps:
            return
        wm = wm_of(request)
        if wm.get("kind") != "internal":
            return
        uni = self.universities.get(wm.get("uni"))
        if uni is None or not uni.owns(request.url):
            return
        rp = getattr(robotparser, "rp", None)
        for sitemap in list(getattr(rp, "sitemaps", ()) or ()):
            if uni.owns(sitemap):
                wm_sitemap: WmMeta = {"kind": "sitemap", "uni": uni.id, "depth": 0}
                self.crawler.engine.crawl(self.make_request(sitemap, wm_sitemap))

    # -- answers -------------------------------------------------------------------------------
    def parse_page(self, response: Response) -> Iterator[Any]:
        wm = wm_of(response)
        item = self.page_item(response)
        if self.is_redirect(response):
            yield from self.follow_redirect(response, item, self.hop(wm))
            return
        if item.fetch_error is not None:
            yield item
            return
        kind = wm.get("kind")
        uni = self.universities.get(wm.get("uni"))
        if kind == "sitemap" and uni is not None:
            yield from self._sitemap(response, uni, wm)
            yield item
            return
        owner = self.universities.owner(response.url)
        speculative = self.script_links
        links = page_links(response, speculative=speculative)
        if kind == "internal" and uni is not None and owner is uni:
            depth = int(wm.get("depth") or 0)
            verdict = self._judge_page(response, uni, links, item)
            if speculative and depth < self.max_depth and verdict.reason is None:
                # the site's scripts, for their URLs: admitted as its links are
                for pos, url in enumerate(linked_scripts(response), len(links)):
                    yield from self._internal_link(
                        url, uni, depth + 1, pos, response, verdict.productive
                    )
            for pos, link in enumerate(links):
                if uni.owns(link.target):
                    if depth < self.max_depth and verdict.reason is None:
                        yield from self._internal_link(
                            link.target, uni, depth + 1, pos, response, verdict.productive
                        )
                else:
                    item.links.append(link)
                    yield self.target(link.target, uni)
        else:
            domain = self.sites.key(response.url)
            grow = kind in ("external", "extra") and owner is None and self.extra_pages > 0
            hop = int(wm.get("depth") or 0) + 1 if kind == "extra" else 1
            uni_id = int(wm.get("uni") or 0)
            here = normalize_url(response.url)
            for pos, link in enumerate(links):
                linked = self.universities.owner(link.target)
                if linked is not None and linked is not owner:
                    item.links.append(link)
                elif (
                    grow
                    and linked is None
                    and self.sites.key(link.target) == domain
                    and normalize_url(link.target) != here
                ):
                    yield self.extra(link.target, uni_id, domain, hop, pos, response.url)
        yield item

    # -- crawler traps (crawler.traps) -------------------------------------------------------
    @property
    def traps(self) -> TrapGuard:
        """The crawl's trap guard, its memory beside the running crawl's frontier."""
        guard: TrapGuard | None = getattr(self, "_traps", None)
        if guard is None:
            rules = TrapRules.from_crawl(CrawlSettings.model_validate(self.job["crawl"]))
            guard = self._traps = TrapGuard(rules, memory_for(self.frontier))
        return guard

    def _judge_page(
        self, response: Response, uni: UniversityInfo, links: list[LinkRecord], item: PageItem
    ) -> PageVerdict:
        """Learn from a university page; a verdict with a reason when its links are not
        to be followed (a soft 404 or a copy, recorded as the page's error)."""
        if not self.traps.rules.enabled:
            return PageVerdict()
        internal = [link.target for link in links if uni.owns(link.target)]
        domains = sorted({self.sites.key(link.target) for link in links} - set(uni.domains))
        text = " ".join(
            response.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]")
            .getall()
        ) if isinstance(response, TextResponse) else ""  # fmt: skip
        wm = wm_of(response)
        depth = int(wm.get("depth") or 0)
        verdict = self.traps.parsed(
            f"u{uni.id}", response.url, internal, domains, text, depth, level_of(wm)
        )
        if verdict.reason is not None:
            item.fetch_error = verdict.reason
            self.crawler.stats.inc_value("webometrics/traps/soft_404")
        return verdict

    def _internal_link(
        self,
        url: str,
        uni: UniversityInfo,
        depth: int,
        pos: int,
        response: Response,
        productive: bool,
    ) -> Iterator[Any]:
        """The request for an internal link, or, for a trap, the record of its skip: the
        one admission path of every internal request but the start pages (links of the
        page's HTML, URL literals of its scripts and JSON blocks, links of its rendered
        DOM, the site's linked scripts and the pages its sitemaps list): the trap guard's
        verdict, its priority and level, then the frontier's page budget."""
        verdict = self.traps.admit(
            url, f"u{uni.id}", productive, response.url, level_of(wm_of(response))
        )
        if verdict.reason is None:
            yield self.internal(url, uni, depth, pos, response.url, verdict.priority)
            return
        kind = verdict.reason.split(":", 2)[1].strip()
        self.crawler.stats.inc_value(f"webometrics/traps/{kind}")
        if self.traps.first_report(url):
            # no depth: the pages with one are the requests of the university's crawl
            yield PageItem(
                url=url,
                fingerprint=None,
                role="university",
                university_id=uni.id,
                fetched_at=dt.datetime.now(dt.UTC),
                fetch_error=f"{verdict.reason} (linked at depth {depth})"[:2000],
            )

    def _sitemap(
        self, response: Response, uni: UniversityInfo, wm: WmMeta
    ) -> Iterator[scrapy.Request]:
        pages, nested = sitemap_urls(response)
        for url in nested:
            if uni.owns(url):
                yield self.make_request(url, {"kind": "sitemap", "uni": uni.id, "depth": 0})
        for url in pages:  # sitemap pages are seeds, like the start pages
            if uni.owns(url):
                yield from self._internal_link(url, uni, 0, 0, response, True)
