"""Read queries used by the command line and the dashboard.

Every function takes an engine and plain parameters and returns frozen dataclass rows;
all queries are parameterised. The webometric tables (Tables 2-3, category shares, WIF,
run changes, final clusters and their members) live in :mod:`store.analytics`; this
package holds what else the dashboard reads, one module per concept, all re-exported
here (``from store import queries`` then ``queries.list_crawl_runs(...)``):

====================================  ==================================================
:mod:`store.queries.universities`     the stored universities and their domains
:mod:`store.queries.runs`             crawl and whole-pipeline runs
:mod:`store.queries.clusterings`      clusterings, the clusters of every level
:mod:`store.queries.pages`            pages of domains and documents, document languages
:mod:`store.queries.duplicates`       near-duplicate runs, groups and their members
====================================  ==================================================

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> list_crawl_runs(engine), list_clusterings(engine), document_languages(engine)
([], [], [])
"""

from __future__ import annotations

from store.queries.clusterings import (
    ClusteringRow,
    ClusterRow,
    cluster_levels,
    list_clusterings,
    list_clusters,
)
from store.queries.duplicates import (
    DedupRunRow,
    DuplicateGroupRow,
    DuplicateMemberRow,
    duplicate_groups,
    duplicate_members,
    list_dedup_runs,
)
from store.queries.pages import (
    DomainPageRow,
    citing_pages,
    document_languages,
    document_pages,
    domain_pages,
)
from store.queries.runs import CrawlRunRow, PipelineRunRow, list_crawl_runs, list_pipeline_runs
from store.queries.universities import UniversityRow, list_universities

__all__ = [
    "ClusterRow",
    "ClusteringRow",
    "CrawlRunRow",
    "DedupRunRow",
    "DomainPageRow",
    "DuplicateGroupRow",
    "DuplicateMemberRow",
    "PipelineRunRow",
    "UniversityRow",
    "citing_pages",
    "cluster_levels",
    "document_languages",
    "document_pages",
    "domain_pages",
    "duplicate_groups",
    "duplicate_members",
    "list_clusterings",
    "list_clusters",
    "list_crawl_runs",
    "list_dedup_runs",
    "list_pipeline_runs",
    "list_universities",
]
