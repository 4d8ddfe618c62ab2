"""Countries: category shares per university and per country side by side (the paper's
Figures 2 and 3), analyst overrides applied.

By default the shares are over the domains with evidence (``known_share``: a fetched text,
a known domain or pattern); a toggle counts every domain and shows *unknown* (never
fetched, or no text) as its own grey segment. A source filter keeps the citing domains of
some sources only (crawl, backlink export, Common Crawl web graph).
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.choices import UNKNOWN
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

f1, f2, f3 = st.columns([3, 1, 1])
sources = widgets.source_filter("countries-source", container=f3)
per_uni, per_country = data.shares(url, run_id, direction, sources)
present = set(per_uni["category"]) | set(per_country["category"])
with f1:
    categories = widgets.category_filter(url, "countries-category", present, exclude=[UNKNOWN])
countries = sorted(set(data.universities(url)["country"]))
chosen_countries = f2.multiselect("Country", countries, default=countries, key="countries-country")
with_unknown = st.toggle(
    "Count unknown domains (never fetched, or no text) as a grey segment",
    key="countries-unknown",
    help="off: shares over the domains with evidence only (known_share); on: over every "
    "domain, unknown included (share)",
)
if with_unknown:
    categories = [*categories, UNKNOWN]
    value = "share"
else:
    value = "known_share"


def chosen(frame: pd.DataFrame) -> pd.DataFrame:
    keep = frame["category"].isin(categories) & frame[value].notna()
    if "country" in frame:
        keep &= frame["country"].isin(chosen_countries)
    out = frame[keep].assign(share=lambda t: t[value])
    return out.assign(**{"category label": out["category"].map(widgets.category_namer(url))})


per_uni, per_country = chosen(per_uni), chosen(per_country)
if per_uni.empty:
    widgets.no_data(f"categorised {direction} domains in run {run_id}")
    st.stop()
st.caption(
    "Shares over every external domain, unknown in grey."
    if with_unknown
    else "Shares over the domains with evidence (a fetched text, a known domain or pattern); "
    "domains never fetched or without text are left out (switch them on above)."
)

label_of = widgets.category_namer(url)
colour = widgets.category_color(url, set(per_uni["category"]), orient="bottom", columns=2)
ORDER = [label_of(c) for c in widgets.category_options(url, present) if c in present]


def bars(frame: pd.DataFrame, by: str) -> alt.Chart:
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y(f"{by}:N", title=None, sort=None, axis=alt.Axis(labelLimit=220)),
            x=alt.X("share:Q", title="share of domains", axis=alt.Axis(format="%")),
            color=colour,
            order=alt.Order("order:Q"),
            tooltip=[by, "category label", "domains", alt.Tooltip("share:Q", format=".1%")],
        )
        .transform_calculate(order=f"indexof({ORDER!r}, datum['category label'])")
        .properties(height=alt.Step(28))
    )


def wide(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    out = frame.pivot_table(index=by, columns="category", values="share", aggfunc="sum")
    # every chosen category is a column, zeros included, by its readable label
    out = out.reindex(columns=categories).fillna(0.0)
    out.columns = [label_of(c) for c in out.columns]
    return out.round(4).reset_index()


a, b = st.columns(2)
with a:
    st.subheader("Per university")
    st.altair_chart(bars(per_uni, "university"), width="stretch")
    table = wide(per_uni, ["country", "university"])
    widgets.table(table, f"category shares per university {direction} run {run_id}", key="uni")
with b:
    st.subheader("Per country")
    if per_country.empty:
        widgets.no_data("country shares")
    else:
        st.altair_chart(bars(per_country, "country"), width="stretch")
        table = wide(per_country, ["country"])
        widgets.table(table, f"category shares per country {direction} run {run_id}", key="country")

with st.expander("Domain counts behind the shares"):
    widgets.table(
        per_uni[["country", "university", "category label", "domains", "share"]],
        f"category domains per university {direction} run {run_id}",
        key="uni-long",
    )
    widgets.table(
        per_country[["country", "category label", "domains", "share"]],
        f"category domains per country {direction} run {run_id}",
        key="country-long",
    )
