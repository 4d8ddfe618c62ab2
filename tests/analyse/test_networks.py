"""Link networks from the fixture database: graph, co-link overlaps against a brute-force
reference, shared domains, centralities, and exports read back with networkx."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import networkx as nx
import pytest

from analyse.networks import (
    centralities,
    colink_overlap,
    environment_graph,
    overlap_graph,
    shared_domains,
    write_graph,
)
from core.exceptions import ParameterError
from store import analytics as A
from store import make_engine
from tests.stored_world import ENV, UNIVERSITIES, Facts


def _edges(facts: Facts, direction: str, run: int = 1) -> list[tuple[str, str, int]]:
    engine = make_engine(facts.url)
    try:
        rows = A.environment(engine, run_id=facts.run_ids[run], direction=direction)
    finally:
        engine.dispose()
    return [(r.university, r.domain, r.links if direction == "outgoing" else r.pages) for r in rows]


def test_graph_and_overlaps_match_the_fixture(filled_sqlite: Facts) -> None:
    names = {d: n for n, _c, _r, d in UNIVERSITIES}
    for direction in ("outgoing", "citing"):
        edges = _edges(filled_sqlite, direction)
        g = environment_graph(edges, direction=direction)
        want = {
            (names[u], d): n
            for u, dirs in ENV[1].items()
            for d, n in dirs.get(direction, {}).items()
        }
        assert g.number_of_edges() == len(want)
        for (uni, dom), n in want.items():
            a, b = (f"u:{uni}", f"d:{dom}") if direction == "outgoing" else (f"d:{dom}", f"u:{uni}")
            assert g.edges[a, b]["weight"] == n
        # overlaps against a brute force over the fixture's domain sets
        sets = {names[u]: set(d.get(direction, {})) for u, d in ENV[1].items() if d.get(direction)}
        got = {(o.a, o.b): (o.shared, o.jaccard) for o in colink_overlap(edges)}
        for a, b in itertools.combinations(sorted(sets), 2):
            inter, union = len(sets[a] & sets[b]), len(sets[a] | sets[b])
            assert got[(a, b)] == (inter, pytest.approx(inter / union, abs=1e-4))
    # arxiv.org: linked by SPbU, Oxford and MIT in run 1
    top = shared_domains(_edges(filled_sqlite, "outgoing"))[0]
    assert (top.domain, top.n_universities) == ("arxiv.org", 3)


def test_centralities_on_a_known_graph() -> None:
    edges = [("A", "x.org", 1), ("B", "x.org", 1), ("B", "y.org", 1), ("C", "y.org", 1)]
    g = environment_graph(edges, direction="outgoing")
    rows = {r.node: r for r in centralities(g)}
    und = nx.Graph(g.to_undirected())
    ref = nx.betweenness_centrality(und)
    for node, r in rows.items():
        assert r.betweenness == pytest.approx(ref[node], abs=1e-6)
        assert r.degree == und.degree(node)
    assert rows["u:B"].betweenness == max(r.betweenness for r in rows.values())
    assert sum(r.pagerank for r in rows.values()) == pytest.approx(1.0, abs=1e-4)
    assert centralities(nx.DiGraph()) == []
    with pytest.raises(ParameterError, match="direction"):
        environment_graph(edges, direction="both")


def test_exports_read_back_with_networkx(filled_sqlite: Facts, tmp_path: Path) -> None:
    edges = _edges(filled_sqlite, "citing")
    langs = {"vk.com": {"language": "ru", "category": None}}
    g = environment_graph(
        edges,
        direction="citing",
        university_attrs={"University of Oxford": {"country": "United Kingdom", "rank": 16}},
        domain_attrs=langs,
    )
    files = write_graph(g, tmp_path / "citing")
    assert sorted(p.name for p in files) == [
        "citing.edges.csv",
        "citing.gexf",
        "citing.graphml",
        "citing.nodes.csv",
        "citing.vos_map.txt",
        "citing.vos_network.txt",
    ]
    for reader, name in ((nx.read_gexf, "citing.gexf"), (nx.read_graphml, "citing.graphml")):
        back = reader(tmp_path / name)
        assert back.is_directed()
        assert set(back.nodes) == set(g.nodes)
        assert {(a, b) for a, b in back.edges} == set(g.edges)
        for a, b in g.edges:
            assert float(back.edges[a, b]["weight"]) == g.edges[a, b]["weight"]
        assert back.nodes["u:University of Oxford"]["country"] == "United Kingdom"
        assert back.nodes["d:vk.com"]["language"] == "ru"
    with (tmp_path / "citing.edges.csv").open(encoding="utf-8") as fh:
        back = nx.from_edgelist(
            ((r["Source"], r["Target"]) for r in csv.DictReader(fh)), create_using=nx.DiGraph
        )
    assert set(back.edges) == set(g.edges)
    with (tmp_path / "citing.nodes.csv").open(encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert header[:2] == ["Id", "Label"]
    lines = (tmp_path / "citing.vos_network.txt").read_text().splitlines()
    assert len(lines) == g.number_of_edges() and all(len(x.split("\t")) == 3 for x in lines)
    # the university–university co-link graph exports too
    og = overlap_graph(colink_overlap(edges))
    write_graph(og, tmp_path / "coinlinks", formats=["graphml"])
    back = nx.read_graphml(tmp_path / "coinlinks.graphml")
    assert set(back.nodes) == set(og.nodes)
    with pytest.raises(ParameterError, match="unknown graph format"):
        write_graph(g, tmp_path / "x", formats=["pajek"])
