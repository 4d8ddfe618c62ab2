"""scrapy-redis's scheduler on the shared :class:`~crawler.redis_frontier.RedisFrontier`.

With ``--redis URL`` every crawler process of a run uses this scheduler
(``SCHEDULER = "crawler.redis_scheduler.RedisScheduler"``): a
:class:`scrapy_redis.scheduler.Scheduler` whose queue (:class:`FrontierQueue`, a
:class:`scrapy_redis.queue.Base`) and duplicate filter (:class:`FingerprintDupeFilter`,
a :class:`scrapy_redis.dupefilter.RFPDupeFilter` keyed by Scrapy's request
fingerprints, the ones the item pipeline reports as stored) live under the run's key
prefix. The queue keeps the order, budgets and deferred requests of the one-process
frontier (:mod:`crawler.redis_frontier`).

Stopping: a process whose engine is idle asks the frontier whether the crawl is over
(nothing queued, nothing in flight in any process); until then it stays open
(``DontCloseSpider``) and keeps asking every :data:`POLL_SECONDS`, so it picks up the
links the other processes find. A heartbeat every ``lease / 6`` seconds keeps this
process's requests its own and takes back those of processes that died.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import Base
from scrapy_redis.scheduler import Scheduler
from twisted.internet import task

from core.defaults import CRAWL_FIXED_BUDGETS
from crawler.frontier import Gate
from crawler.redis_frontier import DEFAULT_LEASE, RedisFrontier, connect
from crawler.scheduler import add_request, busy_hosts, pop_request
from crawler.wiring import FrontierOwner

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

log = logging.getLogger(__name__)

#: seconds between the engine's looks at the shared queue while this process is idle
POLL_SECONDS = 0.2


class FingerprintDupeFilter(RFPDupeFilter):
    """scrapy-redis's duplicate filter on Scrapy's request fingerprints (hex)."""

    def __init__(self, server: Any, key: str, crawler: Crawler) -> None:
        super().__init__(server, key=key, debug=False)
        self.crawler = crawler

    def request_fingerprint(self, request: Request) -> str:
        return self.crawler.request_fingerprinter.fingerprint(request).hex()  # type: ignore[union-attr]


class FrontierQueue(Base):
    """The shared queue: pushes and pops through the frontier's atomic scripts."""

    def __init__(self, frontier: RedisFrontier, spider: Spider, crawler: Crawler) -> None:
        super().__init__(frontier.server, spider, frontier.prefix)
        self.frontier = frontier
        self.crawler = crawler

    def __len__(self) -> int:
        return self.frontier.pending

    def push(self, request: Request) -> str:  # type: ignore[override]
        return add_request(self.frontier, self.crawler, request, self.spider)

    def pop(self, timeout: float = 0, gate: Gate | None = None) -> Request | None:  # type: ignore[override]
        return pop_request(self.frontier, gate or Gate(), self.spider)

    def clear(self) -> None:
        self.frontier.clear()


class RedisScheduler(Scheduler, FrontierOwner):
    """The scheduler of a crawl farm (see the module docstring).

    Settings: ``REDIS_URL``, ``WEBOMETRICS_REDIS_PREFIX`` (the run's key prefix),
    ``WEBOMETRICS_REDIS_LEASE``, ``CONCURRENT_REQUESTS_PER_DOMAIN`` and
    ``DOWNLOAD_DELAY`` (enforced per host across all processes).
    """

    frontier: RedisFrontier

    def __init__(self, crawler: Crawler, frontier: RedisFrontier) -> None:
        super().__init__(
            frontier.server,
            persist=True,  # the run's keys are removed by `webometrics crawl` at its end
            queue_key=frontier.prefix,
            dupefilter=FingerprintDupeFilter(frontier.server, frontier.seen_key, crawler),
        )
        self.crawler = crawler
        self.frontier = frontier
        self.stats = crawler.stats
        self._busy: frozenset[str] = frozenset()
        self._busy_at = 0.0
        self._beat: task.LoopingCall | None = None
        self._poll: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisScheduler:
        s = crawler.settings
        prefix = s.get("WEBOMETRICS_REDIS_PREFIX")
        if not prefix:
            raise ValueError("WEBOMETRICS_REDIS_PREFIX (the run's Redis keys) is not set")
        frontier = RedisFrontier(
            connect(s.get("REDIS_URL")),
            prefix,
            host_concurrency=s.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            host_delay=s.getfloat("DOWNLOAD_DELAY"),
            lease=s.getfloat("WEBOMETRICS_REDIS_LEASE", DEFAULT_LEASE),
            fixed_budgets=s.getbool("WEBOMETRICS_FIXED_BUDGETS", CRAWL_FIXED_BUDGETS),
        )
        return cls(crawler, frontier)

    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.queue = FrontierQueue(self.frontier, spider, self.crawler)
        requeued = self.frontier.heartbeat()
        log.info(
            "joined crawl farm %s as %s: %d requests queued%s",
            self.frontier.prefix,
            self.frontier.worker,
            self.frontier.pending,
            f", {requeued} taken back from stopped processes" if requeued else "",
        )
        self.crawler.signals.connect(self._idle, signal=signals.spider_idle)
        self._beat = task.LoopingCall(self._heartbeat)
        self._beat.start(max(self.frontier.lease / 6, 0.5), now=False)
        self._poll = task.LoopingCall(self._wake)
        self._poll.start(POLL_SECONDS, now=False)

    def close(self, reason: str) -> None:
        for loop in (self._beat, self._poll):
            if loop is not None and loop.running:
                loop.stop()
        back = self.frontier.leave()
        if back:
            log.info("left the crawl farm: %d requests in flight queued again", back)

    def _heartbeat(self) -> None:
        back = self.frontier.heartbeat()
        if back:
            log.warning("%d requests of stopped crawler processes queued again", back)
            self.stats.inc_value("webometrics/scheduler/taken_back", back)

    def _wake(self) -> None:
        """Let the engine look at the shared queue (others may have added requests)."""
        slot = getattr(self.crawler.engine, "_slot", None)
        if slot is not None and self.frontier.pending:
            slot.nextcall.schedule()

    def _idle(self) -> None:
        if not self.frontier.finished():
            raise DontCloseSpider

    def has_pending_requests(self) -> bool:
        return self.frontier.pending > 0

    def enqueue_request(self, request: Request) -> bool:
        result = self.queue.push(request)
        self.stats.inc_value(f"webometrics/scheduler/{result}")
        if result == "duplicate" and self.df.debug:
            self.df.log(request, self.spider)
        return result in ("added", "held", "requeued", "upgraded")

    def next_request(self) -> Request | None:
        self._busy, self._busy_at = busy_hosts(self.crawler, self._busy, self._busy_at)
        request = self.queue.pop(gate=Gate(busy=self._busy))
        if request is not None:
            self.stats.inc_value("webometrics/scheduler/dequeued")
        return request

    def __len__(self) -> int:
        return self.frontier.pending
