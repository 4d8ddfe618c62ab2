"""University: the clusters of its outgoing or citing environment — theme, category, size —
each expanding to its domains and pages; the dendrogram levels; the category override.

Only the university's own clusterings are listed (newest first, for the chosen direction);
when none is stored but global ones (over every university, ``webometrics cluster
--university all``) are, the page says so and offers those in an expander labelled global.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.exceptions import WebometricsError
from dashboard import widgets, writes
from dashboard.cache import settings
from dashboard.readers import university as reads

PAGES_PER_DOMAIN = 5
DOMAINS_WITH_PAGES = 20  # per cluster: the domains with most pages list their pages
TOP_DOMAINS = 5  # member domains named in the cluster table

url = widgets.database_url()
MAX_EXPANDERS = settings().dashboard.expand_clusters
st.title("University")

unis = reads.universities(url)
if unis.empty:
    st.info("No university stored yet: run `webometrics universities import FILE`.")
    st.stop()
names = dict(zip(unis["id"], unis["name"] + " (" + unis["domains"] + ")", strict=True))
left, right = st.columns([2, 1])
uid = left.selectbox("University", list(names), format_func=names.__getitem__, key="uni")
direction = right.radio(
    "Direction",
    ["outgoing", "citing"],
    horizontal=True,
    key="uni-direction",
    help="outgoing: the sites the university links to; citing: the sites that link to it",
)

own, global_ = reads.university_clusterings(url, int(uid), direction)


def _clustering_label(row: pd.Series) -> str:
    run = f" · run {int(row['run_id'])}" if pd.notna(row["run_id"]) else ""
    scope = "" if pd.notna(row["university_id"]) else " · all universities"
    both = "" if pd.notna(row["direction"]) else " · both directions"
    when = row["created_at"].strftime("%Y-%m-%d %H:%M") if pd.notna(row["created_at"]) else "?"
    return (
        f"clustering {row['id']} · {when} · {row['algorithm']} {row['linkage']} · "
        f"{row['unit']}s{run}{scope}{both} · {row['n_documents']} documents → "
        f"{row['n_clusters']} clusters"
    )


def _labels(found: pd.DataFrame) -> dict[int, str]:
    return {int(r["id"]): _clustering_label(r) for _, r in found.iterrows()}


if not own.empty:
    labels = _labels(own)
    # newest first; the page opens on the newest clustering of the default method
    default_algorithm = settings().cluster.method
    first = next((i for i, a in enumerate(own["algorithm"]) if a == default_algorithm), 0)
    cid = st.selectbox(
        "Clustering",
        list(labels),
        index=first,
        format_func=labels.__getitem__,
        key="clustering",
        help=f"newest first; the page opens on the newest {default_algorithm} clustering "
        "(the default method)",
    )
    chosen = own.set_index("id").loc[cid]
elif global_.empty:
    st.info(f"No clustering of {names[uid]} ({direction}) stored yet: run `webometrics cluster`.")
    st.stop()
else:
    st.info(
        f"No clustering of {names[uid]} ({direction}) stored yet, only global ones (over "
        "every university's environment at once): run `webometrics cluster` for one per "
        "university and direction, or choose a global clustering below."
    )
    labels = _labels(global_)
    with st.expander(f"Global clusterings, all universities ({len(labels)})"):
        picked = st.selectbox(
            "Global clustering",
            list(labels),
            format_func=labels.__getitem__,
            index=None,
            placeholder="choose a global clustering",
            key="global-clustering",
        )
    if picked is None:
        st.stop()
    cid = int(picked)
    chosen = global_.set_index("id").loc[cid]
    st.caption(
        f"Global clustering {cid}: its clusters hold the environments of every university, "
        f"not only of {names[uid]}."
    )

m = st.columns(4)
m[0].metric("documents", int(chosen["n_documents"]))
m[1].metric("clusters", int(chosen["n_clusters"]))
m[2].metric("near duplicates left out", int(chosen["n_excluded_duplicates"]))
m[3].metric(
    "clustering time",
    f"{chosen['seconds']:.2f} s" if pd.notna(chosen["seconds"]) else "–",
    help="how long `webometrics cluster` took to make this clustering (reading the "
    "documents, fitting, storing), in seconds",
)

final = reads.list_clusters(url, cid, level=-1)
final["category"] = final["category"].fillna("uncategorised")
support = reads.clusters(url, clustering_id=cid)
support = support[["cluster_id", "category_support", "category_voters"]]
final = final.merge(support, left_on="id", right_on="cluster_id", how="left")
chosen_categories = widgets.category_filter(url, "uni-category", set(final["category"]))
shown = final[final["category"].isin(chosen_categories)]
category_name = widgets.category_namer(url)

st.subheader("Clusters")
table = pd.DataFrame(
    {
        "label": shown["label"],
        "size": shown["size"],
        "category": shown["category"].map(category_name),
        "support": shown["category_support"],
        "voters": shown["category_voters"].astype("Int64"),
        "theme": shown["theme_terms"].map(", ".join),
        "member domains": shown["top_domains"].map(lambda d: ", ".join(d[:TOP_DOMAINS])),
    }
)
if table["support"].notna().any():
    st.caption(
        "support = the share of the members with evidence (fetched text, a known domain or "
        "pattern) whose own category agrees with the cluster's; voters = how many members "
        "had evidence."
    )
    table = table.assign(support=table["support"].round(2))
else:  # clusterings analysed before the support was stored
    table = table.drop(columns=["support", "voters"])
if table.empty:
    widgets.no_data("clusters")
else:
    widgets.table(table, f"clusters {cid} {direction}", key="clusters")
    chart_rows = shown.head(40).assign(
        cluster=lambda t: (
            t["label"].astype(str) + ": " + t["theme_terms"].map(lambda terms: ", ".join(terms[:4]))
        ),
        **{"category label": lambda t: t["category"].map(category_name)},
        theme=lambda t: t["theme_terms"].map(", ".join),
    )[["cluster", "size", "category", "category label", "theme"]]
    chart = (
        alt.Chart(chart_rows)
        .mark_bar()
        .encode(
            x=alt.X("size:Q", title="documents"),
            y=alt.Y("cluster:N", sort="-x", title=None, axis=alt.Axis(labelLimit=320)),
            color=widgets.category_color(url, set(chart_rows["category"]), orient="bottom"),
            tooltip=["cluster", "size", "category label", "theme"],
        )
        .properties(height=alt.Step(26))
    )
    st.altair_chart(chart, width="stretch")

top = shown.head(MAX_EXPANDERS)
members = reads.cluster_members(url, tuple(int(i) for i in top["id"]))
by_size = members[members["unit"] == "domain"].sort_values(
    ["cluster_id", "n_pages", "domain"], ascending=[True, False, True]
)
domains = tuple(sorted(set(by_size.groupby("cluster_id").head(DOMAINS_WITH_PAGES)["domain"])))
run_of = chosen["run_id"]
pages = reads.member_pages(
    url,
    domains,
    PAGES_PER_DOMAIN,
    direction,
    int(uid),
    int(run_of) if pd.notna(run_of) else None,
)
page_docs = reads.document_pages(
    url, tuple(int(i) for i in members.loc[members["unit"] == "page", "document_id"])
)
if not page_docs.empty:
    pages = pd.concat([pages, page_docs.assign(cites=False)], ignore_index=True)
MEMBER_COLUMNS = {  # column -> (shown name, help)
    "domain": ("domain", "the member's registered domain"),
    "key": ("page", "the page this document is (clusterings of pages); a domain's document "
            "is all its fetched pages"),
    "unit": ("unit", "domain: the document is the domain's pages together; page: one page"),
    "language": ("language", "the document's detected language"),
    "n_pages": ("pages", "fetched pages in the document"),
    "category": ("category", "the domain's category: the analyst's override when set, "
                 "else the assigned one"),
    "assigned_category": ("assigned category", "the category the analyse stage assigned "
                          "(from the domain's text, name and patterns)"),
    "overridden": ("overridden", "yes: an analyst set the category by hand (see "
                   "Category override below)"),
}  # fmt: skip
PAGE_COLUMNS = {
    "domain": ("domain", None),
    "url": ("url", "the page; the link opens it"),
    "title": ("title", None),
    "language": ("language", None),
    "http_status": ("HTTP status", "the status the page was fetched with"),
    "role": ("fetched as", "external: a university links to it; citing: found linking to "
             "a university; a domain's document is made of both"),
    "cites": ("cites the university", "yes: the page links to this university (a verified "
              "citation), the reason the domain is in its citing environment"),
}  # fmt: skip
if len(shown) > MAX_EXPANDERS:
    st.caption(f"The {MAX_EXPANDERS} largest clusters expand to their domains and pages.")
for _, cl in top.iterrows():
    theme = ", ".join(cl["theme_terms"][:6])
    head = (
        f"cluster {cl['label']} · {cl['size']} documents · "
        f"{category_name(cl['category']) or '–'} · {theme}"
    )
    with st.expander(head):
        docs = members[members["cluster_id"] == cl["id"]]
        if int(cl["size"]) > len(docs):
            st.caption(f"The {len(docs)} largest of its {int(cl['size'])} documents.")
        # a domain's document is keyed by its domain: the key column says something only
        # for documents of single pages
        shown_cols = [c for c in MEMBER_COLUMNS if c != "key" or (docs["unit"] == "page").any()]
        widgets.table(
            widgets.readable_categories(docs[shown_cols], url, "category", "assigned_category"),
            f"cluster {cl['label']} domains",
            key=f"cl-{cl['id']}-docs",
            column_config=widgets.named_columns({c: MEMBER_COLUMNS[c] for c in shown_cols}),
        )
        their = pages[pages["domain"].isin(set(docs["domain"]))]
        if docs["domain"].nunique() > DOMAINS_WITH_PAGES:
            st.caption(
                f"Pages of the {DOMAINS_WITH_PAGES} domains with most pages "
                f"(up to {PAGES_PER_DOMAIN} each); links open the page."
            )
        elif direction == "citing":
            st.caption(
                f"Each domain's pages that cite {names[uid].split(' (')[0]} first, then "
                f"the other pages its text is made of (up to {PAGES_PER_DOMAIN} each)."
            )
        page_cols = list(PAGE_COLUMNS) if direction == "citing" else list(PAGE_COLUMNS)[:-1]
        widgets.table(
            their[page_cols],
            f"cluster {cl['label']} pages",
            key=f"cl-{cl['id']}-pages",
            column_config=widgets.named_columns({c: PAGE_COLUMNS[c] for c in page_cols}),
        )

st.subheader("Category override")
st.caption(
    "Set the category of an external domain by hand: it is kept per domain (through "
    "re-crawls and re-clusterings), wins over the assigned category everywhere, and "
    "re-votes the category of the clusters that hold the domain. Every set and clear is "
    "kept in the override history with its note and who made it: when two analysts "
    "override one domain, the last one's category holds and both notes stay."
)
category_names = reads.category_labels(url)
if not category_names:
    st.info("The taxonomy's categories are not stored yet: run `webometrics analyse`.")
in_clusters = sorted(set(members["domain"]))
with st.form("override", clear_on_submit=False):
    o1, o2 = st.columns(2)
    picked = o1.selectbox(
        "Domain of the clusters above", in_clusters, key="override-domain", index=None
    )
    typed = o2.text_input("or any domain", key="override-typed", placeholder="lenta.ru")
    category = st.selectbox(
        "Category",
        list(category_names),
        format_func=category_names.__getitem__,
        key="override-category",
    )
    n1, n2 = st.columns([2, 1])
    note = n1.text_input("Note (why)", key="override-note")
    analyst = n2.text_input("Your name (for the history)", key="override-by")
    b1, b2 = st.columns(2)
    set_it = b1.form_submit_button("Set override", key="override-set", type="primary")
    clear_it = b2.form_submit_button("Clear override", key="override-clear")
if set_it or clear_it:
    target = (typed or "").strip() or picked
    if not target:
        st.error("Choose a domain of the clusters above or type one, e.g. lenta.ru.")
    elif set_it and category is None:
        st.error("Choose a category (none stored yet: run `webometrics analyse`).")
    else:
        try:
            done = writes.write_override(
                url, target, category if set_it else None, note, analyst=analyst
            )
        except WebometricsError as exc:
            st.error(str(exc))
        else:
            # render again so that every table above shows the new category, and the
            # history opens on the domain
            st.session_state["override-done"] = done
            st.session_state["override-last"] = target.lower()
            st.rerun()
if done_before := st.session_state.pop("override-done", None):
    st.success(done_before)
overridden = reads.list_overrides(url)
if not overridden.empty:
    with st.expander(f"Domains with an override ({len(overridden)})"):
        widgets.table(
            widgets.readable_categories(overridden, url, "category", "override_category"),
            "category overrides",
            key="overrides",
        )
history = reads.override_history(url)
if not history.empty:
    with_history = sorted(set(history["domain"]))
    last = st.session_state.pop("override-last", None)
    if last in with_history:
        st.session_state["override-history-domain"] = last
    with st.expander(
        f"Override history ({len(history)} actions on {len(with_history)} domains)",
        expanded=last in with_history,
    ):
        shown = st.selectbox(
            "History of",
            with_history,
            index=None,
            key="override-history-domain",
            placeholder="every domain",
        )
        actions = history if shown is None else history[history["domain"] == shown]
        widgets.table(
            widgets.readable_categories(actions, url).assign(
                at=actions["at"].dt.strftime("%Y-%m-%d %H:%M:%S UTC")
            ),
            f"override history {shown}" if shown else "override history",
            key="override-history",
        )

LEVEL_COLUMNS = {  # a stored level's fields -> (shown name, help)
    "level": ("level", "the level's number, as the picker below names it"),
    "resolution": ("resolution γ", "Leiden's resolution: higher gives more, smaller clusters"),
    "n_clusters": ("clusters", "clusters at this level"),
    "quality": ("modularity", "the partition's modularity at its resolution"),
    "seconds": ("time (s)", "seconds this level's partition took to compute"),
    "role": ("role", "clusters: the level shown above; finer: its sub-themes; coarser: "
             "broader groups"),
    "r": ("rows per band r", "the paper's LSH: rows per band of this level"),
    "s_curve": ("s-curve", "(1/b)^(1/r): the similarity near which pairs start to merge"),
}  # fmt: skip
st.subheader("Dendrogram levels")
levels = widgets.clustering_levels(chosen["levels"])
kind = widgets.levels_kind(levels)
st.caption(widgets.LEVELS_CAPTIONS[kind])
if levels.empty:
    st.info("This clustering stored no levels.")
else:
    widgets.table(
        levels,
        f"clustering {cid} levels",
        key="levels",
        column_config=widgets.named_columns(
            {c: LEVEL_COLUMNS[c] for c in levels.columns if c in LEVEL_COLUMNS}
        ),
    )
    if kind in widgets.LEVELS_AXES:
        column, title, order = widgets.LEVELS_AXES[kind]
        line = (
            alt.Chart(levels)
            .mark_line(point=True)
            .encode(
                x=alt.X(f"{column}:Q", sort=order, title=title),
                y=alt.Y("n_clusters:Q", title="clusters"),
                tooltip=list(levels.columns),
            )
        )
        st.altair_chart(line, width="stretch")
stored = reads.cluster_levels(url, cid)
by_level = levels.set_index("level") if not levels.empty else pd.DataFrame()
level_names = {
    lvl: widgets.level_name(lvl, n, by_level.loc[lvl] if lvl in by_level.index else None, kind)
    for lvl, n in stored
}
if stored:
    level = st.selectbox(
        "Cluster rows of level",
        list(level_names),
        format_func=level_names.__getitem__,
        # one picker per clustering: its options (and their labels) are that clustering's
        # levels, so a choice made on another clustering never shows its label here
        key=f"level-{cid}",
        help="final: the clusters above; a level: the clusters of that step of the dendrogram",
    )
    at_level = reads.list_clusters(url, cid, level=int(level))
    # a level's clusters are named as the final ones: theme terms against the level's other
    # clusters, the category their members and theme vote
    if int(level) >= 0 and not at_level.empty and at_level["category"].isna().all():
        st.caption(
            "This level's clusters have no theme or category yet: the clustering was analysed "
            "before levels were named, or `[analyse] levels` left this one out; "
            f"`webometrics analyse --clustering {cid}` names them (docs/configuration.md)."
        )
    widgets.table(
        pd.DataFrame(
            {
                "label": at_level["label"],
                "size": at_level["size"],
                "category": at_level["category"].map(category_name),
                "theme": at_level["theme_terms"].map(", ".join),
                "member domains": at_level["top_domains"].map(lambda d: ", ".join(d[:TOP_DOMAINS])),
            }
        ),
        f"clustering {cid} level {level}",
        key="level-rows",
    )
