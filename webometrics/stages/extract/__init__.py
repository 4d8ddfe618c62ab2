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

The package: this module holds :func:`run` and :func:`reset_status` (``--redo``);
:mod:`.columns` one page's extraction columns; :mod:`.pool` the worker processes and their
watchdog; :mod:`.pages` step 1; :mod:`.documents` step 2.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, update

from core.choices import EXTRACTION_STATUSES
from core.exceptions import ParameterError
from core.settings import Settings
from store.models import Page
from store.session import session_scope
from webometrics.stages.extract.columns import (
    WorkerConfig,
    page_columns,
    page_extractor,
    shingle_bytes,
    shingles_of,
)
from webometrics.stages.extract.documents import build_documents
from webometrics.stages.extract.pages import extract_pages

__all__ = [
    "REDO_STATUSES",
    "WorkerConfig",
    "build_documents",
    "extract_pages",
    "page_columns",
    "page_extractor",
    "reset_status",
    "run",
    "shingle_bytes",
    "shingles_of",
]

#: Statuses a user may ask to redo (``--redo``): every outcome of an extraction;
#: ``skipped`` pages were never HTML.
REDO_STATUSES = EXTRACTION_STATUSES


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
