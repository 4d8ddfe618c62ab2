"""The analyst's views on what the real pipeline stores (``pipeline_db``: the local test
web crawled, extracted, deduplicated, clustered three ways and analysed): unknown kept
apart from other, every cluster tied to its run, the vote's support as its members say,
themes in words, sources on every environment row, and the example queries agreeing with
the read functions.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import pytest
from sqlalchemy import select, text
from stop_words import get_stop_words

from core.choices import ENVIRONMENT_SOURCES, UNKNOWN
from store import analytics as A
from store.models import Cluster, ClusterMember, Document, Page


@pytest.fixture(scope="module")
def engine(pipeline_db):
    eng = pipeline_db.engine
    yield eng
    eng.dispose()


def _rows(engine, sql: str, **params):
    with engine.connect() as conn:
        return conn.execute(text(sql), params).mappings().all()


def test_unknown_is_never_other(engine) -> None:
    """A domain without a fetched page with text or title is unknown, never the default
    other_organisations; one with such a page never is unknown unless its name says so."""
    env = _rows(engine, "SELECT DISTINCT domain, language, category FROM v_environment")
    assert env and all(r["language"] is not None for r in env)
    with engine.connect() as conn:
        read = set(
            conn.scalars(
                select(Page.registered_domain)
                .where(
                    Page.role != "university",
                    Page.text.is_not(None) | Page.title.is_not(None),
                )
                .distinct()
            )
        )
    score = {r["domain"]: r["score"] for r in _rows(engine, "SELECT * FROM v_domain_category")}
    categories = Counter(r["category"] for r in env)
    assert categories[UNKNOWN] > 0 and categories["other_organisations"] > 0
    for r in env:
        if r["domain"] not in read:
            # nothing read: unknown, or a category its name proves (a listing, a pattern
            # such as *.gov, a name part), never the default for want of evidence
            assert r["category"] == UNKNOWN or score[r["domain"]] > 0, r
        if r["category"] == UNKNOWN:
            assert r["domain"] not in read, f"{r['domain']}: read, yet unknown"
    # the shares keep unknown apart: known shares sum to 1 without it
    shares = _rows(engine, "SELECT * FROM v_category_share")
    by_scope: dict[tuple, float] = defaultdict(float)
    for r in shares:
        if r["category"] == UNKNOWN:
            assert r["known_share"] is None
        else:
            by_scope[(r["run_id"], r["university_id"], r["direction"])] += r["known_share"]
    assert by_scope and all(v == pytest.approx(1.0) for v in by_scope.values())
    # Table 3 shows unknown as its own column, never under other
    t3 = A.table3(engine)
    assert {r.language for r in t3} >= {"ru", "en", UNKNOWN}
    unknown_sql = _rows(
        engine,
        "SELECT university, direction, COUNT(DISTINCT domain) AS n FROM v_environment "
        "WHERE language = 'unknown' AND run_id = (SELECT MAX(run_id) FROM v_environment) "
        "GROUP BY university, direction",
    )
    got = {(r.university, r.direction): r.domains for r in t3 if r.language == UNKNOWN}
    assert {(r["university"], r["direction"]): r["n"] for r in unknown_sql} == {
        k: v for k, v in got.items() if v
    }


def test_every_cluster_knows_its_run_and_the_latest_view(engine) -> None:
    clusters = _rows(
        engine,
        "SELECT clustering_id, run_id, university_id, direction, unit, algorithm FROM v_cluster",
    )
    assert clusters and all(r["run_id"] is not None for r in clusters)
    runs = {r for (r,) in _rows_tuples(engine, "SELECT DISTINCT run_id FROM v_environment")}
    assert {r["run_id"] for r in clusters} <= runs
    latest = _rows(engine, "SELECT * FROM v_latest_clustering")
    scopes = Counter((r["university_id"], r["direction"], r["unit"]) for r in latest)
    assert scopes and max(scopes.values()) == 1
    # each university and direction's latest is the newest activity clustering (the
    # default method) of its scope, the newest of another method only where none
    newest: dict[tuple, tuple[bool, int]] = {}
    for r in clusters:
        key = (r["university_id"], r["direction"], r["unit"])
        this = (r["algorithm"] == "activity", r["clustering_id"])
        newest[key] = max(newest.get(key, this), this)
    assert {
        (r["university_id"], r["direction"], r["unit"]): (r["algorithm"] == "activity",
                                                          r["clustering_id"])
        for r in latest
    } == newest  # fmt: skip
    assert {r["algorithm"] for r in clusters} >= {"activity", "lsh-link"}
    newest_ids = {cid for _a, cid in newest.values()}
    in_latest = {
        r["clustering_id"]
        for r in _rows(engine, "SELECT DISTINCT clustering_id FROM v_latest_cluster")
    }
    assert in_latest == newest_ids


def _rows_tuples(engine, sql: str):
    with engine.connect() as conn:
        return conn.execute(text(sql)).all()


def test_the_vote_support_is_what_the_members_say(engine) -> None:
    """Stored support = share of the members with evidence whose category is the
    cluster's; members without evidence (unknown) never vote."""
    finals = _rows(
        engine,
        "SELECT cluster_id, assigned_category, category_support, category_voters "
        "FROM v_cluster WHERE assigned_category IS NOT NULL",
    )
    assert finals
    members: dict[int, list[str | None]] = defaultdict(list)
    for r in _rows(engine, "SELECT cluster_id, category FROM v_cluster_member"):
        members[r["cluster_id"]].append(r["category"])
    checked = 0
    for c in finals:
        voters = [m for m in members[c["cluster_id"]] if m not in (None, UNKNOWN)]
        assert c["category_voters"] == len(voters)
        if voters:
            agree = sum(m == c["assigned_category"] for m in voters) / len(voters)
            assert c["category_support"] == pytest.approx(agree, abs=1e-4)
            checked += 1
        else:
            assert c["category_support"] is None
    assert checked >= 10


def test_themes_are_whole_words_and_never_stop_words(engine) -> None:
    stop = set(get_stop_words("en")) | set(get_stop_words("ru"))
    with engine.connect() as conn:
        finals = conn.execute(
            select(Cluster.id, Cluster.theme_terms).where(Cluster.level == -1)
        ).all()
        named = [(cid, terms) for cid, terms in finals if terms]
        assert len(named) >= 10
        for cid, terms in named:
            bad = [t for t in terms if t.lower() in stop]
            assert not bad, f"cluster {cid}: stop words {bad} in its theme {terms}"
            texts = " ".join(
                t or ""
                for t in conn.scalars(
                    select(Page.text)
                    .join(Document, Document.domain == Page.registered_domain)
                    .join(ClusterMember, ClusterMember.document_id == Document.id)
                    .where(ClusterMember.cluster_id == cid, Page.role != "university")
                )
            ).lower()
            for t in terms:
                assert re.search(rf"(?<!\w){re.escape(t.lower())}(?!\w)", texts), (
                    f"cluster {cid}: theme term {t!r} is no word of its members' texts"
                )


def test_every_environment_row_carries_its_source(engine) -> None:
    got = _rows(
        engine,
        "SELECT direction, source, COUNT(*) AS n FROM v_environment GROUP BY direction, source",
    )
    sources = {(r["direction"], r["source"]) for r in got}
    assert {s for _d, s in sources} <= set(ENVIRONMENT_SOURCES)
    assert ("outgoing", "crawl") in sources
    # the test web's citing side comes from its backlink export and from the crawl
    assert {s for d, s in sources if d == "citing"} >= {"backlinks"}
    # Table 2 counts each domain once over its sources
    t2 = {r.university: r for r in A.table2(engine)}
    distinct = _rows(
        engine,
        "SELECT university, COUNT(DISTINCT domain) AS n FROM v_environment "
        "WHERE direction = 'citing' AND run_id = (SELECT MAX(run_id) FROM v_environment) "
        "GROUP BY university",
    )
    assert distinct and all(t2[r["university"]].citing_domains == r["n"] for r in distinct)


def test_the_example_queries_run_on_the_pipeline_database(engine) -> None:
    examples = {ex.name: ex.sql for ex in A.sql_examples()}
    with engine.connect() as conn:
        for ex in A.sql_examples():
            conn.execute(text(ex.sql)).all()  # no error on what the pipeline stores
        t3 = {
            (r["university"], r["direction"]): r
            for r in conn.execute(text(examples["table3"])).mappings()
        }
    for r in A.table3(engine):
        if r.language in ("ru", "en", UNKNOWN) and r.domains:
            assert t3[(r.university, r.direction)][r.language] == r.domains


def test_every_stage_leaves_the_figures_fresh(pipeline_db) -> None:
    """Each stage refreshes the figures when it ends (webometrics.stages.refreshes_figures):
    the crawl's run has figures from the crawl on, and no stage leaves them stale."""
    assert next(iter(pipeline_db.fresh_after)) == "crawl"
    crawled = pipeline_db.fresh_after["crawl"]
    assert crawled, "the crawl's run has no figures after the crawl"
    assert pipeline_db.fresh_after == dict.fromkeys(pipeline_db.fresh_after, crawled)
