"""A Common Crawl web graph release, found from its published paths, downloaded into a
cache (resumed, checked) or streamed.

Where a release lies (``https://data.commoncrawl.org/projects/hyperlinkgraph/<release>/``,
as the release announcements and ``commoncrawl/cc-webgraph``'s download script publish
it)::

    <release>/domain/<release>-domain-vertices.txt.gz    one file: id, reversed domain, hosts
    <release>/domain/<release>-domain-edges.txt.gz       one file: from_id, to_id
    <release>/domain/<release>-domain-ranks.txt.gz       harmonic centrality and PageRank
    <release>/host/<release>-host-vertices.paths.gz      the listing of host/vertices/part-*.gz
    <release>/host/<release>-host-edges.paths.gz         the listing of host/edges/part-*.gz
    <release>/host/<release>-host-ranks.txt.gz

A listing (``.paths.gz``) holds one path per line below the data root
(``projects/hyperlinkgraph/<release>/host/vertices/part-00000-....txt.gz``). Each kind is
looked up first in the form its level is published in, then in the other (a listing for
the domain graph, one file for the host graph), so either layout is found.

The cache mirrors the published paths below its folder (``<cache>/projects/hyperlinkgraph/
<release>/<level>/...``) and keeps, per release and level, ``webometrics-release.json``:
the files with their sizes (found once; a release is never changed after publication, so a
cached release is used again without a request) and each verified file's size, lines and
modification time.

Algorithm
---------
:meth:`GraphDownloader.fetch` takes one file at a time (Common Crawl asks for no parallel
bulk downloads). A file is downloaded into ``<file>.part``; an interrupted download (a cut
connection, a killed process) continues from the bytes it has with ``Range: bytes=N-``
(the bytes already there are checked first). Every byte is fed, as it arrives, to
:class:`~crawler.commoncrawl.dumps.GzipLines`, which inflates every gzip member to its end
marker and counts the lines: a part is complete when its size equals the server's
``Content-Length`` and its gzip stream ends; only then is it renamed to its published
name. A part that fails the check is fetched once more from its first byte; failing again,
it is an error naming the URL. A cached file whose size or time differs from its record is
checked again (and resumed when shorter, fetched again when broken).

Politeness: at most one request every ``request_interval`` seconds (1 s: Common Crawl's
status page asks whole-file downloaders that meet ``503 Slow Down`` to retry "no more than
once per second"); 503, 429 and other 5xx answers, timeouts and cut connections are
retried ``retries`` times after a pause that doubles from ``request_interval`` up to
``retry_max_wait`` (or the server's ``Retry-After``), and so are 403 answers (CloudFront's
rate limit answers 403 or 429; a missing file is 404); a user agent naming the project.

With ``stream=True`` the edges parts that are not yet in the cache are not stored: each is
read over HTTP while DuckDB scans it (:class:`StreamedPart`, resumed by range after a cut
as a download is), so only the vertices and ranks need disk.

Time: the transfer (plus one inflation of each file, overlapped with it). Memory: one
chunk (1 MiB) and its inflated text.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import http.client
import io
import json
import logging
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.choices import GRAPH_LEVELS
from core.exceptions import ConfigError, ParameterError, RunLockedError, StageError
from crawler.commoncrawl.dumps import GraphInputError, GzipLines, count_lines

log = logging.getLogger(__name__)

#: where Common Crawl publishes its web graphs, below the data root
GRAPH_ROOT = "projects/hyperlinkgraph"
#: a release's name, as published (``cc-main-2024-nov-feb-apr``, ``cc-main-2018-19-nov-dec-jan``)
RELEASE_NAME = re.compile(r"^cc-main-[0-9]{4}(?:-[0-9a-z]+)+$")
#: the cache's record of a release (per level)
RECORD = "webometrics-release.json"
#: the cache's record of the last measured bandwidth
BANDWIDTH = "webometrics-bandwidth.json"
CHUNK = 1 << 20
KINDS = ("vertices", "edges")


@dataclass(frozen=True)
class DownloadPolicy:
    """Politeness, retries and time-outs of the requests (from ``[commoncrawl]``)."""

    request_interval: float = 1.0
    retries: int = 20
    retry_max_wait: float = 60.0
    timeout: float = 60.0
    user_agent: str = "webometrics-crawler/0.1"

    @classmethod
    def from_settings(cls, settings: Any) -> DownloadPolicy:
        cc, crawl = settings.commoncrawl, settings.crawl
        return cls(
            request_interval=cc.request_interval,
            retries=cc.retries,
            retry_max_wait=cc.retry_max_wait,
            timeout=cc.timeout,
            user_agent=crawl.user_agent.format(contact=crawl.contact_url),
        )

    def pause(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``attempt`` (1, 2, ...)."""
        backoff = max(self.request_interval, 0.05) * 2 ** (attempt - 1)
        wait = min(self.retry_max_wait, backoff)
        if retry_after is not None:
            wait = max(wait, min(retry_after, max(self.retry_max_wait, self.request_interval)))
        return wait


def check_release(name: str) -> str:
    """``name`` when it is a published release's name, else a :class:`ParameterError`.

    Examples
    --------
    >>> check_release("cc-main-2024-nov-feb-apr")
    'cc-main-2024-nov-feb-apr'
    >>> check_release("CC-MAIN-2024-33")
    Traceback (most recent call last):
    ...
    core.exceptions.ParameterError: --release 'CC-MAIN-2024-33': not a web graph release name; \
web graph releases are named like cc-main-2024-nov-feb-apr (the list: \
https://commoncrawl.org/web-graphs); CC-MAIN-YYYY-WW names a crawl, not a graph
    """
    cleaned = name.strip()
    if not RELEASE_NAME.match(cleaned):
        hint = "; CC-MAIN-YYYY-WW names a crawl, not a graph" if name.upper() == name else ""
        raise ParameterError(
            f"--release {name!r}: not a web graph release name; web graph releases are named "
            "like cc-main-2024-nov-feb-apr (the list: https://commoncrawl.org/web-graphs)"
            f"{hint}"
        )
    return cleaned


def default_cache_dir() -> Path:
    """The user's data folder for the cache (``$XDG_DATA_HOME/webometrics/commoncrawl``,
    ``~/.local/share/webometrics/commoncrawl``: :func:`core.folders.user_folder`), never
    inside the checkout."""
    from core.folders import user_folder

    return user_folder("data") / "commoncrawl"


# -- what a release holds -------------------------------------------------------------------
@dataclass(frozen=True)
class RemoteFile:
    """One published file: its kind (``vertices``, ``edges``, ``ranks``), its path below
    the data root, and its size in bytes (``None`` when the server did not say)."""

    kind: str
    path: str
    size: int | None


@dataclass(frozen=True)
class Release:
    """The files of one release and level, as published."""

    release: str
    level: str
    base_url: str
    files: tuple[RemoteFile, ...]
    listings: tuple[str, ...] = ()

    def of(self, kind: str) -> list[RemoteFile]:
        return [f for f in self.files if f.kind == kind]

    @property
    def size(self) -> int:
        return sum(f.size or 0 for f in self.files)

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")


@dataclass(frozen=True)
class FilePlan:
    """A file's state in the cache: ``complete`` (checked), ``unchecked`` (all its bytes
    there, no record of a check), ``partial`` (some bytes there) or ``missing``; whether it
    will be streamed instead of stored."""

    file: RemoteFile
    state: str
    have: int
    stream: bool

    @property
    def to_fetch(self) -> int:
        if self.state in ("complete", "unchecked"):
            return 0
        return max(0, (self.file.size or 0) - self.have)


@dataclass(frozen=True)
class Plan:
    """What a fetch would transfer and store, the disk free, and the time to expect."""

    release: Release
    cache_dir: Path
    files: tuple[FilePlan, ...]
    disk_free: int
    bytes_per_second: float
    bandwidth_source: str  # how the bandwidth was found (measured when, or assumed)
    reserve: int = 0  # bytes to leave free on the cache's disk

    @property
    def to_download(self) -> int:
        """Bytes still to transfer, streamed parts included."""
        return sum(f.to_fetch for f in self.files if f.state != "complete")

    @property
    def to_store(self) -> int:
        """Bytes the cache still needs on disk."""
        return sum(f.to_fetch for f in self.files if f.state != "complete" and not f.stream)

    @property
    def disk_short(self) -> bool:
        return self.to_store + self.reserve > self.disk_free

    @property
    def seconds(self) -> float:
        return self.to_download / self.bytes_per_second if self.bytes_per_second else 0.0

    @property
    def streamable(self) -> int:
        """Bytes of edges parts not yet complete: what ``--stream`` keeps off the disk."""
        return sum(
            f.to_fetch for f in self.files if f.file.kind == "edges" and f.state != "complete"
        )


@dataclass
class Fetched:
    """The local view of a release: the cached files (and the streamed edges parts), the
    line count of every verified file, and what the transfer cost."""

    release: Release
    vertices: list[Path]
    edges: list[Path | StreamedPart]
    ranks: Path | None
    lines: dict[str, int] = field(default_factory=dict)
    downloaded: int = 0
    seconds: float = 0.0
    reused: int = 0
    refetched: int = 0
    resumed: int = 0


# -- HTTP ------------------------------------------------------------------------------------
class _MissingError(Exception):
    """404 or 410: no such file."""


class _Http:
    """Polite requests with retries; ranges resumed after a cut (see the module)."""

    def __init__(self, policy: DownloadPolicy, sleep: Callable[[float], None] = time.sleep):
        self.policy = policy
        self._sleep = sleep
        self._last = float("-inf")
        self.requests = 0
        self.retried = 0
        self.resumed = 0  # range requests that continue a file

    def _wait(self) -> None:
        pause = self._last + self.policy.request_interval - time.monotonic()
        if pause > 0:
            self._sleep(pause)
        self._last = time.monotonic()

    def open(self, url: str, *, method: str = "GET", start: int = 0) -> Any:
        """The server's answer (200/206), after retries.

        Raises
        ------
        _MissingError
            404 or 410.
        ConfigError
            Another 4xx answer (416 included: the caller asked past the end).
        StageError
            The server kept failing or could not be reached.
        """
        headers = {"User-Agent": self.policy.user_agent, "Accept-Encoding": "identity"}
        if start:
            headers["Range"] = f"bytes={start}-"
        failure = ""
        retry_after: float | None = None
        attempts = self.policy.retries + 1
        for attempt in range(attempts):
            if attempt:
                self.retried += 1
                self._sleep(self.policy.pause(attempt, retry_after=retry_after))
            self._wait()
            self.requests += 1
            retry_after = None
            request = urllib.request.Request(url, headers=headers, method=method)
            try:
                return urllib.request.urlopen(request, timeout=self.policy.timeout)
            except urllib.error.HTTPError as exc:
                exc.close()
                if exc.code in (404, 410):
                    raise _MissingError(f"HTTP {exc.code}") from None
                # CloudFront's rate limit answers 403 or 429 (status.commoncrawl.org), S3's
                # back-pressure 503 Slow Down: all slow down and retry
                if exc.code in (403, 429) or exc.code >= 500:
                    retry_after = _seconds(exc.headers.get("Retry-After"))
                    failure = f"HTTP {exc.code} {exc.reason}"
                    log.info("%s: %s, retrying (%d of %d)", url, failure, attempt + 1, attempts)
                    continue
                raise ConfigError(f"{url}: HTTP {exc.code} {exc.reason}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                failure = str(getattr(exc, "reason", exc))
                log.info("%s: %s, retrying (%d of %d)", url, failure, attempt + 1, attempts)
                continue
        raise StageError(
            f"{url}: failed after {attempts} attempt(s): {failure}; check the network, or "
            "the server's address ([commoncrawl] data_url, --base-url), and try again: what "
            "was downloaded is kept and resumed"
        )

    def size(self, url: str) -> int | None:
        """The file's ``Content-Length`` from a HEAD request."""
        with self.open(url, method="HEAD") as answer:
            length = answer.headers.get("Content-Length")
        return int(length) if length and length.isdigit() else None

    def chunks(self, url: str, start: int, size: int | None) -> Iterator[bytes]:
        """The file's bytes from ``start`` to its end, reconnecting with a range after a cut
        (a cut that brought bytes does not use up a retry)."""
        offset = start
        failures = 0
        while size is None or offset < size:
            if offset:
                self.resumed += 1
            answer = self.open(url, start=offset)
            got_any = False
            try:
                skip = 0
                if offset and answer.status == 200:  # the server ignored the range
                    skip = offset
                    log.warning("%s: the server ignored the Range header; reading past", url)
                while True:
                    try:
                        data = answer.read(CHUNK)
                    except (http.client.HTTPException, OSError) as exc:
                        log.info("%s: connection cut at byte %s (%s)", url, f"{offset:,}", exc)
                        break
                    if not data:
                        break
                    if skip:
                        drop = min(skip, len(data))
                        data, skip = data[drop:], skip - drop
                        if not data:
                            continue
                    got_any = True
                    offset += len(data)
                    yield data
            finally:
                answer.close()
            if size is None and got_any:
                return
            if size is not None and offset >= size:
                return
            failures = 0 if got_any else failures + 1
            if failures > self.policy.retries:
                raise StageError(
                    f"{url}: the connection broke {failures} times at byte {offset:,} of "
                    f"{size or 0:,}; try again later: the bytes already downloaded are kept "
                    "and resumed"
                )
            self.retried += 1
            self._sleep(self.policy.pause(max(failures, 1)))

    def get(self, url: str) -> bytes:
        """A small file whole (a listing)."""
        return b"".join(self.chunks(url, 0, None))


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


# -- streamed edges --------------------------------------------------------------------------
class StreamedPart:
    """An edges part read over HTTP instead of from the cache (``--stream``).

    :meth:`open` returns its inflated text as a binary file; the compressed bytes are
    checked on the way (:class:`~crawler.commoncrawl.dumps.GzipLines`) and a cut
    connection is resumed by range. At the end of the stream the size must equal the
    server's and the gzip stream must have ended, else :meth:`open`'s reader raises
    (``error`` keeps the exception, for a reader that swallows it). ``lines`` is the
    number of lines once read.
    """

    def __init__(self, http: _Http, url: str, size: int | None, *, progress: bool = False) -> None:
        self.name = url
        self.size = size
        self.lines: int | None = None
        self.error: BaseException | None = None
        self._http = http
        self._progress = progress

    def __str__(self) -> str:
        return self.name

    def _text(self) -> Iterator[bytes]:
        from tqdm import tqdm

        check = GzipLines(self.name)
        got = 0
        bar = tqdm(
            total=self.size,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=f"streaming {self.name.rsplit('/', 1)[-1]}",
            disable=not self._progress,
            leave=False,
        )
        try:
            for data in self._http.chunks(self.name, 0, self.size):
                got += len(data)
                bar.update(len(data))
                text = check.feed(data)
                if text:
                    yield text
            if self.size is not None and got != self.size:
                raise GraphInputError(
                    f"{self.name}: got {got:,} bytes, the server announced {self.size:,}"
                )
            self.lines = check.finish()
        except BaseException as exc:
            self.error = exc
            raise
        finally:
            bar.close()

    def open(self) -> io.BufferedReader:
        return io.BufferedReader(_IterRaw(self._text()), buffer_size=CHUNK)


class _IterRaw(io.RawIOBase):
    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


# -- the downloader --------------------------------------------------------------------------
class GraphDownloader:
    """Find, plan and fetch the files of a release (see the module).

    Parameters
    ----------
    cache_dir : Path
        The cache folder (created when needed).
    base_url : str
        The data root (``https://data.commoncrawl.org/``).
    policy : DownloadPolicy
    assumed_bytes_per_second : float
        The dry run's bandwidth until a download has measured one.
    reserve_bytes : int
        Bytes the download leaves free on the cache's disk (else the disk is short).
    graphinfo_url : str, optional
        Common Crawl's list of web graph releases, read only to name the known releases
        when one is not found.
    progress : bool
        Progress bars (tqdm, on stderr).
    """

    def __init__(
        self,
        cache_dir: Path,
        *,
        base_url: str = "https://data.commoncrawl.org/",
        policy: DownloadPolicy | None = None,
        assumed_bytes_per_second: float = 10e6,
        reserve_bytes: int = 0,
        graphinfo_url: str | None = None,
        progress: bool = False,
    ) -> None:
        if not base_url.lower().startswith(("http://", "https://")):
            raise ParameterError(f"--base-url {base_url!r}: give an http(s) URL")
        self.cache_dir = Path(cache_dir).expanduser()
        if self.cache_dir.exists() and not self.cache_dir.is_dir():
            raise ParameterError(f"--cache {self.cache_dir}: not a folder")
        self.base_url = base_url.rstrip("/") + "/"
        self.http = _Http(policy or DownloadPolicy())
        self.assumed = assumed_bytes_per_second
        self.reserve = reserve_bytes
        self.graphinfo_url = graphinfo_url
        self.progress = progress

    # where things are ---------------------------------------------------------------------
    def folder(self, release: str, level: str) -> Path:
        return self.cache_dir / GRAPH_ROOT / release / level

    def local(self, path: str) -> Path:
        return self.cache_dir / path.lstrip("/")

    def _record_path(self, release: str, level: str) -> Path:
        return self.folder(release, level) / RECORD

    def _read_record(self, release: str, level: str) -> dict[str, Any]:
        path = self._record_path(release, level)
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return {}

    def _write_record(self, release: str, level: str, record: dict[str, Any]) -> None:
        path = self._record_path(release, level)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(path)

    # finding the files ----------------------------------------------------------------------
    def resolve(self, release: str, level: str = "domain", *, ranks: bool = True) -> Release:
        """The release's files and sizes: from the cache's record when it has them (no
        request), else from the published paths (listings, HEAD requests).

        Raises
        ------
        ParameterError
            Not a release name, or an unknown level.
        ConfigError
            The server has no such release (the message says where it looked).
        StageError
            The server cannot be reached.
        """
        release = check_release(release)
        if level not in GRAPH_LEVELS:
            raise ParameterError(f"--level {level!r}: use 'domain' or 'host'")
        record = self._read_record(release, level)
        cached = record.get("files")
        if cached and (record.get("ranks_looked_up") or not ranks):
            kept = tuple(RemoteFile(**f) for f in cached if ranks or f["kind"] != "ranks")
            return Release(release, level, self.base_url, kept, tuple(record.get("listings", ())))
        base = f"{GRAPH_ROOT}/{release}/{level}/{release}-{level}"
        files: list[RemoteFile] = []
        listings: list[str] = []
        for kind in KINDS:
            found = self._find_kind(base, kind, level, listings)
            if found is None:
                raise ConfigError(
                    f"release {release}: no {level} graph {kind} at "
                    f"{self.base_url}{base}-{kind}.txt.gz or .paths.gz (HTTP 404): check the "
                    "release's name on https://commoncrawl.org/web-graphs (e.g. "
                    f"cc-main-2024-nov-feb-apr) and --level{self._known_releases()}"
                )
            files += found
        if ranks:
            path = f"{base}-ranks.txt.gz"
            try:
                files.append(RemoteFile("ranks", path, self.http.size(self.base_url + path)))
            except _MissingError:
                log.warning(
                    "%s%s: not published; the citing nodes get no ranks", self.base_url, path
                )
        rel = Release(release, level, self.base_url, tuple(files), tuple(listings))
        record.update(
            release=release,
            level=level,
            base_url=self.base_url,
            files=[f.__dict__ for f in files],
            listings=listings,
            ranks_looked_up=ranks,
        )
        self._write_record(release, level, record)
        return rel

    def _known_releases(self, shown: int = 8) -> str:
        """``; the newest releases: ...`` from Common Crawl's list of web graphs
        (``graphinfo.json``: ``[{"id": "cc-main-...", "crawls": [...], ...}, ...]``, newest
        first), or nothing when the list cannot be had (one request, no retry)."""
        if not self.graphinfo_url:
            return ""
        request = urllib.request.Request(
            self.graphinfo_url, headers={"User-Agent": self.http.policy.user_agent}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.http.policy.timeout) as answer:
                listed = json.loads(answer.read(1 << 20))
            ids = [str(g["id"]) for g in listed if isinstance(g, dict) and g.get("id")]
        except (OSError, ValueError, TypeError, KeyError):
            return ""
        if not ids:
            return ""
        more = f" (and {len(ids) - shown} older)" if len(ids) > shown else ""
        return f"; the newest releases: {', '.join(ids[:shown])}{more}"

    def _find_kind(
        self, base: str, kind: str, level: str, listings: list[str]
    ) -> list[RemoteFile] | None:
        forms = ["paths", "txt"] if level == "host" else ["txt", "paths"]
        for form in forms:
            path = f"{base}-{kind}.{form}.gz"
            try:
                if form == "txt":
                    return [RemoteFile(kind, path, self.http.size(self.base_url + path))]
                data = self.http.get(self.base_url + path)
            except _MissingError:
                continue
            target = self.local(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            listings.append(path)
            try:
                text = gzip.decompress(data).decode("utf-8")
            except (OSError, EOFError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{self.base_url}{path}: not a gzip listing ({exc})") from None
            parts = [line.strip() for line in text.splitlines() if line.strip()]
            if not parts:
                raise ConfigError(f"{self.base_url}{path}: the listing names no file")
            out = []
            for part in parts:
                part = re.sub(r"^(s3://commoncrawl/|https?://[^/]+/)", "", part)
                try:
                    size = self.http.size(self.base_url + part)
                except _MissingError:
                    raise ConfigError(
                        f"{self.base_url}{part} (listed in {path}): HTTP 404; the listing and "
                        "the server do not match"
                    ) from None
                out.append(RemoteFile(kind, part, size))
            return out
        return None

    # planning ---------------------------------------------------------------------------------
    def _state(self, rel: Release, f: RemoteFile, record: dict[str, Any]) -> tuple[str, int]:
        final = self.local(f.path)
        if final.is_file():
            st = final.stat()
            seen = record.get("verified", {}).get(f.path)
            if seen and seen["size"] == st.st_size and seen["mtime_ns"] == st.st_mtime_ns:
                return "complete", st.st_size
            if f.size is None or st.st_size == f.size:
                return "unchecked", st.st_size  # checked (not fetched) by the next fetch
            return "partial", min(st.st_size, f.size)
        part = final.with_name(final.name + ".part")
        if part.is_file():
            return "partial", min(part.stat().st_size, f.size or 0)
        return "missing", 0

    def bandwidth(self) -> tuple[float, str]:
        """Bytes per second and how it was found: the last measured download into this
        cache, else the assumed figure."""
        try:
            m = json.loads((self.cache_dir / BANDWIDTH).read_text(encoding="utf-8"))
            rate = float(m["bytes"]) / float(m["seconds"])
            return rate, (
                f"{rate / 1e6:,.1f} MB/s, measured ({m['bytes'] / 1e6:,.1f} MB from "
                f"{m['base_url']} on {m['measured_at'][:16].replace('T', ' ')} UTC)"
            )
        except (OSError, ValueError, KeyError, ZeroDivisionError, TypeError):
            return self.assumed, (
                f"{self.assumed / 1e6:,.1f} MB/s, assumed ([commoncrawl] "
                "assumed_mb_per_second; a download measures the real one)"
            )

    def plan(self, rel: Release, *, stream: bool = False) -> Plan:
        """What :meth:`fetch` would do, with no request."""
        record = self._read_record(rel.release, rel.level)
        files = []
        for f in rel.files:
            state, have = self._state(rel, f, record)
            files.append(FilePlan(f, state, have, stream and f.kind == "edges"))
        rate, source = self.bandwidth()
        free = disk_free(self.cache_dir)
        return Plan(rel, self.cache_dir, tuple(files), free, rate, source, self.reserve)

    # fetching ----------------------------------------------------------------------------------
    def fetch(self, rel: Release, *, stream: bool = False) -> Fetched:
        """Every file of ``rel`` in the cache, complete and checked (the edges parts not
        cached streamed instead, with ``stream``).

        Raises
        ------
        ConfigError
            The disk is short for the files still to download (nothing is downloaded),
            or a file fails its check twice.
        StageError
            The server kept failing.
        RunLockedError
            Another process is downloading this release into this cache.
        """
        with self._lock(rel):
            return self._fetch(rel, stream=stream)

    @contextlib.contextmanager
    def _lock(self, rel: Release) -> Iterator[None]:
        """An exclusive lock on the release's folder of the cache while files are written
        (two downloads appending to one ``.part`` would spoil it)."""
        import fcntl

        folder = self.folder(rel.release, rel.level)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "webometrics-download.lock"
        with path.open("a+") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "another process"
                raise RunLockedError(
                    f"{folder}: {holder} is downloading {rel.release} ({rel.level}) into "
                    "this cache; wait for it to end, or give another folder with --cache DIR"
                ) from None
            fh.seek(0)
            fh.truncate()
            fh.write(f"process {os.getpid()}")
            fh.flush()
            try:
                yield
            finally:
                fh.seek(0)
                fh.truncate()
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _fetch(self, rel: Release, *, stream: bool) -> Fetched:
        plan = self.plan(rel, stream=stream)
        if plan.disk_short:
            raise ConfigError(short_disk_message(plan))
        record = self._read_record(rel.release, rel.level)
        record.setdefault("verified", {})
        out = Fetched(rel, [], [], None)
        total = plan.to_store
        from tqdm import tqdm

        bar = tqdm(
            total=total,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=f"{rel.release} {rel.level}",
            disable=not self.progress or total == 0,
            leave=False,
        )
        t0 = time.perf_counter()
        resumed = self.http.resumed
        try:
            for fp in plan.files:
                f = fp.file
                if fp.stream and fp.state not in ("complete", "unchecked"):
                    out.edges.append(
                        StreamedPart(self.http, rel.url(f.path), f.size, progress=self.progress)
                    )
                    continue
                path, lines, how = self._one(rel, f, record, fp, bar)
                out.lines[str(path)] = lines
                if how == "reused":
                    out.reused += 1
                elif how == "refetched":
                    out.refetched += 1
                if f.kind == "vertices":
                    out.vertices.append(path)
                elif f.kind == "edges":
                    out.edges.append(path)
                else:
                    out.ranks = path
        finally:
            bar.close()
            self._write_record(rel.release, rel.level, record)
        out.seconds = time.perf_counter() - t0
        out.resumed = self.http.resumed - resumed
        out.downloaded = self._downloaded
        self._downloaded = 0
        if out.downloaded:
            self._measure(out.downloaded, self._network_seconds)
        self._network_seconds = 0.0
        return out

    _downloaded = 0
    _network_seconds = 0.0

    def _measure(self, nbytes: int, seconds: float) -> None:
        if seconds <= 0:
            return
        data = {
            "bytes": nbytes,
            "seconds": round(seconds, 3),
            "base_url": self.base_url,
            "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        path = self.cache_dir / BANDWIDTH
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(path)

    def _one(
        self, rel: Release, f: RemoteFile, record: dict[str, Any], fp: FilePlan, bar: Any
    ) -> tuple[Path, int, str]:
        """One file complete and checked in the cache: (path, lines, how it came)."""
        final = self.local(f.path)
        part = final.with_name(final.name + ".part")
        verified = record["verified"]
        if fp.state == "complete":
            return final, int(verified[f.path]["lines"]), "reused"
        how = "downloaded"
        if final.is_file():  # no record, or a record that does not match: check it again
            size = final.stat().st_size
            if f.size is None or size == f.size:
                try:
                    lines = count_lines(final)
                    self._verified(record, f, final, lines)
                    return final, lines, "reused"
                except GraphInputError as exc:
                    log.warning("%s: %s; fetching it again", final, exc)
                    final.unlink()
                    how = "refetched"
            elif size < f.size:
                log.warning("%s: %s of %s bytes; resuming", final, f"{size:,}", f"{f.size:,}")
                final.replace(part)
            else:
                final.unlink()
        final.parent.mkdir(parents=True, exist_ok=True)
        url = rel.url(f.path)
        for attempt in range(2):
            try:
                lines = self._download(url, f.size, part, bar)
            except GraphInputError as exc:
                part.unlink(missing_ok=True)
                if attempt:
                    raise GraphInputError(
                        f"{exc} (fetched twice: the server's copy may be broken; try again "
                        "later, or report it to Common Crawl)"
                    ) from None
                log.warning("%s; fetching it again from its first byte", exc)
                how = "refetched"
                continue
            part.replace(final)
            self._verified(record, f, final, lines)
            return final, lines, how
        raise AssertionError("unreachable")

    def _verified(self, record: dict[str, Any], f: RemoteFile, final: Path, lines: int) -> None:
        st = final.stat()
        record["verified"][f.path] = {
            "size": st.st_size,
            "lines": lines,
            "mtime_ns": st.st_mtime_ns,
        }

    def _download(self, url: str, size: int | None, part: Path, bar: Any) -> int:
        """Download (or resume) ``url`` into ``part``; its line count.

        Raises
        ------
        GraphInputError
            The bytes (those already in ``part`` included) are not a complete gzip file of
            the announced size.
        """
        check = GzipLines(url, gzip=url.endswith(".gz"))
        have = part.stat().st_size if part.is_file() else 0
        if size is not None and have > size:
            part.unlink()
            have = 0
        if have:  # the bytes already there are checked first
            log.info("%s: resuming at byte %s of %s", url, f"{have:,}", f"{size or 0:,}")
            try:
                with part.open("rb") as fh:
                    while buf := fh.read(CHUNK):
                        check.feed(buf)
            except GraphInputError:
                part.unlink()
                have = 0
                check = GzipLines(url, gzip=url.endswith(".gz"))
        got = have
        with part.open("ab") as fh:
            t = time.perf_counter()
            for data in self.http.chunks(url, have, size):
                fh.write(data)
                check.feed(data)
                got += len(data)
                self._downloaded += len(data)
                bar.update(len(data))
            self._network_seconds += time.perf_counter() - t
        if size is not None and got != size:
            raise GraphInputError(f"{url}: got {got:,} bytes, the server announced {size:,}")
        return check.finish()


def disk_free(folder: Path) -> int:
    """Free bytes on the disk of ``folder`` (or of its nearest existing parent)."""
    probe = Path(folder).expanduser().absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def human(n: float) -> str:
    """Bytes for people (binary units, as Common Crawl's announcements give them).

    >>> human(1536), human(14.6e9)
    ('1.5 KiB', '13.6 GiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def duration(seconds: float) -> str:
    """``1 h 05 min``, ``4 min 10 s``, ``12 s``, ``0.4 s``.

    >>> duration(3900), duration(250), duration(12.3), duration(0.42)
    ('1 h 05 min', '4 min 10 s', '12 s', '0.4 s')
    """
    if seconds < 9.95:
        return f"{seconds:.1f} s"
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


def short_disk_message(plan: Plan) -> str:
    """What to do when the cache's disk is short."""
    stream_saves = plan.streamable if not any(f.stream for f in plan.files) else 0
    tip = (
        f"; --stream reads the edges over the network instead of storing them (then "
        f"{human(plan.to_store - stream_saves)} are needed)"
        if stream_saves
        else ""
    )
    kept = (
        f" and {human(plan.reserve)} kept free ([commoncrawl] reserve_mb)" if plan.reserve else ""
    )
    return (
        f"the disk is short: the release needs {human(plan.to_store)} more in "
        f"{plan.cache_dir}{kept}, {human(plan.disk_free)} are free{tip}; or give another "
        "folder with --cache DIR ([commoncrawl] cache_dir). Nothing was downloaded."
    )


#: more files of one kind than this are shown as one line in the dry run
GROUP = 6


def _state_text(fp: FilePlan) -> str:
    if fp.state == "complete":
        return "in the cache"
    if fp.state == "unchecked":
        return "in the cache, to check"
    if fp.stream:
        return "streamed (not stored)"
    if fp.state == "partial":
        return f"partial: {human(fp.have)}"
    return "to download"


def describe(plan: Plan) -> list[str]:
    """The dry run's lines: each file with its size and state, the totals, the disk and
    the time to expect."""
    rel = plan.release
    lines = [
        f"release {rel.release}, {rel.level} graph, from {rel.base_url}{GRAPH_ROOT}/"
        f"{rel.release}/{rel.level}/",
        f"cache: {plan.cache_dir}",
        "",
        f"{'size':>11}  {'state':<22}  file",
    ]
    folder = f"{GRAPH_ROOT}/{rel.release}/{rel.level}/"
    for kind in ("vertices", "edges", "ranks"):
        plans = [fp for fp in plan.files if fp.file.kind == kind]
        if len(plans) > GROUP:  # a host graph's parts: one line per kind
            states: dict[str, int] = {}
            for fp in plans:
                what = _state_text(fp).split(":")[0]
                states[what] = states.get(what, 0) + 1
            size = human(sum(fp.file.size or 0 for fp in plans))
            state = ", ".join(f"{n} {what}" for what, n in states.items())
            name = f"{kind}/part-*.gz ({len(plans)} parts)"
            lines.append(f"{size:>11}  {state:<22}  {name}")
            continue
        for fp in plans:
            f = fp.file
            size = human(f.size) if f.size is not None else "unknown"
            name = f.path[len(folder) :] if f.path.startswith(folder) else f.path
            lines.append(f"{size:>11}  {_state_text(fp):<22}  {name}")
    counts = {k: len(rel.of(k)) for k in ("vertices", "edges", "ranks")}
    lines += [
        "",
        f"files: {counts['vertices']} vertices, {counts['edges']} edges, {counts['ranks']} ranks; "
        f"{human(rel.size)} in all",
        f"to download: {human(plan.to_download)}; to store: {human(plan.to_store)}; "
        f"disk free in the cache's folder: {human(plan.disk_free)}",
        f"expected time: {duration(plan.seconds)} at {plan.bandwidth_source}",
    ]
    if plan.disk_short:
        lines.append(short_disk_message(plan).replace(" Nothing was downloaded.", ""))
    elif plan.to_download == 0:
        lines.append("everything is in the cache: no download needed")
    return lines


__all__ = [
    "GRAPH_ROOT",
    "DownloadPolicy",
    "Fetched",
    "FilePlan",
    "GraphDownloader",
    "Plan",
    "Release",
    "RemoteFile",
    "StreamedPart",
    "check_release",
    "default_cache_dir",
    "describe",
    "disk_free",
    "duration",
    "human",
    "short_disk_message",
]
