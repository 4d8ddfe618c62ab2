"""The paper's finding in SQL (migration 0009: ``v_rank_factors``, ``v_rank_factor_share``)
and its reads (store.analytics.ranks), on SQLite and PostgreSQL: every expected number is
derived from the stored world's facts (ENV, the categories, CLUSTERINGS), not from SQL."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections import Counter

import pytest
from scipy import stats
from sqlalchemy import text

from analyse.ranks import FACTORS, HEADLINE, PAPER_CATEGORIES, adjust_p
from core.exceptions import ParameterError
from core.universities import parse_universities
from store import aggregates, make_engine
from store import analytics as A
from store.universities import import_universities
from tests.stored_world import (
    CLUSTERINGS,
    ENV,
    T0,
    UNI_BY_DOMAIN,
    UNIVERSITIES,
    Facts,
    add_clustering,
    effective_category,
)

NO_EVIDENCE = {"unknown", "uncategorised"}


def expected_factors(run: int, udom: str, direction: str) -> dict[str, object]:
    """The row of ``v_rank_factors`` the facts give for fixture run ``run``."""
    cats = Counter(effective_category(d) for d in ENV[run][udom][direction])
    evidence = sum(n for c, n in cats.items() if c not in NO_EVIDENCE)
    row: dict[str, object] = {
        "domains": sum(cats.values()),
        "evidence_domains": evidence,
        "unknown": cats["unknown"],
        "uncategorised": cats["uncategorised"],
        "rank": UNI_BY_DOMAIN[udom][2],
    }
    for c in PAPER_CATEGORIES:
        row[f"share_{c}"] = cats[c] / evidence if evidence else None
    row[HEADLINE] = (
        (cats["universities"] + cats["scientific_communities"]) / evidence if evidence else None
    )
    groups = CLUSTERINGS.get((udom, direction)) if run == 1 else None
    if groups is None:
        row |= {"n_clusters": None, "clustered_size": None, "singletons": None}
    else:
        sizes = [len(m) for m in groups.values()]
        row |= {
            "n_clusters": sum(s >= 2 for s in sizes),
            "clustered_size": sum(s for s in sizes if s >= 2),
            "singletons": sum(s < 2 for s in sizes),
        }
    return row


def _check(got: object, want: object, what: str) -> None:
    if isinstance(want, float):
        assert got == pytest.approx(want), what
    else:
        assert got == want, what


def test_rank_factors_per_run_direction_and_university(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    by_id = {v: k for k, v in filled_ro.university_ids.items()}
    try:
        for n, run_id in filled_ro.run_ids.items():
            rows = A.rank_factors(engine, run_id=run_id)
            want_keys = {(d, u) for u, dirs in ENV[n].items() for d in dirs}
            assert {(r.direction, by_id[r.university_id]) for r in rows} == want_keys
            # outgoing first, then by rank
            assert [r.direction for r in rows] == sorted((r.direction for r in rows), reverse=True)
            for r in rows:
                udom = by_id[r.university_id]
                assert (r.university, r.country) == UNI_BY_DOMAIN[udom][:2]
                assert r.impact_rank is None
                for key, want in expected_factors(n, udom, r.direction).items():
                    _check(getattr(r, key), want, f"run {n} {udom} {r.direction} {key}")
                if r.n_clusters is not None:
                    assert r.clustering_id == filled_ro.clustering_ids[(udom, r.direction)]
                    assert r.unit == "domain"
        # the latest run is the default; one direction; a run without data is refused
        assert {r.run_id for r in A.rank_factors(engine)} == {filled_ro.run_ids[2]}
        assert {r.direction for r in A.rank_factors(engine, direction="citing")} == {"citing"}
        with pytest.raises(ParameterError, match="runs with data"):
            A.rank_factors(engine, run_id=999)
    finally:
        engine.dispose()


def test_long_form_shares_are_over_the_domains_with_evidence(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    by_id = {v: k for k, v in filled_ro.university_ids.items()}
    try:
        for n, run_id in filled_ro.run_ids.items():
            got = {
                (by_id[r.university_id], r.direction, r.category): (r.domains, r.share)
                for r in A.rank_factor_shares(engine, run_id=run_id)
            }
            want = {}
            for udom, dirs in ENV[n].items():
                for direction, doms in dirs.items():
                    cats = Counter(effective_category(d) for d in doms)
                    evidence = sum(k for c, k in cats.items() if c not in NO_EVIDENCE)
                    for c, k in cats.items():
                        if c not in NO_EVIDENCE:
                            want[(udom, direction, c)] = (k, pytest.approx(k / evidence))
            assert got == want, f"run {n}"
        # run 2: spbu.ru is cited by msu.ru and by cnn.com, which was never categorised
        spbu = [
            r
            for r in A.rank_factors(engine, run_id=filled_ro.run_ids[2], direction="citing")
            if r.university_id == filled_ro.university_ids["spbu.ru"]
        ]
        assert [
            (r.domains, r.evidence_domains, r.uncategorised, r.share_academic) for r in spbu
        ] == [(2, 1, 1, 1.0)]
    finally:
        engine.dispose()


def test_the_view_is_the_same_sql_as_its_rows(filled_ro: Facts) -> None:
    """Plain SQL on the view gives the rows the reader returns (the analyst's query)."""
    engine = make_engine(filled_ro.url)
    try:
        run = filled_ro.run_ids[1]
        with engine.connect() as conn:
            sql = conn.execute(
                text(
                    "SELECT university, share_academic, n_clusters FROM v_rank_factors "
                    "WHERE run_id = :run AND direction = 'outgoing' ORDER BY rank"
                ),
                {"run": run},
            ).all()
        rows = A.rank_factors(engine, run_id=run, direction="outgoing")
        assert [(u, pytest.approx(s), c) for u, s, c in sql] == [
            (r.university, r.share_academic, r.n_clusters) for r in rows
        ]
    finally:
        engine.dispose()


def test_correlations_are_scipys_on_the_view(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        run = filled_ro.run_ids[1]
        rows = A.rank_correlations(engine, run_id=run, n_resamples=999)
        # no impact rank stored: only the Webometrics rank
        assert {r.target for r in rows} == {"rank"}
        assert [(r.direction, r.factor, r.statistic) for r in rows] == [
            (d, f, s)
            for d in ("outgoing", "citing")
            for f in FACTORS
            for s in ("spearman", "kendall")
        ]
        out = [u for u in ENV[1] if "outgoing" in ENV[1][u]]
        x = [expected_factors(1, u, "outgoing")[HEADLINE] for u in out]
        y = [UNI_BY_DOMAIN[u][2] for u in out]
        rho = next(r for r in rows if r.direction == "outgoing" and r.factor == HEADLINE)
        assert rho.n == 4
        assert rho.estimate == pytest.approx(stats.spearmanr(x, y).statistic)
        # four universities: the exact permutation p over the 4! pairings, no interval
        assert math.isnan(rho.low) and math.isnan(rho.high)
        extreme = [
            abs(stats.spearmanr(p, y).statistic) >= abs(rho.estimate) - 1e-12
            for p in itertools.permutations(x)
        ]
        assert rho.p_value == pytest.approx(sum(extreme) / len(extreme))
        assert "n = 4 < 10: too few universities to conclude" in rho.note
        # adjusted over every defined test of both directions (Holm)
        defined = [r for r in rows if not math.isnan(r.p_value)]
        assert {r.tests for r in rows} == {len(defined)}
        assert rho.p_holm == pytest.approx(
            adjust_p([r.p_value for r in rows], "holm")[rows.index(rho)]
        )
        assert rho.p_holm >= rho.p_value and rho.q_bh >= rho.p_value
        # two universities have an outgoing clustering: undefined, with the reason
        n_clusters = next(r for r in rows if r.direction == "outgoing" and r.factor == "n_clusters")
        assert n_clusters.n == 2 and math.isnan(n_clusters.estimate)
        assert "at least 3 universities" in n_clusters.note
    finally:
        engine.dispose()


def test_latest_clustering_of_the_run_counts_and_impact_rank_is_read(
    filled: Facts, tmp_path
) -> None:
    """A newer clustering of spbu.ru's outgoing environment replaces the older one in the
    view; a clustering of another run does not; the impact rank comes from the universities
    file and is correlated too."""
    run1, run2 = filled.run_ids[1], filled.run_ids[2]
    spbu = filled.university_ids["spbu.ru"]
    flt = {"university_id": spbu, "direction": "outgoing"}
    newer = add_clustering(
        filled.url,
        {**flt, "run_id": run1},
        {"a": ["arxiv.org", "mit.edu", "elibrary.ru"], "b": ["vk.com"], "c": ["lenta.ru"]},
        T0 + dt.timedelta(hours=2),
    )
    add_clustering(
        filled.url,
        {**flt, "run_id": run2},
        {"all": ["arxiv.org", "vk.com", "gazprom.ru"]},
        T0 + dt.timedelta(hours=3),
    )
    path = tmp_path / "universities.toml"
    path.write_text(
        "".join(
            f'[[university]]\nname = "{name}"\ncountry = "{country}"\nrank = {rank}\n'
            f'impact_rank = {10 * i + 1}\ndomains = ["{udom}"]\n\n'
            for i, (name, country, rank, udom) in enumerate(UNIVERSITIES)
        ),
        encoding="utf-8",
    )
    specs = parse_universities(path)
    assert [s.impact_rank for s in specs] == [1, 11, 21, 31]
    engine = make_engine(filled.url)
    try:
        import_universities(engine, specs)
        r1 = {r.university_id: r for r in A.rank_factors(engine, run_id=run1, direction="outgoing")}
        assert (r1[spbu].clustering_id, r1[spbu].n_clusters, r1[spbu].clustered_size) == (
            newer,
            1,
            3,
        )
        assert r1[spbu].singletons == 2
        r2 = {r.university_id: r for r in A.rank_factors(engine, run_id=run2, direction="outgoing")}
        assert (r2[spbu].n_clusters, r2[spbu].clustered_size, r2[spbu].singletons) == (1, 3, 0)
        assert [r1[filled.university_ids[d]].impact_rank for *_x, d in UNIVERSITIES] == [
            1,
            11,
            21,
            31,
        ]
        rows = A.rank_correlations(engine, run_id=run1, direction="outgoing", n_resamples=99)
        impact = [r for r in rows if r.target == "impact_rank" and r.factor == HEADLINE]
        assert [r.statistic for r in impact] == ["spearman", "kendall"]
        assert impact[0].n == 4
    finally:
        engine.dispose()


def test_downgrade_keeps_every_row_and_upgrade_restores_the_views(filled: Facts) -> None:
    """0009 down and up again: the universities' rows and every row referring to them stay
    (a table copy of ``university`` would cascade its deletion), the views come back."""
    from store import schema

    engine = make_engine(filled.url)
    tables = ("university", "citation", "environment", "link", "page", "clustering")

    def counts() -> dict[str, int]:
        with engine.connect() as conn:
            return {t: conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in tables}

    try:
        before = counts()
        assert before["citation"] > 0 and before["environment"] > 0
        rows = A.rank_factors(engine, run_id=filled.run_ids[1])
        schema.downgrade(engine, "0008")
        assert counts() == before
        schema.upgrade(engine)
        assert counts() == before
        # the aggregates came back empty: what `webometrics db upgrade` then computes
        assert A.run_ids(engine) == []
        aggregates.refresh_if_stale(engine, force=True)
        assert A.rank_factors(engine, run_id=filled.run_ids[1]) == rows
    finally:
        engine.dispose()


def test_the_example_query_agrees_with_the_reader(filled_ro: Facts) -> None:
    """``rank-factors`` of store/examples.sql gives the rows of :func:`A.rank_factors`."""
    (example,) = [ex for ex in A.sql_examples() if ex.name == "rank-factors"]
    engine = make_engine(filled_ro.url)
    try:
        with engine.connect() as conn:
            got = conn.execute(text(example.sql)).mappings().all()
        rows = A.rank_factors(engine)
        assert [
            (g["direction"], g["university"], g["rank"], g["n_clusters"], g["evidence_domains"])
            for g in got
        ] == [(r.direction, r.university, r.rank, r.n_clusters, r.evidence_domains) for r in rows]
        for g, r in zip(got, rows, strict=True):
            assert float(g["academic_percent"]) == pytest.approx(100 * r.share_academic, abs=0.05)
    finally:
        engine.dispose()


def test_rank_factors_on_what_the_pipeline_stores(pipeline_db) -> None:
    """On the pipeline-made database (the local test web crawled, clustered and analysed):
    every row of ``v_rank_factors`` is what ``v_environment`` and ``v_cluster`` say, counted
    in Python; unknown domains are counted apart and out of the shares; every university
    clustered from a run has the clusters of its newest activity clustering in that run's
    row, though the paper's method clustered it after (its singletons gave 0 groups)."""
    engine = pipeline_db.engine
    try:
        with engine.connect() as conn:
            env = conn.execute(
                text(
                    "SELECT DISTINCT run_id, university_id, direction, domain, "
                    "COALESCE(category, 'uncategorised') AS category FROM v_environment"
                )
            ).all()
            clusters = conn.execute(
                text(
                    "SELECT run_id, university_id, direction, clustering_id, created_at, size, "
                    "algorithm FROM v_cluster "
                    "WHERE run_id IS NOT NULL AND university_id IS NOT NULL"
                )
            ).all()
        cats: dict[tuple[int, int, str], Counter[str]] = {}
        for run, uni, direction, _domain, category in env:
            cats.setdefault((run, uni, direction), Counter())[category] += 1
        latest: dict[tuple[int, int, str], tuple[bool, str, int]] = {}
        for run, uni, direction, cid, created, _size, algorithm in clusters:
            key, this = (run, uni, direction), (algorithm == "activity", str(created), cid)
            latest[key] = max(latest.get(key, this), this)
        assert {a for *_x, a in clusters} >= {"activity", "lsh-link"}  # both methods ran
        rows = [r for run in A.run_ids(engine) for r in A.rank_factors(engine, run_id=run)]
        assert {(r.run_id, r.university_id, r.direction) for r in rows} == set(cats)
        assert sum(r.unknown for r in rows) > 0  # the test web has dead links
        for r in rows:
            key = (r.run_id, r.university_id, r.direction)
            c = cats[key]
            evidence = sum(n for k, n in c.items() if k not in NO_EVIDENCE)
            assert (r.domains, r.unknown, r.evidence_domains) == (
                sum(c.values()),
                c["unknown"],
                evidence,
            ), key
            academic = c["universities"] + c["scientific_communities"]
            assert r.share_academic == pytest.approx(academic / evidence), key
            assert key in latest, f"{key}: a university clustered from the run has no clusters"
            sizes = [s for _r, _u, _d, cid, _c, s, _a in clusters if cid == latest[key][2]]
            assert r.clustering_id == latest[key][2] and latest[key][0], key
            assert r.n_clusters, f"{key}: the activity clustering's groups are not read"
            assert (r.n_clusters, r.clustered_size, r.singletons) == (
                sum(s >= 2 for s in sizes),
                sum(s for s in sizes if s >= 2),
                sum(s < 2 for s in sizes),
            ), key
        # the correlations of the run: one per direction x factor x statistic, never raising
        corr = A.rank_correlations(engine, n_resamples=199)
        assert len(corr) == 2 * len(FACTORS) * 2
        assert all(r.note or r.n >= 5 for r in corr)
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "lines, message",
    [
        (["impact_rank = 0", "rank = 3"], ":6: impact_rank must be a positive integer"),
        (["impact_rank = 5", "rank = -3"], ":7: rank must be a positive integer"),
        (['impact_rank = "12"', "rank = 3"], ":6: impact_rank must be a positive integer"),
    ],
)
def test_impact_rank_errors_name_their_line(tmp_path, lines, message) -> None:
    from core.exceptions import UniversitiesFileError

    path = tmp_path / "u.toml"
    path.write_text(
        '[[university]]\nname = "A"\ncountry = "X"\ndomains = ["a.edu"]\n\n'
        + "\n".join(lines)
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(UniversitiesFileError, match=message):
        parse_universities(path)
