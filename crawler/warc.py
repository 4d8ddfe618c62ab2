"""``webometrics import warc``: WARC/ARC records as pages (writing them during a crawl:
:mod:`crawler.warc_writer`).

:func:`import_warc` reads WARC and ARC files (gzip or not; ARC through warcio's
``arc2warc``), keeps ``response`` and ``resource`` records of http(s) URLs, decodes
chunked and compressed payloads, and stores each record as a page of a new crawl run of
kind ``import-warc`` (a university's page when its host is in a stored university's
domains, else an external page), with the links :mod:`crawler.links` finds in HTML pages
(all external links of university pages; links into universities of other pages).

Time: linear in the archive size; memory: one record and one batch of pages.
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


def iter_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The http(s) ``response``/``resource`` records of a WARC or ARC file.

    Yields dicts with ``url``, ``status``, ``headers`` (list of pairs), ``body`` (decoded
    payload), ``date`` and ``offset`` (of the record in the file; None where records
    cannot be seeked to).

    Files warcio rejects are read again leniently (:func:`_lenient_records`): gzip files
    compressed as one member, and old WARC 0.18 files (ClueWeb09) whose Content-Length
    values are wrong.
    """
    from warcio.exceptions import ArchiveLoadFailed

    done = 0
    try:
        with open(path, "rb") as fh:
            for rec in _records(fh):
                done += 1
                yield rec
    except ArchiveLoadFailed:
        with _open_maybe_gzip(path) as fh:
            for i, rec in enumerate(_lenient_records(fh)):
                if i >= done:
                    yield rec


def _open_maybe_gzip(path: str | Path) -> Any:
    import gzip

    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


_WARC_LINE = re.compile(rb"^WARC/\d+\.\d+\r?\n$")
_ARC_LINE = re.compile(rb"^(\S+://\S*) (\S+) (\d{14}) (\S*) (\d+)\r?\n$")


def _lenient_records(fh: Any) -> Iterator[dict[str, Any]]:
    """Records of a damaged WARC or ARC stream, whatever their Content-Length values say.

    A WARC record starts at a ``WARC/x.y`` line followed by a ``WARC-`` header line; an
    ARC record at a line ``URL IP YYYYMMDDhhmmss content-type length``. Memory: one
    record.
    """
    lines = iter(fh)
    block: list[bytes] = []
    arc: re.Match[bytes] | None = None

    def flush() -> dict[str, Any] | None:
        if not block:
            return None
        data = b"".join(block)
        return _parse_arc_block(arc, data) if arc is not None else _parse_block(data)

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
            continue
        block.append(line)
    rec = flush()
    if rec is not None:
        yield rec


def _parse_arc_block(header: re.Match[bytes], content: bytes) -> dict[str, Any] | None:
    url = header.group(1).decode("latin-1")
    if not url.lower().startswith(("http://", "https://")):
        return None
    date = _parse_date(header.group(3).decode())
    content = content.rstrip(b"\r\n")
    if content.startswith(b"HTTP/"):
        rec = _parse_http(url, content)
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


def _parse_block(data: bytes) -> dict[str, Any] | None:
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
    rec = _parse_http(url, content)
    if rec is not None:
        rec["date"] = date
    return rec


def _parse_http(url: str, content: bytes) -> dict[str, Any] | None:
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
    return {"url": url, "status": status, "headers": headers,
            "body": _decode_body(body, headers), "date": None, "offset": None}  # fmt: skip


_CHUNK_START = re.compile(rb"^[0-9a-fA-F]{1,8}[ \t]*(;[^\r\n]*)?\r\n")


def _decode_body(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    """Undo chunking and compression when the body really is chunked or compressed (old
    archives often keep those headers over an already decoded body)."""
    values = {k.lower(): v.lower() for k, v in headers}
    if "chunked" in values.get("transfer-encoding", "") and _CHUNK_START.match(body):
        from warcio.bufferedreaders import ChunkedDataReader

        with contextlib.suppress(Exception):
            body = ChunkedDataReader(io.BytesIO(body)).read()
    if body[:2] == b"\x1f\x8b":
        with contextlib.suppress(zlib.error):
            body = zlib.decompress(body, 47)
    elif values.get("content-encoding", "") == "deflate":
        with contextlib.suppress(zlib.error):
            body = zlib.decompress(body)
    return body


def _records(fh: Any) -> Iterator[dict[str, Any]]:
    from warcio.archiveiterator import ArchiveIterator

    records = ArchiveIterator(fh, arc2warc=True)
    for record in records:
        if record.rec_type not in ("response", "resource"):
            continue
        url = (record.rec_headers.get_header("WARC-Target-URI") or "").strip("<> ")
        if not url.lower().startswith(("http://", "https://")):
            continue
        if record.rec_type == "response":
            if record.http_headers is None:
                continue
            try:
                status = int(record.http_headers.get_statuscode())
            except (TypeError, ValueError):
                continue
            headers = list(record.http_headers.headers)
        else:
            status = 200
            ctype = record.rec_headers.get_header("Content-Type")
            headers = [("Content-Type", ctype)] if ctype else []
        try:
            body = record.content_stream().read()
        except Exception:  # a damaged compressed payload: keep the raw bytes
            body = record.raw_stream.read()
        yield {
            "url": url,
            "status": status,
            "headers": headers,
            "body": body,
            "date": _parse_date(record.rec_headers.get_header("WARC-Date")),
            "offset": records.get_record_offset(),
        }


def read_record(data: bytes) -> dict[str, Any] | None:
    """The http(s) ``response``/``resource`` record held by one record's bytes (a byte
    range of a WARC file: a gzip member or plain), as :func:`iter_records` yields it
    (``offset`` 0), or None when the bytes hold no such record.

    Raises
    ------
    warcio.exceptions.ArchiveLoadFailed
        The bytes are not a WARC/ARC record.
    """
    return next(_records(io.BytesIO(data)), None)


def record_item(rec: dict[str, Any], path: str, universities: Any) -> PageItem:
    """A page item (with its kept links) for one archive record."""
    from scrapy.http import Headers
    from scrapy.responsetypes import responsetypes

    from crawler.links import content_type, page_links
    from crawler.spiders.base import charset_of, is_text

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
        body=rec["body"] if is_text(ctype) else None,
        content_length=len(rec["body"]),
        fetched_at=rec["date"],
        warc_file=path,
        warc_offset=rec["offset"],
    )
    if not 200 <= rec["status"] < 400:
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
) -> dict[str, Any]:
    """Load WARC/ARC files as pages of a new ``import-warc`` crawl run.

    Parameters
    ----------
    engine : Engine
    paths : list of path-like
        WARC or ARC files (``.gz`` or not).
    batch_size : int
        Pages per transaction.
    progress : bool
        Show a progress bar (records) on standard error.

    Returns
    -------
    dict
        ``run_id``, ``records`` read, ``pages`` stored, ``links``, per-file counts and the
        run's statistics.

    Raises
    ------
    ConfigError
        A file is missing or is not a WARC/ARC file.
    """
    from sqlalchemy import select
    from tqdm import tqdm
    from warcio.exceptions import ArchiveLoadFailed

    from core.exceptions import ConfigError
    from crawler.spiders.base import Universities
    from crawler.storage import failure_recorded, finalize_run, store_batch, update_run
    from store.models import CrawlRun, University
    from store.session import session_scope

    files = [Path(p) for p in paths]
    for f in files:
        if not f.is_file():
            raise ConfigError(f"{f}: WARC/ARC file not found")
    with session_scope(engine) as s:
        unis = Universities(
            [
                {"id": u.id, "name": u.name, "domains": [d.domain for d in u.domains]}
                for u in s.scalars(select(University))
            ]
        )
        run = CrawlRun(kind="import-warc", settings={"files": [str(f) for f in files]})
        s.add(run)
        s.flush()
        run_id = run.id
    totals: dict[str, Any] = {"run_id": run_id, "records": 0, "pages": 0, "links": 0, "files": {}}
    bar = tqdm(desc="import warc", unit="record", disable=not progress)
    try:
        with failure_recorded(engine, run_id):
            for f in files:
                batch: list[PageItem] = []
                n = 0
                try:
                    for rec in iter_records(f):
                        batch.append(record_item(rec, str(f.resolve()), unis))
                        n += 1
                        bar.update()
                        if len(batch) >= batch_size:
                            res = store_batch(engine, run_id, batch)
                            totals["pages"] += res.pages
                            totals["links"] += res.links
                            batch = []
                except ArchiveLoadFailed as exc:
                    raise ConfigError(f"{f}: not a readable WARC or ARC file: {exc}") from exc
                if batch:
                    res = store_batch(engine, run_id, batch)
                    totals["pages"] += res.pages
                    totals["links"] += res.links
                totals["records"] += n
                totals["files"][str(f)] = n
    finally:
        bar.close()
    stats = finalize_run(engine, run_id)
    stats["import"] = {k: v for k, v in totals.items() if k != "run_id"}
    update_run(engine, run_id, status="finished", finished_at=dt.datetime.now(dt.UTC), stats=stats)
    totals["stats"] = stats
    return totals
