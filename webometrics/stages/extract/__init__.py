"""The extract stage: main text, language and shingles of stored pages; then documents.

1. **Pages.** Every :class:`~store.models.Page` whose ``extraction_status`` is
   ``pending`` goes through :func:`extract.extract_page` in a pool of worker processes
   (``[extract] workers``, one per core by default). Bodies are read in id order, in
   chunks, sent compressed to the workers, and the results (text, title, date, site
   name, language and its probability, status and reason, the shingle hashes as
   little-endian ``uint64`` bytes) are written back in batches (``[extract]
   batch_size`` pages), one transaction each. An interrupted run (Ctrl-C,
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
   they were built are rebuilt (all with ``ExtractScope.rebuild_documents``), and
   those of a domain where a document has no term counts yet (built before migration 0005);
   documents left without an ``ok`` page are deleted. A page or domain is *external*
   unless it is a university's own (``Page.role == "university"`` or under a
   :class:`~store.models.UniversityDomain`).

Time: O(total HTML size) for the pages, spread over the workers; O(total text size) for
the documents. Memory: one chunk of bodies plus the texts of one domain at a time.

The package: this module holds :func:`run` (with its :class:`ExtractScope` and
:class:`ExtractResult`) and :func:`reset_status` (``--redo``);
:mod:`.columns` one page's extraction columns; :mod:`.pool` the worker processes and their
watchdog; :mod:`.pages` step 1; :mod:`.documents` step 2.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import ClassVar

from sqlalchemy import Engine, update

from core.choices import EXTRACTION_STATUSES
from core.exceptions import ParameterError
from core.settings import Settings
from store.models import Page
from store.session import session_scope
from webometrics.stages import StageResult, refreshes_figures
from webometrics.stages.extract.columns import (
    WorkerConfig,
    page_columns,
    page_extractor,
    shingle_bytes,
    shingles_of,
)
from webometrics.stages.extract.documents import DocumentsResult, build_documents
from webometrics.stages.extract.pages import PagesResult, extract_pages

__all__ = [
    "REDO_STATUSES",
    "DocumentsResult",
    "ExtractResult",
    "ExtractScope",
    "PagesResult",
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


@dataclass(frozen=True)
class ExtractScope:
    """What one extract run works on.

    Attributes
    ----------
    limit : int, optional
        At most this many pages this run.
    redo : tuple of str
        Statuses to extract again first (``("timeout", "error")``; ``("all",)`` = every
        extracted page).
    documents : bool
        Build the documents after the pages.
    rebuild_documents : bool
        Rebuild every document, not only those with changed pages.
    """

    limit: int | None = None
    redo: tuple[str, ...] = ()
    documents: bool = True
    rebuild_documents: bool = False


#: The fields of :class:`ExtractResult` of a step not run (``reset`` without ``redo``,
#: the documents' without ``documents``): left out of its statistics.
_OPTIONAL = frozenset(
    {
        "reset",
        "documents_seconds",
        "page_documents",
        "domain_documents",
        "page_documents_written",
        "domain_documents_written",
        "documents_deleted",
        "template_blocks",
    }
)


@dataclass(frozen=True, kw_only=True)
class ExtractResult(StageResult):
    """The statistics of an extract run: the pages reset (``redo``), those of step 1
    (:class:`~webometrics.stages.extract.pages.PagesResult`) and of step 2
    (:class:`~webometrics.stages.extract.documents.DocumentsResult`, its seconds as
    ``documents_seconds``); a step not run leaves its fields None."""

    reset: int | None = None
    pages: int
    by_status: dict[str, int]
    workers: int
    worker_restarts: int
    seconds: float
    pages_per_second: float
    documents_seconds: float | None = None
    page_documents: int | None = None
    domain_documents: int | None = None
    page_documents_written: int | None = None
    domain_documents_written: int | None = None
    documents_deleted: int | None = None
    template_blocks: int | None = None

    #: the fields of a step not run
    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = _OPTIONAL


@refreshes_figures
def run(
    engine: Engine,
    settings: Settings,
    scope: ExtractScope | None = None,
    *,
    progress: bool = False,
) -> ExtractResult:
    """Extract the pending pages, then build the documents.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        ``[extract]`` (with ``workers``: worker processes, default one per core, ``0`` =
        in this process; ``batch_size``: pages per committed batch), ``[shingle]``,
        ``[domain]``.
    scope : ExtractScope, optional
        The page limit, the statuses to redo and whether to build the documents; default
        :class:`ExtractScope()`.
    progress : bool
        Show progress bars.

    Returns
    -------
    ExtractResult
        ``pages``, ``by_status``, ``pages_per_second``, ``page_documents``,
        ``domain_documents`` ...
    """
    scope = scope if scope is not None else ExtractScope()
    reset = None
    if scope.redo:
        statuses = REDO_STATUSES if "all" in scope.redo else tuple(scope.redo)
        reset = reset_status(engine, statuses)
    pages = extract_pages(engine, settings, limit=scope.limit, progress=progress)
    if not scope.documents:
        return ExtractResult(reset=reset, **asdict(pages))
    docs = asdict(
        build_documents(engine, settings, rebuild=scope.rebuild_documents, progress=progress)
    )
    return ExtractResult(
        reset=reset, **asdict(pages), documents_seconds=docs.pop("seconds"), **docs
    )
