"""Reader of the WebKB "4 Universities" raw pages (Craven et al. 1998).

Each member of ``webkb-4universities/webkb.tar.gz`` is ``webkb/<class>/<university>/<name>``
where ``<name>`` is the page URL with ``/`` written ``^`` and ``:`` written U+F03A; the
file holds the HTTP response headers of January 1997, a blank line and the raw HTML (a
few files have no headers). One pass over the archive: O(size) time (about half a
second), the pages in memory (about 45 MB).

References
----------
M. Craven, D. DiPasquo, D. Freitag, A. McCallum, T. Mitchell, K. Nigam, S. Slattery,
"Learning to Extract Symbolic Knowledge from the World Wide Web", AAAI 1998.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The four universities of WebKB: key -> (name, registered domain).
UNIVERSITIES: dict[str, tuple[str, str]] = {
    "cornell": ("Cornell University", "cornell.edu"),
    "texas": ("University of Texas at Austin", "utexas.edu"),
    "washington": ("University of Washington", "washington.edu"),
    "wisconsin": ("University of Wisconsin-Madison", "wisc.edu"),
}

_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9 _-]*:")
_BLANK = re.compile(rb"\r?\n\r?\n")
#: Response headers of 1997 passed on as they were (others are dropped or recomputed).
KEPT_HEADERS = ("content-type", "last-modified", "etag", "server", "expires")


@dataclass(frozen=True)
class WebkbPage:
    """One WebKB page: its URL, labels and the recorded response."""

    url: str
    label: str  # student, faculty, course, project, department, staff, other
    folder: str  # cornell, texas, washington, wisconsin, misc
    headers: tuple[tuple[str, str], ...]
    body: bytes
    location: str | None = None  # set when the recorded answer was a redirect

    @property
    def member(self) -> str:
        return f"webkb/{self.label}/{self.folder}/{self.url}"


def url_of(name: str) -> str:
    """The URL a WebKB file name stands for.

    >>> url_of("http\\uf03a^^www.cs.cornell.edu^Info^People^")
    'http://www.cs.cornell.edu/Info/People/'
    """
    url = name.replace("\uf03a", ":").replace("^", "/")
    for scheme in ("http", "https", "ftp", "file"):
        if url.startswith(scheme + "//"):
            url = scheme + ":" + url[len(scheme) :]
    return url


def parse_record(data: bytes) -> tuple[list[tuple[str, str]], bytes, str | None]:
    """Split one WebKB file into (kept headers, body, redirect location)."""
    m = _BLANK.search(data)
    if not m or not _HEADER_LINE.match(data):
        return [], data, None
    head, body = data[: m.start()], data[m.end() :]
    headers: list[tuple[str, str]] = []
    location = None
    for raw in head.splitlines():
        if b":" not in raw:
            continue
        name, _, value = raw.decode("latin-1").partition(":")
        name, value = name.strip(), value.strip()
        low = name.lower()
        if low == "location":
            location = value
        elif low in KEPT_HEADERS and value:
            headers.append((name.title(), value))
    return headers, body, location


def read_webkb(archive: str | Path) -> Iterator[WebkbPage]:
    """Every http(s) page of the archive, in archive order (``ftp:``/``file:`` skipped)."""
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            parts = member.name.split("/")
            if len(parts) != 4:
                continue
            _, label, folder, name = parts
            url = url_of(name)
            if not url.startswith(("http://", "https://")):
                continue
            f = tar.extractfile(member)
            if f is None:
                continue
            headers, body, location = parse_record(f.read())
            yield WebkbPage(url, label, folder, tuple(headers), body, location)
