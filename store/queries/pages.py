"""Pages and documents: the stored pages of external domains, the pages behind page
documents, and the languages of the stored documents (for filters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, func, select

from store.models import (
    Document,
    Page,
)


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
