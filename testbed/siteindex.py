"""The site index of the test web: every served URL -> its stored response.

On disk (``DIR/site/``): ``index.json`` maps :func:`url_key` of each URL to its status,
headers, delay and a slice of ``bodies.bin`` (all bodies, concatenated, memory-mapped by
the server); ``prefixes`` lists generated responses (the endless calendar) and
``generated`` the bodies made at request time (the oversized page).

Lookup is a dict access after one :func:`url_key`: O(1) per request; memory is the index
(a few MB) plus the mapped bodies (paged in by the OS).

Examples
--------
>>> url_key("HTTP://WWW.CS.Cornell.EDU:80/~foo/a%7Eb?b=2&a=1#top")
'http://www.cs.cornell.edu/~foo/a~b?a=1&b=2'
>>> url_key("https://example.org")
'https://example.org/'
"""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from core.domains import is_public_host

_DEFAULT_PORTS = {"http": 80, "https": 443}
INDEX_FILE = "index.json"
BODIES_FILE = "bodies.bin"
#: At most this many redirects are followed when resolving a URL (Scrapy's default is 20).
MAX_REDIRECTS = 10


@lru_cache(maxsize=1 << 18)
def url_key(url: str) -> str:
    """The lookup key of a URL: lower-case scheme and host, default port and fragment
    dropped, ``/`` for an empty path, percent-escapes and query order canonical.

    Raises
    ------
    ValueError
        The URL has no scheme or host, or a bad port.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".").lower()
    if not scheme or not host:
        raise ValueError(f"not an absolute URL: {url!r}")
    port = parts.port
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    rebuilt = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    return canonicalize_url(rebuilt, keep_fragments=False)


@dataclass
class StoredResponse:
    """One answer of the test web.

    ``body`` is the stored body; for a generated body (``generated`` set) it is empty
    and :meth:`chunks` makes the bytes.
    """

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    delay: float = 0.0
    generated: dict | None = None

    @property
    def length(self) -> int:
        if self.generated is not None:
            return int(self.generated["bytes"])
        return len(self.body)

    def header(self, name: str) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def chunks(self, size: int = 1 << 16) -> Iterator[bytes]:
        """The body in pieces (generated bodies are never held whole in memory)."""
        if self.generated is None:
            for i in range(0, len(self.body), size):
                yield self.body[i : i + size]
            return
        total = int(self.generated["bytes"])
        head = self.generated["head"].encode()
        tail = self.generated["tail"].encode()
        filler = self.generated["filler"].encode()
        yield head
        left = total - len(head) - len(tail)
        block = filler * max(1, size // len(filler))
        while left > 0:
            piece = block[:left]
            left -= len(piece)
            yield piece
        yield tail


_MONTH = re.compile(r"^(\d{4})/(\d{2})/$")


def calendar_page(prefix: str, rest: str) -> StoredResponse | None:
    """The endless calendar: ``<prefix>YYYY/MM/`` links to the next and previous month,
    forever (a crawler trap; only the depth or page budget of a crawler ends it)."""
    m = _MONTH.match(rest)
    if not m:
        return None
    year, month = int(m.group(1)), int(m.group(2))
    if not (1 <= month <= 12) or not (1 <= year <= 9999):
        return None
    ny, nm = (year, month + 1) if month < 12 else (year + 1, 1)
    py, pm = (year, month - 1) if month > 1 else (year - 1, 12)
    body = (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>Events calendar {year}-{month:02d}</title></head><body>"
        f"<h1>Department events, {year}-{month:02d}</h1>"
        "<p>No events are scheduled for this month.</p>"
        f"<p><a href='../../{py:04d}/{pm:02d}/'>previous month</a> | "
        f"<a href='../../{ny:04d}/{nm:02d}/'>next month</a></p></body></html>\n"
    ).encode()
    return StoredResponse(200, [("Content-Type", "text/html; charset=utf-8")], body)


def _prefixed(prefixes: list[dict], key: str) -> StoredResponse | None:
    for p in prefixes:
        if key.startswith(p["prefix"]) and p["kind"] == "calendar":
            return calendar_page(p["prefix"], key[len(p["prefix"]) :])
    return None


def is_forbidden_host(host: str) -> bool:
    """True for hosts a crawler must never fetch (:func:`core.domains.is_public_host` is
    false): IP literals (in any spelling the C resolver accepts, such as ``127.1`` or
    ``2130706433``) that are not global addresses, ``localhost``, internal name suffixes
    (``.local``, ``.internal`` ...) and single-label names (``intranet``, ``www``), which
    resolve through DNS search domains to internal machines.

    >>> is_forbidden_host("169.254.169.254"), is_forbidden_host("www.cs.cornell.edu")
    (True, False)
    >>> is_forbidden_host("2130706433"), is_forbidden_host("intranet")
    (True, True)
    """
    return not is_public_host(host)


class _Answers:
    """What the test web answers for a URL, given ``get`` and ``hosts`` (shared by the
    server and the manifest builder, so the manifest states what the server does)."""

    hosts: frozenset[str] | set[str]

    def get(self, url: str) -> StoredResponse | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def answer(self, url: str) -> StoredResponse:
        """The stored response; else a 301 to ``url/`` when that exists (as real servers
        do for directories); else 404 on a known host; else 502 (an unknown host: a dead
        site). Forbidden addresses get 403 (a crawler must not ask at all)."""
        try:
            host = urlsplit(url_key(url)).netloc
        except ValueError:
            return StoredResponse(400, [("Content-Type", "text/plain")], b"bad URL\n")
        if is_forbidden_host(urlsplit(url).hostname or ""):
            return StoredResponse(
                403,
                [("Content-Type", "text/plain"), ("X-Testbed-Error", "forbidden-address")],
                b"testbed: a crawler must never fetch private, loopback or link-local addresses\n",
            )
        found = self.get(url)
        if found is not None:
            return found
        parts = urlsplit(url)
        if not parts.path.endswith("/") and not parts.query:
            slashed = urlunsplit((parts.scheme, parts.netloc, parts.path + "/", "", ""))
            if self.get(slashed) is not None:
                return StoredResponse(
                    301, [("Location", slashed), ("Content-Type", "text/html")], _moved(slashed)
                )
        if host in self.hosts:
            return StoredResponse(404, [("Content-Type", "text/html")], NOT_FOUND_BODY)
        return StoredResponse(
            502,
            [("Content-Type", "text/html"), ("X-Testbed-Error", "unknown-host")],
            b"<html><body><h1>502 Bad Gateway</h1><p>unknown host</p></body></html>\n",
        )


@dataclass
class IndexWriter(_Answers):
    """Collects responses and writes ``index.json`` + ``bodies.bin`` in URL order."""

    entries: dict[str, tuple[int, list[tuple[str, str]], bytes, float, dict | None]] = field(
        default_factory=dict
    )
    prefixes: list[dict] = field(default_factory=list)
    _hosts: set[str] = field(default_factory=set)
    #: key -> the URL as first given (before :func:`url_key`)
    original: dict[str, str] = field(default_factory=dict)

    def add(
        self,
        url: str,
        status: int,
        headers: list[tuple[str, str]],
        body: bytes = b"",
        *,
        delay: float = 0.0,
        generated: dict | None = None,
        replace: bool = False,
    ) -> str:
        key = url_key(url)
        if key in self.entries and not replace:
            return key
        self.entries[key] = (status, list(headers), body, delay, generated)
        self.original.setdefault(key, url)
        self._hosts.add(urlsplit(key).netloc)
        return key

    def __contains__(self, url: str) -> bool:
        return url_key(url) in self.entries

    @property
    def hosts(self) -> set[str]:  # type: ignore[override]
        return self._hosts

    def get(self, url: str) -> StoredResponse | None:
        try:
            key = url_key(url)
        except ValueError:
            return None
        e = self.entries.get(key)
        if e is None:
            return _prefixed(self.prefixes, key)
        return StoredResponse(e[0], e[1], e[2], e[3], e[4])

    def add_prefix(self, prefix: str, kind: str, **params: object) -> None:
        self.prefixes.append({"prefix": url_key(prefix), "kind": kind, **params})
        self._hosts.add(urlsplit(url_key(prefix)).netloc)

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        index: dict[str, dict] = {}
        offset = 0
        with open(folder / BODIES_FILE, "wb") as out:
            for key in sorted(self.entries):
                status, headers, body, delay, generated = self.entries[key]
                out.write(body)
                rec: dict = {"s": status, "h": headers, "o": offset, "n": len(body)}
                if delay:
                    rec["d"] = delay
                if generated:
                    rec["g"] = generated
                index[key] = rec
                offset += len(body)
        doc = {"format": 1, "entries": index, "prefixes": self.prefixes}
        (folder / INDEX_FILE).write_text(json.dumps(doc, sort_keys=True), encoding="utf-8")


class SiteIndex(_Answers):
    """Read-only view of a built site index (``DIR/site``), shared by server threads."""

    def __init__(self, folder: str | Path) -> None:
        folder = Path(folder)
        if (folder / "site").is_dir():
            folder = folder / "site"
        index_path = folder / INDEX_FILE
        if not index_path.is_file():
            from core.exceptions import ConfigError

            raise ConfigError(
                f"{folder}: no test web here (missing {INDEX_FILE}); build one with "
                "`webometrics testbed build --out DIR`"
            )
        doc = json.loads(index_path.read_text(encoding="utf-8"))
        self._entries: dict[str, dict] = doc["entries"]
        self._prefixes: list[dict] = doc["prefixes"]
        self._file = open(folder / BODIES_FILE, "rb")  # noqa: SIM115 - closed in close()
        size = (folder / BODIES_FILE).stat().st_size
        self._bodies = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.hosts: frozenset[str] = frozenset(
            urlsplit(k).netloc for k in self._entries
        ) | frozenset(urlsplit(p["prefix"]).netloc for p in self._prefixes)

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[str]:
        return list(self._entries)

    def stores(self, url: str) -> bool:
        """True when ``url`` (after :func:`url_key`) is a stored answer (not generated)."""
        try:
            return url_key(url) in self._entries
        except ValueError:
            return False

    def close(self) -> None:
        if isinstance(self._bodies, mmap.mmap):
            self._bodies.close()
        self._file.close()

    def get(self, url: str) -> StoredResponse | None:
        """The stored answer of ``url`` exactly (after :func:`url_key`), else ``None``."""
        try:
            key = url_key(url)
        except ValueError:
            return None
        rec = self._entries.get(key)
        if rec is not None:
            body = bytes(self._bodies[rec["o"] : rec["o"] + rec["n"]])
            return StoredResponse(
                rec["s"], [tuple(h) for h in rec["h"]], body, rec.get("d", 0.0), rec.get("g")
            )
        return _prefixed(self._prefixes, key)


NOT_FOUND_BODY = (
    b"<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
    b"<p>The requested URL was not found on this server.</p></body></html>\n"
)


def _moved(url: str) -> bytes:
    return (
        f"<html><head><title>301 Moved Permanently</title></head><body><h1>Moved Permanently"
        f'</h1><p>The document has moved <a href="{url}">here</a>.</p></body></html>\n'
    ).encode()
