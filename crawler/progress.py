"""Progress of a running crawl as JSON lines, for the parent process's display.

Every second: pages stored, error pages, bytes, requests queued and sent; a last line
``{"event": "closed", "reason": ..., "stats": {...}}`` carries Scrapy's statistics.
Written to ``WEBOMETRICS_PROGRESS_FILE`` when set, else standard output.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from scrapy import signals
from twisted.internet import task

from crawler.wiring import frontier_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

_KEYS = {
    "stored": "webometrics/pages_stored",
    "error_pages": "webometrics/error_pages_stored",
    "bytes": "webometrics/bytes_stored",
    "links": "webometrics/links_stored",
    "requests": "downloader/request_count",
    "responses": "downloader/response_count",
    "replayed": "webometrics/replayed",
}


class ProgressReporter:
    """A Scrapy extension writing one JSON line per second."""

    def __init__(self, crawler: Crawler, path: str | None, interval: float = 1.0) -> None:
        self.crawler = crawler
        self.path = path
        self.interval = interval
        self.out: TextIO | None = None
        self.loop: task.LoopingCall | None = None
        self.started = time.monotonic()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProgressReporter:
        ext = cls(crawler, crawler.settings.get("WEBOMETRICS_PROGRESS_FILE"))
        crawler.signals.connect(ext.opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.closed, signal=signals.spider_closed)
        return ext

    def _write(self, record: dict[str, Any]) -> None:
        if self.out is None:
            self.out = open(self.path, "a", encoding="utf-8") if self.path else sys.stdout  # noqa: SIM115
        self.out.write(json.dumps(record, default=str) + "\n")
        self.out.flush()

    def snapshot(self) -> dict[str, Any]:
        stats = self.crawler.stats
        record: dict[str, Any] = {"event": "progress", "seconds": time.monotonic() - self.started}
        for name, key in _KEYS.items():
            record[name] = stats.get_value(key, 0)
        frontier = frontier_of(self.crawler)
        pending = frontier.pending if frontier is not None else 0
        held = frontier.held if frontier is not None else 0
        # queued: may leave now or soon; held: wait for their level (crawler.frontier)
        record["queued"], record["held"] = pending - held, held
        # since when a write waits for the database (empty: none waits)
        record["store_waiting"] = stats.get_value("webometrics/store_waiting") or ""
        return record

    def opened(self) -> None:
        self._write({"event": "opened", "spider": getattr(self.crawler.spider, "name", "")})
        self.loop = task.LoopingCall(lambda: self._write(self.snapshot()))
        self.loop.start(self.interval, now=False)

    def closed(self, reason: str) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        record = self.snapshot()
        record.update(event="closed", reason=reason, stats=self.crawler.stats.get_stats())
        self._write(record)
        if self.out is not None and self.out is not sys.stdout:
            self.out.close()
