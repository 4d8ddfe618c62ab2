"""``webometrics report`` writes the paper's finding: the factors per university, their rank
correlations (CSV and Markdown) and the labelled scatter (PNG), on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from scipy import stats

from analyse.ranks import FACTORS, HEADLINE
from tests.stored_world import ENV, UNI_BY_DOMAIN, Facts, effective_category
from webometrics.cli import main


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _academic_share(udom: str, direction: str) -> float:
    cats = [effective_category(d) for d in ENV[1][udom][direction]]
    evidence = [c for c in cats if c != "uncategorised"]
    return sum(c in ("universities", "scientific_communities") for c in evidence) / len(evidence)


@pytest.mark.slow
def test_report_writes_the_rank_correlation_table_and_figure(
    filled_ro: Facts, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "report"
    run1 = filled_ro.run_ids[1]
    assert main(["--db-url", filled_ro.url, "report", "--out", str(out), "--run", str(run1)]) == 0
    printed = capsys.readouterr().out
    for name in (
        "rank_factors.csv",
        "rank_correlation.csv",
        "rank_correlation.png",
        "rank_sensitivity.csv",
    ):
        assert name in printed
    assert "rank_correlation.png" in (out / "README.md").read_text(encoding="utf-8")

    every_factor = _read(out / "rank_factors.csv")
    assert {r["definition"] for r in every_factor} == {"domain", "cluster"}
    factors = [r for r in every_factor if r["definition"] == "domain"]
    # by cluster, the paper's way: spbu.ru's science cluster (arxiv.org, elibrary.ru,
    # mit.edu: scientific communities) and social one (lenta.ru, vk.com: media, the first
    # category of a tie by name) give 3/5; ox.ac.uk's academia and web clusters 1/2
    by_cluster = {
        (r["direction"], r["university"]): r[HEADLINE]
        for r in every_factor
        if r["definition"] == "cluster"
    }
    assert float(by_cluster[("outgoing", UNI_BY_DOMAIN["spbu.ru"][0])]) == pytest.approx(3 / 5)
    assert float(by_cluster[("outgoing", UNI_BY_DOMAIN["ox.ac.uk"][0])]) == pytest.approx(1 / 2)
    assert by_cluster[("outgoing", UNI_BY_DOMAIN["nsu.ru"][0])] == ""  # no clustering
    want = sorted((d, UNI_BY_DOMAIN[u][0]) for u, dirs in ENV[1].items() for d in dirs)
    assert sorted((r["direction"], r["university"]) for r in factors) == want
    for r in factors:
        udom = next(d for d, v in UNI_BY_DOMAIN.items() if v[0] == r["university"])
        assert float(r[HEADLINE]) == pytest.approx(_academic_share(udom, r["direction"]), abs=1e-4)
        assert int(r["rank"]) == UNI_BY_DOMAIN[udom][2]

    every_row = _read(out / "rank_correlation.csv")
    assert {r["definition"] for r in every_row} == {"domain", "cluster"}
    rows = [r for r in every_row if r["definition"] == "domain"]
    for r in every_row:
        if r["p_value"]:
            assert float(r["p_holm"]) >= float(r["p_value"]) and float(r["q_bh"]) <= 1
    # one row per run x direction x factor x statistic, the Webometrics rank only (no
    # impact rank stored)
    assert [(r["direction"], r["factor"], r["statistic"]) for r in rows] == [
        (d, f, s) for d in ("outgoing", "citing") for f in FACTORS for s in ("spearman", "kendall")
    ]
    assert {(r["run_id"], r["target"], r["confidence"]) for r in rows} == {
        (str(run1), "rank", "0.95")
    }
    for direction in ("outgoing", "citing"):
        unis = [u for u in ENV[1] if direction in ENV[1][u]]
        x = [_academic_share(u, direction) for u in unis]
        y = [UNI_BY_DOMAIN[u][2] for u in unis]
        for statistic, ref in (("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
            row = next(
                r
                for r in rows
                if (r["direction"], r["factor"], r["statistic"]) == (direction, HEADLINE, statistic)
            )
            want_est = ref(x, y).statistic
            assert float(row["estimate"]) == pytest.approx(want_est, abs=1e-4)
            assert int(row["n"]) == len(unis) < 10
            # below ten universities: an exact p, no interval, and the caveat with its reason
            assert row["low"] == row["high"] == ""
            assert f"n = {len(unis)} < 10: too few universities to conclude" in row["note"]
            assert "None" not in row.values()
            way = "better (smaller)" if want_est < 0 else "worse (larger)"
            assert row["reading"].endswith(f"goes with a {way} rank")
    # fewer than three universities have a clustering: empty estimate, the reason said
    undefined = [r for r in rows if r["factor"] == "n_clusters"]
    assert all(r["estimate"] == "" and "at least 3" in r["note"] for r in undefined)
    md = (out / "rank_correlation.md").read_text(encoding="utf-8")
    assert "a negative ρ or τ means a higher factor goes with a better" in md
    assert "Holm" in md and "Benjamini-Hochberg" in md and "None" not in md
    sensitivity = _read(out / "rank_sensitivity.csv")
    assert sensitivity and {r["holds"] for r in sensitivity} <= {"holds", "flips", "undefined"}
    assert all(r["signs"].startswith("domain · setting 1: ") for r in sensitivity)

    png = (out / "rank_correlation.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


@pytest.mark.slow
def test_report_on_an_empty_database_writes_the_headers(migrated_url: str, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    assert main(["--db-url", migrated_url, "report", "--out", str(out)]) == 0
    with (out / "rank_correlation.csv").open(encoding="utf-8") as fh:
        header, *rest = list(csv.reader(fh))
    assert header[:6] == ["run_id", "definition", "direction", "target", "factor", "statistic"]
    assert rest == []
    assert (out / "rank_correlation.png").read_bytes()[:4] == b"\x89PNG"
