"""Rank vs groups: the paper's finding for a run and direction. Per university its rank,
the number and total size of its clusters and the share of each category among its
domains with evidence, by domain or by cluster (the paper's way), with the part of the
headline share resting on unreviewed low-confidence domains; Spearman's ρ and Kendall's
τ of each with the rank (n, p, p adjusted over every test of the run by Holm's and
Benjamini-Hochberg's methods, an interval consistent with the test from 10 universities
on, note); whether each sign holds under both share definitions and every stored
clustering setting; the headline share against the rank, each university labelled (seed
000's conclusion). The ranks are those of the rank edition chosen (default: the newest).
With two or more collections (the live web, archive periods: docs/archives.md), the
headline share and its correlation with the rank of each collection's newest run side by
side, so an analyst compares years."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.archives import LIVE
from dashboard import widgets
from dashboard.readers import ranks as reads
from store.analytics.ranks import HEADLINE, MIN_CONCLUSIVE, SHARE_COLUMNS

SHARES = list(SHARE_COLUMNS)
DEFINITIONS = {
    "domain": "each domain's own category (default)",
    "cluster": "its cluster's category (the paper's way)",
}

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
    run_id = widgets.pick_collection_run(url, key="ranks-run", default=LIVE)
if run_id is None:
    st.stop()
direction = right.radio("Direction", ["outgoing", "citing"], horizontal=True, key="ranks-direction")
editions = reads.list_editions(url)
edition: str | None = None
if not editions.empty:
    names = editions["name"].tolist()
    newest = names[0]

    def _edition_label(name: str) -> str:
        row = editions[editions["name"] == name].iloc[0]
        when = "" if pd.isna(row["published"]) else f", {row['published']}"
        return f"{name} ({row['ranked']} ranked{when}" + (", newest)" if name == newest else ")")

    edition = st.selectbox(
        "Rank edition",
        names,
        index=0,
        format_func=_edition_label,
        key="ranks-edition",
        help="The ranking edition every rank, correlation and chart of this page uses "
        "(`webometrics universities import-ranks FILE --edition NAME` imports one; "
        "`webometrics universities ranks` lists them). Default: the newest.",
    )
definition = st.radio(
    "Shares: count each domain in",
    list(DEFINITIONS),
    format_func=DEFINITIONS.__getitem__,
    horizontal=True,
    key="ranks-definition",
    help="domain: each domain in its own category; cluster: each final cluster's members in "
    "the cluster's voted category (a cluster without a majority is mixed: in the "
    "denominator, in no category), as the paper counted",
)

all_factors, all_corr = reads.rank_analysis(url, run_id, definition, edition)
factors = all_factors[all_factors["direction"] == direction]
corr = all_corr[all_corr["direction"] == direction]
if factors.empty:
    st.info(f"No {direction} domains in run {run_id} for these filters.")
    st.stop()


st.subheader("Factors per university")
if edition is not None:
    unranked = factors.loc[factors["rank"].isna() & factors["impact_rank"].isna(), "university"]
    st.caption(
        f"Ranks of the edition **{edition}**"
        + (" (the newest)." if edition == editions["name"].iloc[0] else ".")
        + (
            f" Not ranked by it (left out of the correlations): {', '.join(unranked)}."
            if not unranked.empty
            else ""
        )
    )
threshold = reads.low_confidence()
both = reads.share_comparison(url, run_id=run_id, direction=direction, low_confidence=threshold)
academic = both[both["category"].isin(["universities", "scientific_communities"])]
low_column = f"{definition}_low_confidence_share"
low = academic.groupby("university")[low_column].sum(min_count=1)
columns = ["university", "country", "rank", "impact_rank", "clustering_id", "n_clusters",
           "clustered_size", "domains", "evidence_domains", "unknown"]  # fmt: skip
shown = factors[columns].copy()
for c in ("rank", "impact_rank", "clustering_id", "n_clusters", "clustered_size"):
    shown[c] = shown[c].map(lambda v: "" if pd.isna(v) else str(int(v)))
for c in SHARES:
    shown[c] = factors[c].map(widgets.percent_text)
shown[f"{HEADLINE}: unreviewed low"] = factors["university"].map(low).map(widgets.percent_text)
if factors["impact_rank"].isna().all():
    shown = shown.drop(columns=["impact_rank"])
st.caption(
    f"Shares {DEFINITIONS[definition].replace(' (default)', '')}. "
    f"{HEADLINE}: unreviewed low: the points of the headline share resting on domains "
    f"without an analyst's override scored below {threshold:g} (`[analyse] low_confidence`)."
    + (
        " Empty cluster columns: the university has no clustering of this run and direction "
        "(`webometrics cluster`)."
        if factors["n_clusters"].isna().any()
        else ""
    )
)
edition_tag = f" edition {edition}" if edition else ""
widgets.table(
    shown,
    f"rank factors {direction} run {run_id} by {definition}{edition_tag}",
    key="ranks-factors",
)

with st.expander("The shares by domain and by cluster side by side"):
    other = "cluster" if definition == "domain" else "domain"
    other_factors = reads.rank_analysis(url, run_id, other, edition)[0]
    other_factors = other_factors[other_factors["direction"] == direction]
    by = {definition: factors, other: other_factors}
    merged = by["domain"][["university", *SHARES]].merge(
        by["cluster"][["university", *SHARES]], on="university", suffixes=(" domain", " cluster")
    )
    side = pd.DataFrame({"university": merged["university"]})
    for c in SHARES:
        side[f"{c} · domain"] = merged[f"{c} domain"].map(widgets.percent_text)
        side[f"{c} · cluster"] = merged[f"{c} cluster"].map(widgets.percent_text)
        side[f"{c} · difference (points)"] = (merged[f"{c} cluster"] - merged[f"{c} domain"]).map(
            widgets.points_text
        )
    widgets.table(side, f"rank shares compared {direction} run {run_id}", key="ranks-compare")

st.subheader("Rank correlations")
n = int(corr["n"].max()) if not corr.empty else 0
tests = int(all_corr["tests"].max()) if not all_corr.empty else 0
if n < MIN_CONCLUSIVE:
    st.warning(
        f"{n} universities with a rank, fewer than {MIN_CONCLUSIVE}: too few to conclude "
        "anything (the paper had 9). One university more or less can change a sign; the "
        f"p-values are exact permutation tests, and the smallest one {n} universities allow "
        "is 2/n!; no interval is shown below 10 (Fisher's z intervals need about 10 pairs, "
        "and a bootstrap of so few universities draws mostly repeated ones)."
    )
test = "exact permutation" if n < MIN_CONCLUSIVE else "Fisher's z"
st.caption(
    f"p: the test of each row ({test}); p Holm and q BH: adjusted over all {tests} tests "
    "of the run (every factor x statistic x direction x rank), by Holm's method (the "
    "chance of any false positive) "
    "and Benjamini-Hochberg's (the expected share of false positives). The 95 % interval "
    "is Fisher's z of the same statistic and standard error as p (Bonett-Wright for ρ, "
    "Fieller for τ): it excludes 0 exactly when p < 0.05. Blank: undefined or below 10 "
    "universities (the note says why)."
)
table = pd.DataFrame(
    {
        "target": corr["target"],
        "factor": corr["factor"],
        "statistic": corr["statistic"],
        "estimate": corr["estimate"].map(lambda v: widgets.number_text(v, "+.3f")),
        "n": corr["n"],
        "95 % low": corr["low"].map(lambda v: widgets.number_text(v, "+.3f")),
        "95 % high": corr["high"].map(lambda v: widgets.number_text(v, "+.3f")),
        "p": corr["p_value"].map(widgets.number_text),
        "p Holm": corr["p_holm"].map(widgets.number_text),
        "q BH": corr["q_bh"].map(widgets.number_text),
        "reading": corr["reading"],
        "note": corr["note"],
    }
)
widgets.table(
    table,
    f"rank correlations {direction} run {run_id} by {definition}{edition_tag}",
    key="ranks-correlations",
)

st.subheader("Does each sign hold?")
sens = reads.rank_sensitivity(url, run_id=run_id, edition=edition)
settings = reads.clustering_settings(url, run_id=run_id)
sens = sens[sens["direction"] == direction]
st.caption(
    "The sign of each correlation under both share definitions (by domain, by cluster) and "
    f"every clustering setting stored for run {run_id} (per university and direction its "
    "newest clustering of that setting): holds = the same sign under every defined "
    "variant; flips = it changes; undefined = fewer than two variants defined."
)
if not sens.empty:
    counts = sens["holds"].value_counts()
    st.markdown(
        f"**{int(counts.get('holds', 0))}** of {len(sens)} signs hold, "
        f"**{int(counts.get('flips', 0))}** flip, {int(counts.get('undefined', 0))} undefined "
        f"({len(settings)} clustering setting{'s' if len(settings) != 1 else ''} stored)."
    )
    widgets.table(
        sens[["target", "factor", "statistic", "holds", "line", "signs"]],
        f"rank sensitivity {direction} run {run_id}",
        key="ranks-sensitivity",
    )
if not settings.empty:
    with st.expander("The clustering settings"):
        widgets.table(settings, f"clustering settings run {run_id}", key="ranks-settings")


def collections_section() -> None:
    """The headline share per university and its correlations with the rank in each
    collection's newest run, side by side (shown with two or more collections)."""
    found = reads.collections(url)
    if len(found) < 2:
        return
    st.subheader("Collections compared · the rank relation in each collection")
    st.caption(
        f"Per collection (live: the web as crawled; `<archive> <from>..<to>`: a web "
        f"archive's captures of that period) its newest run with data, {direction} "
        f"direction, shares by {definition}, "
        f"the ranks of {'the edition ' + edition if edition else 'the universities file'}: "
        "each university's share of universities + scientific communities, and Spearman's "
        "ρ and Kendall's τ of it with the rank (n ranked: universities with a rank and "
        "domains with evidence). Rank 1 is the best: a negative coefficient means a larger "
        "share goes with a better rank."
    )
    shares: list[pd.DataFrame] = []
    relation = []
    ranked: list[int] = []
    for order, (label, newest) in enumerate(
        zip(found["collection"], found["newest_run_id"], strict=True)
    ):
        f_all, c_all = reads.rank_analysis(url, int(newest), definition, edition)
        f = f_all[f_all["direction"] == direction]
        c = c_all[
            (c_all["direction"] == direction)
            & (c_all["factor"] == HEADLINE)
            & (c_all["target"] == "rank")
        ].set_index("statistic")
        shares.append(
            pd.DataFrame(
                {
                    "university": f["university"].to_numpy(),
                    "collection": label,
                    "run": int(newest),
                    "academic share": f[HEADLINE].map(widgets.percent_text).to_numpy(),
                    "_rank": f["rank"].astype("Float64").to_numpy(),
                    "_order": order,  # live first, then by period
                }
            )
        )
        row: dict[str, object] = {"collection": label, "run": int(newest), "universities": len(f)}
        ranked.append(int(c["n"].max()) if not c.empty else 0)
        row["n ranked"] = ranked[-1]
        for stat, symbol in (("spearman", "ρ"), ("kendall", "τ")):
            r = c.loc[stat] if stat in c.index else None
            row[symbol] = widgets.number_text(None if r is None else r["estimate"], "+.3f")
            row[f"{symbol} p"] = widgets.number_text(None if r is None else r["p_value"])
        relation.append(row)
    # one row per university and collection (a column per collection overflowed the page
    # with four collections); a university's rank is the first collection's that has one
    long = pd.concat(shares, ignore_index=True)
    rank = long.dropna(subset="_rank").groupby("university")["_rank"].first()
    long["_rank"] = long["university"].map(rank)
    long = long.sort_values(["_rank", "university", "_order"], na_position="last")
    long.insert(1, "rank", long["_rank"].map(lambda v: "" if pd.isna(v) else str(int(v))))
    if max(ranked) < 2:
        st.info(
            "Fewer than two universities with a rank and categorised domains in any "
            "collection: ρ and τ are undefined. Import a rank edition (`webometrics "
            "universities import-ranks`) and run `webometrics analyse` on the runs."
        )
    widgets.table(
        pd.DataFrame(relation),
        f"rank relation by collection {direction} by {definition}",
        key="ranks-collections",
    )
    widgets.table(
        long.drop(columns=["_rank", "_order"]).reset_index(drop=True),
        f"academic share by collection {direction} by {definition}",
        key="ranks-collections-shares",
    )


collections_section()

st.subheader("Universities and scientific communities against the rank")
plotted = factors.dropna(subset=[HEADLINE, "rank"])
if plotted.empty:
    st.info("No university has both a rank and domains with evidence in this run and direction.")
    st.stop()
head = corr[(corr["factor"] == HEADLINE) & (corr["target"] == "rank")].set_index("statistic")


def _coefficient(statistic: str, symbol: str) -> str:
    if statistic not in head.index or pd.isna(head.at[statistic, "estimate"]):
        return f"{symbol} undefined"
    r = head.loc[statistic]
    interval = "" if pd.isna(r["low"]) else f" [{r['low']:+.2f}, {r['high']:+.2f}]"
    p = f"p = {r['p_value']:.3f} (Holm {r['p_holm']:.3f})"
    return f"{symbol} = {r['estimate']:+.2f}{interval}, {p}"


st.caption(
    f"{_coefficient('spearman', 'ρ')} · {_coefficient('kendall', 'τ')} · n = {len(plotted)}. "
    "Rank 1 at the top: a rise from left to right is what the paper concluded."
)
base = alt.Chart(plotted).encode(
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
