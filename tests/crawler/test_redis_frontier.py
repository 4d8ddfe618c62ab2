"""The crawl farm's shared frontier on a real redis-server (started by the tests).

Each behaviour of the one-process frontier (order, seen set, budgets, deferred requests,
answers kept until stored) is checked for the shared one, and what only a farm needs:
two processes never get the same request, a dead process's requests are taken back and
its received answers replayed, per-host limits hold across processes, and the crawl is
over only when nothing is queued or in flight anywhere.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from crawler.frontier import DEFERRED, EXTERNAL, EXTRA, INTERNAL, Gate
from crawler.redis_frontier import RedisFrontier, connect, run_prefix

from .test_frontier import ORDERS


@pytest.fixture
def server(redis_server: Any) -> Any:
    return connect(redis_server.url)


@pytest.fixture
def prefix() -> str:
    return run_prefix(f"test-{uuid.uuid4().hex[:8]}", 1)


def frontier(server: Any, prefix: str, worker: str = "w1", **kw: Any) -> RedisFrontier:
    return RedisFrontier(server, prefix, worker=worker, **kw)


def drain(f: RedisFrontier) -> list[str]:
    out = []
    while (popped := f.pop(Gate())) is not None:
        out.append(popped[1].decode())
    return out


def test_seen_set_budget_and_order(server: Any, prefix: str) -> None:
    f = frontier(server, prefix)
    assert f.add("a1", "http://u.edu/a", INTERNAL, 1, b"a1") == "added"
    assert f.add("a1", "http://u.edu/a", INTERNAL, 1, b"a1") == "duplicate"
    assert f.add("r0", "http://u.edu/", INTERNAL, 0, b"r0") == "added"
    assert f.add("x", "http://ext.org/", EXTERNAL, 0, b"x") == "added"
    # before depth 1 starts a budgeted request is held; the budget is shared out later
    assert f.add("c1", "http://u.edu/c", INTERNAL, 1, b"c1", budget=("u1", 1)) == "held"
    assert f.add("b1", "http://u.edu/b", INTERNAL, 1, b"b1", budget=("u1", 1)) == "held"
    assert f.pending == 5 and f.internal_queued == 4 and f.held == 2
    # depth 0 first, then external while depth 0 is being parsed
    assert f.pop(Gate()) == ("r0", b"r0")
    assert f.pop(Gate()) == ("x", b"x")
    assert f.pop(Gate()) is None  # depth 1 waits for depth 0
    f.parsed("r0")
    assert sorted(drain(f)) == ["a1", "b1"]  # u1's one page: the first URL, b
    assert f.add("d1", "http://u.edu/d", INTERNAL, 1, b"d1", budget=("u1", 1)) == "budget"
    assert not f.finished()  # in flight until stored
    f.done(["r0", "x", "a1", "b1"])
    assert f.finished()
    assert f.counts()["seen"] == 4  # c1 was dropped and forgotten
    assert f.add("c1", "http://u.edu/c", EXTERNAL, 0, b"c1") == "added"


def test_budgets_fill_as_in_one_process(server: Any, prefix: str) -> None:
    admitted = []
    for n, links in enumerate(ORDERS):
        f = frontier(server, f"{prefix}{n}")
        f.add("root", "http://u.edu/", INTERNAL, 0, b"root", budget=("u1", 3))
        assert drain(f) == ["root"]
        for fp, pos, source in links:
            f.add(
                fp, f"http://u.edu/{fp}", INTERNAL, 1, fp.encode(),
                budget=("u1", 3), position=pos, source=source,
            )  # fmt: skip
        f.parsed("root")
        admitted.append(sorted(drain(f)))
    assert admitted == [["p1", "p3"], ["p1", "p3"]]  # as test_frontier's


def test_extra_pages_wait_for_every_target_and_go_hop_by_hop(server: Any, prefix: str) -> None:
    f = frontier(server, prefix)
    news, blog = ("dnews.org", 3), ("dblog.org", 2)

    def extra(fp: str, hop: int, budget: tuple[str, int]) -> str:
        return f.add(fp, f"http://{budget[0][1:]}/{fp}", EXTRA, hop, fp.encode(), budget=budget)

    f.add("t1", "http://news.org/", EXTERNAL, 0, b"t1")
    f.add("t2", "http://news.org/t2", EXTERNAL, 0, b"t2")
    assert f.pop(Gate()) == ("t1", b"t1")
    assert extra("x3", 1, news) == "held"
    assert extra("x2", 1, news) == "held"
    assert f.pop(Gate()) == ("t2", b"t2")
    assert f.pop(Gate()) is None  # t1 and t2 in flight: their links may still come
    assert extra("x4", 1, news) == "held"
    assert extra("x1", 1, news) == "held"
    assert extra("z1", 1, blog) == "held"
    f.parsed("t1")
    f.parsed("t2")  # their links are in; their pages need not be stored yet
    f.add("i", "http://u.edu/", INTERNAL, 0, b"i")
    assert f.pop(Gate()) == ("i", b"i")
    assert f.pop(Gate()) is None  # an internal request is being parsed
    f.parsed("i")
    f.done(["i"])
    hop1 = drain(f)
    assert sorted(hop1) == ["x1", "x2", "x3", "z1"]
    assert extra("x5", 2, news) == "budget"
    assert extra("z2", 2, blog) == "held"
    assert f.pop(Gate()) is None  # hop 2 waits for hop 1
    for fp in hop1:
        f.parsed(fp)
    assert drain(f) == ["z2"]
    assert not f.finished()  # stored only now
    f.done(["t1", "t2", *hop1, "z2"])
    assert f.finished()


def test_a_held_request_is_upgraded_by_one_that_may_leave_now(server: Any, prefix: str) -> None:
    f = frontier(server, prefix)
    assert f.add("x", "http://x.org/x", EXTRA, 1, b"x", budget=("dx.org", 1)) == "held"
    assert f.add("a", "http://x.org/a", EXTRA, 1, b"a", budget=("dx.org", 1)) == "held"
    assert f.add("x", "http://x.org/x", DEFERRED, 0, b"x-deferred") == "duplicate"
    assert f.add("x", "http://x.org/x", EXTERNAL, 0, b"x-target") == "upgraded"
    assert f.pending == 2
    assert f.pop(Gate()) == ("x", b"x-target")
    f.done(["x"])
    assert drain(f) == ["a"]


def test_deferred_requests_wait_and_are_upgraded_or_dropped(server: Any, prefix: str) -> None:
    f = frontier(server, prefix)
    assert f.add("d1", "http://v.edu/p", DEFERRED, 0, b"d1") == "added"
    assert f.add("d1", "http://v.edu/p", DEFERRED, 0, b"d1") == "duplicate"
    assert f.add("d2", "http://v.edu/q", DEFERRED, 0, b"d2") == "added"
    assert f.add("i0", "http://v.edu/", INTERNAL, 0, b"i0") == "added"
    assert f.pop(Gate()) == ("i0", b"i0")
    assert f.pop(Gate()) is None  # deferred waits for every internal request
    # the owner's crawl reaches d1 itself: upgraded in place, fetched as internal
    assert f.add("d1", "http://v.edu/p", INTERNAL, 1, b"d1-internal") == "upgraded"
    f.parsed("i0")
    assert f.pop(Gate()) == ("d1", b"d1-internal")
    f.parsed("d1")
    assert f.pop(Gate()) == ("d2", b"d2")
    assert f.pop(Gate()) is None


def test_two_processes_never_get_the_same_request(server: Any, prefix: str) -> None:
    a, b = frontier(server, prefix, "a"), frontier(server, prefix, "b")
    for k in range(200):
        a.add(f"f{k}", f"http://h{k % 7}.org/{k}", EXTERNAL, 0, f"f{k}".encode())
    got: list[str] = []
    while True:
        pa, pb = a.pop(Gate()), b.pop(Gate())
        if pa is None and pb is None:
            break
        got += [p[0] for p in (pa, pb) if p is not None]
    assert len(got) == 200 and len(set(got)) == 200


def test_host_limits_hold_across_processes(server: Any, prefix: str) -> None:
    a = frontier(server, prefix, "a", host_concurrency=2)
    b = frontier(server, prefix, "b", host_concurrency=2)
    for k in range(5):
        a.add(f"s{k}", f"http://slow.org/{k}", EXTERNAL, 0, b"s")
    assert a.pop(Gate()) is not None and b.pop(Gate()) is not None
    assert a.pop(Gate()) is None and b.pop(Gate()) is None  # two in flight on slow.org
    a.received("s0", b"answer")  # an answer frees its host slot
    assert b.pop(Gate()) is not None
    # a busy local downloader slot is passed over
    c = frontier(server, run_prefix(prefix, 3), "c")
    c.add("o1", "http://other.org/", EXTERNAL, 0, b"o")
    assert c.pop(Gate(busy=frozenset({"other.org"}))) is None

    d = frontier(server, run_prefix(prefix, 2), "d", host_delay=0.3)
    for k in range(2):
        d.add(f"t{k}", f"http://polite.org/{k}", EXTERNAL, 0, b"t")
    assert d.pop(Gate()) is not None
    assert d.pop(Gate()) is None  # the delay holds across processes
    time.sleep(0.35)
    assert d.pop(Gate()) is not None


def test_a_dead_process_requests_are_taken_back_and_replayed(server: Any, prefix: str) -> None:
    dead = frontier(server, prefix, "dead", lease=5)
    alive = frontier(server, prefix, "alive", lease=5)
    dead.heartbeat()
    dead.add("p1", "http://x.org/1", EXTERNAL, 0, b"p1")
    dead.add("p2", "http://x.org/2", EXTERNAL, 0, b"p2")
    assert dead.pop(Gate()) is not None and dead.pop(Gate()) is not None
    dead.received("p1", b"kept answer")
    assert alive.pop(Gate()) is None and not alive.finished()
    # the dead process's heartbeat is older than the lease
    server.hset(f"{prefix}:workers", "dead", int(time.time() * 1000) - 6000)
    assert alive.heartbeat() == 2
    assert {alive.pop(Gate())[0], alive.pop(Gate())[0]} == {"p1", "p2"}  # type: ignore[index]
    assert alive.cached_response("p1") == b"kept answer"  # replayed, not fetched again
    assert alive.cached_response("p2") is None
    alive.done(["p1", "p2"])
    assert alive.finished()


def test_a_closing_process_gives_its_requests_back(server: Any, prefix: str) -> None:
    a, b = frontier(server, prefix, "a"), frontier(server, prefix, "b")
    a.heartbeat()
    a.add("q1", "http://y.org/", EXTERNAL, 0, b"q1")
    assert a.pop(Gate()) is not None
    assert a.leave() == 1
    assert b.pop(Gate()) == ("q1", b"q1")


def test_retries_requeue_and_clear_removes_every_key(server: Any, prefix: str) -> None:
    f = frontier(server, prefix)
    f.add("r", "http://z.org/", EXTERNAL, 0, b"first")
    assert f.pop(Gate()) == ("r", b"first")
    assert f.add("r", "http://z.org/", EXTERNAL, 0, b"retry", dont_filter=True) == "requeued"
    assert f.pop(Gate()) == ("r", b"retry")
    f.record_redirect("http://z.org/", "http://z.org/home")
    f.store_robots("http://z.org/robots.txt", b"robots")
    assert f.redirects() == {"http://z.org/": "http://z.org/home"}
    assert f.robots("http://z.org/robots.txt") == b"robots"
    assert f.clear() > 0
    assert list(server.scan_iter(match=f"{prefix}:*")) == []


def test_unreachable_redis_is_a_clear_error() -> None:
    from core.exceptions import ConfigError
    from tests.conftest import free_port

    with pytest.raises(ConfigError, match="cannot reach Redis"):
        connect(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(ConfigError, match="not a Redis URL"):
        connect("http://127.0.0.1/")


def test_first_come_budgets_when_fixed_budgets_is_off(server: Any, prefix: str) -> None:
    f = frontier(server, prefix, fixed_budgets=False)
    assert f.add("c", "http://u.edu/c", INTERNAL, 1, b"c", budget=("u1", 2)) == "added"
    assert f.add("a", "http://u.edu/a", INTERNAL, 1, b"a", budget=("u1", 2)) == "added"
    assert f.add("b", "http://u.edu/b", INTERNAL, 1, b"b", budget=("u1", 2)) == "budget"
    assert sorted(drain(f)) == ["a", "c"]


def test_a_held_request_takes_its_earliest_level_whichever_link_came_first(
    server: Any, prefix: str
) -> None:
    """As on one machine (test_frontier.py): a demoted link and a plain one, either order."""
    f = frontier(server, prefix)
    u1 = ("u1", 3)
    f.add("r", "http://x.edu/r", INTERNAL, 0, b"r", budget=u1)
    assert drain(f) == ["r"]
    f.parsed("r")
    for fp, first, then in (("a", (2, -1), (1, 0)), ("b", (1, 0), (2, -1))):
        for n, (level, priority) in enumerate((first, then)):
            f.add(fp, f"http://x.edu/{fp}", INTERNAL, level, f"{fp}{n}".encode(),
                  priority=priority, budget=u1, source=f"s{n}")  # fmt: skip
    f.add("c", "http://x.edu/c", INTERNAL, 2, b"c", budget=u1, priority=-1)
    assert sorted(drain(f)) == ["a1", "b0"]  # level 1: a with its plain link's blob
    f.parsed("a")
    f.parsed("b")
    f.done(["r", "a", "b"])
    assert drain(f) == []  # the budget of 3 is spent: c is dropped when level 2 starts
