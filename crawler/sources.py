"""Where citing pages come from: backlink exports, URL lists and stored pages.

Backlink exports (CSV)
----------------------
The header row decides the format; names are matched case-insensitively, ignoring
spaces, underscores and hyphens. The file may be UTF-8 (with or without BOM) or UTF-16
(Ahrefs' "for Excel" export), comma-, semicolon- or tab-separated.

============  ==========================  ===============================================
format        citing page column           target column (the university's page)
============  ==========================  ===============================================
``majestic``  ``Source URL`` (web export)  ``Target URL``; anchor ``Anchor Text``;
              or ``SourceURL`` (API)       nofollow ``Flag No Follow`` / ``FlagNoFollow``
``ahrefs``    ``Referring page URL``       ``Target URL`` (or ``Link URL``); anchor
              (or ``Referring URL``)       ``Anchor`` / ``Anchor text``; nofollow
                                           ``Nofollow`` or ``Type`` = ``nofollow``
============  ==========================  ===============================================

A row is assigned to the university whose domains hold its target URL's host; rows
whose target is outside every crawled university are skipped (and counted). Malformed rows
(too few fields, a source that is not an http(s) URL, a stray quote inside a field) are
skipped and kept in :class:`BadRows`: how many, and the first few with their line
numbers and why, for the console and the run's statistics. A quote that is opened and
never closed would swallow every row after it into one field: that is an error naming
the line where the quote opens (:class:`~core.exceptions.ConfigError`, exit 2, before
any run is made).

URL lists
---------
One URL per line; blank lines and ``#`` comments are ignored. A line may name the cited
university after the URL, separated by whitespace, as a URL or a domain
(``https://blog.example.org/post  spbu.ru``); a line without it is a candidate for every
crawled university (a citation is then stored for each university it turns out to cite,
or ``missing`` for each when it cites none).

Stored pages
------------
Links into a university's domains found on stored pages outside that university (by
any earlier crawl or import): their source pages are candidates (``source = "crawl"``).

Time and memory: linear in the input.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.domains import host_of, in_domains, normalize_url
from core.exceptions import ConfigError
from crawler.storage import CitingCandidate

_SOURCE_COLUMNS = {
    "majestic": ("sourceurl",),
    "ahrefs": ("referringpageurl", "referringurl", "referringpage"),
}
_TARGET_COLUMNS = ("targeturl", "linkurl")


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.strip().lstrip("\ufeff").lower())


#: Bad rows of a file listed by line (the rest are counted).
BAD_ROWS_SHOWN = 5


@dataclass
class BadRows:
    """The malformed rows of one backlink export: how many, the first few by line.

    Examples
    --------
    >>> bad = BadRows("m.csv")
    >>> bad.add(4, "short row: 1 field, the target column is field 2")
    >>> bad.add(9, "'ftp://x/' is not an http(s) source URL")
    >>> print(bad.message())
    m.csv: 2 bad rows skipped:
      line 4: short row: 1 field, the target column is field 2
      line 9: 'ftp://x/' is not an http(s) source URL
    >>> bad.as_dict()["count"]
    2
    """

    file: str
    count: int = 0
    first: list[tuple[int, str]] = field(default_factory=list)

    def add(self, line: int, reason: str) -> None:
        self.count += 1
        if len(self.first) < BAD_ROWS_SHOWN:
            self.first.append((line, reason))

    def message(self) -> str:
        """The console report: the count, then a line per shown row."""
        rows = "s" if self.count != 1 else ""
        lines = [f"{self.file}: {self.count} bad row{rows} skipped:"]
        lines += [f"  line {line}: {reason}" for line, reason in self.first]
        if self.count > len(self.first):
            lines.append(f"  ... and {self.count - len(self.first)} more")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        """The JSON form stored in ``crawl_run.stats``."""
        return {
            "file": self.file,
            "count": self.count,
            "first": [{"line": line, "reason": reason} for line, reason in self.first],
        }


@dataclass
class SourceReport:
    """What reading the sources gave: candidates, rows skipped by reason, and the bad
    (malformed) rows of each backlink export."""

    candidates: list[CitingCandidate] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    bad: list[BadRows] = field(default_factory=list)

    def extend(self, other: SourceReport) -> None:
        self.candidates.extend(other.candidates)
        self.skipped.update(other.skipped)
        self.bad.extend(other.bad)


@dataclass(frozen=True)
class UniversityDomains:
    """A university's id and registered domains (what the sources need of it)."""

    id: int
    domains: frozenset[str]


def _owner(url_or_domain: str, universities: Sequence[UniversityDomains]) -> int | None:
    host = host_of(url_or_domain) if "/" in url_or_domain else url_or_domain.lower().strip(".")
    for u in universities:
        if in_domains(host, u.domains):
            return u.id
    return None


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 or UTF-16 text ({exc.reason}); export the file as UTF-8"
        ) from exc


def backlink_format(header: Iterable[str]) -> str | None:
    """``majestic``, ``ahrefs`` or None for a CSV header row.

    >>> backlink_format(["Target URL", "Source URL", "Anchor Text"])
    'majestic'
    >>> backlink_format(["Referring page URL", "Referring page title", "Target URL"])
    'ahrefs'
    """
    names = {_norm(h) for h in header}
    if not names & set(_TARGET_COLUMNS):
        return None
    for fmt, cols in _SOURCE_COLUMNS.items():
        if names & set(cols):
            return fmt
    return None


def read_backlinks(path: str | Path, universities: Sequence[UniversityDomains]) -> SourceReport:
    """Citing candidates from a Majestic or Ahrefs backlink export (see module docstring).

    Raises
    ------
    ConfigError
        The file is missing, is not text, its header has none of the accepted column
        names, or a quote opens a field and never closes (the message names the line).
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: backlink file not found")
    text = _read_text(p)
    sample = text[:4096]
    try:
        delimiter = csv.Sniffer().sniff(sample, ",;\t").delimiter
    except csv.Error:
        delimiter = ","
    # only the delimiter is sniffed (the sniffer's quoting guesses misread a stray quote);
    # strict: a stray quote is an error of its row, an unclosed one an error at the end
    reader = csv.reader(io.StringIO(text), csv.excel, delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
    except csv.Error:
        header = None
    fmt = backlink_format(header or ())
    if header is None or fmt is None:
        raise ConfigError(
            f"{p}: not a Majestic or Ahrefs backlink export: the header needs a citing-page "
            "column ('Source URL' / 'SourceURL' for Majestic, 'Referring page URL' for "
            "Ahrefs) and 'Target URL'; found "
            f"{', '.join(repr(h) for h in (header or [])[:8]) or 'nothing'}"
        )
    cols = {_norm(h): i for i, h in enumerate(header)}
    src_i = next(cols[c] for c in _SOURCE_COLUMNS[fmt] if c in cols)
    tgt_i = next(cols[c] for c in _TARGET_COLUMNS if c in cols)
    report = SourceReport()
    bad = BadRows(str(p))
    start = reader.line_num + 1  # the line where the next record starts
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            # at the end of the file inside a quote, or a bad row that spans lines: a
            # quote opened on the record's first line took the lines after it
            if "unexpected end of data" in str(exc) or reader.line_num > start:
                raise _unterminated(p, start) from None
            report.skipped["malformed row"] += 1
            bad.add(start, f"malformed CSV: {exc}")
            start = reader.line_num + 1
            continue
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        spans = start - line > 1  # a quoted line break: fine in a row that is good
        if len(row) <= max(src_i, tgt_i):
            if spans:
                raise _unterminated(p, line)
            report.skipped["short row"] += 1
            bad.add(
                line,
                f"short row: {len(row)} field{'s' if len(row) != 1 else ''}, the "
                f"{header[max(src_i, tgt_i)]!r} column is field {max(src_i, tgt_i) + 1}",
            )
            continue
        source, target = row[src_i].strip(), row[tgt_i].strip()
        if not source.lower().startswith(("http://", "https://")):
            if spans:
                raise _unterminated(p, line)
            report.skipped["not an http(s) source URL"] += 1
            bad.add(line, f"{source[:80]!r} is not an http(s) source URL")
            continue
        uid = _owner(target, universities)
        if uid is None:
            report.skipped["target outside the crawled universities"] += 1
            continue
        report.candidates.append(CitingCandidate(source, uid, fmt))
    if bad.count:
        report.bad.append(bad)
    return report


def _unterminated(path: Path, line: int) -> ConfigError:
    return ConfigError(
        f"{path}:{line}: unterminated quote: the quoted field that opens on this line does "
        "not close on it, so the rows after it are read as one field; close or remove the "
        "quote and run the crawl again"
    )


def read_url_list(
    path: str | Path,
    universities: Sequence[UniversityDomains],
    *,
    university_id: int | None = None,
) -> SourceReport:
    """Citing candidates from a plain URL list (see module docstring).

    ``university_id`` assigns every line without its own target to that university
    (a per-university list, as the test web writes them).
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: URL list not found")
    report = SourceReport()
    for number, line in enumerate(_read_text(p).splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        url = parts[0]
        if not url.lower().startswith(("http://", "https://")):
            raise ConfigError(f"{p}:{number}: {url!r} is not an http(s) URL")
        if len(parts) > 1:
            uid = _owner(parts[1], universities)
            if uid is None:
                report.skipped["target outside the crawled universities"] += 1
                continue
            report.candidates.append(CitingCandidate(url, uid, "urls"))
        elif university_id is not None:
            report.candidates.append(CitingCandidate(url, university_id, "urls"))
        else:
            report.candidates.extend(CitingCandidate(url, u.id, "urls") for u in universities)
    return report


def stored_candidates(engine: object, universities: Sequence[UniversityDomains]) -> SourceReport:
    """Pages already stored (any run) that link into a university they are not part of."""
    from sqlalchemy import select

    from store.models import Link, Page
    from store.session import session_scope

    report = SourceReport()
    by_domain = {d: u for u in universities for d in u.domains}
    seen: set[tuple[int, str]] = set()
    with session_scope(engine) as session:  # type: ignore[arg-type]
        rows = session.execute(
            select(Page.url, Page.host, Link.target_domain)
            .join(Link, Link.source_page_id == Page.id)
            .where(Link.target_domain.in_(sorted(by_domain)))
            .distinct()
        )
        for url, host, target_domain in rows:
            uni = by_domain[target_domain]
            if in_domains(host, uni.domains) or (uni.id, url) in seen:
                continue
            seen.add((uni.id, url))
            report.candidates.append(CitingCandidate(url, uni.id, "crawl"))
    return report


def dedupe(candidates: Iterable[CitingCandidate]) -> list[CitingCandidate]:
    """One candidate per (university, URL): an export's claim is kept over ``urls`` and
    ``crawl`` (it says where the link was seen)."""
    rank = {"majestic": 0, "ahrefs": 0, "urls": 1, "crawl": 2}
    best: dict[tuple[int, str], CitingCandidate] = {}
    for cand in candidates:
        key = (cand.university_id, normalize_url(cand.url))
        old = best.get(key)
        if old is None or rank.get(cand.source, 3) < rank.get(old.source, 3):
            best[key] = cand
    return list(best.values())
