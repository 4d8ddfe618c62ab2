"""Batched, idempotent storage of crawl items on SQLite and PostgreSQL."""

from __future__ import annotations

import zlib
from pathlib import Path

from sqlalchemy import func, select, update

from core.universities import parse_universities
from crawler.items import LinkRecord, PageErrorItem, PageItem
from crawler.storage import CitingCandidate, finalize_run, resolve_citations, store_batch
from store.models import Citation, CrawlRun, Environment, Link, Page
from store.session import make_engine, session_scope
from store.universities import import_universities

from .conftest import migrated_engine

REPO = Path(__file__).resolve().parents[2]
BODY = b"<html><body><p>Department of Computer Science</p></body></html>"


def _setup(url: str):
    engine = migrated_engine(url)
    import_universities(engine, parse_universities(REPO / "testbed" / "universities.toml"))
    with session_scope(engine) as s:
        run = CrawlRun(kind="both")
        s.add(run)
        s.flush()
        run_id = run.id
    return engine, run_id


def _items() -> list[PageItem | PageErrorItem]:
    return [
        PageItem(
            url="HTTP://WWW.CS.CORNELL.EDU:80/index.html#top",
            fingerprint="f1",
            role="university",
            university_id=1,
            depth=0,
            http_status=200,
            content_type="text/html",
            body=BODY,
            content_length=len(BODY),
            links=[
                LinkRecord("http://www.yahoo.com/", "Yahoo", False),
                LinkRecord("http://www.yahoo.com/#x", "Yahoo again", False),  # same target
                LinkRecord("http://news.example.org/story", "Story", True),
            ],
        ),
        PageItem(
            url="http://www.yahoo.com/",
            fingerprint="f2",
            role="external",
            university_id=1,
            http_status=200,
            content_type="text/html; charset=utf-8",
            body=b"<html><body>Yahoo! <a href='http://www.cs.wisc.edu/'>UW</a></body></html>",
            content_length=70,
            links=[LinkRecord("http://www.cs.wisc.edu/", "UW", False)],
        ),
        PageItem(
            url="http://news.example.org/story",
            fingerprint="f3",
            role="external",
            university_id=1,
            http_status=404,
            fetch_error="http_404: Not Found",
            body=b"gone",
            content_length=4,
        ),
        PageItem(
            url="http://loop.example.org/a",
            fingerprint="f4",
            role="external",
            university_id=1,
            http_status=302,
        ),
        PageErrorItem("http://loop.example.org/a", "redirect_loop: a -> b -> a"),
    ]


def test_store_batch_is_idempotent_and_keeps_extraction(db_url: str) -> None:
    engine, run_id = _setup(db_url)
    first = store_batch(engine, run_id, _items())
    assert first.pages == 4 and first.links == 3 and first.errors == 1
    assert sorted(first.fingerprints) == ["f1", "f2", "f3", "f4"]
    store_batch(engine, run_id, _items())  # a replay after a restart: no new rows
    with session_scope(engine) as s:
        assert s.scalar(select(func.count()).select_from(Page)) == 4
        assert s.scalar(select(func.count()).select_from(Link)) == 3
        home = s.scalars(
            select(Page).where(Page.url == "http://www.cs.cornell.edu/index.html")
        ).one()
        assert zlib.decompress(home.body) == BODY
        assert home.registered_domain == "cornell.edu" and home.university_id == 1
        assert home.extraction_status == "pending" and home.first_run_id == run_id
        loop = s.scalars(select(Page).where(Page.url == "http://loop.example.org/a")).one()
        assert loop.fetch_error == "redirect_loop: a -> b -> a"
        gone = s.scalars(select(Page).where(Page.url == "http://news.example.org/story")).one()
        assert (gone.extraction_status, gone.extraction_reason) == (
            "skipped",
            "fetch error: http_404",
        )
        external = s.scalars(select(Page).where(Page.role == "external")).all()
        assert all(p.university_id is None for p in external)
        nofollow = s.scalars(select(Link).where(Link.target_domain == "example.org")).one()
        assert nofollow.nofollow and nofollow.anchor == "Story"
        s.execute(
            update(Page)
            .where(Page.id == home.id)
            .values(text="Department of Computer Science", extraction_status="done")
        )
    # the same content again keeps its extraction; new content is pending again
    store_batch(engine, run_id + 0, _items()[:1])
    with session_scope(engine) as s:
        assert s.scalar(select(Page.extraction_status).where(Page.id == home.id)) == "done"
    changed = _items()[0]
    changed.body = BODY.replace(b"Computer", b"Electrical")
    store_batch(engine, run_id, [changed])
    with session_scope(engine) as s:
        row = s.get(Page, home.id)
        assert row.extraction_status == "pending" and row.text is None
    engine.dispose()


def test_citations_environment_and_stats(db_url: str) -> None:
    engine, run_id = _setup(db_url)
    store_batch(engine, run_id, _items())
    redirects = {"http://old.example.org/": "http://www.yahoo.com/"}
    counts = resolve_citations(
        engine,
        run_id,
        [
            CitingCandidate("http://old.example.org/", 4, "majestic"),  # via a redirect
            CitingCandidate("http://www.yahoo.com/", 2, "urls"),  # no link to texas
            CitingCandidate("http://news.example.org/story", 4, "majestic"),  # 404
            CitingCandidate("http://never-fetched.example.org/", 4, "urls"),
        ],
        redirects,
    )
    assert counts == {"verified": 1, "missing": 1, "error": 2}
    resolve_citations(  # idempotent
        engine, run_id, [CitingCandidate("http://old.example.org/", 4, "majestic")], redirects
    )
    stats = finalize_run(engine, run_id)
    with session_scope(engine) as s:
        verified = s.scalars(select(Citation).where(Citation.status == "verified")).one()
        assert (verified.university_id, verified.anchor) == (4, "UW")
        assert verified.target_url == "http://www.cs.wisc.edu/"
        assert s.scalar(select(func.count()).select_from(Citation)) == 4
        env = {
            (e.university_id, e.domain, e.direction): (e.link_count, e.page_count)
            for e in s.scalars(select(Environment))
        }
    assert env == {
        (1, "yahoo.com", "outgoing"): (1, 1),
        (1, "example.org", "outgoing"): (1, 0),
        (4, "example.org", "citing"): (1, 1),
    }
    assert stats["pages"] == 4 and stats["errors"] == {"http_404": 1, "redirect_loop": 1}
    assert stats["links"] == 3 and stats["citations"]["verified"] == 1
    assert finalize_run(engine, run_id)["environment"] == stats["environment"]
    engine.dispose()


def test_sqlite_url_of_engine_is_reopened_by_path(tmp_path: Path) -> None:
    """The crawl process reopens the database by URL: a relative SQLite path is made
    absolute so that it names the same file."""
    from webometrics.stages.crawl.job import absolute_url

    engine = make_engine("sqlite:///relative.db")
    assert absolute_url(engine) == f"sqlite:///{Path('relative.db').resolve()}"
    engine.dispose()


def _page(url: str, fp: str, error: str | None = None, status: int = 200) -> PageItem:
    return PageItem(
        url=url, fingerprint=fp, role="external", university_id=None, depth=None,
        http_status=status, fetch_error=error,
        body=BODY, content_type="text/html", content_length=len(BODY),
    )  # fmt: skip


def test_a_redirect_loop_error_does_not_depend_on_the_store_order(db_url: str) -> None:
    """In a crawl farm the loop's later hop may be stored before its first hop."""
    engine, run_id = _setup(db_url)
    loop = "redirect_loop: http://x.org/a -> http://x.org/b -> http://x.org/a"
    store_batch(
        engine,
        run_id,
        [_page("http://x.org/b", "fb", loop, 302), PageErrorItem("http://x.org/a", loop)],
    )
    store_batch(engine, run_id, [_page("http://x.org/a", "fa", None, 302)])
    with session_scope(engine) as s:
        errors = dict(s.execute(select(Page.url, Page.fetch_error)).all())
        statuses = dict(s.execute(select(Page.url, Page.http_status)).all())
    assert errors == {"http://x.org/a": loop, "http://x.org/b": loop}
    assert statuses["http://x.org/a"] == 302
    # a later run that finds no loop clears it
    with session_scope(engine) as s:
        run = CrawlRun(kind="both")
        s.add(run)
        s.flush()
        later = run.id
    store_batch(engine, later, [_page("http://x.org/a", "fa", None, 302)])
    with session_scope(engine) as s:
        assert s.scalar(select(Page.fetch_error).where(Page.url == "http://x.org/a")) is None


def test_a_batch_chosen_as_deadlock_victim_is_written_again(postgres_url: str) -> None:
    """Two writers lock pages in opposite orders: PostgreSQL aborts one; the batch of
    :func:`store_batch` runs again and every page is stored."""
    import threading

    import psycopg

    engine, run_id = _setup(postgres_url)
    store_batch(engine, run_id, [_page("http://d.org/a", "a"), _page("http://d.org/b", "b")])
    dsn = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    other = psycopg.connect(dsn)
    other.execute("UPDATE page SET etag = 'other' WHERE url = 'http://d.org/b'")  # holds b
    done: dict[str, object] = {}

    def write() -> None:  # locks a, then waits for b
        try:
            done["result"] = store_batch(
                engine, run_id, [_page("http://d.org/a", "a2"), _page("http://d.org/b", "b2")]
            )
        except Exception as exc:  # reported below
            done["error"] = exc

    writer = threading.Thread(target=write)
    writer.start()
    import time

    time.sleep(0.5)
    try:
        other.execute("UPDATE page SET etag = 'other' WHERE url = 'http://d.org/a'")
        other.commit()
    except psycopg.errors.DeadlockDetected:
        other.rollback()
    finally:
        other.close()
    writer.join(30)
    assert "error" not in done, done.get("error")
    assert done["result"].pages == 2  # type: ignore[attr-defined]
    with session_scope(engine) as s:
        assert s.scalar(select(func.count()).select_from(Page).where(Page.url.like("%d.org%"))) == 2
