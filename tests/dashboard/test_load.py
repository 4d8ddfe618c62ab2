"""Concurrent analysts on the real dashboard server (issue 20): sessions at once over
Streamlit's own websocket protocol, two of them overriding the same domain.

:class:`StreamlitSession` is one browser tab as the server sees it: it opens
``/_stcore/stream``, asks for a page's run (a ``BackMsg`` ``rerun_script`` with the
page's script hash and the widget states) and reads the ``ForwardMsg`` answers until the
run's ``script_finished``; what the page showed that is an error (an exception box, an
``st.error``, a compile error, a page not found) is counted. :func:`run_load` opens the
sessions at once (threads, released together), each visits every page of
``st.navigation`` once (in its own order); the analysts go first to the University page
and submit its "Category override" form for the same domain with notes of their own, at
the same moment, while the other sessions read. ``bench/load.py`` runs it with 20
sessions on the demo database; the test below with three on the stored world, on SQLite
and PostgreSQL at once, and checks that nothing failed and that both notes are in the
domain's override history.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websocket

import dashboard
from tests.dashboard.test_browser import dashboard_server, free_port

# streamlit.proto's ForwardMsg.ScriptFinishedStatus
FINISHED_SUCCESSFULLY, FINISHED_WITH_COMPILE_ERROR, FINISHED_EARLY_FOR_RERUN = 0, 1, 2
OVERRIDE_PAGE = "University"
OVERRIDE = "override (set, then the page again)"  # what the analysts' submissions are named
RUN_TIMEOUT = 300.0  # seconds one script run may take before the session gives up


@dataclass
class Render:
    """One script run of a page, as a session saw it: seconds from the request to the
    end of the run (reruns it asked for, such as ``st.rerun()``, included), its errors
    (an exception, a compile error, a page not found), its ``st.error`` and
    ``st.success`` messages (data may be an error: a failed crawl run's) and its widgets
    by key."""

    page: str
    seconds: float
    errors: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    successes: list[str] = field(default_factory=list)
    widgets: dict[str, Any] = field(default_factory=dict)


def _user_key(element_id: str) -> str | None:
    """The key a widget was given (Streamlit's ids are ``$$ID-<hash>-<key>``)."""
    parts = element_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "$$ID" and parts[2] else None


class StreamlitSession:
    """One dashboard session over Streamlit's websocket protocol (``BackMsg`` and
    ``ForwardMsg`` of ``streamlit.proto``), as a browser tab holds it."""

    def __init__(self, address: str, *, timeout: float = RUN_TIMEOUT) -> None:
        stream = address.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream"
        self.ws = websocket.create_connection(
            stream, subprotocols=["streamlit"], timeout=timeout, suppress_origin=True
        )
        self.pages: dict[str, str] = {}  # page title -> script hash (st.navigation's)
        self.default_page = ""

    def close(self) -> None:
        self.ws.close()

    def run(self, page: str | None = None, states: Sequence[Any] = ()) -> Render:
        """Ask for a run of ``page`` (a title of :attr:`pages`; ``None``: the default
        page) with the widget ``states`` (``WidgetState`` protos) and wait for its end."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        msg.rerun_script.page_script_hash = self.pages[page] if page else ""
        msg.rerun_script.widget_states.widgets.extend(states)
        render = Render(page or self.default_page, 0.0)
        started = time.perf_counter()
        self.ws.send_binary(msg.SerializeToString())
        while True:
            answer = ForwardMsg()
            answer.ParseFromString(self.ws.recv())
            kind = answer.WhichOneof("type")
            if kind == "navigation":
                self.pages = {p.page_name: p.page_script_hash for p in answer.navigation.app_pages}
                default = [p.page_name for p in answer.navigation.app_pages if p.is_default]
                self.default_page = default[0] if default else ""
                render.page = page or self.default_page
            elif kind == "delta" and answer.delta.WhichOneof("type") == "new_element":
                self._element(answer.delta.new_element, render)
            elif kind == "page_not_found":
                render.errors.append(f"page not found: {answer.page_not_found.page_name}")
            elif kind == "script_finished":
                status = answer.script_finished
                if status == FINISHED_EARLY_FOR_RERUN:  # st.rerun(): the next run follows
                    render.errors, render.alerts, render.successes = [], [], []
                    render.widgets = {}
                    continue
                if status == FINISHED_WITH_COMPILE_ERROR:
                    render.errors.append("the page's script did not compile")
                render.seconds = time.perf_counter() - started
                return render

    @staticmethod
    def _element(element: Any, render: Render) -> None:
        from streamlit.proto.Alert_pb2 import Alert

        kind = element.WhichOneof("type")
        body = getattr(element, kind) if kind else None
        if kind == "exception":
            render.errors.append(f"{body.type}: {body.message}")
        elif kind == "alert" and body.format == Alert.ERROR:
            render.alerts.append(body.body)
        elif kind == "alert" and body.format == Alert.SUCCESS:
            render.successes.append(body.body)
        if body is not None and (key := _user_key(getattr(body, "id", "") or "")):
            render.widgets[key] = body


def with_form(client: StreamlitSession, page: Render) -> Render:
    """The University page showing the override form: ``page`` when it does, else the
    page run again for each university of its select box until one has clusters."""
    if "override-domain" in page.widgets:
        return page
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    choice = page.widgets["uni"]
    for name in choice.options:
        again = client.run(OVERRIDE_PAGE, [WidgetState(id=choice.id, string_value=name)])
        if "override-domain" in again.widgets and again.widgets["override-domain"].options:
            return again
    raise LookupError("no university of the University page has clusters to override")


def override_states(form: Render, domain: str, category: str, note: str, analyst: str) -> list:
    """The widget states of the University page's "Category override" form submitted
    with "Set override": the typed domain, the category's label, the note, the name."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    w = form.widgets
    return [
        WidgetState(id=w["override-typed"].id, string_value=domain),
        WidgetState(id=w["override-category"].id, string_value=category),
        WidgetState(id=w["override-note"].id, string_value=note),
        WidgetState(id=w["override-by"].id, string_value=analyst),
        WidgetState(id=w["override-set"].id, trigger_value=True),
    ]


@dataclass
class LoadResult:
    """What every session rendered, the analysts' override submissions, the domain
    they overrode and the notes they wrote; ``failures``: sessions that broke off."""

    pages: list[str]
    renders: list[Render]
    overrides: list[Render]
    domain: str | None
    notes: list[str]
    failures: list[str]
    seconds: float

    def errors(self) -> list[str]:
        return [
            *self.failures,
            *(f"{r.page}: {e}" for r in [*self.renders, *self.overrides] for e in r.errors),
        ]


def run_load(
    address: str, *, sessions: int, analysts: int = 2, timeout: float = RUN_TIMEOUT
) -> LoadResult:
    """Open ``sessions`` dashboard sessions at once; each visits every page. The first
    ``analysts`` go from the default page to the University page and set the override of
    its first cluster domain at the same moment, each with another category and a note
    of its own, then visit the other pages, while the other sessions read.

    Bounded: every run waits at most ``timeout`` seconds, then the session breaks off.
    """
    start = threading.Barrier(sessions)
    submit = threading.Barrier(analysts) if analysts else None
    lock = threading.Lock()
    renders: list[Render] = []
    overrides: list[Render] = []
    failures: list[str] = []
    chosen: dict[str, Any] = {}
    notes = [
        f"analyst {k + 1}: checked by hand, note {k + 1} of {analysts}" for k in range(analysts)
    ]

    def analyst(
        client: StreamlitSession, page: Render, i: int, submit: threading.Barrier
    ) -> Render:
        """Submit the override form of ``page`` as analyst ``i``, with the others."""
        form = with_form(client, page)
        with lock:
            chosen.setdefault("domain", form.widgets["override-domain"].options[0])
        labels = list(form.widgets["override-category"].options)
        category = labels[(i + 1) % len(labels)]
        states = override_states(form, chosen["domain"], category, notes[i], f"analyst {i + 1}")
        submit.wait(timeout)
        done = client.run(OVERRIDE_PAGE, states)
        done.page = OVERRIDE
        done.errors += done.alerts  # the form's own error: the write failed
        if not done.successes:
            done.errors.append("no success message after the override")
        return done

    def session(i: int) -> None:
        client = None
        try:
            start.wait(timeout)
            client = StreamlitSession(address, timeout=timeout)
            first = client.run()  # the default page, as a first visit opens it
            with lock:
                chosen.setdefault("pages", list(client.pages))
            others = [p for p in client.pages if p != first.page]
            shift = i % len(others) if others else 0
            order = others[shift:] + others[:shift]
            if i < analysts:  # the analysts go to the form first, the others read meanwhile
                order = [OVERRIDE_PAGE] + [p for p in order if p != OVERRIDE_PAGE]
            seen = [first]
            for page in order:
                seen.append(client.run(page))
                if page == OVERRIDE_PAGE and i < analysts and submit is not None:
                    done = analyst(client, seen[-1], i, submit)
                    with lock:
                        overrides.append(done)
            with lock:
                renders.extend(seen)
        except Exception as exc:  # a session that broke off is the load's finding
            with lock:
                failures.append(f"session {i}: {type(exc).__name__}: {exc}")
            for barrier in (start, submit):
                if barrier is not None:
                    barrier.abort()
        finally:
            if client is not None:
                client.close()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=session, args=(i,), daemon=True) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout * 10)
    hung = sum(t.is_alive() for t in threads)
    if hung:
        failures.append(f"{hung} sessions still running after {timeout * 10:.0f} s")
    return LoadResult(
        chosen.get("pages", []),
        renders,
        overrides,
        chosen.get("domain"),
        notes,
        failures,
        time.perf_counter() - t0,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, linear between the nearest ranks."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q * 100) - 1]


def summary(result: LoadResult) -> list[dict[str, Any]]:
    """Per page (and the overrides): sessions, renders, errors, p50/p95/max seconds."""
    rows = []
    by_page: dict[str, list[Render]] = {p: [] for p in result.pages}
    for r in [*result.renders, *result.overrides]:
        by_page.setdefault(r.page, []).append(r)
    for page, done in by_page.items():
        if not done:
            continue
        seconds = [r.seconds for r in done]
        rows.append(
            {
                "page": page,
                "sessions": len(done),
                "renders": len(done),
                "errors": sum(len(r.errors) for r in done),
                "p50_seconds": round(percentile(seconds, 0.50), 3),
                "p95_seconds": round(percentile(seconds, 0.95), 3),
                "max_seconds": round(max(seconds), 3),
                "seconds": sorted(round(x, 3) for x in seconds),
            }
        )
    return rows


@contextlib.contextmanager
def served(db_url: str, log: Path) -> Iterator[str]:
    """``webometrics dashboard`` on a free loopback port; yields its address."""
    with dashboard_server(db_url, free_port(), log) as address:
        yield address


def check_history(db_url: str, result: LoadResult) -> list[str]:
    """What went missing: the notes of ``result`` absent from the domain's override
    history, and an override that is not the history's newest action."""
    from store import make_engine
    from store.overrides import list_overrides, override_history

    if result.domain is None:
        return ["no override was submitted"]
    engine = make_engine(db_url)
    try:
        history = override_history(engine, result.domain)
        current = {o.domain: o for o in list_overrides(engine)}.get(result.domain)
    finally:
        engine.dispose()
    kept = {e.note for e in history}
    lost = [f"note lost: {n!r}" for n in result.notes if n not in kept]
    if history and (current is None or current.override_note != history[0].note):
        lost.append(f"the override of {result.domain} is not its newest history action")
    return lost


# --- the test: a small load on the stored world, SQLite and PostgreSQL at once ----------


SESSIONS = 3  # the two analysts and a reader, every page seen by each


@pytest.mark.timeout(240)
def test_analysts_at_once_lose_no_note(
    sqlite_url: str, postgres_url: str, corpora: dict[str, Any], tmp_path: Path
) -> None:
    """The same small load on a SQLite and a PostgreSQL dashboard, both at once (each
    server runs its sessions in one process: two servers keep both cores busy)."""
    from store import aggregates, make_engine, schema
    from tests.stored_world import fill_world

    urls = {"sqlite": sqlite_url, "postgresql": postgres_url}
    for url in urls.values():
        engine = make_engine(url)
        schema.upgrade(engine)
        fill_world(url, corpora)
        aggregates.refresh(engine)  # the override moves its domain in the saved aggregates
        engine.dispose()
    results: dict[str, LoadResult] = {}
    with contextlib.ExitStack() as servers:
        addresses = {
            db: servers.enter_context(served(url, tmp_path / f"{db}.log"))
            for db, url in urls.items()
        }

        def load(db: str) -> None:
            results[db] = run_load(addresses[db], sessions=SESSIONS, timeout=120)

        loads = [threading.Thread(target=load, args=(db,)) for db in urls]
        for t in loads:
            t.start()
        for t in loads:
            t.join()
    assert set(results) == set(urls)
    for db, result in results.items():
        assert result.errors() == [], db
        n_pages = len(dashboard.PAGE_TITLES)
        assert len({r.page for r in result.renders}) == n_pages, (db, result.pages)
        assert len(result.renders) == SESSIONS * n_pages, db
        assert [bool(r.successes) for r in result.overrides] == [True, True], db
        assert all(f"{result.domain} is now" in r.successes[0] for r in result.overrides), db
        # the page shown after the override has the history, opened on the domain
        assert all("override-history-domain" in r.widgets for r in result.overrides), db
        assert check_history(urls[db], result) == [], db
        assert "Traceback" not in (tmp_path / f"{db}.log").read_text(), db
