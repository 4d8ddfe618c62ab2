"""Rank vs groups: the paper's finding for a run and direction. Per university its rank,
the number and total size of its clusters and the share of each category among its
domains with evidence; Spearman's ρ and Kendall's τ of each with the rank (n, bootstrap
95 % interval, note); the share of universities plus scientific communities against the
rank, each university labelled (seed 000's conclusion)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data, widgets
from store.analytics.ranks import HEADLINE, SHARE_COLUMNS

SHARES = list(SHARE_COLUMNS)

url = widgets.database_url()
st.title("Rank vs groups")
st.caption(
    "Korelin, Blekanov and Sergeev (2015) asked how the number and sizes of a university's "
    "groups bear on its Webometrics rating and concluded: the larger the share of "
    "universities and scientific communities around a university, the better its rank. "
    "Here per university: the clusters (two or more members) of its newest activity "
    "clustering of the run (the default method; another method's only where it has none: "
    "`clustering_id`) and the share of each "
    "category among its domains with evidence (unknown and uncategorised domains left out), "
    "against the rank. **Rank 1 is the best: a negative ρ or τ means a higher factor goes "
    "with a better rank.**"
)
left, right = st.columns([3, 1])
with left:
    run_id = widgets.pick_run(url, key="ranks-run", with_data=True)
if run_id is None:
    st.stop()
direction = right.radio("Direction", ["outgoing", "citing"], horizontal=True, key="ranks-direction")

factors, corr = data.rank_factors(url, run_id, direction)
if factors.empty:
    st.info(f"No {direction} domains in run {run_id} for these filters.")
    st.stop()

st.subheader("Factors per university")
shown = factors[
    [
        "university",
        "country",
        "rank",
        "impact_rank",
        "clustering_id",
        "n_clusters",
        "clustered_size",
        "domains",
        "evidence_domains",
        "unknown",
        *SHARES,
    ]
]
if shown["impact_rank"].isna().all():
    shown = shown.drop(columns=["impact_rank"])
if factors["n_clusters"].isna().any():
    st.caption(
        "Empty cluster columns: the university has no clustering of this run and direction "
        "(`webometrics cluster`)."
    )
percent = {c: st.column_config.NumberColumn(c, format="percent") for c in SHARES}
widgets.table(
    shown,
    f"rank factors {direction} run {run_id}",
    key="ranks-factors",
    column_config=percent,
)

st.subheader("Rank correlations")
n = int(corr["n"].max()) if not corr.empty else 0
if n < 5:
    st.warning(
        f"{n} universities with a rank: too few to conclude anything. The coefficients are "
        "shown with their 95 % interval for completeness; with so few, neither is reliable."
    )
table = corr[
    ["target", "factor", "statistic", "estimate", "n", "low", "high", "p_value", "reading", "note"]
].rename(columns={"low": "95 % low", "high": "95 % high", "p_value": "p"})
widgets.table(
    table,
    f"rank correlations {direction} run {run_id}",
    key="ranks-correlations",
    column_config={
        c: st.column_config.NumberColumn(c, format="%.3f")
        for c in ("estimate", "95 % low", "95 % high", "p")
    },
)

st.subheader("Universities and scientific communities against the rank")
points = factors.dropna(subset=[HEADLINE, "rank"])
if points.empty:
    st.info("No university has both a rank and domains with evidence in this run and direction.")
    st.stop()
head = corr[(corr["factor"] == HEADLINE) & (corr["target"] == "rank")].set_index("statistic")


def _coefficient(statistic: str, symbol: str) -> str:
    if statistic not in head.index or pd.isna(head.at[statistic, "estimate"]):
        return f"{symbol} undefined"
    r = head.loc[statistic]
    return f"{symbol} = {r['estimate']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]"


st.caption(
    f"{_coefficient('spearman', 'ρ')} · {_coefficient('kendall', 'τ')} · n = {len(points)}. "
    "Rank 1 at the top: a rise from left to right is what the paper concluded."
)
base = alt.Chart(points).encode(
    x=alt.X(
        f"{HEADLINE}:Q",
        title="universities + scientific communities, share of domains with evidence",
        axis=alt.Axis(format="%"),
        scale=alt.Scale(zero=False, padding=20),
    ),
    y=alt.Y(
        "rank:Q",
        title="Webometrics rank (1 = best, at the top)",
        scale=alt.Scale(reverse=True, zero=False, padding=20),
    ),
)
chart = base.mark_circle(size=90).encode(
    tooltip=[
        "university",
        "country",
        "rank",
        alt.Tooltip(f"{HEADLINE}:Q", format=".1%", title="share"),
        "n_clusters",
    ]
) + base.mark_text(align="left", dx=7, dy=-7, fontSize=12).encode(text="university:N")
st.altair_chart(chart.properties(height=420), width="stretch")
