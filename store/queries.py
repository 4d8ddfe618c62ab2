"""Read queries used by the command line and the dashboard.

Every function takes an engine and plain parameters and returns frozen dataclass rows;
all queries are parameterised. The webometric tables (Tables 2-3, category shares, WIF,
run changes, final clusters and their members) live in :mod:`store.analytics`; this
module holds what else the dashboard reads: crawl, pipeline, near-duplicate and
clustering runs, the clusters of every level of a clustering, the pages of domains and
documents, near-duplicate groups and their members.

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> list_crawl_runs(engine), list_clusterings(engine), document_languages(engine)
([], [], [])
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, selectinload

from store.models import (
    DIRECTIONS,
    Cluster,
    Clustering,
    CrawlRun,
    DedupRun,
    Document,
    DuplicateGroup,
    DuplicateMember,
    Page,
    PipelineRun,
    University,
)


@dataclass(frozen=True)
class UniversityRow:
    id: int
    name: str
    country: str
    rank: int | None
    domains: tuple[str, ...]
    home_urls: tuple[str, ...]


def list_universities(engine: Engine) -> list[UniversityRow]:
    """Every stored university with its domains, by rank then name."""
    with Session(engine) as s:
        unis = s.scalars(select(University).options(selectinload(University.domains))).all()
        rows = [
            UniversityRow(
                u.id,
                u.name,
                u.country,
                u.rank,
                tuple(d.domain for d in u.domains),
                tuple(u.home_urls or ()),
            )
            for u in unis
        ]
    return sorted(rows, key=lambda r: (r.rank is None, r.rank or 0, r.name))


# --- runs -------------------------------------------------------------------------------


def _seconds(start: dt.datetime | None, end: dt.datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start).total_seconds(), 3)


@dataclass(frozen=True)
class CrawlRunRow:
    """A crawl (or import) run with its statistics and error."""

    id: int
    kind: str
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    seconds: float | None
    pipeline_run_id: int | None
    stats: dict[str, Any]
    settings: dict[str, Any]
    error: str | None


def list_crawl_runs(engine: Engine) -> list[CrawlRunRow]:
    """Every crawl run, newest first."""
    with Session(engine) as s:
        runs = s.scalars(select(CrawlRun).order_by(CrawlRun.id.desc())).all()
        return [
            CrawlRunRow(
                r.id,
                r.kind,
                r.status,
                r.started_at,
                r.finished_at,
                _seconds(r.started_at, r.finished_at),
                r.pipeline_run_id,
                dict(r.stats or {}),
                dict(r.settings or {}),
                r.error,
            )
            for r in runs
        ]


@dataclass(frozen=True)
class PipelineRunRow:
    """A whole-pipeline run: trigger, status, each stage's status, seconds, stats, error."""

    id: int
    trigger: str
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    seconds: float | None
    universities_file: str | None
    stages: tuple[dict[str, Any], ...]
    error: str | None


def list_pipeline_runs(engine: Engine) -> list[PipelineRunRow]:
    """Every whole-pipeline run, newest first."""
    with Session(engine) as s:
        runs = s.scalars(select(PipelineRun).order_by(PipelineRun.id.desc())).all()
        return [
            PipelineRunRow(
                r.id,
                r.trigger,
                r.status,
                r.started_at,
                r.finished_at,
                _seconds(r.started_at, r.finished_at),
                r.universities_file,
                tuple(dict(x) for x in (r.stages or []) if isinstance(x, dict)),
                r.error,
            )
            for r in runs
        ]


# --- clusterings ------------------------------------------------------------------------


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class ClusteringRow:
    """A clustering with the scope it ran on, read from its ``filter``.

    ``university_id``, ``direction``, ``run_id`` and ``language`` are ``None`` when the
    clustering was not restricted to one (e.g. all universities at once).
    """

    id: int
    algorithm: str
    linkage: str
    unit: str
    university_id: int | None
    direction: str | None
    run_id: int | None
    language: str | None
    n_documents: int
    n_excluded_duplicates: int
    n_clusters: int
    seconds: float | None
    created_at: dt.datetime
    parameters: dict[str, Any]
    filter: dict[str, Any]
    levels: tuple[dict[str, Any], ...]


def _scope(flt: dict[str, Any], names: dict[str, int]) -> tuple[int | None, str | None]:
    uid = _as_int(flt.get("university_id"))
    if uid is None:
        for key in ("university", "universities", "university_ids"):
            value = flt.get(key)
            if isinstance(value, list | tuple) and len(value) == 1:
                value = value[0]
            uid = _as_int(value) if not isinstance(value, str) else names.get(value)
            if uid is not None:
                break
    direction = flt.get("direction")
    return uid, direction if direction in DIRECTIONS else None


def list_clusterings(
    engine: Engine,
    *,
    university_id: int | None = None,
    direction: str | None = None,
) -> list[ClusteringRow]:
    """The stored clusterings, newest first, optionally of one university and direction.

    The scope is read from ``Clustering.filter``: ``university_id`` (or ``university``: an
    id, a name, or a one-element list), ``direction``, ``run_id``, ``language``. With
    ``university_id``/``direction`` given, clusterings over all universities or both
    directions are kept too (their scope then reads ``None``).
    """
    with Session(engine) as s:
        names = dict(s.execute(select(University.name, University.id)).tuples().all())
        rows = []
        for c in s.scalars(select(Clustering).order_by(Clustering.id.desc())):
            flt = dict(c.filter or {})
            uid, dirn = _scope(flt, names)
            if university_id is not None and uid not in (None, university_id):
                continue
            if direction is not None and dirn not in (None, direction):
                continue
            language = flt.get("language")
            if isinstance(language, list | tuple):
                language = ",".join(map(str, language))
            rows.append(
                ClusteringRow(
                    c.id,
                    c.algorithm,
                    c.linkage,
                    c.unit,
                    uid,
                    dirn,
                    _as_int(flt.get("run_id")),
                    language,
                    c.n_documents,
                    c.n_excluded_duplicates,
                    c.n_clusters,
                    c.seconds,
                    c.created_at,
                    dict(c.parameters or {}),
                    flt,
                    tuple(dict(x) for x in (c.levels or []) if isinstance(x, dict)),
                )
            )
    return rows


@dataclass(frozen=True)
class ClusterRow:
    """A cluster of one level of a clustering: size, theme, category.

    ``category`` is the cluster's override when set, else its assigned category.
    """

    id: int
    clustering_id: int
    level: int
    label: int
    size: int
    theme_terms: tuple[str, ...]
    top_shingles: tuple[str, ...]
    top_domains: tuple[str, ...]
    titles: tuple[str, ...]
    category: str | None
    category_score: float | None
    overridden: bool


def list_clusters(
    engine: Engine,
    clustering_id: int,
    *,
    level: int = -1,
    categories: Sequence[str] | None = None,
    min_size: int = 1,
) -> list[ClusterRow]:
    """The clusters of one level of a clustering, largest first.

    Parameters
    ----------
    engine : Engine
    clustering_id : int
    level : int
        The level (``-1``: the final clusters).
    categories : sequence of str, optional
        Keep the clusters whose (overridden) category is one of these.
    min_size : int
        Keep the clusters with at least this many documents.
    """
    effective = func.coalesce(Cluster.override_category, Cluster.category)
    stmt = (
        select(Cluster)
        .where(
            Cluster.clustering_id == clustering_id,
            Cluster.level == level,
            Cluster.size >= min_size,
        )
        .order_by(Cluster.size.desc(), Cluster.label)
    )
    if categories is not None:
        stmt = stmt.where(effective.in_(list(categories)))
    with Session(engine) as s:
        return [
            ClusterRow(
                c.id,
                c.clustering_id,
                c.level,
                c.label,
                c.size,
                tuple(map(str, c.theme_terms or ())),
                tuple(map(str, c.top_shingles or ())),
                tuple(map(str, c.top_domains or ())),
                tuple(map(str, c.titles or ())),
                c.override_category or c.category,
                c.category_score,
                c.override_category is not None,
            )
            for c in s.scalars(stmt)
        ]


def cluster_levels(engine: Engine, clustering_id: int) -> list[tuple[int, int]]:
    """``(level, number of clusters)`` for every level that has stored cluster rows."""
    stmt = (
        select(Cluster.level, func.count())
        .where(Cluster.clustering_id == clustering_id)
        .group_by(Cluster.level)
        .order_by(Cluster.level)
    )
    with engine.connect() as conn:
        return [(int(level), int(n)) for level, n in conn.execute(stmt)]


@dataclass(frozen=True)
class DomainPageRow:
    """A stored page of an external domain."""

    domain: str
    url: str
    title: str | None
    language: str | None
    http_status: int | None
    role: str


def domain_pages(
    engine: Engine,
    domains: Sequence[str],
    *,
    per_domain: int = 20,
    roles: Sequence[str] = ("external", "citing"),
) -> list[DomainPageRow]:
    """Up to ``per_domain`` fetched pages of each registered domain, by domain then URL.

    Parameters
    ----------
    engine : Engine
    domains : sequence of str
        Registered domains.
    per_domain : int
        At most this many pages per domain (the first by URL).
    roles : sequence of str
        Page roles to list: ``external`` (linked from a university), ``citing`` (links
        to one); a university's own pages have the role ``university``.
    """
    if not domains:
        return []
    ranked = (
        select(
            Page.registered_domain,
            Page.url,
            Page.title,
            Page.language,
            Page.http_status,
            Page.role,
            func.row_number()
            .over(partition_by=Page.registered_domain, order_by=Page.url)
            .label("n"),
        )
        .where(Page.registered_domain.in_(list(domains)), Page.role.in_(list(roles)))
        .subquery()
    )
    stmt = (
        select(
            ranked.c.registered_domain,
            ranked.c.url,
            ranked.c.title,
            ranked.c.language,
            ranked.c.http_status,
            ranked.c.role,
        )
        .where(ranked.c.n <= per_domain)
        .order_by(ranked.c.registered_domain, ranked.c.url)
    )
    with engine.connect() as conn:
        return [DomainPageRow(*row) for row in conn.execute(stmt)]


def document_pages(engine: Engine, document_ids: Sequence[int]) -> list[DomainPageRow]:
    """The pages behind page-unit documents (for clusterings and duplicate groups of pages)."""
    if not document_ids:
        return []
    stmt = (
        select(
            Page.registered_domain, Page.url, Page.title, Page.language, Page.http_status, Page.role
        )
        .join(Document, Document.page_id == Page.id)
        .where(Document.id.in_(list(document_ids)))
        .order_by(Page.registered_domain, Page.url)
    )
    with engine.connect() as conn:
        return [DomainPageRow(*row) for row in conn.execute(stmt)]


# --- near duplicates --------------------------------------------------------------------


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


# --- filters ----------------------------------------------------------------------------


def document_languages(engine: Engine) -> list[str]:
    """The languages of the stored documents, most frequent first."""
    stmt = (
        select(Document.language, func.count())
        .where(Document.language.is_not(None))
        .group_by(Document.language)
        .order_by(func.count().desc(), Document.language)
    )
    with engine.connect() as conn:
        return [str(lang) for lang, _n in conn.execute(stmt)]
