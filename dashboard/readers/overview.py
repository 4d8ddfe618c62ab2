"""What the Overview page reads: the paper's Tables 2 and 3, the Web Impact Factors, the
impact figures by citing source, what changed since the run before, the collections side
by side, and the academic share by both definitions (:mod:`.common`)."""

from __future__ import annotations

from dashboard.cache import cached, cached_value
from dashboard.readers.common import (
    collections,
    document_languages,
    low_confidence,
    share_comparison,
)
from store import analytics, impact

__all__ = [
    "change_summary",
    "collections",
    "compare_collections",
    "document_languages",
    "environment_changes",
    "has_web_graph",
    "low_confidence",
    "rank_weighted",
    "share_comparison",
    "source_overlap",
    "table2",
    "table3",
    "web_impact_factors",
]

table2 = cached(analytics.table2)
table3 = cached(analytics.table3)
web_impact_factors = cached(analytics.web_impact_factors)
change_summary = cached(analytics.change_summary)
environment_changes = cached(analytics.environment_changes)
compare_collections = cached(analytics.compare_collections)
source_overlap = cached(impact.source_overlap)
rank_weighted = cached(impact.rank_weighted)
has_web_graph = cached_value(impact.has_web_graph)
