"""What the Duplicates page reads: the near-duplicate runs (:mod:`.common`), their groups
and the members of the groups shown."""

from __future__ import annotations

from dashboard.cache import cached
from dashboard.readers.common import document_languages, list_dedup_runs
from store import queries

__all__ = ["document_languages", "duplicate_groups", "duplicate_members", "list_dedup_runs"]

duplicate_groups = cached(queries.duplicate_groups)
duplicate_members = cached(queries.duplicate_members)
