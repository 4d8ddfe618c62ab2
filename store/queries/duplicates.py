"""Near-duplicate runs, their groups (largest first) and the members of groups."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from store.models import (
    DedupRun,
    Document,
    DuplicateGroup,
    DuplicateMember,
    Page,
)


@dataclass(frozen=True)
class DedupRunRow:
    """One run of a near-duplicate method."""

    id: int
    method: str
    grouping: str
    unit: str
    n_documents: int
    n_groups: int
    n_duplicates: int
    seconds: float | None
    created_at: dt.datetime
    parameters: dict[str, Any]


def list_dedup_runs(engine: Engine) -> list[DedupRunRow]:
    """Every near-duplicate run, newest first."""
    with Session(engine) as s:
        return [
            DedupRunRow(
                r.id,
                r.method,
                r.grouping,
                r.unit,
                r.n_documents,
                r.n_groups,
                r.n_duplicates,
                r.seconds,
                r.created_at,
                dict(r.parameters or {}),
            )
            for r in s.scalars(select(DedupRun).order_by(DedupRun.id.desc()))
        ]


@dataclass(frozen=True)
class DuplicateGroupRow:
    """A near-duplicate group: its method, size and canonical document (with its page)."""

    id: int
    dedup_run_id: int
    method: str
    size: int
    canonical_document_id: int
    canonical_key: str
    canonical_domain: str
    canonical_language: str | None
    canonical_title: str | None


def duplicate_groups(
    engine: Engine,
    dedup_run_id: int,
    *,
    language: str | None = None,
    limit: int | None = None,
) -> list[DuplicateGroupRow]:
    """The groups of one near-duplicate run, largest first.

    Parameters
    ----------
    engine : Engine
    dedup_run_id : int
    language : str, optional
        Keep the groups whose canonical document has this language.
    limit : int, optional
        At most this many groups.
    """
    stmt = (
        select(
            DuplicateGroup.id,
            DuplicateGroup.dedup_run_id,
            DuplicateGroup.method,
            DuplicateGroup.size,
            Document.id,
            Document.key,
            Document.domain,
            Document.language,
            Page.title,
        )
        .join(Document, Document.id == DuplicateGroup.canonical_document_id)
        .outerjoin(Page, Page.id == Document.page_id)
        .where(DuplicateGroup.dedup_run_id == dedup_run_id)
        .order_by(DuplicateGroup.size.desc(), DuplicateGroup.id)
    )
    if language is not None:
        stmt = stmt.where(Document.language == language)
    if limit is not None:
        stmt = stmt.limit(limit)
    with engine.connect() as conn:
        return [DuplicateGroupRow(*row) for row in conn.execute(stmt)]


@dataclass(frozen=True)
class DuplicateMemberRow:
    """A document of a near-duplicate group; ``canonical`` marks the one that is kept."""

    group_id: int
    document_id: int
    key: str
    domain: str
    language: str | None
    title: str | None
    canonical: bool


def duplicate_members(engine: Engine, group_ids: Sequence[int]) -> list[DuplicateMemberRow]:
    """The members of the given near-duplicate groups, canonical first."""
    if not group_ids:
        return []
    stmt = (
        select(
            DuplicateMember.group_id,
            Document.id,
            Document.key,
            Document.domain,
            Document.language,
            Page.title,
            (DuplicateGroup.canonical_document_id == Document.id).label("canonical"),
        )
        .join(DuplicateGroup, DuplicateGroup.id == DuplicateMember.group_id)
        .join(Document, Document.id == DuplicateMember.document_id)
        .outerjoin(Page, Page.id == Document.page_id)
        .where(DuplicateMember.group_id.in_(list(group_ids)))
    )
    with engine.connect() as conn:
        rows = [DuplicateMemberRow(*row[:6], bool(row[6])) for row in conn.execute(stmt)]
    return sorted(rows, key=lambda r: (r.group_id, not r.canonical, r.key))
