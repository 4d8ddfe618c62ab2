"""Step 2 of the extract stage: the page and domain documents of the ``ok`` external
pages, with their shingles and term counts; only the documents whose pages changed are
rebuilt, and those left without an ``ok`` page are deleted.
"""

from __future__ import annotations

import time
from collections import Counter
from itertools import groupby
from typing import Any

from sqlalchemy import Engine, delete, func, select, update
from tqdm import tqdm

from core.domains import in_domains
from core.settings import Settings
from extract.documents import DomainDocumentBuilder, PageText
from store.models import Document, Page, UniversityDomain, utcnow
from store.session import session_scope
from webometrics.stages.extract.columns import shingle_bytes

#: A stored document as :func:`build_documents` sees it: id, built at, shingle k, and
#: whether its term counts are missing (built before migration 0005).
_Built = tuple[int, Any, int | None, bool]


def _university_domains(engine: Engine) -> frozenset[str]:
    with session_scope(engine) as s:
        return frozenset(d.lower() for d in s.scalars(select(UniversityDomain.domain)))


def _external(role: str | None, host: str, uni: frozenset[str]) -> bool:
    return role != "university" and not in_domains(host, uni)


def build_documents(
    engine: Engine,
    settings: Settings,
    *,
    rebuild: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Write the page and domain documents of the ``ok`` external pages (step 2).

    Parameters
    ----------
    rebuild : bool
        Rebuild every document (e.g. after changing ``[shingle]`` or ``[domain]``);
        otherwise only those whose pages were extracted after the document was built,
        and the domains where a document has no term counts (built before migration
        0005).
    progress : bool
        Show tqdm progress bars.
    """
    started = time.perf_counter()
    builder = DomainDocumentBuilder.from_settings(settings)
    k = settings.shingle.k
    uni = _university_domains(engine)
    with session_scope(engine) as s:
        # a domain changes when any of its pages is (re-)extracted, whatever the status
        latest = {
            d: t
            for d, t in s.execute(
                select(Page.registered_domain, func.max(Page.extracted_at))
                .where(Page.extracted_at.is_not(None))
                .group_by(Page.registered_domain)
            ).all()
        }
        ok_domains = set(
            s.scalars(
                select(Page.registered_domain).where(Page.extraction_status == "ok").distinct()
            )
        )
        built: dict[tuple[str, str], _Built] = {}
        no_terms: set[str] = set()  # domains with a document built before migration 0005
        for doc_id, unit, key, domain, created, shingle_k, lacks_terms in s.execute(
            select(
                Document.id,
                Document.unit,
                Document.key,
                Document.domain,
                Document.created_at,
                Document.shingle_k,
                Document.terms.is_(None),
            )
        ).all():
            built[(unit, key)] = (doc_id, created, shingle_k, bool(lacks_terms))
            if lacks_terms:
                no_terms.add(domain)

    def stale(unit: str, key: str, changed: Any) -> bool:
        old = built.get((unit, key))
        if rebuild or old is None or old[2] != k or old[3]:
            return True
        return changed is not None and old[1] is not None and changed > old[1]

    dirty = sorted(d for d in ok_domains if d in no_terms or stale("domain", d, latest.get(d)))
    stats: Counter[str] = Counter()
    seen_pages: set[str] = set()
    seen_domains: set[str] = set()
    dirty_set = set(dirty)
    seen_domains.update(d for d in ok_domains if d not in dirty_set)
    with session_scope(engine) as s:
        ok_pages = s.execute(
            select(Page.url, Page.role, Page.host).where(Page.extraction_status == "ok")
        ).all()
    seen_pages.update(url for url, role, host in ok_pages if _external(role, host, uni))
    bar = tqdm(total=len(dirty), desc="documents", unit="domain", disable=not progress)
    chunk = 200
    for i in range(0, len(dirty), chunk):
        domains = dirty[i : i + chunk]
        with session_scope(engine) as s:
            rows = s.execute(
                select(
                    Page.id,
                    Page.url,
                    Page.registered_domain,
                    Page.role,
                    Page.host,
                    Page.text,
                    Page.language,
                    Page.fetched_at,
                    Page.extracted_at,
                )
                .where(Page.extraction_status == "ok", Page.registered_domain.in_(domains))
                .order_by(Page.registered_domain, Page.id)
            ).all()
            for domain, group in groupby(rows, key=lambda r: r.registered_domain):
                pages = [r for r in group if _external(r.role, r.host, uni) and r.text]
                bar.update(1)
                if not pages:
                    continue
                seen_domains.add(domain)
                for r in pages:
                    if stale("page", r.url, r.extracted_at):
                        h = builder.page_shingles(r.text, r.language)
                        terms = builder.page_terms(r.text, r.language)
                        _upsert(
                            s,
                            built,
                            "page",
                            r.url,
                            page_id=r.id,
                            domain=domain,
                            language=r.language,
                            n_pages=1,
                            text_length=len(r.text),
                            n_shingles=len(h),
                            shingles=shingle_bytes(h),
                            shingle_k=k,
                            terms=terms,
                            n_terms=len(terms),
                            fetched_at=r.fetched_at,
                        )
                        stats["page_documents_written"] += 1
                doc = builder.build([PageText(r.url, r.text, r.language) for r in pages])
                used = set(doc.urls)
                fetched = [r.fetched_at for r in pages if r.url in used and r.fetched_at]
                _upsert(
                    s,
                    built,
                    "domain",
                    domain,
                    page_id=None,
                    domain=domain,
                    language=doc.language,
                    n_pages=doc.n_pages,
                    text_length=doc.text_length,
                    n_shingles=len(doc.shingles),
                    shingles=shingle_bytes(doc.shingles),
                    shingle_k=k,
                    terms=doc.terms,
                    n_terms=len(doc.terms),
                    fetched_at=max(fetched) if fetched else None,
                )
                stats["domain_documents_written"] += 1
                stats["template_blocks"] += doc.n_template_blocks
    bar.close()
    # documents left without an ok external page
    gone_pages = [
        doc_id
        for (unit, key), (doc_id, *_) in built.items()
        if unit == "page" and key not in seen_pages
    ]
    gone_domains = [
        doc_id
        for (unit, key), (doc_id, *_) in built.items()
        if unit == "domain" and key not in seen_domains
    ]
    with session_scope(engine) as s:
        for ids in (gone_pages, gone_domains):
            for j in range(0, len(ids), 500):
                s.execute(delete(Document).where(Document.id.in_(ids[j : j + 500])))
        n_page_docs = s.scalar(select(func.count(Document.id)).where(Document.unit == "page"))
        n_domain_docs = s.scalar(select(func.count(Document.id)).where(Document.unit == "domain"))
    return {
        "page_documents": int(n_page_docs or 0),
        "domain_documents": int(n_domain_docs or 0),
        "page_documents_written": stats["page_documents_written"],
        "domain_documents_written": stats["domain_documents_written"],
        "documents_deleted": len(gone_pages) + len(gone_domains),
        "template_blocks": stats["template_blocks"],
        "seconds": round(time.perf_counter() - started, 3),
    }


def _upsert(
    s: Any, built: dict[tuple[str, str], _Built], unit: str, key: str, **values: Any
) -> None:
    old = built.get((unit, key))
    now = utcnow()
    if old is None:
        doc = Document(unit=unit, key=key, created_at=now, **values)
        s.add(doc)
        s.flush()
        built[(unit, key)] = (doc.id, now, values.get("shingle_k"), False)
    else:
        s.execute(update(Document).where(Document.id == old[0]).values(created_at=now, **values))
        built[(unit, key)] = (old[0], now, values.get("shingle_k"), False)
