"""One page's extraction columns: :func:`page_columns` runs :func:`extract.extract_page`
and the shingler on a raw body (in the workers, or inside the crawler through
:func:`page_extractor`) with the options of a :class:`WorkerConfig`; the raw body comes
from the zlib column or the page's WARC record.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.defaults import CRAWL_MAX_RESPONSE_BYTES_CEILING
from core.settings import Settings
from extract.page import ExtractOptions, extract_page
from extract.shingles import Shingler
from store.models import utcnow


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


def _read_warc_body(path: str, offset: int, max_bytes: int) -> bytes | None:
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        fh.seek(offset)
        for record in ArchiveIterator(fh):
            # decoded as a stream, at most the cap plus one byte of it
            return record.content_stream().read(max_bytes + 1)  # type: ignore[no-any-return]
    return None


def raw_body(
    body: bytes | None,
    warc_file: str | None,
    warc_offset: int | None,
    max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING,
) -> bytes | None:
    """The raw body of a stored page: zlib column, else its WARC record; decompressed as a
    stream, so memory stays O(``max_bytes``) whatever it inflates to.

    Raises
    ------
    BodyTooLargeError
        It decodes to more than ``max_bytes`` (``[extract] max_html_bytes``).
    """
    from crawler.warc import BodyTooLargeError, inflate

    raw: bytes | None
    try:
        if body is not None:
            raw = inflate(body, max_bytes, zlib.MAX_WBITS)
        elif warc_file and warc_offset is not None:
            raw = _read_warc_body(warc_file, warc_offset, max_bytes)
        else:
            return None
        if raw is not None and len(raw) > max_bytes:
            raise BodyTooLargeError(f"{len(raw)} bytes")
    except BodyTooLargeError:
        raise BodyTooLargeError(
            f"the stored body decodes to more than [extract] max_html_bytes = {max_bytes:,} "
            "bytes; not read further"
        ) from None
    return raw


def error_columns(reason: str, status: str = "error") -> dict[str, Any]:
    """The extraction columns of a page that could not be extracted (``status``, by
    default ``error``; ``reason`` as its extraction reason)."""
    return {
        "text": None,
        "title": None,
        "date": None,
        "sitename": None,
        "language": None,
        "language_score": None,
        "extraction_status": status,
        "extraction_reason": reason,
        "extracted_at": utcnow(),
        "shingles": None,
    }
