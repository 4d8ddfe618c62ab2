"""The universities file: parsing, clear errors, one-transaction import."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.exceptions import UniversitiesFileError
from core.universities import parse_universities
from store import make_engine, session_scope
from store import models as m
from store.universities import import_universities

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "universities.toml"


def test_the_papers_nine_universities() -> None:
    specs = parse_universities(EXAMPLES)
    assert [s.domains[0] for s in specs] == [
        "spbu.ru",
        "msu.ru",
        "nsu.ru",
        "harvard.edu",
        "stanford.edu",
        "mit.edu",
        "ox.ac.uk",
        "cam.ac.uk",
        "ucl.ac.uk",
    ]
    ranks = {s.domains[0]: s.rank for s in specs}
    assert ranks["harvard.edu"] == 1 and ranks["spbu.ru"] == 539 and ranks["ox.ac.uk"] == 16
    assert specs[0].start_urls == ("https://spbu.ru/",)


GOOD = '[[university]]\nname = "A"\ncountry = "X"\ndomains = ["a.edu"]\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[university]\nname='A'", r"invalid TOML"),
        (GOOD + "colour = 'red'\n", r"u\.toml:5: unknown key 'colour'"),
        ('[[university]]\nname = "A"\ndomains = ["a.edu"]\n', r"#1 \(A\): missing field 'country'"),
        (
            '[[university]]\nname = "A"\ncountry = "X"\ndomains = ["https://a.edu/"]\n',
            r"u\.toml:4: 'https://a.edu/' is not a valid domain",
        ),
        (
            '[[university]]\nname = "A"\ncountry = "X"\ndomains = ["bad..edu"]\n',
            r"not a valid domain",
        ),
        ('[[university]]\nname = "A"\ncountry = "X"\ndomains = ["www.a.edu"]\n', r"is a subdomain"),
        (
            GOOD + '[[university]]\nname = "B"\ncountry = "Y"\ndomains = ["a.edu"]\n',
            r"u\.toml:8: duplicate domain 'a.edu' \(also given for 'A'\)",
        ),
        (GOOD + GOOD, r"duplicate university name 'A'"),
        (GOOD + "rank = -3\n", r"rank must be a positive integer"),
        ("title = 'x'\n", r"unknown top-level key"),
    ],
)
def test_bad_universities_files(tmp_path: Path, text: str, expected: str) -> None:
    f = tmp_path / "u.toml"
    f.write_text(text)
    with pytest.raises(UniversitiesFileError, match=expected) as info:
        parse_universities(f)
    assert info.value.exit_code == 2


def test_import_is_idempotent_and_atomic(migrated_url: str, tmp_path: Path) -> None:
    engine = make_engine(migrated_url)
    specs = parse_universities(EXAMPLES)
    assert import_universities(engine, specs) == (9, 0)
    assert import_universities(engine, specs) == (0, 9)
    f = tmp_path / "u.toml"
    f.write_text(
        '[[university]]\nname = "New"\ncountry = "X"\ndomains = ["new.edu"]\n'
        '[[university]]\nname = "Thief"\ncountry = "X"\ndomains = ["mit.edu"]\n'
    )
    with pytest.raises(UniversitiesFileError, match="already belongs to 'Massachusetts"):
        import_universities(engine, parse_universities(f))
    with session_scope(engine) as s:  # nothing half-written: "New" was rolled back
        assert s.scalar(select(func.count()).select_from(m.University)) == 9
        assert s.scalar(select(m.University).where(m.University.name == "New")) is None
    engine.dispose()
