"""Reading a ranking table: encodings, delimiters, header spellings, rank cells, and the
errors a bad file gets (every bad row named, nothing half-read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.exceptions import RankTableError
from core.rank_table import HEADERS, column_of, parse_rank, read_rank_table

ROWS = [
    ("Saint Petersburg State University", "https://www.spbu.ru/en/", "539", "310"),
    ("Lomonosov Moscow State University", "msu.ru", "=129", ""),
    ("University of Oxford", "www.cs.ox.ac.uk", "T16", "12"),
]


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


@pytest.mark.parametrize(
    ("delimiter", "encoding", "bom", "said"),
    [
        (",", "utf-8", b"", "UTF-8"),
        (";", "utf-8", b"\xef\xbb\xbf", "UTF-8 with BOM"),
        ("\t", "utf-16", b"", "UTF-16"),
        ("|", "utf-8", b"", "UTF-8"),
    ],
)
def test_a_table_is_read_whatever_its_delimiter_and_encoding(
    tmp_path: Path, delimiter: str, encoding: str, bom: bytes, said: str
) -> None:
    header = delimiter.join(["University", "Web site", "World Rank", "Impact Rank*", "Notes"])
    lines = [header] + [delimiter.join(r) + delimiter + "x" for r in ROWS]
    path = tmp_path / "ranks.csv"
    path.write_bytes(bom + ("\r\n".join(lines) + "\r\n").encode(encoding))
    table = read_rank_table(path)
    assert table.encoding == said and table.delimiter == delimiter
    assert table.columns == {
        "name": "University",
        "domain": "Web site",
        "rank": "World Rank",
        "impact_rank": "Impact Rank*",
    }
    assert table.ignored == ("Notes",)
    got = [(r.line, r.name, r.domain, r.rank, r.impact_rank) for r in table.rows]
    assert got == [
        (2, ROWS[0][0], "spbu.ru", 539, 310),
        (3, ROWS[1][0], "msu.ru", 129, None),
        (4, ROWS[2][0], "ox.ac.uk", 16, 12),
    ]
    assert "ignored columns: 'Notes'" in table.describe()


def test_quoted_cells_blank_lines_and_a_name_only_table(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.csv",
        '\n\nInstitution,Position\n"Harvard University, Cambridge",1\n\nStanford,"1,234"\n',
    )
    table = read_rank_table(path)
    assert [(r.name, r.domain, r.rank) for r in table.rows] == [
        ("Harvard University, Cambridge", "", 1),
        ("Stanford", "", 1234),
    ]
    assert [r.line for r in table.rows] == [4, 6]


def test_every_header_spelling_names_its_column() -> None:
    for column, spellings in HEADERS.items():
        for spelling in spellings:
            assert column_of(spelling.upper()) == column, spelling
            assert column_of(f"  {spelling.title()}* ") == column, spelling


@pytest.mark.parametrize(
    ("cell", "value"), [("1", 1), (" 42 ", 42), ("=7", 7), ("7=", 7), ("#3", 3), ("12 345", 12345)]
)
def test_rank_cells(cell: str, value: int) -> None:
    assert parse_rank(cell) == value


@pytest.mark.parametrize(
    ("cell", "says"),
    [("101-150", "is a band"), ("0", "1 or more"), ("3.5", "not a whole number"), ("top", "not")],
)
def test_bad_rank_cells_say_what_is_wrong(cell: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_rank(cell)


def test_every_bad_row_is_listed_with_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "bad.csv",
        "name,domain,rank\nA,a.edu,1\nB,b.edu,101-150\nC,c.edu,\n,,4\nD,not a domain,5\n",
    )
    with pytest.raises(RankTableError) as err:
        read_rank_table(path)
    text = str(err.value)
    assert "4 bad rows; nothing was imported" in text
    for line, says in ((3, "is a band"), (4, "no rank for 'C'"), (5, "neither"), (6, "no domain")):
        assert f"bad.csv:{line}: " in text and says in text


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("", "the file is empty"),
        ("just some text\nmore text\n", "has no comma, semicolon, tab or bar"),
        ("country,score\nRussia,3\n", "lacks a name or a domain/URL column and a rank"),
        ("name,domain\nA,a.edu\n", "lacks a rank or an impact rank column"),
        ("name,rank\n", "no rows"),
    ],
)
def test_a_file_that_is_no_ranking_table_is_refused(
    tmp_path: Path, content: str, says: str
) -> None:
    with pytest.raises(RankTableError, match=says):
        read_rank_table(write(tmp_path / "x.csv", content))


def test_a_table_not_in_utf8_names_the_line_and_says_what_to_do(tmp_path: Path) -> None:
    path = write(tmp_path / "cp1251.csv", "name,rank\nМГУ,129\n", "cp1251")
    with pytest.raises(RankTableError, match=r"cp1251.csv:2: not UTF-8 .* save the table as UTF-8"):
        read_rank_table(path)
    with pytest.raises(RankTableError, match="not found"):
        read_rank_table(tmp_path / "missing.csv")
