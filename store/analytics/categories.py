"""The categories of domains (``v_domain_category``): the assigned category, the
analyst's override and which one wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, select

from store.analytics.views import V_DOMAIN_CATEGORY


@dataclass(frozen=True)
class DomainCategoryRow:
    """A domain's category (override applied), the assigned one, score and override."""

    domain: str
    category: str | None
    assigned_category: str | None
    override_category: str | None
    overridden: bool
    score: float | None
    override_note: str | None


def domain_categories(
    engine: Engine, *, domains: Sequence[str] | None = None, overridden_only: bool = False
) -> list[DomainCategoryRow]:
    """The categorised domains (``v_domain_category``), by domain."""
    v = V_DOMAIN_CATEGORY
    stmt = select(
        v.c.domain,
        v.c.category,
        v.c.assigned_category,
        v.c.override_category,
        v.c.overridden,
        v.c.score,
        v.c.override_note,
    ).order_by(v.c.domain)
    if domains is not None:
        stmt = stmt.where(v.c.domain.in_(list(domains)))
    if overridden_only:
        stmt = stmt.where(v.c.overridden == 1)
    with engine.connect() as conn:
        return [
            DomainCategoryRow(d, c, a, o, bool(ov), None if s is None else float(s), note)
            for d, c, a, o, ov, s, note in conn.execute(stmt)
        ]
