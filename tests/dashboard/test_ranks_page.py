"""The Rank vs groups page in Streamlit's AppTest on the fixture database: the factors per
university and the rank correlations are the stored world's, the small-n note is shown,
the pickers change what is shown."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

import dashboard
from tests import apptest
from tests.stored_world import ENV, UNI_BY_DOMAIN, Facts, effective_category

APP = Path(dashboard.__file__).resolve().parent / "app.py"


def open_ranks_page(url: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The app on the database at ``url``, switched to the Rank vs groups page."""
    monkeypatch.setenv("WEBOMETRICS_DB_URL", url)
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)
    at = apptest.app()
    at.run()
    at.switch_page("views/ranks.py").run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def ranks_page(dashboard_db: Facts, monkeypatch) -> AppTest:
    return open_ranks_page(dashboard_db.url, monkeypatch)


def academic(run: int, udom: str, direction: str) -> float:
    cats = Counter(effective_category(d) for d in ENV[run][udom][direction])
    evidence = sum(n for c, n in cats.items() if c != "uncategorised")
    return (cats["universities"] + cats["scientific_communities"]) / evidence


def test_rank_page_shows_the_factors_and_correlations_of_the_run(
    ranks_page: AppTest, dashboard_db: Facts
) -> None:
    at = ranks_page
    assert at.title[0].value == "Rank vs groups"
    assert "negative ρ or τ means a higher factor goes with a better rank" in at.caption[0].value
    # the newest run first: two universities link out in run 2, too few for ρ
    assert at.selectbox(key="ranks-run").value == dashboard_db.run_ids[2]
    factors, corr = (df.value for df in at.dataframe)
    assert sorted(factors["university"]) == sorted(UNI_BY_DOMAIN[u][0] for u in ENV[2])
    assert "too few to conclude" in at.warning[0].value
    assert corr["estimate"].isna().all() and corr["note"].str.contains("at least 3").all()
    assert "ρ undefined" in at.caption[-2].value

    at.selectbox(key="ranks-run").set_value(dashboard_db.run_ids[1]).run()
    assert not at.exception, at.exception
    factors, corr = (df.value for df in at.dataframe)
    out = [u for u in ENV[1] if "outgoing" in ENV[1][u]]
    assert list(factors["rank"]) == sorted(UNI_BY_DOMAIN[u][2] for u in out)
    by_name = factors.set_index("university")
    for u in out:
        name = UNI_BY_DOMAIN[u][0]
        assert by_name.at[name, "share_academic"] == pytest.approx(academic(1, u, "outgoing"))
    # spbu.ru and ox.ac.uk have a clustering of run 1's outgoing environment
    assert by_name.at[UNI_BY_DOMAIN["spbu.ru"][0], "n_clusters"] == 2
    assert by_name.at[UNI_BY_DOMAIN["ox.ac.uk"][0], "clustered_size"] == 4
    rho = corr[(corr["factor"] == "share_academic") & (corr["statistic"] == "spearman")].iloc[0]
    want = stats.spearmanr(
        [academic(1, u, "outgoing") for u in out], [UNI_BY_DOMAIN[u][2] for u in out]
    ).statistic
    assert rho["estimate"] == pytest.approx(want)
    assert rho["n"] == 4 and rho["95 % low"] <= rho["estimate"] <= rho["95 % high"]
    assert "too small to conclude" in rho["note"]
    assert f"ρ = {want:+.2f}" in at.caption[-2].value
    assert "4 universities with a rank: too few to conclude" in at.warning[0].value

    at.radio(key="ranks-direction").set_value("citing").run()
    assert not at.exception, at.exception
    factors, _corr = (df.value for df in at.dataframe)
    assert sorted(factors["university"]) == sorted(
        UNI_BY_DOMAIN[u][0] for u in ENV[1] if "citing" in ENV[1][u]
    )


def test_rank_page_on_what_the_pipeline_stores(pipeline_db, monkeypatch) -> None:
    """Every run and direction of the pipeline-made database: no exception, the factors
    are the reader's, the headline correlation and the small-n warning shown."""
    from store import analytics as A

    at = open_ranks_page(pipeline_db.url, monkeypatch)
    engine = pipeline_db.engine
    try:
        runs = A.run_ids(engine)
        assert runs
        for run in runs:
            at.selectbox(key="ranks-run").set_value(run).run()
            for direction in ("outgoing", "citing"):
                at.radio(key="ranks-direction").set_value(direction).run()
                assert not at.exception, at.exception
                want = A.rank_factors(engine, run_id=run, direction=direction)
                factors, corr = (df.value for df in at.dataframe)
                assert list(factors["university"]) == [r.university for r in want]
                assert list(factors["n_clusters"]) == [r.n_clusters for r in want]
                assert list(factors["unknown"]) == [r.unknown for r in want]
                assert set(corr["factor"]) >= {"share_academic", "n_clusters"}
                assert "too few to conclude" in at.warning[0].value  # four universities
                assert "n = 4" in at.caption[-2].value
    finally:
        engine.dispose()
