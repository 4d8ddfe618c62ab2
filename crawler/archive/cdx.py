"""The CDX indexes of the archives: the queries, their answers, the capture chosen.

Two servers, two dialects of one API:

- the **Wayback Machine's CDX server** (``/cdx/search/cdx``, github.com/internetarchive/
  wayback, wayback-cdx-server): ``url``, ``matchType``, ``from``/``to`` (1-14 digit
  timestamps), ``output=json`` (an array of rows whose first row names the fields) or
  the default plain text (space-separated rows, no header), ``fl`` (the fields),
  ``filter``, ``collapse``, ``limit``; see :func:`wayback_query`, :func:`parse_wayback`;
- **Common Crawl's index server** (pywb: ``collinfo.json`` lists the crawls, each with
  its ``cdx-api`` endpoint and, for recent crawls, ``from``/``to``; a query answers one
  JSON object per line, with ``filename``/``offset``/``length`` of the WARC record, or
  404 when nothing matches); see :func:`collections_in`, :func:`commoncrawl_query`,
  :func:`parse_commoncrawl`.

The capture read for a URL is the one nearest the middle of the period among those
inside it (:func:`choose`); answers that are archive bookkeeping (``warc/revisit`` rows
without a status are kept: the replay resolves them) are not filtered out.

Why not cdx-toolkit: it speaks both indexes and accepts other endpoints (``wb=``,
``cc_mirror=``), but it is synchronous (``requests``), fetches outside Scrapy's
downloader (no proxy, safety rules, outage watch or WARC copy of the crawl) and pages
through whole result sets; the crawler needs one exact-URL lookup per request inside
Twisted's reactor. These few functions are what it would do for that lookup.

Examples
--------
>>> from core.archives import Period
>>> p = Period.parse("wayback", "2015", "2015")
>>> wayback_query("https://web.archive.org", "http://www.x.edu/a b", p)  # doctest: +ELLIPSIS
'https://web.archive.org/cdx/search/cdx?url=http%3A%2F%2Fwww.x.edu%2Fa%20b&matchType=exact&from=20150101000000&to=20151231235959&output=json&fl=timestamp,original,...'
>>> rows = parse_wayback(b'[["timestamp","original","statuscode"],'
...                      b'["20150301000000","http://x.edu/","200"]]')
>>> rows[0]["timestamp"], rows[0]["statuscode"]
('20150301000000', '200')
>>> parse_wayback(b"edu,x)/ 20150301000000 http://x.edu/ text/html 200 ABC 1234\\n")[0]["length"]
'1234'
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlencode

from core.archives import Period, nearest

#: the fields asked of the Wayback CDX server (``fl``)
WAYBACK_FIELDS = ("timestamp", "original", "statuscode", "mimetype", "digest", "length")
#: the CDX server's default fields, in the order of its plain-text rows
WAYBACK_DEFAULT_FIELDS = (
    "urlkey",
    "timestamp",
    "original",
    "mimetype",
    "statuscode",
    "digest",
    "length",
)


class CdxError(ValueError):
    """An index answer that cannot be read (the message says which and why)."""


def wayback_query(base: str, url: str, period: Period) -> str:
    """The CDX query of ``url``'s captures in the period, at most one a day."""
    params = {
        "matchType": "exact",
        "from": period.cdx_from,
        "to": period.cdx_to,
        "output": "json",
        "fl": ",".join(WAYBACK_FIELDS),
        "collapse": "timestamp:8",
    }
    query = f"url={quote(url, safe='')}&" + urlencode(params, safe=",:")
    return f"{base.rstrip('/')}/cdx/search/cdx?" + query


def parse_wayback(
    body: bytes, fields: Iterable[str] = WAYBACK_DEFAULT_FIELDS
) -> list[dict[str, str]]:
    """The rows of a Wayback CDX answer: JSON (header row first) or plain text (``fields``
    in order, the server's default when no ``fl`` was given).

    Raises
    ------
    CdxError
        Neither form.
    """
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            table = json.loads(text)
        except ValueError as exc:
            raise CdxError(f"the CDX answer is not JSON: {exc}") from None
        if not table:
            return []
        if not isinstance(table, list) or not all(isinstance(r, list) for r in table):
            raise CdxError("the CDX answer is not an array of rows")
        head = [str(h) for h in table[0]]
        return [dict(zip(head, (str(v) for v in row), strict=False)) for row in table[1:]]
    names = list(fields)
    rows = []
    for line in text.splitlines():
        parts = line.split(" ")
        if len(parts) < len(names):
            raise CdxError(f"a CDX line has {len(parts)} fields, not {len(names)}: {line[:120]!r}")
        rows.append(dict(zip(names, parts, strict=False)))
    return rows


def collections_in(collinfo: Any, period: Period) -> list[dict[str, Any]]:
    """The crawls of Common Crawl's ``collinfo.json`` that overlap the period, the one
    nearest its middle first.

    A crawl's days come from its ``from``/``to`` fields, else from its id
    (``CC-MAIN-YYYY-WW``: that ISO week). Old names without a week (``CC-MAIN-2012``) are
    left out.

    >>> info = [{"id": "CC-MAIN-2015-14", "cdx-api": "https://i/CC-MAIN-2015-14-index"},
    ...         {"id": "CC-MAIN-2020-16", "cdx-api": "https://i/CC-MAIN-2020-16-index",
    ...          "from": "2020-03-28T08:00:00", "to": "2020-04-10T12:00:00"}]
    >>> [c["id"] for c in collections_in(info, Period.parse("commoncrawl", "2015", "2020"))]
    ['CC-MAIN-2020-16', 'CC-MAIN-2015-14']
    """
    if not isinstance(collinfo, list):
        raise CdxError("collinfo.json is not a list of crawls")
    middle = dt.datetime.strptime(period.middle, "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    found = []
    for coll in collinfo:
        if not isinstance(coll, dict) or not coll.get("cdx-api") or not coll.get("id"):
            continue
        days = _crawl_days(coll)
        if days is None:
            continue
        first, last = days
        if last < period.first_moment or first > period.last_moment:
            continue
        centre = first + (last - first) / 2
        found.append((abs(centre - middle), str(coll["id"]), coll))
    return [c for _, _, c in sorted(found, key=lambda f: (f[0], f[1]))]


_CRAWL_ID = re.compile(r"^CC-MAIN-(\d{4})-(\d{2})$")


def _crawl_days(coll: dict[str, Any]) -> tuple[dt.datetime, dt.datetime] | None:
    def moment(v: Any) -> dt.datetime | None:
        try:
            d = dt.datetime.fromisoformat(str(v).replace("Z", "+00:00"))
        except ValueError:
            return None
        return d if d.tzinfo else d.replace(tzinfo=dt.UTC)

    first, last = moment(coll.get("from")), moment(coll.get("to"))
    if first is not None and last is not None:
        return first, last
    m = _CRAWL_ID.match(str(coll["id"]))
    if m is None:
        return None
    year, week = int(m.group(1)), int(m.group(2))
    try:
        monday = dt.datetime.fromisocalendar(year, week, 1).replace(tzinfo=dt.UTC)
    except ValueError:
        return None
    return monday, monday + dt.timedelta(days=6, hours=23, minutes=59, seconds=59)


def commoncrawl_query(cdx_api: str, url: str, period: Period) -> str:
    """The index query of ``url``'s captures in the period in one crawl."""
    params = {"output": "json", "from": period.cdx_from, "to": period.cdx_to}
    return f"{cdx_api}?url={quote(url, safe='')}&" + urlencode(params)


def parse_commoncrawl(body: bytes) -> list[dict[str, str]]:
    """The rows of a Common Crawl index answer (one JSON object a line).

    Raises
    ------
    CdxError
        A line that is not a JSON object.
    """
    rows = []
    for number, line in enumerate(body.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise CdxError(f"line {number} of the index answer is not JSON: {exc}") from None
        if not isinstance(row, dict):
            raise CdxError(f"line {number} of the index answer is not a JSON object")
        rows.append({k: str(v) for k, v in row.items()})
    return rows


def choose(rows: list[dict[str, str]], period: Period) -> dict[str, str] | None:
    """The row of the capture nearest the middle of the period among those inside it
    (rows without a 14-digit timestamp are ignored).

    >>> p = Period.parse("wayback", "2015", "2015")
    >>> choose([{"timestamp": "20150105000000"}, {"timestamp": "20150801000000"},
    ...         {"timestamp": "20160701000000"}], p)
    {'timestamp': '20150801000000'}
    """
    inside = {
        r["timestamp"]: r
        for r in rows
        if len(r.get("timestamp", "")) == 14
        and r["timestamp"].isdigit()
        and period.contains(r["timestamp"])
    }
    best = nearest(sorted(inside), period.middle)
    return inside[best] if best is not None else None
