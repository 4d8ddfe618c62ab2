"""The item pipeline: store page items in batches, off the reactor thread.

Items are buffered and written by :func:`crawler.storage.store_batch` in a worker thread,
one transaction per batch of ``[crawl] batch_size`` items (and at least every ``[crawl]
flush_seconds``); batches are written one at a time, in order. When a batch is committed
the frontier marks its requests done, so a restart neither loses nor refetches them.
Extraction runs in the same worker thread when ``[crawl] extract_inline`` is on;
otherwise pages stay ``pending`` for ``webometrics extract``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import task, threads
from twisted.internet.defer import DeferredLock

from crawler.items import PageErrorItem, PageItem
from crawler.storage import BatchResult, Extractor, store_batch
from store.session import make_engine

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

log = logging.getLogger(__name__)


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
        self.batch_size = s.getint("WEBOMETRICS_BATCH_SIZE", 200)
        self.flush_seconds = s.getfloat("WEBOMETRICS_FLUSH_SECONDS", 2.0)
        self.engine = make_engine(s.get("WEBOMETRICS_DB_URL"))
        extract = s.get("WEBOMETRICS_EXTRACT")
        self.extractor: Extractor | None = make_extractor(dict(extract)) if extract else None
        self.buffer: list[PageItem | PageErrorItem] = []
        self.lock = DeferredLock()
        self.last_flush = time.monotonic()
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StorePipeline:
        return cls(crawler)

    def open_spider(self) -> None:
        self.loop = task.LoopingCall(self._tick)
        self.loop.start(max(self.flush_seconds / 2, 0.1), now=False)

    async def close_spider(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        await self._flush()
        self.engine.dispose()

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem | PageErrorItem):
            return item
        self.buffer.append(item)
        if len(self.buffer) >= self.batch_size:
            await self._flush()
        return item

    def _tick(self) -> None:
        if self.buffer and time.monotonic() - self.last_flush >= self.flush_seconds:
            self.lock.run(self._write, self._take())

    def _take(self) -> list[PageItem | PageErrorItem]:
        items, self.buffer = self.buffer, []
        self.last_flush = time.monotonic()
        return items

    async def _flush(self) -> None:
        items = self._take()
        if items:
            await maybe_deferred_to_future(self.lock.run(self._write, items))
        else:  # wait for a batch still being written
            await maybe_deferred_to_future(self.lock.run(lambda: None))

    def _write(self, items: list[PageItem | PageErrorItem]) -> Any:
        d = threads.deferToThread(
            store_batch, self.engine, self.run_id, items, extractor=self.extractor
        )
        d.addCallback(self._stored)
        d.addErrback(self._failed, len(items))
        return d

    def _stored(self, result: BatchResult) -> None:
        frontier = getattr(self.crawler, "webometrics_frontier", None)
        if frontier is not None:
            frontier.done(result.fingerprints)
        self.stats.inc_value("webometrics/pages_stored", result.pages)
        self.stats.inc_value("webometrics/links_stored", result.links)
        self.stats.inc_value("webometrics/error_pages_stored", result.errors)
        self.stats.inc_value("webometrics/bytes_stored", result.bytes)
        self.stats.inc_value("webometrics/batches")

    def _failed(self, failure: Any, n: int) -> None:
        log.error("storing a batch of %d items failed: %s", n, failure.getTraceback())
        self.stats.inc_value("webometrics/batches_failed")
        # a crawl that cannot store its pages must stop; the frontier keeps what was not
        # stored, so a restart after the cause is fixed stores it
        deferred_from_coro(self.crawler.engine.close_spider_async(reason="store_failed"))
