"""Web archives as a collection: which archives, the period asked for, and its name.

A crawl run collects either the **live** web or an **archived** one: the captures a web
archive (``wayback``: the Internet Archive's Wayback Machine; ``commoncrawl``: Common
Crawl's monthly crawls) holds of each URL inside a period. This module states the
vocabulary once for the settings, the crawler, the store and the dashboard: the
archives, how a date of the command line is read (:func:`parse_date`), the
:class:`Period` with its CDX timestamps and middle, and a collection's label
(:func:`collection_label`).

Examples
--------
>>> p = Period.parse("wayback", "2015", "2015-06")
>>> p.start, p.end
(datetime.date(2015, 1, 1), datetime.date(2015, 6, 30))
>>> p.cdx_from, p.cdx_to, p.middle
('20150101000000', '20150630235959', '20150401120000')
>>> p.label
'wayback 2015-01-01..2015-06-30'
>>> collection_label(None, None, None)
'live'
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal, get_args

from core.exceptions import ParameterError

Archive = Literal["wayback", "commoncrawl"]
#: the web archives a crawl can read (``[crawl] archive``, ``crawl --archive``)
ARCHIVES: tuple[str, ...] = get_args(Archive)
#: the label of the live web's collection
LIVE = "live"
#: ``capture_status`` of an archived page: a capture was replayed, or none lies in the period
CAPTURED = "captured"
NO_CAPTURE = "no_capture"

_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")


def parse_date(text: str, *, end: bool = False, name: str = "date") -> dt.date:
    """A date of the command line: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``; a year or a
    month is its first day, or its last with ``end``.

    >>> parse_date("2015"), parse_date("2015", end=True), parse_date("2016-02", end=True)
    (datetime.date(2015, 1, 1), datetime.date(2015, 12, 31), datetime.date(2016, 2, 29))

    Raises
    ------
    ParameterError
        Not such a date (the message names ``name`` and the forms allowed).
    """
    if isinstance(text, dt.date):
        return text
    m = _DATE.match(str(text).strip())
    year, month, day = (int(g) if g else None for g in (m.groups() if m else (None,) * 3))
    try:
        if year is None:
            raise ValueError("not YYYY, YYYY-MM or YYYY-MM-DD")
        if month is None:
            return dt.date(year, 12, 31) if end else dt.date(year, 1, 1)
        if day is None:
            last = calendar.monthrange(year, month)[1]
            return dt.date(year, month, last if end else 1)
        return dt.date(year, month, day)
    except ValueError as exc:
        raise ParameterError(
            f"{name} {text!r} is not a date: give YYYY, YYYY-MM or YYYY-MM-DD ({exc})"
        ) from None


def cdx_timestamp(moment: dt.datetime) -> str:
    """A moment as a 14-digit CDX timestamp (UTC).

    >>> cdx_timestamp(dt.datetime(2015, 3, 1, 12, 30, tzinfo=dt.UTC))
    '20150301123000'
    """
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return moment.strftime("%Y%m%d%H%M%S")


def timestamp_time(timestamp: str) -> dt.datetime:
    """A CDX timestamp (1 to 14 digits, missing digits the earliest) as an aware datetime.

    >>> timestamp_time("20200808172741")
    datetime.datetime(2020, 8, 8, 17, 27, 41, tzinfo=datetime.timezone.utc)
    """
    digits = (timestamp + "0101000000")[:14] if len(timestamp) <= 4 else timestamp
    digits = digits.ljust(14, "0")
    if digits[4:6] == "00":
        digits = digits[:4] + "01" + digits[6:]
    if digits[6:8] == "00":
        digits = digits[:6] + "01" + digits[8:]
    return dt.datetime.strptime(digits[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Period:
    """An archive and the days (inclusive, UTC) whose captures a crawl reads."""

    archive: str
    start: dt.date
    end: dt.date

    @classmethod
    def parse(cls, archive: str, start: str | dt.date, end: str | dt.date) -> Period:
        """The period of ``--archive A --from START --to END``.

        Raises
        ------
        ParameterError
            An unknown archive, a bad date, or START after END.
        """
        if archive not in ARCHIVES:
            raise ParameterError(
                f"unknown archive {archive!r}: choose one of {', '.join(ARCHIVES)}"
            )
        first = parse_date(start, name="--from") if not isinstance(start, dt.date) else start
        last = parse_date(end, end=True, name="--to") if not isinstance(end, dt.date) else end
        if first > last:
            raise ParameterError(
                f"--from {first.isoformat()} is after --to {last.isoformat()}: the period "
                "must start before it ends"
            )
        return cls(archive, first, last)

    @property
    def first_moment(self) -> dt.datetime:
        return dt.datetime.combine(self.start, dt.time(0, 0, 0), tzinfo=dt.UTC)

    @property
    def last_moment(self) -> dt.datetime:
        return dt.datetime.combine(self.end, dt.time(23, 59, 59), tzinfo=dt.UTC)

    @property
    def cdx_from(self) -> str:
        return cdx_timestamp(self.first_moment)

    @property
    def cdx_to(self) -> str:
        return cdx_timestamp(self.last_moment)

    @property
    def middle(self) -> str:
        """The CDX timestamp of the period's middle (the capture nearest it is read)."""
        first, last = self.first_moment, self.last_moment
        mid = first + (last - first) / 2
        return cdx_timestamp(mid.replace(microsecond=0) + dt.timedelta(seconds=1))[:14]

    def contains(self, timestamp: str) -> bool:
        """True when a 14-digit CDX timestamp lies in the period."""
        return self.cdx_from <= timestamp[:14].ljust(14, "0") <= self.cdx_to

    @property
    def label(self) -> str:
        return collection_label(self.archive, self.start, self.end)


def nearest(timestamps: list[str], target: str) -> str | None:
    """The timestamp nearest ``target`` (the earlier of two as near), or None.

    >>> nearest(["20150101000000", "20150701000000", "20151201000000"], "20150601000000")
    '20150701000000'
    """
    if not timestamps:
        return None
    goal = timestamp_time(target)
    return min(timestamps, key=lambda t: (abs(timestamp_time(t) - goal), t))


def collection_label(
    archive: str | None, start: dt.date | str | None, end: dt.date | str | None
) -> str:
    """The name of a crawl run's collection: ``live`` or ``<archive> <from>..<to>``.

    >>> collection_label("commoncrawl", dt.date(2020, 1, 1), "2020-12-31")
    'commoncrawl 2020-01-01..2020-12-31'
    """
    if not archive:
        return LIVE

    def iso(d: dt.date | str | None) -> str:
        return d.isoformat() if isinstance(d, dt.date) else str(d or "?")[:10]

    return f"{archive} {iso(start)}..{iso(end)}"
