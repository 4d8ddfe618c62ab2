"""Category shares by domain and by cluster (the paper's way), the mixed clusters, the part
resting on unreviewed low-confidence domains, the rank factors under both definitions and
the sensitivity of the signs: against hand-computed values on the stored world (SQLite and
PostgreSQL), and on what the real pipeline stores (``pipeline_db``)."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter, defaultdict

import pytest
from sqlalchemy import text, update

from core.exceptions import ParameterError
from store import analytics as A
from store import make_engine
from store.analytics import shares as S
from store.analytics.ranks import sensitivity_row
from store.models import Cluster, Clustering, DomainCategory
from tests.stored_world import UNI_BY_DOMAIN, Facts, add_clustering

SPBU, OX, NSU = (UNI_BY_DOMAIN[d][0] for d in ("spbu.ru", "ox.ac.uk", "nsu.ru"))


def _prepare(facts: Facts) -> None:
    """The stored world with votes and scores to count: spbu.ru's outgoing "social"
    cluster (lenta.ru, vk.com) has support 0.5, no majority; its "science" cluster 2/3;
    vk.com is unreviewed and scored 0.3, lenta.ru scored 0.2 but overridden by an analyst."""
    engine = make_engine(facts.url)
    try:
        with engine.begin() as conn:
            conn.execute(
                update(Cluster)
                .where(Cluster.id == facts.cluster_ids["spbu.ru:social"])
                .values(category_support=0.5, category_voters=2)
            )
            conn.execute(
                update(Cluster)
                .where(Cluster.id == facts.cluster_ids["spbu.ru:science"])
                .values(category_support=2 / 3, category_voters=3)
            )
            conn.execute(
                update(DomainCategory).where(DomainCategory.domain == "vk.com").values(score=0.3)
            )
            conn.execute(
                update(DomainCategory).where(DomainCategory.domain == "lenta.ru").values(score=0.2)
            )
    finally:
        engine.dispose()


def _by(rows, *keys):
    return {tuple(getattr(r, k) for k in keys): r for r in rows}


def test_both_definitions_against_a_hand_computed_world(filled: Facts) -> None:
    _prepare(filled)
    engine = make_engine(filled.url)
    run = filled.run_ids[1]
    try:
        dom = _by(
            S.university_shares(engine, run_id=run, direction="outgoing"), "university", "category"
        )
        # spbu.ru links to mit.edu (universities), arxiv.org and elibrary.ru (scientific
        # communities), vk.com (social networks) and lenta.ru (media, by the analyst)
        assert dom[(SPBU, "scientific_communities")].known_share == pytest.approx(2 / 5)
        assert dom[(SPBU, "universities")].known_share == pytest.approx(1 / 5)
        # vk.com is the one unreviewed low-confidence domain; lenta.ru is reviewed
        assert dom[(SPBU, "social_networks")].low_confidence == 1
        assert dom[(SPBU, "social_networks")].low_confidence_share == pytest.approx(1 / 5)
        assert dom[(SPBU, "media")].low_confidence == 0
        assert {r.definition for r in dom.values()} == {"domain"}
        # the domain definition is the view's: the same numbers as category_shares
        view = A.category_shares(engine, run_id=run, direction="outgoing")
        assert [(r.university, r.category, r.domains, r.known_share) for r in view] == [
            (r.university, r.category, r.domains, r.known_share)
            for r in S.university_shares(engine, run_id=run, direction="outgoing")
        ]

        clu = _by(
            S.university_shares(engine, definition="cluster", run_id=run, direction="outgoing"),
            "university",
            "category",
        )
        # science (3 members, support 2/3) counts in its category; social (support 0.5) is mixed
        assert clu[(SPBU, "scientific_communities")].domains == 3
        assert clu[(SPBU, "scientific_communities")].known_share == pytest.approx(3 / 5)
        assert clu[(SPBU, S.MIXED)].domains == 2
        assert clu[(SPBU, S.MIXED)].known_share == pytest.approx(2 / 5)
        assert clu[(SPBU, S.MIXED)].low_confidence_share == pytest.approx(1 / 5)
        assert (SPBU, "universities") not in clu and (SPBU, "social_networks") not in clu
        # ox.ac.uk: academia (arxiv.org, mit.edu: a tie, the first category by name) and
        # web (bbc.co.uk, google.com: media); nsu.ru has no clustering: no cluster rows
        assert clu[(OX, "scientific_communities")].known_share == pytest.approx(1 / 2)
        assert clu[(OX, "media")].known_share == pytest.approx(1 / 2)
        assert not any(u == NSU for u, _c in clu)
        for uni in {u for u, _c in clu}:
            assert sum(r.share for (u, _c), r in clu.items() if u == uni) == pytest.approx(1.0)

        both = _by(
            S.share_comparison(engine, run_id=run, direction="outgoing"), "university", "category"
        )
        assert both[(SPBU, "scientific_communities")].difference == pytest.approx(3 / 5 - 2 / 5)
        assert both[(SPBU, "universities")].cluster_share == 0.0
        assert both[(SPBU, "universities")].difference == pytest.approx(-1 / 5)
        assert both[(SPBU, S.MIXED)].domain_share == 0.0
        assert both[(SPBU, S.MIXED)].difference == pytest.approx(2 / 5)
        assert both[(NSU, "universities")].cluster_share is None
        assert both[(NSU, "universities")].difference is None

        # per country: Russia's clustered domains are spbu.ru's (nsu.ru has no clustering)
        country = _by(
            S.country_shares(engine, definition="cluster", run_id=run, direction="outgoing"),
            "country",
            "category",
        )
        assert country[("Russia", "scientific_communities")].domains == 3
        assert country[("Russia", S.MIXED)].known_share == pytest.approx(2 / 5)
        # the citing cluster of spbu.ru (lenta.ru, msu.ru, vk.com; no support stored) keeps
        # its vote: every member counts in it
        citing = S.university_shares(engine, definition="cluster", run_id=run, direction="citing")
        assert [(r.university, r.category, r.domains) for r in citing] == [(SPBU, "media", 3)]

        # the threshold is the setting's: at 0.25 vk.com (0.3) is no longer low-confidence
        high = _by(
            S.university_shares(engine, run_id=run, direction="outgoing", low_confidence=0.25),
            "university",
            "category",
        )
        assert high[(SPBU, "social_networks")].low_confidence == 0
        with pytest.raises(ParameterError, match="unknown share definition"):
            S.university_shares(engine, definition="paper")
    finally:
        engine.dispose()


def test_rank_factors_and_sensitivity_under_both_definitions(filled: Facts) -> None:
    _prepare(filled)
    run = filled.run_ids[1]
    # a second clustering setting for spbu.ru's outgoing environment: one cluster of all
    cid = add_clustering(
        filled.url,
        {"university_id": 0, "direction": "outgoing", "run_id": run},
        {"all": ["arxiv.org", "elibrary.ru", "lenta.ru", "mit.edu", "vk.com"]},
        dt.datetime(2000, 1, 1, tzinfo=dt.UTC),  # older than the world's
    )
    engine = make_engine(filled.url)
    try:
        with engine.begin() as conn:
            spbu_id = conn.execute(
                text("SELECT id FROM university WHERE name = :n"), {"n": SPBU}
            ).scalar_one()
            conn.execute(
                update(Clustering)
                .where(Clustering.id == cid)
                .values(
                    filter={"university_id": spbu_id, "direction": "outgoing", "run_id": run},
                    parameters={"threshold": 0.5, "num_perm": 128},
                )
            )
        by_domain = _by(A.rank_factors(engine, run_id=run, direction="outgoing"), "university")
        by_cluster = _by(
            A.rank_factors(engine, run_id=run, direction="outgoing", definition="cluster"),
            "university",
        )
        # the view's (newest) clustering stays the chosen one: the older one is not read
        assert by_domain[(SPBU,)].share_academic == pytest.approx(3 / 5)  # mit, arxiv, elibrary
        assert by_cluster[(SPBU,)].share_academic == pytest.approx(3 / 5)  # science; mixed apart
        assert by_cluster[(SPBU,)].share_universities == 0.0
        assert by_cluster[(SPBU,)].share_social_networks == 0.0
        assert by_cluster[(OX,)].share_academic == pytest.approx(1 / 2)
        assert by_cluster[(NSU,)].share_academic is None  # no clustering
        assert by_cluster[(SPBU,)].n_clusters == by_domain[(SPBU,)].n_clusters == 2

        settings = A.clustering_settings(engine, run_id=run)
        assert [s.label for s in settings] == ["setting 1", "setting 2"]
        assert "threshold=0.5" in settings[1].setting and settings[1].clusterings == 1
        rows = A.rank_sensitivity(engine, run_id=run)
        head = next(
            r
            for r in rows
            if (r.direction, r.factor, r.statistic) == ("outgoing", "share_academic", "spearman")
        )
        assert head.variants == 4
        assert head.signs.startswith("domain · setting 1: ")
        # the shares by domain do not depend on the clustering: both domain variants are
        # defined (four universities) and agree; by cluster two universities only: undefined
        assert head.holds == "holds" and "(2 undefined)" in head.line
        corr = A.correlations_of(
            A.rank_factors(engine, run_id=run, definition="cluster"), definition="cluster"
        )
        assert {c.definition for c in corr} == {"cluster"}
        assert all(c.p_holm >= c.p_value for c in corr if not math.isnan(c.p_value))
    finally:
        engine.dispose()


def test_a_sign_that_changes_is_said_to_flip() -> None:
    row = sensitivity_row(
        1, "outgoing", "rank", "share_academic", "spearman", [("a", -1), ("b", 1), ("c", None)]
    )
    assert row.holds == "flips" and row.line == "the sign changes: a −, b +"
    assert row.signs == "a: −; b: +; c: undefined"
    one = sensitivity_row(1, "outgoing", "rank", "f", "kendall", [("a", -1), ("b", None)])
    assert one.holds == "undefined"


# --- on what the pipeline stores -------------------------------------------------------------


def test_cluster_shares_on_the_pipeline_database(pipeline_db) -> None:
    """Every member of the chosen clusterings counted once, in its cluster's category or
    as mixed where the vote's support is at most 0.5, recomputed here from the views."""
    engine = pipeline_db.engine
    run = A.latest_run_id(engine)
    chosen = S.chosen_clusterings(engine, run)
    assert chosen, "the pipeline stores a clustering per university and direction"
    with engine.connect() as conn:
        members = conn.execute(
            text(
                "SELECT m.university_id, m.direction, m.domain, c.category, "
                "c.category_support, c.overridden FROM v_cluster_member m "
                "JOIN v_cluster c ON c.cluster_id = m.cluster_id "
                f"WHERE m.clustering_id IN ({', '.join(map(str, chosen.values()))})"
            )
        ).all()
    want: dict[tuple[int, str], Counter[str]] = defaultdict(Counter)
    for uni, d, _domain, cat, support, overridden in members:
        mixed = not overridden and support is not None and float(support) <= S.MAJORITY
        want[(int(uni), d)]["mixed" if mixed else cat or "uncategorised"] += 1
    got: dict[tuple[int, str], Counter[str]] = defaultdict(Counter)
    rows = S.university_shares(engine, definition="cluster", run_id=run)
    for r in rows:
        got[(r.university_id, r.direction)][r.category] += r.domains
    assert got == want  # a domain unit: one member per domain
    assert any(r.category == "mixed" for r in rows), (
        "the demo's votes include some without majority"
    )
    for key in got:
        assert sum(r.share for r in rows if (r.university_id, r.direction) == key) == (
            pytest.approx(1.0)
        )
    # the comparison covers every category of either definition, differences as the shares say
    for c in S.share_comparison(engine, run_id=run):
        if c.difference is not None:
            assert c.difference == pytest.approx(c.cluster_share - c.domain_share)
    # the pipeline stores two methods: two clustering settings, each sign judged over both
    assert len(A.clustering_settings(engine, run_id=run)) >= 2
    sens = A.rank_sensitivity(engine, run_id=run)
    assert sens and {s.holds for s in sens} <= {"holds", "flips", "undefined"}
    assert all(s.variants == 2 * len(A.clustering_settings(engine, run_id=run)) for s in sens)
