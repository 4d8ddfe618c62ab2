"""The test web's web archives: its own pages as captured in 2015 and in 2020.

The test web server (:mod:`testbed.server`) answers three archive hosts from here, in
the real services' formats, so that archived crawls are tested without the network:

``web.archive.org``
    the Wayback Machine: the CDX server ``/cdx/search/cdx`` (``url``, ``matchType``
    exact/prefix/host/domain, ``from``/``to``, ``output=json`` with a header row or the
    default plain text, ``fl``, ``filter=[!]field:regex``, ``collapse=field[:n]``,
    ``limit``; no match is ``[]`` or an empty body, HTTP 200) and the replay
    ``/web/<timestamp>[id_]/<url>``: the capture nearest the timestamp, a ``302`` to it
    when the timestamp is not exactly one (no ``Memento-Datetime``, as the archive's own
    redirect), else the archived answer with ``Memento-Datetime``, ``Link`` (``rel=
    "original"``) and, for an archived redirect, its ``Location`` inside the replay; 404
    when the URL was never captured.
``index.commoncrawl.org``
    Common Crawl's index server: ``/collinfo.json`` (``id``, ``name``, ``timegate``,
    ``cdx-api``, ``from``, ``to``) and ``/<crawl>-index?url=..&output=json`` (one JSON
    object a line: ``urlkey``, ``timestamp``, ``url``, ``mime``, ``mime-detected``,
    ``status``, ``digest``, ``length``, ``offset``, ``filename``; 404 ``No Captures
    found`` when none).
``data.commoncrawl.org``
    the WARC files those rows name (a ``warcinfo`` record, then the capture's
    ``response`` record, each its own gzip member), with byte ranges (``206 Partial
    Content``).

**The archived web** (deterministic, from each URL's hash; :func:`captures`): every URL
the test web stores (calendars and other generated pages aside) was captured once in
each crawl window (:data:`YEARS`: late March 2015, early April 2020), except a share of
URLs that were not (a fifth of the pages in 2015, a thirteenth in 2020); a host's home
page was always captured. The 2020 version of a page is the live test web's; the 2015
version (:func:`version_body`) has "(2015)" in its title, lacks a third of its external
links (those added since) and links to sites gone by 2020 (:data:`OLD_SITES`, captured
only in 2015). A test asks :func:`archive_truth` (also in the manifest's ``archive``
part) what the archives hold.

Memory: a bounded cache of generated WARC records; time: one hash per URL asked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from testbed.siteindex import StoredResponse, url_key

WAYBACK_HOST = "web.archive.org"
CC_INDEX_HOST = "index.commoncrawl.org"
CC_DATA_HOST = "data.commoncrawl.org"
HOSTS = frozenset({WAYBACK_HOST, CC_INDEX_HOST, CC_DATA_HOST})


@dataclass(frozen=True)
class Year:
    """One capture window: its first day, length in days, and Common Crawl's crawl."""

    year: str
    start: dt.date
    days: int
    crawl: str
    segment: str
    missing_every: int  # one URL in this many has no capture

    @property
    def last(self) -> dt.date:
        return self.start + dt.timedelta(days=self.days - 1)


YEARS: tuple[Year, ...] = (
    Year("2015", dt.date(2015, 3, 26), 8, "CC-MAIN-2015-14", "1427131298015.2", 5),
    Year("2020", dt.date(2020, 3, 28), 14, "CC-MAIN-2020-16", "1585370490497.6", 13),
)
#: sites of 2015 gone by 2020 (linked from 2015 versions, captured only in 2015)
OLD_SITES: tuple[str, ...] = (
    "http://www.campus-webring.com/",
    "http://www.geocities-physics.com/",
    "http://www.dialup-library.org/",
    "http://www.usenet-archive.net/",
)


def _hash(url: str) -> int:
    return int.from_bytes(hashlib.blake2b(url_key(url).encode(), digest_size=8).digest(), "big")


def _is_home(url: str) -> bool:
    parts = urlsplit(url_key(url))
    return parts.path == "/" and not parts.query


def timestamp(url: str, year: Year) -> str:
    """The 14-digit timestamp of ``url``'s capture in ``year``'s window."""
    h = _hash(url)
    moment = dt.datetime.combine(year.start, dt.time()) + dt.timedelta(
        days=h % year.days, seconds=(h >> 16) % 86400
    )
    return moment.strftime("%Y%m%d%H%M%S")


def captures(url: str, stored: Callable[[str], bool]) -> dict[str, str]:
    """``{year: timestamp}`` of ``url``'s captures; ``stored(url)`` says whether the live
    test web stores the URL (the archives hold nothing else but :data:`OLD_SITES`)."""
    try:
        key = url_key(url)
    except ValueError:
        return {}
    if key in _OLD_KEYS:
        return {"2015": timestamp(key, YEARS[0])}
    if not stored(key):
        return {}
    h = _hash(key)
    return {
        y.year: timestamp(key, y)
        for y in YEARS
        if _is_home(key) or (h >> 40) % y.missing_every != 0
    }


_OLD_KEYS = frozenset(url_key(u) for u in OLD_SITES)
_ANCHOR = re.compile(
    rb"<a\b[^>]*?\bhref\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))[^>]*>(.*?)</a\s*>",
    re.IGNORECASE | re.DOTALL,
)
_TITLE = re.compile(rb"(<title[^>]*>)(.*?)(</title>)", re.IGNORECASE | re.DOTALL)
_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)


def added_since_2015(page_url: str, target: str) -> bool:
    """True for an external link of a page that its 2015 version lacks (added since)."""
    try:
        if urlsplit(target).hostname == urlsplit(page_url).hostname:
            return False
        return _hash(target) % 3 == 0
    except ValueError:
        return False


def old_links(page_url: str) -> list[str]:
    """The links to :data:`OLD_SITES` of ``page_url``'s 2015 version: two on a home page,
    one on every fourth other page."""
    h = _hash(page_url)
    if _is_home(page_url):
        first = h % len(OLD_SITES)
        return [OLD_SITES[first], OLD_SITES[(first + 1) % len(OLD_SITES)]]
    return [OLD_SITES[h % len(OLD_SITES)]] if (h >> 8) % 4 == 0 else []


def version_body(url: str, body: bytes, content_type: str | None, year: str) -> bytes:
    """The body of ``url``'s capture in ``year`` (the live body in 2020)."""
    if year != "2015" or "html" not in (content_type or "").lower():
        return body

    def drop(m: re.Match[bytes]) -> bytes:
        raw = (m.group(1) or m.group(2) or m.group(3) or b"").decode("latin-1").strip()
        try:
            target = urljoin(url, raw)
        except ValueError:
            return m.group(0)
        if target.startswith(("http://", "https://")) and added_since_2015(url, target):
            return m.group(4)  # the link's text stays, the link is gone
        return m.group(0)

    out = _ANCHOR.sub(drop, body)
    out = _TITLE.sub(lambda m: m.group(1) + m.group(2).rstrip() + b" (2015)" + m.group(3), out, 1)
    links = "".join(f'<li><a href="{u}">{u}</a></li>' for u in old_links(url)).encode()
    if links:
        block = b"<ul class='links-1990s'>" + links + b"</ul>"
        m = _BODY_END.search(out)
        out = out[: m.start()] + block + out[m.start() :] if m else out + block
    return out


def _old_site(url: str) -> StoredResponse:
    name = urlsplit(url).hostname or url
    body = (
        f"<!DOCTYPE html><html><head><title>{name}</title></head><body><h1>{name}</h1>"
        "<p>Welcome to our pages, best viewed with Netscape Navigator. Under construction."
        "</p></body></html>\n"
    ).encode()
    return StoredResponse(200, [("Content-Type", "text/html")], body)


def archive_truth(urls: Iterable[str], stored: Callable[[str], bool]) -> dict[str, Any]:
    """What the archives hold of ``urls``: ``{"years": ..., "captures": {url: {year:
    timestamp}}, "no_capture": {year: [url]}, "old_sites": [...]}`` (the manifest's
    ``archive`` part)."""
    caps: dict[str, dict[str, str]] = {}
    missing: dict[str, list[str]] = {y.year: [] for y in YEARS}
    for url in sorted(set(urls)):
        found = captures(url, stored)
        caps[url] = found
        for y in YEARS:
            if y.year not in found:
                missing[y.year].append(url)
    for url in OLD_SITES:
        caps[url] = captures(url, stored)
    return {
        "years": {
            y.year: {
                "from": y.start.isoformat(),
                "to": y.last.isoformat(),
                "commoncrawl": y.crawl,
            }
            for y in YEARS
        },
        "captures": caps,
        "no_capture": missing,
        "old_sites": list(OLD_SITES),
    }


# -- the services ------------------------------------------------------------------------


class ArchiveService:
    """Answers the archive hosts' URLs from the live test web (see the module docstring).

    Parameters
    ----------
    get : callable
        ``get(url) -> StoredResponse | None``, the live test web's stored answer.
    stored : callable
        ``stored(url) -> bool``, whether the test web stores the URL (not generated).
    keys : callable
        The stored URL keys (for the CDX server's prefix, host and domain matches).
    """

    def __init__(
        self,
        get: Callable[[str], StoredResponse | None],
        stored: Callable[[str], bool],
        keys: Callable[[], list[str]],
    ) -> None:
        self._get = get
        self._stored = stored
        self._keys = keys
        self._records: OrderedDict[tuple[str, str], tuple[bytes, int, int]] = OrderedDict()
        self._places: dict[str, str] = {}  # WARC file name -> the URL of its record

    @staticmethod
    def serves(url: str) -> bool:
        return (urlsplit(url).hostname or "").lower() in HOSTS

    def answer(self, url: str, headers: Any = None) -> StoredResponse:
        """The answer of an archive host's URL (``headers``: the request's, for Range)."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        if host == WAYBACK_HOST:
            if parts.path.rstrip("/") == "/cdx/search/cdx":
                return self._wayback_cdx(query)
            if parts.path.startswith("/web/"):
                return self._replay(url.split("/web/", 1)[1])
        elif host == CC_INDEX_HOST:
            if parts.path == "/collinfo.json":
                return _json(200, self.collinfo())
            m = re.match(r"^/(CC-MAIN-\d{4}-\d{2})-index$", parts.path)
            if m:
                return self._cc_index(m.group(1), query)
        elif host == CC_DATA_HOST:
            return self._warc_file(parts.path.lstrip("/"), headers)
        return StoredResponse(404, [("Content-Type", "text/plain")], b"not found\n")

    # -- what is held ----------------------------------------------------------------------
    def live(self, url: str) -> StoredResponse | None:
        key = url_key(url)
        if key in _OLD_KEYS:
            return _old_site(key)
        return self._get(key)

    def rows(self, url: str) -> list[dict[str, Any]]:
        """The captures of one URL, oldest first: urlkey, timestamp, original, mime,
        status, digest, length, and the year."""
        try:
            key = url_key(url)
        except ValueError:
            return []
        out = []
        for year, ts in sorted(captures(key, self._stored).items(), key=lambda i: i[1]):
            answer = self.live(key)
            if answer is None:
                continue
            body = self.body(key, answer, year)
            out.append(
                {
                    "urlkey": surt(key),
                    "timestamp": ts,
                    "original": key,
                    "mimetype": (answer.header("Content-Type") or "unk").split(";")[0].strip(),
                    "statuscode": str(answer.status),
                    "digest": _digest(body),
                    "length": str(len(body)),
                    "year": year,
                }
            )
        return out

    def body(self, key: str, answer: StoredResponse, year: str) -> bytes:
        return version_body(key, answer.body, answer.header("Content-Type"), year)

    # -- the Wayback Machine ---------------------------------------------------------------
    def _matching(self, url: str, match: str) -> list[str]:
        if match == "exact":
            return [url]
        key = url_key(url)
        host = urlsplit(key).hostname or ""
        keys = [*self._keys(), *_OLD_KEYS]
        if match == "prefix":
            return sorted(k for k in keys if k.startswith(key))
        if match == "host":
            return sorted(k for k in keys if urlsplit(k).hostname == host)
        base = host[4:] if host.startswith("www.") else host
        return sorted(
            k
            for k in keys
            if (urlsplit(k).hostname or "") in (base, f"www.{base}")
            or (urlsplit(k).hostname or "").endswith("." + base)
        )

    def _wayback_cdx(self, q: dict[str, str]) -> StoredResponse:
        url = q.get("url", "")
        if not url:
            return StoredResponse(400, [("Content-Type", "text/plain")], b"url is required\n")
        if "://" not in url:
            url = "http://" + url
        match = q.get("matchType", "exact")
        if url.endswith("*"):
            url, match = url[:-1], "prefix"
        try:
            urls = self._matching(url, match)
        except ValueError:
            return StoredResponse(400, [("Content-Type", "text/plain")], b"bad url\n")
        rows = [r for u in urls for r in self.rows(u)]
        first = (q.get("from") or "").ljust(14, "0")
        last = (q.get("to") or "99999999999999").ljust(14, "9")
        rows = [r for r in rows if first <= r["timestamp"] <= last]
        for spec in q.get("filter", "").split(",") if q.get("filter") else []:
            negate = spec.startswith("!")
            field, _, pattern = spec.lstrip("!").partition(":")
            rows = [r for r in rows if bool(re.fullmatch(pattern, str(r.get(field, "")))) != negate]
        if q.get("collapse"):
            field, _, n = q["collapse"].partition(":")
            seen: set[tuple[str, str]] = set()
            kept = []
            for r in rows:
                value = str(r.get(field, ""))[: int(n)] if n else str(r.get(field, ""))
                if (r["urlkey"], value) not in seen:
                    seen.add((r["urlkey"], value))
                    kept.append(r)
            rows = kept
        limit = int(q["limit"]) if q.get("limit", "").lstrip("-").isdigit() else None
        if limit is not None:
            rows = rows[limit:] if limit < 0 else rows[:limit]
        fields = [f for f in q.get("fl", "").split(",") if f] or list(WAYBACK_FIELDS)
        table = [[str(r.get(f, "-")) for f in fields] for r in rows]
        if q.get("output") == "json":
            return _json(200, [fields, *table] if table else [])
        text = "".join(" ".join(row) + "\n" for row in table)
        return StoredResponse(200, [("Content-Type", "text/plain")], text.encode())

    def _replay(self, rest: str) -> StoredResponse:
        m = re.match(r"^(\d{1,14})([a-z]{2}_)?/(.+)$", rest)
        if m is None:
            return StoredResponse(400, [("Content-Type", "text/plain")], b"bad replay URL\n")
        asked = _moment(m.group(1)).strftime("%Y%m%d%H%M%S")
        flag, url = m.group(2) or "", m.group(3)
        url = re.sub(r"^(https?):/(?!/)", r"\1://", url)
        rows = self.rows(url)
        if not rows:
            body = (
                b"<html><body><p>Wayback Machine doesn't have that page archived.</p></body></html>"
            )
            return StoredResponse(
                404,
                [
                    ("Content-Type", "text/html"),
                    (
                        "X-Archive-Wayback-Runtime-Error",
                        f"ResourceNotInArchiveException: {url} was not found",
                    ),
                ],
                body,
            )
        row = min(
            rows, key=lambda r: (abs(_moment(r["timestamp"]) - _moment(asked)), r["timestamp"])
        )
        if row["timestamp"] != asked:  # the archive's redirect to the capture it holds
            redirect = f"https://{WAYBACK_HOST}/web/{row['timestamp']}{flag}/{row['original']}"
            return StoredResponse(
                302,
                [
                    ("Location", redirect),
                    ("Content-Type", "text/plain"),
                    ("Link", f'<{row["original"]}>; rel="original"'),
                ],
                b"",
            )
        answer = self.live(row["original"])
        assert answer is not None
        headers = [(k, v) for k, v in answer.headers if k.lower() not in ("location",)]
        location = answer.header("Location")
        if location:
            target = urljoin(row["original"], location)
            headers.append(
                ("Location", f"https://{WAYBACK_HOST}/web/{row['timestamp']}{flag}/{target}")
            )
        headers += [
            ("Memento-Datetime", _http_date(row["timestamp"])),
            ("Link", f'<{row["original"]}>; rel="original"'),
            ("X-Archive-Src", f"testbed-{row['year']}.warc.gz"),
        ]
        return StoredResponse(
            answer.status, headers, self.body(row["original"], answer, row["year"])
        )

    # -- Common Crawl -------------------------------------------------------------------
    def collinfo(self) -> list[dict[str, str]]:
        return [
            {
                "id": y.crawl,
                "name": f"{y.start:%B %Y} Index",
                "timegate": f"https://{CC_INDEX_HOST}/{y.crawl}/",
                "cdx-api": f"https://{CC_INDEX_HOST}/{y.crawl}-index",
                "from": f"{y.start.isoformat()}T00:00:00",
                "to": f"{y.last.isoformat()}T23:59:59",
            }
            for y in reversed(YEARS)
        ]

    def _cc_index(self, crawl: str, q: dict[str, str]) -> StoredResponse:
        year = next((y for y in YEARS if y.crawl == crawl), None)
        url = q.get("url", "")
        if year is None or not url:
            return _json(404, {"message": f"No Captures found for: {url}"})
        rows = [r for r in self.rows(url) if r["year"] == year.year]
        first = (q.get("from") or "").ljust(14, "0")
        last = (q.get("to") or "99999999999999").ljust(14, "9")
        rows = [r for r in rows if first <= r["timestamp"] <= last]
        if not rows:
            return _json(404, {"message": f"No Captures found for: {url}"})
        lines = []
        for r in rows:
            filename, offset, length = self._record_place(r, year)
            lines.append(
                json.dumps(
                    {
                        "urlkey": r["urlkey"],
                        "timestamp": r["timestamp"],
                        "url": r["original"],
                        "mime": r["mimetype"],
                        "mime-detected": r["mimetype"],
                        "status": r["statuscode"],
                        "digest": r["digest"],
                        "length": str(length),
                        "offset": str(offset),
                        "filename": filename,
                        "languages": "eng",
                        "encoding": "UTF-8",
                    }
                )
            )
        body = ("\n".join(lines) + "\n").encode()
        return StoredResponse(200, [("Content-Type", "text/x-ndjson")], body)

    def _record_place(self, row: dict[str, Any], year: Year) -> tuple[str, int, int]:
        h = _hash(row["original"]) & 0xFFFFFFFF
        name = (
            f"crawl-data/{year.crawl}/segments/{year.segment}/warc/"
            f"{year.crawl}-{row['timestamp']}-{h:08x}.warc.gz"
        )
        _, offset, length = self._warc(name, row)
        self._places[name] = row["original"]
        return name, offset, length

    def _warc(self, name: str, row: dict[str, Any]) -> tuple[bytes, int, int]:
        cached = self._records.get((name, row["original"]))
        if cached is not None:
            self._records.move_to_end((name, row["original"]))
            return cached
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter

        answer = self.live(row["original"])
        assert answer is not None
        body = self.body(row["original"], answer, row["year"])
        out = io.BytesIO()
        writer = WARCWriter(out, gzip=True)
        when = _moment(row["timestamp"]).strftime("%Y-%m-%dT%H:%M:%SZ")
        info = writer.create_warcinfo_record(name, {"software": "webometrics-testbed"})
        writer.write_record(info)
        offset = out.tell()
        http = StatusAndHeaders(
            f"{answer.status} {_reason(answer.status)}",
            [(k, v) for k, v in answer.headers if k.lower() != "content-length"]
            + [("Content-Length", str(len(body)))],
            protocol="HTTP/1.1",
        )
        rec = writer.create_warc_record(
            row["original"],
            "response",
            payload=io.BytesIO(body),
            http_headers=http,
            warc_headers_dict={"WARC-Date": when},
        )
        writer.write_record(rec)
        data = out.getvalue()
        entry = (data, offset, len(data) - offset)
        self._records[(name, row["original"])] = entry
        while len(self._records) > 2048:
            self._records.popitem(last=False)
        return entry

    def _warc_file(self, path: str, headers: Any) -> StoredResponse:
        m = re.match(
            r"^crawl-data/(CC-MAIN-\d{4}-\d{2})/segments/[^/]+/warc/"
            r"CC-MAIN-\d{4}-\d{2}-(\d{14})-([0-9a-f]{8})\.warc\.gz$",
            path,
        )
        year = next((y for y in YEARS if m and y.crawl == m.group(1)), None)
        if m is None or year is None:
            return StoredResponse(404, [("Content-Type", "application/xml")], _NO_KEY)
        data = None
        known = self._places.get(path)
        candidates = [known] if known else self._warc_candidates(m.group(3))
        for key in candidates:
            for r in self.rows(key):
                if r["year"] == year.year and r["timestamp"] == m.group(2):
                    name, _, _ = self._record_place(r, year)
                    if name == path:
                        data = self._warc(name, r)[0]
        if data is None:
            return StoredResponse(404, [("Content-Type", "application/xml")], _NO_KEY)
        wanted = (headers.get("Range") if headers is not None else None) or ""
        asked = re.match(r"^bytes=(\d+)-(\d*)$", wanted.strip())
        if not asked:
            return StoredResponse(200, [("Content-Type", "application/octet-stream")], data)
        first = int(asked.group(1))
        last = min(int(asked.group(2)) if asked.group(2) else len(data) - 1, len(data) - 1)
        if first > last:
            return StoredResponse(416, [("Content-Range", f"bytes */{len(data)}")], b"")
        return StoredResponse(
            206,
            [
                ("Content-Type", "application/octet-stream"),
                ("Content-Range", f"bytes {first}-{last}/{len(data)}"),
            ],
            data[first : last + 1],
        )

    def _warc_candidates(self, h: str) -> list[str]:
        """The URLs whose record file is named by this timestamp and hash."""
        wanted = int(h, 16)
        return [k for k in [*_OLD_KEYS, *self._keys()] if _hash(k) & 0xFFFFFFFF == wanted]


WAYBACK_FIELDS = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length")
_NO_KEY = b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code></Error>"


def surt(url: str) -> str:
    """The SURT key of a URL (host reversed, ``www.`` dropped), as the indexes sort by.

    >>> surt("http://www.cs.cornell.edu/Info/People/")
    'edu,cornell,cs)/info/people'
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    path = parts.path or "/"
    if path != "/" and path.endswith("/"):
        path = path[:-1]
    key = ",".join(reversed(host.split("."))) + ")" + path.lower()
    return key + (f"?{parts.query.lower()}" if parts.query else "")


def _digest(body: bytes) -> str:
    import base64

    return base64.b32encode(hashlib.sha1(body).digest()).decode()


def _moment(ts: str) -> dt.datetime:
    """A 1-14 digit timestamp as a naive UTC datetime (missing digits the earliest)."""
    from core.archives import timestamp_time

    return timestamp_time(ts[:14]).replace(tzinfo=None)


def _http_date(ts: str) -> str:
    from email.utils import format_datetime

    return format_datetime(_moment(ts).replace(tzinfo=dt.UTC), usegmt=True)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _json(status: int, value: Any) -> StoredResponse:
    return StoredResponse(
        status, [("Content-Type", "application/json")], json.dumps(value).encode()
    )


__all__ = [
    "HOSTS",
    "OLD_SITES",
    "YEARS",
    "ArchiveService",
    "archive_truth",
    "captures",
    "surt",
    "version_body",
]
