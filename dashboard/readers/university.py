"""What the University page reads: its clusterings and their levels, the clusters of a
level with their category support, the members of the clusters shown and the pages that
explain each membership, the overrides and their history, with the universities and the
category labels (:mod:`.common`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.cache import TTL_SECONDS, cached, cached_value, frame_of, read_engine
from dashboard.readers.common import category_labels, list_clusterings, universities
from store import analytics, overrides, queries

__all__ = [
    "category_labels",
    "cluster_levels",
    "cluster_members",
    "clusters",
    "document_pages",
    "list_clusters",
    "list_overrides",
    "member_pages",
    "override_history",
    "universities",
    "university_clusterings",
]

list_clusters = cached(queries.list_clusters)
clusters = cached(analytics.clusters)  # v_cluster: each final cluster's category support
cluster_levels = cached_value(queries.cluster_levels)
document_pages = cached(queries.document_pages)
list_overrides = cached(overrides.list_overrides)
override_history = cached(overrides.override_history)

MEMBERS_PER_CLUSTER = 200  # the largest members of each cluster listed on the page


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def university_clusterings(
    url: str, university_id: int, direction: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The clusterings of one university's environment in ``direction``, and the global
    ones (over every university), each newest first.

    Parameters
    ----------
    url : str
        The database URL.
    university_id : int
        ``university.id``.
    direction : {"outgoing", "citing"}
        The environment's direction; clusterings of both directions count for either.

    Returns
    -------
    own, global_ : pandas.DataFrame
        Rows of :class:`store.queries.ClusteringRow`: those whose scope is this
        university, and those whose scope is no one university. A clustering of another
        university is in neither.
    """
    found = list_clusterings(url, university_id=university_id, direction=direction)
    found = found.sort_values(["created_at", "id"], ascending=False, ignore_index=True)
    scope = found["university_id"]
    return found[scope == university_id], found[scope.isna()]


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def cluster_members(url: str, cluster_ids: tuple[int, ...]) -> pd.DataFrame:
    """The documents of the given final clusters (the :data:`MEMBERS_PER_CLUSTER` largest
    of each) with their domain's category (override applied), whether it is overridden,
    and the assigned category."""
    engine = read_engine(url)
    members = frame_of(
        analytics.ClusterMemberRow,
        analytics.cluster_members(engine, list(cluster_ids), per_cluster=MEMBERS_PER_CLUSTER),
    )
    domains = sorted(set(members["domain"]))
    cats = frame_of(
        analytics.DomainCategoryRow, analytics.domain_categories(engine, domains=domains)
    )
    merged = members.merge(
        cats[["domain", "assigned_category", "overridden"]], on="domain", how="left"
    )
    merged["overridden"] = merged["overridden"].fillna(False).astype(bool)
    return merged


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def reached_pages(
    url: str,
    domains: tuple[str, ...],
    per_domain: int = 20,
    roles: tuple[str, ...] = ("external", "citing"),
) -> pd.DataFrame:
    """Like :func:`store.queries.domain_pages`, the pages a visitor reaches: the hops of a
    redirect (HTTP 3xx, no text) are left out when the domain has other pages (the page
    stores no redirect target, so the page reached is the domain's own stored page)."""
    rows = queries.domain_pages(read_engine(url), domains, per_domain=per_domain * 4, roles=roles)
    pages = frame_of(queries.DomainPageRow, rows)
    hop = pages["http_status"].between(300, 399)
    has_other = pages.assign(other=~hop).groupby("domain")["other"].transform("any")
    kept = pages[~hop | ~has_other]
    return kept.groupby("domain", sort=False).head(per_domain).reset_index(drop=True)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def member_pages(
    url: str,
    domains: tuple[str, ...],
    per_domain: int,
    direction: str,
    university_id: int,
    run_id: int | None = None,
) -> pd.DataFrame:
    """The pages that explain each domain's membership of a cluster of ``direction``, with
    ``cites``: whether the page links to the university.

    Outgoing: the domain's pages of role ``external`` (those the universities link to).
    Citing: first its pages that cite the university (verified citations of ``run_id``,
    whatever role the page was fetched in: a backlink export's citing page is often an
    ``external`` page too), then the pages its document is built from (the extract stage
    builds a domain's document from its fetched pages of every role but ``university``).
    """
    if direction == "outgoing":
        return reached_pages(url, domains, per_domain, ("external",)).assign(cites=False)
    rows = queries.citing_pages(
        read_engine(url), university_id, domains, run_id=run_id, per_domain=per_domain
    )
    citing = frame_of(queries.DomainPageRow, rows)
    built = reached_pages(url, domains, per_domain, ("external", "citing"))
    both = pd.concat(
        [citing.assign(cites=True), built.assign(cites=built["url"].isin(set(citing["url"])))],
        ignore_index=True,
    )
    both = both.drop_duplicates("url").sort_values(
        ["domain", "cites"], ascending=[True, False], kind="stable"
    )
    return both.groupby("domain", sort=False).head(per_domain).reset_index(drop=True)
