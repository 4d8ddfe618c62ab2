"""An analyst's category override of an external domain: set, clear, list.

The override lives in :class:`~store.models.DomainCategory`, keyed on the registered
domain, so it survives re-crawling (pages and environment rows come and go) and
re-clustering (clusters are rebuilt; domains stay). Everything that reports categories
applies it: the analyst views of migration 0002 (``COALESCE(override_category,
category)``), :mod:`store.analytics`, the report and the dashboard; the analyse stage never
overwrites it. Setting or clearing an override also re-votes the category of every final
cluster the domain belongs to (its own cluster override, if any, still wins).

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> set_override(engine, "Lenta.ru", "news", note="a news portal").override_category
'news_portals'
>>> [o.domain for o in list_overrides(engine)]
['lenta.ru']
>>> clear_override(engine, "lenta.ru")
True
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from analyse.categories import Assignment, Taxonomy, categorize_cluster, load_taxonomy
from core.domains import is_valid_domain, registered_domain
from core.exceptions import ParameterError
from store.models import Cluster, ClusterMember, Document, DomainCategory, utcnow
from store.session import session_scope

__all__ = [
    "OverrideRow",
    "clear_override",
    "list_overrides",
    "set_override",
    "stored_assignment",
]


@dataclass(frozen=True)
class OverrideRow:
    """A domain's assigned category and the analyst's override."""

    domain: str
    category: str | None
    override_category: str | None
    override_note: str | None
    override_at: dt.datetime | None


def _row(dc: DomainCategory) -> OverrideRow:
    return OverrideRow(
        dc.domain, dc.category, dc.override_category, dc.override_note, dc.override_at
    )


def normalise_domain(domain: str) -> str:
    """The registered domain of ``domain`` (a host or URL is accepted), lower case.

    Raises
    ------
    ParameterError
        Not a valid domain name with a public suffix.
    """
    raw = (domain or "").strip().lower().rstrip(".")
    reg = registered_domain(raw) if raw else ""
    if not reg or not is_valid_domain(reg):
        raise ParameterError(
            f"{domain!r} is not a registered domain such as 'lenta.ru' or 'ox.ac.uk'"
        )
    return reg


def stored_assignment(row: DomainCategory) -> Assignment | str | None:
    """A domain's vote for its clusters: its override (a key), its stored assignment
    (category, score and the raw scores kept in its evidence), or ``None``."""
    if row.override_category:
        return row.override_category
    if not row.category:
        return None
    scores = (row.evidence or {}).get("scores") or {}
    if not isinstance(scores, dict):
        scores = {}
    return Assignment(
        row.category,
        float(row.score or 0.0),
        {str(k): float(v) for k, v in scores.items()},
        {},
    )


def _revote_clusters(s: Session, domain: str, taxonomy: Taxonomy) -> int:
    """Recompute the category of the final clusters that hold ``domain``."""
    cluster_ids = s.scalars(
        select(ClusterMember.cluster_id)
        .join(Document, Document.id == ClusterMember.document_id)
        .join(Cluster, Cluster.id == ClusterMember.cluster_id)
        .where(Document.domain == domain, Cluster.level == -1)
        .distinct()
    ).all()
    for cid in cluster_ids:
        cl = s.get(Cluster, cid)
        if cl is None or cl.category is None:  # never analysed: the analyse stage will
            continue
        doms = s.scalars(
            select(Document.domain)
            .join(ClusterMember, ClusterMember.document_id == Document.id)
            .where(ClusterMember.cluster_id == cid)
        ).all()
        rows = {
            r.domain: r
            for r in s.scalars(select(DomainCategory).where(DomainCategory.domain.in_(set(doms))))
        }
        votes = [v for d in doms if d in rows and (v := stored_assignment(rows[d])) is not None]
        valid = [v for v in votes if not isinstance(v, str) or v in taxonomy]
        a = categorize_cluster(
            valid,
            taxonomy=taxonomy,
            theme_terms=[*map(str, cl.theme_terms or ()), *map(str, cl.top_shingles or ())],
        )
        cl.category, cl.category_score = a.category, a.score
        cl.category_support, cl.category_voters = a.evidence["support"], a.evidence["voters"]
        cl.category_evidence = {**(cl.category_evidence or {}), **a.evidence, "scores": a.scores}
    return len(cluster_ids)


def _taxonomy(taxonomy: Taxonomy | str | Path | None) -> Taxonomy:
    return taxonomy if isinstance(taxonomy, Taxonomy) else load_taxonomy(taxonomy)


def set_override(
    engine: Engine,
    domain: str,
    category: str,
    *,
    note: str | None = None,
    taxonomy: Taxonomy | str | Path | None = None,
) -> OverrideRow:
    """Set the analyst's category of ``domain`` (validated against the taxonomy).

    Parameters
    ----------
    engine : Engine
    domain : str
        A registered domain (a host or URL is reduced to it).
    category : str
        A category key or alias of the taxonomy.
    note : str, optional
        Why (shown beside the override).
    taxonomy : Taxonomy or path, optional
        The taxonomy, or its file; the shipped taxonomy when ``None``.

    Returns
    -------
    OverrideRow

    Raises
    ------
    ParameterError
        The domain is not a domain name, or the category is not in the taxonomy.
    """
    tax = _taxonomy(taxonomy)
    key = tax.resolve(category)
    dom = normalise_domain(domain)
    with session_scope(engine) as s:
        row = s.scalar(select(DomainCategory).where(DomainCategory.domain == dom))
        if row is None:
            row = DomainCategory(domain=dom, evidence={})
            s.add(row)
        row.override_category = key
        row.override_note = (note or "").strip() or None
        row.override_at = utcnow()
        s.flush()
        _revote_clusters(s, dom, tax)
        return _row(row)


def clear_override(
    engine: Engine, domain: str, *, taxonomy: Taxonomy | str | Path | None = None
) -> bool:
    """Remove the override of ``domain``; ``False`` when it had none (``taxonomy`` as for
    :func:`set_override`)."""
    dom = normalise_domain(domain)
    with session_scope(engine) as s:
        row = s.scalar(select(DomainCategory).where(DomainCategory.domain == dom))
        if row is None or row.override_category is None:
            return False
        row.override_category = None
        row.override_note = None
        row.override_at = None
        s.flush()
        _revote_clusters(s, dom, _taxonomy(taxonomy))
        return True


def list_overrides(engine: Engine) -> list[OverrideRow]:
    """Every domain with an override, by domain."""
    with session_scope(engine) as s:
        return [
            _row(r)
            for r in s.scalars(
                select(DomainCategory)
                .where(DomainCategory.override_category.is_not(None))
                .order_by(DomainCategory.domain)
            )
        ]
