"""The Network page's reads (dashboard.readers.network) against the same figures counted in
pandas from the rows of ``v_environment``, under every kind of filter, on SQLite and
PostgreSQL: equal while the figures are fresh; after a crawl stores a link they stay those
of the last refresh (stale, the banner says so) and equal the view's again once
refreshed."""

from __future__ import annotations

from dataclasses import astuple
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from sqlalchemy import text

from analyse import networks
from dashboard.readers import network as reads
from store import aggregates, make_engine
from store import analytics as A
from tests.stored_world import Facts, store_link

FILTERS = (
    (None, None),
    (None, ("crawl",)),
    (None, ("backlinks", "commoncrawl")),
    (("universities", "uncategorised"), None),
    (("universities",), ("crawl",)),
)
SOME = tuple(sorted({"vk.com", "mit.edu", "wikipedia.org", "arxiv.org"}))


def _reads(url: str) -> dict[str, Any]:
    """What the Network page reads, every run, direction and filter."""
    st.cache_data.clear()
    out: dict[str, Any] = {}
    engine = make_engine(url)
    runs = A.run_ids(engine)
    engine.dispose()
    for run in runs:
        for d in ("outgoing", "citing"):
            for cats, sources in FILTERS:
                key = f"{run} {d} {cats} {sources}"
                summary = reads.network_summary(url, run, d, cats, sources)
                out[f"summary {key}"] = None if summary is None else astuple(summary)[2:]
                for min_unis, limit in ((1, None), (2, 3)):
                    frame, total = reads.network_domains(
                        url, run, d, min_unis, cats, sources, limit
                    )
                    cols = ["domain", "universities", "weight"]
                    out[f"domains {key} {min_unis} {limit}"] = (
                        frame[cols].astype({"universities": int, "weight": int}).values.tolist(),
                        total,
                    )
                overlaps = reads.colink_overlaps(
                    url, run_id=run, direction=d, categories=cats, sources=sources
                )
                out[f"overlaps {key}"] = sorted(
                    (o["a"], o["b"], int(o["shared"])) for o in overlaps.to_dict("records")
                )
                edges = reads.network_edges(url, run, d, SOME, sources)
                out[f"edges {key}"] = sorted(
                    (e["university"], e["domain"], int(e["links"]), int(e["pages"]))
                    for e in edges.to_dict("records")
                )
    return out


def _counted(url: str, runs: list[int]) -> dict[str, Any]:
    """The same figures counted in pandas from ``v_environment`` (the truth)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            env = pd.read_sql(text("SELECT * FROM v_environment"), conn)
    finally:
        engine.dispose()
    env["category"] = env["category"].fillna(A.UNCATEGORISED)
    out: dict[str, Any] = {}
    for run in runs:
        for d in ("outgoing", "citing"):
            every = env[(env["run_id"] == run) & (env["direction"] == d)]
            for cats, sources in FILTERS:
                key = f"{run} {d} {cats} {sources}"
                rows = every
                if sources is not None:
                    rows = rows[rows["source"].isin(sources)]
                present = tuple(sorted(set(rows["category"])))
                if cats is not None:
                    rows = rows[rows["category"].isin(cats)]
                out[f"summary {key}"] = (
                    None
                    if rows.empty
                    else (
                        rows["university_id"].nunique(),
                        rows["domain"].nunique(),
                        len(rows),
                        len(rows.drop_duplicates(["university_id", "domain"])),
                        int(rows.groupby("domain")["university_id"].nunique().max()),
                        present,
                    )
                )
                weight = "links" if d == "outgoing" else "pages"
                per = (
                    rows.groupby("domain")
                    .agg(universities=("university_id", "nunique"), weight=(weight, "sum"))
                    .reset_index()
                    .sort_values(
                        ["universities", "weight", "domain"], ascending=[False, False, True]
                    )
                )
                for min_unis, limit in ((1, None), (2, 3)):
                    kept = per[per["universities"] >= min_unis]
                    out[f"domains {key} {min_unis} {limit}"] = (
                        kept.head(limit)
                        .astype({"universities": int, "weight": int})
                        .values.tolist(),
                        len(kept),
                    )
                pairs = networks.colink_overlap(
                    zip(rows["university"], rows["domain"], strict=True)
                )
                out[f"overlaps {key}"] = sorted((o.a, o.b, o.shared) for o in pairs)
                chosen = every if sources is None else every[every["source"].isin(sources)]
                chosen = chosen[chosen["domain"].isin(SOME)]
                edges = chosen.groupby(["university", "domain"])[["links", "pages"]].sum()
                out[f"edges {key}"] = sorted(
                    (u, dom, int(li), int(pg)) for (u, dom), (li, pg) in edges.iterrows()
                )
    return out


def _per_domain(rows: pd.DataFrame, weight: str) -> pd.DataFrame:
    """Domain, universities, weight: those shared by most first, then heaviest, by name."""
    per = (
        rows.groupby("domain")
        .agg(universities=("university_id", "nunique"), weight=(weight, "sum"))
        .reset_index()
        .astype({"universities": int, "weight": int})
    )
    return per.sort_values(["universities", "weight", "domain"], ascending=[False, False, True])


@pytest.mark.slow
def test_network_reads_are_the_view_counts_and_wait_for_a_refresh(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        runs = A.run_ids(engine)
        assert aggregates.fresh_run_ids(engine) == runs
        fresh = _reads(filled.url)
        assert any(v for k, v in fresh.items() if k.startswith("summary"))
        assert fresh == _counted(filled.url, runs)

        store_link(engine, runs[0], "new-domain.org")  # a crawl goes on: stale
        assert aggregates.fresh_run_ids(engine) is None
        assert _reads(filled.url) == fresh  # the figures of the last refresh, quickly
        assert _counted(filled.url, runs) != fresh

        aggregates.refresh_if_stale(engine)
        assert _reads(filled.url) == _counted(filled.url, runs)
    finally:
        engine.dispose()
        st.cache_data.clear()
