"""A crash-safe crawl frontier: Scrapy's scheduler on one SQLite file.

Scrapy's own ``JOBDIR`` keeps its queue sizes and its seen-set buffer in memory until the
spider closes, so a crawl killed with SIGKILL loses its queue. Here every change is one
SQLite transaction in WAL mode, committed before Scrapy sees its result:

* a request is stored (URL fingerprint as primary key = the seen set) when it is
  scheduled, with its budget counted in the same transaction;
* its state goes ``queued -> in flight -> received -> done``; a *received* request keeps
  the response it got until the item pipeline has committed the page, then becomes *done*;
* on restart, *in flight* requests are queued again (they got no answer) and *received*
  ones are queued with their stored response, which :class:`~crawler.middlewares.
  ReplayMiddleware` serves without a new fetch; robots.txt answers are kept too.

So a killed crawl, restarted on the same file, loses no stored page and fetches again only
the requests that were on the wire at the moment of the kill.

Order. Requests come in three classes: ``internal`` (a university's own pages, with a
depth), ``external`` (external targets, extra pages of an external domain, sitemaps,
citing pages) and ``deferred`` (external targets inside another crawled university's
domains). Internal requests are served breadth-first and *level-synchronously*: depth
``d + 1`` starts only when no request of depth ``<= d`` is in progress, so every page gets
its shortest depth and a depth-limited crawl sees every page of the manifest's depths.
External requests fill the pipe meanwhile. Deferred requests wait until no internal
request is queued or in progress, and are deduplicated when they leave the queue: if the
owning university's crawl reached the page itself, it is not fetched again.

Costs: each operation is O(log n) in the number of stored requests (B-tree indexes); the
seen set is also held in memory (one dict entry per request).
"""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

QUEUED, IN_FLIGHT, RECEIVED, DONE = 0, 1, 2, 3
LOOKAHEAD = 64  # queued rows looked at per class to find one whose host is not busy
INTERNAL, EXTERNAL, DEFERRED = 0, 1, 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS request (
    fp TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    cls INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    state INTEGER NOT NULL,
    url TEXT NOT NULL,
    host TEXT NOT NULL DEFAULT '',
    request BLOB NOT NULL,
    response BLOB
);
CREATE INDEX IF NOT EXISTS ix_request_queue ON request (state, cls, depth, priority, seq);
CREATE TABLE IF NOT EXISTS budget (key TEXT PRIMARY KEY, used INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS robots (url TEXT PRIMARY KEY, response BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS redirect (url TEXT PRIMARY KEY, target TEXT NOT NULL);
"""


_INSERT_REQUEST = (
    "INSERT INTO request (fp, seq, cls, depth, priority, state, url, host, request) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fp) DO UPDATE SET "
    "seq=excluded.seq, cls=excluded.cls, depth=excluded.depth, "
    "priority=excluded.priority, request=excluded.request"
)


@dataclass(frozen=True)
class Gate:
    """What the engine has in progress, for the level-synchronous order.

    Attributes
    ----------
    internal_min_depth : int or None
        The smallest depth of an internal request in progress (None: none in progress).
    busy : frozenset of str
        Hosts whose downloader slot already holds requests waiting for their turn (a
        politeness delay or the per-host concurrency): more would only wait there and hold
        back requests to other hosts.
    """

    internal_min_depth: int | None = None
    busy: frozenset[str] = frozenset()


class Frontier:
    """The request store (see the module docstring).

    Parameters
    ----------
    path : path-like
        The SQLite file; created when missing, resumed when present.

    Examples
    --------
    >>> import tempfile, os
    >>> f = Frontier(os.path.join(tempfile.mkdtemp(), "frontier.sqlite"))
    >>> f.add("a", "http://x.edu/", INTERNAL, 0, lambda: b"A")
    'added'
    >>> f.add("a", "http://x.edu/", INTERNAL, 0, lambda: b"A")
    'duplicate'
    >>> f.pop(Gate())
    ('a', b'A')
    >>> f.received("a", b"response"); f.cached_response("a")
    b'response'
    >>> f.done(["a"]); f.counts()
    {'queued': 0, 'in_flight': 0, 'received': 0, 'done': 1}
    >>> f.close()
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        # fp -> (cls, state): the seen set, with what dedup and upgrades need
        self._known: dict[str, tuple[int, int]] = {}
        self._budget: dict[str, int] = {}
        self.resumed = False
        self._seq = 0
        self._queued = 0
        self._internal_queued = 0
        self._load()

    # -- life cycle ---------------------------------------------------------------------
    def _load(self) -> None:
        db = self._db
        if db.execute("SELECT 1 FROM request LIMIT 1").fetchone():
            self.resumed = True
            db.execute("BEGIN")
            # in flight: no answer came, ask again; received: replay the stored answer
            db.execute(
                "UPDATE request SET state=? WHERE state IN (?, ?)", (QUEUED, IN_FLIGHT, RECEIVED)
            )
            db.execute("COMMIT")
        for fp, cls, state in db.execute("SELECT fp, cls, state FROM request"):
            self._known[fp] = (cls, state)
            if state == QUEUED:
                self._queued += 1
                self._internal_queued += cls == INTERNAL
        self._seq = db.execute("SELECT COALESCE(MAX(seq), 0) FROM request").fetchone()[0]
        self._budget = dict(db.execute("SELECT key, used FROM budget"))

    def close(self) -> None:
        """Close the file (every change is already committed)."""
        self._db.close()

    # -- scheduling -----------------------------------------------------------------------
    def add(
        self,
        fp: str,
        url: str,
        cls: int,
        depth: int,
        blob: Callable[[], bytes],
        *,
        priority: int = 0,
        budget: tuple[str, int] | None = None,
        dont_filter: bool = False,
    ) -> str:
        """Store a request; return ``added``, ``requeued``, ``upgraded``, ``duplicate`` or
        ``budget`` (its budget is spent; not stored).

        ``blob`` is called only when the request is stored. ``dont_filter`` (a retry)
        queues a known request again with its new blob. A deferred request that is still
        queued is upgraded in place by a non-deferred request for the same URL.
        """
        known = self._known.get(fp)
        if known is not None:
            old_cls, state = known
            if dont_filter:
                self._db.execute(
                    "UPDATE request SET state=?, request=?, response=NULL, seq=? WHERE fp=?",
                    (QUEUED, blob(), self._next_seq(), fp),
                )
                if state != QUEUED:
                    self._queued += 1
                    self._internal_queued += old_cls == INTERNAL
                self._known[fp] = (old_cls, QUEUED)
                return "requeued"
            if not (old_cls == DEFERRED and state == QUEUED and cls != DEFERRED):
                return "duplicate"
        if budget is not None and self._budget.get(budget[0], 0) >= budget[1]:
            return "budget"
        db = self._db
        if budget is None:  # one statement: its own transaction
            db.execute(
                _INSERT_REQUEST,
                (fp, self._next_seq(), cls, depth, -priority, QUEUED, url, _host(url), blob()),
            )
            return self._added(fp, cls, known)
        used = self._budget.get(budget[0], 0) + 1
        db.execute("BEGIN")
        try:
            db.execute(
                "INSERT INTO budget (key, used) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET used=excluded.used",
                (budget[0], used),
            )
            db.execute(
                _INSERT_REQUEST,
                (fp, self._next_seq(), cls, depth, -priority, QUEUED, url, _host(url), blob()),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._budget[budget[0]] = used
        return self._added(fp, cls, known)

    def _added(self, fp: str, cls: int, known: tuple[int, int] | None) -> str:
        self._known[fp] = (cls, QUEUED)
        self._internal_queued += cls == INTERNAL
        if known is None:
            self._queued += 1
            return "added"
        return "upgraded"  # a queued deferred row: already counted in _queued

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    @property
    def internal_queued(self) -> int:
        """Internal (university) requests queued."""
        return self._internal_queued

    @property
    def pending(self) -> int:
        """Requests queued (including deferred ones that may still turn out seen)."""
        return self._queued

    def pop(self, gate: Gate) -> tuple[str, bytes] | None:
        """The next request to send (fingerprint, blob) and mark it in flight, or None when
        nothing may leave now (see the module docstring for the order). Requests for the
        hosts in ``gate.busy`` are passed over (up to :data:`LOOKAHEAD` rows per class)."""
        db = self._db
        internal_waiting = False
        if self._internal_queued:
            (depth,) = db.execute(
                "SELECT depth FROM request WHERE state=? AND cls=? ORDER BY depth LIMIT 1",
                (QUEUED, INTERNAL),
            ).fetchone()
            internal_waiting = True
            if gate.internal_min_depth is None or depth <= gate.internal_min_depth:
                fp = self._first(
                    "cls=? AND depth=? ORDER BY priority, seq", (INTERNAL, depth), gate.busy
                )
                if fp is not None:
                    return self._take(fp)
        fp = self._first("cls=? ORDER BY priority, seq", (EXTERNAL,), gate.busy)
        if fp is not None:
            return self._take(fp)
        if internal_waiting or gate.internal_min_depth is not None:
            return None
        # a deferred row whose page the owner's crawl reached was upgraded in place (same
        # fingerprint), so what is left here was not reached: fetch it now
        fp = self._first("cls=? ORDER BY priority, seq", (DEFERRED,), gate.busy)
        return None if fp is None else self._take(fp)

    def _first(self, where: str, args: tuple[Any, ...], busy: frozenset[str]) -> str | None:
        rows = self._db.execute(
            f"SELECT fp, host FROM request WHERE state=? AND {where} LIMIT {LOOKAHEAD}",
            (QUEUED, *args),
        )
        for fp, host in rows:
            if host not in busy:
                return fp  # type: ignore[no-any-return]
        return None

    def _take(self, fp: str) -> tuple[str, bytes]:
        (blob,) = self._db.execute("SELECT request FROM request WHERE fp=?", (fp,)).fetchone()
        self._db.execute("UPDATE request SET state=? WHERE fp=?", (IN_FLIGHT, fp))
        cls, _ = self._known[fp]
        self._known[fp] = (cls, IN_FLIGHT)
        self._queued -= 1
        self._internal_queued -= cls == INTERNAL
        return fp, blob

    def parsed(self, fp: str) -> None:
        """The callback of request ``fp`` is through. Nothing to do here: the depth order
        follows the requests the engine has in progress (a crawl farm's frontier is told,
        :meth:`crawler.redis_frontier.RedisFrontier.parsed`)."""

    # -- answers ----------------------------------------------------------------------------
    def received(self, fp: str, response: bytes) -> None:
        """Keep the answer of a request until its page is stored."""
        if fp in self._known:
            self._db.execute(
                "UPDATE request SET state=?, response=? WHERE fp=?", (RECEIVED, response, fp)
            )
            self._known[fp] = (self._known[fp][0], RECEIVED)

    def cached_response(self, fp: str) -> bytes | None:
        """The stored answer of a request (a restart replays it), or None."""
        row = self._db.execute("SELECT response FROM request WHERE fp=?", (fp,)).fetchone()
        return row[0] if row else None

    def done(self, fps: Iterable[str]) -> None:
        """Mark requests whose pages are committed; their stored answers are dropped."""
        rows = [(DONE, fp) for fp in fps if fp in self._known]
        if not rows:
            return
        db = self._db
        db.execute("BEGIN")
        db.executemany("UPDATE request SET state=?, response=NULL WHERE fp=?", rows)
        db.execute("COMMIT")
        for _, fp in rows:
            self._known[fp] = (self._known[fp][0], DONE)

    def robots(self, url: str) -> bytes | None:
        """A stored robots.txt answer."""
        row = self._db.execute("SELECT response FROM robots WHERE url=?", (url,)).fetchone()
        return row[0] if row else None

    def store_robots(self, url: str, response: bytes) -> None:
        self._db.execute(
            "INSERT INTO robots (url, response) VALUES (?, ?) ON CONFLICT (url) DO NOTHING",
            (url, response),
        )

    def record_redirect(self, url: str, target: str) -> None:
        """Remember that ``url`` (normalised) redirected to ``target``."""
        self._db.execute(
            "INSERT INTO redirect (url, target) VALUES (?, ?) "
            "ON CONFLICT (url) DO UPDATE SET target=excluded.target",
            (url, target),
        )

    def redirects(self) -> dict[str, str]:
        """Every redirect seen by the job: normalised URL -> target."""
        return dict(self._db.execute("SELECT url, target FROM redirect"))

    # -- inspection ---------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Requests by state."""
        names = {QUEUED: "queued", IN_FLIGHT: "in_flight", RECEIVED: "received", DONE: "done"}
        out = dict.fromkeys(names.values(), 0)
        for state, n in self._db.execute("SELECT state, COUNT(*) FROM request GROUP BY state"):
            out[names[state]] = n
        return out

    def urls(self, state: int | None = None) -> list[str]:
        """The URLs of the stored requests (of one state)."""
        if state is None:
            return [r[0] for r in self._db.execute("SELECT url FROM request ORDER BY seq")]
        return [
            r[0]
            for r in self._db.execute(
                "SELECT url FROM request WHERE state=? ORDER BY seq", (state,)
            )
        ]


def _host(url: str) -> str:
    """The host of a URL as Scrapy's downloader keys its slots (lower case, no port)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def dumps(obj: object) -> bytes:
    """Pickle for the frontier's blobs (highest protocol)."""
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def loads(blob: bytes) -> Any:
    """Unpickle a frontier blob (written by this process or a previous one of the job)."""
    return pickle.loads(blob)
