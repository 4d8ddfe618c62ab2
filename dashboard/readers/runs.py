"""What the Runs page reads: every crawl, pipeline and near-duplicate run and every
clustering, with the universities' names (:mod:`.common`)."""

from __future__ import annotations

from dashboard.cache import cached
from dashboard.readers.common import (
    list_clusterings,
    list_crawl_runs,
    list_dedup_runs,
    universities,
)
from store import queries

__all__ = [
    "list_clusterings",
    "list_crawl_runs",
    "list_dedup_runs",
    "list_pipeline_runs",
    "universities",
]

list_pipeline_runs = cached(queries.list_pipeline_runs)
