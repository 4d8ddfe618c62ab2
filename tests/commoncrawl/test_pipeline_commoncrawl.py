"""``webometrics run`` with a Common Crawl release: the web graph's citing domains join the
analyst's tables (source ``commoncrawl``), their pages are fetched from the URL index's
real WARC records, extracted, clustered and categorised like crawled ones, and the
domains the index has no page of stay ``unknown``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select, text

from store import analytics as A
from store import make_engine
from store.models import CrawlRun
from store.session import session_scope
from testbed.commoncrawl_graph import write_graph
from testbed.commoncrawl_index import write_parquet
from tests.commoncrawl.conftest import UNIVERSITIES
from tests.commoncrawl.test_index import main_entries, shop_entries
from webometrics.cli import main

#: citing domains of the graph: the first four have captures in the index
CITING = {
    "01spb.ru": "twitter.com",
    "live-radsport.ch": "twitter.com",
    "uraharajuku.st": "twitter.com",
    "example.com": "iana.org",
    "never-captured.example": "twitter.com",
}


def _universities_file(path: Path) -> Path:
    lines = []
    for u in UNIVERSITIES:
        domains = ", ".join(f'"{d}"' for d in u["domains"])
        lines += [
            "[[university]]",
            f'name = "{u["name"]}"',
            f'country = "{u["country"]}"',
            f"domains = [{domains}]",
            "",
        ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.mark.slow
def test_run_takes_a_release_into_the_tables_and_the_clusters(
    tmp_path: Path, warc_samples: Path, monkeypatch
) -> None:
    monkeypatch.setenv("WEBOMETRICS_CRAWL__DOWNLOAD_DELAY", "0")
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)
    graph = write_graph(
        tmp_path / "graph",
        [*CITING, "twitter.com", "iana.org", "unrelated.example"],
        [*CITING.items(), ("unrelated.example", "example.com")],
    )
    index = write_parquet(
        tmp_path / "part-00000.parquet", [*main_entries(warc_samples), *shop_entries(warc_samples)]
    )
    url = f"sqlite:///{tmp_path / 'cc.db'}"
    assert main(["--db-url", url, "db", "upgrade"]) == 0
    code = main(
        [
            "--db-url", url, "run",
            "--universities", str(_universities_file(tmp_path / "unis.toml")),
            "--stages", "extract,cluster,analyse",
            "--graph-vertices", *map(str, graph.vertices),
            "--graph-edges", *map(str, graph.edges),
            "--cc-index", str(index),
            "--cc-warc-prefix", str(warc_samples),
            "--cc-limit-per-domain", "2",
        ]
    )  # fmt: skip
    assert code == 0
    engine = make_engine(url)
    try:
        with session_scope(engine) as s:
            kinds = dict(s.execute(select(CrawlRun.kind, CrawlRun.id)).all())
        assert set(kinds) == {"commoncrawl-graph", "commoncrawl-index"}
        index_run = kinds["commoncrawl-index"]
        with engine.connect() as conn:
            env = {
                (r.university, r.source, r.domain): (r.language, r.category)
                for r in conn.execute(
                    text("SELECT * FROM v_environment WHERE run_id = :r"), {"r": index_run}
                )
            }
        graph_rows = {(u, d) for u, src, d in env if src == "commoncrawl"}
        assert {d for _u, d in graph_rows} == set(CITING)
        # the domain with no capture: unknown language and category, never "other"
        lang, cat = next(v for k, v in env.items() if k[2] == "never-captured.example")
        assert (lang, cat) == ("unknown", "unknown")
        # a fetched citing page gives its domain a language and a category with evidence
        lang, cat = next(v for k, v in env.items() if k[2] == "01spb.ru")
        assert lang != "unknown" and cat not in ("unknown", None)
        # Table 2 of the run counts the graph's citing domains (distinct over sources)
        t2 = {r.university: r for r in A.table2(engine, run_id=index_run)}
        assert t2["Twitter Institute"].citing_domains == 4
        assert t2["IANA University"].citing_domains == 1
        # the fetched domains are clustered in the run's clustering of the citing side
        clusters = [c for c in A.clusters(engine) if c.direction == "citing"]
        assert clusters and {c.run_id for c in clusters} == {index_run}
        members = {m.domain for m in A.cluster_members(engine, [c.cluster_id for c in clusters])}
        assert "01spb.ru" in members and "never-captured.example" not in members
    finally:
        engine.dispose()
