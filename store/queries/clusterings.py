"""Clusterings with the scope read from their filter, the clusters of each level, and
the number of clusters per level.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from core.choices import DIRECTIONS
from store.models import (
    Cluster,
    Clustering,
    University,
)


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
