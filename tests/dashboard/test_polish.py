"""The issue's smaller items on what the pipeline stores: the level picker follows the
clustering, a citing cluster's domains list the pages that cite, the heat map starts at
0, and a change from the command line shows without a reload."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.test_walk import page_opener


@pytest.fixture
def pipeline_page(pipeline_db, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], AppTest]:
    return page_opener(pipeline_db.url, monkeypatch, strict=True)


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _clusters(at: AppTest):
    return next(df.value for df in at.dataframe if "member domains" in df.value.columns)


def test_the_level_label_follows_the_clustering(pipeline_page) -> None:
    """Texas showed "final (5 clusters)", Cornell's count, after switching: each
    university's picker names its own clustering's final level."""
    at = pipeline_page("views/university.py")
    seen = []
    for uid in list(at.selectbox(key="uni").options):
        at.selectbox(key="uni").set_value(uid)
        _run(at)
        cid = at.selectbox(key="clustering").value
        box = next(s for s in at.selectbox if s.label == "Cluster rows of level")
        assert box.key == f"level-{cid}"
        n_clusters = len(_clusters(at))
        assert box.options[box.index] == f"final ({n_clusters} clusters)", (uid, box.options)
        seen.append(n_clusters)
    assert len(seen) == 4 and len(set(seen)) >= 2  # the counts differ: a stale label shows


def test_every_citing_member_domain_lists_the_pages_that_cite(pipeline_db) -> None:
    """65 of 114 members of the demo's citing clusters listed no page (only pages of
    role citing were listed): every member domain lists pages now, those citing the
    university first."""
    from dashboard.readers import university as reads
    from store import make_engine
    from store.queries import list_clusterings

    engine = make_engine(pipeline_db.url)
    checked = flagged = 0
    for c in list_clusterings(engine, direction="citing"):
        if c.university_id is None or c.unit != "domain":
            continue
        final = reads.list_clusters(pipeline_db.url, c.id, level=-1)
        members = reads.cluster_members(pipeline_db.url, tuple(int(i) for i in final["id"]))
        domains = tuple(sorted(set(members["domain"])))
        pages = reads.member_pages(pipeline_db.url, domains, 5, "citing", int(c.university_id))
        assert set(pages["domain"]) == set(domains), set(domains) - set(pages["domain"])
        checked += len(domains)
        cites = pages[pages["cites"]]
        flagged += cites["domain"].nunique()
        # a domain's citing pages come first
        assert (pages.groupby("domain")["cites"].apply(lambda s: s.is_monotonic_decreasing)).all()
    engine.dispose()
    assert checked > 10 and flagged > 0


def test_the_colink_heat_map_starts_at_zero(pipeline_page) -> None:
    at = pipeline_page("views/network.py")
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    heat = [s for s in specs if s.get("mark", {}).get("type") == "rect"]
    assert heat, "no heat map"
    scale = heat[0]["encoding"]["color"]["scale"]
    assert scale["domain"][0] == 0 and scale["domain"][1] > 0


def test_a_command_line_change_shows_without_a_reload(pipeline_db_copy, monkeypatch) -> None:
    """`webometrics category set` in another process: the open dashboard shows the new
    category within CHECK_SECONDS, and the sidebar says when the data were read."""
    from dashboard.cache import CHECK_SECONDS
    from dashboard.readers import university as reads
    from webometrics.cli import main

    at = page_opener(pipeline_db_copy.url, monkeypatch, strict=True)("views/university.py")
    read = next(c.value for c in at.sidebar.caption if "data read" in c.value)
    members = reads.cluster_members(
        pipeline_db_copy.url, tuple(int(i) for i in _clusters_ids(at, pipeline_db_copy.url))
    )
    domain = str(members["domain"].iloc[0])
    before = members.set_index("domain").loc[domain, "category"]
    target = "media" if before != "media" else "news_portals"
    argv = ["--db-url", pipeline_db_copy.url, "category", "set", domain, target]
    assert main(argv) == 0
    time.sleep(CHECK_SECONDS + 0.5)
    _run(at)
    after = reads.cluster_members(pipeline_db_copy.url, tuple(members["cluster_id"].unique()))
    assert after.set_index("domain").loc[domain, "category"] == target
    now = next(c.value for c in at.sidebar.caption if "data read" in c.value)
    assert now != read


def _clusters_ids(at: AppTest, url: str) -> list[int]:
    from dashboard.readers import university as reads

    chosen = int(at.selectbox(key="clustering").value)
    return [int(i) for i in reads.list_clusters(url, chosen, level=-1)["id"]]
