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

The package: :mod:`.pages` writes the batches of pages, links and redirect-chain errors;
:mod:`.citations` decides the citing candidates; :mod:`.runs` finalises and updates a
crawl run.
"""

from __future__ import annotations

from crawler.storage.citations import CitingCandidate, resolve_citations
from crawler.storage.pages import (
    DEADLOCK_RETRIES,
    BatchResult,
    Extractor,
    extraction_state,
    page_row,
    store_batch,
)
from crawler.storage.runs import failure_recorded, finalize_run, update_run

__all__ = [
    "DEADLOCK_RETRIES",
    "BatchResult",
    "CitingCandidate",
    "Extractor",
    "extraction_state",
    "failure_recorded",
    "finalize_run",
    "page_row",
    "resolve_citations",
    "store_batch",
    "update_run",
]
