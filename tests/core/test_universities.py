"""The universities file: parsing, clear errors, one-transaction import."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.exceptions import UniversitiesFileError
from core.universities import parse_universities
from store import make_engine, session_scope
from store import models as m
from store.universities import ReimportRefusedError, import_universities

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


def test_a_csv_given_as_universities_file_is_told_where_it_belongs(tmp_path: Path) -> None:
    f = tmp_path / "ranking.csv"
    f.write_text("name,domain,rank\nA,a.edu,1\n")
    with pytest.raises(UniversitiesFileError, match=r"ranking\.csv: invalid TOML") as info:
        parse_universities(f)
    assert "examples/universities.toml" in str(info.value)
    assert "webometrics universities import-ranks" in str(info.value)


def test_import_is_idempotent_and_atomic(migrated_url: str, tmp_path: Path) -> None:
    engine = make_engine(migrated_url)
    specs = parse_universities(EXAMPLES)
    first = import_universities(engine, specs)
    assert (first.created, first.updated, first.unchanged) == (9, 0, 0)
    again = import_universities(engine, specs)  # the same file: a no-op
    assert (again.created, again.updated, again.unchanged, again.changes) == (0, 0, 9, [])
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


CORNELL = '[[university]]\nname = "Cornell University"\ncountry = "{country}"\nrank = {rank}\n'


def _cornell(tmp_path: Path, name: str, domains: list[str], country: str = "USA", rank: int = 19):
    f = tmp_path / name
    doms = ", ".join(f'"{d}"' for d in domains)
    f.write_text(CORNELL.format(country=country, rank=rank) + f"domains = [{doms}]\n")
    return f


def _stored(engine) -> tuple[str, int | None, list[str]]:
    with session_scope(engine) as s:
        uni = s.scalars(select(m.University)).one()
        return uni.country, uni.rank, sorted(d.domain for d in uni.domains)


def _add_pages(engine, urls: list[str]) -> None:
    with session_scope(engine) as s:
        for url in urls:
            host = url.split("/")[2]
            s.add(m.Page(url=url, host=host, registered_domain="cornell.edu", role="university"))


def test_a_reimport_with_other_domains_or_country_is_explicit(
    migrated_url: str, tmp_path: Path
) -> None:
    """SQLite and PostgreSQL: refused with the differences listed, nothing written;
    --merge unites the domains; --replace takes the file's but never drops a domain with
    stored pages without --drop-domains-with-pages."""
    engine = make_engine(migrated_url)
    import_universities(engine, parse_universities(_cornell(tmp_path, "a.toml", ["cornell.edu"])))
    _add_pages(engine, ["https://www.cornell.edu/", "https://cs.cornell.edu/x"])
    other = parse_universities(_cornell(tmp_path, "b.toml", ["cornell.ca"], "Canada", 20))
    with pytest.raises(ReimportRefusedError) as info:
        import_universities(engine, other)
    message = str(info.value)
    assert info.value.exit_code == 2 and "nothing was imported" in message
    assert (
        "Cornell University: domains +cornell.ca -cornell.edu (2 stored pages); "
        "country USA -> Canada; rank 19 -> 20"
    ) in message
    assert "--merge" in message and "--replace" in message
    assert _stored(engine) == ("USA", 19, ["cornell.edu"])
    # a domain with stored pages is not dropped by --replace alone
    with pytest.raises(ReimportRefusedError, match="--drop-domains-with-pages"):
        import_universities(engine, other, mode="replace")
    assert _stored(engine) == ("USA", 19, ["cornell.edu"])
    # a new domain alone is refused too (the file may be another university's)
    more = parse_universities(_cornell(tmp_path, "c.toml", ["cornell.edu", "cornell.ca"]))
    with pytest.raises(ReimportRefusedError, match=r"Cornell University: domains \+cornell.ca\n"):
        import_universities(engine, more)
    merged = import_universities(engine, other, mode="merge")
    assert merged.updated == 1 and merged.changes[0].domains_removed == ()
    assert _stored(engine) == ("Canada", 20, ["cornell.ca", "cornell.edu"])
    assert import_universities(engine, other, mode="merge").unchanged == 1  # idempotent
    replaced = import_universities(engine, other, mode="replace", drop_domains_with_pages=True)
    assert replaced.changes[0].domains_removed == ("cornell.edu",)
    assert replaced.changes[0].pages == {"cornell.edu": 2}
    assert _stored(engine) == ("Canada", 20, ["cornell.ca"])
    with session_scope(engine) as s:  # the pages stay stored
        assert s.scalar(select(func.count()).select_from(m.Page)) == 2
    # a domain without pages is dropped by --replace; a rank alone is a plain update
    back = parse_universities(_cornell(tmp_path, "d.toml", ["cornell.edu"], "Canada", 21))
    assert import_universities(engine, back, mode="replace").updated == 1
    ranked = parse_universities(_cornell(tmp_path, "e.toml", ["cornell.edu"], "Canada", 22))
    result = import_universities(engine, ranked)
    assert result.updated == 1 and result.changes[0].describe() == (
        "Cornell University: rank 21 -> 22"
    )
    engine.dispose()


@pytest.mark.slow
def test_the_commands_refuse_a_silent_rewrite(tmp_path: Path) -> None:
    """``universities import`` and ``run --universities``: exit 2, the difference shown,
    the way out named; nothing written, nothing crawled."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    env["WEBOMETRICS_DB_URL"] = f"sqlite:///{tmp_path / 'u.db'}"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "webometrics", *args],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    assert cli("db", "upgrade").returncode == 0
    a = _cornell(tmp_path, "a.toml", ["cornell.edu"])
    b = _cornell(tmp_path, "b.toml", ["cornell.ca"], "Canada", 20)
    first = cli("universities", "import", str(a))
    assert first.returncode == 0 and "1 created, 0 updated, 0 unchanged" in first.stdout
    same = cli("universities", "import", str(a))
    assert same.returncode == 0 and "0 created, 0 updated, 1 unchanged" in same.stdout
    refused = cli("universities", "import", str(b))
    assert refused.returncode == 2 and refused.stdout == ""
    assert "domains +cornell.ca -cornell.edu; country USA -> Canada" in refused.stderr
    run = cli("run", "--universities", str(b), "--stages", "extract")
    assert run.returncode == 2, run.stderr
    assert f"webometrics universities import --merge {b}" in run.stderr
    assert "Nothing was crawled" in run.stderr
    bad = cli("universities", "import", "--merge", "--replace", str(b))
    assert bad.returncode == 2
    merged = cli("universities", "import", "--merge", str(b))
    assert merged.returncode == 0 and "1 updated" in merged.stdout
    assert "updated Cornell University: domains +cornell.ca; country USA -> Canada" in (
        merged.stdout
    )
