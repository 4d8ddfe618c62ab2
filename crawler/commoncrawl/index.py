"""Common Crawl's URL index: read the captures of citing domains from its files.

Common Crawl publishes, for every crawl, two indexes of the same captures:

* the **CDXJ index** (``cc-index/collections/CC-MAIN-YYYY-WW/indexes/cdx-00000.gz`` ...
  ``cdx-00299.gz``, with the secondary index ``cluster.idx``): gzip text, one capture a
  line ``<SURT key> <timestamp> <JSON>``, sorted by SURT key; the JSON carries ``url``,
  ``mime``, ``mime-detected``, ``status``, ``digest``, ``length``, ``offset``, ``filename``
  (strings);
* the **columnar index** (``cc-index/table/cc-main/warc/crawl=CC-MAIN-YYYY-WW/subset=warc/
  part-*.parquet``): Parquet files with the flat schema of ``commoncrawl/cc-index-table``
  (``url``, ``url_host_name``, ``url_host_registered_domain``, ``fetch_time``,
  ``fetch_status``, ``content_mime_type``, ``content_mime_detected``, ``content_digest``,
  ``warc_filename``, ``warc_record_offset``, ``warc_record_length``, ...), read here with
  DuckDB (projection and filter push-down: only the wanted domains' row groups are read).

:class:`NameMatcher` says which hosts and SURT keys belong to the wanted names
(registered domains or host names); :func:`read_cdxj` and :func:`read_parquet` stream
the captures (:class:`~crawler.commoncrawl.captures.Capture`) of those names;
:func:`read_cluster_index` reads only the blocks of the cdx files that ``cluster.idx``
says may hold them, fetched by byte range (:class:`~crawler.commoncrawl.fetch.RangeFetcher`);
:func:`read_index` picks the reader by the file's content. Choosing among the captures
is :mod:`crawler.commoncrawl.captures`'s; fetching their records,
:mod:`crawler.commoncrawl.fetch`'s.

Bad input raises :class:`~core.exceptions.ConfigError` naming the file and line
(or the URL and byte range): a line that is not ``key timestamp JSON``, JSON that does not
parse, a missing field, a truncated gzip file, a Parquet file without the published
columns, a cdx block that is not gzip.

Time: linear in the index files read (every line is split; only the lines of wanted
names are JSON-decoded). Memory: one line (two of ``cluster.idx``).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from core.domains import host_of, registered_domain
from core.exceptions import ConfigError
from crawler.commoncrawl.captures import Capture
from crawler.commoncrawl.fetch import RangeFetcher

#: fields every CDXJ line must carry
CDXJ_FIELDS: tuple[str, ...] = ("url", "mime", "status", "length", "offset", "filename")
#: columns a columnar (Parquet) index file must have (cc-index-table flat schema)
PARQUET_COLUMNS: tuple[str, ...] = (
    "url",
    "url_host_name",
    "url_host_registered_domain",
    "fetch_time",
    "fetch_status",
    "content_mime_type",
    "content_mime_detected",
    "content_digest",
    "warc_filename",
    "warc_record_offset",
    "warc_record_length",
)


def idna_name(name: str) -> str:
    """A host or domain name in its ASCII (IDNA) form, lower case, no trailing dot.

    >>> idna_name("Пример.РФ.")
    'xn--e1afmkfd.xn--p1ai'
    """
    name = name.strip().lower().rstrip(".")
    if name.isascii():
        return name
    with contextlib.suppress(UnicodeError):
        return name.encode("idna").decode("ascii")
    return name


class NameMatcher:
    """The wanted names (registered domains or host names), matched against hosts.

    A host matches a name when it is the name or one of its subdomains; the longest
    matching name wins (a stored host is more specific than its domain).

    >>> m = NameMatcher(["example.org", "blog.example.org"])
    >>> m.match("www.example.org"), m.match("a.blog.example.org"), m.match("example.com")
    ('example.org', 'blog.example.org', None)
    >>> m.match_surt("org,example,blog)/post")
    'blog.example.org'
    """

    def __init__(self, names: Iterable[str]) -> None:
        # a site's key may hold a path (sites.google.com/site/x, core.entities): its host
        # is what the index is searched by
        self.names = frozenset(n for n in (idna_name(n.split("/", 1)[0]) for n in names) if n)
        self.registered_domains = frozenset(registered_domain(n) for n in self.names)

    def match(self, host: str) -> str | None:
        host = idna_name(host)
        while host:
            if host in self.names:
                return host
            if "." not in host:
                return None
            host = host.split(".", 1)[1]
        return None

    def match_surt(self, key: str) -> str | None:
        """The name matching the host of a SURT key (``org,example,www)/path``)."""
        head = key.split(")", 1)[0].split(":", 1)[0]
        labels = [p for p in head.split(",") if p]
        # the longest name first: walk from the full host towards its registered domain
        for end in range(len(labels), 0, -1):
            name = ".".join(reversed(labels[:end]))
            if name in self.names:
                return name
        return None


def _open_text(path: Path) -> Any:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def _int(value: Any, field: str, where: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: field {field!r} is not a number: {value!r}") from None


def cdxj_capture(line: bytes, matcher: NameMatcher, where: str, index_file: str) -> Capture | None:
    """The capture of one CDXJ line when its host is a wanted name, else None.

    The line must be ``<SURT key> <timestamp> {JSON}``; the JSON is decoded only for the
    wanted names and must carry :data:`CDXJ_FIELDS`.

    Raises
    ------
    ConfigError
        The line is malformed (the message starts with ``where``).
    """
    if b"\t" in line and line.count(b"\t") >= 3 and b"{" not in line:
        raise ConfigError(
            f"{where}: this is a line of the secondary index cluster.idx (key, file, offset, "
            "length), not of a cdx-*.gz file"
        )
    parts = line.split(b" ", 2)
    if len(parts) < 3 or not parts[1].isdigit() or not parts[2].startswith(b"{"):
        raise ConfigError(
            f"{where}: not a CDXJ line (<SURT key> <timestamp> <JSON>): "
            f"{line[:120].decode('utf-8', 'replace')!r}"
        )
    if matcher.match_surt(parts[0].decode("utf-8", "replace")) is None:
        return None
    try:
        fields = json.loads(parts[2])
    except ValueError as exc:
        raise ConfigError(f"{where}: the JSON of the CDXJ line is invalid: {exc}") from None
    if not isinstance(fields, dict):
        raise ConfigError(f"{where}: the JSON of the CDXJ line is not an object")
    missing = [f for f in CDXJ_FIELDS if f not in fields]
    if missing:
        raise ConfigError(f"{where}: the CDXJ line lacks the field(s) {', '.join(missing)}")
    status = str(fields["status"])
    url = str(fields["url"])
    name = matcher.match(host_of(url))
    if name is None:  # SURT and URL disagree: trust the URL
        return None
    return Capture(
        url=url,
        timestamp=parts[1].decode("ascii")[:14].ljust(14, "0"),
        mime=fields.get("mime"),
        mime_detected=fields.get("mime-detected"),
        status=int(status) if status.isdigit() else None,
        digest=fields.get("digest"),
        filename=str(fields["filename"]),
        offset=_int(fields["offset"], "offset", where),
        length=_int(fields["length"], "length", where),
        index_file=index_file,
        where=where,
        name=name,
    )


def read_cdxj(path: str | Path, matcher: NameMatcher) -> Iterator[Capture]:
    """The captures of the wanted names in a CDXJ file (gzip or plain), see
    :func:`cdxj_capture`.

    Raises
    ------
    ConfigError
        The file is missing, is truncated or not gzip, or a line is malformed (the
        message names the file and line).
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: index file not found")
    number = 0
    try:
        with _open_text(p) as fh:
            for number, raw in enumerate(fh, start=1):
                line = raw.rstrip(b"\r\n")
                if line.strip():
                    capture = cdxj_capture(line, matcher, f"{p}:{number}", str(p))
                    if capture is not None:
                        yield capture
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ConfigError(
            f"{p}:{number + 1}: the gzip file is truncated or damaged ({exc}); download it again"
        ) from None


def surt_prefix(name: str) -> str:
    """The start of the SURT keys of a name's URLs (and of its subdomains').

    >>> surt_prefix("www.example.org"), surt_prefix("blog.example.org")
    ('org,example', 'org,example,blog')
    """
    labels = idna_name(name).split(".")
    if labels[0] == "www" and len(labels) > 2:
        labels = labels[1:]
    return ",".join(reversed(labels))


def is_cluster_index(path: str | Path) -> bool:
    """True for a secondary index (``cluster.idx``): plain lines ``<SURT key> <timestamp>
    TAB <cdx file> TAB <offset> TAB <length> TAB <block number>``."""
    with open(path, "rb") as fh:
        first = fh.readline(4096)
    parts = first.rstrip(b"\r\n").split(b"\t")
    return len(parts) >= 4 and parts[2].isdigit() and parts[3].isdigit()


def cluster_blocks(path: str | Path, matcher: NameMatcher) -> Iterator[tuple[str, int, int, str]]:
    """The blocks of the cdx files that may hold lines of the wanted names, from the
    secondary index ``cluster.idx``: ``(cdx file, offset, length, where)``, adjacent blocks
    of one file merged into one range.

    Block *i* holds the keys from its first key to the first key of block *i + 1*; it is
    needed when a wanted name's SURT prefix falls in that span. Memory: two lines.

    Raises
    ------
    ConfigError
        A line is not ``key timestamp TAB file TAB offset TAB length ...``.
    """
    import bisect

    p = Path(path)
    prefixes = sorted({surt_prefix(n) for n in matcher.names})

    prefix_set = set(prefixes)

    def wanted(first: str, last: str | None) -> bool:
        host = first.split(")", 1)[0]
        if any(host[:k] in prefix_set for k in range(1, len(host) + 1)):
            return True  # the block starts among a wanted prefix's keys
        j = bisect.bisect_left(prefixes, first)  # the first prefix after the block's start
        return j < len(prefixes) and (last is None or prefixes[j] <= last)

    previous: tuple[str, str, int, int, int] | None = None  # key, file, offset, length, line
    run: list[Any] = []  # the current merged range: file, offset, end, first line

    def rows() -> Iterator[tuple[str, str, int, int, int]]:
        with open(p, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line.strip():
                    continue
                parts = line.split("\t")
                if len(parts) < 4 or not parts[2].isdigit() or not parts[3].isdigit():
                    raise ConfigError(
                        f"{p}:{number}: not a cluster.idx line (<SURT key> <timestamp> TAB "
                        f"<cdx file> TAB <offset> TAB <length> TAB <block>): {line[:120]!r}"
                    )
                yield parts[0].split(" ", 1)[0], parts[1], int(parts[2]), int(parts[3]), number

    def block(cur: tuple[str, str, int, int, int], nxt_key: str | None) -> Iterator[Any]:
        key, fname, offset, length, number = cur
        if not wanted(key, nxt_key):
            return
        if run and run[0] == fname and run[2] == offset:
            run[2] = offset + length  # adjacent: one request
            return
        if run:
            yield run[0], run[1], run[2] - run[1], f"{p}:{run[3]}"
        run[:] = [fname, offset, offset + length, number]

    for row in rows():
        if previous is not None:
            yield from block(previous, row[0])
        previous = row
    if previous is not None:
        yield from block(previous, None)
    if run:
        yield run[0], run[1], run[2] - run[1], f"{p}:{run[3]}"


def read_cluster_index(
    path: str | Path, matcher: NameMatcher, fetcher: RangeFetcher
) -> Iterator[Capture]:
    """The captures of the wanted names found through ``cluster.idx``: only the blocks of
    the cdx files that may hold them are fetched (by byte range, from ``fetcher``'s
    prefix: the cdx files' URL folder or a local folder) and read.

    Raises
    ------
    ConfigError
        As :func:`cluster_blocks`, :meth:`RangeFetcher.fetch_range` and
        :func:`cdxj_capture`; a block that is not gzip.
    """
    p = Path(path)
    for fname, offset, length, where in cluster_blocks(p, matcher):
        label = f"{fetcher.locate(fname)} bytes={offset}-{offset + length - 1}"
        data = fetcher.fetch_range(fname, offset, length, f"{label} (block of {where})")
        try:
            text = _gunzip_members(data)
        except (EOFError, zlib.error) as exc:
            raise ConfigError(f"{label} (block of {where}): not gzip data: {exc}") from None
        for number, line in enumerate(text.split(b"\n"), start=1):
            line = line.rstrip(b"\r")
            if line.strip():
                capture = cdxj_capture(line, matcher, f"{label} line {number}", str(p))
                if capture is not None:
                    yield capture


def _gunzip_members(data: bytes) -> bytes:
    out = []
    while data:
        d = zlib.decompressobj(wbits=31)
        out.append(d.decompress(data))
        if not d.eof:
            raise EOFError("the gzip member is truncated")
        data = d.unused_data
    return b"".join(out)


def read_parquet(
    path: str | Path, matcher: NameMatcher, *, batch: int = 10_000, chunk: int = 500
) -> Iterator[Capture]:
    """The captures of the wanted names that answered 200 in a columnar index file.

    Read with DuckDB: only the listed columns, only the rows whose
    ``url_host_registered_domain`` is one of the wanted names' registered domains and
    whose ``fetch_status`` is 200 (filters pushed down to the Parquet row groups; one
    scan per ``chunk`` domains; ``batch`` rows at a time in memory).

    Raises
    ------
    ConfigError
        The file is missing, is not Parquet, or lacks a column of
        :data:`PARQUET_COLUMNS`.
    """
    import duckdb

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: index file not found")
    con = duckdb.connect(":memory:")
    try:
        try:
            described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(p)]).fetchall()
        except duckdb.Error as exc:
            raise ConfigError(f"{p}: not a readable Parquet file: {exc}") from None
        columns = {row[0] for row in described}
        missing = [c for c in PARQUET_COLUMNS if c not in columns]
        if missing:
            raise ConfigError(
                f"{p}: not a Common Crawl columnar index file (cc-index-table flat schema): "
                f"missing column(s) {', '.join(missing)}"
            )
        domains = sorted(matcher.registered_domains)
        row_number = 0
        # a literal IN list is pushed down to the Parquet scan (row groups whose min/max
        # statistics exclude every domain are skipped); a semi-join would not be
        for start in range(0, len(domains), chunk):
            part = domains[start : start + chunk]
            cursor = con.execute(
                f"""
                SELECT url, strftime(fetch_time, '%Y%m%d%H%M%S'), content_mime_type,
                       content_mime_detected, fetch_status, content_digest, warc_filename,
                       warc_record_offset, warc_record_length, url_host_name
                FROM read_parquet(?)
                WHERE url_host_registered_domain IN ({", ".join("?" * len(part))})
                  AND fetch_status = 200
                """,
                [str(p), *part],
            )
            while rows := cursor.fetchmany(batch):
                for url, ts, mime, detected, status, digest, fname, offset, length, host in rows:
                    row_number += 1
                    name = matcher.match(host or host_of(url))
                    if name is None:
                        continue
                    where = f"{p}: matching row {row_number} ({url})"
                    if fname is None or offset is None or length is None:
                        raise ConfigError(f"{where}: warc_filename/offset/length is empty")
                    yield Capture(
                        url=url,
                        timestamp=ts,
                        mime=mime,
                        mime_detected=detected,
                        status=int(status) if status is not None else None,
                        digest=digest,
                        filename=fname,
                        offset=int(offset),
                        length=int(length),
                        index_file=str(p),
                        where=where,
                        name=name,
                    )
    except duckdb.Error as exc:
        raise ConfigError(f"{p}: reading the columnar index failed: {exc}") from None
    finally:
        con.close()


def read_index(
    path: str | Path, matcher: NameMatcher, cdx_fetcher: RangeFetcher | None = None
) -> Iterator[Capture]:
    """:func:`read_parquet` for Parquet files (magic ``PAR1``), :func:`read_cluster_index`
    for ``cluster.idx`` (its cdx files fetched with ``cdx_fetcher``, by default from the
    folder holding it), else :func:`read_cdxj`."""
    p = Path(path)
    if p.is_file():
        with open(p, "rb") as fh:
            if fh.read(4) == b"PAR1":
                return read_parquet(p, matcher)
        if is_cluster_index(p):
            return read_cluster_index(p, matcher, cdx_fetcher or RangeFetcher(str(p.parent)))
    return read_cdxj(p, matcher)
