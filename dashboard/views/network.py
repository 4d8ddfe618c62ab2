"""Network: the university–domain graph of a run and direction (interactive), the co-link
overlaps between universities, the most shared domains, and a GEXF download."""

from __future__ import annotations

import html
import math

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import widgets
from dashboard.cache import settings
from dashboard.readers import network as reads
from store import networks

DRAWN = 60  # domains drawn by default: readable labels; the slider goes up to the setting

url = widgets.database_url()
max_nodes = settings().dashboard.network_max_nodes
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
whole = reads.network_summary(url, run_id, direction)
if whole is None:
    st.info(f"No {direction} environment in run {run_id}.")
    st.stop()
weight = "links" if direction == "outgoing" else "pages"

f1, f2, f3 = st.columns([2, 1, 1])
with f1:
    categories = widgets.category_filter(url, "network-category", whole.categories)
sources = widgets.source_filter("network-source", container=f2)
# None: every category (and domains of a category not yet listed); else those chosen
chosen = None if set(categories) >= set(whole.categories) else tuple(sorted(categories))
narrowed = sources is not None or chosen is not None
summary = reads.network_summary(url, run_id, direction, chosen, sources) if narrowed else whole
if summary is None or not categories:
    widgets.no_data(f"{direction} domains in run {run_id}")
    st.stop()
top_share = summary.max_universities
min_unis = f3.slider(
    "Draw domains linked with at least this many universities",
    1,
    max(top_share, 2),
    2 if top_share >= 2 else 1,
    key="network-min-unis",
    help="the domains two or more universities share make the structure; 1 draws every one",
)
passing, n_passing = reads.network_domains(
    url, run_id, direction, min_unis, chosen, sources, limit=max_nodes
)
most = len(passing)
drawn = most
if most > 10:  # a choice only when there is one to make
    drawn = st.slider(
        "Domains drawn at most (those shared by most universities first)",
        10,
        most,
        min(DRAWN, most),
        key="network-drawn",
    )
shown_domains = tuple(passing["domain"].head(drawn))
shown = reads.network_edges(url, run_id, direction, shown_domains, sources)

m = st.columns(4)
m[0].metric("universities", summary.universities)
m[1].metric("external domains", summary.domains)
m[2].metric("edges", summary.pairs, help="university–domain pairs (two sources count once)")
m[3].metric("domains drawn", len(shown_domains))
if n_passing > drawn:
    st.caption(
        f"{n_passing} domains pass the filters; the {drawn} shared by most universities are "
        "drawn. The GEXF download holds the whole graph."
    )
colors = widgets.category_colors(url)
name = widgets.category_namer(url)
unis = reads.universities(url)
# a university's own domain (or subdomain) is drawn as the university, never as an
# external domain beside it (analyse.networks.owner, as in the GEXF)
owners = networks.domain_owners(
    {
        n: [d.strip() for d in ds.split(",") if d.strip()]
        for n, ds in zip(unis["name"], unis["domains"], strict=True)
    }
)


def pyvis_html(frame: pd.DataFrame) -> str:
    """The graph as a self-contained vis-network page (scripts inline, no CDN needed).

    Every text from the database is HTML-escaped before it enters the page's script.
    """
    from pyvis.network import Network

    esc = html.escape

    import networkx as nx

    net = Network(
        height="620px", width="100%", directed=True, cdn_resources="in_line", bgcolor="#ffffff"
    )
    # a domain of a university is that university's node; its link to its own is no edge
    owner = frame["domain"].map(lambda d: networks.owner(d, owners))
    frame = frame[owner.isna() | (owner != frame["university"])].assign(
        node=lambda t: [
            f"u:{o}" if isinstance(o, str) else f"d:{d}"
            for o, d in zip(owner[t.index], t["domain"], strict=True)
        ]
    )
    # a fixed layout computed here (seeded): the page shows the graph at once and the same
    # way every time, instead of a physics simulation that a browser may never finish
    g = nx.Graph()
    g.add_nodes_from(f"u:{u}" for u in frame["university"])
    g.add_nodes_from(frame["node"])
    g.add_edges_from((f"u:{u}", n) for u, n in zip(frame["university"], frame["node"], strict=True))
    unis = sorted(n for n in g if n.startswith("u:"))
    ring = {  # the universities held apart on an inner ring; the domains settle around them
        u: (
            0.35 * math.cos(2 * math.pi * i / len(unis)),
            0.35 * math.sin(2 * math.pi * i / len(unis)),
        )
        for i, u in enumerate(unis)
    }
    pos = nx.spring_layout(
        g,
        pos=ring if len(unis) > 1 else None,
        fixed=unis if len(unis) > 1 else None,
        seed=0,
        k=1.6 / max(len(g), 1) ** 0.5,
        iterations=200,
    )
    span = max((max(abs(x), abs(y)) for x, y in pos.values()), default=1.0) or 1.0
    xy = {n: (float(x) / span * 560, float(y) / span * 280) for n, (x, y) in pos.items()}
    net.toggle_physics(False)
    country = dict(zip(frame["university"], frame["country"], strict=True))
    for node in unis:
        uni = node.removeprefix("u:")
        rows = frame[frame["university"] == uni]
        x, y = xy[node]
        net.add_node(
            node,
            x=x,
            y=y,
            label=esc(uni),
            title=esc(f"{uni} ({country.get(uni, '?')}): {len(rows)} domains"),
            color="#111111",
            shape="box",
            font={"color": "#ffffff"},
        )
    external = frame[frame["node"].astype(str).str.startswith("d:")]
    for dom, rows in external.groupby("domain"):
        cat = rows["category"].iloc[0] or "uncategorised"
        x, y = xy[f"d:{dom}"]
        net.add_node(
            f"d:{dom}",
            x=x,
            y=y,
            label=esc(dom),
            title=esc(
                f"{dom} · {name(cat)} · {rows['language'].iloc[0] or '?'} · "
                f"{rows['university'].nunique()} universities"
            ),
            color=colors.get(cat, "#bbbbbb"),
            size=6 + 3 * rows["university"].nunique(),
            font={"size": 13},
        )
    summed = frame.groupby(["university", "node"], as_index=False)[weight].sum()
    for _, r in summed.iterrows():
        a, b = f"u:{r['university']}", r["node"]
        if direction == "citing":
            a, b = b, a
        net.add_edge(a, b, value=int(r[weight]), title=f"{r[weight]} {weight}", color="#c8c8c8")
    return net.generate_html(notebook=False)


st.iframe(pyvis_html(shown), height=640)
drawn_categories = set(shown["category"])
present = [c for c in widgets.category_options(url, drawn_categories) if c in drawn_categories]
st.markdown(
    " ".join(
        f'<span style="white-space:nowrap;margin-right:1em">'
        f'<span style="color:{colors.get(c, "#bbbbbb")};font-size:1.3em">●</span> '
        f"{html.escape(name(c))}</span>"
        for c in present
    ),
    unsafe_allow_html=True,
)
st.caption(
    "Boxes: universities; dots: external domains in their category's colour (legend above), "
    "larger when shared by more universities; grey lines: links. Drag to explore, scroll to "
    "zoom."
)
NOT_ANALYSED = f"Not built for run {run_id} yet: run `webometrics analyse`."
gexf = reads.network_file(url, run_id, direction, "gexf")
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
if narrowed:
    st.caption("Over the domains of the chosen categories and sources.")
    ov = reads.colink_overlaps(
        url, run_id=run_id, direction=direction, categories=chosen, sources=sources
    )
else:
    ov = reads.analysed_overlaps(url, run_id, direction)
    if ov.empty:
        st.info(f"Co-link overlaps: {NOT_ANALYSED}")
widgets.table(
    ov,
    f"co-link overlaps {direction} run {run_id}",
    key="overlaps",
    column_config=widgets.named_columns(
        {
            "a": ("university A", None),
            "b": ("university B", None),
            "shared": ("shared domains", "domains both universities have"),
            "jaccard": ("Jaccard", "shared / union of the two universities' domains"),
            "only_a": ("only A", "domains of university A alone"),
            "only_b": ("only B", "domains of university B alone"),
        }
    ),
)
if not ov.empty:
    sym = pd.concat([ov, ov.rename(columns={"a": "b", "b": "a"})])
    heat = (
        alt.Chart(sym)
        .mark_rect()
        .encode(
            x=alt.X("a:N", title=None, axis=alt.Axis(labelLimit=220, labelAngle=-30)),
            y=alt.Y("b:N", title=None, axis=alt.Axis(labelLimit=220)),
            # from 0 (no shared domain), so a pale cell means little overlap
            color=alt.Color(
                "jaccard:Q",
                scale=alt.Scale(scheme="blues", domain=[0, max(float(sym["jaccard"].max()), 1e-9)]),
                title="Jaccard",
            ),
            tooltip=["a", "b", "shared", "jaccard"],
        )
    )
    st.altair_chart(heat, width="stretch")

st.subheader("Domains shared by most universities")
SHARED_ROWS = 500
shared, n_shared = reads.network_domains(
    url, run_id, direction, max(2, min_unis), chosen, sources, limit=SHARED_ROWS
)
if shared.empty:
    widgets.no_data("domains shared by two or more universities")
else:
    names = (
        reads.network_edges(url, run_id, direction, tuple(shared["domain"]), sources)
        .groupby("domain")["university"]
        .agg(lambda u: ", ".join(sorted(set(u))))
    )
    table = pd.DataFrame(
        {
            "domain": shared["domain"],
            "n_universities": shared["universities"],
            "universities": shared["domain"].map(names),
            "category": shared["category"].fillna("uncategorised"),
            weight: shared["weight"],
        }
    )
    if n_shared > len(shared):
        st.caption(f"The {len(shared)} shared by most universities of {n_shared}.")
    widgets.table(
        widgets.readable_categories(table, url),
        f"shared domains {direction} run {run_id}",
        key="shared",
    )
