"""Inline extraction in the item pipeline (``[crawl] extract_inline = true``).

By default pages are stored ``pending`` and ``webometrics extract`` extracts them later.
Inline, every pending HTML page of a batch is extracted before the batch is written:
:func:`extract.page.extract_page` (trafilatura main text, title, date, site name,
language) and the page's word shingles (:class:`extract.shingles.Shingler`, ``[shingle]``
settings). The work runs in ``[crawl] extract_workers`` separate processes (spawned, so
the crawl process's reactor and its GIL are left alone); site-template removal and domain
documents still need ``webometrics extract`` (they look at many pages of a domain at
once).

Time: the extraction's (10-40 ms per typical page), spread over the worker processes,
overlapping the crawl and the writes: a batch's extraction starts as soon as the batch is
full, and up to a few batches are extracted ahead of the (serialised) writes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from core.defaults import CRAWL_EXTRACT_WORKERS
from store.models import utcnow

Row = tuple[str, bytes, str | None, str | None]  # url, body, content type, charset


class PageExtractor:
    """Extract pages with the ``[extract]`` and ``[shingle]`` settings (one process)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        from core.settings import ExtractSettings, ShingleSettings
        from extract.page import ExtractOptions

        extract = ExtractSettings.model_validate(dict(options.get("extract") or {}))
        self.shingle = ShingleSettings.model_validate(dict(options.get("shingle") or {}))
        self.options = ExtractOptions.from_settings(extract)
        self._shinglers: dict[str | None, Any] = {}

    def __call__(self, url: str, body: bytes, content_type: str | None, charset: str | None):
        from extract.page import extract_page
        from extract.shingles import Shingler

        media = content_type.split(";", 1)[0].strip() if content_type else None
        result = extract_page(body, url, self.options, charset=charset, content_type=media)
        columns: dict[str, Any] = {
            "text": result.text or None,
            "title": result.title,
            "date": result.date,
            "sitename": result.sitename,
            "language": result.language,
            "language_score": result.language_score,
            "extraction_status": result.status,
            "extraction_reason": result.reason,
            "extracted_at": utcnow(),
            "shingles": None,
        }
        if result.ok and result.text:
            lang = result.language
            if lang not in self._shinglers:
                s = self.shingle
                self._shinglers[lang] = Shingler(
                    k=s.k, language=lang, stem=s.stem, stopwords=s.stopwords
                )
            hashes = self._shinglers[lang].hashes(result.text)
            columns["shingles"] = hashes.astype("<u8").tobytes()
        return columns


_worker: PageExtractor | None = None  # one per worker process, set by _init


def _init(options: Mapping[str, Any]) -> None:
    global _worker
    _worker = PageExtractor(options)


def _extract(row: Row) -> dict[str, Any]:
    assert _worker is not None
    return _worker(*row)


def _extract_chunk(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [_extract(row) for row in rows]


class Submitted:
    """Extractions already running in the pool; :meth:`many` waits for them (same rows)."""

    def __init__(self, futures: list[Future[list[dict[str, Any]]]], n: int) -> None:
        self.futures = futures
        self.n = n

    def many(self, rows: Sequence[Row]) -> list[dict[str, Any]]:
        if len(rows) != self.n:
            raise ValueError(f"{len(rows)} rows asked, {self.n} submitted")
        return [columns for f in self.futures for columns in f.result()]


class InlineExtractor:
    """What :func:`crawler.storage.store_batch` calls: :meth:`many` on a batch's rows, in
    ``workers`` processes; :meth:`close` stops them."""

    def __init__(self, options: Mapping[str, Any], workers: int = 1) -> None:
        self.pool = ProcessPoolExecutor(
            max_workers=max(1, workers),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init,
            initargs=(dict(options),),
        )

    def many(self, rows: Sequence[Row]) -> list[dict[str, Any]]:
        return self.submit(rows).many(rows)

    def submit(self, rows: Sequence[Row], chunk: int = 8) -> Submitted:
        """Start extracting now (the pipeline does so as soon as a batch is full, so the
        extraction of several batches overlaps the crawl and the writes)."""
        futures = [
            self.pool.submit(_extract_chunk, list(rows[i : i + chunk]))
            for i in range(0, len(rows), chunk)
        ]
        return Submitted(futures, len(rows))

    def __call__(self, url: str, body: bytes, content_type: str | None, charset: str | None):
        return self.many([(url, body, content_type, charset)])[0]

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def inline_extractor(options: Mapping[str, Any]) -> InlineExtractor:
    """The extractor of ``options = {"extract": {...}, "shingle": {...}, "workers": n}``."""
    return InlineExtractor(options, int(options.get("workers") or CRAWL_EXTRACT_WORKERS))
