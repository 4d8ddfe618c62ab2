"""Crawler traps recognised, and kept from eating a university's page budget.

A *trap* is a part of a site that makes URLs without end: an events calendar that links
to the next month forever, a faceted catalogue (every combination of its filters is a
URL), a server that answers 200 for any unknown path with a page inventing deeper paths
(a *soft 404*, Bar-Yossef et al. 2004, "Sic transit gloria telae"), relative links that
recurse (``href="sub/"`` on ``/sub/``) and paths whose segments repeat. The guard
(:class:`TrapGuard`) judges each internal link before it is requested, and each fetched
page before its links are followed; no rule knows any site.

Three kinds of evidence:

1. **The shape of the URL** (stateless; Heritrix's ``PathologicalPathDecideRule`` and
   ``TooManyPathSegmentsDecideRule``): a path segment repeated more than
   ``[crawl] trap_repeats`` times in a row (``/a/a/a/``), a run of 2-3 segments repeated
   (``/news/2026/news/2026/``), or more than :data:`MAX_SEGMENTS` segments:
   ``repeated_segments`` / ``too_deep``.
2. **URL templates and what their pages bring** (learned as the crawl goes). A URL's
   template is its host and path with numbers, dates and long ids generalised
   (``/events/calendar/{n}/{n}/``), and ``?`` for any query (filters and their values
   do not matter: ``/catalogue/?``). A fetched page is *productive* when it links to an
   external registered domain not seen before in the university's crawl, or to an
   internal page whose *skeleton* (the template's literal segments: ``/events/calendar/``)
   is new. Counting only the links found on pages of a generalised template with the
   same skeleton (a trap makes its own URLs: a month links to the next, a filter to more
   filters; a list of course pages is no trap), a template admits
   ``[crawl] trap_template_pages`` distinct URLs, plus
   ``[crawl] trap_template_gain`` more for each productive page of it; the URLs past that
   are not requested, and are stored as skipped (``calendar`` when the template holds
   two numbers or a date, ``faceted`` when it has a query, else ``template``). The links
   of a page that brought nothing (or whose text names its own path, as a "not found"
   page does: :func:`quotes_itself`), and those of templates whose pages brought
   nothing, are *demoted*, as are paths with a segment repeated (``/a/b/b/``, where a
   recursing relative link begins): requested with a lower priority and one level later
   (``level`` = depth + 1, :class:`crawler.wiring.WmMeta`), so when a level's budget is
   shared out (:mod:`crawler.frontier`) they come after the pages one link deeper. (A
   priority alone orders one level only: a budget near the size of a site's real
   content was spent on a level's traps before the next level's real pages.)
3. **Text**: a fetched page whose visible text (letters only, where it quotes its own
   URL left out) is the same as that of another URL of the host at a smaller link depth
   is a soft 404 or a copy
   (DUST, "different URLs with similar text", Bar-Yossef, Keidar & Schonfeld 2007): its
   links are not followed and it is stored with ``trap: soft_404: ...`` as its error
   (so its text is not extracted).

Skipped URLs are stored as pages with ``fetch_error`` ``"trap: <kind>: <detail>"`` and
no HTTP status (the crawl's statistics count them under ``trap``). The learned state
lives in a :class:`TrapMemory`: in the crawler process for the one-machine frontier
(:class:`LocalTrapMemory`; a resumed crawl learns again), in Redis beside a crawl farm's
frontier (:class:`RedisTrapMemory`), so every process of a farm judges with what all
have learned.

Time: O(length of the URL) per link, one text pass per page; memory: one entry per
internal URL requested and per skeleton, template, external domain and text signature.

Examples
--------
>>> url_template("http://u.edu/events/2026/11/28/?view=day")
'u.edu/events/{n}/{n}/{n}/?'
>>> skeleton("u.edu/events/{n}/{n}/{n}/?")
'u.edu/events/'
>>> repeated_segments("/dept/sub/sub/sub/", 2)
"segment 'sub' 3 times in a row"
>>> repeated_segments("/news/2026/news/2026/", 2)
"segments 'news/2026' twice in a row"
>>> repeated_segments("/a/b/a/", 2) is None
True
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from core import defaults as D

#: paths with more segments are traps (Heritrix's TooManyPathSegmentsDecideRule: 20)
MAX_SEGMENTS = 20
#: fewest words a page's text needs for its signature (shorter pages are never compared)
MIN_WORDS = 20

_DATE = re.compile(r"^\d{4}-\d{1,2}(-\d{1,2})?([._][a-z0-9]+)?$", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+([._][a-z0-9]+)?$", re.IGNORECASE)
_ID = re.compile(r"^(?=[^/]*\d)[0-9a-f-]{16,}$|^(?=[^/]*\d)(?=[^/]*[a-z])[a-z0-9_-]{24,}$", re.I)
_WORD = re.compile(r"[^\W\d_]+")


def generalise(segment: str) -> str:
    """A path segment with numbers, dates and long ids replaced by ``{n}``, ``{date}``
    and ``{id}``; words stay.

    >>> [generalise(s) for s in ("2026", "12.html", "2026-11-28", "cs501", "about")]
    ['{n}', '{n}', '{date}', 'cs501', 'about']
    """
    if not segment:
        return segment
    if _NUMBER.match(segment):
        return "{n}"
    if _DATE.match(segment):
        return "{date}"
    if _ID.match(segment):
        return "{id}"
    return segment


def url_template(url: str) -> str:
    """The template of a URL: host, generalised path, ``?`` when it has a query."""
    parts = urlsplit(url)
    path = "/".join(generalise(s) for s in (parts.path or "/").split("/"))
    return f"{(parts.hostname or '').lower()}{path}{'?' if parts.query else ''}"


def skeleton(template: str) -> str:
    """A template's literal segments only (what a new kind of page must change)."""
    host, _, path = template.rstrip("?").partition("/")
    kept = [s for s in path.split("/") if s and not s.startswith("{")]
    return f"{host}/" + "".join(f"{s}/" for s in kept)


def repeated_segments(path: str, max_repeats: int) -> str | None:
    """Why a path's segments repeat (a recursing relative link), or None: one segment
    more than ``max_repeats`` times in a row, or a run of 2-3 segments twice in a row."""
    segs = [s for s in path.split("/") if s]
    run = 1
    for a, b in itertools.pairwise(segs):
        run = run + 1 if a == b else 1
        if run > max_repeats:
            return f"segment {a!r} {run} times in a row"
    for width in (2, 3):
        for i in range(len(segs) - 2 * width + 1):
            if (
                segs[i : i + width] == segs[i + width : i + 2 * width]
                and len(set(segs[i : i + width])) > 1
            ):
                return f"segments {'/'.join(segs[i : i + width])!r} twice in a row"
    return None


def template_kind(template: str) -> str:
    """``calendar`` (two numbers or a date), ``faceted`` (a query) or ``template``."""
    if template.count("{n}") >= 2 or "{date}" in template:
        return "calendar"
    if template.endswith("?"):
        return "faceted"
    return "template"


def _quoted_forms(url: str) -> list[str]:
    """The ways a page may quote its own address (URL and path, raw and decoded), the
    longest first; the root path ``/`` left out."""
    path = urlsplit(url).path
    forms = {url, unquote(url), path, unquote(path)}
    return sorted((f for f in forms if len(f) > 1), key=len, reverse=True)


def quotes_itself(text: str, url: str) -> bool:
    """True when a page's visible text names its own path or URL (of 4 characters or
    more, as a whole: not the start of a longer path): what
    a "not found" page does to say which page it did not find (Apache's "The requested
    URL /a/b/ was not found on this server", and most soft-404 pages).

    >>> quotes_itself("Sorry, we could not find /a/b/.", "http://u.edu/a/b/")
    True
    >>> quotes_itself("About the university", "http://u.edu/about/")
    False
    >>> quotes_itself("See /news/old/2020/ too", "http://u.edu/news/old/")  # not itself
    False
    """
    return any(
        re.search(rf"(?<![\w/.-]){re.escape(quoted)}(?![\w/-])", text)
        for quoted in _quoted_forms(url)
        if len(quoted) >= 4
    )


def text_signature(text: str, url: str) -> str | None:
    """The signature of a page's visible text: its words (letters only, lower case),
    where it quotes its own URL or path left out (a soft-404 page says which page it
    did not find); None below :data:`MIN_WORDS` words.

    >>> a = "Sorry, we could not find /a/b/. " + "Try the menu. " * 10
    >>> b = "Sorry, we could not find /c/. " + "Try the menu. " * 10
    >>> text_signature(a, "http://u.edu/a/b/") == text_signature(b, "http://u.edu/c/")
    True
    """
    for quoted in _quoted_forms(url):
        text = text.replace(quoted, " ")
    words = _WORD.findall(text.lower())
    if len(words) < MIN_WORDS:
        return None
    return hashlib.blake2b(" ".join(words).encode(), digest_size=10).hexdigest()


@dataclass(frozen=True)
class TrapRules:
    """The guard's settings (``[crawl] trap_*``)."""

    enabled: bool = D.CRAWL_TRAP_GUARD
    template_pages: int = D.CRAWL_TRAP_TEMPLATE_PAGES
    template_gain: int = D.CRAWL_TRAP_TEMPLATE_GAIN
    repeats: int = D.CRAWL_TRAP_REPEATS

    @classmethod
    def from_crawl(cls, crawl: Any) -> TrapRules:
        return cls(
            enabled=crawl.trap_guard,
            template_pages=crawl.trap_template_pages,
            template_gain=crawl.trap_template_gain,
            repeats=crawl.trap_repeats,
        )


class TrapMemory(Protocol):
    """What the guard learns, shared by every process of a crawl (scope: a university)."""

    def rank(self, scope: str, template: str, url: str, counted: bool = True) -> int:
        """The place of ``url`` among its template's distinct counted URLs (1: the first
        asked for), the same on every later call; 0 for a URL first asked for uncounted
        (found on a page of another kind: it never counts)."""
        ...

    def novel(self, scope: str, keys: list[str], level: int = 0) -> int:
        """Remember ``keys``, found on a page of frontier ``level``; how many of them no
        page of a smaller level had (pages of one level are parsed in any order and by
        any process: what one of them finds is as new for the others)."""
        ...

    def record(self, scope: str, template: str, productive: bool, level: int = 0) -> None:
        """One more page of ``template`` parsed at frontier ``level`` (productive or not)."""
        ...

    def yield_of(self, scope: str, template: str, level: int | None = None) -> tuple[int, int]:
        """(pages parsed, productive pages) of ``template`` at the levels below ``level``
        (``None``: every level)."""
        ...

    def same_text(self, scope: str, signature: str, url: str, depth: int) -> int | None:
        """Remember that ``url`` (at ``depth``) has text ``signature``; the smallest
        depth of another URL with it (None: no other)."""
        ...


class LocalTrapMemory:
    """:class:`TrapMemory` in the crawler process (the one-machine frontier)."""

    def __init__(self) -> None:
        self._ranks: dict[tuple[str, str], dict[str, int]] = {}
        self._seen: dict[tuple[str, str], int] = {}  # key -> the level it was first seen at
        self._yield: dict[tuple[str, str], dict[int, list[int]]] = {}
        self._texts: dict[tuple[str, str], dict[str, int]] = {}

    def rank(self, scope: str, template: str, url: str, counted: bool = True) -> int:
        urls = self._ranks.setdefault((scope, template), {})
        if url not in urls:
            urls[url] = sum(1 for r in urls.values() if r) + 1 if counted else 0
        return urls[url]

    def novel(self, scope: str, keys: list[str], level: int = 0) -> int:
        return sum(self._seen.setdefault((scope, k), level) >= level for k in set(keys))

    def record(self, scope: str, template: str, productive: bool, level: int = 0) -> None:
        counts = self._yield.setdefault((scope, template), {}).setdefault(level, [0, 0])
        counts[0] += 1
        counts[1] += productive

    def yield_of(self, scope: str, template: str, level: int | None = None) -> tuple[int, int]:
        per_level = self._yield.get((scope, template), {})
        kept = [c for lv, c in per_level.items() if level is None or lv < level]
        return sum(c[0] for c in kept), sum(c[1] for c in kept)

    def same_text(self, scope: str, signature: str, url: str, depth: int) -> int | None:
        urls = self._texts.setdefault((scope, signature), {})
        urls[url] = min(depth, urls.get(url, depth))
        return min((d for u, d in urls.items() if u != url), default=None)


_RANK = """
local r = redis.call('HGET', KEYS[1], ARGV[1])
if r then return tonumber(r) end
local n = 0
if ARGV[2] == '1' then n = redis.call('INCR', KEYS[2]) end
redis.call('HSET', KEYS[1], ARGV[1], n)
return n
"""


class RedisTrapMemory:
    """:class:`TrapMemory` in Redis under a crawl farm's run prefix (``P:trap:...``),
    so every process learns from the pages of all (removed with the run's keys)."""

    def __init__(self, server: Any, prefix: str) -> None:
        self.server = server
        self.prefix = prefix
        self._rank = server.register_script(_RANK)

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def rank(self, scope: str, template: str, url: str, counted: bool = True) -> int:
        keys = [self._key("rank", scope, template), self._key("ranked", scope, template)]
        return int(self._rank(keys=keys, args=[url, int(counted)]))

    def novel(self, scope: str, keys: list[str], level: int = 0) -> int:
        unique = sorted(set(keys))
        if not unique:
            return 0
        key = self._key("seen", scope)
        pipe = self.server.pipeline()
        for k in unique:  # the first level to see a key keeps it (levels only grow)
            pipe.hsetnx(key, k, level)
        pipe.hmget(key, unique)
        first = pipe.execute()[-1]
        return sum(int(f) >= level for f in first)

    def record(self, scope: str, template: str, productive: bool, level: int = 0) -> None:
        pipe = self.server.pipeline()
        pipe.hincrby(self._key("parsed", scope), f"{level} {template}", 1)
        if productive:
            pipe.hincrby(self._key("productive", scope), f"{level} {template}", 1)
        pipe.sadd(self._key("levels", scope), level)
        pipe.execute()

    def yield_of(self, scope: str, template: str, level: int | None = None) -> tuple[int, int]:
        levels = sorted(
            int(v)
            for v in self.server.smembers(self._key("levels", scope))
            if level is None or int(v) < level
        )
        if not levels:
            return 0, 0
        fields = [f"{lv} {template}" for lv in levels]
        pipe = self.server.pipeline()
        pipe.hmget(self._key("parsed", scope), fields)
        pipe.hmget(self._key("productive", scope), fields)
        parsed, productive = pipe.execute()
        return sum(int(v or 0) for v in parsed), sum(int(v or 0) for v in productive)

    def same_text(self, scope: str, signature: str, url: str, depth: int) -> int | None:
        key = self._key("text", scope, signature)
        pipe = self.server.pipeline()
        pipe.hsetnx(key, url, depth)
        pipe.hgetall(key)
        urls = pipe.execute()[1]
        own = url.encode()
        return min((int(d) for u, d in urls.items() if u != own), default=None)


def memory_for(frontier: Any) -> TrapMemory:
    """The memory that goes with a frontier: Redis beside a crawl farm's
    :class:`~crawler.redis_frontier.RedisFrontier`, else the process's own."""
    server = getattr(frontier, "server", None)
    key = getattr(frontier, "key", None)
    if server is not None and callable(key):
        return RedisTrapMemory(server, key("trap"))
    return LocalTrapMemory()


@dataclass(frozen=True)
class Admission:
    """The guard's answer for one link: ``reason`` (``trap: <kind>: <detail>``) when it
    is skipped, else the ``priority`` to request it with."""

    reason: str | None = None
    priority: int = 0


@dataclass(frozen=True)
class PageVerdict:
    """The guard's verdict on a fetched page: ``reason`` (``trap: soft_404: ...``) when
    its links are not to be followed; ``productive`` when it brought a new kind of page
    or a new external domain (the links of a page that did not get a lower priority)."""

    reason: str | None = None
    productive: bool = True


class TrapGuard:
    """Judges a university's internal links and pages (see the module docstring).

    Parameters
    ----------
    rules : TrapRules
    memory : TrapMemory
        What the crawl has learned (:func:`memory_for`).
    """

    def __init__(self, rules: TrapRules, memory: TrapMemory) -> None:
        self.rules = rules
        self.memory = memory
        self._reported: set[str] = set()

    def shape(self, url: str) -> str | None:
        """The stateless verdict of a URL: ``trap: <kind>: <detail>`` or None."""
        path = urlsplit(url).path
        why = repeated_segments(path, self.rules.repeats)
        if why is not None:
            return f"trap: repeated_segments: {why}"
        n = sum(1 for s in path.split("/") if s)
        if n > MAX_SEGMENTS:
            return f"trap: too_deep: {n} path segments (more than {MAX_SEGMENTS})"
        return None

    def admit(
        self,
        url: str,
        scope: str,
        source_productive: bool = True,
        source: str = "",
        level: int | None = None,
    ) -> Admission:
        """Whether to request internal link ``url`` of university ``scope``, found on
        page ``source`` of frontier ``level`` that was productive or not (:meth:`parsed`).
        Only the links found on a page of a generalised template of the same skeleton
        count against the link's template budget (a trap makes its own URLs: a month
        links to the next, a filter to more filters; a list of course pages is no trap).
        What the template's pages brought is counted over the levels below ``level``
        (every level when ``None``), so the verdict does not depend on the order in which
        the pages of one level were parsed."""
        if not self.rules.enabled:
            return Admission()
        reason = self.shape(url)
        if reason is not None:
            return Admission(reason)
        template = url_template(url)
        parsed, productive = self.memory.yield_of(scope, template, level)
        allowed = self.rules.template_pages + self.rules.template_gain * productive
        origin = url_template(source) if source else template
        counted = ("{" in origin or origin.endswith("?")) and skeleton(origin) == skeleton(template)
        rank = self.memory.rank(scope, template, url, counted)
        if rank > allowed:
            kind = template_kind(template)
            return Admission(
                f"trap: {kind}: template {template} past its budget of {allowed} pages "
                f"({parsed} fetched, {productive} brought a new kind of page or a new "
                "external domain)"
            )
        barren = (parsed and not productive) or not source_productive
        segs = [seg for seg in urlsplit(url).path.split("/") if seg]
        echo = any(a == b for a, b in itertools.pairwise(segs))  # /a/b/b/: a loop begins?
        return Admission(priority=-1 if barren or echo else 0)

    def first_report(self, url: str) -> bool:
        """True the first time a skipped ``url`` is reported by this process."""
        if url in self._reported:
            return False
        self._reported.add(url)
        return True

    def parsed(
        self,
        scope: str,
        url: str,
        internal: list[str],
        domains: list[str],
        text: str,
        depth: int = 0,
        level: int | None = None,
    ) -> PageVerdict:
        """Learn from a fetched page of university ``scope`` at link ``depth`` and
        frontier ``level`` (default: ``depth``): its
        internal link targets, the registered domains of its external links and its
        visible text. The verdict says whether the page was productive and, when its text
        is that of another URL of the host at a smaller depth, ``trap: soft_404: ...``
        (its links are then not followed). Copies at one depth are all followed: which
        of them comes first varies from run to run, the pages of a smaller depth were all
        parsed before (:mod:`crawler.frontier`'s level-synchronous order)."""
        if not self.rules.enabled:
            return PageVerdict()
        level = depth if level is None else level
        keys = [f"s {skeleton(url_template(u))}" for u in internal] + [f"d {d}" for d in domains]
        # new to the levels before this one (not to the pages of this level parsed first:
        # their order varies); a page that names its own path is an error page
        novel = self.memory.novel(scope, sorted(set(keys)), level)
        productive = novel > 0 and not quotes_itself(text, url)
        self.memory.record(scope, url_template(url), productive, level)
        signature = text_signature(text, url)
        if signature is None:
            return PageVerdict(productive=productive)
        host = (urlsplit(url).hostname or "").lower()
        first = self.memory.same_text(scope, f"{host} {signature}", url, depth)
        if first is not None and first < depth:
            return PageVerdict(
                f"trap: soft_404: the same text as a page of {host} at depth {first} "
                "(a page answered for unknown URLs, or a copy); links not followed",
                productive,
            )
        return PageVerdict(productive=productive)
