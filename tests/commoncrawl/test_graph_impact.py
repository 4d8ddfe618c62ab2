"""Impact figures (``store.impact``, the 0007 views, the report, the Overview page) against
sets counted in plain Python; revision 0007 up and down on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy import func, inspect, select, text

from store import impact, make_engine, schema, session_scope
from store import models as m
from tests.commoncrawl.graph_files import GraphCase, add_universities, domain_graph, read_ranks
from webometrics.cli import main

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
MIT = "Massachusetts Institute of Technology"
# (source, citing URL, status): MIT's citations from a crawl run
CITATIONS = [
    ("crawl", "https://blog.alpha.com/post", "verified"),
    ("crawl", "https://www.beta.org/a", "verified"),
    ("crawl", "https://gamma.net/x", "missing"),
    ("urls", "https://delta.ru/", "verified"),
    ("majestic", "https://alpha.com/links", "verified"),
    ("majestic", "https://epsilon.de/p", "verified"),
    ("majestic", "https://zeta.com/p", "error"),
    ("ahrefs", "https://news.beta.org/n", "verified"),
]


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> GraphCase:
    return domain_graph(tmp_path_factory.mktemp("graph"))


def _fill(url: str, case: GraphCase) -> dict[str, int]:
    from core.domains import host_of, registered_domain

    engine = make_engine(url)
    ids = add_universities(engine)
    with session_scope(engine) as s:
        run = m.CrawlRun(kind="citing", status="finished", started_at=T0)
        s.add(run)
        s.flush()
        for source, citing_url, status in CITATIONS:
            host = host_of(citing_url)
            page = m.Page(
                url=citing_url,
                host=host,
                registered_domain=registered_domain(host),
                role="citing",
                http_status=200,
                first_run_id=run.id,
                last_run_id=run.id,
            )
            s.add(page)
            s.flush()
            s.add(
                m.Citation(
                    run_id=run.id,
                    university_id=ids[MIT],
                    citing_url=citing_url,
                    citing_domain=registered_domain(host),
                    page_id=page.id,
                    source=source,
                    status=status,
                    target_url="https://mit.edu/",
                    checked_at=T0,
                )
            )
    args = ["--vertices", *map(str, case.files.vertices), "--edges", *map(str, case.files.edges)]
    args += ["--ranks", str(case.files.ranks)]
    assert main(["--db-url", url, "citing", "commoncrawl-graph", *args]) == 0
    engine.dispose()
    return ids


def _expected(case: GraphCase) -> dict[str, tuple[set[str], set[str]]]:
    """kind -> (citing domains, citing hosts) of MIT, counted from the inputs."""
    from core.domains import host_of, registered_domain

    kinds: dict[str, tuple[set[str], set[str]]] = {}
    for source, url, status in CITATIONS:
        if status != "verified":
            continue
        kind = "backlinks" if source in ("majestic", "ahrefs") else "crawl"
        doms, hosts = kinds.setdefault(kind, (set(), set()))
        doms.add(registered_domain(host_of(url)))
        hosts.add(host_of(url))
    kinds["commoncrawl"] = (set(case.expected[MIT]), set())
    return kinds


def test_source_overlap_and_rank_sums_match_an_independent_count(
    migrated_url: str, case: GraphCase
) -> None:
    ids = _fill(migrated_url, case)
    engine = make_engine(migrated_url)
    figures = {f.kind: f for f in impact.source_overlap(engine, university_id=ids[MIT])}
    expected = _expected(case)
    union = set().union(*(d for d, _ in expected.values()))
    assert set(figures) == set(expected)
    for kind, (doms, hosts) in expected.items():
        others = set().union(*(d for k, (d, _) in expected.items() if k != kind))
        f = figures[kind]
        assert (f.domains, f.hosts) == (len(doms), len(hosts)), kind
        assert f.only_here == len(doms - others), kind
        assert f.missed == len(union - doms), kind
        assert f.domains_all == len(union)
    assert impact.citing_domains(engine, ids[MIT]) == {k: d for k, (d, _) in expected.items()}
    # rank-weighted in-link counts from the ranks file, parsed independently
    ranks = read_ranks(case.files.ranks)  # type: ignore[arg-type]
    (r,) = [x for x in impact.rank_weighted(engine) if x.university_id == ids[MIT]]
    assert (r.level, r.nodes, r.domains) == ("domain", len(case.expected[MIT]), r.nodes)
    assert r.harmonic_sum == pytest.approx(sum(ranks[d][1] for d in case.expected[MIT]))
    assert r.pagerank_sum == pytest.approx(sum(ranks[d][3] for d in case.expected[MIT]))
    assert r.ranked_nodes == r.nodes
    assert r.links == sum(case.expected_links[(MIT, d)] for d in case.expected[MIT])
    # every university with citing domains has its rows; Nowhere has none
    assert ids["Nowhere University"] not in {f.university_id for f in impact.source_overlap(engine)}
    assert impact.has_figures(engine)
    engine.dispose()


def test_report_writes_the_impact_tables(sqlite_url: str, case: GraphCase, tmp_path: Path) -> None:
    engine = make_engine(sqlite_url)
    schema.upgrade(engine)
    engine.dispose()
    ids = _fill(sqlite_url, case)
    out = tmp_path / "report"
    assert main(["--db-url", sqlite_url, "report", "--out", str(out)]) == 0
    with (out / "impact_sources.csv").open(encoding="utf-8") as fh:
        rows = {(r["university"], r["kind"]): r for r in csv.DictReader(fh)}
    expected = _expected(case)
    for kind, (doms, _hosts) in expected.items():
        assert int(rows[(MIT, kind)]["domains"]) == len(doms)
    with (out / "impact_ranks.csv").open(encoding="utf-8") as fh:
        ranks = list(csv.DictReader(fh))
    assert {r["source"] for r in ranks} == {"commoncrawl-graph:cc-main-2026-jan-feb-mar"}
    assert "impact_sources.md" in (out / "README.md").read_text(encoding="utf-8")
    assert ids


def test_overview_page_shows_the_impact_figures(
    sqlite_url: str, case: GraphCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import apptest

    engine = make_engine(sqlite_url)
    schema.upgrade(engine)
    engine.dispose()
    _fill(sqlite_url, case)
    at = apptest.open_page(sqlite_url, monkeypatch)
    assert at.title[0].value == "Overview"
    # a Common Crawl web graph is stored: the impact figures are shown from the start
    assert at.toggle(key="overview-impact").value is True
    frames = [df.value for df in at.dataframe]
    (sources,) = [f for f in frames if "kind" in f.columns]
    mit = sources[sources["university"] == MIT].set_index("kind")
    expected = _expected(case)
    assert {k: int(mit.loc[k, "domains"]) for k in mit.index} == {
        k: len(d) for k, (d, _) in expected.items()
    }
    (ranks,) = [f for f in frames if "Σ PageRank" in f.columns]
    assert set(ranks["university"]) >= {MIT}
    at.toggle(key="overview-impact").set_value(False)
    at.run()
    assert not any("kind" in df.value.columns for df in at.dataframe)  # the analyst hid them


def test_overview_hides_impact_figures_without_common_crawl(pipeline_db, monkeypatch) -> None:
    """No web graph stored (the pipeline-made database): the toggle starts off."""
    from tests import apptest

    at = apptest.open_page(pipeline_db.url, monkeypatch)
    assert at.toggle(key="overview-impact").value is False
    assert not any("kind" in df.value.columns for df in at.dataframe)


def test_0007_up_and_down_keep_the_runs(db_url: str) -> None:
    engine = make_engine(db_url)
    schema.upgrade(engine, "0006")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO university (id, name, country, home_urls, created_at) "
                "VALUES (1, 'U', 'C', '[]', :t)"
            ),
            {"t": T0},
        )
        conn.execute(
            text(
                "INSERT INTO crawl_run (id, kind, started_at, status, settings, stats) "
                "VALUES (1, 'commoncrawl-graph', :t, 'finished', '{}', '{}')"
            ),
            {"t": T0},
        )
    schema.upgrade(engine)
    with session_scope(engine) as s:
        s.add(
            m.CitingNode(
                run_id=1,
                university_id=1,
                source="commoncrawl-graph:r",
                level="host",
                node="blog.x.org",
                domain="x.org",
                links=2,
                harmonic_centrality=1.5,
                pagerank=0.25,
            )
        )
    with engine.connect() as conn:
        assert conn.execute(text("SELECT kind, domains, hosts FROM v_citing_overlap")).all() == [
            ("commoncrawl", 1, 1)
        ]
        row = conn.execute(text("SELECT nodes, links, harmonic_sum FROM v_citing_rank")).one()
        assert tuple(row) == (1, 2, pytest.approx(1.5))
    schema.downgrade(engine, "0006")
    insp = inspect(engine)
    assert "citing_node" not in insp.get_table_names()
    assert not {"v_citing_source", "v_citing_overlap", "v_citing_rank"} & set(insp.get_view_names())
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(m.CrawlRun)).scalar() == 1
    schema.upgrade(engine)
    assert schema.current_revision(engine) == schema.head_revision(engine)
    engine.dispose()
