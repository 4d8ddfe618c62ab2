"""Common Crawl URL-index files for real WARC files, in the published layouts.

Tests and demos need index files that point into WARC files they can read: this module
lists the ``response``/``resource`` records of real WARC files (with warcio: each
record's offset and length in the file, i.e. its gzip member) and writes them as

* **CDXJ** (:func:`write_cdxj`): ``<SURT key> <timestamp> <JSON>`` lines sorted by key and
  time, the JSON with Common Crawl's fields as strings (``url``, ``mime``,
  ``mime-detected``, ``status``, ``digest``, ``length``, ``offset``, ``filename``),
  gzip-compressed in members of a few lines as ``cdx-NNNNN.gz`` are;
* **cluster.idx** (:func:`write_cluster_index`): the secondary index of CDXJ files, one
  line per gzip member (block): its first key and timestamp, file, offset, length, number;
* **Parquet** (:func:`write_parquet`): the flat ``cc-index-table`` schema (``url_surtkey``,
  ``url``, ``url_host_name``, ``url_host_registered_domain``, ``fetch_time``,
  ``fetch_status``, ``content_mime_type``, ``content_mime_detected``, ``content_digest``,
  ``warc_filename``, ``warc_record_offset``, ``warc_record_length``, ``warc_segment``),
  written with DuckDB.

The WARC files stay where they are (``filename`` is their path relative to a root
folder); nothing is copied.

Time and memory: linear in the records listed.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import mimetypes
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from core.domains import host_of, registered_domain


@dataclass(frozen=True)
class IndexEntry:
    """One capture as an index lists it."""

    url: str
    timestamp: str  # yyyymmddhhmmss
    mime: str
    mime_detected: str
    status: int
    digest: str
    length: int
    offset: int
    filename: str

    def replace(self, **changes: object) -> IndexEntry:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def surt_key(url: str) -> str:
    """The SURT key of a URL as Common Crawl writes it (host reversed, ``www.`` dropped,
    lower case).

    >>> surt_key("http://www.Example.com/Path?b=1")
    'com,example)/path?b=1'
    >>> surt_key("https://blog.example.org:8080/")
    'org,example,blog:8080)/'
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    key = ",".join(reversed(host.split(".")))
    if parts.port is not None and parts.port not in (80, 443):
        key += f":{parts.port}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return f"{key}){path.lower()}"


def _timestamp(warc_date: str | None) -> str | None:
    digits = "".join(ch for ch in (warc_date or "")[:19] if ch.isdigit())
    return digits if len(digits) == 14 and digits[4:6] <= "12" and digits[6:8] <= "31" else None


def warc_entries(
    path: str | Path, root: str | Path, *, default_timestamp: str = ""
) -> Iterator[IndexEntry]:
    """The index entries of the http(s) ``response``/``resource`` records of a WARC file.

    ``filename`` is the file's path relative to ``root``; ``timestamp`` comes from
    ``WARC-Date`` (``default_timestamp`` where that is malformed); ``mime`` is the HTTP
    ``Content-Type``'s media type and ``mime-detected`` the same (no content sniffing).
    """
    from warcio.archiveiterator import ArchiveIterator

    p = Path(path)
    name = p.resolve().relative_to(Path(root).resolve()).as_posix()
    with open(p, "rb") as fh:
        records = ArchiveIterator(fh)
        for record in records:
            if record.rec_type not in ("response", "resource"):
                continue
            url = (record.rec_headers.get_header("WARC-Target-URI") or "").strip("<> ")
            if not url.lower().startswith(("http://", "https://")):
                continue
            if record.rec_type == "response" and record.http_headers is not None:
                status = int(record.http_headers.get_statuscode())
                ctype = record.http_headers.get_header("Content-Type") or ""
            else:
                status = 200
                ctype = record.rec_headers.get_header("Content-Type") or ""
            record.content_stream().read()  # to the end of the record: its length is known
            mime = ctype.split(";", 1)[0].strip().lower() or (mimetypes.guess_type(url)[0] or "unk")
            digest = record.rec_headers.get_header("WARC-Payload-Digest") or ""
            yield IndexEntry(
                url=url,
                timestamp=_timestamp(record.rec_headers.get_header("WARC-Date"))
                or default_timestamp,
                mime=mime,
                mime_detected=mime,
                status=status,
                digest=digest.split(":", 1)[-1],
                length=records.get_record_length(),
                offset=records.get_record_offset(),
                filename=name,
            )


def cdxj_line(entry: IndexEntry) -> str:
    """One CDXJ line (without the newline).

    >>> e = IndexEntry("http://example.com/", "20170306040206", "text/html", "text/html", 200,
    ...                "G7HRM", 1228, 784, "warcio/example.warc.gz")
    >>> cdxj_line(e)  # doctest: +NORMALIZE_WHITESPACE
    'com,example)/ 20170306040206 {"url": "http://example.com/", "mime": "text/html",
    "mime-detected": "text/html", "status": "200", "digest": "G7HRM", "length": "1228",
    "offset": "784", "filename": "warcio/example.warc.gz"}'
    """
    fields = {
        "url": entry.url,
        "mime": entry.mime,
        "mime-detected": entry.mime_detected,
        "status": str(entry.status),
        "digest": entry.digest,
        "length": str(entry.length),
        "offset": str(entry.offset),
        "filename": entry.filename,
    }
    return f"{surt_key(entry.url)} {entry.timestamp} {json.dumps(fields)}"


def write_cdxj(
    path: str | Path,
    entries: Iterable[IndexEntry],
    *,
    compress: bool = True,
    lines_per_member: int = 3,
    extra_lines: Iterable[str] = (),
) -> Path:
    """Write entries as a CDXJ file sorted by SURT key and time (gzip members of
    ``lines_per_member`` lines, as Common Crawl's ``cdx-NNNNN.gz``, unless not
    ``compress``); ``extra_lines`` are written as given, sorted in with the others."""
    p = Path(path)
    lines = sorted([*(cdxj_line(e) for e in entries), *extra_lines])
    text = [line + "\n" for line in lines]
    if not compress:
        p.write_text("".join(text), encoding="utf-8")
        return p
    with open(p, "wb") as fh:
        for start in range(0, len(text), lines_per_member):
            fh.write(gzip.compress("".join(text[start : start + lines_per_member]).encode()))
    return p


def write_cluster_index(path: str | Path, cdx_files: Iterable[str | Path]) -> Path:
    """Write the secondary index of gzip CDXJ files (one line per gzip member:
    ``<key> <timestamp> TAB <file name> TAB <offset> TAB <length> TAB <block>``)."""
    import zlib

    out = []
    block = 0
    for cdx in cdx_files:
        data = Path(cdx).read_bytes()
        offset = 0
        while offset < len(data):
            d = zlib.decompressobj(wbits=31)
            text = d.decompress(data[offset:])
            length = len(data) - offset - len(d.unused_data)
            key, ts = text.split(b"\n", 1)[0].decode("utf-8").split(" ")[:2]
            out.append(f"{key} {ts}\t{Path(cdx).name}\t{offset}\t{length}\t{block}\n")
            offset += length
            block += 1
    p = Path(path)
    p.write_text("".join(out), encoding="utf-8")
    return p


PARQUET_SCHEMA = """
    url_surtkey VARCHAR, url VARCHAR, url_host_name VARCHAR,
    url_host_registered_domain VARCHAR, fetch_time TIMESTAMP, fetch_status SMALLINT,
    content_digest VARCHAR, content_mime_type VARCHAR, content_mime_detected VARCHAR,
    warc_filename VARCHAR, warc_record_offset INTEGER, warc_record_length INTEGER,
    warc_segment VARCHAR
"""


def write_parquet(path: str | Path, entries: Iterable[IndexEntry]) -> Path:
    """Write entries as a columnar index file (flat cc-index-table schema, sorted by
    SURT key as published)."""
    import duckdb

    p = Path(path)
    rows = []
    for e in entries:
        host = host_of(e.url)
        ts = e.timestamp
        rows.append(
            (
                surt_key(e.url),
                e.url,
                host,
                registered_domain(host),
                f"{ts[:4]}-{ts[4:6]}-{ts[6:8]} {ts[8:10]}:{ts[10:12]}:{ts[12:14]}",
                e.status,
                e.digest,
                e.mime,
                e.mime_detected,
                e.filename,
                e.offset,
                e.length,
                Path(e.filename).parent.name,
            )
        )
    target = str(p).replace("'", "''")
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"CREATE TABLE captures ({PARQUET_SCHEMA})")
        con.executemany(f"INSERT INTO captures VALUES ({', '.join('?' * 13)})", rows)
        con.execute(
            f"COPY (SELECT * FROM captures ORDER BY url_surtkey, fetch_time) TO '{target}' "
            "(FORMAT parquet)"
        )
    finally:
        con.close()
    return p
