"""The override history (:mod:`store.overrides`, migration 0012) and overrides written at
the same time, on real SQLite and PostgreSQL.

Every set and clear is a row of ``domain_category_history`` with who, when, the category
and the note; the overrides stored before the revision become its first rows. Several
analysts overriding at once (threads on one engine, as the dashboard's sessions are, all
started together) get no error, lose no history row, leave the override of the last one
that wrote, re-vote the clusters as a one-by-one run would, and move the saved
aggregates once per change (``aggregates.sync_categories`` under the override write
lock, as ``dashboard.writes.write_override`` calls it): the same rows as a full refresh.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Engine, inspect, select, text

from core.exceptions import ParameterError
from store import aggregates, make_engine, schema
from store.models import (
    AggregateCountryCount,
    AggregateDomainCount,
    AggregateEnvironment,
    AggregateNetworkDomain,
    Cluster,
    DomainCategory,
)
from store.overrides import (
    clear_override,
    list_overrides,
    override_history,
    set_override,
    write_locked,
)
from tests.stored_world import Facts


def test_every_action_is_kept_with_who_when_and_note(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    try:
        t0 = dt.datetime.now(dt.UTC)
        set_override(engine, "lenta.ru", "media", note="a media group", analyst="Ann")
        set_override(engine, "https://www.Lenta.ru/news", "news", note="news first", analyst="Bo")
        set_override(engine, "vk.com", "blogs", analyst="  ")  # blank: unknown
        assert clear_override(engine, "lenta.ru", analyst="Cy") is True
        assert clear_override(engine, "lenta.ru", analyst="Cy") is False  # nothing to clear
        with pytest.raises(ParameterError, match="at most 100"):
            set_override(engine, "lenta.ru", "media", analyst="x" * 101)
        with pytest.raises(ParameterError, match="not a registered domain"):
            override_history(engine, "not a domain")

        lenta = override_history(engine, "LENTA.RU")
        assert [(e.action, e.category, e.note, e.analyst) for e in lenta] == [
            ("clear", None, None, "Cy"),
            ("set", "news_portals", "news first", "Bo"),
            ("set", "media", "a media group", "Ann"),
        ]
        assert all(e.domain == "lenta.ru" and e.at >= t0 for e in lenta)
        assert lenta[0].at >= lenta[1].at >= lenta[2].at
        every = override_history(engine)
        assert [(e.domain, e.action, e.analyst) for e in every][:2] == [
            ("lenta.ru", "clear", "Cy"),
            ("vk.com", "set", None),
        ]
        assert len(every) == 4 and len(override_history(engine, limit=2)) == 2
        assert [(o.domain, o.override_category) for o in list_overrides(engine)] == [
            ("vk.com", "social_networks")
        ]
    finally:
        engine.dispose()


def test_upgrade_keeps_the_overrides_made_before_the_history(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        schema.upgrade(engine, "0011")
        at = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO domain_category (domain, category, evidence, override_category,"
                    " override_note, override_at, updated_at) VALUES ('lenta.ru', 'news_portals',"
                    " '{}', 'media', 'a media group', :at, :at), ('vk.com', 'blogs', '{}', NULL,"
                    " NULL, NULL, :at)"
                ),
                {"at": at},
            )
        schema.upgrade(engine)
        [event] = override_history(engine)
        assert (event.domain, event.action, event.category, event.note, event.analyst) == (
            "lenta.ru",
            "set",
            "media",
            "a media group",
            None,
        )
        assert event.at == at
        schema.downgrade(engine, "0011")
        assert "domain_category_history" not in inspect(engine).get_table_names()
        with engine.connect() as conn:
            kept = conn.execute(
                text("SELECT override_note FROM domain_category WHERE domain = 'lenta.ru'")
            ).scalar_one()
        assert kept == "a media group"
    finally:
        engine.dispose()


def _at_once(writers: list[Callable[[], Any]]) -> list[BaseException]:
    """Run every writer in a thread of its own, all released together; their errors."""
    start = threading.Barrier(len(writers))
    errors: list[BaseException] = []

    def run(write: Callable[[], Any]) -> None:
        start.wait()
        try:
            write()
        except BaseException as exc:  # every error is the test's finding
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    return errors


AGGREGATES = (AggregateDomainCount, AggregateCountryCount, AggregateEnvironment)


def _aggregate_rows(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of the aggregates an override moves, without their ids, sorted."""
    out = {}
    with engine.connect() as conn:
        for model in (*AGGREGATES, AggregateNetworkDomain):
            cols = [c for c in model.__table__.c if c.name != "id"]
            rows = conn.execute(select(*cols)).all()
            out[model.__tablename__] = sorted(map(tuple, rows), key=repr)
    return out


def _cluster_categories(engine: Engine) -> dict[int, tuple[Any, ...]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(Cluster.id, Cluster.category, Cluster.category_support).where(
                Cluster.level == -1
            )
        ).all()
    return {r[0]: tuple(r[1:]) for r in rows}


def test_analysts_overriding_at_once_lose_nothing(filled: Facts) -> None:
    """Six analysts override vk.com at once, two others lenta.ru and mit.edu (domains of
    the same clusters), each as the dashboard does: the override, then the aggregates'
    sync under the override write lock."""
    engine = make_engine(filled.url)
    try:
        aggregates.refresh(engine)
        vk = [(f"analyst {i}", cat) for i, cat in enumerate(["media", "blogs"] * 3)]
        others = [("lenta.ru", "universities"), ("mit.edu", "media")]

        def write(domain: str, category: str, who: str) -> Callable[[], None]:
            def go() -> None:
                set_override(engine, domain, category, note=f"{who}'s note", analyst=who)
                aggregates.sync_categories(write_locked(engine))

            return go

        errors = _at_once(
            [write("vk.com", cat, who) for who, cat in vk]
            + [write(dom, cat, f"analyst of {dom}") for dom, cat in others]
        )
        assert errors == []

        history = override_history(engine, "vk.com")
        assert sorted(e.note for e in history) == sorted(f"{who}'s note" for who, _ in vk)
        assert len(override_history(engine)) == len(vk) + len(others)
        with engine.connect() as conn:
            now = conn.execute(
                select(DomainCategory.override_category, DomainCategory.override_note).where(
                    DomainCategory.domain == "vk.com"
                )
            ).one()
        assert tuple(now) == (history[0].category, history[0].note)  # the last one's

        # the aggregates moved once per change: what a full refresh builds
        assert aggregates.fresh_run_ids(engine) is not None
        synced = _aggregate_rows(engine)
        aggregates.refresh(engine)
        assert _aggregate_rows(engine) == synced

        # the clusters voted with every override: what writing them one by one gives
        voted = _cluster_categories(engine)
        for dom, cat in [("vk.com", history[0].category), *others]:
            set_override(engine, dom, cat)
        assert _cluster_categories(engine) == voted
    finally:
        engine.dispose()
