"""Stop a crawl whose proxy or network went away, instead of recording every page as a
connection failure.

:class:`OutageWatch` (a downloader middleware) counts the requests whose final failure
(after the retries) has a connection reason (:data:`CONNECTION_KINDS`) with no answer in
between. Once ``[crawl] outage_failures`` of them in a row span at least
:data:`~core.defaults.CRAWL_OUTAGE_HOSTS` hosts, nothing answers any more: the spider is
closed with the reason :data:`CONNECTION_LOST`, the failures that follow are neither
stored nor kept as answers, and those of the streak are given back to the frontier
(:meth:`~crawler.frontier.SQLiteFrontier.requeue`), so a resumed crawl fetches them (a crawl
farm's Redis frontier keeps them as failures). The
crawler process exits with :data:`crawler.run.EXIT_CONNECTION_LOST` and the crawl run is
``interrupted``, its resume command printed. One dead host does not stop a crawl: its
failures span one host, and any answer from another ends the streak.

Memory: the streak, at most ``outage_failures`` fingerprints.

Examples
--------
>>> watch = Streak(failures=3, hosts=2)
>>> watch.failed("a", "fp1", "connection_refused"), watch.failed("a", "fp2", "timeout")
(False, False)
>>> watch.failed("b", "fp3", "connection_refused")  # 3 in a row on 2 hosts
True
>>> watch.answered(); watch.failed("c", "fp4", "dns")
False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_from_coro
from twisted.python.failure import Failure

from core.defaults import CRAWL_OUTAGE_HOSTS
from crawler.errors import classify_failure
from crawler.wiring import frontier_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

#: the close reason of a crawl whose fetches stopped answering
CONNECTION_LOST = "connection_lost"
#: the failure kinds (:mod:`crawler.errors`) that say no server answered (``proxy``, a
#: tunnel the proxy refused, is an answer)
CONNECTION_KINDS = frozenset({"connection_refused", "connection", "timeout", "dns"})
#: ``request.meta`` key of a failure met after the crawl was stopped (not recorded)
OUTAGE = "wm_outage"


@dataclass
class Streak:
    """The connection failures in a row (hosts and fingerprints) since the last answer."""

    failures: int
    hosts: int = CRAWL_OUTAGE_HOSTS
    fps: list[str] = field(default_factory=list)
    seen_hosts: set[str] = field(default_factory=set)
    last: str = ""

    def failed(self, host: str, fp: str | None, reason: str) -> bool:
        """Count one failure; True when the streak is long and wide enough."""
        if reason.split(":", 1)[0] not in CONNECTION_KINDS:
            self.answered()
            return False
        if fp:
            self.fps.append(fp)
        self.seen_hosts.add(host)
        self.last = reason
        count = len(self.fps) if fp else max(len(self.fps), 1)
        return 0 < self.failures <= count and len(self.seen_hosts) >= self.hosts

    def answered(self) -> None:
        self.fps.clear()
        self.seen_hosts.clear()

    def describe(self) -> str:
        return (
            f"{len(self.fps)} fetches in a row failed for a connection reason across "
            f"{len(self.seen_hosts)} hosts with no answer in between (the last: "
            f"{self.last[:200]}): the proxy or the network went away"
        )


class OutageWatch:
    """Downloader middleware: closes the spider when the fetches stop answering."""

    def __init__(self, crawler: Crawler, failures: int) -> None:
        self.crawler = crawler
        self.streak = Streak(failures)
        self.stopped: str | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OutageWatch:
        return cls(crawler, crawler.settings.getint("WEBOMETRICS_OUTAGE_FAILURES"))

    def process_response(self, request: Request, response: Response) -> Response:
        if self.stopped is None:
            self.streak.answered()
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        if isinstance(exception, IgnoreRequest):  # refused here, not a fetch
            return
        if self.stopped is not None:
            request.meta[OUTAGE] = True  # stays in flight: a resumed crawl sends it again
            return
        reason = classify_failure(Failure(exception))
        host = urlsplit(request.url).hostname or ""
        if self.streak.failed(host, request.meta.get("wm_fp"), reason):
            self.stopped = self.streak.describe()
            request.meta[OUTAGE] = True
            self.crawler.stats.set_value(f"webometrics/{CONNECTION_LOST}", self.stopped)
            assert self.crawler.engine is not None
            deferred_from_coro(self.crawler.engine.close_spider_async(reason=CONNECTION_LOST))
            # the streak's failures, stored or about to be, are fetched again on resume
            requeue = getattr(frontier_of(self.crawler), "requeue", None)
            if requeue is not None:
                requeue(self.streak.fps)
