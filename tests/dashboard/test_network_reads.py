"""The Network page's readers (:mod:`dashboard.readers.network`) count in SQL
(:mod:`store.analytics`) what a plain pandas count of the run's whole environment
gives, under every kind of filter, on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
import pytest
import streamlit as st

from dashboard.cache import frame_of
from dashboard.readers import network as reads
from store import aggregates, make_engine, networks
from store import analytics as A

FILTERS = (
    (None, None),
    (None, ("crawl",)),
    (None, ("backlinks", "commoncrawl")),
    (("universities", "uncategorised"), None),
    (("universities",), ("crawl",)),
)
DOMAINS = tuple(sorted({"vk.com", "mit.edu", "wikipedia.org", "arxiv.org"}))
KEYS = ["university", "country", "domain", "category", "language"]

Filter = tuple[str, ...] | None


def _filtered(env: pd.DataFrame, categories: Filter, sources: Filter) -> pd.DataFrame:
    if categories is not None:
        env = env[env["category"].isin(categories)]
    if sources is not None:
        env = env[env["source"].isin(sources)]
    return env


def _summary(env: pd.DataFrame, run: int, d: str, cats: Filter, sources: Filter) -> Any:
    chosen = _filtered(env, cats, sources)
    if chosen.empty:
        return None
    return A.EnvironmentSummaryRow(
        run,
        d,
        chosen["university_id"].nunique(),
        chosen["domain"].nunique(),
        len(chosen),
        len(chosen.drop_duplicates(["university_id", "domain"])),
        int(chosen.groupby("domain")["university_id"].nunique().max()),
        tuple(sorted(set(_filtered(env, None, sources)["category"]))),
    )


def _domains(env: pd.DataFrame, run: int, d: str, min_unis: int, limit: int | None) -> Any:
    weight = "links" if d == "outgoing" else "pages"
    per = (
        env.groupby("domain")
        .agg(
            universities=("university_id", "nunique"),
            links=("links", "sum"),
            pages=("pages", "sum"),
            language=("language", "min"),
            category=("category", "min"),
        )
        .reset_index()
    )
    per = per[per["universities"] >= min_unis].assign(
        run_id=run, direction=d, weight=lambda t: t[weight]
    )
    per = per.sort_values(["universities", "weight", "domain"], ascending=[False, False, True])
    columns = [f.name for f in dataclasses.fields(A.NetworkDomainRow)]
    return per[columns].head(limit).reset_index(drop=True), len(per)


def _edges(env: pd.DataFrame) -> pd.DataFrame:
    env = env[env["domain"].isin(DOMAINS)]
    summed = env.groupby(KEYS, dropna=False).agg(links=("links", "sum"), pages=("pages", "sum"))
    return summed.reset_index()


def _same(got: pd.DataFrame, want: pd.DataFrame, key: str, by: list[str]) -> None:
    # numbers may come back int64 or Decimal
    got, want = (f.sort_values(by, ignore_index=True) for f in (got, want))
    pd.testing.assert_frame_equal(got, want, check_dtype=False, obj=key)


@pytest.mark.slow
def test_network_readers_count_as_pandas_does(filled: Any) -> None:
    engine = make_engine(filled.url)
    url = filled.url
    try:
        aggregates.refresh(engine)
        assert aggregates.fresh_run_ids(engine)
        st.cache_data.clear()
        checked = 0
        for run in A.run_ids(engine):
            for d in ("outgoing", "citing"):
                env = frame_of(A.EnvironmentRow, A.environment(engine, run_id=run, direction=d))
                env = env.assign(category=env["category"].fillna(A.UNCATEGORISED))
                for cats, sources in FILTERS:
                    key = f"{run} {d} {cats} {sources}"
                    chosen = _filtered(env, cats, sources)
                    want = _summary(env, run, d, cats, sources)
                    assert reads.network_summary(url, run, d, cats, sources) == want, key
                    checked += want is not None
                    for min_unis, limit in ((1, None), (2, 3)):
                        frame, total = reads.network_domains(
                            url, run, d, min_unis, cats, sources, limit
                        )
                        ref, ref_total = _domains(chosen, run, d, min_unis, limit)
                        assert total == ref_total, key
                        got = frame.astype({"universities": int, "weight": int})
                        pd.testing.assert_frame_equal(got, ref, check_dtype=False, obj=key)
                    overlaps = reads.colink_overlaps(
                        url, run_id=run, direction=d, categories=cats, sources=sources
                    )
                    pairs = networks.colink_overlap(
                        zip(chosen["university"], chosen["domain"], strict=True)
                    )
                    want_pairs = frame_of(networks.OverlapRow, pairs)
                    pd.testing.assert_frame_equal(overlaps, want_pairs, check_dtype=False, obj=key)
                    edges = reads.network_edges(url, run, d, DOMAINS, sources)
                    _same(edges, _edges(_filtered(env, None, sources)), key, KEYS)
    finally:
        engine.dispose()
        st.cache_data.clear()
    assert checked  # some run and direction has an environment to count
