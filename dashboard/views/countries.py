"""Countries: category shares per university and per country (the paper's Figures 2 and
3), analyst overrides applied, under either definition, and both side by side.

*By domain* (the default) counts each external domain in its own category; *by cluster*
(the paper's way) counts each final cluster's member domains in the cluster's voted
category, a cluster without a majority (support at most 0.5) as *mixed*
(:mod:`store.analytics.shares`). By default the shares are over the domains with evidence
(``known_share``); a toggle counts every domain and shows *unknown* as its own grey
segment. A source filter keeps the domains of some sources only. Every share says the
part of it resting on unreviewed domains scored below ``[analyse] low_confidence``.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from core.choices import UNKNOWN
from dashboard import widgets
from dashboard.readers import countries as reads

DEFINITIONS = {
    "domain": "each domain's own category (default)",
    "cluster": "its cluster's category (the paper's way)",
}

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
definition = st.radio(
    "Count each domain in",
    list(DEFINITIONS),
    format_func=DEFINITIONS.__getitem__,
    horizontal=True,
    key="countries-definition",
    help="domain: a domain counts in its own category (the analyst's override first); "
    "cluster: the member domains of each of a university's final clusters count in the "
    "cluster's voted category, as the paper drew its figures; a cluster whose vote has no "
    "majority (support ≤ 0.5) counts as 'mixed', and domains in no cluster are left out",
)

f1, f2, f3 = st.columns([3, 1, 1])
sources = widgets.source_filter("countries-source", container=f3)
threshold = reads.low_confidence()
share_args: dict[str, Any] = {
    "definition": definition,
    "run_id": run_id,
    "direction": direction,
    "sources": sources,
    "low_confidence": threshold,
}
per_uni = reads.university_shares(url, **share_args)
per_country = reads.country_shares(url, **share_args)
present = set(per_uni["category"]) | set(per_country["category"])
with f1:
    categories = widgets.category_filter(url, "countries-category", present, exclude=[UNKNOWN])
countries = sorted(set(reads.universities(url)["country"]))
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
label_of = widgets.category_namer(url)


def chosen(frame: pd.DataFrame) -> pd.DataFrame:
    keep = frame["category"].isin(categories) & frame[value].notna()
    if "country" in frame:
        keep &= frame["country"].isin(chosen_countries)
    out = frame[keep].assign(share=lambda t: t[value])
    return out.assign(**{"category label": out["category"].map(label_of)})


per_uni, per_country = chosen(per_uni), chosen(per_country)
if per_uni.empty:
    widgets.no_data(
        f"{'clustered' if definition == 'cluster' else 'categorised'} {direction} domains "
        f"in run {run_id}"
    )
    st.stop()
st.caption(
    ("Shares over every external domain, unknown in grey. " if with_unknown else "Shares over "
     "the domains with evidence (a fetched text, a known domain or pattern); domains never "
     "fetched or without text are left out (switch them on above). ")
    + (f"In brackets: the points of each share resting on unreviewed domains (no analyst "
       f"override) whose category score is below {threshold:g} (`[analyse] low_confidence`).")
)  # fmt: skip

colour = widgets.category_color(url, set(per_uni["category"]), orient="right", columns=1)
ORDER = [label_of(c) for c in widgets.category_options(url, present) if c in present]


def bars(frame: pd.DataFrame, by: str) -> alt.Chart:
    """Stacked bars, one per ``by``, tall enough for every legend entry (a legend taller
    than its chart is cut)."""
    height = max(28 * frame[by].nunique(), 22 * frame["category"].nunique() + 30)
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y(f"{by}:N", title=None, sort=None, axis=alt.Axis(labelLimit=260)),
            x=alt.X(
                "share:Q",
                title="share of domains",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1], nice=False),
            ),
            color=colour,
            order=alt.Order("order:Q"),
            tooltip=[
                by,
                "category label",
                "domains",
                alt.Tooltip("share:Q", format=".1%"),
                alt.Tooltip("low_confidence_share:Q", format=".1%", title="unreviewed low"),
            ],
        )
        .transform_calculate(order=f"indexof({ORDER!r}, datum['category label'])")
        .properties(height=height)
    )


def wide(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One row per ``by``, one column per chosen category: ``45.7 % (2.0)``, the share and
    in brackets its points resting on unreviewed low-confidence domains."""
    text = frame.assign(
        cell=[
            widgets.percent_text(s) + (f" ({100 * low:.1f})" if pd.notna(low) and low > 0 else "")
            for s, low in zip(frame["share"], frame["low_confidence_share"], strict=True)
        ]
    )
    out = text.pivot_table(index=by, columns="category", values="cell", aggfunc="first")
    # every chosen category is a column, "0.0 %" where a scope has none
    out = out.reindex(columns=categories)
    out = out.astype(object).fillna(widgets.percent_text(0.0))
    out.columns = [label_of(c) for c in out.columns]
    return out.reset_index()


st.subheader("Per university")
st.altair_chart(bars(per_uni, "university"), width="stretch")
widgets.table(
    wide(per_uni, ["country", "university"]),
    f"category shares per university {direction} run {run_id} by {definition}",
    key="uni",
)
st.subheader("Per country")
if per_country.empty:
    widgets.no_data("country shares")
else:
    st.altair_chart(bars(per_country, "country"), width="stretch")
    widgets.table(
        wide(per_country, ["country"]),
        f"category shares per country {direction} run {run_id} by {definition}",
        key="country",
    )


def readable(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    out = frame[columns].assign(**{"category label": frame["category label"]})
    for c in ("share", "low_confidence_share"):
        out[c] = out[c].map(widgets.percent_text)
    return out.rename(columns={"low_confidence": "unreviewed low", "low_confidence_share":
                               "of it unreviewed low"})  # fmt: skip


with st.expander("Domain counts behind the shares"):
    cols = ["category label", "domains", "share", "low_confidence", "low_confidence_share"]
    widgets.table(
        readable(per_uni, ["country", "university", *cols]),
        f"category domains per university {direction} run {run_id} by {definition}",
        key="uni-long",
    )
    widgets.table(
        readable(per_country, ["country", *cols]),
        f"category domains per country {direction} run {run_id} by {definition}",
        key="country-long",
    )

st.subheader("The two definitions side by side")
st.caption(
    "Share of the domains with evidence by domain (each in its own category) and by cluster "
    "(the paper's way), and the difference in percentage points (cluster − domain). A "
    "cluster's vote goes to the category most of its members with evidence have; where "
    "fewer than half have it (support ≤ 0.5) the cluster counts as mixed: by domain those "
    "members are spread over their own categories. Empty: the university has no clustering "
    "of this run and direction."
)
comparison = reads.share_comparison(
    url, run_id=run_id, direction=direction, sources=sources, low_confidence=threshold
)
comparison = comparison[
    comparison["country"].isin(chosen_countries)
    & comparison["category"].isin([*categories, "mixed"])
]
if comparison.empty:
    widgets.no_data("shares to compare")
else:
    shown = comparison.assign(**{"category label": comparison["category"].map(label_of)})
    heat = (
        alt.Chart(shown.dropna(subset=["difference"]))
        .encode(
            x=alt.X(
                "category label:N",
                title=None,
                sort=[*ORDER, "mixed"],
                axis=alt.Axis(labelAngle=-35, labelLimit=0, labelOverlap=False),
            ),
            y=alt.Y("university:N", title=None, axis=alt.Axis(labelLimit=260)),
        )
        .properties(height=alt.Step(30))
    )
    chart = heat.mark_rect().encode(
        color=alt.Color(
            "difference:Q",
            title="cluster − domain",
            scale=alt.Scale(scheme="redblue", domainMid=0, reverse=True),
            legend=alt.Legend(format="+.0%", orient="right"),
        ),
        tooltip=[
            "university",
            "category label",
            alt.Tooltip("domain_share:Q", format=".1%", title="by domain"),
            alt.Tooltip("cluster_share:Q", format=".1%", title="by cluster"),
            alt.Tooltip("difference:Q", format="+.1%", title="difference"),
        ],
    ) + heat.mark_text(fontSize=11).encode(text=alt.Text("difference:Q", format="+.0%"))
    st.altair_chart(chart, width="stretch")
    table = pd.DataFrame(
        {
            "country": shown["country"],
            "university": shown["university"],
            "category": shown["category label"],
            "by domain": shown["domain_share"].map(widgets.percent_text),
            "by cluster": shown["cluster_share"].map(widgets.percent_text),
            "difference (points)": shown["difference"].map(widgets.points_text),
            "by domain: unreviewed low": shown["domain_low_confidence_share"].map(
                widgets.percent_text
            ),
            "by cluster: unreviewed low": shown["cluster_low_confidence_share"].map(
                widgets.percent_text
            ),
        }
    )
    widgets.table(table, f"share definitions compared {direction} run {run_id}", key="compare")
