"""Network: the university–domain graph of a run and direction (interactive), the co-link
overlaps between universities, the most shared domains, and a GEXF download."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data, widgets

PALETTE = {
    "universities": "#1f77b4",
    "scientific_communities": "#2ca02c",
    "search_engines": "#ff7f0e",
    "social_networks": "#d62728",
    "media": "#9467bd",
    "news_portals": "#8c564b",
    "other_organisations": "#7f7f7f",
}

url = widgets.database_url()
max_nodes = data.settings().dashboard.network_max_nodes
st.title("Network")
left, right = st.columns([3, 1])
with left:
    run_id = widgets.pick_run(url, key="network-run", with_data=True)
if run_id is None:
    st.stop()
direction = right.radio(
    "Direction",
    ["outgoing", "citing"],
    horizontal=True,
    key="network-direction",
    help="outgoing: university → domain it links to; citing: domain → university it links to",
)
env = data.environment(url, run_id, direction)
if env.empty:
    st.info(f"No {direction} environment in run {run_id}.")
    st.stop()
weight = "links" if direction == "outgoing" else "pages"

n_unis = env.groupby("domain")["university"].nunique()
top_share = int(n_unis.max())
f1, f2 = st.columns([1, 2])
min_unis = f1.slider(
    "Domains linked with at least this many universities",
    1,
    max(top_share, 2),
    1,
    key="network-min-unis",
)
present = set(env["category"].fillna("uncategorised"))
with f2:
    categories = widgets.category_filter(url, "network-category", present)

keep = n_unis[n_unis >= min_unis].index
sub = env[env["domain"].isin(keep)]
sub = sub[sub["category"].fillna("uncategorised").isin(categories)]
totals = (
    sub.groupby("domain")
    .agg(universities=("university", "nunique"), weight=(weight, "sum"))
    .sort_values(["universities", "weight"], ascending=False)
)
shown_domains = list(totals.index[:max_nodes])
shown = sub[sub["domain"].isin(shown_domains)]

m = st.columns(4)
m[0].metric("universities", env["university"].nunique())
m[1].metric("external domains", env["domain"].nunique())
m[2].metric("edges", len(env))
m[3].metric("domains drawn", len(shown_domains))
if len(totals) > max_nodes:
    st.caption(
        f"The {max_nodes} domains shared by most universities are drawn "
        "([dashboard] network_max_nodes); the GEXF download holds the whole graph."
    )


def pyvis_html(frame: pd.DataFrame) -> str:
    """The graph as a self-contained vis-network page (scripts inline, no CDN needed).

    Every text from the database is HTML-escaped before it enters the page's script.
    """
    from pyvis.network import Network

    esc = html.escape

    net = Network(
        height="620px", width="100%", directed=True, cdn_resources="in_line", bgcolor="#ffffff"
    )
    net.barnes_hut(gravity=-6000, spring_length=120)
    for uni, rows in frame.groupby("university"):
        net.add_node(
            f"u:{uni}",
            label=esc(uni),
            title=esc(f"{uni} ({rows['country'].iloc[0]}): {len(rows)} domains"),
            color="#111111",
            shape="box",
            font={"color": "#ffffff"},
        )
    for dom, rows in frame.groupby("domain"):
        cat = rows["category"].iloc[0] or "uncategorised"
        net.add_node(
            f"d:{dom}",
            label=esc(dom),
            title=esc(
                f"{dom} · {cat} · {rows['language'].iloc[0] or '?'} · "
                f"{rows['university'].nunique()} universities"
            ),
            color=PALETTE.get(cat, "#bbbbbb"),
            size=8 + 4 * rows["university"].nunique(),
        )
    for _, r in frame.iterrows():
        a, b = f"u:{r['university']}", f"d:{r['domain']}"
        if direction == "citing":
            a, b = b, a
        net.add_edge(a, b, value=int(r[weight]), title=f"{r[weight]} {weight}")
    return net.generate_html(notebook=False)


st.iframe(pyvis_html(shown), height=640)
st.caption(
    "Boxes: universities; dots: external domains, coloured by category ("
    + ", ".join(f"{k}" for k in PALETTE)
    + "), larger when shared by more universities. Drag to explore, scroll to zoom."
)
NOT_ANALYSED = f"Not built for run {run_id} yet: run `webometrics analyse`."
gexf = data.gexf(url, run_id, direction)
if gexf is None:
    st.info(f"The GEXF graph (for Gephi): {NOT_ANALYSED}")
else:
    st.download_button(
        f"Download the whole {direction} graph of run {run_id} (GEXF, for Gephi)",
        gexf,
        file_name=f"environment-{direction}-run{run_id}.gexf",
        mime="application/gexf+xml",
        key="gexf",
        on_click="ignore",
    )

st.subheader("Co-link overlaps between universities")
st.caption(
    "co-outlinks (outgoing): external domains both universities link to; co-inlinks "
    "(citing): domains that link to both. Jaccard = shared / union."
)
ov = data.overlaps(url, run_id, direction)
if ov.empty:
    st.info(f"Co-link overlaps: {NOT_ANALYSED}")
widgets.table(ov, f"co-link overlaps {direction} run {run_id}", key="overlaps")
if not ov.empty:
    sym = pd.concat([ov, ov.rename(columns={"a": "b", "b": "a"})])
    heat = (
        alt.Chart(sym)
        .mark_rect()
        .encode(
            x=alt.X("a:N", title=None),
            y=alt.Y("b:N", title=None),
            color=alt.Color("jaccard:Q", scale=alt.Scale(scheme="blues")),
            tooltip=["a", "b", "shared", "jaccard"],
        )
    )
    st.altair_chart(heat, width="stretch")

st.subheader("Domains shared by most universities")
shared = data.shared_domains(url, run_id, direction, max(2, min_unis))
widgets.table(shared.head(500), f"shared domains {direction} run {run_id}", key="shared")
