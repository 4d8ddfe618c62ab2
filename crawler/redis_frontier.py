"""A crawl frontier shared by many crawler processes through Redis (a crawl farm).

The same contract as :class:`crawler.frontier.SQLiteFrontier` (the one-process SQLite
frontier), kept in Redis so that any number of crawler processes, on one machine or
many, share one queue, one seen set, one set of budgets and one record of answers. Every
operation is one Lua script, so it is atomic across processes.

Keys, under the run's prefix ``P`` (``<redis_key>:run:<run id>``):

``P:dupefilter``
    the seen set: request fingerprints, scrapy-redis's ``RFPDupeFilter`` set
    (:class:`crawler.redis_scheduler.FingerprintDupeFilter`); checked and filled inside
    the enqueue script so that the check, the budget and the queueing are one step;
``P:q0``, ``P:q1``, ``P:q2``, ``P:q3``
    the queues of the four request classes (internal, external, deferred, extra), sorted
    sets of ``fingerprint|host`` scored by (depth,) priority and arrival;
``P:h0``, ``P:h3``, ``P:held``, ``P:opened``
    the held requests of the levelled classes (internal, extra) whose level has not
    started: sorted sets of ``budget\tlinks\tposition\turl\tfingerprint`` scored by
    depth, the numbers fixed-width, ``links`` led by the priority rank and counting down
    (so one level's are in the order the SQLite frontier admits them: by budget, priority,
    most linked, earliest link, URL,
    byte by byte), each held request's queue entry, priority rank, budget size and set
    member; the started levels; ``P:inlink`` the (request, linking page) pairs counted;
``P:req``
    the serialised requests; ``P:budget`` the used budgets;
``P:inflight``
    requests handed to a process and not yet stored: fingerprint -> worker, class,
    score, host; ``P:fi`` the internal ones by depth (the level-synchronous order) and
    ``P:fx`` the external (score 0) and extra ones (score: the hop) until their callback
    is through;
``P:hostn``, ``P:hostt``
    requests in flight per host and the earliest time the next may leave (per-host
    concurrency and delay enforced across all processes);
``P:resp``, ``P:robots``, ``P:redirect``
    answers kept until their page is stored (replayed after a crash), robots.txt
    answers, redirects seen;
``P:workers``, ``P:joined``
    each live process and its last heartbeat; every process that took part.

Order: as in :mod:`crawler.frontier` -- internal requests breadth-first and
level-synchronous *across all processes* (depth ``d + 1`` leaves only when no request of
depth ``<= d`` is queued first or still being parsed anywhere), external requests fill
the pipe, deferred ones wait for every internal request and are dropped when the owner's
crawl reached them, extra pages wait for every internal and external request and go hop
by hop. Budgets are shared out when a level starts, in the order of prominence of one
process, so a farm fetches the pages one process would. A process that dies (no
heartbeat for ``lease`` seconds) has its requests in flight queued again by the others;
answers it received but did not store are replayed, not fetched again.

The crawl is finished when every queue is empty and nothing is in flight: each process
then stops by itself.

Costs: each operation is O(log n) in the queued requests (sorted sets) plus a look-ahead
of at most ``lookahead`` queue entries for hosts that may not be fetched now; memory is
in Redis (about 0.5 KiB per request until its page is stored, a fingerprint per seen
request after).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from core.defaults import CRAWL_WORKER_LEASE
from crawler.frontier import DEFERRED, EXTERNAL, EXTRA, INTERNAL, Gate

#: queue entries looked at per class to find one whose host may be fetched now
LOOKAHEAD = 64
#: seconds without a heartbeat after which a process is taken for dead
DEFAULT_LEASE = CRAWL_WORKER_LEASE

_DEPTH = 1 << 40  # score = depth * 2**40 + priority rank * 2**32 + arrival
_RANK = 1 << 32

_RELEASE = """
local function release(fp)
  local e = redis.call('HGET', KEYS[8], fp)
  if not e then return false end
  local w, c, s, host, held = string.match(e, '^(.-)\\t(.-)\\t(.-)\\t(.-)\\t(.-)$')
  if held == '1' then redis.call('HINCRBY', KEYS[10], host, -1) end
  redis.call('HDEL', KEYS[8], fp)
  redis.call('ZREM', KEYS[9], fp)
  redis.call('ZREM', KEYS[18], fp)
  return true
end
"""

# KEYS: 1 seen 2 req 3 q0 4 q1 5 q2 6 seq 7 budget 8 inflight 9 fi 10 hostn 11 resp
# 12 workers 13 q3 14 held 15 h0 16 h3 17 opened 18 fx 19 inlink
# ARGV: fp member cls depth rank blob budget_key budget_limit dont_filter url position
# fixed_budgets source
_ADD = (
    _RELEASE
    + """
local fp, member, cls = ARGV[1], ARGV[2], tonumber(ARGV[3])
local depth, rank, blob = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local bkey, blimit = ARGV[7], tonumber(ARGV[8])
local queues = {KEYS[3], KEYS[4], KEYS[5], KEYS[13]}
local heldsets = {[0] = KEYS[15], [3] = KEYS[16]}
local function score()
  local seq = redis.call('INCR', KEYS[6])
  if cls == 0 or cls == 3 then return depth * 1099511627776 + rank * 4294967296 + seq end
  return rank * 4294967296 + seq
end
local hold = ARGV[12] == '1' and bkey ~= '' and heldsets[cls] ~= nil
  and redis.call('SISMEMBER', KEYS[17], cls .. ':' .. depth) == 0
local upgraded, held = 0, nil
-- a held request's set member: budget, links counting down and position (fixed width:
-- the set's byte order is the order of prominence), then URL and fingerprint
-- (the links field leads with the priority rank: a likely trap, crawler.traps, comes last)
local function held_member(key, inv, pos, rest)
  return key .. '\t' .. string.format('%012d', inv) .. '\t' .. string.format('%09d', pos)
    .. '\t' .. rest
end
if ARGV[9] == '1' then
  release(fp)
  redis.call('HDEL', KEYS[11], fp)
  redis.call('SADD', KEYS[1], fp)
  redis.call('HSET', KEYS[2], fp, blob)
  redis.call('ZADD', queues[cls + 1], score(), member)
  return 'requeued'
end
if redis.call('SISMEMBER', KEYS[1], fp) == 1 then
  held = redis.call('HGET', KEYS[14], fp)
  if held and hold then  -- one more link to a held request: count it, keep the first place
    -- (and take the earlier level, or the higher priority at its level, with its blob)
    local hcls, hmember, hrank, hlimit, zmember =
      string.match(held, '^(.-)\t(.-)\t(.-)\t(.-)\t(.*)$')
    local key, inv, pos, rest = string.match(zmember, '^(.-)\t(.-)\t(.-)\t(.*)$')
    local new = redis.call('SADD', KEYS[19], fp .. '\t' .. ARGV[13])
    local set = heldsets[tonumber(hcls)]
    local level, r = tonumber(redis.call('ZSCORE', set, zmember)), tonumber(hrank)
    inv = tonumber(inv) - new
    if depth < level or (depth == level and rank < r) then
      inv = rank * 1000000000 + inv % 1000000000
      level, hrank = depth, tostring(rank)
      redis.call('HSET', KEYS[2], fp, blob)
    end
    local moved = held_member(key, inv, math.min(tonumber(pos), tonumber(ARGV[11])), rest)
    redis.call('ZREM', set, zmember)
    redis.call('ZADD', set, level, moved)
    redis.call('HSET', KEYS[14], fp,
               hcls .. '\t' .. hmember .. '\t' .. hrank .. '\t' .. hlimit .. '\t' .. moved)
    return 'duplicate'
  end
  -- a held request is upgraded in place by one that may leave now (not a deferred one)
  if not held or hold or cls == 2 then return 'duplicate' end
end
if cls == 2 then
  if redis.call('ZSCORE', KEYS[5], member) then return 'duplicate' end
  redis.call('HSET', KEYS[2], fp, blob)
  redis.call('ZADD', KEYS[5], score(), member)
  return 'added'
end
if bkey ~= '' then
  local used = tonumber(redis.call('HGET', KEYS[7], bkey) or '0')
  if used >= blimit then return 'budget' end
  if not hold then redis.call('HINCRBY', KEYS[7], bkey, 1) end
end
if held then
  local hcls, zmember = string.match(held, '^(.-)\t.-\t.-\t.-\t(.*)$')
  redis.call('ZREM', heldsets[tonumber(hcls)], zmember)
  redis.call('HDEL', KEYS[14], fp)
  upgraded = 1
end
redis.call('SADD', KEYS[1], fp)
upgraded = upgraded + redis.call('ZREM', KEYS[5], member)
redis.call('HSET', KEYS[2], fp, blob)
if hold then
  local new = redis.call('SADD', KEYS[19], fp .. '\t' .. ARGV[13])
  local zmember = held_member(bkey, rank * 1000000000 + 999999999 - new, tonumber(ARGV[11]),
                              ARGV[10] .. '\t' .. fp)
  redis.call('ZADD', heldsets[cls], depth, zmember)
  redis.call('HSET', KEYS[14], fp,
             cls .. '\t' .. member .. '\t' .. rank .. '\t' .. blimit .. '\t' .. zmember)
  if upgraded > 0 then return 'upgraded' end
  return 'held'
end
redis.call('ZADD', queues[cls + 1], score(), member)
if upgraded > 0 then return 'upgraded' end
return 'added'
"""
)

# KEYS: 1 seen 2 req 3 q0 4 q1 5 q2 6 inflight 7 fi 8 hostn 9 hostt 10 q3 11 held 12 h0
# 13 h3 14 opened 15 budget 16 seq 17 fx
# ARGV: worker concurrency delay_ms lookahead busy-host...
_POP = """
local worker = ARGV[1]
local LEVEL = 1099511627776
local conc, delay, look = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local busy = {}
for i = 5, #ARGV do busy[ARGV[i]] = true end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function split(member)
  local bar = string.find(member, '|', 1, true)
  return string.sub(member, 1, bar - 1), string.sub(member, bar + 1)
end
local function free(host)
  if busy[host] then return false end
  if conc > 0 and tonumber(redis.call('HGET', KEYS[8], host) or '0') >= conc then
    return false
  end
  if delay > 0 and tonumber(redis.call('HGET', KEYS[9], host) or '0') > now then
    return false
  end
  return true
end
local function take(queue, member, score, cls, depth)
  local fp, host = split(member)
  redis.call('ZREM', queue, member)
  local entry = worker .. '\\t' .. cls .. '\\t' .. score .. '\\t' .. host .. '\\t1'
  redis.call('HSET', KEYS[6], fp, entry)
  if cls == 0 then redis.call('ZADD', KEYS[7], depth, fp)
  else redis.call('ZADD', KEYS[17], cls == 3 and depth or 0, fp) end
  redis.call('HINCRBY', KEYS[8], host, 1)
  if delay > 0 then redis.call('HSET', KEYS[9], host, now + delay) end
  return {fp, redis.call('HGET', KEYS[2], fp)}
end
-- start a level: each budget admits its held requests in the order of their set members
-- (most linked, earliest link, URL) while it lasts
local function open(cls, depth, queue, heldset)
  if redis.call('SADD', KEYS[14], cls .. ':' .. depth) == 0 then return end
  local rows = redis.call('ZRANGEBYSCORE', heldset, depth, depth)
  local bkey, used = nil, 0
  for _, zmember in ipairs(rows) do
    local key, fp = string.match(zmember, '^(.-)\t.*\t(.-)$')
    if key ~= bkey then
      if bkey then redis.call('HSET', KEYS[15], bkey, used) end
      bkey, used = key, tonumber(redis.call('HGET', KEYS[15], key) or '0')
    end
    local e = redis.call('HGET', KEYS[11], fp)
    local _, member, rank, limit = string.match(e, '^(.-)\t(.-)\t(.-)\t(.-)\t')
    if used < tonumber(limit) then
      used = used + 1
      local seq = redis.call('INCR', KEYS[16])
      redis.call('ZADD', queue, depth * LEVEL + tonumber(rank) * 4294967296 + seq, member)
    else
      redis.call('SREM', KEYS[1], fp)
      redis.call('HDEL', KEYS[2], fp)
    end
    redis.call('HDEL', KEYS[11], fp)
  end
  if bkey then redis.call('HSET', KEYS[15], bkey, used) end
  redis.call('ZREMRANGEBYSCORE', heldset, depth, depth)
end
-- the smallest depth queued or held in a levelled class, or nil
local function first_level(queue, heldset)
  local q = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
  local h = redis.call('ZRANGE', heldset, 0, 0, 'WITHSCORES')
  local depth = nil
  if #q > 0 then depth = math.floor(tonumber(q[2]) / LEVEL) end
  if #h > 0 and (depth == nil or tonumber(h[2]) < depth) then depth = tonumber(h[2]) end
  return depth
end
local function level(cls, depth, queue, heldset)
  open(cls, depth, queue, heldset)
  local lo = depth * LEVEL
  local rows = redis.call('ZRANGEBYSCORE', queue, lo, '(' .. (lo + LEVEL),
                          'WITHSCORES', 'LIMIT', 0, look)
  for i = 1, #rows, 2 do
    local _, host = split(rows[i])
    if free(host) then return take(queue, rows[i], rows[i + 1], cls, depth) end
  end
  return nil
end
local fimin = redis.call('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES')
local internal = first_level(KEYS[3], KEYS[12])
if internal ~= nil and (#fimin == 0 or internal <= tonumber(fimin[2])) then
  local taken = level(0, internal, KEYS[3], KEYS[12])
  if taken then return taken end
end
local rows = redis.call('ZRANGE', KEYS[4], 0, look - 1, 'WITHSCORES')
for i = 1, #rows, 2 do
  local _, host = split(rows[i])
  if free(host) then return take(KEYS[4], rows[i], rows[i + 1], 1, 0) end
end
if internal ~= nil or #fimin > 0 then return false end
rows = redis.call('ZRANGE', KEYS[5], 0, look - 1, 'WITHSCORES')
for i = 1, #rows, 2 do
  local fp, host = split(rows[i])
  if redis.call('SISMEMBER', KEYS[1], fp) == 1 then
    redis.call('ZREM', KEYS[5], rows[i])
  elseif free(host) then
    redis.call('SADD', KEYS[1], fp)
    return take(KEYS[5], rows[i], rows[i + 1], 1, 0)
  end
end
-- extra pages: when no external request is queued or in flight, hop by hop
if redis.call('ZCARD', KEYS[4]) > 0 then return false end
local extra = first_level(KEYS[10], KEYS[13])
if extra == nil then return false end
-- an external request (score 0) or an extra one of a smaller hop still being parsed
local fxmin = redis.call('ZRANGE', KEYS[17], 0, 0, 'WITHSCORES')
if #fxmin > 0 and tonumber(fxmin[2]) < extra then return false end
return level(3, extra, KEYS[10], KEYS[13]) or false
"""

# KEYS: as _ADD; ARGV: fp response
_RECEIVED = """
local e = redis.call('HGET', KEYS[8], ARGV[1])
if not e then return 0 end
redis.call('HSET', KEYS[11], ARGV[1], ARGV[2])
local w, c, s, host, held = string.match(e, '^(.-)\\t(.-)\\t(.-)\\t(.-)\\t(.-)$')
if held == '1' then
  redis.call('HINCRBY', KEYS[10], host, -1)
  redis.call('HSET', KEYS[8], ARGV[1], w .. '\\t' .. c .. '\\t' .. s .. '\\t' .. host .. '\\t0')
end
return 1
"""

# KEYS: as _ADD; ARGV: fp...
_DONE = (
    _RELEASE
    + """
local n = 0
for i = 1, #ARGV do
  if release(ARGV[i]) then n = n + 1 end
  redis.call('HDEL', KEYS[11], ARGV[i])
  redis.call('HDEL', KEYS[2], ARGV[i])
end
return n
"""
)

# KEYS: as _ADD plus 12 workers; ARGV: now_ms lease_ms worker-to-drop-or-empty
# Queue again the requests in flight of processes without a heartbeat for `lease` (and of
# the given worker, which is closing); their received answers stay for a replay.
_REAP = (
    _RELEASE
    + """
local now, lease, closing = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local dead = {}
local beats = redis.call('HGETALL', KEYS[12])
for i = 1, #beats, 2 do
  if beats[i] == closing or now - tonumber(beats[i + 1]) > lease then
    dead[beats[i]] = true
    redis.call('HDEL', KEYS[12], beats[i])
  end
end
if closing ~= '' then dead[closing] = true end
local queues = {KEYS[3], KEYS[4], KEYS[5], KEYS[13]}
local entries = redis.call('HGETALL', KEYS[8])
local n = 0
for i = 1, #entries, 2 do
  local w, c, s, host, held = string.match(entries[i + 1], '^(.-)\\t(.-)\\t(.-)\\t(.-)\\t(.-)$')
  if dead[w] then
    release(entries[i])
    redis.call('ZADD', queues[tonumber(c) + 1], s, entries[i] .. '|' .. host)
    n = n + 1
  end
end
return n
"""
)


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").replace("|", "")
    except ValueError:
        return ""


def worker_name() -> str:
    """A name unique to this process: host, process id and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def connect(url: str) -> Any:
    """A Redis client for ``url``, checked with a PING.

    Raises
    ------
    ConfigError
        The URL is malformed or the server does not answer; the message says what to do.
    """
    import redis

    from core.exceptions import ConfigError

    try:
        server = redis.Redis.from_url(url, socket_connect_timeout=10, socket_timeout=60)
        server.ping()
    except ValueError as exc:
        raise ConfigError(
            f"--redis {url!r} is not a Redis URL ({exc}): use redis://HOST:PORT/DB"
        ) from exc
    except redis.RedisError as exc:
        raise ConfigError(
            f"cannot reach Redis at {url}: {exc}. Start redis-server (or fix the URL) and try again"
        ) from exc
    return server


def run_prefix(base_key: str, run_id: int) -> str:
    """The key prefix of one crawl run's frontier.

    >>> run_prefix("webometrics", 7)
    'webometrics:run:7'
    """
    return f"{base_key}:run:{run_id}"


class RedisFrontier:
    """The shared request store (see the module docstring).

    Parameters
    ----------
    server : redis.Redis
        The connection (:func:`connect`).
    prefix : str
        The run's key prefix (:func:`run_prefix`).
    worker : str, optional
        This process's name (default :func:`worker_name`).
    host_concurrency : int
        Requests in flight per host across all processes (0: no limit).
    host_delay : float
        Seconds between two requests to one host across all processes.
    lease : float
        Seconds without a heartbeat after which a process's requests are taken back.
    fixed_budgets : bool, default True
        As :class:`crawler.frontier.SQLiteFrontier`'s (every process of a farm has the run's).
    """

    def __init__(
        self,
        server: Any,
        prefix: str,
        *,
        worker: str | None = None,
        host_concurrency: int = 0,
        host_delay: float = 0.0,
        lease: float = DEFAULT_LEASE,
        fixed_budgets: bool = True,
    ) -> None:
        self.fixed_budgets = fixed_budgets
        self.server = server
        self.prefix = prefix
        self.worker = worker or worker_name()
        self.host_concurrency = int(host_concurrency)
        self.host_delay_ms = round(host_delay * 1000)
        self.lease = float(lease)
        k = self.key
        self.seen_key = k("dupefilter")
        self._keys = [
            self.seen_key, k("req"), k("q0"), k("q1"), k("q2"), k("seq"), k("budget"),
            k("inflight"), k("fi"), k("hostn"), k("resp"), k("workers"),
            k("q3"), k("held"), k("h0"), k("h3"), k("opened"), k("fx"), k("inlink"),
        ]  # fmt: skip
        self._pop_keys = [
            *self._keys[:5], k("inflight"), k("fi"), k("hostn"), k("hostt"),
            k("q3"), k("held"), k("h0"), k("h3"), k("opened"), k("budget"), k("seq"), k("fx"),
        ]  # fmt: skip
        self._add = server.register_script(_ADD)
        self._pop = server.register_script(_POP)
        self._received = server.register_script(_RECEIVED)
        self._done = server.register_script(_DONE)
        self._reap = server.register_script(_REAP)
        self.resumed = bool(server.exists(k("seq")))

    def key(self, name: str) -> str:
        """The Redis key of one part of the frontier."""
        return f"{self.prefix}:{name}"

    # -- life cycle -------------------------------------------------------------------------
    def heartbeat(self) -> int:
        """Say this process is alive and take back the requests of dead ones; return how
        many requests were queued again."""
        now = int(time.time() * 1000)
        pipe = self.server.pipeline(transaction=False)
        pipe.hset(self.key("workers"), self.worker, now)
        pipe.sadd(self.key("joined"), self.worker)
        pipe.execute()
        return int(self._reap(keys=self._keys, args=[now, int(self.lease * 1000), ""]))

    def leave(self) -> int:
        """This process stops: its requests in flight go back to the queue (their received
        answers stay, to be replayed by another process)."""
        now = int(time.time() * 1000)
        return int(self._reap(keys=self._keys, args=[now, int(self.lease * 1000), self.worker]))

    def close(self) -> None:
        """Nothing to flush: every change is already in Redis."""

    def clear(self) -> int:
        """Delete every key of the run (after it finished); return how many."""
        keys = list(self.server.scan_iter(match=f"{self.prefix}:*", count=1000))
        for start in range(0, len(keys), 1000):
            self.server.delete(*keys[start : start + 1000])
        return len(keys)

    # -- scheduling -----------------------------------------------------------------------
    def add(
        self,
        fp: str,
        url: str,
        cls: int,
        depth: int,
        blob: Any,
        *,
        priority: int = 0,
        budget: tuple[str, int] | None = None,
        dont_filter: bool = False,
        position: int = 0,
        source: str = "",
    ) -> str:
        """Store a request; return ``added``, ``held``, ``requeued``, ``upgraded``,
        ``duplicate`` or ``budget`` (as :meth:`crawler.frontier.SQLiteFrontier.add`)."""
        data = blob() if callable(blob) else blob
        rank = min(max(128 - int(priority), 0), 255)
        args = [
            fp, f"{fp}|{_host(url)}", cls, min(int(depth), 4095), rank, data,
            budget[0] if budget else "", budget[1] if budget else 0, int(dont_filter), url,
            min(max(int(position), 0), 999_999_999), int(self.fixed_budgets), source,
        ]  # fmt: skip
        result = self._add(keys=self._keys, args=args)
        return result.decode() if isinstance(result, bytes) else str(result)

    def pop(self, gate: Gate) -> tuple[str, bytes] | None:
        """The next request for this process (fingerprint, blob), marked in flight, or
        None when nothing may leave now."""
        args = [self.worker, self.host_concurrency, self.host_delay_ms, LOOKAHEAD, *gate.busy]
        row = self._pop(keys=self._pop_keys, args=args)
        if not row:
            return None
        fp, blob = row
        return fp.decode(), blob

    def _counts(self) -> list[int]:
        pipe = self.server.pipeline(transaction=False)
        for name in ("q0", "q1", "q2", "q3", "held", "inflight"):
            (pipe.hlen if name in ("held", "inflight") else pipe.zcard)(self.key(name))
        return [int(n) for n in pipe.execute()]

    @property
    def pending(self) -> int:
        """Requests queued or held, in every process's view (deferred ones included)."""
        return sum(self._counts()[:5])

    @property
    def held(self) -> int:
        """Requests held until their level starts (counted in :attr:`pending`)."""
        return int(self.server.hlen(self.key("held")))

    @property
    def internal_queued(self) -> int:
        """Internal requests queued or held."""
        pipe = self.server.pipeline(transaction=False)
        pipe.zcard(self.key("q0"))
        pipe.zcard(self.key("h0"))
        return sum(int(n) for n in pipe.execute())

    def finished(self) -> bool:
        """True when no request is queued or in flight anywhere: the crawl is over."""
        return not any(self._counts())

    def parsed(self, fp: str) -> None:
        """The callback of a request is through (its links are queued): the next depth
        (internal), the extra pages (external) or the next hop (extra) need not wait for
        it any more, though its page is not stored yet."""
        pipe = self.server.pipeline(transaction=False)
        pipe.zrem(self.key("fi"), fp)
        pipe.zrem(self.key("fx"), fp)
        pipe.execute()

    # -- answers ----------------------------------------------------------------------------
    def received(self, fp: str, response: bytes) -> None:
        """Keep the answer of a request until its page is stored; free its host slot."""
        self._received(keys=self._keys, args=[fp, response])

    def cached_response(self, fp: str) -> bytes | None:
        return self.server.hget(self.key("resp"), fp)  # type: ignore[no-any-return]

    def done(self, fps: Iterable[str]) -> None:
        """Requests whose pages are committed: out of flight, answers dropped."""
        fps = list(fps)
        for start in range(0, len(fps), 500):
            self._done(keys=self._keys, args=fps[start : start + 500])

    def robots(self, url: str) -> bytes | None:
        return self.server.hget(self.key("robots"), url)  # type: ignore[no-any-return]

    def store_robots(self, url: str, response: bytes) -> None:
        self.server.hsetnx(self.key("robots"), url, response)

    def record_redirect(self, url: str, target: str) -> None:
        self.server.hset(self.key("redirect"), url, target)

    def redirects(self) -> dict[str, str]:
        return {
            k.decode(): v.decode() for k, v in self.server.hgetall(self.key("redirect")).items()
        }

    # -- inspection -------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Requests queued and in flight, fingerprints seen, live processes (``workers``)
        and every process that took part (``joined``)."""
        *queued, inflight = self._counts()
        return {
            "queued": sum(queued),
            "in_flight": inflight,
            "seen": int(self.server.scard(self.seen_key)),
            "workers": int(self.server.hlen(self.key("workers"))),
            "joined": int(self.server.scard(self.key("joined"))),
        }

    def in_flight(self) -> Iterator[tuple[str, str]]:
        """(fingerprint, worker) of every request in flight."""
        for fp, entry in self.server.hgetall(self.key("inflight")).items():
            yield fp.decode(), entry.decode().split("\t", 1)[0]


__all__ = [
    "DEFAULT_LEASE",
    "DEFERRED",
    "EXTERNAL",
    "EXTRA",
    "INTERNAL",
    "LOOKAHEAD",
    "RedisFrontier",
    "connect",
    "run_prefix",
    "worker_name",
]
