"""Step 2 of the extract stage: the page and domain documents of the ``ok`` external
pages, with their shingles and term counts; only the documents whose pages changed are
rebuilt, and those left without an ``ok`` page are deleted.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
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
#: Domains read per transaction.
_CHUNK = 200


def _university_domains(engine: Engine) -> frozenset[str]:
    with session_scope(engine) as s:
        return frozenset(d.lower() for d in s.scalars(select(UniversityDomain.domain)))


def _external(role: str | None, host: str, uni: frozenset[str]) -> bool:
    return role != "university" and not in_domains(host, uni)


@dataclass(frozen=True)
class DocumentsResult:
    """What step 2 did: the documents stored after it, those it wrote and deleted, the
    template blocks removed from the domains written, and its seconds."""

    page_documents: int
    domain_documents: int
    page_documents_written: int
    domain_documents_written: int
    documents_deleted: int
    template_blocks: int
    seconds: float


@dataclass
class _Stored:
    """What the build starts from: each domain's last extraction (any status), the
    domains with an ``ok`` page, the stored documents by (unit, key), and the domains with
    a document without term counts (built before migration 0005)."""

    latest: dict[str, Any]
    ok_domains: set[str]
    built: dict[tuple[str, str], _Built]
    no_terms: set[str]


def _stored(engine: Engine) -> _Stored:
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
        no_terms: set[str] = set()
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
    return _Stored(latest, ok_domains, built, no_terms)


def _ok_external_urls(engine: Engine, uni: frozenset[str]) -> set[str]:
    with session_scope(engine) as s:
        ok_pages = s.execute(
            select(Page.url, Page.role, Page.host).where(Page.extraction_status == "ok")
        ).all()
    return {url for url, role, host in ok_pages if _external(role, host, uni)}


def _ok_page_rows(s: Any, domains: list[str]) -> Sequence[Any]:
    """The ``ok`` pages of some domains, by domain and id."""
    return s.execute(  # type: ignore[no-any-return]
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


class _Writer:
    """Writes the documents of one build: tells which are stale, counts what it writes
    and remembers the keys that still have an ``ok`` external page."""

    def __init__(
        self, settings: Settings, stored: _Stored, uni: frozenset[str], rebuild: bool
    ) -> None:
        self.builder = DomainDocumentBuilder.from_settings(settings)
        self.k = settings.shingle.k
        self.built = stored.built
        self.uni = uni
        self.rebuild = rebuild
        self.stats: Counter[str] = Counter()
        self.seen_pages: set[str] = set()
        self.seen_domains: set[str] = set()

    def stale(self, unit: str, key: str, changed: Any) -> bool:
        """Whether the document (unit, key) is to be (re)built: asked to, missing, of
        another shingle size, without term counts, or older than its pages' extraction."""
        old = self.built.get((unit, key))
        if self.rebuild or old is None or old[2] != self.k or old[3]:
            return True
        return changed is not None and old[1] is not None and changed > old[1]

    def domain(self, s: Any, domain: str, rows: list[Any]) -> None:
        """Write the stale page documents of a domain's ``ok`` rows and its domain
        document (nothing when it has no external page with text)."""
        pages = [r for r in rows if _external(r.role, r.host, self.uni) and r.text]
        if not pages:
            return
        self.seen_domains.add(domain)
        for r in pages:
            if self.stale("page", r.url, r.extracted_at):
                self._page(s, domain, r)
        doc = self.builder.build([PageText(r.url, r.text, r.language) for r in pages])
        used = set(doc.urls)
        fetched = [r.fetched_at for r in pages if r.url in used and r.fetched_at]
        _upsert(
            s,
            self.built,
            "domain",
            domain,
            page_id=None,
            domain=domain,
            language=doc.language,
            n_pages=doc.n_pages,
            text_length=doc.text_length,
            n_shingles=len(doc.shingles),
            shingles=shingle_bytes(doc.shingles),
            shingle_k=self.k,
            terms=doc.terms,
            n_terms=len(doc.terms),
            fetched_at=max(fetched) if fetched else None,
        )
        self.stats["domain_documents_written"] += 1
        self.stats["template_blocks"] += doc.n_template_blocks

    def _page(self, s: Any, domain: str, r: Any) -> None:
        h = self.builder.page_shingles(r.text, r.language)
        terms = self.builder.page_terms(r.text, r.language)
        _upsert(
            s,
            self.built,
            "page",
            r.url,
            page_id=r.id,
            domain=domain,
            language=r.language,
            n_pages=1,
            text_length=len(r.text),
            n_shingles=len(h),
            shingles=shingle_bytes(h),
            shingle_k=self.k,
            terms=terms,
            n_terms=len(terms),
            fetched_at=r.fetched_at,
        )
        self.stats["page_documents_written"] += 1

    def gone(self) -> list[int]:
        """The documents left without an ``ok`` external page: the pages', then the
        domains'."""
        built = self.built.items()
        pages = [
            i for (unit, key), (i, *_) in built if unit == "page" and key not in self.seen_pages
        ]
        domains = [
            i for (unit, key), (i, *_) in built if unit == "domain" and key not in self.seen_domains
        ]
        return pages + domains


def _delete_and_count(engine: Engine, gone: list[int]) -> tuple[int, int]:
    """Delete the documents ``gone``; return how many page and domain documents are left."""
    with session_scope(engine) as s:
        for j in range(0, len(gone), 500):
            s.execute(delete(Document).where(Document.id.in_(gone[j : j + 500])))
        n_page_docs = s.scalar(select(func.count(Document.id)).where(Document.unit == "page"))
        n_domain_docs = s.scalar(select(func.count(Document.id)).where(Document.unit == "domain"))
    return int(n_page_docs or 0), int(n_domain_docs or 0)


def build_documents(
    engine: Engine,
    settings: Settings,
    *,
    rebuild: bool = False,
    progress: bool = False,
) -> DocumentsResult:
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
    uni = _university_domains(engine)
    stored = _stored(engine)
    writer = _Writer(settings, stored, uni, rebuild)
    dirty = sorted(
        d
        for d in stored.ok_domains
        if d in stored.no_terms or writer.stale("domain", d, stored.latest.get(d))
    )
    dirty_set = set(dirty)
    writer.seen_domains.update(d for d in stored.ok_domains if d not in dirty_set)
    writer.seen_pages.update(_ok_external_urls(engine, uni))
    bar = tqdm(total=len(dirty), desc="documents", unit="domain", disable=not progress)
    for i in range(0, len(dirty), _CHUNK):
        with session_scope(engine) as s:
            rows = _ok_page_rows(s, dirty[i : i + _CHUNK])
            for domain, group in groupby(rows, key=lambda r: r.registered_domain):
                bar.update(1)
                writer.domain(s, domain, list(group))
    bar.close()
    gone = writer.gone()
    n_page_docs, n_domain_docs = _delete_and_count(engine, gone)
    return DocumentsResult(
        page_documents=n_page_docs,
        domain_documents=n_domain_docs,
        page_documents_written=writer.stats["page_documents_written"],
        domain_documents_written=writer.stats["domain_documents_written"],
        documents_deleted=len(gone),
        template_blocks=writer.stats["template_blocks"],
        seconds=round(time.perf_counter() - started, 3),
    )


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
