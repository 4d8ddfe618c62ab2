"""The outgoing spider budgets an external site's extra pages by its site (web entity,
core.entities) under the rules the job carries: a platform user's pages are one site, an
analyst's split is one site, and a link to another site of the same host is not followed."""

from __future__ import annotations

from typing import Any

import scrapy
from scrapy.http import HtmlResponse

from core.settings import CrawlSettings
from crawler.spiders.outgoing import OutgoingSpider
from crawler.wiring import request_meta, wm_of


def _spider(site_rules: dict[str, Any] | None) -> OutgoingSpider:
    crawl = CrawlSettings().model_dump()
    crawl["external_pages_per_domain"] = 5
    job: dict[str, Any] = {
        "universities": [
            {"id": 1, "name": "SPbU", "domains": ["spbu.ru"], "start_urls": ["https://spbu.ru/"]}
        ],
        "crawl": crawl,
    }
    if site_rules is not None:
        job["site_rules"] = site_rules
    return OutgoingSpider(job)


def _extra(spider: OutgoingSpider, url: str, links: list[str]) -> dict[str, str]:
    """The extra pages the spider asks for from an external target page: URL -> budget."""
    body = "<html><body>" + "".join(f'<a href="{u}">x</a>' for u in links) + "</body></html>"
    request = scrapy.Request(url, meta=request_meta({"kind": "external", "uni": 1}))
    response = HtmlResponse(url, body=body.encode(), encoding="utf-8", request=request)
    return {
        r.url: wm_of(r)["budget"][0]
        for r in spider.parse_page(response)
        if isinstance(r, scrapy.Request) and wm_of(r).get("kind") == "extra"
    }


def test_a_platform_users_pages_are_one_budget() -> None:
    spider = _spider(None)
    got = _extra(
        spider,
        "http://ann.livejournal.com/1.html",
        [
            "http://ann.livejournal.com/2.html",
            "http://bob.livejournal.com/",
            "http://www.livejournal.com/",
        ],
    )
    assert got == {"http://ann.livejournal.com/2.html": "dann.livejournal.com"}
    got = _extra(
        spider,
        "http://www.geocities.com/Athens/1234/",
        ["http://www.geocities.com/Athens/1234/cv.html", "http://www.geocities.com/Paris/5678/"],
    )
    assert got == {"http://www.geocities.com/Athens/1234/cv.html": "dgeocities.com/athens/1234"}


def test_the_jobs_analyst_rules_decide_the_budget() -> None:
    links = ["https://vk.com/spbu/photos", "https://vk.com/id1"]
    plain = _extra(_spider(None), "https://vk.com/spbu", links)
    assert plain == {u: "dvk.com" for u in links}
    split = _extra(_spider({"splits": ["vk.com/spbu"], "merges": []}), "https://vk.com/spbu", links)
    assert split == {"https://vk.com/spbu/photos": "dvk.com/spbu"}
