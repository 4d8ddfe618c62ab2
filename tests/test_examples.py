"""The paper's study as an example (``examples/korelin2015/``): its settings and
universities file load with the program's own loaders, its ranking table imports as an
edition matching all nine universities, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from core.rank_table import read_rank_table
from core.settings import Settings, load_settings
from core.universities import parse_universities
from store import make_engine
from store.models import FILE_EDITION
from store.rank_editions import edition_ranks, list_editions
from webometrics.cli import main

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "korelin2015"


def test_the_settings_are_polite_to_real_sites() -> None:
    s = load_settings(EXAMPLE / "webometrics.toml", environ={})
    default = Settings().crawl
    assert s.crawl.obey_robots and s.crawl.autothrottle
    assert s.crawl.concurrent_per_domain == 1
    assert s.crawl.download_delay > default.download_delay
    assert s.crawl.contact_url != default.contact_url and "@" in s.crawl.contact_url
    assert not s.crawl.allow_private_hosts
    assert s.extract.languages == ("en", "ru")


def test_the_nine_universities_are_the_papers() -> None:
    ours = parse_universities(EXAMPLE / "universities.toml")
    shipped = parse_universities(EXAMPLE.parent / "universities.toml")  # the nine of Table 2
    key = [(u.name, u.country, u.domains, u.rank) for u in ours]
    assert key == [(u.name, u.country, u.domains, u.rank) for u in shipped]
    assert len(ours) == 9 and all(u.rank for u in ours)
    table = read_rank_table(EXAMPLE / "ranks-2015.csv")
    assert sorted((r.domain, r.rank) for r in table.rows) == sorted(
        (u.domains[0], u.rank) for u in ours
    )


def test_the_ranking_table_imports_as_an_edition(migrated_url: str, capsys) -> None:
    db = ["--db-url", migrated_url]
    assert main([*db, "universities", "import", str(EXAMPLE / "universities.toml")]) == 0
    argv = [*db, "universities", "import-ranks", str(EXAMPLE / "ranks-2015.csv")]
    assert main([*argv, "--edition", "2015 (paper, Table 2)", "--published", "2015-11-10"]) == 0
    out = capsys.readouterr().out
    assert "matched 9 rows" in out and "unmatched" not in out
    engine = make_engine(migrated_url)
    assert [e.name for e in list_editions(engine)] == ["2015 (paper, Table 2)", FILE_EDITION]
    assert edition_ranks(engine, "2015 (paper, Table 2)") == edition_ranks(engine, FILE_EDITION)
    engine.dispose()
