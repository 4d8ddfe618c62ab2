"""The citing spider: fetch each page said to link to a university.

Candidates come from a backlink export, a URL list or links found in stored pages
(:mod:`crawler.sources`); the job lists them with the university each should cite. Each
page is fetched once (redirects followed hop by hop) and stored with its links into the
crawled universities. Whether a page still links to its university (``verified``),
no longer does (``missing``) or could not be fetched (``error``) is decided from the
stored pages and links after the crawl (:func:`crawler.storage.resolve_citations`), so
candidates already fetched by the outgoing crawl of the same job are not fetched again.

Time and memory: linear in the candidates.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from crawler.links import page_links
from crawler.spiders.base import BaseSpider
from crawler.wiring import WmMeta, wm_of


class CitingSpider(BaseSpider):
    """Fetch the citing candidates of the job."""

    name = "citing"

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for cand in self.job.get("candidates", ()):
            yield self.make_request(cand["url"], {"kind": "citing", "uni": cand.get("uni")})

    def parse_page(self, response: Response) -> Iterator[Any]:
        wm = wm_of(response)
        item = self.page_item(response)
        if self.is_redirect(response):
            hop: WmMeta = {"kind": "citing", "uni": wm.get("uni")}
            yield from self.follow_redirect(response, item, lambda _target: hop.copy())
            return
        if item.fetch_error is None:
            owner = self.universities.owner(response.url)
            for link in page_links(response):
                linked = self.universities.owner(link.target)
                if linked is not None and linked is not owner:
                    item.links.append(link)
        yield item
