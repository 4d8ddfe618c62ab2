"""The crash-safe frontier: seen set, budgets, order, resume."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crawler.frontier import (
    DEFERRED,
    DONE,
    EXTERNAL,
    IN_FLIGHT,
    INTERNAL,
    QUEUED,
    RECEIVED,
    Frontier,
    Gate,
)


def _add(f: Frontier, fp: str, cls: int = INTERNAL, depth: int = 0, **kw) -> str:
    return f.add(fp, f"http://x.edu/{fp}", cls, depth, lambda: fp.encode(), **kw)


def test_seen_set_and_budget(tmp_path: Path) -> None:
    f = Frontier(tmp_path / "f.sqlite")
    assert _add(f, "a", budget=("u1", 2)) == "added"
    assert _add(f, "a", budget=("u1", 2)) == "duplicate"
    assert _add(f, "b", budget=("u1", 2)) == "added"
    assert _add(f, "c", budget=("u1", 2)) == "budget"
    assert _add(f, "d", budget=("u2", 2)) == "added"
    assert f.pending == 3
    f.close()


def test_level_synchronous_order_and_external_fill(tmp_path: Path) -> None:
    f = Frontier(tmp_path / "f.sqlite")
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
    f = Frontier(tmp_path / "f.sqlite")
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
    f = Frontier(path)
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
    g = Frontier(path)
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
    f = Frontier(tmp_path / "f.sqlite")
    _add(f, "a", cls=EXTERNAL)
    f.pop(Gate())
    assert f.add("a", "http://x.edu/a", EXTERNAL, 0, lambda: b"retry", dont_filter=True) == (
        "requeued"
    )
    assert f.pop(Gate()) == ("a", b"retry")
    assert f.counts()["in_flight"] == 1
    f.close()


def test_busy_hosts_are_passed_over(tmp_path: Path) -> None:
    f = Frontier(tmp_path / "f.sqlite")
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
