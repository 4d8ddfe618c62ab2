"""The citations of a crawl run: each citing candidate (a page said to link to a
university) decided from the stored pages and links, following recorded redirects.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select

from core.domains import host_of, in_domains, normalize_url
from core.entities import KEY_MAX_LENGTH
from crawler.storage.pages import dialect_insert
from store.entities import rules_of
from store.models import Citation, Link, Page, UniversityDomain, utcnow
from store.session import session_scope


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
        sites = rules_of(session)  # the citing page's site: the stored rules decide
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
                    "citing_domain": sites.key(url)[:KEY_MAX_LENGTH],
                    "page_id": page[0] if page is not None else None,
                    "source": cand.source,
                    "status": status,
                    "anchor": anchor,
                    "target_url": target,
                    "checked_at": now,
                }
        if rows:
            stmt = dialect_insert(session, Citation)
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
