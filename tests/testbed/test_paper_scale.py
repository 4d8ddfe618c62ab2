"""The paper-scale web (testbed/paper_scale.py) and the rehearsal that crawls it
(bench/rehearsal.py), at a tiny scale."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.domains import registered_domain
from testbed.paper_scale import PAPER_UNIVERSITIES, PaperWebOptions, build_paper_web, scaled
from testbed.server import TestbedServer
from tests.tiers import slow_fixture

ROOT = Path(__file__).resolve().parents[2]
TINY = 0.0005


@pytest.fixture(scope="module")
@slow_fixture
def paper_web(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("paper-web")
    return out, build_paper_web(out, PaperWebOptions(scale=TINY), shared_data)


def test_domains_follow_table_3(paper_web: tuple[Path, dict]):
    out, made = paper_web
    for u in PAPER_UNIVERSITIES:
        row = made["universities"][u.key]
        assert (row["outgoing_ru"], row["outgoing_en"]) == (scaled(u.out_ru, TINY),
                                                            scaled(u.out_en, TINY))  # fmt: skip
        assert (row["citing_ru"], row["citing_en"]) == (scaled(u.cite_ru, TINY),
                                                        scaled(u.cite_en, TINY))  # fmt: skip
        # Table 2's links per external domain, at least one link per domain
        assert row["links"] >= row["outgoing_ru"] + row["outgoing_en"]
        with open(out / "citing" / f"{u.key}.majestic.csv", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == row["citing_pages"]
        cited = {registered_domain(r["Source URL"].split("/")[2]) for r in rows}
        assert len(cited) == row["citing_ru"] + row["citing_en"]
        assert {registered_domain(r["Target URL"].split("/")[2]) for r in rows} == {u.domain}


def test_served_pages_link_as_listed(paper_web: tuple[Path, dict]):
    """The served citing page links to its target; a university list page links out."""
    out, _made = paper_web
    with open(out / "citing" / "backlinks-majestic.csv", encoding="utf-8") as f:
        first = next(csv.DictReader(f))
    with TestbedServer(out) as server:
        page = server.index.answer(first["Source URL"])
        home = server.index.answer("http://www.cam.ac.uk/links/1.html")
        robots = server.index.answer("http://www.cam.ac.uk/robots.txt")
    assert page.status == 200 and first["Target URL"].encode() in page.body
    assert home.status == 200 and home.body.count(b"<a href=") > 1
    assert robots.status == 404  # allow all


def test_bad_scale_is_refused(tmp_path: Path, shared_data: Path):
    from core.exceptions import ParameterError

    with pytest.raises(ParameterError, match="--scale"):
        build_paper_web(tmp_path, PaperWebOptions(scale=0), shared_data)


def test_latency_spread(paper_web: tuple[Path, dict]):
    """--latency-max draws each answer's wait between --latency and it."""
    from core.exceptions import ParameterError

    with TestbedServer(paper_web[0], latency=0.1, latency_max=0.5) as server:
        waits = [server.answer_latency() for _ in range(2000)]
    assert min(waits) >= 0.1 and max(waits) <= 0.5
    assert 0.18 < sorted(waits)[1000] < 0.27  # log-uniform: median 0.22
    with pytest.raises(ParameterError, match="latency-max"):
        TestbedServer(Path("nowhere"), latency=0.5, latency_max=0.1)


@pytest.mark.slow
def test_rehearsal_runs_end_to_end(tmp_path: Path, postgres_url: str, redis_server, shared_data):
    """bench/rehearsal.py through the crawl farm at a tiny scale: every stage measured,
    every generated domain crawled."""
    stem = tmp_path / "rehearsal"
    subprocess.run(
        [sys.executable, "bench/rehearsal.py", "--scale", str(TINY), "--latency", "0",
         "--latency-max", "0.01", "--processes", "2", "--db-url", postgres_url,
         "--redis-url", redis_server.url, "--out-stem", str(stem)],
        cwd=ROOT, check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
    stages = {s["stage"]: s for s in out["stages"]}
    assert list(stages) == [
        "build", "setup", "crawl", "extract", "dedup", "cluster", "analyse", "report"
    ]  # fmt: skip
    web = out["web"]["universities"].values()
    crawled = stages["crawl"]["counts"]
    assert crawled["outgoing domains"] == sum(u["outgoing_ru"] + u["outgoing_en"] for u in web)
    assert crawled["citing domains"] == sum(u["citing_ru"] + u["citing_en"] for u in web)
    assert stages["cluster"]["counts"]["clusters"] > 0
    assert all(s["wall_s"] > 0 and s["peak_rss_mb"] > 0 for s in out["stages"])
    assert stages["report"]["files_bytes"] > 0
    assert "| crawl |" in stem.with_suffix(".md").read_text(encoding="utf-8")
