"""Inline extraction in the item pipeline (``[crawl] extract_inline = true``).

By default pages are stored ``pending`` and ``webometrics extract`` extracts them later
in worker processes. Inline, the pipeline's storage thread runs
:func:`extract.page.extract_page` (trafilatura main text, title, date, site name,
language) and the page's word shingles (:class:`extract.shingles.Shingler`, ``[shingle]``
settings) on every pending HTML page before its batch is written, so pages arrive
extracted; site-template removal and domain documents still need ``webometrics extract``
(they look at many pages of a domain at once). The hard time cap of ``extract_page``
works only in a main thread, so inline extraction runs without it.

Time: the extraction's (10-40 ms per typical page), on the storage thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.models import utcnow


def inline_extractor(options: Mapping[str, Any]) -> Any:
    """An ``extractor(url, body, content_type, charset) -> page columns`` for
    :func:`crawler.storage.store_batch`, from the ``[extract]`` and ``[shingle]`` settings
    (``options = {"extract": {...}, "shingle": {...}}``)."""
    from extract.page import ExtractOptions, extract_page
    from extract.shingles import Shingler
    from webometrics.settings import ExtractSettings, ShingleSettings

    extract = ExtractSettings.model_validate(dict(options.get("extract") or {}))
    shingle = ShingleSettings.model_validate(dict(options.get("shingle") or {}))
    opts = ExtractOptions.from_settings(extract)
    shinglers: dict[str | None, Shingler] = {}

    def run(url: str, body: bytes, content_type: str | None, charset: str | None) -> dict:
        media = content_type.split(";", 1)[0].strip() if content_type else None
        result = extract_page(body, url, opts, charset=charset, content_type=media)
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
            if lang not in shinglers:
                shinglers[lang] = Shingler(
                    k=shingle.k, language=lang, stem=shingle.stem, stopwords=shingle.stopwords
                )
            hashes = shinglers[lang].hashes(result.text)
            columns["shingles"] = hashes.astype("<u8").tobytes()
        return columns

    return run
