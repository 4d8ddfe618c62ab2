"""The Rank vs groups page in Streamlit's AppTest on the fixture database: the factors per
university and the rank correlations are the stored world's, the small-n note is shown,
the pickers change what is shown."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

import dashboard
from dashboard.widgets import STALE_ICON
from tests import apptest
from tests.stored_world import ENV, UNI_BY_DOMAIN, Facts, effective_category

APP = Path(dashboard.__file__).resolve().parent / "app.py"


def open_ranks_page(url: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The app on the database at ``url``, switched to the Rank vs groups page."""
    return apptest.open_page(url, monkeypatch, "views/ranks.py")


@pytest.fixture
def ranks_page(dashboard_db: Facts, monkeypatch) -> AppTest:
    return open_ranks_page(dashboard_db.url, monkeypatch)


def academic(run: int, udom: str, direction: str) -> float:
    cats = Counter(effective_category(d) for d in ENV[run][udom][direction])
    evidence = sum(n for c, n in cats.items() if c != "uncategorised")
    return (cats["universities"] + cats["scientific_communities"]) / evidence


def tables(at: AppTest) -> dict[str, pd.DataFrame]:
    """The page's tables by their download's name (factors, correlations, sensitivity ...)."""
    frames = [df.value for df in at.dataframe]
    names = [b.label for b in at.get("download_button")]
    return {
        next(k for k in ("factors", "shares compared", "correlations", "sensitivity", "settings")
             if k in name): df
        for name, df in zip(names, frames, strict=True)
    }  # fmt: skip


def no_none(frame: pd.DataFrame) -> bool:
    """No cell of a rendered table is missing or reads "None"."""
    return not frame.isna().any().any() and not (frame.astype(str) == "None").any().any()


def page_warning(at: AppTest) -> str:
    """The page's own first warning: not the stale-figures banner every page may show
    above it (``dashboard.widgets.stale_banner``, its icon ``:material/update:``)."""
    return next(w.value for w in at.warning if w.icon != STALE_ICON)


@pytest.mark.slow
def test_rank_page_shows_the_factors_and_correlations_of_the_run(
    ranks_page: AppTest, dashboard_db: Facts
) -> None:
    at = ranks_page
    assert at.title[0].value == "Rank vs groups"
    assert "negative ρ or τ means a higher factor goes with a better rank" in at.caption[0].value
    # the newest run first: two universities link out in run 2, too few for ρ
    assert at.selectbox(key="ranks-run").value == dashboard_db.run_ids[2]
    t = tables(at)
    factors, corr = t["factors"], t["correlations"]
    assert sorted(factors["university"]) == sorted(UNI_BY_DOMAIN[u][0] for u in ENV[2])
    # the stored world's figures are computed (as analyse leaves them): no stale banner
    assert not any(w.icon == STALE_ICON for w in at.warning)
    assert "too few to conclude" in page_warning(at)
    assert (corr["estimate"] == "").all() and corr["note"].str.contains("at least 3").all()
    assert "ρ undefined" in at.caption[-2].value
    assert all(no_none(df) for df in t.values())

    at.selectbox(key="ranks-run").set_value(dashboard_db.run_ids[1]).run()
    assert not at.exception, at.exception
    t = tables(at)
    factors, corr = t["factors"], t["correlations"]
    out = [u for u in ENV[1] if "outgoing" in ENV[1][u]]
    assert list(factors["rank"]) == [str(r) for r in sorted(UNI_BY_DOMAIN[u][2] for u in out)]
    by_name = factors.set_index("university")
    for u in out:
        name = UNI_BY_DOMAIN[u][0]
        assert by_name.at[name, "share_academic"] == f"{100 * academic(1, u, 'outgoing'):.1f} %"
        # every domain of the stored world is scored 0.9: nothing rests on low confidence
        assert by_name.at[name, "share_academic: unreviewed low"] == "0.0 %"
    # spbu.ru and ox.ac.uk have a clustering of run 1's outgoing environment
    assert by_name.at[UNI_BY_DOMAIN["spbu.ru"][0], "n_clusters"] == "2"
    assert by_name.at[UNI_BY_DOMAIN["ox.ac.uk"][0], "clustered_size"] == "4"
    assert by_name.at[UNI_BY_DOMAIN["nsu.ru"][0], "n_clusters"] == ""  # blank, not None
    rho = corr[(corr["factor"] == "share_academic") & (corr["statistic"] == "spearman")].iloc[0]
    want = stats.spearmanr(
        [academic(1, u, "outgoing") for u in out], [UNI_BY_DOMAIN[u][2] for u in out]
    ).statistic
    assert rho["estimate"] == f"{want:+.3f}"
    # four universities: no interval, the exact p, p adjusted over every test of the run
    assert rho["n"] == 4 and rho["95 % low"] == rho["95 % high"] == ""
    assert float(rho["p Holm"]) >= float(rho["p"])
    assert "n = 4 < 10: too few universities to conclude" in rho["note"]
    assert f"ρ = {want:+.2f}" in at.caption[-2].value
    assert "4 universities with a rank, fewer than 10: too few to conclude" in page_warning(at)
    assert "the paper had 9" in page_warning(at)
    assert any("Holm" in c.value and "Benjamini-Hochberg" in c.value for c in at.caption)
    assert all(no_none(df) for df in t.values())
    sensitivity = t["sensitivity"]
    assert set(sensitivity["holds"]) <= {"holds", "flips", "undefined"}
    assert any("signs hold" in m.value for m in at.markdown)

    # the paper's way: the shares by cluster (spbu.ru: 3 of its 5 clustered domains in its
    # science cluster, scientific communities; social: media by a tie)
    at.radio(key="ranks-definition").set_value("cluster").run()
    assert not at.exception, at.exception
    by_name = tables(at)["factors"].set_index("university")
    assert by_name.at[UNI_BY_DOMAIN["spbu.ru"][0], "share_academic"] == "60.0 %"
    assert by_name.at[UNI_BY_DOMAIN["nsu.ru"][0], "share_academic"] == ""

    at.radio(key="ranks-direction").set_value("citing").run()
    assert not at.exception, at.exception
    factors = tables(at)["factors"]
    assert sorted(factors["university"]) == sorted(
        UNI_BY_DOMAIN[u][0] for u in ENV[1] if "citing" in ENV[1][u]
    )


def test_rank_page_on_what_the_pipeline_stores(pipeline_db, monkeypatch) -> None:
    """Every run, direction and share definition of the pipeline-made database: no
    exception, the factors are the reader's, the headline correlation and the small-n
    warning shown, no blank shown as "None"."""
    from store import analytics as A

    at = open_ranks_page(pipeline_db.url, monkeypatch)
    engine = pipeline_db.engine
    try:
        runs = A.run_ids(engine)
        assert runs
        for run in runs:
            at.selectbox(key="ranks-run").set_value(run).run()
            for definition in ("domain", "cluster"):
                at.radio(key="ranks-definition").set_value(definition).run()
                for direction in ("outgoing", "citing"):
                    at.radio(key="ranks-direction").set_value(direction).run()
                    assert not at.exception, at.exception
                    want = A.rank_factors(
                        engine, run_id=run, direction=direction, definition=definition
                    )
                    t = tables(at)
                    factors, corr = t["factors"], t["correlations"]
                    assert list(factors["university"]) == [r.university for r in want]
                    assert list(factors["n_clusters"]) == [
                        "" if r.n_clusters is None else str(r.n_clusters) for r in want
                    ]
                    assert list(factors["unknown"]) == [r.unknown for r in want]
                    assert set(corr["factor"]) >= {"share_academic", "n_clusters"}
                    assert "too few to conclude" in page_warning(at)  # four universities
                    assert "n = 4" in at.caption[-2].value
                    assert all(no_none(df) for df in t.values())
    finally:
        engine.dispose()


def test_the_rank_edition_picked_sets_every_rank_and_correlation(
    fresh_dashboard_db: Facts, monkeypatch, tmp_path
) -> None:
    """Two editions stored: the newest is shown first; picking the other changes the
    ranks, the correlations and the note of the universities it does not rank."""
    from core.rank_table import read_rank_table
    from store import make_engine
    from store.rank_editions import import_edition

    engine = make_engine(fresh_dashboard_db.url)
    older = {d: r for d, (_n, _c, r) in UNI_BY_DOMAIN.items()}
    newer = {d: 1000 - r for d, r in older.items() if d != "nsu.ru"}  # reversed, one missing
    for name, ranks, published in (("old", older, "2015-01-01"), ("new", newer, "2020-01-01")):
        path = tmp_path / f"{name}.csv"
        path.write_text(
            "domain,rank\n" + "".join(f"{d},{r}\n" for d, r in ranks.items()), encoding="utf-8"
        )
        import_edition(
            engine,
            read_rank_table(path),
            name,
            published=dt.date.fromisoformat(published),
        )
    engine.dispose()
    at = open_ranks_page(fresh_dashboard_db.url, monkeypatch)
    at.selectbox(key="ranks-run").set_value(fresh_dashboard_db.run_ids[1]).run()
    assert at.selectbox(key="ranks-edition").value == "new"
    assert at.selectbox(key="ranks-edition").options[0].startswith("new (3 ranked, 2020-01-01")
    out = [u for u in ENV[1] if "outgoing" in ENV[1][u]]
    for edition, ranks in (("new", newer), ("old", older)):
        at.selectbox(key="ranks-edition").set_value(edition).run()
        assert not at.exception, at.exception
        t = tables(at)
        by_name = t["factors"].set_index("university")
        for u in out:
            assert by_name.at[UNI_BY_DOMAIN[u][0], "rank"] == str(ranks.get(u, ""))
        ranked = [u for u in out if u in ranks]
        rho = t["correlations"]
        rho = rho[(rho["factor"] == "share_academic") & (rho["statistic"] == "spearman")]
        want = stats.spearmanr(
            [academic(1, u, "outgoing") for u in ranked], [ranks[u] for u in ranked]
        ).statistic
        assert rho.iloc[0]["estimate"] == f"{want:+.3f}" and rho.iloc[0]["n"] == len(ranked)
        note = next(c.value for c in at.caption if "Ranks of the edition" in c.value)
        assert (UNI_BY_DOMAIN["nsu.ru"][0] in note) == (edition == "new" and "nsu.ru" in out)
