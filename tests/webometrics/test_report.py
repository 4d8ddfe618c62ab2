"""``webometrics report`` on the fixture database writes every table, figure and network;
the CLI for analyse and category overrides."""

from __future__ import annotations

import csv
from pathlib import Path

import networkx as nx
import pytest

from tests.stored_world import CLUSTERINGS, UNIVERSITIES, Facts, expected_table2
from webometrics.cli import main
from webometrics.commands.report import FIGURE_FILES, TABLE_FILES


def test_report_writes_every_file(filled: Facts, tmp_path: Path, capsys) -> None:
    assert main(["--db-url", filled.url, "analyse"]) == 0
    out = tmp_path / "report"
    run1 = filled.run_ids[1]
    assert main(["--db-url", filled.url, "report", "--out", str(out), "--run", str(run1)]) == 0
    printed = capsys.readouterr().out
    for name in TABLE_FILES:
        for ext in ("csv", "md"):
            assert (out / f"{name}.{ext}").stat().st_size > 0, name
            assert f"{name}.{ext}" in printed
    for name in FIGURE_FILES:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert (out / "domain_categories.csv").is_file()
    index = (out / "README.md").read_text(encoding="utf-8")
    assert "table2.csv" in index and "networks/outgoing.gexf" in index
    # Table 2 in the CSV is the fixture's
    names = {n: d for n, _c, _r, d in UNIVERSITIES}
    with (out / "table2.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    want = expected_table2(1)
    assert len(rows) == len(UNIVERSITIES)
    for r in rows:
        pages, links, doms, cpages, cdoms = want[names[r["university"]]]
        assert (int(r["external_links"]), int(r["external_domains"])) == (links, doms)
        assert (int(r["citing_pages"]), int(r["citing_domains"])) == (cpages, cdoms)
        assert int(r["site_pages"]) == pages
    assert "| University of Oxford |" in (out / "table2.md").read_text(encoding="utf-8")
    # the clusters carry the themes the analyse command gave them
    with (out / "clusters.csv").open(encoding="utf-8") as fh:
        clusters = list(csv.DictReader(fh))
    n_final = sum(map(len, CLUSTERINGS.values()))
    assert len(clusters) == n_final and all(c["theme"] and c["category"] for c in clusters)
    # networks open in networkx
    net = out / "networks"
    for direction in ("outgoing", "citing"):
        g = nx.read_gexf(net / f"{direction}.gexf")
        h = nx.read_graphml(net / f"{direction}.graphml")
        assert set(g.nodes) == set(h.nodes) and g.number_of_edges() == h.number_of_edges() > 0
        kinds = {d["kind"] for _, d in g.nodes(data=True)}
        assert kinds == {"university", "domain"}
    co = nx.read_graphml(net / "co_outlinks.graphml")
    assert co.number_of_nodes() == len(UNIVERSITIES)
    for name in (
        "co_outlinks.csv",
        "co_inlinks.csv",
        "shared_outgoing.csv",
        "centrality_citing.csv",
    ):
        assert (net / name).stat().st_size > 0
    # changes of the default comparison (run 2 vs run 1)
    out2 = tmp_path / "latest"
    assert main(["--db-url", filled.url, "report", "--out", str(out2)]) == 0
    changes = (out2 / "changes.csv").read_text(encoding="utf-8")
    assert "gazprom.ru,appeared" in changes


def test_report_on_an_empty_database(migrated_url: str, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    assert main(["--db-url", migrated_url, "report", "--out", str(out)]) == 0
    for name in TABLE_FILES:
        assert (out / f"{name}.csv").read_text(encoding="utf-8").strip()  # header only
    for name in FIGURE_FILES:
        assert (out / name).is_file()


def test_report_refuses_a_run_without_data(filled_sqlite: Facts, tmp_path: Path, capsys) -> None:
    code = main(["--db-url", filled_sqlite.url, "report", "--out", str(tmp_path), "--run", "42"])
    assert code == 2
    assert "crawl run 42 has no environment data" in capsys.readouterr().err


def test_category_commands(filled_sqlite: Facts, capsys) -> None:
    url = filled_sqlite.url
    assert main(["--db-url", url, "category", "set", "www.google.com", "other", "--note", "x"]) == 0
    assert "google.com: search_engines -> other_organisations" in capsys.readouterr().out
    assert main(["--db-url", url, "category", "list"]) == 0
    listed = capsys.readouterr().out
    assert "google.com" in listed and "lenta.ru" in listed
    assert main(["--db-url", url, "category", "set", "google.com", "sport"]) == 2
    assert "unknown category 'sport'" in capsys.readouterr().err
    assert main(["--db-url", url, "category", "clear", "google.com"]) == 0
    assert "override removed" in capsys.readouterr().out
    # the history keeps every action with who and the note, newest first
    assert main(["--db-url", url, "category", "set", "vk.com", "media", "--by", "Ann B."]) == 0
    capsys.readouterr()
    assert main(["--db-url", url, "category", "history", "google.com"]) == 0
    google = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[2] for line in google] == [
        "clear (cleared)",
        "set other_organisations",
    ]
    assert google[1].endswith("  # x")
    assert main(["--db-url", url, "category", "history"]) == 0
    assert "vk.com\tset media\tby Ann B." in capsys.readouterr().out.splitlines()[0]


def test_report_clusters_are_the_activity_clusterings_on_the_pipeline_database(
    pipeline_db, tmp_path: Path
) -> None:
    """On what the pipeline stores (the activity clustering, then the paper's method for
    comparison), the report's cluster table holds each university and direction's
    activity clusters, not the paper's singletons that were stored after them, and the
    rank factors read the same clusterings."""
    from store import analytics as A

    out = tmp_path / "report"
    assert main(["--db-url", pipeline_db.url, "report", "--out", str(out)]) == 0
    with (out / "clusters.csv").open(encoding="utf-8") as fh:
        clusters = list(csv.DictReader(fh))
    assert clusters and {c["algorithm"] for c in clusters} == {"activity"}
    engine = pipeline_db.engine
    try:
        every = A.clusters(engine)
        factors = A.rank_factors(engine)
    finally:
        engine.dispose()
    assert {c.algorithm for c in every} >= {"activity", "lsh-link"}  # both methods stored
    scopes = {(c["university"], c["direction"]): c["clustering_id"] for c in clusters}
    # four universities x two directions, and the clustering over every university
    assert len(scopes) == 9 and scopes[("", "both")]
    for f in factors:
        if f.direction in ("outgoing", "citing"):
            assert scopes[(f.university, f.direction)] == str(f.clustering_id), f


def test_report_puts_both_share_definitions_side_by_side(filled_ro: Facts, tmp_path: Path) -> None:
    """The shares by domain and by cluster (the paper's way) against the stored world by
    hand: spbu.ru links to mit.edu, arxiv.org, elibrary.ru, vk.com and lenta.ru; its
    clusters are science (arxiv.org, elibrary.ru, mit.edu: scientific communities) and
    social (lenta.ru, vk.com: media, the first category of a tie by name)."""
    out = tmp_path / "report"
    run1 = filled_ro.run_ids[1]
    assert main(["--db-url", filled_ro.url, "report", "--out", str(out), "--run", str(run1)]) == 0
    spbu = next(n for n, _c, _r, d in UNIVERSITIES if d == "spbu.ru")
    with (out / "category_shares_definitions.csv").open(encoding="utf-8") as fh:
        rows = {(r["university"], r["direction"], r["category"]): r for r in csv.DictReader(fh)}
    sci = rows[(spbu, "outgoing", "scientific_communities")]
    assert (float(sci["domain_share"]), float(sci["cluster_share"])) == (0.4, 0.6)
    assert float(sci["difference"]) == pytest.approx(0.2)
    media = rows[(spbu, "outgoing", "media")]
    assert (float(media["domain_share"]), float(media["cluster_share"])) == (0.2, 0.4)
    # every domain of run 1 is scored 0.9, above [analyse] low_confidence: no share rests
    # on unreviewed low-confidence domains (tests/store/test_shares.py counts some)
    with (out / "category_shares_university.csv").open(encoding="utf-8") as fh:
        shares = list(csv.DictReader(fh))
    assert {r["definition"] for r in shares} == {"domain", "cluster"}
    assert all(r["low_confidence"] == "0" for r in shares)
    assert all(float(r["low_confidence_share"]) == 0 for r in shares if r["known_share"])
    for name in ("category_shares_definitions", "category_shares_university", "rank_factors"):
        assert "None" not in (out / f"{name}.md").read_text(encoding="utf-8")
    for name in ("figure2_outgoing_clusters.png", "figure3_citing_clusters.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
