"""The item pipeline: store page items in batches, off the reactor thread.

Items are buffered and written by :func:`crawler.storage.store_batch` in a worker thread,
one transaction per batch of ``[crawl] batch_size`` items (and at least every ``[crawl]
flush_seconds``); batches are written one at a time, in order, and up to
:data:`MAX_BATCHES_AHEAD` wait or are extracted ahead of the writes before the spider's
output waits (back pressure). When a batch is committed the frontier marks its requests
done, so a restart neither loses nor refetches them. With ``[crawl] extract_inline`` the
pages are extracted in worker processes (:mod:`crawler.extraction`) before their batch is
written; otherwise they stay ``pending`` for ``webometrics extract``.

A write the database cannot take (a restart, a fail-over) is retried with bounded
exponential back-off for ``[crawl] store_retry_seconds`` (:mod:`crawler.storage.retry`),
the same batch, while the crawl waits (back pressure). Past the window the spider closes
with the reason :data:`STORE_UNAVAILABLE` and writes nothing more: the frontier keeps
every answer not stored, so the resumed crawl stores them without fetching them again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import task, threads
from twisted.internet.defer import DeferredLock

from core import defaults as D
from core.domains import normalize_url
from core.entities import SiteRules
from crawler.items import PageErrorItem, PageItem
from crawler.storage import BatchResult, Extractor, extraction_state, store_batch
from crawler.storage.retry import StoreUnavailableError, retried
from crawler.wiring import Frontier, frontier_of
from store.entities import site_rules
from store.session import make_engine

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

log = logging.getLogger(__name__)


#: batches written or extracted ahead before process_item waits (back pressure)
MAX_BATCHES_AHEAD = 3
#: the spider's close reason when the database stayed unreachable past the retry window
STORE_UNAVAILABLE = "store_unavailable"


def _extraction_rows(items: list[PageItem | PageErrorItem]) -> list[tuple[Any, ...]]:
    """The rows :func:`crawler.storage.store_batch` will extract, in its order."""
    return [
        (normalize_url(i.url), i.body, i.content_type, i.charset)
        for i in items
        if isinstance(i, PageItem) and i.body and extraction_state(i)[0] == "pending"
    ]


def make_extractor(options: dict[str, Any]) -> Extractor:
    """The inline extractor (``[extract]`` options), imported only when used."""
    from crawler.extraction import inline_extractor

    return inline_extractor(options)


class StorePipeline:
    """Buffer items and store them in batches (see the module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.run_id = s.getint("WEBOMETRICS_RUN_ID")
        self.batch_size = s.getint("WEBOMETRICS_BATCH_SIZE", D.CRAWL_BATCH_SIZE)
        self.flush_seconds = s.getfloat("WEBOMETRICS_FLUSH_SECONDS", D.CRAWL_FLUSH_SECONDS)
        self.retry_seconds = s.getfloat(
            "WEBOMETRICS_STORE_RETRY_SECONDS", D.CRAWL_STORE_RETRY_SECONDS
        )
        self.unavailable = False  # the database stayed unreachable: write nothing more
        self.engine = make_engine(s.get("WEBOMETRICS_DB_URL"))
        extract = s.get("WEBOMETRICS_EXTRACT")
        self.extractor: Extractor | None = make_extractor(dict(extract)) if extract else None
        self.buffer: list[PageItem | PageErrorItem] = []
        self.lock = DeferredLock()
        self.in_flight = 0
        self.last_flush = time.monotonic()
        self.loop: task.LoopingCall | None = None
        self.frontier: Frontier | None = None
        self.sites: SiteRules | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StorePipeline:
        return cls(crawler)

    def open_spider(self) -> None:
        # the scheduler (and its frontier) is built before the pipelines open
        self.frontier = frontier_of(self.crawler)
        self.loop = task.LoopingCall(self._tick)
        self.loop.start(max(self.flush_seconds / 2, 0.1), now=False)

    async def close_spider(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        await self._flush()
        await maybe_deferred_to_future(self.lock.run(lambda: None))  # every batch written
        self.engine.dispose()
        close = getattr(self.extractor, "close", None)
        if close is not None:
            close()

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem | PageErrorItem):
            return item
        fp = item.fingerprint if isinstance(item, PageItem) else None
        if fp and self.frontier is not None:
            # the page item comes last from its callback: its links are queued by now (a
            # crawl farm's shared frontier keeps its level-synchronous order with this)
            self.frontier.parsed(fp)
        self.buffer.append(item)
        if len(self.buffer) >= self.batch_size:
            await self._flush()
        return item

    def _tick(self) -> None:
        if self.buffer and time.monotonic() - self.last_flush >= self.flush_seconds:
            deferred_from_coro(self._flush())

    def _take(self) -> list[PageItem | PageErrorItem]:
        items, self.buffer = self.buffer, []
        self.last_flush = time.monotonic()
        return items

    async def _flush(self) -> None:
        items = self._take()
        if not items:  # wait for the batches still being written
            await maybe_deferred_to_future(self.lock.run(lambda: None))
            return
        extractor: Any = self.extractor
        if extractor is not None and hasattr(extractor, "submit"):
            extractor = extractor.submit(_extraction_rows(items))
        self.in_flight += 1
        d = self.lock.run(self._write, items, extractor)
        d.addBoth(self._written)
        if self.in_flight > MAX_BATCHES_AHEAD:
            await maybe_deferred_to_future(d)

    def _written(self, result: Any) -> Any:
        self.in_flight -= 1
        return result

    def _write(self, items: list[PageItem | PageErrorItem], extractor: Any) -> Any:
        if self.unavailable:  # the frontier keeps them for the resumed crawl
            return None

        attempts = [0]

        def write() -> BatchResult:
            attempts[0] += 1
            if attempts[0] == 2:  # shown on the console by the parent (progress records)
                self.stats.set_value("webometrics/store_waiting", time.strftime("%H:%M:%S"))
            if self.sites is None:  # the web-entity rules, read once per crawl process
                self.sites = site_rules(self.engine)
            return store_batch(
                self.engine, self.run_id, items, extractor=extractor, sites=self.sites
            )

        def count(result: Any) -> Any:
            if attempts[0] > 1:
                self.stats.inc_value("webometrics/store_retries", attempts[0] - 1)
                self.stats.set_value("webometrics/store_waiting", "")
            return result

        what = f"storing a batch of {len(items)} items"
        d = threads.deferToThread(retried, write, self.retry_seconds, what=what)
        d.addBoth(count)
        d.addCallback(self._stored)
        d.addErrback(self._failed, len(items))
        return d

    def _stored(self, result: BatchResult) -> None:
        if self.frontier is not None:
            self.frontier.done(result.fingerprints)
        self.stats.inc_value("webometrics/pages_stored", result.pages)
        self.stats.inc_value("webometrics/links_stored", result.links)
        self.stats.inc_value("webometrics/error_pages_stored", result.errors)
        self.stats.inc_value("webometrics/bytes_stored", result.bytes)
        self.stats.inc_value("webometrics/batches")

    def _failed(self, failure: Any, n: int) -> None:
        if failure.check(StoreUnavailableError):
            if not self.unavailable:
                self.unavailable = True
                log.error("%s; the crawl stops, its state kept", failure.value)
                self.stats.set_value("webometrics/store_unavailable", str(failure.value))
                self.stats.inc_value("webometrics/batches_failed")
                deferred_from_coro(self.crawler.engine.close_spider_async(reason=STORE_UNAVAILABLE))
            return
        log.error("storing a batch of %d items failed: %s", n, failure.getTraceback())
        self.stats.inc_value("webometrics/batches_failed")
        if not self.stats.get_value("webometrics/store_failed"):  # the cause, for the parent
            first = (str(failure.value).strip().splitlines() or [failure.type.__name__])[0]
            self.stats.set_value("webometrics/store_failed", f"{failure.type.__name__}: {first}")
        # a crawl that cannot store its pages must stop; the frontier keeps what was not
        # stored, so a restart after the cause is fixed stores it
        deferred_from_coro(self.crawler.engine.close_spider_async(reason="store_failed"))
