"""Pages and documents: the stored pages of external domains, the pages behind page
documents, and the languages of the stored documents (for filters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select

from store.models import (
    Citation,
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


def _first_per_domain(
    engine: Engine, ranked: Any, domain: Any, per_domain: int
) -> list[DomainPageRow]:
    """The rows of ``ranked`` (a subquery numbering each domain's pages ``n`` by URL) up
    to ``per_domain`` a domain, by domain and URL."""
    stmt = (
        select(
            domain,
            ranked.c.url,
            ranked.c.title,
            ranked.c.language,
            ranked.c.http_status,
            ranked.c.role,
        )
        .where(ranked.c.n <= per_domain)
        .order_by(domain, ranked.c.url)
    )
    with engine.connect() as conn:
        return [DomainPageRow(*row) for row in conn.execute(stmt)]


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
    return _first_per_domain(engine, ranked, ranked.c.registered_domain, per_domain)


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


def citing_pages(
    engine: Engine,
    university_id: int,
    domains: Sequence[str],
    *,
    run_id: int | None = None,
    per_domain: int = 20,
) -> list[DomainPageRow]:
    """Up to ``per_domain`` verified citing pages of each domain that link to the university,
    by domain then URL: the pages that put a domain in the university's citing environment.

    A citing page found by a backlink export or a crawl is stored as a page of whatever
    role it was first fetched in (``external`` when a university links to it too), so the
    citations, not the page roles, say which pages cite; a citing URL that was never
    fetched is listed with its URL only.

    Parameters
    ----------
    engine : Engine
    university_id : int
        The cited university (``university.id``).
    domains : sequence of str
        Registered citing domains.
    run_id : int, optional
        The crawl run of the citations (every run when ``None``).
    per_domain : int
        At most this many pages per domain (the first by URL).
    """
    if not domains:
        return []
    cond = [
        Citation.university_id == university_id,
        Citation.status == "verified",
        Citation.citing_domain.in_(list(domains)),
    ]
    if run_id is not None:
        cond.append(Citation.run_id == run_id)
    cites = (  # one row per citing URL (a URL cites in several runs)
        select(
            Citation.citing_domain.label("domain"),
            Citation.citing_url.label("url"),
            func.max(Citation.page_id).label("page_id"),
        )
        .where(*cond)
        .group_by(Citation.citing_domain, Citation.citing_url)
        .subquery()
    )
    ranked = (
        select(
            cites.c.domain,
            cites.c.url,
            Page.title,
            Page.language,
            Page.http_status,
            func.coalesce(Page.role, "citing").label("role"),
            func.row_number().over(partition_by=cites.c.domain, order_by=cites.c.url).label("n"),
        )
        .outerjoin(Page, Page.id == cites.c.page_id)
        .subquery()
    )
    return _first_per_domain(engine, ranked, ranked.c.domain, per_domain)


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
