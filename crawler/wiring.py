"""How the crawler's Scrapy components reach each other: the frontier of the running
crawl and the crawl facts each request carries.

The frontier. Both schedulers (:class:`crawler.scheduler.SQLiteScheduler` on the
one-process SQLite :class:`crawler.frontier.SQLiteFrontier`,
:class:`crawler.redis_scheduler.RedisScheduler` on a crawl farm's
:class:`crawler.redis_frontier.RedisFrontier`) are :class:`FrontierOwner` s; the spiders,
the replay middleware, the item pipeline and the progress reporter reach the frontier
through :func:`frontier_of` and use what :class:`Frontier` declares.

The request meta. A request of the spiders carries these keys in ``request.meta``
(requests are pickled into the job's frontier or the farm's Redis queue, so each value is
a plain Python value and a request stored by a previous process still loads):

=================  ====================================================================
``wm``             the crawl facts (:class:`WmMeta`), set by the spider that makes the
                   request (:func:`request_meta`) and read through :func:`wm_of`
``wm_fp``          the request's fingerprint (hex), set when it leaves the frontier
``wm_replayed``    True when the answer is a stored one replayed after a restart
``wm_warc``        (WARC file, offset) of the answer's record, with ``[crawl] warc_dir``
=================  ====================================================================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

#: the request meta key of the crawl facts
WM = "wm"


class WmMeta(TypedDict, total=False):
    """The crawl facts of a request (``request.meta["wm"]``); every key is optional.

    Attributes
    ----------
    kind : str
        What the request is for, which decides its frontier class
        (:data:`crawler.scheduler.KIND_CLASS`): ``internal`` (a university's page, with a
        depth and the university's page budget), ``sitemap`` (a university's sitemap),
        ``external`` (an external link target), ``extra`` (one more page of an external
        domain, within the domain's budget), ``citing`` (a citing candidate) or
        ``deferred`` (a target inside another crawled university, fetched only if that
        university's crawl does not reach it). Missing: ``external``.
    uni : int or None
        The university the request is made for (its id).
    depth : int
        The link depth from the university's start pages (internal and sitemap requests);
        for an ``extra`` request its hop from a target of its domain (1: linked from one).
    budget : tuple of (str, int)
        The budget the request counts against and its size: ``("u<id>", [crawl]
        max_pages_per_university)`` or ``("d<domain>", [crawl] external_pages_per_domain)``.
    chain : list of str
        The URLs of the redirect chain that led to this request, in order.
    pos : int
        The place of the link in the page it was found on (0: the first link), which
        orders the requests a budget admits (:mod:`crawler.frontier`).
    src : str
        The URL of the page the link was found on (its links are counted once per page).
    level : int
        The frontier level of an internal request when it is not its ``depth``: one more
        for a link the trap guard demoted (:mod:`crawler.traps`), so that it waits for
        the next level and competes for the page budget with the pages one link deeper
        (:func:`level_of`).
    """

    kind: str
    uni: int | None
    depth: int
    budget: tuple[str, int]
    chain: list[str]
    pos: int
    src: str
    level: int


def wm_of(message: Request | Response) -> WmMeta:
    """The crawl facts of a request or of a response's request (empty when it has none).

    >>> from scrapy import Request
    >>> wm_of(Request("http://x.edu/", meta=request_meta({"kind": "internal", "depth": 1})))
    {'kind': 'internal', 'depth': 1}
    >>> wm_of(Request("http://x.edu/robots.txt"))
    {}
    """
    wm: WmMeta | None = message.meta.get(WM)
    return wm or WmMeta()


def level_of(wm: WmMeta) -> int:
    """The frontier level of a request: its ``level`` when set, else its ``depth``.

    >>> level_of({"kind": "internal", "depth": 2}), level_of({"depth": 2, "level": 3})
    (2, 3)
    """
    level = wm.get("level")
    return int(wm.get("depth") or 0) if level is None else int(level)


def request_meta(wm: WmMeta) -> dict[str, Any]:
    """The ``meta`` of a new request with the crawl facts ``wm``."""
    return {WM: wm}


class Frontier(Protocol):
    """What the crawler's components use of the running crawl's frontier (the SQLite
    :class:`crawler.frontier.SQLiteFrontier` or a farm's
    :class:`crawler.redis_frontier.RedisFrontier`)."""

    @property
    def pending(self) -> int:
        """Requests queued (held ones included)."""
        ...

    @property
    def held(self) -> int:
        """Requests held until their level starts (:mod:`crawler.frontier`)."""
        ...

    def parsed(self, fp: str) -> None:
        """The callback of request ``fp`` is through: its links are queued."""
        ...

    def received(self, fp: str, response: bytes) -> None:
        """Keep the answer of a request until its page is stored."""
        ...

    def cached_response(self, fp: str) -> bytes | None:
        """The stored answer of a request (a restart replays it), or None."""
        ...

    def done(self, fps: Iterable[str]) -> None:
        """Requests whose pages are committed."""
        ...

    def robots(self, url: str) -> bytes | None:
        """A stored robots.txt answer."""
        ...

    def store_robots(self, url: str, response: bytes) -> None:
        """Keep a robots.txt answer."""
        ...

    def record_redirect(self, url: str, target: str) -> None:
        """Remember that ``url`` (normalised) redirected to ``target``."""
        ...

    def redirects(self) -> dict[str, str]:
        """Every redirect seen: normalised URL -> target."""
        ...


class FrontierOwner:
    """A scheduler on a :class:`Frontier` (the base of both schedulers)."""

    frontier: Frontier


def frontier_of(crawler: Crawler) -> Frontier | None:
    """The frontier of the crawler's scheduler; None before the spider opens (or under a
    scheduler that is no :class:`FrontierOwner`)."""
    engine = crawler.engine
    scheduler = engine.scheduler if engine is not None else None
    return scheduler.frontier if isinstance(scheduler, FrontierOwner) else None
