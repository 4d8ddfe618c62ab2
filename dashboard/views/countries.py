"""Countries: category shares per university and per country side by side (the paper's
Figures 2 and 3), analyst overrides applied."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data, widgets

url = widgets.database_url()
st.title("Countries")
st.caption(
    "Share of each activity category among a university's external domains, and among the "
    "distinct domains of all universities of a country (Figure 2: outgoing, the sites the "
    "universities link to; Figure 3: citing, the sites that link to them)."
)
left, right = st.columns([3, 1])
with left:
    run_id = widgets.pick_run(url, key="countries-run", with_data=True)
if run_id is None:
    st.stop()
direction = right.radio(
    "Direction", ["outgoing", "citing"], horizontal=True, key="countries-direction"
)

per_uni = data.category_shares(url, run_id, direction)
per_country = data.country_shares(url, run_id, direction)
present = set(per_uni["category"]) | set(per_country["category"])
f1, f2 = st.columns([3, 1])
with f1:
    categories = widgets.category_filter(url, "countries-category", present)
countries = sorted(set(data.universities(url)["country"]))
chosen_countries = f2.multiselect("Country", countries, default=countries, key="countries-country")
per_uni = per_uni[per_uni["category"].isin(categories) & per_uni["country"].isin(chosen_countries)]
per_country = per_country[
    per_country["category"].isin(categories) & per_country["country"].isin(chosen_countries)
]
if per_uni.empty:
    st.info(f"No categorised {direction} domains in run {run_id}: run `webometrics analyse`.")
    st.stop()

SORTED = [c for c in widgets.category_options(url, present) if c in present]
TAXONOMY = set(data.category_labels(url))
colour = alt.Color(
    "category:N",
    sort=SORTED,
    legend=alt.Legend(orient="bottom", columns=1),
)


def bars(frame: pd.DataFrame, by: str) -> alt.Chart:
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y(f"{by}:N", title=None, sort=None, axis=alt.Axis(labelLimit=220)),
            x=alt.X("share:Q", title="share of domains", axis=alt.Axis(format="%")),
            color=colour,
            tooltip=[by, "category", "domains", alt.Tooltip("share:Q", format=".1%")],
        )
        .properties(height=alt.Step(28))
    )


def wide(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    out = frame.pivot_table(index=by, columns="category", values="share", aggfunc="sum")
    # every chosen category of the taxonomy is a column, zeros included
    columns = [c for c in categories if c in SORTED or c in TAXONOMY]
    out = out.reindex(columns=columns).fillna(0.0)
    out.columns.name = None
    return out.round(4).reset_index()


a, b = st.columns(2)
with a:
    st.subheader("Per university")
    st.altair_chart(bars(per_uni, "university"), width="stretch")
    table = wide(per_uni, ["country", "university"])
    widgets.table(table, f"category shares per university {direction} run {run_id}", key="uni")
with b:
    st.subheader("Per country")
    st.altair_chart(bars(per_country, "country"), width="stretch")
    table = wide(per_country, ["country"])
    widgets.table(table, f"category shares per country {direction} run {run_id}", key="country")

with st.expander("Domain counts behind the shares"):
    widgets.table(
        per_uni[["country", "university", "category", "domains", "share"]],
        f"category domains per university {direction} run {run_id}",
        key="uni-long",
    )
    widgets.table(
        per_country[["country", "category", "domains", "share"]],
        f"category domains per country {direction} run {run_id}",
        key="country-long",
    )
