"""Scrapy's scheduler interface over :class:`crawler.frontier.SQLiteFrontier`.

Requests carry their crawl facts in ``meta["wm"]`` (:class:`crawler.wiring.WmMeta`:
``kind``, ``depth``, ``level``, ``budget``); the fingerprint of Scrapy's request
fingerprinter is the key of the seen set. See :mod:`crawler.frontier` for the order and
the crash safety.

Politeness-aware order: Scrapy's downloader counts a request waiting in a host's slot
(for its download delay or per-host concurrency) against ``CONCURRENT_REQUESTS``, so a
scheduler that hands out many requests for a few slow-paced hosts fills the downloader
and starves every other host. The scheduler therefore passes over requests for hosts
whose slot already has requests waiting (``Gate.busy``).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.utils.request import request_from_dict

from core import defaults as D
from crawler.frontier import DEFERRED, EXTERNAL, EXTRA, INTERNAL, Gate, SQLiteFrontier, dumps, loads
from crawler.wiring import FrontierOwner, level_of, wm_of

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

log = logging.getLogger(__name__)

#: seconds the set of busy downloader slots is reused between scheduler calls
BUSY_TTL = 0.02

#: request kind (``meta["wm"]["kind"]``) -> frontier class
KIND_CLASS = {
    "internal": INTERNAL,
    "sitemap": INTERNAL,
    "external": EXTERNAL,
    "extra": EXTRA,
    "citing": EXTERNAL,
    "deferred": DEFERRED,
}


def _method_name(spider: Any, func: Any) -> Any:
    """The name of a spider method (``Request.to_dict`` finds it with inspect.getmembers,
    a tenth of a millisecond per request); other callables go through Scrapy's way."""
    name = getattr(func, "__name__", None)
    if name and getattr(func, "__self__", None) is spider:
        return name
    return None


def request_dict(request: Request, spider: Any) -> dict[str, Any]:
    """``request.to_dict(spider=spider)``, fast for callbacks that are spider methods."""
    cb = request.callback
    eb = request.errback
    cb_name = _method_name(spider, cb) if callable(cb) else cb
    eb_name = _method_name(spider, eb) if callable(eb) else eb
    if (callable(cb) and cb_name is None) or (callable(eb) and eb_name is None):
        return request.to_dict(spider=spider)
    d: dict[str, Any] = {
        "url": request.url,
        "callback": cb_name,
        "errback": eb_name,
        "headers": dict(request.headers),
    }
    for attr in request.attributes:
        d.setdefault(attr, getattr(request, attr))
    if type(request).__name__ != "Request" or type(request).__module__ != "scrapy.http.request":
        d["_class"] = f"{type(request).__module__}.{type(request).__name__}"
    return d


def add_request(frontier: Any, crawler: Crawler, request: Request, spider: Any) -> str:
    """Store a request in a frontier (:class:`~crawler.frontier.SQLiteFrontier` or
    :class:`~crawler.redis_frontier.RedisFrontier`) with its crawl facts from
    ``meta["wm"]``; return the frontier's answer (``added``, ``duplicate``, ...)."""
    wm = wm_of(request)
    budget = wm.get("budget")
    cls = KIND_CLASS.get(wm.get("kind", "external"), EXTERNAL)
    if cls == EXTRA and not frontier.fixed_budgets:
        cls = EXTERNAL  # first come, first served: with the targets
    return frontier.add(  # type: ignore[no-any-return]
        crawler.request_fingerprinter.fingerprint(request).hex(),  # type: ignore[union-attr]
        request.url,
        cls,
        level_of(wm),
        lambda: dumps(request_dict(request, spider)),
        priority=request.priority,
        budget=tuple(budget) if budget else None,
        dont_filter=request.dont_filter,
        position=int(wm.get("pos") or 0),
        source=str(wm.get("src") or ""),
    )


def pop_request(frontier: Any, gate: Gate, spider: Any) -> Request | None:
    """The frontier's next request, rebuilt, with its fingerprint in ``meta["wm_fp"]``."""
    popped = frontier.pop(gate)
    if popped is None:
        return None
    fp, blob = popped
    request = request_from_dict(loads(blob), spider=spider)
    request.meta["wm_fp"] = fp
    return request


def busy_hosts(crawler: Crawler, cached: frozenset[str], at: float) -> tuple[frozenset[str], float]:
    """The hosts whose downloader slot already holds waiting requests, and when that was
    looked at (the previous answer is reused for :data:`BUSY_TTL` seconds: the engine asks
    many times in a row)."""
    now = time.monotonic()
    if now - at <= BUSY_TTL:
        return cached, at
    slots = getattr(getattr(crawler.engine, "downloader", None), "slots", {})
    busy = frozenset(
        key
        for key, slot in slots.items()
        if slot.queue or len(slot.transferring) >= slot.concurrency
    )
    return busy, now


def in_progress_gate(engine: Any, busy: frozenset[str]) -> Gate:
    """The :class:`~crawler.frontier.Gate` of the requests the engine has in progress
    (sent, or answered and not yet through their callback). Requests without crawl facts
    (robots.txt files, which the middleware fetches for a request that waits for them)
    are not counted."""
    inprogress = getattr(getattr(engine, "_slot", None), "inprogress", ())
    internal: list[int] = []
    extra: list[int] = []
    external = False
    for request in inprogress:
        wm = wm_of(request)
        if not wm:
            continue
        cls = KIND_CLASS.get(wm.get("kind", "external"), EXTERNAL)
        if cls == INTERNAL:
            internal.append(level_of(wm))
        elif cls == EXTRA:
            extra.append(int(wm.get("depth") or 0))
        elif cls == EXTERNAL:
            external = True
    return Gate(
        internal_min_depth=min(internal, default=None),
        external_busy=external,
        extra_min_depth=min(extra, default=None),
        busy=busy,
    )


class SQLiteScheduler(FrontierOwner):
    """A Scrapy scheduler (``SCHEDULER`` setting) on a crash-safe SQLite frontier.

    The frontier file is ``WEBOMETRICS_FRONTIER`` (a path in the job directory).
    """

    frontier: SQLiteFrontier

    def __init__(self, crawler: Crawler, frontier: SQLiteFrontier) -> None:
        self.crawler = crawler
        self.frontier = frontier
        self.stats = crawler.stats
        self.spider: Spider | None = None
        self._busy: frozenset[str] = frozenset()
        self._busy_at = 0.0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SQLiteScheduler:
        path = crawler.settings.get("WEBOMETRICS_FRONTIER")
        if not path:
            raise ValueError("WEBOMETRICS_FRONTIER (the frontier file) is not set")
        fixed = crawler.settings.getbool("WEBOMETRICS_FIXED_BUDGETS", D.CRAWL_FIXED_BUDGETS)
        return cls(crawler, SQLiteFrontier(path, fixed_budgets=fixed))

    def open(self, spider: Spider) -> None:
        self.spider = spider
        if self.frontier.resumed:
            log.info("resuming: %d requests queued", self.frontier.pending)

    def close(self, reason: str) -> None:
        self.frontier.close()

    def has_pending_requests(self) -> bool:
        return self.frontier.pending > 0

    def enqueue_request(self, request: Request) -> bool:
        result = add_request(self.frontier, self.crawler, request, self.spider)
        self.stats.inc_value(f"webometrics/scheduler/{result}")
        return result in ("added", "held", "requeued", "upgraded")

    def _gate(self) -> Gate:
        self._busy, self._busy_at = busy_hosts(self.crawler, self._busy, self._busy_at)
        return in_progress_gate(self.crawler.engine, self._busy)

    def next_request(self) -> Request | None:
        request = pop_request(self.frontier, self._gate(), self.spider)
        if request is None:
            return None
        self.stats.inc_value("webometrics/scheduler/dequeued")
        return request

    def __len__(self) -> int:
        return self.frontier.pending
