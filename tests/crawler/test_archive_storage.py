"""Archived pages in the store, on SQLite and PostgreSQL (migration 0018): one row per
version of a URL beside the live row, idempotent upserts, no capture kept apart from
errors, each run's site pages and Table 2 counted within its collection."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy import select, text

from core.archives import collection_label
from core.universities import parse_universities
from crawler.archive.facts import memento_url, period_memento
from crawler.items import LinkRecord, PageItem
from crawler.storage import finalize_run, store_batch
from store import aggregates
from store.analytics import collections, compare_collections, run_collections
from store.models import CrawlRun, Page
from store.session import session_scope
from store.universities import import_universities

from .conftest import migrated_engine

REPO = Path(__file__).resolve().parents[2]
HOME = "http://www.cs.cornell.edu/"
WAYBACK = "https://web.archive.org"


def _run(engine, archive: str | None = None, start: str | None = None, end: str | None = None):
    with session_scope(engine) as s:
        run = CrawlRun(
            kind="outgoing",
            status="finished",
            archive=archive,
            archive_from=dt.date.fromisoformat(start) if start else None,
            archive_to=dt.date.fromisoformat(end) if end else None,
        )
        s.add(run)
        s.flush()
        return run.id


def _page(url: str, body: bytes, target: str, **archived) -> PageItem:
    item = PageItem(
        url=url,
        fingerprint=None,
        role="university",
        university_id=1,
        depth=0,
        http_status=200,
        content_type="text/html",
        body=body,
        content_length=len(body),
        links=[LinkRecord(target, "a link", False)],
    )
    for key, value in archived.items():
        setattr(item, key, value)
    return item


def _archived(ts: str, body: bytes, target: str) -> PageItem:
    when = dt.datetime.strptime(ts, "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return _page(
        memento_url(WAYBACK, ts, HOME),
        body,
        target,
        archive="wayback",
        original_url=HOME,
        captured_at=when,
        capture_status="captured",
    )


@pytest.fixture
def world(db_url: str):
    engine = migrated_engine(db_url)
    import_universities(engine, parse_universities(REPO / "testbed" / "universities.toml"))
    live = _run(engine)
    w2015 = _run(engine, "wayback", "2015-01-01", "2015-12-31")
    w2020 = _run(engine, "wayback", "2020-01-01", "2020-12-31")
    store_batch(engine, live, [_page(HOME, b"<p>today</p>", "http://www.today.com/")])
    v2015 = _archived("20150402174155", b"<p>1997 (2015)</p>", "http://www.webring.com/")
    gone = PageItem(
        url=period_memento(WAYBACK, "20150101000000", "20151231235959", HOME + "gone.html"),
        fingerprint=None,
        role="university",
        university_id=1,
        archive="wayback",
        original_url=HOME + "gone.html",
        capture_status="no_capture",
    )
    store_batch(engine, w2015, [v2015, gone])
    store_batch(engine, w2015, [v2015])  # stored again (a resumed crawl): the same row
    store_batch(
        engine, w2020, [_archived("20200331174155", b"<p>today</p>", "http://www.today.com/")]
    )
    stats = {run: finalize_run(engine, run) for run in (live, w2015, w2020)}
    aggregates.refresh(engine)  # as the crawl stage does at its end
    return engine, {"live": live, "2015": w2015, "2020": w2020}, stats


def test_archived_pages_in_the_store(world) -> None:
    """One database per dialect (migrating costs seconds): every check on it."""
    versions_are_rows_beside_the_live_one(*world)
    no_capture_is_no_error(*world)
    each_run_counts_its_own_collection(*world)


def versions_are_rows_beside_the_live_one(engine, runs, stats) -> None:
    with session_scope(engine) as s:
        rows = s.execute(
            select(Page.url, Page.archive, Page.original_url, Page.captured_at, Page.host,
                   Page.registered_domain, Page.last_run_id)
            .where((Page.original_url == HOME) | (Page.url == HOME))
            .order_by(Page.id)
        ).all()  # fmt: skip
    assert [r.last_run_id for r in rows] == [runs["live"], runs["2015"], runs["2020"]]
    assert rows[0].archive is None and rows[0].url == HOME
    assert rows[1].url == f"{WAYBACK}/web/20150402174155id_/{HOME}"
    assert rows[1].captured_at == dt.datetime(2015, 4, 2, 17, 41, 55, tzinfo=dt.UTC)
    # host and site of the original URL, not the archive's
    assert {(r.host, r.registered_domain) for r in rows} == {("www.cs.cornell.edu", "cornell.edu")}


def no_capture_is_no_error(engine, runs, stats) -> None:
    with session_scope(engine) as s:
        gone = s.scalars(select(Page).where(Page.capture_status == "no_capture")).one()
        assert (gone.fetch_error, gone.http_status, gone.extraction_status) == (
            None,
            None,
            "skipped",
        )
        assert gone.last_run_id == runs["2015"]
    assert stats[runs["2015"]]["errors"] == {}
    assert stats[runs["2015"]]["pages_recorded"] == 2


def each_run_counts_its_own_collection(engine, runs, stats) -> None:
    with session_scope(engine) as s:
        site_pages = dict(
            s.execute(
                text("SELECT run_id, site_pages FROM v_university_table2 WHERE university = :u"),
                {"u": "Cornell University"},
            ).all()
        )
    # the live page (runs 1..1) is no page of the archived runs after it
    assert site_pages == {runs["live"]: 1, runs["2015"]: 2, runs["2020"]: 1}
    labels = run_collections(engine)
    assert labels[runs["live"]] == "live"
    assert labels[runs["2015"]] == collection_label("wayback", "2015-01-01", "2015-12-31")
    found = collections(engine)
    assert [c.collection for c in found] == [
        "live",
        "wayback 2015-01-01..2015-12-31",
        "wayback 2020-01-01..2020-12-31",
    ]
    rows = {
        (r.collection, r.university): (r.site_pages, r.external_domains)
        for r in compare_collections(engine)
    }
    assert rows[("wayback 2015-01-01..2015-12-31", "Cornell University")] == (2, 1)
    assert rows[("live", "Cornell University")] == (1, 1)
