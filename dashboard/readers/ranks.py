"""What the Rank vs groups page reads: the stored rank editions, every university's
factors with their rank correlations, the correlations' sensitivity to the share
definition and the clustering settings, and the shares of both definitions
(:mod:`.common`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.cache import TTL_SECONDS, cached, frame_of, read_engine
from dashboard.readers.common import collections, low_confidence, share_comparison
from store import analytics, rank_editions

__all__ = [
    "clustering_settings",
    "collections",
    "list_editions",
    "low_confidence",
    "rank_analysis",
    "rank_sensitivity",
    "share_comparison",
]

list_editions = cached(rank_editions.list_editions)
rank_sensitivity = cached(analytics.rank_sensitivity)
clustering_settings = cached(analytics.clustering_settings)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def rank_analysis(
    url: str, run_id: int, definition: str = "domain", edition: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The factors of every university of a run (both directions) under the share
    ``definition`` with the ranks of ``edition`` (the newest when ``None``), and their
    rank correlations, the p-values adjusted over every factor x statistic x direction x
    target of the run (Holm, Benjamini-Hochberg)."""
    rows = analytics.rank_factors(
        read_engine(url), run_id=run_id, definition=definition, edition=edition
    )
    corr = analytics.correlations_of(rows, definition=definition)
    return frame_of(analytics.RankFactorRow, rows), frame_of(analytics.RankCorrelationRow, corr)
