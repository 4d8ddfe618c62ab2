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

Order. Requests come in four classes: ``internal`` (a university's own pages, with a
depth), ``external`` (external targets, sitemaps, citing pages), ``deferred`` (external
targets inside another crawled university's domains) and ``extra`` (more pages of an
external domain, with a hop: 1 when linked from a target, ``h + 1`` from an extra page of
hop ``h``). Internal requests are served breadth-first and *level-synchronously*: depth
``d + 1`` starts only when no request of depth ``<= d`` is in progress, so every page gets
its shortest depth and a depth-limited crawl sees every page of the manifest's depths.
External requests fill the pipe meanwhile. Deferred requests wait until no internal
request is queued or in progress, and are deduplicated when they leave the queue: if the
owning university's crawl reached the page itself, it is not fetched again. Extra requests
wait until no internal or external request is queued or in progress, and go level by
level (hop ``h + 1`` when no extra of hop ``<= h`` is left).

Budgets, the same in every run. A request that counts against a budget (a university's
pages, a domain's extra pages) and arrives before its level (class and depth) has started
is *held*, not counted. When the level starts, every request of it is known (the level
before is through), and each budget admits its held requests up to what is left of it,
the most prominent first: those of a higher priority (a likely crawler trap has a lower
one, and comes one level later than its depth, :mod:`crawler.traps`), the most linked
from the pages of the level before, then the earliest in its page (the smallest link
position), then by URL (the order of backlink counts, Cho, Garcia-Molina & Page 1998,
"Efficient crawling through URL ordering"). The others are dropped (and may come again
by another way, e.g. as a target).
So which pages fill a budget depends on the pages, not on the order concurrent answers
arrived in: two crawls of an unchanged web fetch the same pages, in one process as in a
crawl farm. A request that arrives after its level started (a redirect hop, a page of a
sitemap read while depth 0 runs) is counted when it arrives, as long as the budget lasts.
The price: extra pages cannot fill the pipe while the universities are crawled (a crawl
farm of distant sites is slower, ``bench/results/scale.md``); ``[crawl] fixed_budgets =
false`` admits the requests found first and serves extra pages with the targets.

Costs: each operation is O(log n) in the number of stored requests (B-tree indexes); the
seen set is also held in memory (one dict entry per request).
"""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

QUEUED, IN_FLIGHT, RECEIVED, DONE, HELD = 0, 1, 2, 3, 4
LOOKAHEAD = 64  # queued rows looked at per class to find one whose host is not busy
INTERNAL, EXTERNAL, DEFERRED, EXTRA = 0, 1, 2, 3
LEVELLED = (INTERNAL, EXTRA)  # the classes served level by level, whose budgets are held

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
    response BLOB,
    bkey TEXT,
    blimit INTEGER,
    inlinks INTEGER,
    position INTEGER
);
CREATE INDEX IF NOT EXISTS ix_request_queue ON request (state, cls, depth, priority, seq);
CREATE TABLE IF NOT EXISTS budget (key TEXT PRIMARY KEY, used INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS inlink (fp TEXT NOT NULL, source TEXT NOT NULL,
                                   PRIMARY KEY (fp, source));
CREATE TABLE IF NOT EXISTS opened (cls INTEGER NOT NULL, depth INTEGER NOT NULL,
                                   PRIMARY KEY (cls, depth));
CREATE TABLE IF NOT EXISTS robots (url TEXT PRIMARY KEY, response BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS redirect (url TEXT PRIMARY KEY, target TEXT NOT NULL);
"""


_INSERT_REQUEST = (
    "INSERT INTO request (fp, seq, cls, depth, priority, state, url, host, request, bkey, "
    "blimit, inlinks, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (fp) DO UPDATE SET "
    "seq=excluded.seq, cls=excluded.cls, depth=excluded.depth, state=excluded.state, "
    "priority=excluded.priority, request=excluded.request, bkey=excluded.bkey, "
    "blimit=excluded.blimit, inlinks=excluded.inlinks, position=excluded.position"
)


@dataclass(frozen=True)
class Gate:
    """What the engine has in progress, for the level-synchronous order.

    Attributes
    ----------
    internal_min_depth : int or None
        The smallest depth of an internal request in progress (None: none in progress).
    external_busy : bool
        An external request is in progress (its answer may still link to extra pages).
    extra_min_depth : int or None
        The smallest hop of an extra request in progress (None: none in progress).
    busy : frozenset of str
        Hosts whose downloader slot already holds requests waiting for their turn (a
        politeness delay or the per-host concurrency): more would only wait there and hold
        back requests to other hosts.
    """

    internal_min_depth: int | None = None
    external_busy: bool = False
    extra_min_depth: int | None = None
    busy: frozenset[str] = frozenset()


class SQLiteFrontier:
    """The request store (see the module docstring).

    Parameters
    ----------
    path : path-like
        The SQLite file; created when missing, resumed when present.
    fixed_budgets : bool, default True
        Hold budgeted requests until their level starts (the same pages every run: see
        the module docstring); False: a budget admits the requests that come first.

    Examples
    --------
    >>> import tempfile, os
    >>> f = SQLiteFrontier(os.path.join(tempfile.mkdtemp(), "frontier.sqlite"))
    >>> f.add("a", "http://x.edu/", INTERNAL, 0, lambda: b"A")
    'added'
    >>> f.add("a", "http://x.edu/", INTERNAL, 0, lambda: b"A")
    'duplicate'
    >>> f.pop(Gate())
    ('a', b'A')
    >>> f.received("a", b"response"); f.cached_response("a")
    b'response'
    >>> f.done(["a"]); f.counts()
    {'queued': 0, 'in_flight': 0, 'received': 0, 'done': 1, 'held': 0}
    >>> f.close()
    """

    def __init__(self, path: str | Path, *, fixed_budgets: bool = True) -> None:
        self.path = Path(path)
        self.fixed_budgets = fixed_budgets
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        # fp -> (cls, state): the seen set, with what dedup and upgrades need
        self._known: dict[str, tuple[int, int]] = {}
        self._budget: dict[str, int] = {}
        self._opened: set[tuple[int, int]] = set()
        self.resumed = False
        self._seq = 0
        self._queued = 0
        self._internal_queued = 0
        self._held = 0
        #: requests to fetch again when the crawl resumes (:meth:`requeue`)
        self._again: set[str] = set()
        self._load()

    # -- life cycle ---------------------------------------------------------------------
    def _load(self) -> None:
        db = self._db
        columns = {row[1] for row in db.execute("PRAGMA table_info(request)")}
        for column, kind in (
            ("bkey", "TEXT"),
            ("blimit", "INTEGER"),
            ("inlinks", "INTEGER"),
            ("position", "INTEGER"),
        ):
            if column not in columns:  # a frontier file of a version without held requests
                db.execute(f"ALTER TABLE request ADD COLUMN {column} {kind}")
        if db.execute("SELECT 1 FROM request LIMIT 1").fetchone():
            self.resumed = True
            with self._transaction():
                # in flight: no answer came, ask again; received: replay the stored answer
                db.execute(
                    "UPDATE request SET state=? WHERE state IN (?, ?)",
                    (QUEUED, IN_FLIGHT, RECEIVED),
                )
        for fp, cls, state in db.execute("SELECT fp, cls, state FROM request"):
            self._known[fp] = (cls, state)
            if state in (QUEUED, HELD):
                self._queued += 1
                self._internal_queued += cls == INTERNAL
                self._held += state == HELD
        self._seq = db.execute("SELECT COALESCE(MAX(seq), 0) FROM request").fetchone()[0]
        self._budget = dict(db.execute("SELECT key, used FROM budget"))
        self._opened = {(c, d) for c, d in db.execute("SELECT cls, depth FROM opened")}

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
        position: int = 0,
        source: str = "",
    ) -> str:
        """Store a request; return ``added``, ``held`` (it waits for its level to start,
        then for its budget: see the module docstring), ``requeued``, ``upgraded``,
        ``duplicate`` or ``budget`` (its budget is spent; not stored).

        ``blob`` is called only when the request is stored. ``dont_filter`` (a retry)
        queues a known request again with its new blob. A deferred request that is still
        queued, or a held one, is upgraded in place by a request for the same URL that
        may leave now. A held request asked for again (another link to it) counts one more
        link, once per ``source`` (the page it was found on, so a page parsed again after a
        crash counts its links once), keeps the smaller ``position`` (the place of the
        link in its page) and takes the earlier level and the higher priority (so which
        page's link came first does not matter).
        """
        known = self._known.get(fp)
        held = (
            self.fixed_budgets
            and budget is not None
            and cls in LEVELLED
            and (cls, depth) not in self._opened
        )
        if known is not None:
            old_cls, state = known
            if dont_filter:
                self._db.execute(
                    "UPDATE request SET state=?, request=?, response=NULL, seq=? WHERE fp=?",
                    (QUEUED, blob(), self._next_seq(), fp),
                )
                if state not in (QUEUED, HELD):
                    self._queued += 1
                    self._internal_queued += old_cls == INTERNAL
                self._known[fp] = (old_cls, QUEUED)
                return "requeued"
            deferred = old_cls == DEFERRED and state == QUEUED and cls != DEFERRED
            if state == HELD and held:
                self._link(fp, source, position, depth, -priority, blob)
                return "duplicate"
            if not (deferred or (state == HELD and not held and cls != DEFERRED)):
                return "duplicate"
        if budget is not None and self._budget.get(budget[0], 0) >= budget[1]:
            return "budget"
        row = [fp, self._next_seq(), cls, depth, -priority, QUEUED, url, _host(url), blob()]
        db = self._db
        if held:
            assert budget is not None
            with self._transaction():
                db.execute(
                    _INSERT_REQUEST, (*row[:5], HELD, *row[6:], budget[0], budget[1], 0, position)
                )
                self._count_link(fp, source, position)
            return self._added(fp, cls, known, HELD)
        if budget is None:  # one statement: its own transaction
            db.execute(_INSERT_REQUEST, (*row, None, None, None, None))
            return self._added(fp, cls, known, QUEUED)
        used = self._budget.get(budget[0], 0) + 1
        with self._transaction():
            db.execute(
                "INSERT INTO budget (key, used) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET used=excluded.used",
                (budget[0], used),
            )
            db.execute(_INSERT_REQUEST, (*row, None, None, None, None))
        self._budget[budget[0]] = used
        return self._added(fp, cls, known, QUEUED)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One SQLite transaction: committed when the block ends, rolled back if it fails."""
        self._db.execute("BEGIN")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _link(
        self, fp: str, source: str, position: int, depth: int, rank: int, blob: Callable[[], bytes]
    ) -> None:
        """Count a link to a held request from ``source`` (once per source); a link of an
        earlier level (``depth``), or of a higher priority at its level (``rank``: the
        priority negated), moves the request there with its blob, whichever of its links
        came first (a link of a page the trap guard found barren comes a level later)."""
        row = self._db.execute("SELECT depth, priority FROM request WHERE fp=?", (fp,)).fetchone()
        with self._transaction():
            self._count_link(fp, source, position)
            if row is not None and (depth, rank) < tuple(row):
                self._db.execute(
                    "UPDATE request SET depth=?, priority=?, request=? WHERE fp=?",
                    (depth, rank, blob(), fp),
                )

    def _count_link(self, fp: str, source: str, position: int) -> None:
        """:meth:`_link` inside the caller's transaction."""
        new = self._db.execute(
            "INSERT OR IGNORE INTO inlink (fp, source) VALUES (?, ?)", (fp, source)
        ).rowcount
        self._db.execute(
            "UPDATE request SET inlinks=inlinks + ?, position=MIN(position, ?) WHERE fp=?",
            (new, position, fp),
        )

    def _added(self, fp: str, cls: int, known: tuple[int, int] | None, state: int) -> str:
        self._known[fp] = (cls, state)
        self._internal_queued += cls == INTERNAL
        self._held += (state == HELD) - (known is not None and known[1] == HELD)
        if known is None:
            self._queued += 1
            return "held" if state == HELD else "added"
        # a queued deferred row or a held one: already counted in _queued
        self._internal_queued -= known[0] == INTERNAL
        return "upgraded"

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    @property
    def internal_queued(self) -> int:
        """Internal (university) requests queued or held."""
        return self._internal_queued

    @property
    def pending(self) -> int:
        """Requests queued or held (including deferred ones that may still turn out seen)."""
        return self._queued

    @property
    def held(self) -> int:
        """Requests held until their level starts (counted in :attr:`pending`)."""
        return self._held

    def _open(self, cls: int, depth: int) -> None:
        """Start a level: each budget admits its held requests of the level, the most
        prominent first (see the module docstring), while it lasts; the others are dropped
        (forgotten: they may come again)."""
        if (cls, depth) in self._opened:
            return
        db = self._db
        rows = db.execute(
            "SELECT fp, bkey, blimit FROM request WHERE state=? AND cls=? AND depth=? "
            "ORDER BY bkey, priority, inlinks DESC, position, url, fp",
            (HELD, cls, depth),
        ).fetchall()
        used = {key: self._budget.get(key, 0) for _, key, _ in rows}
        admitted, dropped = [], []
        for fp, key, limit in rows:
            if used[key] < limit:
                used[key] += 1
                admitted.append(fp)
            else:
                dropped.append(fp)
        with self._transaction():
            db.executemany("UPDATE request SET state=? WHERE fp=?", [(QUEUED, f) for f in admitted])
            db.executemany("DELETE FROM request WHERE fp=?", [(f,) for f in dropped])
            db.executemany(
                "INSERT INTO budget (key, used) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET used=excluded.used",
                list(used.items()),
            )
            db.execute("INSERT OR IGNORE INTO opened (cls, depth) VALUES (?, ?)", (cls, depth))
        self._budget.update(used)
        self._opened.add((cls, depth))
        self._held -= len(rows)
        for fp in admitted:
            self._known[fp] = (cls, QUEUED)
        for fp in dropped:
            del self._known[fp]
        self._queued -= len(dropped)
        self._internal_queued -= len(dropped) * (cls == INTERNAL)

    def _first_level(self, cls: int) -> int | None:
        """The smallest depth of the queued or held requests of a class."""
        depths = [
            row[0]
            for state in (QUEUED, HELD)  # one index seek each
            for row in self._db.execute(
                "SELECT depth FROM request WHERE state=? AND cls=? ORDER BY depth LIMIT 1",
                (state, cls),
            )
        ]
        return min(depths, default=None)

    def _level(self, cls: int, depth: int, busy: frozenset[str]) -> tuple[str, bytes] | None:
        """Start a level if it has not started, and take its next request."""
        self._open(cls, depth)
        fp = self._first("cls=? AND depth=? ORDER BY priority, seq", (cls, depth), busy)
        return None if fp is None else self._take(fp)

    def pop(self, gate: Gate) -> tuple[str, bytes] | None:
        """The next request to send (fingerprint, blob) and mark it in flight, or None when
        nothing may leave now (see the module docstring for the order). Requests for the
        hosts in ``gate.busy`` are passed over (up to :data:`LOOKAHEAD` rows per class)."""
        internal = self._first_level(INTERNAL) if self._internal_queued else None
        if internal is not None and (
            gate.internal_min_depth is None or internal <= gate.internal_min_depth
        ):
            taken = self._level(INTERNAL, internal, gate.busy)
            if taken is not None:
                return taken
        fp = self._first("cls=? ORDER BY priority, seq", (EXTERNAL,), gate.busy)
        if fp is not None:
            return self._take(fp)
        if internal is not None or gate.internal_min_depth is not None:
            return None
        # a deferred row whose page the owner's crawl reached was upgraded in place (same
        # fingerprint), so what is left here was not reached: fetch it now
        fp = self._first("cls=? ORDER BY priority, seq", (DEFERRED,), gate.busy)
        if fp is not None:
            return self._take(fp)
        if gate.external_busy or self._first_level(EXTERNAL) is not None:
            return None
        extra = self._first_level(EXTRA)
        if extra is None or (gate.extra_min_depth is not None and extra > gate.extra_min_depth):
            return None
        return self._level(EXTRA, extra, gate.busy)

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
        """Mark requests whose pages are committed; their stored answers are dropped (but
        for those :meth:`requeue` gave back)."""
        rows = [(DONE, fp) for fp in fps if fp in self._known and fp not in self._again]
        if not rows:
            return
        with self._transaction():
            self._db.executemany("UPDATE request SET state=?, response=NULL WHERE fp=?", rows)
        for _, fp in rows:
            self._known[fp] = (self._known[fp][0], DONE)

    def requeue(self, fps: Iterable[str]) -> None:
        """Fetch these requests again when the crawl resumes: their answers (connection
        failures while the network was gone, :mod:`crawler.outage`) are dropped and they
        are left *in flight*, which a restart queues again; this process does not send
        them again, and a later :meth:`done` of their pages leaves them so."""
        again = [fp for fp in fps if fp in self._known]
        if not again:
            return
        with self._transaction():
            self._db.executemany(
                "UPDATE request SET state=?, response=NULL WHERE fp=?",
                [(IN_FLIGHT, fp) for fp in again],
            )
        self._again.update(again)

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
        names = {
            QUEUED: "queued",
            IN_FLIGHT: "in_flight",
            RECEIVED: "received",
            DONE: "done",
            HELD: "held",
        }
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
