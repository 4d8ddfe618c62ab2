"""The readers several pages share: universities, runs, collections, languages, the
category labels and colours of the taxonomy, and the two share definitions side by side.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.cache import TTL_SECONDS, cached, cached_value, frame_of, read_engine, settings
from store import analytics, networks, queries
from store.analytics import shares

list_crawl_runs = cached(queries.list_crawl_runs)
list_dedup_runs = cached(queries.list_dedup_runs)
list_clusterings = cached(queries.list_clusterings)
run_ids = cached_value(analytics.run_ids)
collections = cached(analytics.collections)
document_languages = cached_value(queries.document_languages)
category_labels = cached_value(networks.category_labels)
category_colors = cached_value(networks.category_colors)
share_comparison = cached(shares.share_comparison)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def universities(url: str) -> pd.DataFrame:
    """id, name, country, rank, domains (comma-separated), by rank."""
    df = frame_of(queries.UniversityRow, queries.list_universities(read_engine(url)))
    df["domains"] = df["domains"].map(", ".join)
    return df.drop(columns=["home_urls"])


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def testbed_runs(url: str) -> list[int]:
    """The crawl runs that crawled the local test web (``--testbed``: the demo's data)."""
    runs = list_crawl_runs(url)
    return [
        int(run_id)
        for run_id, stored in zip(runs["id"], runs["settings"], strict=True)
        if isinstance(stored, dict) and stored.get("testbed")
    ]


def low_confidence() -> float:
    """``[analyse] low_confidence``: an unreviewed domain scored below it is low-confidence."""
    return settings().analyse.low_confidence
