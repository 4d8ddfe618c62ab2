"""The webometric read queries against a database filled by the fixture, on SQLite and
PostgreSQL; every expected number is derived from the fixture's ENV, not from SQL."""

from __future__ import annotations

from collections import defaultdict

import pytest

from core.exceptions import ParameterError
from store import analytics as A
from store import make_engine
from tests.stored_world import (
    CLUSTERINGS,
    DOMAINS,
    ENV,
    UNIVERSITIES,
    Facts,
    effective_category,
    expected_table2,
)


def _uid_to_domain(facts: Facts) -> dict[int, str]:
    return {v: k for k, v in facts.university_ids.items()}


def test_table2_per_run_and_university(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        by_id = _uid_to_domain(filled_ro)
        for n, run_id in filled_ro.run_ids.items():
            rows = A.table2(engine, run_id=run_id)
            assert [r.rank for r in rows] == sorted(r for _n, _c, r, _d in UNIVERSITIES)
            got = {
                by_id[r.university_id]: (
                    r.site_pages,
                    r.external_links,
                    r.external_domains,
                    r.citing_pages,
                    r.citing_domains,
                )
                for r in rows
            }
            assert got == expected_table2(n), f"run {n}"
        # the latest run is the default
        assert A.table2(engine)[0].run_id == filled_ro.run_ids[2]
        assert A.latest_run_id(engine) == filled_ro.run_ids[2]
        with pytest.raises(ParameterError, match="runs with data"):
            A.table2(engine, run_id=999)
    finally:
        engine.dispose()


def test_table3_domains_by_language(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        by_id = _uid_to_domain(filled_ro)
        rows = A.table3(engine, run_id=filled_ro.run_ids[1])
        got = {(by_id[r.university_id], r.direction, r.language): r.domains for r in rows}
        for _n, _c, _r, udom in UNIVERSITIES:
            for direction in ("outgoing", "citing"):
                doms = ENV[1].get(udom, {}).get(direction, {})
                for lang in ("ru", "en"):
                    want = sum(DOMAINS[d][0] == lang for d in doms)
                    assert got[(udom, direction, lang)] == want, (udom, direction, lang)
        assert {r.language for r in rows} == {"ru", "en"}
        # all languages as stored
        langs = {r.language for r in A.table3(engine, run_id=filled_ro.run_ids[1], languages=None)}
        assert langs == {"ru", "en"}
    finally:
        engine.dispose()


def test_category_shares_honour_overrides(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        by_id = _uid_to_domain(filled_ro)
        rows = A.category_shares(engine, run_id=filled_ro.run_ids[1])
        got = {
            (by_id[r.university_id], r.direction, r.category): (r.domains, r.share) for r in rows
        }
        want: dict[tuple[str, str, str], int] = defaultdict(int)
        totals: dict[tuple[str, str], int] = defaultdict(int)
        for udom, dirs in ENV[1].items():
            for direction, doms in dirs.items():
                for d in doms:
                    want[(udom, direction, effective_category(d))] += 1
                    totals[(udom, direction)] += 1
        assert set(got) == set(want)
        for key, n in want.items():
            assert got[key][0] == n
            assert got[key][1] == pytest.approx(n / totals[key[:2]])
        # the override wins: lenta.ru counts as media, never as a news portal
        assert ("spbu.ru", "outgoing", "media") in got
        assert not any(k[2] == "news_portals" for k in got)
        # shares of a university and direction sum to 1
        sums: dict[tuple[int, str], float] = defaultdict(float)
        for r in rows:
            sums[(r.university_id, r.direction)] += r.share
        assert all(s == pytest.approx(1.0) for s in sums.values())
        # run 2: cnn.com was never categorised
        cats = {r.category for r in A.category_shares(engine, direction="citing")}
        assert "uncategorised" in cats
    finally:
        engine.dispose()


def test_country_shares_count_distinct_domains(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        rows = A.country_category_shares(engine, run_id=filled_ro.run_ids[1], direction="outgoing")
        country = {d: c for _n, c, _r, d in UNIVERSITIES}
        doms: dict[str, set[str]] = defaultdict(set)
        for udom, dirs in ENV[1].items():
            doms[country[udom]] |= set(dirs.get("outgoing", {}))
        want = defaultdict(int)
        for c, ds in doms.items():
            for d in ds:
                want[(c, effective_category(d))] += 1
        got = {(r.country, r.category): r.domains for r in rows}
        assert got == dict(want)
        russia = [r for r in rows if r.country == "Russia"]
        assert sum(r.share for r in russia) == pytest.approx(1.0)
    finally:
        engine.dispose()


def test_web_impact_factors(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        by_id = _uid_to_domain(filled_ro)
        rows = {
            by_id[r.university_id]: r
            for r in A.web_impact_factors(engine, run_id=filled_ro.run_ids[1])
        }
        all_citing = {d for dirs in ENV[1].values() for d in dirs.get("citing", {})}
        for udom, (pages, links, ext, cit_pages, cit_doms) in expected_table2(1).items():
            r = rows[udom]
            assert r.wif_pages == (pytest.approx(cit_pages / pages) if pages else None)
            assert r.wif_domains == (pytest.approx(cit_doms / pages) if pages else None)
            assert r.outlink_density == (pytest.approx(links / pages) if pages else None)
            assert r.in_out_ratio == (pytest.approx(cit_doms / ext) if ext else None)
            assert r.visibility_share == pytest.approx(cit_doms / len(all_citing))
        assert rows["mit.edu"].in_out_ratio == 0.0  # MIT links out, nothing cites it
    finally:
        engine.dispose()


def test_changes_between_runs(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        r1, r2 = filled_ro.run_ids[1], filled_ro.run_ids[2]
        changes = A.environment_changes(engine)  # default: the two latest runs
        got = {(c.university, c.direction, c.domain, c.change) for c in changes}
        want = set()
        names = {d: n for n, _c, _r, d in UNIVERSITIES}
        for udom in ENV[2]:
            for direction in ("outgoing", "citing"):
                old = set(ENV[1].get(udom, {}).get(direction, {}))
                new = set(ENV[2].get(udom, {}).get(direction, {}))
                if not old or not new:
                    continue  # not comparable
                want |= {(names[udom], direction, d, "appeared") for d in new - old}
                want |= {(names[udom], direction, d, "disappeared") for d in old - new}
        assert got == want
        assert ("Saint Petersburg State University", "outgoing", "gazprom.ru", "appeared") in got
        assert all(c.run_before == r1 and c.run_after == r2 for c in changes)
        summary = {(s.university, s.direction): s for s in A.change_summary(engine)}
        spbu = summary[("Saint Petersburg State University", "outgoing")]
        assert (spbu.before, spbu.after, spbu.kept, spbu.appeared, spbu.disappeared) == (
            5,
            3,
            2,
            1,
            3,
        )
        # Oxford's run 2 has no citing data: not comparable, no change listed
        ox = summary[("University of Oxford", "citing")]
        assert not ox.comparable and ox.disappeared == 0
        with pytest.raises(ParameterError, match="different runs"):
            A.environment_changes(engine, before=r2, after=r2)
    finally:
        engine.dispose()


def test_clusters_and_members_from_views(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        rows = A.clusters(engine)
        final = [(u, d, len(m)) for (u, d), groups in CLUSTERINGS.items() for m in groups.values()]
        assert len(rows) == len(final)  # level -1 only
        spbu = [r for r in rows if r.university == "Saint Petersburg State University"]
        assert {r.size for r in spbu} == {3, 2}
        assert sorted((r.direction, r.size) for r in spbu) == sorted(
            (d, n) for u, d, n in final if u == "spbu.ru"
        )
        assert all(r.run_id == filled_ro.run_ids[1] for r in spbu)
        members = A.cluster_members(engine, [filled_ro.cluster_ids["spbu.ru:social"]])
        assert [(m.domain, m.category) for m in members] == [
            ("lenta.ru", "media"),
            ("vk.com", "social_networks"),
        ]
        frame = A.to_frame(rows, ["university", "size"])
        assert list(frame.columns) == ["university", "size"] and len(frame) == len(final)
    finally:
        engine.dispose()


def test_environment_rows_and_domain_categories(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        rows = A.environment(engine, run_id=filled_ro.run_ids[1], direction="citing")
        by_id = _uid_to_domain(filled_ro)
        got = {(by_id[r.university_id], r.domain): r.pages for r in rows}
        want = {(u, d): n for u, dirs in ENV[1].items() for d, n in dirs.get("citing", {}).items()}
        assert got == want
        cam = next(r for r in rows if r.domain == "cam.ac.uk")
        assert cam.language == "en"  # no domain document: language of its pages
        overridden = A.domain_categories(engine, overridden_only=True)
        assert [(d.domain, d.assigned_category, d.category) for d in overridden] == [
            ("lenta.ru", "news_portals", "media")
        ]
        with pytest.raises(ParameterError, match="direction"):
            A.environment(engine, direction="sideways")
    finally:
        engine.dispose()


def test_empty_database_gives_empty_tables(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    try:
        assert A.latest_run_id(engine) is None
        assert A.table2(engine) == []
        assert A.category_shares(engine) == []
        assert A.environment_changes(engine) == []
        assert A.clusters(engine) == []
        assert A.to_frame([], ["a"]).columns.tolist() == ["a"]
    finally:
        engine.dispose()


def test_run_ids_are_the_runs_of_the_environment_view(filled_ro: Facts) -> None:
    from sqlalchemy import text

    engine = make_engine(filled_ro.url)
    try:
        with engine.connect() as conn:
            view = [
                r
                for (r,) in conn.execute(
                    text("SELECT DISTINCT run_id FROM v_environment ORDER BY run_id")
                )
            ]
        assert A.run_ids(engine) == view
        assert sorted(filled_ro.run_ids.values()) == view
    finally:
        engine.dispose()
