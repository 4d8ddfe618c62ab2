"""``webometrics import warc``: WARC/ARC records as pages (writing them during a crawl:
:mod:`crawler.warc_writer`).

:func:`import_warc` reads WARC and ARC files (gzip or not; ARC through warcio's
``arc2warc``), keeps ``response`` and ``resource`` records of http(s) URLs, decodes
chunked and compressed payloads, and stores each record as a page of a new crawl run of
kind ``import-warc`` (a university's page when its host is in a stored university's
domains, else an external page), with the links :mod:`crawler.links` finds in HTML pages
(all external links of university pages; links into universities of other pages).

Every payload is bounded as a crawl's responses are (``[crawl] max_response_bytes``,
never over :data:`core.defaults.CRAWL_MAX_RESPONSE_BYTES_CEILING`): payloads are
decompressed as streams and read up to the cap, so a record whose gzip-encoded payload
inflates to gigabytes (a decompression bomb in a small archive) costs at most the cap in
memory and is stored as a page with ``fetch_error`` ``too_large: ...`` and no body.

Time: linear in the archive size; memory: one record (at most the cap) and one batch of
pages.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.choices import is_text_media_type
from core.defaults import CRAWL_MAX_RESPONSE_BYTES_CEILING
from core.exceptions import ConfigError, StageError
from crawler.items import PageItem

if TYPE_CHECKING:
    from sqlalchemy import Engine


def _parse_date(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y%m%d%H%M%S"):
        try:
            return dt.datetime.strptime(value, fmt).replace(tzinfo=dt.UTC)
        except ValueError:
            continue
    return None


class NotAnArchiveError(ConfigError):
    """A file given as WARC/ARC is empty or does not start like a WARC or ARC file.

    Raised before anything is stored (exit code 2).
    """


class DamagedArchiveError(StageError):
    """A WARC/ARC file ends inside a record or gzip member, or holds an unreadable record.

    The records before the damage are read (and stored by :func:`import_warc`); the
    damaged record and what follows are not.

    Attributes
    ----------
    path : Path
        The file.
    offset : int
        Byte offset in the file where the damage was found (the start of the damaged
        record or gzip member, or the end of the file when it is cut).
    reason : str
        What is wrong.
    note : str
        What was kept and what to do, appended to the message.
    """

    def __init__(self, path: str | Path, offset: int, reason: str, *, note: str = "") -> None:
        self.path, self.offset, self.reason = Path(path), offset, reason
        super().__init__(f"{path}: byte {offset}: {reason}" + (f"; {note}" if note else ""))


def sniff(path: str | Path) -> str:
    """The format of a WARC/ARC file from its first line: ``"warc"``, ``"warc-0"`` (a
    pre-1.0 WARC such as ClueWeb09's WARC/0.18) or ``"arc"``.

    Raises
    ------
    NotAnArchiveError
        The file is empty, is a damaged gzip file, or starts with anything else.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "notes.warc"
    >>> _ = f.write_bytes(b"hello\\n")
    >>> sniff(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    crawler.warc.NotAnArchiveError: ...notes.warc: not a WARC or ARC file: it starts with ...
    """
    try:
        with _open_maybe_gzip(path) as fh:
            line = fh.readline(4096)
            while line in (b"\r\n", b"\n"):
                line = fh.readline(4096)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise NotAnArchiveError(
            f"{path}: not a WARC or ARC file: its gzip compression is broken at the start "
            f"({exc}); nothing was imported"
        ) from None
    if not line:
        raise NotAnArchiveError(
            f"{path}: the file is empty (0 records); nothing was imported: check the "
            "download or the file name"
        )
    if m := re.match(rb"^WARC/(\d+)\.\d+\r?\n$", line):
        return "warc-0" if m.group(1) == b"0" else "warc"
    if _ARC_LINE.match(line):
        return "arc"
    raise NotAnArchiveError(
        f"{path}: not a WARC or ARC file: it starts with {line[:40]!r} (a WARC file "
        "starts with a `WARC/1.x` line, an ARC file with a `filedesc://` line; both may be "
        "gzip-compressed); nothing was imported"
    )


def iter_records(
    path: str | Path, max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> Iterator[dict[str, Any]]:
    """The http(s) ``response``/``resource`` records of a WARC or ARC file.

    Yields dicts with ``url``, ``status``, ``headers`` (list of pairs), ``body`` (decoded
    payload), ``date`` and ``offset`` (of the record in the file; None where records
    cannot be seeked to). A payload that decodes to more than ``max_bytes`` (bounded by
    the ceiling) is not kept: its ``body`` is empty and ``too_large`` says why
    (:func:`too_large_reason`); memory stays O(``max_bytes``) whatever it inflates to.

    WARC 1.x files are read strictly with warcio: a record shorter than its
    Content-Length, a gzip member cut before its end, a gzip stream that does not
    decompress, or a record warcio cannot parse raise :class:`DamagedArchiveError` after
    the records before it were yielded. ARC files and pre-1.0 WARC files that warcio
    rejects are read again leniently (:func:`_lenient_records`): gzip files compressed
    as one member, and old WARC 0.18 files (ClueWeb09) whose Content-Length values are
    wrong; there a cut gzip stream is found (an uncompressed file cut inside its last
    record is not: lengths are not trusted).

    Raises
    ------
    NotAnArchiveError
        The file is empty or not a WARC/ARC file (nothing is yielded).
    DamagedArchiveError
        The file is cut or damaged after the records yielded so far.
    """
    from warcio.exceptions import ArchiveLoadFailed

    fmt = sniff(path)
    done = 0
    try:
        with open(path, "rb") as fh:
            for rec in _records(fh, path=path, max_bytes=max_bytes):
                done += 1
                yield rec
        return
    except ArchiveLoadFailed as exc:
        if fmt == "warc":
            reason = str(exc).strip() or "a bad record header"
            raise DamagedArchiveError(path, getattr(exc, "offset", 0), reason) from None
    # an ARC or pre-1.0 WARC file warcio rejects: read it again leniently
    n = 0
    with open(path, "rb") as raw:
        fh = _open_maybe_gzip(raw)
        try:
            for rec in _lenient_records(fh, max_bytes):
                n += 1
                if n > done:
                    yield rec
        except (EOFError, zlib.error, OSError) as exc:
            if fh is raw:
                raise
            raise DamagedArchiveError(
                path, raw.tell(), f"the gzip stream ends or breaks inside a record ({exc})"
            ) from None


def _open_maybe_gzip(path_or_file: Any) -> Any:
    """A gzip reader over a file (path or open binary file) when it starts with the gzip
    magic bytes, else the plain file."""
    import gzip

    if isinstance(path_or_file, (str, Path)):
        with open(path_or_file, "rb") as fh:
            magic = fh.read(2)
        return gzip.open(path_or_file, "rb") if magic == b"\x1f\x8b" else open(path_or_file, "rb")
    pos = path_or_file.tell()
    magic = path_or_file.read(2)
    path_or_file.seek(pos)
    return gzip.GzipFile(fileobj=path_or_file, mode="rb") if magic == b"\x1f\x8b" else path_or_file


_WARC_LINE = re.compile(rb"^WARC/\d+\.\d+\r?\n$")
_ARC_LINE = re.compile(rb"^(\S+://\S*) (\S+) (\d{14}) (\S*) (\d+)\r?\n$")


def _lines(fh: Any, size: int = 1 << 16) -> Iterator[bytes]:
    """The lines of ``fh``, a line longer than ``size`` in pieces (memory O(size))."""
    while line := fh.readline(size):
        yield line


def _lenient_records(
    fh: Any, max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> Iterator[dict[str, Any]]:
    """Records of a damaged WARC or ARC stream, whatever their Content-Length values say.

    A WARC record starts at a ``WARC/x.y`` line followed by a ``WARC-`` header line; an
    ARC record at a line ``URL IP YYYYMMDDhhmmss content-type length``. Memory: one
    record, at most ``max_bytes`` and its headers (a longer one is recorded too large).
    """
    lines = _lines(fh)
    block: list[bytes] = []
    size = 0
    arc: re.Match[bytes] | None = None
    keep = max_bytes + (1 << 16)  # the payload and its headers

    def flush() -> dict[str, Any] | None:
        if not block:
            return None
        data = b"".join(block)
        if arc is not None:
            rec = _parse_arc_block(arc, data, max_bytes)
        else:
            rec = _parse_block(data, max_bytes)
        if rec is not None and size > keep:
            _drop_body(rec, max_bytes)
        return rec

    for line in lines:
        start: bool = False
        next_arc = None
        if _WARC_LINE.match(line):
            nxt = next(lines, b"")
            if nxt.startswith(b"WARC-"):
                start = True
                new_block = [line, nxt]
            else:
                block.extend((line, nxt))
                continue
        elif (m := _ARC_LINE.match(line)) is not None:
            start, next_arc, new_block = True, m, []
        if start:
            rec = flush()
            if rec is not None:
                yield rec
            block, arc = new_block, next_arc
            size = sum(map(len, block))
            continue
        size += len(line)
        if size <= keep:
            block.append(line)
    rec = flush()
    if rec is not None:
        yield rec


def _parse_arc_block(
    header: re.Match[bytes], content: bytes, max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> dict[str, Any] | None:
    url = header.group(1).decode("latin-1")
    if not url.lower().startswith(("http://", "https://")):
        return None
    date = _parse_date(header.group(3).decode())
    content = content.rstrip(b"\r\n")
    if content.startswith(b"HTTP/"):
        rec = _parse_http(url, content, max_bytes)
        if rec is None:
            return None
        rec["date"] = date
        return rec
    ctype = header.group(4).decode("latin-1")
    return {"url": url, "status": 200, "headers": [("Content-Type", ctype)], "body": content,
            "date": date, "offset": None}  # fmt: skip


def _split_head(data: bytes) -> tuple[list[bytes], bytes]:
    m = re.search(rb"\r?\n\r?\n", data)
    if m is None:
        return data.splitlines(), b""
    return data[: m.start()].splitlines(), data[m.end() :]


def _parse_block(
    data: bytes, max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> dict[str, Any] | None:
    head, content = _split_head(data)
    fields: dict[str, str] = {}
    for line in head[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        fields[name.strip().lower()] = value.strip()
    if fields.get("warc-type") not in ("response", "resource"):
        return None
    url = fields.get("warc-target-uri", "").strip("<> ")
    if not url.lower().startswith(("http://", "https://")):
        return None
    content = content.rstrip(b"\r\n")
    date = _parse_date(fields.get("warc-date"))
    if fields["warc-type"] == "resource":
        headers = [("Content-Type", fields.get("content-type", ""))]
        return {"url": url, "status": 200, "headers": headers, "body": content,
                "date": date, "offset": None}  # fmt: skip
    rec = _parse_http(url, content, max_bytes)
    if rec is not None:
        rec["date"] = date
    return rec


def _parse_http(
    url: str, content: bytes, max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> dict[str, Any] | None:
    http_head, body = _split_head(content)
    if not http_head or not http_head[0].startswith(b"HTTP/"):
        return None
    try:
        status = int(http_head[0].split()[1])
    except (IndexError, ValueError):
        return None
    headers = []
    for line in http_head[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    rec = {"url": url, "status": status, "headers": headers, "body": b"", "date": None,
           "offset": None}  # fmt: skip
    try:
        rec["body"] = _decode_body(body, headers, max_bytes)
    except BodyTooLargeError:
        _drop_body(rec, max_bytes)
    return rec


_CHUNK_START = re.compile(rb"^[0-9a-fA-F]{1,8}[ \t]*(;[^\r\n]*)?\r\n")


class BodyTooLargeError(ValueError):
    """A payload that decodes to more than the cap."""


def too_large_reason(max_bytes: int) -> str:
    """The ``fetch_error`` of an archived payload over the cap."""
    return (
        f"too_large: the archived payload decodes to more than the cap of {max_bytes:,} "
        "bytes ([crawl] max_response_bytes; a compression bomb?); the body was not kept"
    )


def _drop_body(rec: dict[str, Any], max_bytes: int) -> None:
    rec["body"] = b""
    rec["too_large"] = too_large_reason(max_bytes)


def inflate(data: bytes, max_bytes: int, wbits: int = 47) -> bytes:
    """``data`` decompressed (zlib, gzip or raw deflate by ``wbits``), at most
    ``max_bytes`` of it: memory O(``max_bytes``) whatever it inflates to.

    Raises
    ------
    BodyTooLargeError
        It inflates to more than ``max_bytes``.
    zlib.error
        It does not decompress.

    >>> inflate(zlib.compress(b"x" * 10), 10)
    b'xxxxxxxxxx'
    >>> inflate(zlib.compress(b"x" * 11), 10)
    Traceback (most recent call last):
    crawler.warc.BodyTooLargeError: inflates to more than 10 bytes
    """
    dec = zlib.decompressobj(wbits)
    out = dec.decompress(data, max_bytes + 1)
    if len(out) > max_bytes:
        raise BodyTooLargeError(f"inflates to more than {max_bytes} bytes")
    return out


def _decode_body(
    body: bytes, headers: list[tuple[str, str]], max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> bytes:
    """Undo chunking and compression when the body really is chunked or compressed (old
    archives often keep those headers over an already decoded body), at most
    ``max_bytes`` of it (:class:`BodyTooLargeError` past it)."""
    values = {k.lower(): v.lower() for k, v in headers}
    if "chunked" in values.get("transfer-encoding", "") and _CHUNK_START.match(body):
        from warcio.bufferedreaders import ChunkedDataReader

        with contextlib.suppress(Exception):
            body = ChunkedDataReader(io.BytesIO(body)).read()
    if body[:2] == b"\x1f\x8b":
        with contextlib.suppress(zlib.error):
            body = inflate(body, max_bytes, 47)
    elif values.get("content-encoding", "") == "deflate":
        with contextlib.suppress(zlib.error):
            body = inflate(body, max_bytes, zlib.MAX_WBITS)
    if len(body) > max_bytes:
        raise BodyTooLargeError(f"{len(body)} bytes")
    return body


def _checked_iterator(fh: Any) -> Any:
    """warcio's :class:`ArchiveIterator` over ``fh`` that raises instead of writing to
    standard error: :class:`ArchiveLoadFailed` (with ``offset``) for a gzip stream that
    stops decompressing part way, and notes a last gzip member cut before its end
    (``truncated_member``). Its warnings about a bad Content-Length (a record not
    followed by a blank line) are not printed: what follows is read as a bad record."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.bufferedreaders import DecompressingBufferedReader
    from warcio.exceptions import ArchiveLoadFailed

    class Reader(DecompressingBufferedReader):  # type: ignore[misc]
        def _decompress(self, data: bytes) -> bytes:
            if self.decompressor and data and self.num_block_read:
                try:
                    return self.decompressor.decompress(data)  # type: ignore[no-any-return]
                except zlib.error as exc:
                    raise ArchiveLoadFailed(f"gzip data do not decompress ({exc})") from None
            return super()._decompress(data)  # type: ignore[no-any-return]

    class CheckedIterator(ArchiveIterator):  # type: ignore[misc]
        truncated_member: int | None = None
        reader: Any

        def __init__(self, fileobj: Any) -> None:
            super().__init__(fileobj, arc2warc=True)
            self.reader = Reader(self.fh, block_size=self.reader.block_size)

        def _consume_blanklines(self) -> Any:
            with contextlib.redirect_stderr(io.StringIO()):
                return super()._consume_blanklines()

        def _next_record(self, next_line: Any) -> Any:
            try:
                return super()._next_record(next_line)
            except ArchiveLoadFailed as exc:
                exc.offset = self.offset
                raise
            except EOFError:  # warcio's end of the archive, or of a cut header
                if next_line or self.fh.tell() - self.reader.rem_length() > self.offset:
                    cut = ArchiveLoadFailed("the file ends inside the header of the record there")
                    cut.offset = self.offset
                    raise cut from None
                raise
            except Exception:  # warcio trips over a broken header (no URI, ...)
                broken = ArchiveLoadFailed("the header of the record there is cut or broken")
                broken.offset = self.offset
                raise broken from None

        def close(self) -> None:
            dec = self.reader.decompressor if self.reader else None
            if dec is not None and not dec.eof:
                self.truncated_member = self.offset
            super().close()

    return CheckedIterator(fh)


def _records(
    fh: Any, *, path: str | Path | None = None, max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> Iterator[dict[str, Any]]:
    """The http(s) response/resource records warcio reads in ``fh``.

    With ``path``, damage is checked: a record shorter than its Content-Length or a last
    gzip member cut before its end raises :class:`DamagedArchiveError` (naming ``path``)
    instead of yielding a short record or ending quietly.
    """
    from warcio.exceptions import ArchiveLoadFailed

    records = _checked_iterator(fh)
    try:
        for record in records:
            rec = _record(record, records, max_bytes)
            if path is not None:
                while record.raw_stream.read(1 << 20):  # the rest of the block, in pieces
                    pass
                short = getattr(record.raw_stream, "limit", None)
                if short is None or short > 0:
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    what = (
                        "has no Content-Length: its header is cut or broken"
                        if short is None
                        else f"ends {short} bytes before its Content-Length: the file is cut"
                    )
                    raise DamagedArchiveError(
                        path,
                        records.get_record_offset(),
                        f"the {record.rec_type or 'untyped'} record there"
                        + (f" ({url})" if url else "")
                        + f" {what}",
                    )
            if rec is not None:
                yield rec
    except ArchiveLoadFailed as exc:
        if not hasattr(exc, "offset"):
            exc.offset = records.offset
        raise
    if path is not None and records.truncated_member is not None:
        raise DamagedArchiveError(
            path,
            records.truncated_member,
            f"the file ends (at byte {Path(path).stat().st_size}) inside the gzip member "
            "that starts at or before this byte, before its end-of-stream marker: the file "
            "is cut",
        )


def _record(record: Any, records: Any, max_bytes: int) -> dict[str, Any] | None:
    if record.rec_type not in ("response", "resource"):
        return None
    url = (record.rec_headers.get_header("WARC-Target-URI") or "").strip("<> ")
    if not url.lower().startswith(("http://", "https://")):
        return None
    if record.rec_type == "response":
        if record.http_headers is None:
            return None
        try:
            status = int(record.http_headers.get_statuscode())
        except (TypeError, ValueError):
            return None
        headers = list(record.http_headers.headers)
    else:
        status = 200
        ctype = record.rec_headers.get_header("Content-Type")
        headers = [("Content-Type", ctype)] if ctype else []
    try:
        # decoded as a stream (chunking, gzip...), at most the cap plus one byte of it
        body = record.content_stream().read(max_bytes + 1)
    except Exception:  # a damaged compressed payload: keep the raw bytes
        body = record.raw_stream.read(max_bytes + 1)
    rec = {
        "url": url,
        "status": status,
        "headers": headers,
        "body": body,
        "date": _parse_date(record.rec_headers.get_header("WARC-Date")),
        "offset": records.get_record_offset(),
    }
    if len(body) > max_bytes:
        _drop_body(rec, max_bytes)
    return rec


def read_record(
    data: bytes, max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING
) -> dict[str, Any] | None:
    """The http(s) ``response``/``resource`` record held by one record's bytes (a byte
    range of a WARC file: a gzip member or plain), as :func:`iter_records` yields it
    (``offset`` 0), or None when the bytes hold no such record.

    Raises
    ------
    warcio.exceptions.ArchiveLoadFailed
        The bytes are not a WARC/ARC record.
    """
    return next(_records(io.BytesIO(data), max_bytes=max_bytes), None)


def record_item(rec: dict[str, Any], path: str, universities: Any) -> PageItem:
    """A page item (with its kept links) for one archive record."""
    from scrapy.http import Headers
    from scrapy.responsetypes import responsetypes

    from crawler.links import content_type, page_links
    from crawler.spiders.base import charset_of

    headers = Headers()
    for name, value in rec["headers"]:
        if name.lower() not in ("content-encoding", "transfer-encoding"):
            headers.appendlist(name, value)
    cls = responsetypes.from_args(headers=headers, url=rec["url"], body=rec["body"])
    response = cls(url=rec["url"], status=rec["status"], headers=headers, body=rec["body"])
    owner = universities.owner(rec["url"])
    ctype = content_type(response)
    item = PageItem(
        url=rec["url"],
        fingerprint=None,
        role="university" if owner is not None else "external",
        university_id=owner.id if owner is not None else None,
        http_status=rec["status"],
        content_type=(headers.get(b"Content-Type") or b"").decode("latin-1")[:200] or None,
        charset=charset_of(response, ctype),
        body=rec["body"] if is_text_media_type(ctype) else None,
        content_length=len(rec["body"]),
        fetched_at=rec["date"],
        warc_file=path,
        warc_offset=rec["offset"],
    )
    if rec.get("too_large"):
        item.fetch_error = rec["too_large"]
        item.body = item.content_length = None
    elif not 200 <= rec["status"] < 400:
        item.fetch_error = f"http_{rec['status']}: archived answer"
    elif rec["status"] == 200:
        for link in page_links(response):
            linked = universities.owner(link.target)
            if owner is not None:
                if not owner.owns(link.target):
                    item.links.append(link)
            elif linked is not None:
                item.links.append(link)
    return item


def import_warc(
    engine: Engine,
    paths: list[str | Path],
    *,
    batch_size: int = 200,
    progress: bool = False,
    max_bytes: int = CRAWL_MAX_RESPONSE_BYTES_CEILING,
) -> dict[str, Any]:
    """Load WARC/ARC files as pages of an ``import-warc`` crawl run.

    Every file is checked to be a WARC/ARC file (:func:`sniff`) before a run is made.
    The run is new, or the newest ``import-warc`` run of the same files when that one
    failed or was interrupted: a re-run after repairing a file resumes it, and since
    pages are upserted by URL and links are unique per run, nothing is stored twice.

    Parameters
    ----------
    engine : Engine
    paths : list of path-like
        WARC or ARC files (``.gz`` or not).
    batch_size : int
        Pages per transaction.
    progress : bool
        Show a progress bar (records) on standard error.
    max_bytes : int
        The cap of a decoded payload (``[crawl] max_response_bytes``, bounded by the
        ceiling); a record over it is stored with ``fetch_error`` ``too_large: ...`` and
        no body.

    Returns
    -------
    dict
        ``run_id``, ``resumed`` (bool), ``records`` read, ``pages`` stored, ``links``,
        per-file counts and the run's statistics.

    Raises
    ------
    ConfigError
        A file is missing.
    NotAnArchiveError
        A file is empty or not a WARC/ARC file; no run is made, nothing is stored.
    DamagedArchiveError
        A file is cut or holds a bad record. The records before it (and the files before
        it) are stored, the files after it are not read; the run is marked ``failed``
        with the file, byte offset and reason as its error (and ``stats["import"]
        ["damaged"]``).
    """
    from sqlalchemy import select
    from tqdm import tqdm

    from crawler.limits import body_limit
    from crawler.spiders.base import Universities
    from crawler.storage import failure_recorded, finalize_run, store_batch, update_run
    from store.models import CrawlRun, University
    from store.session import session_scope

    files = [Path(p) for p in paths]
    for f in files:
        if not f.is_file():
            raise ConfigError(f"{f}: WARC/ARC file not found")
    for f in files:
        sniff(f)
    names = [str(f.resolve()) for f in files]
    with session_scope(engine) as s:
        unis = Universities(
            [
                {"id": u.id, "name": u.name, "domains": [d.domain for d in u.domains]}
                for u in s.scalars(select(University))
            ]
        )
        run = _unfinished_import(s, names)
        resumed = run is not None
        if run is None:
            run = CrawlRun(kind="import-warc", settings={"files": names})
            s.add(run)
        else:
            run.status, run.error, run.finished_at = "running", None, None
        s.flush()
        run_id = run.id
    totals: dict[str, Any] = {
        "run_id": run_id, "resumed": resumed, "records": 0, "pages": 0, "links": 0, "files": {}
    }  # fmt: skip
    damage: DamagedArchiveError | None = None
    bar = tqdm(desc="import warc", unit="record", disable=not progress)

    def store(batch: list[PageItem]) -> None:
        res = store_batch(engine, run_id, batch)
        totals["pages"] += res.pages
        totals["links"] += res.links

    try:
        with failure_recorded(engine, run_id):
            for f in files:
                batch: list[PageItem] = []
                n = 0
                try:
                    for rec in iter_records(f, body_limit(max_bytes)):
                        batch.append(record_item(rec, str(f.resolve()), unis))
                        n += 1
                        bar.update()
                        if len(batch) >= batch_size:
                            store(batch)
                            batch = []
                except DamagedArchiveError as exc:
                    damage = exc
                if batch:
                    store(batch)  # the records before the damage are kept
                totals["records"] += n
                totals["files"][str(f)] = n
                if damage is not None:
                    break
    finally:
        bar.close()
    stats = finalize_run(engine, run_id)
    stats["import"] = {k: v for k, v in totals.items() if k != "run_id"}
    if damage is not None:
        skipped = files[len(totals["files"]) :]
        note = (
            f"{totals['records']} record(s) before it are stored in crawl run {run_id}, "
            "marked failed"
            + (f"; not read: {', '.join(str(f) for f in skipped)}" if skipped else "")
            + ". Replace the file with a complete copy and run the same command again: the "
            "run is resumed and the stored records are updated, not duplicated"
        )
        err = DamagedArchiveError(damage.path, damage.offset, damage.reason, note=note)
        stats["import"]["damaged"] = {
            "file": str(damage.path), "offset": damage.offset, "reason": damage.reason
        }  # fmt: skip
        update_run(
            engine,
            run_id,
            status="failed",
            finished_at=dt.datetime.now(dt.UTC),
            stats=stats,
            error=str(err),
        )
        raise err
    update_run(engine, run_id, status="finished", finished_at=dt.datetime.now(dt.UTC), stats=stats)
    totals["stats"] = stats
    return totals


def _unfinished_import(session: Any, names: list[str]) -> Any:
    """The newest ``import-warc`` run of exactly these files when it failed or was
    interrupted (to resume), else None."""
    from sqlalchemy import select

    from store.models import CrawlRun

    runs = session.scalars(
        select(CrawlRun).where(CrawlRun.kind == "import-warc").order_by(CrawlRun.id.desc())
    )
    for run in runs:
        if (run.settings or {}).get("files") == names:
            return run if run.status in ("failed", "interrupted") else None
    return None
