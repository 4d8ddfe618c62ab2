"""``webometrics citing commoncrawl-graph`` on small graphs in the published format: the
stored citing domains and hosts equal an independent count in plain Python; the ranks,
host counts and environment rows are carried over; the release and level are told."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from sqlalchemy import func, select

from crawler.commoncrawl.dumps import graph_name, release_of
from crawler.commoncrawl.graph import GraphReader
from store import make_engine, session_scope
from store import models as m
from tests.commoncrawl.graph_files import (
    GRAPH_DOMAINS,
    GraphCase,
    add_universities,
    domain_graph,
    host_graph,
    read_ranks,
)
from webometrics.cli import main


@pytest.fixture(scope="module")
def domain_case(tmp_path_factory: pytest.TempPathFactory) -> GraphCase:
    return domain_graph(tmp_path_factory.mktemp("domain-graph"))


@pytest.fixture(scope="module")
def host_case(tmp_path_factory: pytest.TempPathFactory) -> GraphCase:
    return host_graph(tmp_path_factory.mktemp("host-graph"))


def _args(case: GraphCase, ranks: bool = True) -> list[str]:
    args = ["--vertices", *map(str, case.files.vertices), "--edges", *map(str, case.files.edges)]
    if ranks and case.files.ranks is not None:
        args += ["--ranks", str(case.files.ranks)]
    return args


def _stored(url: str) -> dict[str, dict[str, m.CitingNode]]:
    engine = make_engine(url)
    out: dict[str, dict[str, m.CitingNode]] = defaultdict(dict)
    with session_scope(engine) as s:
        for node, uni in s.execute(
            select(m.CitingNode, m.University.name).join(
                m.University, m.University.id == m.CitingNode.university_id
            )
        ):
            out[uni][node.node] = node
    engine.dispose()
    return out


def test_the_published_format_is_written(domain_case: GraphCase) -> None:
    files = domain_case.files
    assert len(files.vertices) == 3 and len(files.edges) == 4
    assert all(p.name.endswith(".txt.gz") for p in (*files.vertices, *files.edges))
    assert release_of(files.vertices[0]) == ("cc-main-2026-jan-feb-mar", "domain")
    import gzip

    lines = []
    for p in files.vertices:
        with gzip.open(p, "rt") as fh:
            lines += [line.rstrip("\n").split("\t") for line in fh]
    assert [int(f[0]) for f in lines] == list(range(len(lines)))
    assert [f[1] for f in lines] == sorted(f[1] for f in lines)
    assert all(len(f) == 3 for f in lines)
    assert "xn--p1ai.xn--90ae8ahn" in {f[1] for f in lines}


def test_domain_graph_stores_exactly_the_in_linking_domains(
    migrated_url: str, domain_case: GraphCase, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = make_engine(migrated_url)
    ids = add_universities(engine)
    assert main(["--db-url", migrated_url, "citing", "commoncrawl-graph", *_args(domain_case)]) == 0
    assert "crawl run" in capsys.readouterr().out
    stored = _stored(migrated_url)
    ranks = read_ranks(domain_case.files.ranks)  # type: ignore[arg-type]
    for uni, expected in domain_case.expected.items():
        assert set(stored.get(uni, {})) == expected, uni
        for name, node in stored.get(uni, {}).items():
            assert node.level == "domain" and node.domain == name
            assert node.source == "commoncrawl-graph:cc-main-2026-jan-feb-mar"
            assert node.links == domain_case.expected_links[(uni, name)]
            assert node.num_hosts == domain_case.num_hosts[name]
            hpos, hval, ppos, pval = ranks[name]
            assert (node.harmonic_rank, node.pagerank_rank) == (hpos, ppos)
            assert node.harmonic_centrality == pytest.approx(hval)
            assert node.pagerank == pytest.approx(pval)
    # the internal links of Oxford's two domains and the university itself are not citing
    assert "oxford.edu" not in stored["University of Oxford"]
    assert "spbu.ru" in stored["Massachusetts Institute of Technology"]
    with session_scope(engine) as s:
        run = s.scalars(select(m.CrawlRun)).one()
        assert run.kind == "commoncrawl-graph" and run.status == "finished"
        assert run.settings["release"] == "cc-main-2026-jan-feb-mar"
        assert run.stats["universities_not_in_graph"] == [ids["Nowhere University"]]
        env = {
            (uid, d): (links, pages)
            for uid, d, links, pages in s.execute(
                select(
                    m.Environment.university_id,
                    m.Environment.domain,
                    m.Environment.link_count,
                    m.Environment.page_count,
                ).where(m.Environment.direction == "citing", m.Environment.run_id == run.id)
            )
        }
    expected_env = {
        (ids[uni], d): (domain_case.expected_links[(uni, d)], 0)
        for uni, names in domain_case.expected.items()
        for d in names
    }
    assert env == expected_env
    engine.dispose()


def test_host_graph_counts_subdomains_and_excludes_internal_links(
    sqlite_url: str, host_case: GraphCase
) -> None:
    from store import schema

    engine = make_engine(sqlite_url)
    schema.upgrade(engine)
    ids = add_universities(engine)
    assert main(["--db-url", sqlite_url, "citing", "commoncrawl-graph", *_args(host_case)]) == 0
    stored = _stored(sqlite_url)
    for uni, expected in host_case.expected.items():
        assert set(stored.get(uni, {})) == expected, uni
        for name, node in stored.get(uni, {}).items():
            assert node.level == "host" and node.num_hosts is None
            assert node.links == host_case.expected_links[(uni, name)]
    mit = stored["Massachusetts Institute of Technology"]
    assert "cs.mit.edu" not in mit  # a host of MIT linking to MIT
    assert "maths.ox.ac.uk" not in stored["University of Oxford"]
    # look-alike hosts are other sites
    assert "box.ac.uk" in stored["University of Oxford"]
    # environment rows group the citing hosts by registered domain
    from core.domains import registered_domain

    with session_scope(engine) as s:
        env = {
            (uid, d): n
            for uid, d, n in s.execute(
                select(m.Environment.university_id, m.Environment.domain, m.Environment.link_count)
            )
        }
    expected_env: dict[tuple[int, str], int] = defaultdict(int)
    for uni, names in host_case.expected.items():
        for h in names:
            expected_env[(ids[uni], registered_domain(h))] += host_case.expected_links[(uni, h)]
    assert env == dict(expected_env)
    engine.dispose()


def test_without_ranks_and_with_a_release_name(sqlite_url: str, domain_case: GraphCase) -> None:
    from store import schema

    engine = make_engine(sqlite_url)
    schema.upgrade(engine)
    add_universities(engine)
    args = [*_args(domain_case, ranks=False), "--release", "my-copy", "--level", "domain"]
    assert main(["--db-url", sqlite_url, "citing", "commoncrawl-graph", *args]) == 0
    stored = _stored(sqlite_url)
    nodes = [n for per in stored.values() for n in per.values()]
    assert nodes and {n.source for n in nodes} == {"commoncrawl-graph:my-copy"}
    assert all(n.harmonic_centrality is None and n.pagerank is None for n in nodes)
    with session_scope(engine) as s:
        assert s.scalar(select(func.count()).select_from(m.CrawlRun)) == 1
    engine.dispose()


def test_the_reader_alone_and_its_names(domain_case: GraphCase) -> None:
    universities = {i: [d for d in doms] for i, (_, doms) in enumerate(GRAPH_DOMAINS.items())}
    universities[0] = ["spbu.ru", "спбгу.рф"]  # the stored Unicode form
    result = GraphReader(threads=1, memory_limit="200MB").read(
        universities, domain_case.files.vertices, domain_case.files.edges
    )
    assert result.release == "cc-main-2026-jan-feb-mar" and result.level == "domain"
    assert result.edges == len(domain_case.edges)
    assert result.vertices == len(domain_case.files.names)
    names = list(GRAPH_DOMAINS)
    got: dict[str, set[str]] = defaultdict(set)
    for node in result.nodes:
        got[names[node.university_id]].add(node.name)
    assert {k: v for k, v in got.items()} == {k: v for k, v in domain_case.expected.items() if v}
    assert graph_name("www.MIT.edu") == "edu.mit"


def test_help_explains_files_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["citing", "commoncrawl-graph", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for needle in ("--vertices", "--edges", "--ranks", "--level", "--release", "exit codes"):
        assert needle in out


def test_a_second_release_run_is_its_own_run(sqlite_url: str, domain_case: GraphCase) -> None:
    from store import impact, schema

    engine = make_engine(sqlite_url)
    schema.upgrade(engine)
    ids = add_universities(engine)
    for _ in range(2):
        assert (
            main(["--db-url", sqlite_url, "citing", "commoncrawl-graph", *_args(domain_case)]) == 0
        )
    figures = {(f.university_id, f.kind): f for f in impact.source_overlap(engine)}
    mit = ids["Massachusetts Institute of Technology"]
    expected = domain_case.expected["Massachusetts Institute of Technology"]
    assert figures[(mit, "commoncrawl")].domains == len(expected)  # not doubled
    ranks = {(r.university_id, r.level): r for r in impact.rank_weighted(engine)}
    rank_file = read_ranks(Path(domain_case.files.ranks))  # type: ignore[arg-type]
    assert ranks[(mit, "domain")].harmonic_sum == pytest.approx(
        sum(rank_file[d][1] for d in expected)
    )
    assert ranks[(mit, "domain")].pagerank_sum == pytest.approx(
        sum(rank_file[d][3] for d in expected)
    )
    engine.dispose()
