"""A ranking table (CSV) read liberally: one row per university, its name and/or domain or
URL, its rank and optionally its impact rank (stored by :mod:`store.rank_editions`,
matched by :mod:`analyse.rank_match`).

What is accepted
----------------
* **Encoding**: UTF-8 with or without a byte-order mark, or UTF-16 with one (Excel's
  "Unicode text"); anything else is refused with the byte and line where it fails.
* **Delimiter**: sniffed among ``,`` ``;`` tab and ``|`` (Excel in many locales writes
  ``;``); quoted cells as CSV quotes them.
* **Header**: the first non-empty line names the columns, in any case and spacing, with
  common spellings (:data:`HEADERS`): ``name``/``university``/``institution``,
  ``domain``/``url``/``website``/``homepage``, ``rank``/``world rank``/``ranking``/
  ``position``, ``impact rank``/``impact``/``visibility rank``, ``country``. Other columns
  are ignored and named in :attr:`RankTable.ignored`. A name or a domain column is needed,
  and a rank or an impact-rank column.
* **Cells**: a domain as ``spbu.ru``, ``www.spbu.ru``, ``https://spbu.ru/en/`` (reduced
  to the registered domain, ``spbu.ru``); a rank as ``12``, ``=12`` or ``T12`` (a tie),
  ``#12``, ``1,234`` or ``1 234``. A band (``101-150``), zero, a fraction or text is
  refused, naming the line.

Every error found is listed (up to :data:`MAX_ERRORS`), so a file is fixed in one go.

Examples
--------
>>> parse_rank("=12"), parse_rank("1 234"), parse_rank("T7"), parse_rank("")
(12, 1234, 7, None)
>>> column_of("World Rank"), column_of("Impact Rank*"), column_of("Web site"), column_of("Det.")
('rank', 'impact_rank', 'domain', None)
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from core.domains import registered_domain
from core.exceptions import RankTableError

#: every column a ranking table may have, with the header spellings read as it (compared
#: after :func:`_header_key`: lower case, letters and digits only, single spaces)
HEADERS: dict[str, tuple[str, ...]] = {
    "name": (
        "name",
        "university",
        "university name",
        "institution",
        "institution name",
        "organisation",
        "organization",
        "school",
        "universidad",
        "vuz",
        "вуз",
        "университет",
        "название",
        "наименование",
    ),
    "domain": (
        "domain",
        "domains",
        "url",
        "urls",
        "web",
        "website",
        "web site",
        "site",
        "homepage",
        "home page",
        "web address",
        "link",
        "домен",
        "сайт",
        "адрес",
    ),
    "rank": (
        "rank",
        "ranking",
        "world rank",
        "world ranking",
        "webometrics rank",
        "overall rank",
        "global rank",
        "position",
        "place",
        "ранг",
        "место",
        "позиция",
        "рейтинг",
    ),
    "impact_rank": (
        "impact rank",
        "impact",
        "impact ranking",
        "visibility rank",
        "visibility",
        "ранг по цитированию",
        "импакт",
    ),
    "country": ("country", "country name", "nation", "страна"),
}
#: errors listed before the rest are counted
MAX_ERRORS = 20
DELIMITERS = ",;\t|"


@dataclass(frozen=True)
class RankRow:
    """One row of a ranking table.

    Attributes
    ----------
    line : int
        The row's line in the file (1: the header).
    name : str
        The name as written (white space normalised), ``""`` when the table has none.
    given : str
        The domain or URL cell as written.
    domain : str
        Its registered domain (``spbu.ru`` for ``https://www.spbu.ru/en``), ``""`` when none.
    rank, impact_rank : int or None
    country : str
    """

    line: int
    name: str
    given: str
    domain: str
    rank: int | None
    impact_rank: int | None
    country: str = ""

    @property
    def label(self) -> str:
        """How a message names the row: ``line 4 (St. Petersburg State University, spbu.ru)``."""
        what = ", ".join(v for v in (self.name, self.given) if v)
        return f"line {self.line} ({what})"


@dataclass(frozen=True)
class RankTable:
    """What :func:`read_rank_table` read: the rows and how the file was understood."""

    path: str
    rows: tuple[RankRow, ...]
    encoding: str
    delimiter: str
    #: our column -> the header it was read from
    columns: dict[str, str]
    #: the headers of the columns that were not read
    ignored: tuple[str, ...]

    def describe(self) -> str:
        """One line: rows, encoding, delimiter and the columns read and ignored."""
        delim = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "bar"}[self.delimiter]
        cols = ", ".join(f"{ours} <- {theirs!r}" for ours, theirs in self.columns.items())
        text = f"{len(self.rows)} rows ({self.encoding}, {delim}-separated; {cols})"
        if self.ignored:
            text += f"; ignored columns: {', '.join(repr(c) for c in self.ignored)}"
        return text


def _header_key(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", text).replace("_", " ").split())


_KNOWN = {_header_key(spelling): col for col, names in HEADERS.items() for spelling in names}


def column_of(header: str) -> str | None:
    """The column a header names (:data:`HEADERS`), or None."""
    return _KNOWN.get(_header_key(header))


_RANK = re.compile(r"^(?:[=#]|t(?=\d))?\s*(\d{1,3}(?:[ ,\u00a0\u202f]\d{3})+|\d+)\s*=?$", re.I)


def parse_rank(cell: str) -> int | None:
    """A rank cell as a positive whole number; None when empty.

    Raises
    ------
    ValueError
        A band, zero, a fraction or text; the message says which.
    """
    text = cell.strip()
    if not text or text in {"-", "–", "—", "n/a", "na"}:
        return None
    if re.fullmatch(r"\d+\s*[-–]\s*\d+\+?", text):
        raise ValueError(f"rank {cell!r} is a band; give one number per university")
    m = _RANK.match(text)
    if not m:
        raise ValueError(f"rank {cell!r} is not a whole number")
    value = int(re.sub(r"\D", "", m.group(1)))
    if value < 1:
        raise ValueError(f"rank {cell!r} must be 1 or more (1 is the best)")
    return value


def _decode(path: Path, data: bytes) -> tuple[str, str]:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "UTF-16"
        except UnicodeDecodeError as exc:
            raise RankTableError(f"{path}: broken UTF-16 text: {exc}") from exc
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8-sig"), "UTF-8 with BOM" if bom else "UTF-8"
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RankTableError(
            f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the table "
            "as UTF-8 CSV (Excel: 'CSV UTF-8'; LibreOffice: character set Unicode (UTF-8))"
        ) from exc


def _delimiter(path: Path, header: str, sample: str) -> str:
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        counts = {d: header.count(d) for d in DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        if counts[best] == 0:
            raise RankTableError(
                f"{path}:1: the first line {header[:80]!r} has no comma, semicolon, tab or "
                "bar between its columns; a ranking table is CSV with a header line such as "
                "'name,domain,rank,impact_rank'"
            ) from None
        return best


def _columns(path: Path, header: list[str]) -> tuple[dict[str, int], tuple[str, ...]]:
    """Our column -> its index (the first of each), and the ignored headers."""
    found: dict[str, int] = {}
    ignored: list[str] = []
    for i, h in enumerate(header):
        col = column_of(h)
        if col is None or col in found:
            if h.strip():
                ignored.append(h.strip())
            continue
        found[col] = i
    if not ({"name", "domain"} & set(found)) or not ({"rank", "impact_rank"} & set(found)):
        want = []
        if not {"name", "domain"} & set(found):
            want.append("a name or a domain/URL column")
        if not {"rank", "impact_rank"} & set(found):
            want.append("a rank or an impact rank column")
        raise RankTableError(
            f"{path}:1: the header {[h.strip() for h in header]} lacks {' and '.join(want)}; "
            "name the columns in the first line, e.g. 'name,domain,rank,impact_rank' "
            "(accepted spellings: see `webometrics universities import-ranks --help`)"
        )
    return found, tuple(ignored)


def read_rank_table(path: str | Path) -> RankTable:
    """Read and check a ranking table.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    RankTable

    Raises
    ------
    RankTableError
        The file is missing, empty, not UTF-8/UTF-16, has no usable header, or rows with
        a bad rank, no rank at all, or neither name nor domain (every such row listed,
        up to :data:`MAX_ERRORS`).
    """
    p = Path(path)
    if not p.is_file():
        raise RankTableError(f"{p}: ranking table not found")
    text, encoding = _decode(p, p.read_bytes())
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise RankTableError(f"{p}: the file is empty; expected a CSV table with a header line")
    delimiter = _delimiter(p, lines[first], "\n".join(lines[first : first + 50]))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    records = [(reader.line_num, r) for r in reader]
    records = [(n, r) for n, r in records if any(c.strip() for c in r)]
    header_line, header = records[0]
    found, ignored = _columns(p, header)
    rows: list[RankRow] = []
    errors: list[str] = []
    for line, cells in records[1:]:
        try:
            rows.append(_row(line, cells, found))
        except ValueError as exc:
            errors.append(f"{p}:{line}: {exc}")
    if errors:
        more = f"\n  ... and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        raise RankTableError(
            f"{p}: {len(errors)} bad row{'s' if len(errors) > 1 else ''}; nothing was "
            "imported:\n  " + "\n  ".join(errors[:MAX_ERRORS]) + more
        )
    if not rows:
        raise RankTableError(f"{p}: the table has a header (line {header_line}) but no rows")
    return RankTable(
        path=str(p),
        rows=tuple(rows),
        encoding=encoding,
        delimiter=delimiter,
        columns={col: header[i].strip() for col, i in found.items()},
        ignored=ignored,
    )


def _row(line: int, cells: list[str], found: dict[str, int]) -> RankRow:
    def cell(col: str) -> str:
        i = found.get(col)
        return cells[i].strip() if i is not None and i < len(cells) else ""

    name = " ".join(cell("name").split())
    given = cell("domain")
    domain = ""
    if given:
        domain = registered_domain(given if "/" in given else given.split()[0])
        if "." not in domain or " " in domain:
            raise ValueError(f"{given!r} is no domain or URL (write 'spbu.ru' or a URL)")
    if not name and not domain:
        raise ValueError("neither a name nor a domain")
    rank, impact = parse_rank(cell("rank")), parse_rank(cell("impact_rank"))
    if rank is None and impact is None:
        raise ValueError(f"no rank for {name or given!r}")
    return RankRow(line, name, given, domain, rank, impact, " ".join(cell("country").split()))
