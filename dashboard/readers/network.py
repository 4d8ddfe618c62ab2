"""What the Network page reads: the summary of a run's environment, the domains shared
by most universities, their edges, the co-link overlaps and the GEXF file, with the
universities (:mod:`.common`).

Every count is SQL in :mod:`store.analytics`, which reads the aggregates the analyse
stage keeps (``store/aggregates.py``); while they are stale the page shows them as they
are, under the stale banner, until they are refreshed (the sidebar's *Refresh*).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.cache import TTL_SECONDS, cached, cached_value, frame_of, read_engine
from dashboard.readers.common import universities
from store import analytics, networks

__all__ = [
    "analysed_overlaps",
    "colink_overlaps",
    "network_domains",
    "network_edges",
    "network_file",
    "network_summary",
    "universities",
]

Filter = tuple[str, ...] | None  # categories or sources chosen; None: all of them

environment_summary = cached_value(analytics.environment_summary)
colink_overlaps = cached(analytics.colink_overlaps)  # over the chosen categories, sources
analysed_overlaps = cached(networks.colink_overlaps)  # the whole environment, as analysed
network_file = cached_value(networks.network_file)


def network_summary(
    url: str, run_id: int, direction: str, categories: Filter = None, sources: Filter = None
) -> analytics.EnvironmentSummaryRow | None:
    """Universities, domains, edges, the most universities one domain is linked with and
    the categories present in a run and direction, over the chosen categories and
    sources (:func:`environment_summary`); ``None`` when nothing is left."""
    rows = environment_summary(
        url, run_id=run_id, direction=direction, categories=categories, sources=sources
    )
    return rows[0] if rows else None


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def network_domains(
    url: str,
    run_id: int,
    direction: str,
    min_universities: int,
    categories: Filter = None,
    sources: Filter = None,
    limit: int | None = None,
) -> tuple[pd.DataFrame, int]:
    """The domains linked with at least ``min_universities`` universities, those shared
    by most first (at most ``limit``), and how many there are in all."""
    engine = read_engine(url)
    rows = analytics.network_domains(
        engine, run_id=run_id, direction=direction, min_universities=min_universities,
        categories=categories, sources=sources, limit=limit,
    )  # fmt: skip
    total = len(rows)
    if limit is not None and total >= limit:
        total = analytics.network_domain_count(
            engine, run_id=run_id, direction=direction, min_universities=min_universities,
            categories=categories, sources=sources,
        )  # fmt: skip
    found = frame_of(analytics.NetworkDomainRow, rows)
    return found.assign(category=found["category"].fillna(analytics.UNCATEGORISED)), total


NETWORK_KEYS = ["university", "country", "domain", "category", "language"]


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def network_edges(
    url: str, run_id: int, direction: str, domains: tuple[str, ...], sources: Filter = None
) -> pd.DataFrame:
    """One row per university and domain of ``domains`` (links and pages summed over the
    chosen sources: a domain two sources found is one edge)."""
    rows = analytics.environment(
        read_engine(url), run_id=run_id, direction=direction, domains=domains
    )
    env = frame_of(analytics.EnvironmentRow, rows)
    env = env.assign(category=env["category"].fillna(analytics.UNCATEGORISED))
    if sources is not None:
        env = env[env["source"].isin(sources)]
    env = env[env["domain"].isin(domains)]
    return (
        env.groupby(NETWORK_KEYS, dropna=False)
        .agg(links=("links", "sum"), pages=("pages", "sum"))
        .reset_index()
    )
