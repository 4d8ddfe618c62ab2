"""Writing a batch of crawled pages in one transaction: idempotent upserts of the pages
keyed on the normalised URL (a page whose content hash is unchanged keeps its extraction),
their links, and the errors of redirect chains; a batch chosen as a deadlock victim by
PostgreSQL is written again.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, and_, case, null, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from core.choices import HTML_MEDIA_TYPES
from core.domains import host_of, is_public_host, normalize_url
from core.entities import KEY_MAX_LENGTH, SiteRules
from core.exceptions import DatabaseError
from crawler.items import PageErrorItem, PageItem
from store.entities import site_rules
from store.models import Link, Page, utcnow
from store.session import session_scope

#: extractor(url, body, content_type, charset) -> Page extraction columns
Extractor = Callable[[str, bytes, str | None, str | None], Mapping[str, Any]]


@dataclass
class BatchResult:
    """What one :func:`store_batch` call wrote."""

    pages: int = 0
    links: int = 0
    errors: int = 0
    bytes: int = 0
    fingerprints: list[str] = field(default_factory=list)


def dialect_insert(session: Session, model: Any) -> Any:
    """The INSERT of the session's database (PostgreSQL or SQLite) for ``model``: the one
    with ``on_conflict_do_update`` / ``on_conflict_do_nothing`` for upserts."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(model)
    return sqlite.insert(model)


def _media_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def extraction_state(item: PageItem) -> tuple[str, str | None]:
    """(extraction_status, reason) of a freshly stored page: ``pending`` for HTML answers
    with a body, ``skipped`` with the reason otherwise."""
    if item.fetch_error is not None:
        return "skipped", f"fetch error: {item.error_kind}"
    if item.http_status is None or not 200 <= item.http_status < 300:
        return "skipped", f"HTTP {item.http_status}"
    media = _media_type(item.content_type)
    if media is not None and media not in HTML_MEDIA_TYPES:
        return "skipped", f"not HTML: {media}"
    if not item.body:
        return "skipped", "empty body"
    return "pending", None


def _url_columns(url: str, sites: SiteRules) -> dict[str, str]:
    """``url`` (normalised), ``host`` and ``registered_domain`` (the key of its site, the
    web entity of :mod:`core.entities`) of a page row."""
    url = normalize_url(url)
    host = host_of(url)
    return {
        "url": url,
        "host": host[:253],
        "registered_domain": sites.key(url)[:KEY_MAX_LENGTH],
    }


def _archive_columns(item: PageItem, sites: SiteRules) -> dict[str, Any]:
    """An archived page's columns (none for a live page): its key ``url`` is the memento
    URL, its host and site those of the original URL (:mod:`crawler.archive.facts`)."""
    if not item.original_url:  # every row of a batch has the same keys
        return dict.fromkeys(("archive", "original_url", "captured_at", "capture_status"))
    return {
        **_url_columns(item.original_url, sites),
        "url": item.url,
        "original_url": normalize_url(item.original_url),
        "archive": item.archive,
        "captured_at": item.captured_at,
        "capture_status": item.capture_status,
    }


def page_row(item: PageItem, run_id: int, sites: SiteRules | None = None) -> dict[str, Any]:
    """The ``page`` row of an item (without ``id``); its site by ``sites`` (the shipped
    default rules when ``None``)."""
    status, reason = extraction_state(item)
    body = item.body
    return {
        **_url_columns(item.url, sites or SiteRules.default()),
        **_archive_columns(item, sites or SiteRules.default()),
        "university_id": item.university_id if item.role == "university" else None,
        "role": item.role,
        "depth": item.depth,
        "http_status": item.http_status,
        "content_type": item.content_type,
        "charset": item.charset,
        "fetched_at": item.fetched_at or utcnow(),
        "content_hash": hashlib.sha256(body).hexdigest() if body is not None else None,
        "content_length": item.content_length,
        "body": zlib.compress(body, 6) if body else None,
        "warc_file": item.warc_file,
        "warc_offset": item.warc_offset,
        "etag": item.etag,
        "last_modified": item.last_modified,
        "fetch_error": item.fetch_error,
        "first_run_id": run_id,
        "last_run_id": run_id,
        "extraction_status": status,
        "extraction_reason": reason,
    }


_KEEP_ON_CONFLICT = {"url", "first_run_id"}
_EXTRACTION = (
    "text",
    "title",
    "date",
    "sitename",
    "language",
    "language_score",
    "extraction_status",
    "extraction_reason",
    "extracted_at",
    "shingles",
)


def _upsert_pages(session: Session, rows: list[dict[str, Any]]) -> dict[str, int]:
    if not rows:
        return {}
    stmt = dialect_insert(session, Page)
    excluded = stmt.excluded
    same = Page.content_hash.is_not_distinct_from(excluded.content_hash)
    set_: dict[str, Any] = {
        name: excluded[name]
        for name in rows[0]
        if name not in _KEEP_ON_CONFLICT and name not in _EXTRACTION
    }
    for name in _EXTRACTION:
        if name in rows[0]:
            set_[name] = case((same, getattr(Page, name)), else_=excluded[name])
    if "fetch_error" in set_:
        # a redirect hop stored after its chain was found looping (another process of a
        # crawl farm) keeps the chain's error within the same run
        chain_error = or_(*(Page.fetch_error.like(p) for p in _CHAIN_ERRORS))
        keep = and_(
            excluded.fetch_error.is_(None), Page.last_run_id == excluded.last_run_id, chain_error
        )
        set_["fetch_error"] = case((keep, Page.fetch_error), else_=excluded.fetch_error)
    if "text" not in rows[0]:
        # a changed page loses its old extraction
        for name in ("text", "title", "date", "sitename", "language", "language_score"):
            set_[name] = case((same, getattr(Page, name)), else_=null())
    stmt = stmt.on_conflict_do_update(index_elements=["url"], set_=set_)
    # one order for every writer: concurrent batches of a crawl farm cannot deadlock
    session.execute(stmt, sorted(rows, key=lambda r: r["url"]))
    urls = [r["url"] for r in rows]
    ids: dict[str, int] = {}
    for start in range(0, len(urls), 500):
        chunk = urls[start : start + 500]
        ids.update(session.execute(select(Page.url, Page.id).where(Page.url.in_(chunk))).all())
    return ids


def store_batch(
    engine: Engine,
    run_id: int,
    items: Sequence[PageItem | PageErrorItem],
    *,
    extractor: Extractor | None = None,
    sites: SiteRules | None = None,
) -> BatchResult:
    """Store a batch of items in one transaction.

    Parameters
    ----------
    engine : Engine
    run_id : int
        The crawl run.
    items : sequence of PageItem or PageErrorItem
        In the order the spiders yielded them.
    extractor : callable, optional
        ``extractor(url, body, content_type, charset) -> columns`` run on every pending
        HTML page (inline extraction); its columns (``text``, ``title``, ...,
        ``extraction_status``) are stored with the page.
    sites : SiteRules, optional
        The rules that decide each page's and link target's site (web entity); read from
        the database (:func:`store.entities.site_rules`) when ``None``.

    Returns
    -------
    BatchResult
    """
    result = BatchResult()
    if sites is None:
        sites = site_rules(engine)
    rows: dict[str, dict[str, Any]] = {}
    page_items: dict[str, PageItem] = {}
    errors: list[PageErrorItem] = []
    pending: list[tuple[dict[str, Any], PageItem]] = []
    for item in items:
        if isinstance(item, PageErrorItem):
            errors.append(item)
            continue
        row = page_row(item, run_id, sites)
        if extractor is not None and row["extraction_status"] == "pending" and item.body:
            pending.append((row, item))
        rows[row["url"]] = row  # the last answer for a URL wins
        page_items[row["url"]] = item
        if item.fingerprint:
            result.fingerprints.append(item.fingerprint)
        result.pages += 1
        result.bytes += item.content_length or 0
        result.errors += item.fetch_error is not None
    if extractor is not None and pending:
        args = [(r["url"], it.body, it.content_type, it.charset) for r, it in pending]
        many = getattr(extractor, "many", None)
        if many is not None:
            found = many(args)
        else:
            found = [extractor(u, b or b"", ct, cs) for u, b, ct, cs in args]
        for (row, _), columns in zip(pending, found, strict=True):
            row.update(columns)
    if extractor is not None:
        keys = set().union(*(r.keys() for r in rows.values())) if rows else set()
        for row in rows.values():
            for key in keys:
                row.setdefault(key, None)
    for attempt in range(DEADLOCK_RETRIES + 1):
        try:
            with session_scope(engine) as session:
                result.links = _write_batch(session, run_id, rows, page_items, errors, sites)
            break
        except DatabaseError as exc:
            if attempt == DEADLOCK_RETRIES or not _is_deadlock(exc):
                raise
            time.sleep(0.05 * (attempt + 1))  # the other transaction finishes meanwhile
    return result


#: times a batch is written again after PostgreSQL chose it as a deadlock victim
DEADLOCK_RETRIES = 5


def _is_deadlock(exc: BaseException) -> bool:
    """True for PostgreSQL's deadlock and serialization failures (SQLSTATE 40P01, 40001):
    concurrent writers of a crawl farm, the transaction may simply run again."""
    orig = getattr(exc.__cause__, "orig", None)
    return getattr(orig, "sqlstate", None) in ("40P01", "40001")


def _write_batch(
    session: Session,
    run_id: int,
    rows: dict[str, dict[str, Any]],
    page_items: dict[str, PageItem],
    errors: list[PageErrorItem],
    sites: SiteRules,
) -> int:
    """One batch's statements in the session's transaction; return the links written."""
    ids = _upsert_pages(session, list(rows.values()))
    link_rows: dict[tuple[int, str], dict[str, Any]] = {}
    for url, item in page_items.items():
        source = ids[url]
        for link in item.links:
            target = normalize_url(link.target)
            link_key = (source, target)
            if link_key in link_rows:
                continue
            host = host_of(target)
            link_rows[link_key] = {
                "run_id": run_id,
                "source_page_id": source,
                "target_url": target,
                "target_host": host[:253],
                "target_domain": sites.key(target)[:KEY_MAX_LENGTH],
                "anchor": link.anchor or None,
                "nofollow": link.nofollow,
                # a link to no host of the public web (http://intranet/, 10.0.0.1) reaches
                # no site of the university's environment
                "external": link.external and is_public_host(host),
                "found_in": link.found_in,
            }
    if link_rows:
        stmt = dialect_insert(session, Link).on_conflict_do_nothing(
            index_elements=["run_id", "source_page_id", "target_url"]
        )
        session.execute(stmt, list(link_rows.values()))
    if errors:
        _store_chain_errors(session, run_id, errors, sites)
    return len(link_rows)


#: errors a redirect chain gives to its earlier pages (:class:`PageErrorItem`)
_CHAIN_ERRORS = ("redirect_loop:%", "too_many_redirects:%")


def _store_chain_errors(
    session: Session, run_id: int, errors: list[PageErrorItem], sites: SiteRules
) -> None:
    """Set the error of a redirect chain on its earlier pages.

    In a crawl farm the earlier hops may have been fetched by other processes whose
    batches are not stored yet: the page row is then created with the error alone, and
    the hop's own item, stored later in the same run, keeps it (:func:`_upsert_pages`).
    """
    rows = {}
    for err in errors:
        row: dict[str, Any] = {
            **_url_columns(err.url, sites),
            "fetch_error": err.fetch_error,
            "first_run_id": run_id,
            "last_run_id": run_id,
        }
        rows[row["url"]] = row
    stmt = dialect_insert(session, Page)
    stmt = stmt.on_conflict_do_update(
        index_elements=["url"], set_={"fetch_error": stmt.excluded.fetch_error}
    )
    session.execute(stmt, sorted(rows.values(), key=lambda r: r["url"]))
