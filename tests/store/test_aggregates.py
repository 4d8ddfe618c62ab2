"""The aggregates (store.aggregates, migration 0010), the only read path of the figures,
against the views they stand in for, on the stored world, on SQLite and PostgreSQL: each
saved source gives the rows of its view, Table 3 the count of v_environment; a change of
the data (an override, a new link) leaves the reads at the last refresh (stale, fast)
until the next one, which gives the views' rows again; the Network page's domains match
a count of the environment rows.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine, delete, event, func, insert, select, text

from core.choices import ENVIRONMENT_SOURCES
from store import aggregates, impact, make_engine
from store import analytics as A
from store.analytics.ranks import AGG_RANK_FACTOR_SHARE, AGG_RANK_FACTORS
from store.analytics.views import AGG_COUNTRY_SHARE, AGG_SHARE
from store.models import AggregateEnvironment, AggregateState, CrawlRun
from store.overrides import clear_override, set_override
from tests.stored_world import ENV, Facts, store_link

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
    return aggregates.is_fresh(engine, (A.run_ids(engine) or [None])[-1])


# each view and the saved source the readers read instead (its columns)
STAND_INS = {
    "v_environment": aggregates.ENVIRONMENT_SOURCE,
    "v_university_table2": aggregates.TABLE2_SOURCE,
    "v_category_share": AGG_SHARE,
    "v_country_category_share": AGG_COUNTRY_SHARE,
    "v_rank_factors": AGG_RANK_FACTORS,
    "v_rank_factor_share": AGG_RANK_FACTOR_SHARE,
    "v_citing_overlap": aggregates.CITING_OVERLAP_SOURCE,
    "v_citing_rank": aggregates.CITING_RANK_SOURCE,
}


def _value(v: Any) -> Any:
    if isinstance(v, Decimal | float):
        return round(float(v), 9)
    return v


def _rows(engine: Engine, source: Any, columns: list[str]) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        got = conn.execute(select(*(source.c[c] for c in columns))).all()
    return sorted((tuple(_value(v) for v in r) for r in got), key=repr)


def _views_and_stand_ins(engine: Engine) -> dict[str, tuple[list[Any], list[Any]]]:
    """Per view: its rows now (SQL on the view) and the saved rows the readers read."""
    from sqlalchemy import column, table

    out = {}
    for name, saved in STAND_INS.items():
        columns = [c.name for c in saved.c if c.name != "id"]
        view = table(name, *(column(c) for c in columns))
        out[name] = (_rows(engine, view, columns), _rows(engine, saved, columns))
    return out


def _table3_of_view(engine: Engine, run: int) -> dict[tuple[int, str, str], int]:
    """Table 3 of every language counted on v_environment (what agg_domain_count saves)."""
    with engine.connect() as conn:
        got = conn.execute(
            text(
                "SELECT university_id, direction, COALESCE(language, 'unknown'), "
                "COUNT(DISTINCT domain) FROM v_environment WHERE run_id = :run "
                "GROUP BY university_id, direction, COALESCE(language, 'unknown')"
            ),
            {"run": run},
        ).all()
    return {(int(u), d, lang): int(n) for u, d, lang, n in got}


def _assert_views_equal_aggregates(engine: Engine) -> None:
    for name, (view, saved) in _views_and_stand_ins(engine).items():
        assert view == saved, name
    for run in A.run_ids(engine):
        got = {
            (r.university_id, r.direction, r.language): r.domains
            for r in A.table3(engine, run_id=run, languages=None)
            if r.domains
        }
        assert got == _table3_of_view(engine, run)


def _forget(engine: Engine) -> None:
    """No figures computed yet (a database before its first refresh)."""
    with engine.begin() as conn:
        conn.execute(delete(AggregateState))


def test_aggregates_are_the_views_rows_and_stay_until_refreshed(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        runs = sorted(filled.run_ids.values())
        _forget(engine)  # never computed: no run has figures, the reads are empty
        assert A.run_ids(engine) == []
        assert A.unrefreshed_run_ids(engine) == runs
        assert A.table2(engine)[0].external_links == 0
        assert A.category_shares(engine) == []
        assert aggregates.refresh_if_stale(engine)["aggregate_runs"] == len(runs)

        assert aggregates.fresh_run_ids(engine) == runs
        assert A.unrefreshed_run_ids(engine) == []
        assert _fresh(engine)
        _assert_views_equal_aggregates(engine)
        before = _reads(engine)
        run1 = filled.run_ids[1]
        assert before[f"table2 {run1}"][0].external_links > 0
        assert aggregates.refresh_if_stale(engine) == {"aggregate_fresh": True}

        # an analyst's override: stale, the reads stay those of the last refresh
        set_override(engine, "mit.edu", "media", note="test")
        assert aggregates.fresh_run_ids(engine) is None
        assert _reads(engine) == before
        assert aggregates.refresh_if_stale(engine)["recounted"] == 1  # the domain moved
        assert _fresh(engine)
        _assert_views_equal_aggregates(engine)
        overridden = _reads(engine)
        assert overridden[f"shares {run1}"] != before[f"shares {run1}"]

        # a new link of run 1 from spbu.ru to a new domain: stale until the next refresh
        store_link(engine, run1, "new-domain.org", filled.university_ids["spbu.ru"])
        assert not _fresh(engine)
        assert _reads(engine) == overridden
        assert aggregates.refresh_if_stale(engine)["aggregate_runs"] == len(runs)
        _assert_views_equal_aggregates(engine)
        relinked = _reads(engine)
        spbu = filled.university_ids["spbu.ru"]
        was = next(r for r in overridden[f"table2 {run1}"] if r.university_id == spbu)
        now = next(r for r in relinked[f"table2 {run1}"] if r.university_id == spbu)
        assert now.external_domains == was.external_domains + 1

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
    count the Network page did in pandas), computed twice over."""
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
        _forget(engine)
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
            assert aggregates.sync_categories(engine) == {"recounted": 1, "fresh": True}
            assert _fresh(engine)
            _assert_views_equal_aggregates(engine)

        set_override(engine, "vk.com", "media")
        with engine.begin() as conn:  # and a new crawl run: only a refresh will do
            conn.execute(insert(CrawlRun).values(kind="outgoing", status="running"))
        assert aggregates.sync_categories(engine) == {"recounted": 0, "fresh": False}
        assert not _fresh(engine)
    finally:
        engine.dispose()


def test_saved_impact_figures_are_the_views(filled: Facts, monkeypatch: Any) -> None:
    """store.impact's reads give the rows of v_citing_overlap / v_citing_rank as saved by
    the last refresh (the stored world has a web graph): the same code on the views
    gives the same figures."""
    engine = make_engine(filled.url)
    try:
        saved = (impact.source_overlap(engine), impact.rank_weighted(engine))
        assert saved[0] and saved[1]
        monkeypatch.setattr(aggregates, "CITING_OVERLAP_SOURCE", impact.V_CITING_OVERLAP)
        monkeypatch.setattr(aggregates, "CITING_RANK_SOURCE", impact.V_CITING_RANK)
        assert (impact.source_overlap(engine), impact.rank_weighted(engine)) == saved
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


def test_a_crawl_writes_while_the_figures_are_computed(filled: Facts) -> None:
    """refresh computes into temporary tables with reads only: once the rows are computed
    another connection stores a link without waiting (SQLite: a 0.1 s busy timeout would
    fail it), and the copy that follows leaves the aggregates stale, as the link came
    after the fingerprint."""
    engine = make_engine(filled.url)
    other = make_engine(filled.url)
    steps = []

    def crawl_goes_on(step: str) -> None:
        steps.append(step)
        if step != "computed":
            return
        if other.dialect.name == "sqlite":  # a writer that would not wait 0.1 s

            @event.listens_for(other, "connect")
            def impatient(dbapi_connection: Any, _record: Any) -> None:
                dbapi_connection.execute("PRAGMA busy_timeout=100")

        store_link(other, filled.run_ids[1], "during-refresh.org")

    try:
        assert aggregates.refresh(engine, on_step=crawl_goes_on)["aggregate_rows"] > 0
        assert steps == ["computed", "copied"]
        assert A.run_ids(engine) == sorted(filled.run_ids.values())
        assert aggregates.fresh_run_ids(engine) is None  # the link came after: stale
        assert aggregates.refresh_if_stale(engine)["aggregate_runs"]
        assert aggregates.fresh_run_ids(engine)
        _assert_views_equal_aggregates(engine)
    finally:
        engine.dispose()
        other.dispose()
