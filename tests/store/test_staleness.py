"""The banner's account of stale figures (store.freshness.staleness) on the stored world,
SQLite and PostgreSQL: nothing computed yet, fresh after a refresh, then what an override
and a crawl's new page and link change, each in words, until the next refresh."""

from __future__ import annotations

from sqlalchemy import delete, insert, select

from store import aggregates, make_engine
from store.freshness import staleness
from store.models import AggregateState, Link, Page
from store.overrides import set_override
from tests.stored_world import Facts


def test_staleness_says_what_changed_since_the_refresh(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        assert staleness(engine) is None  # the stored world is computed, as analyse leaves it
        with engine.begin() as conn:  # a database whose figures were never computed
            conn.execute(delete(AggregateState))
        never = staleness(engine)
        assert never is not None and never.built_at is None
        assert "never computed" in never.message()

        aggregates.refresh(engine)
        assert staleness(engine) is None

        set_override(engine, "mit.edu", "media", note="test")
        overridden = staleness(engine)
        assert overridden is not None and overridden.built_at is not None
        assert (overridden.pages, overridden.links) == (0, 0)
        assert overridden.changes == ("categories or overrides changed",)

        aggregates.refresh(engine)
        assert staleness(engine) is None
        with engine.begin() as conn:
            page = conn.execute(select(Page).where(Page.role == "university")).mappings().first()
            assert page is not None
            new_id = conn.execute(
                insert(Page)
                .values(
                    url=page["url"] + "?new",
                    host=page["host"],
                    registered_domain=page["registered_domain"],
                    university_id=page["university_id"],
                    role="university",
                )
                .returning(Page.id)
            ).scalar_one()
            conn.execute(
                insert(Link).values(
                    run_id=filled.run_ids[1],
                    source_page_id=new_id,
                    target_url="https://new-domain.org/x",
                    target_host="new-domain.org",
                    target_domain="new-domain.org",
                    nofollow=False,
                    external=True,
                )
            )
        crawled = staleness(engine)
        assert crawled is not None
        assert (crawled.pages, crawled.links) == (1, 1)
        assert crawled.message().startswith("1 page crawled, 1 link stored after the figures")
        assert "webometrics refresh" in crawled.message()
        aggregates.refresh(engine)
        assert staleness(engine) is None
    finally:
        engine.dispose()
