"""Scrapy's scheduler interface over :class:`crawler.frontier.Frontier`.

Requests carry their crawl facts in ``meta["wm"]`` (``kind``, ``depth``, ``budget``);
the fingerprint of Scrapy's request fingerprinter is the key of the seen set. See
:mod:`crawler.frontier` for the order and the crash safety.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.utils.request import request_from_dict

from crawler.frontier import DEFERRED, EXTERNAL, INTERNAL, Frontier, Gate, dumps, loads

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

log = logging.getLogger(__name__)

#: request kind (``meta["wm"]["kind"]``) -> frontier class
KIND_CLASS = {
    "internal": INTERNAL,
    "sitemap": INTERNAL,
    "external": EXTERNAL,
    "extra": EXTERNAL,
    "citing": EXTERNAL,
    "deferred": DEFERRED,
}


class FrontierScheduler:
    """A Scrapy scheduler (``SCHEDULER`` setting) on a crash-safe SQLite frontier.

    The frontier file is ``WEBOMETRICS_FRONTIER`` (a path in the job directory).
    """

    def __init__(self, crawler: Crawler, frontier: Frontier) -> None:
        self.crawler = crawler
        self.frontier = frontier
        self.stats = crawler.stats
        self.spider: Spider | None = None
        crawler.webometrics_frontier = frontier  # type: ignore[attr-defined]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        path = crawler.settings.get("WEBOMETRICS_FRONTIER")
        if not path:
            raise ValueError("WEBOMETRICS_FRONTIER (the frontier file) is not set")
        return cls(crawler, Frontier(path))

    def open(self, spider: Spider) -> None:
        self.spider = spider
        if self.frontier.resumed:
            log.info("resuming: %d requests queued", self.frontier.pending)

    def close(self, reason: str) -> None:
        self.frontier.close()

    def has_pending_requests(self) -> bool:
        return self.frontier.pending > 0

    def enqueue_request(self, request: Request) -> bool:
        wm: dict[str, Any] = request.meta.get("wm") or {}
        kind = wm.get("kind", "external")
        fp = self.crawler.request_fingerprinter.fingerprint(request).hex()  # type: ignore[union-attr]
        budget = wm.get("budget")
        result = self.frontier.add(
            fp,
            request.url,
            KIND_CLASS.get(kind, EXTERNAL),
            int(wm.get("depth") or 0),
            lambda: dumps(request.to_dict(spider=self.spider)),
            priority=request.priority,
            budget=tuple(budget) if budget else None,  # type: ignore[arg-type]
            dont_filter=request.dont_filter,
        )
        self.stats.inc_value(f"webometrics/scheduler/{result}")
        return result in ("added", "requeued", "upgraded")

    def _gate(self) -> Gate:
        slot = getattr(self.crawler.engine, "_slot", None)
        inprogress = getattr(slot, "inprogress", ())
        depths = [
            int(r.meta["wm"].get("depth") or 0)
            for r in inprogress
            if KIND_CLASS.get((r.meta.get("wm") or {}).get("kind", "")) == INTERNAL
        ]
        return Gate(internal_min_depth=min(depths) if depths else None)

    def next_request(self) -> Request | None:
        popped = self.frontier.pop(self._gate())
        if popped is None:
            return None
        fp, blob = popped
        request = request_from_dict(loads(blob), spider=self.spider)  # type: ignore[arg-type]
        request.meta["wm_fp"] = fp
        self.stats.inc_value("webometrics/scheduler/dequeued")
        return request

    def __len__(self) -> int:
        return self.frontier.pending
