"""The aggregates the analyse stage keeps (store.aggregates, migration 0010) against the
views they stand in for, on the stored world, on SQLite and PostgreSQL: every read of
store.analytics gives the same rows from the aggregates as from the views; a change of
the data (an override, a new link) makes them stale and the reads fall back to the views
until the next refresh; the Network page's domains match a count of the environment rows.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, text

from core.choices import ENVIRONMENT_SOURCES
from store import aggregates, make_engine
from store import analytics as A
from store.analytics.runs import resolve_run_fresh
from store.models import AggregateEnvironment, CrawlRun, Link, Page
from store.overrides import clear_override, set_override
from tests.stored_world import ENV, Facts

DIRECTIONS = ("outgoing", "citing")


def _reads(engine: Engine) -> dict[str, Any]:
    """Every read of store.analytics that has an aggregate behind it, for every run."""
    out: dict[str, Any] = {"run_ids": A.run_ids(engine)}
    for run in out["run_ids"]:
        out[f"table2 {run}"] = A.table2(engine, run_id=run)
        out[f"table3 {run}"] = A.table3(engine, run_id=run)
        out[f"table3 all {run}"] = A.table3(engine, run_id=run, languages=None)
        out[f"table3 en {run}"] = A.table3(engine, run_id=run, languages=("en",))
        out[f"wif {run}"] = A.web_impact_factors(engine, run_id=run)
        out[f"shares {run}"] = A.category_shares(engine, run_id=run)
        out[f"countries {run}"] = A.country_category_shares(engine, run_id=run)
        out[f"environment {run}"] = A.environment(engine, run_id=run)
        out[f"summary {run}"] = A.environment_summary(engine, run_id=run)
        out[f"rank factors {run}"] = A.rank_factors(engine, run_id=run)
        out[f"rank factor shares {run}"] = A.rank_factor_shares(engine, run_id=run)
        for d in DIRECTIONS:
            out[f"shares {run} {d}"] = A.category_shares(engine, run_id=run, direction=d)
            out[f"countries {run} {d}"] = A.country_category_shares(engine, run_id=run, direction=d)
            out[f"environment {run} {d} some"] = A.environment(
                engine, run_id=run, direction=d, domains=["vk.com", "mit.edu", "wikipedia.org"]
            )
            out[f"network {run} {d}"] = A.network_domains(engine, run_id=run, direction=d)
            out[f"network {run} {d} 2"] = A.network_domains(
                engine, run_id=run, direction=d, min_universities=2, limit=3
            )
            out[f"network {run} {d} cats"] = A.network_domains(
                engine, run_id=run, direction=d, categories=["universities", "uncategorised"]
            )
            for sources in (("crawl",), ("backlinks", "commoncrawl")):
                out[f"network {run} {d} {sources}"] = A.network_domains(
                    engine, run_id=run, direction=d, sources=sources
                )
                out[f"summary {run} {d} {sources}"] = A.environment_summary(
                    engine, run_id=run, direction=d, sources=sources, categories=["universities"]
                )
                out[f"overlaps {run} {d} {sources}"] = A.colink_overlaps(
                    engine, run_id=run, direction=d, sources=sources
                )
            out[f"overlaps {run} {d}"] = A.colink_overlaps(engine, run_id=run, direction=d)
            for sources in (("crawl",), ("backlinks", "commoncrawl"), ENVIRONMENT_SOURCES):
                out[f"shares {run} {d} {sources}"] = A.category_shares(
                    engine, run_id=run, direction=d, sources=sources
                )
                out[f"countries {run} {d} {sources}"] = A.country_category_shares(
                    engine, run_id=run, direction=d, sources=sources
                )
    return out


def test_shares_of_every_source_are_the_views(filled: Facts) -> None:
    """The shares counted in SQL over the rows of chosen sources: with every source
    chosen, the rows of v_category_share and v_country_category_share; with one, the
    distinct domains of that source's environment rows."""
    engine = make_engine(filled.url)
    try:
        for run in A.run_ids(engine):
            for d in DIRECTIONS:
                every = A.category_shares(engine, run_id=run, direction=d)
                assert every
                assert (
                    A.category_shares(engine, run_id=run, direction=d, sources=ENVIRONMENT_SOURCES)
                    == every
                )
                assert A.country_category_shares(
                    engine, run_id=run, direction=d, sources=ENVIRONMENT_SOURCES
                ) == A.country_category_shares(engine, run_id=run, direction=d)
                rows = A.environment(engine, run_id=run, direction=d)
                crawl = defaultdict(set)
                for r in rows:
                    if r.source == "crawl":
                        crawl[(r.university, r.category or "uncategorised")].add(r.domain)
                got = A.category_shares(engine, run_id=run, direction=d, sources=("crawl",))
                assert {(g.university, g.category): g.domains for g in got} == {
                    k: len(v) for k, v in crawl.items()
                }
    finally:
        engine.dispose()


def _fresh(engine: Engine) -> bool:
    return resolve_run_fresh(engine, None)[1]


def test_aggregates_give_the_views_rows_and_fall_back_when_stale(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        assert aggregates.fresh_run_ids(engine) is None  # never built: the views
        from_views = _reads(engine)
        assert from_views["run_ids"] == sorted(filled.run_ids.values())
        assert from_views[f"table2 {filled.run_ids[1]}"][0].external_links > 0

        built = aggregates.refresh(engine)
        assert built["aggregate_runs"] == len(from_views["run_ids"])
        assert aggregates.fresh_run_ids(engine) == from_views["run_ids"]
        assert _fresh(engine)
        from_aggregates = _reads(engine)
        for key, rows in from_views.items():
            assert from_aggregates[key] == rows, key

        # an analyst's override: stale, the reads are the views' (with the override)
        set_override(engine, "mit.edu", "media", note="test")
        assert aggregates.fresh_run_ids(engine) is None
        overridden = _reads(engine)
        run1 = filled.run_ids[1]
        assert overridden[f"shares {run1}"] != from_aggregates[f"shares {run1}"]
        aggregates.refresh(engine)
        assert _fresh(engine)
        assert _reads(engine) == overridden

        # a new link of run 1 from spbu.ru to a new domain: stale until the next refresh
        with engine.begin() as conn:
            page_id = (
                conn.execute(
                    select(Page.id).where(
                        Page.university_id == filled.university_ids["spbu.ru"],
                        Page.role == "university",
                    )
                )
                .scalars()
                .first()
            )
            conn.execute(
                insert(Link).values(
                    run_id=run1,
                    source_page_id=page_id,
                    target_url="https://new-domain.org/x",
                    target_host="new-domain.org",
                    target_domain="new-domain.org",
                    nofollow=False,
                    external=True,
                )
            )
        assert not _fresh(engine)
        relinked = _reads(engine)
        spbu = filled.university_ids["spbu.ru"]
        before = next(r for r in overridden[f"table2 {run1}"] if r.university_id == spbu)
        after = next(r for r in relinked[f"table2 {run1}"] if r.university_id == spbu)
        assert after.external_domains == before.external_domains + 1
        aggregates.refresh(engine)
        assert _reads(engine) == relinked

        # a crawl run deleted (its rows go with it): stale
        with engine.begin() as conn:
            conn.execute(delete(CrawlRun).where(CrawlRun.id == filled.failed_run_id))
        assert not _fresh(engine)
    finally:
        engine.dispose()


FILTERS = (
    (None, None),
    (("crawl",), None),
    (("backlinks", "commoncrawl"), None),
    (None, ("universities", "uncategorised")),
    (("crawl",), ("universities",)),
)


def _check_network(
    engine: Engine,
    run: int,
    d: str,
    rows: list[A.EnvironmentRow],
    sources: tuple[str, ...] | None,
    categories: tuple[str, ...] | None,
) -> None:
    """The Network page's reads under one filter against the environment rows it keeps."""
    unis: dict[str, set[int]] = defaultdict(set)
    weight: dict[str, int] = defaultdict(int)
    for r in rows:
        unis[r.domain].add(r.university_id)
        weight[r.domain] += r.links if d == "outgoing" else r.pages
    got = A.network_domains(engine, run_id=run, direction=d, sources=sources, categories=categories)
    assert {g.domain: (g.universities, g.weight) for g in got} == {
        dom: (len(u), weight[dom]) for dom, u in unis.items()
    }
    keys = [(-g.universities, -g.weight, g.domain) for g in got]
    assert keys == sorted(keys)
    assert A.network_domain_count(
        engine, run_id=run, direction=d, sources=sources, categories=categories, min_universities=2
    ) == sum(len(u) >= 2 for u in unis.values())
    summary = A.environment_summary(
        engine, run_id=run, direction=d, sources=sources, categories=categories
    )
    if not rows:
        assert summary == []
        return
    (s,) = summary
    assert s.edges == len(rows)
    assert s.pairs == len({(r.university_id, r.domain) for r in rows})
    assert s.domains == len(unis)
    assert s.universities == len({r.university_id for r in rows})
    assert s.max_universities == max(len(u) for u in unis.values())
    sets: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        sets[r.university].add(r.domain)
    overlaps = A.colink_overlaps(
        engine, run_id=run, direction=d, sources=sources, categories=categories
    )
    assert {(o.a, o.b): (o.shared, o.only_a, o.only_b) for o in overlaps} == {
        (a, b): (len(sets[a] & sets[b]), len(sets[a] - sets[b]), len(sets[b] - sets[a]))
        for a in sets
        for b in sets
        if a < b
    }


def test_network_domains_count_the_environment_rows(filled: Facts) -> None:
    """Universities per domain and the summed weights, from the environment rows (the
    count the Network page did in pandas), before and after a refresh."""
    engine = make_engine(filled.url)
    try:
        for refreshed in (False, True):
            if refreshed:
                aggregates.refresh(engine)
            for run in A.run_ids(engine):
                for d in DIRECTIONS:
                    every = A.environment(engine, run_id=run, direction=d)
                    for sources, categories in FILTERS:
                        rows = [
                            r
                            for r in every
                            if (sources is None or r.source in sources)
                            and (
                                categories is None or (r.category or "uncategorised") in categories
                            )
                        ]
                        _check_network(engine, run, d, rows, sources, categories)
            # the stored world's run 1: spbu.ru and ox.ac.uk link to mit.edu and arxiv.org
            run1 = sorted(A.run_ids(engine))[0]
            shared = {
                g.domain
                for g in A.network_domains(
                    engine, run_id=run1, direction="outgoing", min_universities=3
                )
            }
            expect = {
                dom
                for dom in {d for u in ENV[1].values() for d in u.get("outgoing", {})}
                if sum(dom in u.get("outgoing", {}) for u in ENV[1].values()) >= 3
            }
            assert shared == expect
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(AggregateEnvironment)).scalar()
    finally:
        engine.dispose()


def test_cluster_members_per_cluster_keeps_the_largest(filled: Facts) -> None:
    """``per_cluster`` keeps each cluster's members with most pages (then by domain and
    key): the first rows of the whole list in that order."""
    engine = make_engine(filled.url)
    try:
        ids = list(filled.cluster_ids.values())
        every = A.cluster_members(engine, ids)
        assert len({m.cluster_id for m in every}) > 1
        for n in (1, 2):
            got = A.cluster_members(engine, ids, per_cluster=n)
            want = []
            for cid in sorted({m.cluster_id for m in every}):
                mine = sorted(
                    (m for m in every if m.cluster_id == cid),
                    key=lambda m: (-m.n_pages, m.domain, m.key),
                )
                want += sorted(mine[:n], key=lambda m: (m.domain, m.key))
            assert got == want
    finally:
        engine.dispose()


def test_sync_categories_moves_overridden_domains(filled: Facts) -> None:
    """After an override is set or cleared, sync_categories makes the aggregates fresh
    again with the views' rows; after any other change it leaves them stale."""
    engine = make_engine(filled.url)
    try:
        assert aggregates.sync_categories(engine) == {"recounted": 0, "fresh": False}
        aggregates.refresh(engine)
        assert aggregates.sync_categories(engine) == {"recounted": 0, "fresh": True}
        steps = [
            ("mit.edu", "media"),  # categorised, shared by universities and directions
            ("cnn.com", "news_portals"),  # never categorised: uncategorised until now
            ("lenta.ru", None),  # the stored world's own override, cleared
            ("mit.edu", None),
        ]
        for domain, category in steps:
            if category is None:
                clear_override(engine, domain)
            else:
                set_override(engine, domain, category)
            assert not _fresh(engine)
            from_views = _reads(engine)
            assert aggregates.sync_categories(engine) == {"recounted": 1, "fresh": True}
            assert _fresh(engine)
            assert _reads(engine) == from_views, (domain, category)

        set_override(engine, "vk.com", "media")
        with engine.begin() as conn:  # and a new crawl run: only a refresh will do
            conn.execute(insert(CrawlRun).values(kind="outgoing", status="running"))
        assert aggregates.sync_categories(engine) == {"recounted": 0, "fresh": False}
        assert not _fresh(engine)
    finally:
        engine.dispose()


def test_saved_impact_figures_are_the_views(filled: Facts, monkeypatch: Any) -> None:
    """store.impact's reads give the same rows from agg_citing_overlap / agg_citing_rank
    as from v_citing_overlap / v_citing_rank (the stored world has a web graph)."""
    from store import impact

    engine = make_engine(filled.url)
    try:
        assert not aggregates.impact_fresh(engine)
        views = (impact.source_overlap(engine), impact.rank_weighted(engine))
        assert views[0] and views[1]
        aggregates.refresh(engine)
        assert aggregates.impact_fresh(engine)
        monkeypatch.setattr(impact, "V_CITING_OVERLAP", aggregates.CITING_OVERLAP_SOURCE)
        monkeypatch.setattr(impact, "V_CITING_RANK", aggregates.CITING_RANK_SOURCE)
        assert (impact.source_overlap(engine), impact.rank_weighted(engine)) == views
    finally:
        engine.dispose()


def test_citing_overlap_view_gives_revision_0007_rows(filled: Facts) -> None:
    """Revision 0013's v_citing_overlap (one read of v_citing_source) gives the rows of
    revision 0007's SQL (two reads joined), web graph and citations both stored."""
    from migrations.revisions import revision_module

    old = dict(revision_module("0007_citing_node.py").VIEWS)["v_citing_overlap"]
    engine = make_engine(filled.url)
    try:
        with engine.connect() as conn:
            new_rows = sorted(map(tuple, conn.execute(text("SELECT * FROM v_citing_overlap"))))
            old_rows = sorted(map(tuple, conn.execute(text(f"SELECT * FROM ({old}) AS v"))))
        assert len({r[3] for r in new_rows}) >= 2  # a web graph and citations both counted
        assert new_rows == old_rows
    finally:
        engine.dispose()
