"""The final clusters with their scope, size, category (override applied) and theme
(``v_cluster``), and their member documents with domain, language and category
(``v_cluster_member``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, func, select

from core.choices import check_direction
from store.analytics.views import V_CLUSTER, V_CLUSTER_MEMBER


@dataclass(frozen=True)
class ClusterViewRow:
    """A final cluster with its scope, size, category (override applied) and theme."""

    cluster_id: int
    clustering_id: int
    run_id: int | None
    university_id: int | None
    university: str | None
    country: str | None
    direction: str | None
    unit: str
    algorithm: str
    label: int
    size: int
    category: str | None
    assigned_category: str | None
    category_score: float | None
    category_support: float | None
    category_voters: int | None
    overridden: bool
    theme: str | None
    top_domains: str | None
    created_at: dt.datetime | None


def clusters(
    engine: Engine,
    *,
    clustering_id: int | None = None,
    run_id: int | None = None,
    university_id: int | None = None,
    direction: str | None = None,
    category: str | None = None,
    min_size: int = 1,
) -> list[ClusterViewRow]:
    """The final clusters (``v_cluster``), optionally of one clustering, run, university,
    direction or category; by clustering, largest first, then label.

    ``run_id=None`` does not filter on the run here (clusterings may span runs).
    """
    check_direction(direction)
    v = V_CLUSTER
    stmt = select(v).where(v.c.size >= min_size)
    for col, value in (
        (v.c.clustering_id, clustering_id),
        (v.c.run_id, run_id),
        (v.c.university_id, university_id),
        (v.c.direction, direction),
        (v.c.category, category),
    ):
        if value is not None:
            stmt = stmt.where(col == value)
    stmt = stmt.order_by(v.c.clustering_id.desc(), v.c.size.desc(), v.c.label)
    with engine.connect() as conn:
        out = []
        for r in conn.execute(stmt).mappings():
            created = r["created_at"]
            if isinstance(created, str):  # SQLite views return the stored text
                created = dt.datetime.fromisoformat(created)
            if created is not None and created.tzinfo is None:
                created = created.replace(tzinfo=dt.UTC)
            out.append(
                ClusterViewRow(
                    int(r["cluster_id"]),
                    int(r["clustering_id"]),
                    None if r["run_id"] is None else int(r["run_id"]),
                    None if r["university_id"] is None else int(r["university_id"]),
                    r["university"],
                    r["country"],
                    r["direction"],
                    r["unit"],
                    r["algorithm"],
                    int(r["label"]),
                    int(r["size"]),
                    r["category"],
                    r["assigned_category"],
                    None if r["category_score"] is None else float(r["category_score"]),
                    None if r["category_support"] is None else float(r["category_support"]),
                    None if r["category_voters"] is None else int(r["category_voters"]),
                    bool(r["overridden"]),
                    r["theme"],
                    r["top_domains"],
                    created,
                )
            )
        return out


@dataclass(frozen=True)
class ClusterMemberRow:
    """A document of a final cluster with its domain, language and category."""

    cluster_id: int
    document_id: int
    unit: str
    key: str
    domain: str
    language: str | None
    n_pages: int
    category: str | None


def cluster_members(
    engine: Engine, cluster_ids: Sequence[int], *, per_cluster: int | None = None
) -> list[ClusterMemberRow]:
    """The members of the given final clusters, by cluster then domain and key.

    Parameters
    ----------
    engine : Engine
    cluster_ids : sequence of int
        Final clusters (``v_cluster.cluster_id``).
    per_cluster : int, optional
        At most this many members of each cluster: those with most pages, then by domain
        and key (a page showing a cluster of 25,000 domains lists its largest ones).

    Returns
    -------
    list of ClusterMemberRow
    """
    if not cluster_ids:
        return []
    v = V_CLUSTER_MEMBER
    cols = (
        v.c.cluster_id,
        v.c.document_id,
        v.c.unit,
        v.c.key,
        v.c.domain,
        v.c.language,
        v.c.n_pages,
        v.c.category,
    )
    wanted = v.c.cluster_id.in_([int(c) for c in cluster_ids])
    if per_cluster is None:
        stmt = select(*cols).where(wanted).order_by(v.c.cluster_id, v.c.domain, v.c.key)
    else:
        rank = (
            func.row_number()
            .over(
                partition_by=v.c.cluster_id,
                order_by=(v.c.n_pages.desc(), v.c.domain, v.c.key),
            )
            .label("n")
        )
        ranked = select(*cols, rank).where(wanted).subquery()
        stmt = (
            select(*(ranked.c[c.name] for c in cols))
            .where(ranked.c.n <= per_cluster)
            .order_by(ranked.c.cluster_id, ranked.c.domain, ranked.c.key)
        )
    with engine.connect() as conn:
        return [
            ClusterMemberRow(int(c), int(d), u, k, dom, lang, int(n or 0), cat)
            for c, d, u, k, dom, lang, n, cat in conn.execute(stmt)
        ]
