"""The citing pages of a domain (:func:`store.queries.citing_pages`) and the data version
the dashboard follows (:func:`store.freshness.data_version`), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter

from store import make_engine
from store.freshness import data_version
from store.queries import citing_pages
from tests.stored_world import ENV, Facts


def test_citing_pages_are_the_verified_citations_of_the_university(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    spbu, run1 = filled_ro.university_ids["spbu.ru"], filled_ro.run_ids[1]
    cited = ENV[1]["spbu.ru"]["citing"]  # domain -> citing pages in run 1
    domains = [*cited, "gazprom.ru", "arxiv.org"]  # a citation not found; no citation
    rows = citing_pages(engine, spbu, domains, run_id=run1, per_domain=100)
    assert Counter(r.domain for r in rows) == Counter(cited)
    assert all(r.url.startswith(f"https://{r.domain}/cites/spbu.ru/") for r in rows)
    assert [r.url for r in rows] == sorted(r.url for r in rows)  # by domain, then URL
    assert {r.role for r in rows} == {"citing"}  # as the pages were fetched
    # at most per_domain of each, the first by URL
    two = citing_pages(engine, spbu, domains, run_id=run1, per_domain=2)
    assert Counter(r.domain for r in two) == Counter({d: min(2, n) for d, n in cited.items()})
    # every run: each citing URL once, however many runs found it
    every = citing_pages(engine, spbu, domains, per_domain=100)
    assert len({r.url for r in every}) == len(every) >= len(rows)
    assert citing_pages(engine, spbu, []) == []
    engine.dispose()


def test_the_data_version_follows_a_change(filled: Facts) -> None:
    from store import overrides

    engine = make_engine(filled.url)
    before = data_version(engine)
    assert data_version(engine) == before  # reading changes nothing
    overrides.set_override(engine, "vk.com", "media", note="test")
    after = data_version(engine)
    assert after != before
    engine.dispose()
