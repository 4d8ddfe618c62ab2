"""The published files of a Common Crawl web graph release: their columns, the names
in them (reversed notation, IDNA), the release a file belongs to, and the integrity check
every gzip part passes before it is read (:mod:`crawler.commoncrawl.graph` reads them).

A part cut short by a broken download ends inside its deflate stream; inflating it once
with :mod:`zlib` (:func:`count_lines`) proves it complete and counts its lines, which a
CSV reader would otherwise not notice.
"""

from __future__ import annotations

import contextlib
import gzip
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.choices import GRAPH_LEVELS
from core.exceptions import ConfigError, ParameterError

LEVELS = GRAPH_LEVELS

#: the columns of the published files, per level
VERTEX_COLUMNS = {
    "domain": {"id": "BIGINT", "name": "VARCHAR", "num_hosts": "BIGINT"},
    "host": {"id": "BIGINT", "name": "VARCHAR"},
}
EDGE_COLUMNS = {"from_id": "BIGINT", "to_id": "BIGINT"}
RANK_HEADER = ("#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev")
RANK_COLUMNS = {
    "harmonicc_pos": "BIGINT",
    "harmonicc_val": "DOUBLE",
    "pr_pos": "BIGINT",
    "pr_val": "DOUBLE",
    "name": "VARCHAR",
}

_RELEASE = re.compile(r"(cc-main-[0-9a-z-]+?)[/-](domain|host)[/-](?:vertices|edges|ranks)")


class GraphInputError(ConfigError):
    """A web graph file is missing, truncated, malformed or does not match the others.

    The message names the file and the line (exit code 2).
    """


def reverse_name(name: str) -> str:
    """A host or domain name in reversed notation, or back.

    Examples
    --------
    >>> reverse_name("cs.ox.ac.uk")
    'uk.ac.ox.cs'
    >>> reverse_name("uk.ac.ox.cs")
    'cs.ox.ac.uk'
    """
    return ".".join(reversed(name.split(".")))


def graph_name(domain: str) -> str:
    """A university domain as the graph names it: lower case, ASCII (IDNA), no trailing
    dot, a leading ``www.`` stripped, reversed.

    Examples
    --------
    >>> graph_name("WWW.MIT.edu.")
    'edu.mit'
    >>> graph_name("спбгу.рф")
    'xn--p1ai.xn--90ae8ahn'

    Raises
    ------
    ParameterError
        The name cannot be written in IDNA.
    """
    name = domain.strip().rstrip(".").lower()
    if name.startswith("www."):
        name = name[4:]
    try:
        ascii_name = name.encode("ascii").decode()
    except UnicodeEncodeError:
        import idna

        try:
            ascii_name = idna.encode(name, uts46=True).decode()
        except idna.IDNAError as exc:
            raise ParameterError(
                f"university domain {domain!r} has no IDNA form ({exc}): fix it in the "
                "universities file"
            ) from exc
    return reverse_name(ascii_name)


def release_of(path: str | Path) -> tuple[str, str] | None:
    """``(release, level)`` from a published file name, ``None`` for another name.

    Examples
    --------
    >>> release_of("cc-main-2024-nov-feb-apr-domain-vertices.txt.gz")
    ('cc-main-2024-nov-feb-apr', 'domain')
    >>> release_of("part-00003.gz") is None
    True
    """
    m = _RELEASE.search(Path(path).as_posix())
    return (m.group(1), m.group(2)) if m else None


class GzipLines:
    """An incremental check of a gzip (or plain) text stream: its lines, and its end.

    Bytes are fed as they arrive (from a file or a download); every gzip member is
    inflated to its end-of-stream marker, concatenated members one after the other.
    :meth:`finish` raises when the stream stopped inside a member (truncated). Memory:
    one chunk and its inflated text.

    Parameters
    ----------
    name : str
        The file or URL, for the messages.
    gzip : bool
        Whether the stream is gzip (else plain text: lines are counted only).

    Examples
    --------
    >>> import gzip
    >>> data = gzip.compress(b"1 2" + bytes([10]) + b"3 4" + bytes([10]))
    >>> check = GzipLines("a.gz")
    >>> len(check.feed(data)), check.finish()
    (8, 2)
    >>> check = GzipLines("b.gz")
    >>> _ = check.feed(data[:-9])
    >>> check.finish()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    crawler.commoncrawl.dumps.GraphInputError: b.gz: truncated gzip part: the stream ends ...
    """

    def __init__(self, name: str, *, gzip: bool = True) -> None:
        self.name = name
        self.gzip = gzip
        self.lines = 0
        self.bytes_in = 0
        self._last = b"\n"
        self._inflater = zlib.decompressobj(wbits=31)
        self._in_member = False

    def feed(self, data: bytes) -> bytes:
        """Check the next bytes; return their inflated text.

        Raises
        ------
        GraphInputError
            The bytes are not gzip (the message names the line reached).
        """
        self.bytes_in += len(data)
        if not self.gzip:
            if data:
                self.lines += data.count(b"\n")
                self._last = data[-1:]
            return data
        out = []
        pending = data
        while pending:
            try:
                text = self._inflater.decompress(pending)
            except zlib.error as exc:
                raise GraphInputError(
                    f"{self.name}: not a valid gzip file after line {self.lines} ({exc}): "
                    "download the part again"
                ) from exc
            self._in_member = True
            if text:
                self.lines += text.count(b"\n")
                self._last = text[-1:]
                out.append(text)
            if self._inflater.eof:
                self._in_member = False
                pending = self._inflater.unused_data
                self._inflater = zlib.decompressobj(wbits=31)
            else:
                pending = b""
        return b"".join(out)

    def finish(self) -> int:
        """The number of lines, once the stream has ended.

        Raises
        ------
        GraphInputError
            The stream ended inside a gzip member (truncated).
        """
        if self._in_member:
            where = (
                f"after line {self.lines:,}"
                if self._last == b"\n"
                else f"inside line {self.lines + 1:,}"
            )
            raise GraphInputError(
                f"{self.name}: truncated gzip part: the stream ends {where}, before its end "
                "marker: download the part again"
            )
        return self.lines + (self._last != b"\n")


def count_lines(path: Path, *, chunk_size: int = 1 << 20) -> int:
    """The number of lines of a (gzip or plain) text file, proving a gzip file complete.

    Every gzip member is inflated to its end-of-stream marker; concatenated members are
    read one after the other (:class:`GzipLines`). Memory: one chunk.

    Raises
    ------
    GraphInputError
        The file is missing, is not gzip although named ``.gz``, or ends before the end of
        its gzip stream (truncated: the message names the last line read).
    """
    if not path.is_file():
        raise GraphInputError(f"{path}: no such file")
    check = GzipLines(str(path), gzip=path.name.endswith(".gz"))
    with path.open("rb") as fh:
        while buf := fh.read(chunk_size):
            check.feed(buf)
    return check.finish()


def first_line(path: Path) -> str:
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as fh:
            return str(fh.readline()).rstrip("\r\n")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise GraphInputError(f"{path}: cannot read the first line ({exc})") from exc


def find_line(path: Path, predicate: Callable[[list[str]], bool]) -> tuple[int, str] | None:
    """The first ``(line number, line)`` of a file whose tab-separated fields satisfy
    ``predicate`` (used to name the line of an error DuckDB found without one)."""
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        for number, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            with contextlib.suppress(ValueError, IndexError):
                if predicate(line.split("\t")):
                    return number, line
    return None


__all__ = [
    "EDGE_COLUMNS",
    "LEVELS",
    "RANK_COLUMNS",
    "RANK_HEADER",
    "VERTEX_COLUMNS",
    "GraphInputError",
    "GzipLines",
    "count_lines",
    "find_line",
    "first_line",
    "graph_name",
    "release_of",
    "reverse_name",
]
