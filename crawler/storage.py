"""Writing crawl results: pages, links, citations, the environment and run statistics.

:func:`store_batch` writes a batch of page items in one transaction with idempotent
upserts keyed on the normalised URL (:func:`core.domains.normalize_url`), so a
replayed or re-crawled page updates its row instead of adding one; links are unique per
(run, source page, target) and citations per (run, university, citing URL). Bodies are
zlib-compressed. A page whose content hash is unchanged keeps its extraction; a changed
or new page is ``pending`` for ``webometrics extract`` (or extracted inline when an
extractor is given).

:func:`resolve_citations` decides each citing candidate from the stored pages and links,
following recorded redirects. :func:`finalize_run` recomputes the run's environment rows
and statistics from what is stored, so it gives the same answer after a resumed crawl.

Cost: one round trip per statement kind per batch (executemany); finalising runs a few
grouped queries over the run's pages and links.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, and_, case, delete, func, null, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from core.domains import host_of, in_domains, normalize_url, registered_domain
from core.exceptions import DatabaseError
from crawler.items import PageErrorItem, PageItem
from store.models import Citation, CrawlRun, Environment, Link, Page, UniversityDomain, utcnow
from store.session import session_scope

_HTML = ("text/html", "application/xhtml+xml")

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


def _insert(session: Session, model: Any) -> Any:
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
    if media is not None and media not in _HTML:
        return "skipped", f"not HTML: {media}"
    if not item.body:
        return "skipped", "empty body"
    return "pending", None


def _url_columns(url: str) -> dict[str, str]:
    """``url`` (normalised), ``host`` and ``registered_domain`` of a page row."""
    url = normalize_url(url)
    host = host_of(url)
    return {"url": url, "host": host[:253], "registered_domain": registered_domain(host)[:253]}


def page_row(item: PageItem, run_id: int) -> dict[str, Any]:
    """The ``page`` row of an item (without ``id``)."""
    status, reason = extraction_state(item)
    body = item.body
    return {
        **_url_columns(item.url),
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
    stmt = _insert(session, Page)
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

    Returns
    -------
    BatchResult
    """
    result = BatchResult()
    rows: dict[str, dict[str, Any]] = {}
    page_items: dict[str, PageItem] = {}
    errors: list[PageErrorItem] = []
    pending: list[tuple[dict[str, Any], PageItem]] = []
    for item in items:
        if isinstance(item, PageErrorItem):
            errors.append(item)
            continue
        row = page_row(item, run_id)
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
                result.links = _write_batch(session, run_id, rows, page_items, errors)
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
                "target_domain": registered_domain(host)[:253],
                "anchor": link.anchor or None,
                "nofollow": link.nofollow,
                "external": link.external,
            }
    if link_rows:
        stmt = _insert(session, Link).on_conflict_do_nothing(
            index_elements=["run_id", "source_page_id", "target_url"]
        )
        session.execute(stmt, list(link_rows.values()))
    if errors:
        _store_chain_errors(session, run_id, errors)
    return len(link_rows)


#: errors a redirect chain gives to its earlier pages (:class:`PageErrorItem`)
_CHAIN_ERRORS = ("redirect_loop:%", "too_many_redirects:%")


def _store_chain_errors(session: Session, run_id: int, errors: list[PageErrorItem]) -> None:
    """Set the error of a redirect chain on its earlier pages.

    In a crawl farm the earlier hops may have been fetched by other processes whose
    batches are not stored yet: the page row is then created with the error alone, and
    the hop's own item, stored later in the same run, keeps it (:func:`_upsert_pages`).
    """
    rows = {}
    for err in errors:
        row = _url_columns(err.url)
        row.update(fetch_error=err.fetch_error, first_run_id=run_id, last_run_id=run_id)
        rows[row["url"]] = row
    stmt = _insert(session, Page)
    stmt = stmt.on_conflict_do_update(
        index_elements=["url"], set_={"fetch_error": stmt.excluded.fetch_error}
    )
    session.execute(stmt, sorted(rows.values(), key=lambda r: r["url"]))


# -- citations -------------------------------------------------------------------------------
@dataclass(frozen=True)
class CitingCandidate:
    """A page said to link to a university, and where that claim comes from."""

    url: str
    university_id: int
    source: str  # majestic | ahrefs | urls | crawl


def _follow(url: str, redirects: Mapping[str, str], pages: Mapping[str, Any], limit: int) -> str:
    """The last stored URL of a redirect chain that starts at ``url`` (normalised)."""
    seen = {url}
    for _ in range(limit):
        target = redirects.get(url)
        if target is None:
            return url
        nxt = normalize_url(target)
        if nxt in seen or nxt not in pages:
            return url if nxt in seen else nxt
        seen.add(nxt)
        url = nxt
    return url


def resolve_citations(
    engine: Engine,
    run_id: int,
    candidates: Iterable[CitingCandidate],
    redirects: Mapping[str, str] | None = None,
    *,
    max_redirects: int = 10,
) -> Counter[str]:
    """Decide and store the citation of every candidate from the stored pages and links.

    A candidate is ``verified`` when the page its URL leads to (following recorded
    redirects) answered 200 and has a stored link into the university's domains (the
    first such link gives the anchor and target), ``missing`` when it answered 200
    without one, ``error`` otherwise (an HTTP error, a refusal, or never fetched).

    Returns
    -------
    Counter
        Citations by status.
    """
    redirects = {normalize_url(k): v for k, v in (redirects or {}).items()}
    by_url: dict[str, list[CitingCandidate]] = defaultdict(list)
    for cand in candidates:
        by_url[normalize_url(cand.url)].append(cand)
    counts: Counter[str] = Counter()
    if not by_url:
        return counts
    with session_scope(engine) as session:
        domains: dict[int, set[str]] = defaultdict(set)
        for uid, dom in session.execute(
            select(UniversityDomain.university_id, UniversityDomain.domain)
        ):
            domains[uid].add(dom)
        wanted = set(by_url)
        wanted |= {normalize_url(t) for t in redirects.values()}
        pages: dict[str, tuple[int, int | None, str | None]] = {}
        urls = sorted(wanted)
        for start in range(0, len(urls), 500):
            for pid, url, http_status, err in session.execute(
                select(Page.id, Page.url, Page.http_status, Page.fetch_error).where(
                    Page.url.in_(urls[start : start + 500])
                )
            ):
                pages[url] = (pid, http_status, err)
        finals = {url: _follow(url, redirects, pages, max_redirects) for url in by_url}
        final_ids = [pages[u][0] for u in set(finals.values()) if u in pages]
        links: dict[int, list[tuple[str, str | None]]] = defaultdict(list)
        for start in range(0, len(final_ids), 500):
            for src, link_target, link_anchor in session.execute(
                select(Link.source_page_id, Link.target_url, Link.anchor)
                .where(Link.source_page_id.in_(final_ids[start : start + 500]))
                .order_by(Link.id)
            ):
                links[src].append((link_target, link_anchor))
        now = utcnow()
        rows: dict[tuple[int, str], dict[str, Any]] = {}
        for url, cands in by_url.items():
            final = finals[url]
            page = pages.get(final)
            for cand in cands:
                status: str = "error"
                anchor: str | None = None
                target: str | None = None
                if page is not None and page[1] == 200 and page[2] is None:
                    status = "missing"
                    for t, a in links.get(page[0], ()):
                        if in_domains(host_of(t), domains.get(cand.university_id, set())):
                            status, anchor, target = "verified", a, t
                            break
                key = (cand.university_id, url)
                if key in rows and rows[key]["status"] == "verified":
                    continue
                rows[key] = {
                    "run_id": run_id,
                    "university_id": cand.university_id,
                    "citing_url": url,
                    "citing_domain": registered_domain(url)[:253],
                    "page_id": page[0] if page is not None else None,
                    "source": cand.source,
                    "status": status,
                    "anchor": anchor,
                    "target_url": target,
                    "checked_at": now,
                }
        if rows:
            stmt = _insert(session, Citation)
            stmt = stmt.on_conflict_do_update(
                index_elements=["run_id", "university_id", "citing_url"],
                set_={
                    k: stmt.excluded[k]
                    for k in ("page_id", "source", "status", "anchor", "target_url", "checked_at")
                },
            )
            session.execute(stmt, list(rows.values()))
        counts.update(r["status"] for r in rows.values())
    return counts


# -- the run's environment and statistics -------------------------------------------------------
def finalize_run(engine: Engine, run_id: int) -> dict[str, Any]:
    """Recompute the run's environment rows and return its statistics (from the store).

    Outgoing rows: per university and external registered domain, ``link_count`` = links
    of the university's pages to the domain, ``page_count`` = the domain's pages fetched
    (HTTP 200) in the run. Citing rows: per university and citing domain, ``page_count``
    = verified citing pages, ``link_count`` = their stored links into the university.
    """
    with session_scope(engine) as session:
        uni_domains: dict[int, set[str]] = defaultdict(set)
        for uid, dom in session.execute(
            select(UniversityDomain.university_id, UniversityDomain.domain)
        ):
            uni_domains[uid].add(dom)
        fetched_pages = dict(
            session.execute(
                select(Page.registered_domain, func.count())
                .where(Page.last_run_id == run_id, Page.http_status == 200)
                .group_by(Page.registered_domain)
            ).all()
        )
        outgoing: Counter[tuple[int, str]] = Counter()
        for source_uni, dom, n in session.execute(
            select(Page.university_id, Link.target_domain, func.count())
            .join(Page, Page.id == Link.source_page_id)
            .where(Link.run_id == run_id, Link.external, Page.role == "university")
            .group_by(Page.university_id, Link.target_domain)
        ):
            if source_uni is not None and dom not in uni_domains.get(source_uni, ()):
                outgoing[(source_uni, dom)] += n
        citing_pages: dict[tuple[int, str], set[int]] = defaultdict(set)
        for uid, dom, pid in session.execute(
            select(Citation.university_id, Citation.citing_domain, Citation.page_id).where(
                Citation.run_id == run_id, Citation.status == "verified"
            )
        ):
            if pid is not None:
                citing_pages[(uid, dom)].add(pid)
        citing_links: Counter[tuple[int, str]] = Counter()
        all_pids = sorted({p for s in citing_pages.values() for p in s})
        page_links: dict[int, list[str]] = defaultdict(list)
        for start in range(0, len(all_pids), 500):
            for src, host in session.execute(
                select(Link.source_page_id, Link.target_host).where(
                    Link.source_page_id.in_(all_pids[start : start + 500])
                )
            ):
                page_links[src].append(host)
        for (uid, dom), pids in citing_pages.items():
            doms = uni_domains.get(uid, set())
            citing_links[(uid, dom)] = sum(
                1 for pid in pids for host in page_links.get(pid, ()) if in_domains(host, doms)
            )
        session.execute(delete(Environment).where(Environment.run_id == run_id))
        env_rows = [
            {
                "run_id": run_id,
                "university_id": uid,
                "domain": dom,
                "direction": "outgoing",
                "link_count": n,
                "page_count": fetched_pages.get(dom, 0),
            }
            for (uid, dom), n in sorted(outgoing.items())
        ] + [
            {
                "run_id": run_id,
                "university_id": uid,
                "domain": dom,
                "direction": "citing",
                "link_count": citing_links[(uid, dom)],
                "page_count": len(pids),
            }
            for (uid, dom), pids in sorted(citing_pages.items())
        ]
        if env_rows:
            session.execute(_insert(session, Environment), env_rows)
        # statistics
        n_pages, n_fetched, n_bytes = session.execute(
            select(
                func.count(),
                func.count(Page.http_status),
                func.coalesce(func.sum(Page.content_length), 0),
            ).where(Page.last_run_id == run_id)
        ).one()
        errors: Counter[str] = Counter()
        for err, n in session.execute(
            select(Page.fetch_error, func.count())
            .where(Page.last_run_id == run_id, Page.fetch_error.is_not(None))
            .group_by(Page.fetch_error)
        ):
            errors[(err or "").split(":", 1)[0]] += n
        roles = dict(
            session.execute(
                select(Page.role, func.count())
                .where(Page.last_run_id == run_id)
                .group_by(Page.role)
            ).all()
        )
        statuses: Counter[str] = Counter()
        for status, n in session.execute(
            select(Page.http_status, func.count())
            .where(Page.last_run_id == run_id, Page.http_status.is_not(None))
            .group_by(Page.http_status)
        ):
            statuses[str(status)] += n
        n_links = session.execute(
            select(func.count()).select_from(Link).where(Link.run_id == run_id)
        ).scalar_one()
        citations = dict(
            session.execute(
                select(Citation.status, func.count())
                .where(Citation.run_id == run_id)
                .group_by(Citation.status)
            ).all()
        )
    return {
        "pages": int(n_fetched or 0),
        "pages_recorded": int(n_pages or 0),
        "bytes": int(n_bytes or 0),
        "errors": dict(sorted(errors.items())),
        "error_pages": int(sum(errors.values())),
        "roles": {str(k): int(v) for k, v in sorted(roles.items())},
        "http_status": dict(sorted(statuses.items())),
        "links": int(n_links),
        "citations": {str(k): int(v) for k, v in sorted(citations.items())},
        "environment": {
            "outgoing_domains": len(outgoing),
            "citing_domains": len(citing_pages),
        },
        "finalized_at": dt.datetime.now(dt.UTC).isoformat(),
    }


def update_run(engine: Engine, run_id: int, **values: Any) -> None:
    """Set columns of a crawl run (``status``, ``stats``, ``finished_at``, ``error``)."""
    with session_scope(engine) as session:
        run = session.get(CrawlRun, run_id)
        if run is None:
            raise LookupError(f"crawl run {run_id} does not exist")
        for key, value in values.items():
            setattr(run, key, value)
