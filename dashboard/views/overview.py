"""Overview: the paper's Table 2 and Table 3 counts per university for a chosen run, the
academic share (universities plus scientific communities) by domain and by cluster (the
paper's way) with the part resting on unreviewed low-confidence domains, the impact
figures by citing source (crawl, backlink export, Common Crawl web graph), the Web
Impact Factors and what changed since the run before."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import widgets
from dashboard.readers import overview as reads


def impact_section(url: str) -> None:
    """Citing domains by source with their overlap, and the rank-weighted in-link counts,
    behind a toggle: on from the start when Common Crawl data are stored (the figures that
    need them), off otherwise (figures computed on demand)."""
    shown = st.toggle(
        "Impact figures by citing source (crawl, backlink export, Common Crawl)",
        value=reads.has_web_graph(url),
        key="overview-impact",
        help="every stored run: citing domains per source, their overlap, and the in-links "
        "weighted by the citing sites' harmonic centrality and PageRank (shown from the "
        "start when a Common Crawl web graph is stored)",
    )
    if not shown:
        return
    sources, ranks = reads.source_overlap(url), reads.rank_weighted(url)
    if sources.empty:
        st.info(
            "No citing source stored yet: run a citing crawl (`webometrics crawl --direction "
            "citing`) or `webometrics citing commoncrawl-graph`."
        )
        return
    st.subheader("Impact · Citing domains by source")
    st.caption(
        "Every stored run. crawl = verified citations found by a crawl or a URL list; "
        "backlinks = verified citations of a Majestic/Ahrefs export; commoncrawl = domains "
        "linking to the university in a Common Crawl web graph. only here = citing domains "
        "no other source finds; missed = citing domains only the other sources find."
    )
    widgets.table(
        sources.drop(columns=["university_id"]).rename(
            columns={"only_here": "only here", "domains_all": "all sources"}
        ),
        "impact by source",
        key="impact-sources",
    )
    if not ranks.empty:
        st.caption(
            "Rank-weighted in-link counts: the sums of the citing nodes' harmonic centrality "
            "and PageRank from the release's ranks file."
        )
        widgets.table(
            ranks.drop(columns=["university_id"]).rename(
                columns={"harmonic_sum": "Σ harmonic centrality", "pagerank_sum": "Σ PageRank"}
            ),
            "impact rank weighted",
            key="impact-ranks",
        )


ACADEMIC = ("universities", "scientific_communities")


def shares_section(url: str, run_id: int) -> None:
    """The headline share (universities plus scientific communities) per university and
    direction under both definitions, their difference and the low-confidence parts; every
    category in an expander."""
    threshold = reads.low_confidence()
    both = reads.share_comparison(url, run_id=run_id, low_confidence=threshold)
    st.subheader("Category shares · by domain and by cluster")
    if both.empty:
        st.info("No categorised domain in this run: run `webometrics analyse`.")
        return
    st.caption(
        "Universities plus scientific communities (the paper's headline), share of the "
        "domains with evidence: by domain (each domain in its own category, the default) "
        "and by cluster (each cluster's members in the cluster's voted category, as the "
        "paper counted; a cluster without a majority is mixed). Unreviewed low: the points "
        f"of the share resting on domains without an analyst's override scored below "
        f"{threshold:g} (`[analyse] low_confidence`). Empty: no clustering of the run. "
        "Every category: Countries page."
    )
    academic = both[both["category"].isin(ACADEMIC)]
    head = academic.groupby(["direction", "university"], sort=False).agg(
        domain=("domain_share", lambda s: s.sum(min_count=1)),
        cluster=("cluster_share", lambda s: s.sum(min_count=1)),
        domain_low=("domain_low_confidence_share", lambda s: s.sum(min_count=1)),
        cluster_low=("cluster_low_confidence_share", lambda s: s.sum(min_count=1)),
    )
    head = head.reset_index().sort_values(["direction", "university"], ascending=[False, True])
    table = pd.DataFrame(
        {
            "direction": head["direction"],
            "university": head["university"],
            "by domain": head["domain"].map(widgets.percent_text),
            "by domain: unreviewed low": head["domain_low"].map(widgets.percent_text),
            "by cluster": head["cluster"].map(widgets.percent_text),
            "by cluster: unreviewed low": head["cluster_low"].map(widgets.percent_text),
            "difference (points)": (head["cluster"] - head["domain"]).map(widgets.points_text),
        }
    )
    widgets.table(table, f"academic share by definition run {run_id}", key="overview-shares")


def collections_section(url: str) -> None:
    """Table 2 of each collection's newest run side by side (shown with two or more
    collections: the live web and archived periods, docs/archives.md)."""
    found = reads.collections(url)
    if len(found) < 2:
        return
    st.subheader("Collections compared · Table 2 of each collection's newest run")
    labels = list(found["collection"])
    chosen = st.multiselect(
        "Collections",
        labels,
        default=labels,
        key="overview-collections",
        help="live: the web as crawled; <archive> <from>..<to>: a web archive's captures of "
        "that period (`webometrics crawl --archive`)",
    )
    rows = reads.compare_collections(url, list(chosen))
    if rows.empty:
        st.info("Choose at least one collection.")
        return
    order = {c: i for i, c in enumerate(found["collection"])}  # live first, then by period
    rows = rows.assign(_order=rows["collection"].map(order)).sort_values(["university", "_order"])
    long = pd.DataFrame(
        {
            "university": rows["university"],
            "collection": rows["collection"],
            "run": rows["run_id"],
            "site pages": rows["site_pages"],
            "external links": rows["external_links"],
            "external domains": rows["external_domains"],
            "citing pages": rows["citing_pages"],
            "citing domains": rows["citing_domains"],
        }
    )
    st.table(long.set_index(["university", "collection"]))
    runs = ", ".join(
        f"{c}: run {r}" for c, r in zip(found["collection"], found["newest_run_id"], strict=True)
    )
    st.caption(f"Runs compared: {runs}.")
    widgets.download(long, "table 2 by collection", key="collections")


url = widgets.database_url()
st.title("Overview")
run_id = widgets.pick_collection_run(url, key="overview-run")
if run_id is None:
    impact_section(url)
    st.stop()

st.subheader("Table 2 · External resources around each university")
t2 = reads.table2(url, run_id=run_id)
table2 = pd.DataFrame(
    {
        "university": t2["university"],
        "domains": t2["domains"].map(", ".join),
        "country": t2["country"],
        "Webometrics rank": t2["rank"].astype("Int64"),
        "site pages": t2["site_pages"],
        "external links on site": t2["external_links"],
        "external domains on site": t2["external_domains"],
        "citing pages": t2["citing_pages"],
        "citing domains": t2["citing_domains"],
    }
)
st.table(table2.set_index("university"))
widgets.download(table2, f"table 2 run {run_id}", key="table2")
collections_section(url)

st.subheader("Table 3 · External domains for clustering, by language")
present = reads.document_languages(url)
languages = st.multiselect(
    "Languages",
    sorted(set(present) | {"ru", "en"}),
    default=["ru", "en"],
    key="overview-languages",
    help="the paper kept Russian and English pages; other languages count under 'other'",
)
t3 = reads.table3(url, run_id=run_id, languages=tuple(languages))
if t3.empty:
    st.info("No university stored.")
else:
    wide = t3.pivot_table(
        index=["university", "rank"],
        columns=["direction", "language"],
        values="domains",
        aggfunc="sum",
        sort=False,
    )
    wide.columns = [f"{d} · {lang}" for d, lang in wide.columns]
    wide = wide.reset_index().sort_values("rank", na_position="last").drop(columns="rank")
    st.table(wide.set_index("university"))
    widgets.download(wide, f"table 3 run {run_id}", key="table3")

shares_section(url, run_id)
impact_section(url)

more = st.toggle(
    "Web Impact Factors and change since the run before",
    key="overview-more",
    help="computed on demand: on a large database each adds a pass over the links",
)
if not more:
    st.stop()

st.subheader("Web Impact Factors")
st.caption(
    "wif_pages = citing pages / site pages (Ingwersen 1998); wif_domains = citing domains / "
    "site pages; outlink_density = external links / site pages; in_out_ratio = citing "
    "domains / external domains; visibility_share = the university's share of all citing "
    "domains."
)
wif = reads.web_impact_factors(url, run_id=run_id)
widgets.table(
    wif[
        [
            "university",
            "rank",
            "wif_pages",
            "wif_domains",
            "outlink_density",
            "in_out_ratio",
            "visibility_share",
        ]
    ],
    f"web impact factors run {run_id}",
    key="wif",
)

st.subheader("Change since the run before")
summary = reads.change_summary(url, after=run_id)
if summary.empty:
    st.info(f"No earlier run with data than run {run_id} to compare with.")
else:
    widgets.table(
        summary.drop(columns=["university_id"]), f"change summary run {run_id}", key="change"
    )
    with st.expander("Domains that appeared or disappeared"):
        changes = reads.environment_changes(url, after=run_id)
        widgets.table(
            changes.drop(columns=["university_id"]),
            f"environment changes run {run_id}",
            key="changes",
        )
