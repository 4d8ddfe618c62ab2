"""Fetching WARC records by byte range, politely, and checking what came back.

:class:`RangeFetcher` fetches each capture's WARC record by byte range
(``Range: bytes=offset-(offset+length-1)``) from a WARC prefix (an http(s) URL such as
``https://data.commoncrawl.org/`` or a local folder), politely (a delay between requests,
retries with back-off on timeouts and 5xx/429 answers, :class:`FetchPolicy`); it also
fetches the blocks of the cdx files that ``cluster.idx`` points to.
:func:`parse_capture` checks that the bytes hold the record asked for (its
``WARC-Target-URI`` is the capture's URL).

Bad input raises :class:`~core.exceptions.ConfigError` naming the URL (or file) and byte
range: a missing WARC file, a range answering 404, fewer bytes than the index says, bytes
holding another record; a server that keeps failing raises
:class:`~core.exceptions.StageError`.

Time: one request per record, at most one every ``delay`` seconds. Memory: one record.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.exceptions import ConfigError, StageError
from crawler.commoncrawl.captures import Capture

#: where Common Crawl serves its files over HTTPS
DEFAULT_WARC_PREFIX = "https://data.commoncrawl.org/"


@dataclass(frozen=True)
class FetchPolicy:
    """Politeness and retries of the byte-range requests (from ``[crawl]``)."""

    delay: float = 0.25
    retries: int = 2
    timeout: float = 20.0
    user_agent: str = "webometrics-crawler/0.1"

    @classmethod
    def from_settings(cls, settings: Any) -> FetchPolicy:
        crawl = settings.crawl
        return cls(
            delay=crawl.download_delay,
            retries=crawl.retry_times,
            timeout=crawl.download_timeout,
            user_agent=crawl.user_agent.format(contact=crawl.contact_url),
        )


def is_url(prefix: str) -> bool:
    return prefix.lower().startswith(("http://", "https://"))


class RangeFetcher:
    """Fetch WARC records by byte range from an http(s) prefix or a local folder.

    Over HTTP: at most one request every ``policy.delay`` seconds; a timeout, a
    connection error or a 5xx/429 answer is retried ``policy.retries`` times after
    ``delay * 2**attempt`` seconds (at least 0.5 s); any other error status is bad input.
    In a folder: the file at the capture's path below the folder, else a file of the same
    name directly in it.
    """

    def __init__(self, prefix: str, policy: FetchPolicy | None = None) -> None:
        self.prefix = prefix
        self.policy = policy or FetchPolicy()
        self.remote = is_url(prefix)
        if not self.remote and not Path(prefix).is_dir():
            raise ConfigError(f"{prefix}: WARC folder not found (give a folder or an http(s) URL)")
        self._last = 0.0
        self.requests = 0
        self.retried = 0
        self.bytes = 0

    def locate(self, filename: str) -> str:
        """The URL or path of a file named relative to the prefix."""
        if self.remote:
            return self.prefix.rstrip("/") + "/" + filename.lstrip("/")
        folder = Path(self.prefix)
        path = folder / filename.lstrip("/")
        if not path.is_file() and (folder / Path(filename).name).is_file():
            path = folder / Path(filename).name
        return str(path)

    def location(self, capture: Capture) -> str:
        """The URL or path of the capture's WARC file."""
        return self.locate(capture.filename)

    def fetch(self, capture: Capture) -> bytes:
        """The record's bytes (see :meth:`fetch_range`)."""
        where = f"{self.location(capture)} {capture.byte_range} (index {capture.where})"
        return self.fetch_range(capture.filename, capture.offset, capture.length, where)

    def fetch_range(self, filename: str, offset: int, length: int, where: str) -> bytes:
        """``length`` bytes at ``offset`` of a file below the prefix.

        Raises
        ------
        ConfigError
            The file is missing, the range answers 404 (or another client error) or is
            shorter than asked (the message starts with ``where``).
        StageError
            The server kept failing (timeouts, 5xx) after the retries.
        """
        if self.remote:
            data = self._remote(self.locate(filename), offset, length, where)
        else:
            data = self._local(self.locate(filename), offset, length, where)
        if len(data) != length:
            raise ConfigError(
                f"{where}: got {len(data)} bytes, the index says {length}; the file does not "
                "match the index"
            )
        self.bytes += len(data)
        return data

    def _local(self, location: str, offset: int, length: int, where: str) -> bytes:
        path = Path(location)
        if not path.is_file():
            raise ConfigError(f"{where}: file not found")
        self.requests += 1
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read(length)

    def _wait(self) -> None:
        pause = self._last + self.policy.delay - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        self._last = time.monotonic()

    def _remote(self, url: str, offset: int, length: int, where: str) -> bytes:
        request = urllib.request.Request(
            url,
            headers={
                "Range": f"bytes={offset}-{offset + length - 1}",
                "User-Agent": self.policy.user_agent,
                "Accept-Encoding": "identity",
            },
        )
        attempts = self.policy.retries + 1
        failure = ""
        for attempt in range(attempts):
            if attempt:
                self.retried += 1
                time.sleep(max(0.5, self.policy.delay) * 2 ** (attempt - 1))
            self._wait()
            self.requests += 1
            try:
                with urllib.request.urlopen(request, timeout=self.policy.timeout) as answer:
                    if answer.status == 200 and offset != 0:
                        raise ConfigError(
                            f"{where}: the server ignored the Range header (HTTP 200 for the "
                            "whole file); use a server that answers byte ranges"
                        )
                    return answer.read(length + 1)
            except urllib.error.HTTPError as exc:
                if exc.code == 429 or exc.code >= 500:
                    failure = f"HTTP {exc.code}"
                    continue
                raise ConfigError(f"{where}: HTTP {exc.code} {exc.reason}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                failure = str(getattr(exc, "reason", exc))
                continue
        raise StageError(f"{where}: failed after {attempts} attempt(s): {failure}")


def parse_capture(data: bytes, capture: Capture, location: str) -> dict[str, Any]:
    """The record held by a capture's bytes (see :func:`crawler.warc.read_record`).

    Raises
    ------
    ConfigError
        The bytes hold no http(s) response record, or the record of another URL.
    """
    from warcio.exceptions import ArchiveLoadFailed

    from crawler.warc import read_record

    where = f"{location} {capture.byte_range} (index {capture.where})"
    try:
        rec = read_record(data)
    except (ArchiveLoadFailed, EOFError, zlib.error, ValueError) as exc:
        raise ConfigError(f"{where}: not a WARC record: {exc}") from None
    if rec is None:
        raise ConfigError(f"{where}: no http(s) response record there (url {capture.url})")
    if rec["url"] != capture.url:
        raise ConfigError(
            f"{where}: the record there is for {rec['url']}, not {capture.url}; the index "
            "and the WARC file do not match"
        )
    rec["offset"] = capture.offset
    return rec
