"""The crash-safe frontier: seen set, budgets, order, resume."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crawler.frontier import (
    DEFERRED,
    DONE,
    EXTERNAL,
    EXTRA,
    IN_FLIGHT,
    INTERNAL,
    QUEUED,
    RECEIVED,
    Gate,
    SQLiteFrontier,
)


def _add(f: SQLiteFrontier, fp: str, cls: int = INTERNAL, depth: int = 0, **kw) -> str:
    return f.add(fp, f"http://x.edu/{fp}", cls, depth, lambda: fp.encode(), **kw)


def _drain(f: SQLiteFrontier, gate: Gate | None = None) -> list[str]:
    out = []
    while (taken := f.pop(gate or Gate())) is not None:
        out.append(taken[0])
    return out


def test_seen_set_and_budget(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    # before their level starts, budgeted requests are held, not counted
    assert _add(f, "c", budget=("u1", 2), source="r") == "held"
    assert _add(f, "c", budget=("u1", 2), source="s") == "duplicate"  # a second link
    assert _add(f, "a", budget=("u1", 2)) == "held"
    assert _add(f, "b", budget=("u1", 2)) == "held"
    assert _add(f, "d", budget=("u2", 2)) == "held"
    assert f.pending == 4 and f.held == 4 and f.counts()["held"] == 4
    # the level starts: each budget admits the most linked (c: twice), then by URL; the
    # rest is dropped
    assert sorted(_drain(f)) == ["a", "c", "d"]
    assert f.pending == 0 and f.held == 0 and f.counts()["in_flight"] == 3
    # after its level started a request is counted when it comes, while the budget lasts
    assert _add(f, "e", budget=("u2", 2)) == "added"
    assert _add(f, "f", budget=("u2", 2)) == "budget"
    assert _add(f, "g", depth=1, budget=("u1", 2)) == "budget"  # spent: not even held
    # the dropped request was forgotten: it may come again, without a budget
    assert _add(f, "b", cls=EXTERNAL) == "added"
    f.close()


#: the links found at depth 0, as (fingerprint, place in its page, page), in two arrival
#: orders; p4 is linked twice from one page (one link, as when a page is parsed again)
LINKS = [("p3", 5, "r1"), ("p1", 0, "r1"), ("p4", 1, "r1"), ("p2", 0, "r2"), ("p3", 7, "r2")]
LINKS += [("p4", 1, "r1")]
ORDERS = (LINKS, LINKS[::-1])


def test_budgets_fill_the_same_way_whatever_order_answers_came_in(tmp_path: Path) -> None:
    """Two crawls of one web whose answers arrive in different orders admit the same
    pages: the budget is shared out when the level starts, the most linked first, then
    the earliest in its page, then by URL."""
    admitted = []
    for n, links in enumerate(ORDERS):
        f = SQLiteFrontier(tmp_path / f"{n}.sqlite")
        _add(f, "root", budget=("u1", 3))
        assert _drain(f) == ["root"]
        for fp, pos, source in links:
            _add(f, fp, depth=1, budget=("u1", 3), position=pos, source=source)
        admitted.append(sorted(_drain(f)))
        f.close()
    assert admitted == [["p1", "p3"], ["p1", "p3"]]  # p3: two pages link it; p1: place, URL


def test_extra_pages_wait_for_every_target_and_go_hop_by_hop(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    news, blog = ("dnews.org", 3), ("dblog.org", 2)
    _add(f, "t1", cls=EXTERNAL)
    _add(f, "t2", cls=EXTERNAL)
    assert f.pop(Gate()) == ("t1", b"t1")
    # t1 linked to two pages of its domain; t2 is still queued, then in progress
    assert _add(f, "x3", cls=EXTRA, depth=1, budget=news) == "held"
    assert _add(f, "x2", cls=EXTRA, depth=1, budget=news) == "held"
    assert f.pop(Gate()) == ("t2", b"t2")
    assert f.pop(Gate(external_busy=True)) is None
    assert _add(f, "x4", cls=EXTRA, depth=1, budget=news) == "held"  # t2's links
    assert _add(f, "x1", cls=EXTRA, depth=1, budget=news) == "held"
    assert _add(f, "z1", cls=EXTRA, depth=1, budget=blog) == "held"
    # internal work still queued holds the extra pages back too
    _add(f, "i", depth=0)
    assert f.pop(Gate()) == ("i", b"i")
    assert f.pop(Gate(internal_min_depth=0)) is None
    # every target is through: hop 1 starts; news's budget goes to x1-x3 (URL order)
    hop1 = _drain(f, Gate(extra_min_depth=1))
    assert sorted(hop1) == ["x1", "x2", "x3", "z1"]
    assert _add(f, "x5", cls=EXTRA, depth=2, budget=news) == "budget"  # spent
    assert _add(f, "z2", cls=EXTRA, depth=2, budget=blog) == "held"
    assert f.pop(Gate(extra_min_depth=1)) is None  # hop 2 waits for hop 1
    assert f.pop(Gate()) == ("z2", b"z2")
    assert f.pending == 0
    f.close()


def test_a_held_request_is_upgraded_by_one_that_may_leave_now(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    _add(f, "t", cls=EXTERNAL)
    f.pop(Gate())
    assert _add(f, "x", cls=EXTRA, depth=1, budget=("dx.org", 1)) == "held"
    assert _add(f, "a", cls=EXTRA, depth=1, budget=("dx.org", 1)) == "held"
    assert _add(f, "x", cls=DEFERRED) == "duplicate"  # a deferred target waits on its own
    # another university links to x: a target, fetched whatever the domain's budget
    assert _add(f, "x", cls=EXTERNAL) == "upgraded"
    assert f.pending == 2
    assert _drain(f) == ["x", "a"]
    f.close()


def test_held_requests_and_started_levels_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite"
    f = SQLiteFrontier(path)
    _add(f, "r", budget=("u1", 3))
    assert _drain(f) == ["r"]
    _add(f, "b", depth=1, budget=("u1", 3))
    _add(f, "a", depth=1, budget=("u1", 3))
    g = SQLiteFrontier(path)  # the process dies; a new one opens the file
    assert g.pending == 3 and g.internal_queued == 3  # r was in flight: asked again
    assert _add(g, "s", budget=("u1", 3)) == "added"  # depth 0 had started: counted now
    assert _drain(g) == ["r", "s", "a"]  # one page of the budget was left for depth 1
    g.close()
    f.close()


def test_a_frontier_file_of_an_older_version_is_resumed(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE request (fp TEXT PRIMARY KEY, seq INTEGER NOT NULL, cls INTEGER NOT "
        "NULL, depth INTEGER NOT NULL, priority INTEGER NOT NULL, state INTEGER NOT NULL, "
        "url TEXT NOT NULL, host TEXT NOT NULL DEFAULT '', request BLOB NOT NULL, "
        "response BLOB);"
        "INSERT INTO request VALUES ('a', 1, 0, 0, 0, 0, 'http://x.edu/a', 'x.edu', X'41', NULL);"
    )
    db.commit()
    db.close()
    f = SQLiteFrontier(path)
    assert f.resumed and f.pop(Gate()) == ("a", b"A")
    f.close()


def test_level_synchronous_order_and_external_fill(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    _add(f, "d1", depth=1)
    _add(f, "d0", depth=0)
    _add(f, "e", cls=EXTERNAL)
    assert f.pop(Gate()) == ("d0", b"d0")  # shallowest first
    # depth 0 in progress: depth 1 must wait, an external request fills the slot
    assert f.pop(Gate(internal_min_depth=0)) == ("e", b"e")
    assert f.pop(Gate(internal_min_depth=0)) is None
    assert f.pop(Gate()) == ("d1", b"d1")
    f.close()


def test_deferred_requests_wait_and_are_upgraded_in_place(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    _add(f, "t", cls=DEFERRED)  # a target inside another crawled university
    _add(f, "u", cls=DEFERRED)
    _add(f, "i", depth=1)
    assert f.pop(Gate()) == ("i", b"i")
    assert f.pop(Gate(internal_min_depth=1)) is None  # internal work still in progress
    # that university's own crawl reaches "t": the deferred row becomes its request
    assert _add(f, "t", depth=2) == "upgraded"
    assert f.pop(Gate()) == ("t", b"t")
    assert f.pop(Gate()) == ("u", b"u")  # never reached: fetched as a deferred target
    assert _add(f, "u", depth=3) == "duplicate"
    f.close()


def test_restart_requeues_in_flight_and_replays_received(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite"
    f = SQLiteFrontier(path)
    for fp in ("a", "b", "c", "d"):
        _add(f, fp, cls=EXTERNAL)
    for _ in range(3):
        f.pop(Gate())
    f.received("a", b"answer of a")
    f.received("b", b"answer of b")
    f.done(["b"])  # b's page was committed
    f.record_redirect("http://x.edu/old", "http://x.edu/new")
    states = dict(sqlite3.connect(path).execute("SELECT fp, state FROM request"))
    assert states == {"a": RECEIVED, "b": DONE, "c": IN_FLIGHT, "d": QUEUED}
    # the process dies here (no close); a new one opens the same file
    g = SQLiteFrontier(path)
    assert g.resumed and g.pending == 3
    assert g.cached_response("a") == b"answer of a"  # replayed, not fetched again
    assert g.cached_response("b") is None
    assert g.cached_response("c") is None  # no answer came: fetched again
    assert _add(g, "b", cls=EXTERNAL) == "duplicate"
    assert {g.pop(Gate())[0] for _ in range(3)} == {"a", "c", "d"}
    assert g.redirects() == {"http://x.edu/old": "http://x.edu/new"}
    g.close()
    f.close()


def test_retry_requeues_the_same_request(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    _add(f, "a", cls=EXTERNAL)
    f.pop(Gate())
    assert f.add("a", "http://x.edu/a", EXTERNAL, 0, lambda: b"retry", dont_filter=True) == (
        "requeued"
    )
    assert f.pop(Gate()) == ("a", b"retry")
    assert f.counts()["in_flight"] == 1
    f.close()


def test_busy_hosts_are_passed_over(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    f.add("a1", "http://slow.edu/1", INTERNAL, 0, lambda: b"a1")
    f.add("a2", "http://slow.edu/2", INTERNAL, 0, lambda: b"a2")
    f.add("b1", "http://fast.edu/1", INTERNAL, 0, lambda: b"b1")
    f.add("c1", "http://deeper.edu/1", INTERNAL, 1, lambda: b"c1")
    f.add("e1", "http://news.org/1", EXTERNAL, 0, lambda: b"e1")
    slow = frozenset({"slow.edu"})
    assert f.pop(Gate(busy=slow)) == ("b1", b"b1")  # the same depth, another host
    # the only depth-0 rows left are busy: depth 1 still waits, an external goes
    assert f.pop(Gate(internal_min_depth=0, busy=slow)) == ("e1", b"e1")
    assert f.pop(Gate(internal_min_depth=0, busy=slow)) is None
    assert f.pop(Gate()) == ("a1", b"a1")
    f.close()


def test_first_come_budgets_when_fixed_budgets_is_off(tmp_path: Path) -> None:
    """``[crawl] fixed_budgets = false``: a budget admits the requests that come first."""
    f = SQLiteFrontier(tmp_path / "f.sqlite", fixed_budgets=False)
    assert _add(f, "c", budget=("u1", 2)) == "added"
    assert _add(f, "a", budget=("u1", 2)) == "added"
    assert _add(f, "b", budget=("u1", 2)) == "budget"
    assert sorted(_drain(f)) == ["a", "c"]
    f.close()


def test_a_held_request_takes_its_earliest_level_whichever_link_came_first(
    tmp_path: Path,
) -> None:
    """A link the trap guard demoted (a level later, a lower priority) and a plain link
    of the same page: the plain one decides, in either order (crawler.traps)."""
    f = SQLiteFrontier(tmp_path / "f.sqlite")
    u1 = ("u1", 3)
    _add(f, "r", budget=u1)
    assert _drain(f) == ["r"]
    for fp, first, then in (("a", (2, -1), (1, 0)), ("b", (1, 0), (2, -1))):
        for n, (level, priority) in enumerate((first, then)):
            f.add(fp, f"http://x.edu/{fp}", INTERNAL, level, lambda fp=fp, n=n: f"{fp}{n}".encode(),
                  priority=priority, budget=u1, source=f"s{n}")  # fmt: skip
    _add(f, "c", depth=2, budget=u1, priority=-1)
    # level 1 holds a and b (a with the blob of its plain link), level 2 c, in the budget
    assert [f.pop(Gate()) for _ in range(2)] == [("a", b"a1"), ("b", b"b0")]
    assert f.pop(Gate(internal_min_depth=1)) is None
    assert _drain(f) == []  # the budget of 3 is spent: c is dropped when level 2 starts
    f.close()
