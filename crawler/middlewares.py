"""Downloader middlewares and the DNS resolver of the crawler.

* :class:`SafetyMiddleware` (first in the chain) refuses URLs that
  :func:`crawler.safety.unsafe_reason` rejects: other schemes, IP literals, internal
  names; redirects and robots.txt requests pass through it too.
* :class:`SafeResolver` refuses names that resolve to loopback, private, link-local or
  other non-global addresses (when the crawler resolves names itself, i.e. without a
  proxy).
* :class:`ReplayMiddleware` keeps every final answer (or final network failure: timeout,
  size limit, connection error) in the frontier until its page is stored, and replays it
  after a restart instead of fetching it twice; it also keeps robots.txt answers.
* :class:`ProxyMiddleware` sends every request (robots.txt included) through
  ``[crawl] proxy`` when set.
* :class:`RobotsMiddleware` is Scrapy's robots.txt middleware with a fix: in Scrapy 2.13+
  (``async def robot_parser``, scrapy/scrapy#6802) every request that waits for a host's
  robots.txt while it is being fetched awaits the same Deferred through ``asFuture``,
  which hands the parser to the first waiter and ``None`` ("no robots.txt, allow all")
  to the others, so concurrent requests to a new host ignore its robots.txt. Here each
  waiter gets its own Deferred. It also follows RFC 9309 for a robots.txt that answers
  5xx: the host is disallowed. (The spiders read ``Sitemap:`` lines through Scrapy's
  ``robots_parsed`` signal.)
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Headers, Request, Response
from scrapy.resolver import CachingThreadedResolver
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import load_object
from twisted.internet import defer

from crawler.errors import (
    ReplayedFailure,
    UnsafeAddressError,
    UnsafeURLError,
    classify_failure,
)
from crawler.frontier import dumps, loads
from crawler.outage import OUTAGE
from crawler.safety import address_kind, ip_literal, unsafe_reason
from crawler.wiring import Frontier, frontier_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

log = logging.getLogger(__name__)


class SafetyMiddleware:
    """Refuse unsafe URLs before any connection (see :mod:`crawler.safety`)."""

    def __init__(self, allow_private: bool) -> None:
        self.allow_private = allow_private

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SafetyMiddleware:
        return cls(crawler.settings.getbool("WEBOMETRICS_ALLOW_PRIVATE_HOSTS"))

    def process_request(self, request: Request) -> None:
        reason = unsafe_reason(request.url, allow_private=self.allow_private)
        if reason is not None:
            raise UnsafeURLError(f"unsafe: {reason}")


class SafeResolver(CachingThreadedResolver):
    """Scrapy's caching resolver that refuses internal addresses.

    The proxy's own host (``WEBOMETRICS_PROXY_HOST``) is always allowed, and everything
    when ``WEBOMETRICS_ALLOW_PRIVATE_HOSTS`` is on.
    """

    allow_private = False
    allowed_names: frozenset[str] = frozenset()

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: Any) -> SafeResolver:
        resolver = super().from_crawler(crawler, reactor)
        resolver.allow_private = crawler.settings.getbool("WEBOMETRICS_ALLOW_PRIVATE_HOSTS")
        proxy_host = crawler.settings.get("WEBOMETRICS_PROXY_HOST")
        resolver.allowed_names = frozenset({proxy_host} if proxy_host else ())
        return resolver

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred[str]:  # noqa: N802
        d = super().getHostByName(name, timeout)
        if self.allow_private or name in self.allowed_names:
            return d
        return d.addCallback(self._check, name)

    @staticmethod
    def _check(address: str, name: str) -> str:
        addr = ip_literal(address)
        kind = address_kind(addr) if addr is not None else None
        if kind is not None:
            raise UnsafeAddressError(f"unsafe address: {name} resolves to {address} ({kind})")
        return address


#: robots.txt answers that mean "unreachable" (RFC 9309 section 2.3.1.4: assume complete
#: disallow); 429 is treated like a server error, as the major crawlers do
UNREACHABLE = frozenset({429, *range(500, 600)})
_DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


class RobotsMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware with two changes.

    * Every request waiting for a host's robots.txt gets the parser (see above).
    * RFC 9309: a robots.txt that answers a server error (5xx, or 429) after the retries
      makes the host "unreachable", so the crawler assumes complete disallow (Scrapy
      parses the error page as a robots.txt, which usually allows everything). The
      requests are refused with ``robots.txt unreachable (HTTP <status>)``. Network errors
      (no answer at all) keep Scrapy's behaviour: the page is requested and fails with
      its own error.
    """

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._unreachable: dict[str, int] = {}

    async def robot_parser(self, request: Request) -> Any:
        pending = self._parsers.get(urlparse_cached(request).netloc)
        if isinstance(pending, defer.Deferred):
            mine: defer.Deferred[Any] = defer.Deferred()

            def relay(result: Any) -> Any:
                mine.callback(result)
                return result  # keep the result for the next waiter

            pending.addCallback(relay)
            return await maybe_deferred_to_future(mine)
        return await super().robot_parser(request)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        if response.status in UNREACHABLE:
            self._unreachable[netloc] = response.status
            response = response.replace(body=_DISALLOW_ALL)
        await super()._parse_robots(response, netloc, request)

    def process_request_2(self, rp: Any, request: Request) -> None:
        status = self._unreachable.get(urlparse_cached(request).netloc)
        if status is not None and rp is not None:
            self._stats.inc_value("robotstxt/unreachable_refused")
            raise IgnoreRequest(f"robots.txt unreachable (HTTP {status})")
        super().process_request_2(rp, request)


class ProxyMiddleware:
    """Send every request through ``WEBOMETRICS_PROXY`` (the test web, or a real proxy)."""

    def __init__(self, proxy: str) -> None:
        self.proxy = proxy

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProxyMiddleware:
        proxy = crawler.settings.get("WEBOMETRICS_PROXY")
        if not proxy:
            raise NotConfigured
        return cls(proxy)

    def process_request(self, request: Request) -> None:
        request.meta.setdefault("proxy", self.proxy)


def response_to_blob(response: Response) -> bytes:
    """Serialise a response (class, URL, status, headers, body, flags, protocol)."""
    cls = type(response)
    return dumps(
        {
            "cls": f"{cls.__module__}.{cls.__name__}",
            "url": response.url,
            "status": response.status,
            "headers": list(response.headers.items()),
            "body": response.body,
            "flags": list(response.flags),
            "protocol": response.protocol,
        }
    )


def failure_to_blob(text: str) -> bytes:
    """Serialise a request's final failure (its classified text)."""
    return dumps({"failure": text})


def failure_from_blob(blob: bytes) -> str | None:
    """The failure text a blob holds, or None when it holds a response."""
    d = loads(blob)
    return d.get("failure") if isinstance(d, dict) else None  # type: ignore[no-any-return]


def response_from_blob(blob: bytes, request: Request) -> Response:
    """The response :func:`response_to_blob` stored, bound to ``request``."""
    d: dict[str, Any] = loads(blob)  # type: ignore[assignment]
    cls = load_object(d["cls"])
    headers = Headers()
    for name, values in d["headers"]:
        headers.setlist(name, values)
    return cls(
        url=d["url"],
        status=d["status"],
        headers=headers,
        body=d["body"],
        flags=[*d["flags"], "replayed"],
        protocol=d["protocol"],
        request=request,
    )


def _is_robots(request: Request) -> bool:
    return bool(request.meta.get("dont_obey_robotstxt")) and urlsplit(request.url).path == (
        "/robots.txt"
    )


class ReplayMiddleware:
    """Keep final answers in the frontier until stored; replay them after a restart."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReplayMiddleware:
        return cls(crawler)

    @property
    def frontier(self) -> Frontier | None:
        """The running crawl's frontier (:func:`crawler.wiring.frontier_of`)."""
        return frontier_of(self.crawler)

    def process_request(self, request: Request) -> Response | None:
        frontier = self.frontier
        if frontier is None:
            return None
        fp = request.meta.get("wm_fp")
        blob = frontier.cached_response(fp) if fp else None
        if blob is None and _is_robots(request):
            blob = frontier.robots(request.url)
        if blob is None:
            return None
        request.meta["dont_retry"] = True
        request.meta["wm_replayed"] = True
        self.crawler.stats.inc_value("webometrics/replayed")
        failure = failure_from_blob(blob)
        if failure is not None:
            raise ReplayedFailure(failure)
        return response_from_blob(blob, request)

    def process_exception(self, request: Request, exception: Exception) -> None:
        """Keep the final failure of a request that reached the network (after the
        retries), so that a restart replays it instead of trying again."""
        frontier = self.frontier
        fp = request.meta.get("wm_fp")
        if frontier is None or not fp or isinstance(exception, IgnoreRequest):
            return
        # not after the network went away (crawler.outage): a resumed crawl asks again
        if not request.meta.get("wm_replayed") and not request.meta.get(OUTAGE):
            from twisted.python.failure import Failure

            frontier.received(fp, failure_to_blob(classify_failure(Failure(exception))))

    def process_response(self, request: Request, response: Response) -> Response:
        frontier = self.frontier
        if frontier is None or request.meta.get("wm_replayed"):
            return response
        fp = request.meta.get("wm_fp")
        if fp:
            frontier.received(fp, response_to_blob(response))
        elif _is_robots(request):
            frontier.store_robots(request.url, response_to_blob(response))
        return response
