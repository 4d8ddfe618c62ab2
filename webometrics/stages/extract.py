"""The extract stage: main text, language and shingles of stored pages; then documents.

1. **Pages.** Every :class:`~store.models.Page` whose ``extraction_status`` is
   ``pending`` goes through :func:`extract.extract_page` in a pool of worker processes
   (one per core by default). Bodies are read in id order, in chunks, sent compressed to
   the workers, and the results (text, title, date, site name, language and its
   probability, status and reason, the shingle hashes as little-endian ``uint64`` bytes)
   are written back in batches, one transaction each. An interrupted run (Ctrl-C,
   ``kill``) keeps every committed batch; the next run takes up the pages still
   ``pending``. Each page has the soft time cap of :func:`extract.extract_page`; a worker
   that stops answering beyond twice that cap is ended by a watchdog, the pool is rebuilt
   and the pages it held are retried one at a time, so a page that kills its worker twice
   is marked ``error`` and never blocks the run.
2. **Documents.** One :class:`~store.models.Document` per ``ok`` external page (unit
   ``page``) and one per external registered domain (unit ``domain``, the union of its
   pages' shingles, :class:`extract.documents.DomainDocumentBuilder`, site templates
   removed by default). Each also gets its term counts (``Document.terms``, at most
   ``[domain] max_terms``, :mod:`extract.terms`): a page's from the text its shingles
   come from, in its detected language; a domain's summed over the same sampled,
   template-free page texts as its shingles. Only documents whose pages changed since
   they were built are rebuilt (all with ``rebuild_documents=True``), and those of a
   domain where a document has no term counts yet (built before migration 0005);
   documents left without an ``ok`` page are deleted. A page or domain is *external*
   unless it is a university's own (``Page.role == "university"`` or under a
   :class:`~store.models.UniversityDomain`).

Time: O(total HTML size) for the pages, spread over the workers; O(total text size) for
the documents. Memory: one chunk of bodies plus the texts of one domain at a time.
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import multiprocessing
import os
import signal
import threading
import time
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import numpy as np
from sqlalchemy import Engine, delete, func, select, update
from tqdm import tqdm

from core.domains import in_domains
from core.exceptions import ParameterError
from core.settings import Settings
from extract.documents import DomainDocumentBuilder, PageText
from extract.page import ExtractOptions, extract_page
from extract.shingles import Shingler
from store.models import Document, Page, UniversityDomain, utcnow
from store.session import session_scope

log = logging.getLogger(__name__)

#: Statuses a user may ask to redo (``--redo``); ``skipped`` pages were never HTML.
REDO_STATUSES = ("ok", "empty", "binary", "too-large", "timeout", "language-filtered", "error")

_Task = tuple[int, str, bytes | None, str | None, str | None, str | None, int | None]
#: A stored document as :func:`build_documents` sees it: id, built at, shingle k, and
#: whether its term counts are missing (built before migration 0005).
_Built = tuple[int, Any, int | None, bool]


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs: the extraction and shingle options, and when its watchdog
    ends it (``hard_seconds``; by default twice the soft cap plus 10 s)."""

    options: ExtractOptions
    k: int
    stem: bool
    stopwords: bool
    hard_seconds: float | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkerConfig:
        options = ExtractOptions.from_settings(settings.extract)
        soft = options.timeout_seconds
        return cls(
            options,
            settings.shingle.k,
            settings.shingle.stem,
            settings.shingle.stopwords,
            None if soft is None else 2 * soft + 10,
        )


def shingle_bytes(hashes: np.ndarray) -> bytes:
    """``uint64`` hashes as little-endian bytes (the storage form of ``shingles``)."""
    return np.asarray(hashes, dtype="<u8").tobytes()


def shingles_of(data: bytes | None) -> np.ndarray:
    """The ``uint64`` array of stored shingle bytes."""
    if not data:
        return np.empty(0, dtype=np.uint64)
    return np.frombuffer(data, dtype="<u8").astype(np.uint64)


def page_columns(
    url: str,
    body: bytes | None,
    content_type: str | None,
    charset: str | None,
    config: WorkerConfig,
    shingler: Shingler | None = None,
) -> dict[str, Any]:
    """The extraction columns of a :class:`~store.models.Page` for one raw body.

    Used by the workers and by the crawler's inline extraction; never raises on bad
    input (see :func:`extract.extract_page`).
    """
    result = extract_page(body, url, config.options, charset=charset, content_type=content_type)
    shingles = None
    if result.ok:
        sh = shingler or Shingler(
            k=config.k, language=result.language, stem=config.stem, stopwords=config.stopwords
        )
        if sh.language != result.language:
            sh = Shingler(
                k=config.k, language=result.language, stem=config.stem, stopwords=config.stopwords
            )
        shingles = shingle_bytes(sh.hashes(result.text))
    return {
        "text": result.text or None,
        "title": _cut(result.title, 2000),
        "date": _cut(result.date, 40),
        "sitename": _cut(result.sitename, 500),
        "language": _cut(result.language, 10),
        "language_score": result.language_score,
        "extraction_status": result.status,
        "extraction_reason": result.reason,
        "extracted_at": utcnow(),
        "shingles": shingles,
    }


def page_extractor(
    settings: Settings,
) -> Callable[[str, bytes | None, str | None, str | None], dict[str, Any]]:
    """``extractor(url, body, content_type, charset) -> Page columns`` with the run's
    settings, for extraction inside the crawler (``[crawl] extract_inline``)."""
    config = WorkerConfig.from_settings(settings)

    def extractor(
        url: str, body: bytes | None, content_type: str | None, charset: str | None
    ) -> dict[str, Any]:
        return page_columns(url, body, content_type, charset, config)

    return extractor


def _cut(value: str | None, size: int) -> str | None:
    return value[:size] if value else value


def _read_warc_body(path: str, offset: int) -> bytes | None:
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        fh.seek(offset)
        for record in ArchiveIterator(fh):
            return record.content_stream().read()  # type: ignore[no-any-return]
    return None


def _raw_body(body: bytes | None, warc_file: str | None, warc_offset: int | None) -> bytes | None:
    """The raw body of a stored page: zlib column, else its WARC record."""
    if body is not None:
        return zlib.decompress(body)
    if warc_file and warc_offset is not None:
        return _read_warc_body(warc_file, warc_offset)
    return None


def _watch_parent(parent: int) -> None:
    """End this worker when its parent is gone (``kill -9`` of the run)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _worker_init() -> None:
    # Ctrl-C goes to the whole process group: the parent decides, workers carry on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    # load trafilatura, htmldate and the language model now, outside the time caps
    extract_page(
        "<html><head><title>t</title></head><body><article><p>"
        + "Warm-up text of the worker process, written once. " * 5
        + "</p></article></body></html>"
    )


def _work(task: _Task, config: WorkerConfig) -> tuple[int, dict[str, Any]]:
    """Extract one page in a worker process (under the watchdog)."""
    page_id, url, body, content_type, charset, warc_file, warc_offset = task
    hard = config.hard_seconds
    if hard is not None:
        faulthandler.dump_traceback_later(hard, exit=True)
    try:
        try:
            raw = _raw_body(body, warc_file, warc_offset)
        except (OSError, zlib.error, ValueError) as exc:
            return page_id, _error_columns(f"cannot read the stored body: {exc}")
        return page_id, page_columns(url, raw, content_type, charset, config)
    finally:
        if hard is not None:
            faulthandler.cancel_dump_traceback_later()


def _error_columns(reason: str) -> dict[str, Any]:
    return {
        "text": None,
        "title": None,
        "date": None,
        "sitename": None,
        "language": None,
        "language_score": None,
        "extraction_status": "error",
        "extraction_reason": reason,
        "extracted_at": utcnow(),
        "shingles": None,
    }


def _pending_tasks(engine: Engine, chunk: int, limit: int | None) -> Iterator[_Task]:
    last_id, given = 0, 0
    while limit is None or given < limit:
        size = chunk if limit is None else min(chunk, limit - given)
        with session_scope(engine) as s:
            rows = s.execute(
                select(
                    Page.id,
                    Page.url,
                    Page.body,
                    Page.content_type,
                    Page.charset,
                    Page.warc_file,
                    Page.warc_offset,
                )
                .where(Page.extraction_status == "pending", Page.id > last_id)
                .order_by(Page.id)
                .limit(size)
            ).all()
        if not rows:
            return
        for row in rows:
            yield tuple(row)  # type: ignore[misc]
        last_id = rows[-1].id
        given += len(rows)


def _flush(engine: Engine, buffer: list[dict[str, Any]]) -> None:
    if not buffer:
        return
    with session_scope(engine) as s:
        s.execute(update(Page), buffer)
    buffer.clear()


class _Pool:
    """A process pool that can be rebuilt after a worker died."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.executor: ProcessPoolExecutor | None = None
        self.start()

    def start(self) -> None:
        self.executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
        )

    def restart(self) -> None:
        self.close(kill=True)
        self.start()

    def submit(self, task: _Task, config: WorkerConfig) -> Future[tuple[int, dict[str, Any]]]:
        assert self.executor is not None
        return self.executor.submit(_work, task, config)

    def close(self, *, kill: bool = False) -> None:
        ex, self.executor = self.executor, None
        if ex is None:
            return
        if kill:
            for proc in list(getattr(ex, "_processes", {}).values()):
                with contextlib.suppress(Exception):
                    proc.kill()
        ex.shutdown(wait=not kill, cancel_futures=True)


def extract_pages(
    engine: Engine,
    settings: Settings,
    *,
    workers: int | None = None,
    batch_size: int = 100,
    limit: int | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Extract every pending page (step 1 of the stage); return the statistics.

    Parameters
    ----------
    workers : int, optional
        Worker processes; default one per core. ``0``: in this process (no pool, no
        watchdog; the soft time cap still holds).
    batch_size : int
        Pages per transaction.
    limit : int, optional
        Extract at most this many pages.
    progress : bool
        Show a tqdm progress bar.
    """
    if batch_size < 1:
        raise ParameterError(f"batch_size={batch_size}: must be >= 1")
    config = WorkerConfig.from_settings(settings)
    with session_scope(engine) as s:
        total = int(
            s.scalar(select(func.count(Page.id)).where(Page.extraction_status == "pending")) or 0
        )
    if limit is not None:
        total = min(total, limit)
    n_workers = (os.cpu_count() or 1) if workers is None else workers
    statuses: Counter[str] = Counter()
    started = time.perf_counter()
    buffer: list[dict[str, Any]] = []
    bar = tqdm(total=total, desc="extract", unit="page", disable=not progress)

    def record(page_id: int, cols: dict[str, Any]) -> None:
        statuses[cols["extraction_status"]] += 1
        buffer.append({"id": page_id, **cols})
        bar.update(1)
        if len(buffer) >= batch_size:
            _flush(engine, buffer)

    tasks = _pending_tasks(engine, chunk=max(batch_size, 4 * max(n_workers, 1)), limit=limit)
    n_restarts = 0
    try:
        if n_workers == 0:
            for task in tasks:
                page_id, cols = _work_inline(task, config)
                record(page_id, cols)
        else:
            n_restarts = _run_pool(tasks, config, n_workers, record)
        _flush(engine, buffer)
    except BaseException:
        try:
            _flush(engine, buffer)  # keep what is done; the rest stays pending
        except Exception:
            log.exception("could not store the last %d extracted pages", len(buffer))
        raise
    finally:
        bar.close()
    seconds = time.perf_counter() - started
    done = sum(statuses.values())
    return {
        "pages": done,
        "by_status": dict(sorted(statuses.items())),
        "workers": n_workers,
        "worker_restarts": n_restarts,
        "seconds": round(seconds, 3),
        "pages_per_second": round(done / seconds, 2) if seconds > 0 and done else 0.0,
    }


def _work_inline(task: _Task, config: WorkerConfig) -> tuple[int, dict[str, Any]]:
    """Extract one page in this process (no watchdog: it would end this process)."""
    page_id, url, body, content_type, charset, warc_file, warc_offset = task
    try:
        raw = _raw_body(body, warc_file, warc_offset)
    except (OSError, zlib.error, ValueError) as exc:
        return page_id, _error_columns(f"cannot read the stored body: {exc}")
    return page_id, page_columns(url, raw, content_type, charset, config)


def _run_pool(
    tasks: Iterator[_Task],
    config: WorkerConfig,
    n_workers: int,
    record: Callable[[int, dict[str, Any]], None],
) -> int:
    """Feed the tasks to the pool; isolate the pages that kill a worker. Returns the
    number of pool restarts."""
    pool = _Pool(n_workers)
    inflight: dict[Future[tuple[int, dict[str, Any]]], _Task] = {}
    suspects: deque[_Task] = deque()
    crashes: Counter[int] = Counter()
    restarts = 0
    exhausted = False
    try:
        while True:
            # quarantine: after a crash, the pages that were in flight go one at a time
            limit = 1 if suspects else 2 * n_workers
            while len(inflight) < limit:
                if suspects:
                    if inflight:
                        break
                    task = suspects.popleft()
                elif not exhausted:
                    try:
                        task = next(tasks)
                    except StopIteration:
                        exhausted = True
                        break
                else:
                    break
                inflight[pool.submit(task, config)] = task
            if not inflight:
                break
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                task = inflight.pop(future)
                try:
                    page_id, cols = future.result()
                except BrokenProcessPool:
                    broken = True
                    inflight[future] = task  # handled with the rest below
                    continue
                record(page_id, cols)
            if broken:
                restarts += 1
                log.warning(
                    "a worker died; restarting the pool (%d pages in flight)", len(inflight)
                )
                for task in inflight.values():
                    crashes[task[0]] += 1
                    if crashes[task[0]] >= 2:
                        hard = config.hard_seconds
                        record(
                            task[0],
                            _error_columns(
                                "the worker process died twice while extracting this page "
                                f"(watchdog after {hard:g} s, or out of memory)"
                                if hard
                                else "the worker process died twice while extracting this page"
                            ),
                        )
                    else:
                        suspects.append(task)
                inflight.clear()
                pool.restart()
    finally:
        pool.close(kill=True)
    return restarts


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


def reset_status(engine: Engine, statuses: tuple[str, ...]) -> int:
    """Mark the pages of some statuses ``pending`` again (``--redo``); return how many."""
    unknown = [st for st in statuses if st not in REDO_STATUSES]
    if unknown:
        raise ParameterError(
            f"cannot redo {', '.join(unknown)}: the statuses are {', '.join(REDO_STATUSES)} "
            "(or 'all')"
        )
    with session_scope(engine) as s:
        result = s.execute(
            update(Page)
            .where(Page.extraction_status.in_(statuses))
            .values(extraction_status="pending")
        )
        return int(getattr(result, "rowcount", 0) or 0)


def run(
    engine: Engine,
    settings: Settings,
    *,
    workers: int | None = None,
    batch_size: int = 100,
    limit: int | None = None,
    redo: tuple[str, ...] = (),
    documents: bool = True,
    rebuild_documents: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Extract the pending pages, then build the documents.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        ``[extract]``, ``[shingle]``, ``[domain]``.
    workers : int, optional
        Worker processes (default: one per core; ``0`` = in this process).
    batch_size : int
        Pages per committed batch.
    limit : int, optional
        At most this many pages this run.
    redo : tuple of str
        Statuses to extract again first (``("timeout", "error")``; ``("all",)`` = every
        extracted page).
    documents : bool
        Build the documents after the pages.
    rebuild_documents : bool
        Rebuild every document, not only those with changed pages.
    progress : bool
        Show progress bars.

    Returns
    -------
    dict
        ``pages``, ``by_status``, ``pages_per_second``, ``page_documents``,
        ``domain_documents`` ... (JSON-able).
    """
    stats: dict[str, Any] = {}
    if redo:
        statuses = REDO_STATUSES if "all" in redo else tuple(redo)
        stats["reset"] = reset_status(engine, statuses)
    stats.update(
        extract_pages(
            engine,
            settings,
            workers=workers,
            batch_size=batch_size,
            limit=limit,
            progress=progress,
        )
    )
    if documents:
        docs = build_documents(engine, settings, rebuild=rebuild_documents, progress=progress)
        stats["documents_seconds"] = docs.pop("seconds")
        stats.update(docs)
    return stats
