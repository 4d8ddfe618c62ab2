"""``dashboard.cache.cached``: a store reader as a cached dashboard reader, whose frame has
the row dataclass's columns even when empty, whose positional and keyword calls share one
cached result, and which is read again after ``reload``."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from sqlalchemy import Engine

from dashboard import cache
from store import queries


@dataclasses.dataclass(frozen=True)
class Hit:
    """One row of :func:`counted_runs`."""

    id: int
    status: str


READS: list[int] = []  # run ids asked of counted_runs, one entry per real read


def counted_runs(engine: Engine, at_least: int, *, status: str | None = None) -> list[Hit]:
    """A store-shaped reader: the crawl runs from ``at_least`` on (of ``status``)."""
    READS.append(at_least)
    rows = queries.list_crawl_runs(engine)
    return [Hit(r.id, r.status) for r in rows if r.id >= at_least and status in (None, r.status)]


def plain_count(engine: Engine) -> int:
    """A reader of a plain value."""
    return len(queries.list_crawl_runs(engine))


@pytest.fixture
def clean() -> Any:
    st.cache_data.clear()
    READS.clear()
    yield
    st.cache_data.clear()


def test_a_frame_has_the_rows_columns_even_when_empty(dashboard_db, clean) -> None:
    groups = cache.cached(queries.duplicate_groups)
    found = groups(dashboard_db.url, -1)
    assert found.empty
    assert list(found.columns) == [f.name for f in dataclasses.fields(queries.DuplicateGroupRow)]
    runs = cache.cached(queries.list_crawl_runs)(dashboard_db.url)
    want = queries.list_crawl_runs(cache.read_engine(dashboard_db.url))
    assert runs["id"].tolist() == [r.id for r in want] and len(want) > 1


def test_calls_share_one_cached_result_until_reload(dashboard_db, clean) -> None:
    reader = cache.cached(counted_runs)
    url = dashboard_db.url
    first = reader(url, 0)
    assert len(first) > 1 and READS == [0]
    pd.testing.assert_frame_equal(reader(url, at_least=0, status=None), first)
    assert READS == [0]  # the keyword call bound to the same arguments: no second read
    reader(url, 0, status="failed")
    assert READS == [0, 0]  # another argument: read
    cache.reload()
    pd.testing.assert_frame_equal(reader(url, 0), first)
    assert READS == [0, 0, 0]  # forgotten by reload: read again


def test_the_reader_keeps_its_name_and_parameters(clean) -> None:
    reader = cache.cached(counted_runs)
    assert reader.__name__ == "counted_runs" and reader.__doc__ == counted_runs.__doc__
    params = inspect.signature(reader).parameters
    assert list(params) == ["url", "at_least", "status"]
    assert params["status"].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError):
        reader("sqlite://", 0, "finished")  # status is keyword-only, as in the store


def test_a_plain_value_reader_needs_cached_value(dashboard_db, clean) -> None:
    with pytest.raises(TypeError, match="cached_value"):
        cache.cached(plain_count)  # type: ignore[arg-type]
    count = cache.cached_value(plain_count)
    assert count(dashboard_db.url) == len(
        queries.list_crawl_runs(cache.read_engine(dashboard_db.url))
    )


def test_two_readers_do_not_share_a_cache(dashboard_db, clean) -> None:
    """Streamlit keys a cache by the function's module and name: each wrapped reader has
    its own."""
    runs = cache.cached(queries.list_crawl_runs)(dashboard_db.url)
    pipes = cache.cached(queries.list_pipeline_runs)(dashboard_db.url)
    assert list(runs.columns) != list(pipes.columns)
