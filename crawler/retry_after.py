"""429 and 503 answers honoured: the request is asked again after the server's
``Retry-After``, and the host's pace is slowed (RFC 9110 section 10.2.3, RFC 6585
section 4).

Scrapy's :class:`~scrapy.downloadermiddlewares.retry.RetryMiddleware` (2.19) retries a 429
or a 503 at once and never reads ``Retry-After`` (scrapy/scrapy#3849, open since 2019), so
a rate-limited host is asked again immediately and the retries are spent in a second.
:class:`RetryAfterMiddleware` takes its place (same order, same ``RETRY_*`` settings, same
retry counting): for a retried status that asks to wait (429, 503) it

1. reads the wait: ``Retry-After`` in seconds or as an HTTP date, else an exponential
   back-off (``[crawl] retry_backoff * 2 ** (attempt - 1)``); either is cut to
   ``[crawl] retry_after_max`` (:func:`retry_delay`);
2. holds the host's download slot for that long: the slot's ``lastseen`` is moved into
   the future, so the slot sends nothing before the wait is over (every request of the
   host waits, not only the retried one), and its delay is raised to the pace below; in
   a crawl farm the hold is shared through the farm's Redis (:class:`FarmHolds`), so
   every process holds the host (a request of a farm waits in the middleware, which
   looks at the shared hold again when it wakes);
3. queues the retry (a request with ``dont_filter``, counted in ``retry_times`` as
   Scrapy counts it) through the scheduler: the frontier keeps it, on one machine or in a
   crawl farm, and the 429 itself is never stored: the page is stored once, with its
   final answer (or with the 429 when the retries are spent).

The pace (:class:`Pace`): after a wait the host's slot delay is raised to a tenth of the
wait (at least the crawl's own delay, at most ``AUTOTHROTTLE_MAX_DELAY``), and each
following answer that is not a 429/503 lowers it by a quarter of the excess, so the host
recovers over a dozen answers, as AutoThrottle lowers its delay (AutoThrottle itself never
raises the delay on an error answer: it only looks at latencies). In a crawl farm each
process paces its own slot for the host after the wait.

Time and memory: O(1) per answer; one float per slowed host.
"""

from __future__ import annotations

import email.utils
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.response import response_status_message

from core import defaults as D

if TYPE_CHECKING:
    import datetime as dt

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

log = logging.getLogger(__name__)

#: statuses whose Retry-After is honoured (when they are retried at all)
WAIT_STATUSES = frozenset({429, 503})
#: the request meta key of a retry's earliest sending time (epoch seconds)
NOT_BEFORE = "wm_not_before"
#: the share of the wait the host's delay is raised to afterwards
PACE_SHARE = 0.1
#: the share of the excess delay an ordinary answer takes away
RECOVERY = 0.25


def parse_retry_after(value: str | bytes | None, now: dt.datetime | None = None) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait, or None when absent or invalid.

    Parameters
    ----------
    value : str or bytes or None
        The header: delay-seconds (``"120"``) or an HTTP date
        (``"Wed, 21 Oct 2015 07:28:00 GMT"``).
    now : datetime, optional
        The time an HTTP date is measured from (aware; now by default).

    Returns
    -------
    float or None
        Seconds, at least 0 (a date in the past means "now").

    Examples
    --------
    >>> parse_retry_after("120"), parse_retry_after(b" 3 "), parse_retry_after("soon")
    (120.0, 3.0, None)
    >>> import datetime as dt
    >>> now = dt.datetime(2015, 10, 21, 7, 27, 0, tzinfo=dt.UTC)
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now)
    60.0
    >>> parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now)
    0.0
    """
    import datetime as dt

    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if not text:
        return None
    if text.isdigit():
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=dt.UTC)
    now = now or dt.datetime.now(dt.UTC)
    return max(0.0, (when - now).total_seconds())


def retry_delay(header: float | None, attempt: int, *, backoff: float, cap: float) -> float:
    """The wait before retry number ``attempt`` (1 for the first).

    >>> retry_delay(30.0, 1, backoff=5.0, cap=300.0)
    30.0
    >>> retry_delay(3600.0, 1, backoff=5.0, cap=300.0)
    300.0
    >>> [retry_delay(None, n, backoff=5.0, cap=300.0) for n in (1, 2, 3)]
    [5.0, 10.0, 20.0]
    """
    wait = header if header is not None else backoff * 2 ** max(0, attempt - 1)
    return float(min(max(0.0, wait), cap))


@dataclass
class Pace:
    """The raised delays of the slowed hosts (download slot key -> delay floor).

    >>> pace = Pace(base=0.25, ceiling=60.0)
    >>> pace.slow("x.edu", wait=30.0)
    3.0
    >>> round(pace.recover("x.edu"), 4)
    2.3125
    >>> [round(pace.recover("x.edu"), 3) for _ in range(3)]
    [1.797, 1.41, 1.12]
    >>> pace.recover("y.edu") is None
    True
    """

    base: float
    ceiling: float
    floors: dict[str, float] = field(default_factory=dict)

    def slow(self, key: str, wait: float) -> float:
        """Raise the host's delay after a wait of ``wait`` seconds; return the new delay."""
        delay = min(self.ceiling, max(self.base, PACE_SHARE * wait, self.floors.get(key, 0.0)))
        self.floors[key] = delay
        return delay

    def recover(self, key: str) -> float | None:
        """One ordinary answer of the host: its delay comes a quarter closer to the base
        (forgotten once there); None for a host that is not slowed."""
        floor = self.floors.get(key)
        if floor is None:
            return None
        floor -= RECOVERY * (floor - self.base)
        if floor - self.base < 0.01:
            del self.floors[key]
            return self.base
        self.floors[key] = floor
        return floor


async def _sleep(seconds: float) -> None:
    """Wait ``seconds`` on the running reactor (asyncio's or another)."""
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))  # type: ignore[arg-type]


class FarmHolds:
    """The hosts held across a crawl farm's processes: the Redis key
    ``<prefix>:hold:<download slot key>`` holds the time (epoch seconds) the host may be
    asked again, and expires a second after it (the run's keys go with the run).

    Every process looks it up before it sends a request (one GET on the farm's Redis),
    so a 429 met by one process holds the host in all of them.
    """

    def __init__(self, server: Any, prefix: str) -> None:
        self.server = server
        self.prefix = prefix

    def _name(self, key: str) -> str:
        return f"{self.prefix}:hold:{key}"

    def hold(self, key: str, until: float) -> None:
        """Hold the host ``key`` until ``until``."""
        ms = int((until - time.time()) * 1000)
        if ms > 0:
            self.server.set(self._name(key), repr(until), px=ms + 1000)

    def until(self, key: str) -> float | None:
        """When the host ``key`` may be asked again (None: it is not held)."""
        value = self.server.get(self._name(key))
        return float(value) if value is not None else None


class RetryAfterMiddleware(RetryMiddleware):
    """Scrapy's retry middleware that waits as 429/503 answers ask and slows the host.

    Settings: Scrapy's ``RETRY_*``; ``WEBOMETRICS_RETRY_AFTER_MAX`` (the cap, seconds),
    ``WEBOMETRICS_RETRY_BACKOFF`` (the first wait without a header), ``DOWNLOAD_DELAY``
    (the pace a host recovers to) and ``AUTOTHROTTLE_MAX_DELAY`` (the highest pace).
    Stats: ``retry_after/waits``, ``retry_after/seconds`` (their sum),
    ``retry_after/header`` (waits a header gave), ``retry_after/capped``.
    """

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        super().__init__(settings)
        self.crawler = crawler
        self.cap = settings.getfloat("WEBOMETRICS_RETRY_AFTER_MAX", D.CRAWL_RETRY_AFTER_MAX)
        self.backoff = settings.getfloat("WEBOMETRICS_RETRY_BACKOFF", D.CRAWL_RETRY_BACKOFF)
        self.autothrottle = settings.getbool("AUTOTHROTTLE_ENABLED")
        self.pace = Pace(
            base=settings.getfloat("DOWNLOAD_DELAY"),
            ceiling=max(settings.getfloat("AUTOTHROTTLE_MAX_DELAY", 60.0), 1.0),
        )
        self.farm: FarmHolds | None = None
        prefix = settings.get("WEBOMETRICS_REDIS_PREFIX")
        if settings.get("REDIS_URL") and prefix:
            from crawler.redis_frontier import connect

            self.farm = FarmHolds(connect(settings.get("REDIS_URL")), prefix)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RetryAfterMiddleware:
        return cls(crawler)

    def process_response(
        self, request: Request, response: Response, spider: object = None
    ) -> Request | Response:
        waits = response.status in WAIT_STATUSES and response.status in self.retry_http_codes
        if not waits or request.meta.get("dont_retry", False):
            if not waits:
                self._recover(request)
            return super().process_response(request, response)
        retry = self._retry(request, response_status_message(response.status))
        if retry is None:  # retries spent: the 429/503 is the page's answer
            return response
        header = parse_retry_after(response.headers.get(b"Retry-After"))
        attempt = int(retry.meta.get("retry_times") or 1)
        wait = retry_delay(header, attempt, backoff=self.backoff, cap=self.cap)
        self._hold(request, wait)
        until = time.time() + wait
        retry.meta[NOT_BEFORE] = until  # whichever process of a farm takes the retry waits
        if self.farm is not None:
            self.farm.hold(self._slot(request)[0], until)
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("retry_after/waits")
            stats.inc_value("retry_after/seconds", wait)  # type: ignore[arg-type]
            if header is not None:
                stats.inc_value("retry_after/header")
                if header > self.cap:
                    stats.inc_value("retry_after/capped")
        log.info(
            "HTTP %d for %s: asked again in %.1f s (Retry-After: %s)",
            response.status,
            request.url,
            wait,
            "none" if header is None else f"{header:g} s",
        )
        return retry

    async def process_request(self, request: Request, spider: object = None) -> None:
        """Hold the host when a farm's other process met a 429 of it, or when the request
        is a retry another process made (it carries its earliest sending time).

        On one machine the host's download slot holds the request (a 429 met meanwhile
        moves the slot's hold further). In a crawl farm the request waits here instead
        and looks at the farm's hold again when it wakes: a 429 that another process met
        while it waited (for its own retry time, say) holds it too, which a slot of this
        process, never told, would not."""
        until = float(request.meta.get(NOT_BEFORE) or 0.0)
        farm = self.farm
        key = self._slot(request)[0] if farm is not None else None
        while True:
            if farm is not None and key is not None:
                until = max(until, farm.until(key) or 0.0)
            wait = until - time.time()
            if wait <= 0:
                return
            self._hold(request, wait)  # the host's other requests of this process wait too
            if farm is None:
                return
            await _sleep(wait)

    def _slot(self, request: Request):  # type: ignore[no-untyped-def]
        engine = self.crawler.engine
        downloader = getattr(engine, "downloader", None)
        if downloader is None:
            return None, None
        # Scrapy makes a host's slot when its first request is queued; a host held by
        # another process of a farm may have none here yet (_get_slot makes it)
        return downloader._get_slot(request)

    def _hold(self, request: Request, wait: float) -> None:
        """Keep the host's slot from sending anything for ``wait`` seconds, then at the
        raised pace."""
        key, slot = self._slot(request)
        if slot is None:
            return
        delay = self.pace.slow(key, wait)
        slot.delay = max(slot.delay, delay)
        # the slot sends its next request at lastseen + (its delay, with jitter): with
        # lastseen this far ahead, nothing leaves before the wait is over
        # (a call the slot planned for sooner finds the new lastseen and waits again)
        slot.lastseen = max(slot.lastseen, time.monotonic() + wait)

    def _recover(self, request: Request) -> None:
        key, slot = self._slot(request)
        if slot is None or key not in self.pace.floors:
            return
        floor = self.pace.recover(key)
        if floor is None:
            return
        # AutoThrottle (when on) has set its own delay for this answer: the floor bounds it
        slot.delay = max(slot.delay, floor) if self.autothrottle else floor
