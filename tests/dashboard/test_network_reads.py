"""The Network page's reads (dashboard.data.network_*) give the same figures whether the
run's aggregates are fresh (SQL counts on them) or stale (one read of the run's
environment, counted in pandas), under every kind of filter, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
import streamlit as st

from dashboard import data
from store import aggregates, make_engine
from store import analytics as A
from tests.stored_world import Facts

FILTERS = (
    (None, None),
    (None, ("crawl",)),
    (None, ("backlinks", "commoncrawl")),
    (("universities", "uncategorised"), None),
    (("universities",), ("crawl",)),
)


def _reads(url: str) -> dict[str, Any]:
    st.cache_data.clear()
    out: dict[str, Any] = {}
    engine = make_engine(url)
    runs = A.run_ids(engine)
    engine.dispose()
    for run in runs:
        for d in ("outgoing", "citing"):
            for cats, sources in FILTERS:
                key = f"{run} {d} {cats} {sources}"
                out[f"summary {key}"] = data.network_summary(url, run, d, cats, sources)
                for min_unis, limit in ((1, None), (2, 3)):
                    frame, total = data.network_domains(url, run, d, min_unis, cats, sources, limit)
                    out[f"domains {key} {min_unis} {limit}"] = (
                        frame.astype({"universities": int, "weight": int}).to_dict("records"),
                        total,
                    )
                out[f"overlaps {key}"] = data.network_overlaps(url, run, d, cats, sources).to_dict(
                    "records"
                )
                domains = tuple(sorted({"vk.com", "mit.edu", "wikipedia.org", "arxiv.org"}))
                edges = data.network_edges(url, run, d, domains, sources)
                out[f"edges {key}"] = edges.sort_values(["university", "domain"]).to_dict("records")
    return out


@pytest.mark.slow
def test_network_reads_agree_fresh_and_stale(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        assert aggregates.fresh_run_ids(engine) is None
        stale = _reads(filled.url)
        aggregates.refresh(engine)
        assert aggregates.fresh_run_ids(engine)
        fresh = _reads(filled.url)
    finally:
        engine.dispose()
        st.cache_data.clear()
    assert any(v for k, v in stale.items() if k.startswith("summary"))
    assert set(stale) == set(fresh)
    for key, value in stale.items():
        other = fresh[key]
        if isinstance(value, list):  # records: numbers may come back int64 or Decimal
            value, other = pd.DataFrame(value), pd.DataFrame(other)
            pd.testing.assert_frame_equal(value, other, check_dtype=False, obj=key)
        else:
            assert value == other, key
