"""Rank editions on the stored world, on SQLite and PostgreSQL: a ranking table matched to
the stored universities (by domain, registry and name), every edition kept, the newest
mirrored on ``university.rank``, the correlations read with the edition chosen, the
universities file's ranks an edition too, and the migration that moves the ranks stored
before it."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
from scipy import stats
from sqlalchemy import select, text

from analyse.registries import Registry, RegistryRecord
from core.exceptions import ParameterError
from core.rank_table import RankTable, read_rank_table
from core.universities import UniversitySpec
from store import analytics as A
from store import make_engine, schema
from store.freshness import data_version
from store.models import FILE_EDITION, University
from store.queries import list_universities
from store.rank_editions import (
    delete_edition,
    edition_ranks,
    import_edition,
    list_editions,
    newest_edition,
)
from store.universities import import_universities
from tests.stored_world import UNIVERSITIES, Facts

WORLD_RANKS = {name: rank for name, _c, rank, _d in UNIVERSITIES}
MIT, OX, SPBU, NSU = (u[0] for u in UNIVERSITIES)


def table(folder: Path, name: str, content: str) -> RankTable:
    path = folder / name
    path.write_text(content, encoding="utf-8")
    return read_rank_table(path)


def ranks_stored(engine) -> dict[str, int | None]:
    return {u.name: u.rank for u in list_universities(engine)}


def test_an_edition_is_matched_kept_and_read_by_the_correlations(
    filled: Facts, tmp_path: Path
) -> None:
    engine = make_engine(filled.url)
    t2016 = table(
        tmp_path,
        "2016.csv",
        "University,URL,World Rank,Impact Rank\n"
        "St. Petersburg State University,,400,300\n"  # by name: St. = Saint
        "Massachusetts Institute of Technology,https://web.mit.edu/about,5,4\n"  # a subdomain
        "Oxford,ox.ac.uk,7,\n"
        "Tomsk State University,tsu.ru,500,\n",  # not stored
    )
    before = data_version(engine)
    done = import_edition(engine, t2016, "2016 July", published=dt.date(2016, 7, 1))
    assert data_version(engine) != before  # the dashboard forgets what it cached
    assert [(m.row.line, m.university, m.how) for m in done.match.matched] == [
        (2, SPBU, "name"),
        (3, MIT, "domain"),
        (4, OX, "domain"),
    ]
    assert [u.row.line for u in done.match.unmatched] == [5]
    assert done.match.unranked == [NSU] and not done.match.ambiguous
    assert done.replaced is None and done.newest == "2016 July"
    ids = {u.name: u.id for u in list_universities(engine)}
    assert edition_ranks(engine, "2016 July") == {
        ids[SPBU]: (400, 300),
        ids[MIT]: (5, 4),
        ids[OX]: (7, None),
    }
    # the newest edition is mirrored on university.rank: NSU has no rank in it
    assert ranks_stored(engine) == {SPBU: 400, MIT: 5, OX: 7, NSU: None}

    # an older edition is kept beside it; the default stays the newest
    t2015 = table(
        tmp_path, "2015.csv", "name;domain;rank\nSPbU;spbu.ru;539\nMIT;mit.edu;3\n"
        "Oxford;ox.ac.uk;16\nNSU;nsu.ru;616\n",
    )  # fmt: skip
    done = import_edition(engine, t2015, "2015 July", published=dt.date(2015, 7, 1))
    assert done.match.complete and done.newest == "2016 July"
    assert [e.name for e in list_editions(engine)] == ["2016 July", "2015 July"]
    assert [e.newest for e in list_editions(engine)] == [True, False]
    assert ranks_stored(engine)[SPBU] == 400

    # every correlation reads the edition chosen
    run = filled.run_ids[1]
    for edition, want in (("2015 July", WORLD_RANKS), ("2016 July", ranks_stored(engine))):
        rows = A.rank_factors(engine, run_id=run, edition=edition)
        assert rows and all(r.rank == want[r.university] for r in rows)
        corr = A.rank_correlations(engine, run_id=run, edition=edition, n_resamples=99)
        for c in corr:
            if c.statistic != "spearman" or c.target != "rank" or math.isnan(c.estimate):
                continue
            pairs = [
                (getattr(r, c.factor), r.rank)
                for r in rows
                if r.direction == c.direction and getattr(r, c.factor) is not None and r.rank
            ]
            x, y = zip(*pairs, strict=True)
            assert c.estimate == pytest.approx(stats.spearmanr(x, y).statistic)
    default = A.rank_factors(engine, run_id=run)
    assert default == A.rank_factors(engine, run_id=run, edition="2016 July")
    with pytest.raises(ParameterError, match=r"no rank edition 'nope'.*2015 July, 2016 July"):
        A.rank_factors(engine, run_id=run, edition="nope")

    # a dry run stores nothing; a re-import replaces and says so
    again = import_edition(engine, t2015, "2016 July", dry_run=True)
    assert again.dry_run and again.replaced == 3
    assert edition_ranks(engine, "2016 July")[ids[SPBU]] == (400, 300)
    again = import_edition(engine, t2015, "2016 July", published=dt.date(2016, 7, 1))
    assert again.replaced == 3 and len(edition_ranks(engine, "2016 July")) == 4
    assert ranks_stored(engine) == WORLD_RANKS
    # deleting the newest makes the next one the default
    before = data_version(engine)
    assert delete_edition(engine, "2016 July") == (4, "2015 July")
    assert newest_edition(engine) == "2015 July" and ranks_stored(engine) == WORLD_RANKS
    assert data_version(engine) != before
    with pytest.raises(ParameterError, match="kept for the ranks of the universities file"):
        import_edition(engine, t2015, FILE_EDITION)
    engine.dispose()


def test_registries_second_domains_names_and_ambiguous_rows(filled: Facts, tmp_path: Path) -> None:
    engine = make_engine(filled.url)
    registry = Registry(
        [
            RegistryRecord(
                "hipo", "spbu.ru", "St Petersburg University", ("university",), "RU",
                ("spbu.ru", "spbgu.ru"),
            ),
            RegistryRecord(
                "ror", "0x", "Novosibirsk National Research State University", ("education",),
                "RU", ("https://www.nsu.ru/",),
            ),
        ]
    )  # fmt: skip
    t = table(
        tmp_path,
        "t.csv",
        "name,domain,rank\n"
        ",spbgu.ru,1\n"  # a second domain of the same organisation
        "Novosibirsk National Research State University,,2\n"  # a registry record's name
        "University of Oxford,mit.edu,3\n"  # the domain and the name disagree
        "Oxford,ox.ac.uk,4\n"
        "University of Oxford (Oxon),,5\n",  # two rows of one university
    )
    done = import_edition(engine, t, "with registry", registry=registry)
    assert [(m.row.line, m.university, m.how) for m in done.match.matched] == [
        (2, SPBU, "registry"),
        (3, NSU, "registry name"),
    ]
    ambiguous = {u.row.line: u for u in done.match.ambiguous}
    assert set(ambiguous) == {4, 5, 6}
    assert ambiguous[4].candidates == (MIT, OX) and "disagree" in ambiguous[4].reason
    assert "lines 5, 6 all match University of Oxford" in ambiguous[5].reason
    assert done.match.unranked == [MIT, OX]
    ids = {u.name: u.id for u in list_universities(engine)}
    assert edition_ranks(engine, "with registry") == {ids[SPBU]: (1, None), ids[NSU]: (2, None)}
    bare = import_edition(engine, t, "bare", dry_run=True)
    assert [u.row.line for u in bare.match.unmatched] == [2, 3]
    engine.dispose()


def test_the_universities_files_ranks_are_an_edition(migrated_url: str, tmp_path: Path) -> None:
    engine = make_engine(migrated_url)
    specs = [
        UniversitySpec("Saint Petersburg State University", "Russia", ("spbu.ru",), 539),
        UniversitySpec("Harvard University", "USA", ("harvard.edu",), 1, impact_rank=2),
        UniversitySpec("Unranked College", "USA", ("unranked.edu",)),
    ]
    import_universities(engine, specs)
    [info] = list_editions(engine)
    assert (info.name, info.ranked, info.impact, info.newest) == (FILE_EDITION, 2, 1, True)
    ids = {u.name: u.id for u in list_universities(engine)}
    assert edition_ranks(engine, FILE_EDITION) == {
        ids["Saint Petersburg State University"]: (539, None),
        ids["Harvard University"]: (1, 2),
    }
    stamp = info.imported_at
    assert import_universities(engine, specs).unchanged == 3
    assert list_editions(engine)[0].imported_at == stamp  # nothing changed, nothing touched
    t = table(tmp_path, "w.csv", "domain,rank\nspbu.ru,300\nharvard.edu,2\n")
    import_edition(engine, t, "2024")
    assert ranks_stored(engine)["Harvard University"] == 2
    # a new rank in the file changes its edition, not the default (an imported one)
    specs[0] = UniversitySpec("Saint Petersburg State University", "Russia", ("spbu.ru",), 500)
    result = import_universities(engine, specs)
    assert result.updated == 1 and "rank 539 -> 500" in result.changes[0].describe()
    assert edition_ranks(engine, FILE_EDITION)[ids["Saint Petersburg State University"]] == (
        500,
        None,
    )
    assert ranks_stored(engine)["Saint Petersburg State University"] == 300
    delete_edition(engine, "2024")
    assert ranks_stored(engine)["Saint Petersburg State University"] == 500
    engine.dispose()


def test_0019_moves_the_stored_ranks_into_an_edition(db_url: str) -> None:
    engine = make_engine(db_url)
    schema.upgrade(engine, "0017")
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    with engine.begin() as conn:
        for name, rank, impact in [("A", 3, None), ("B", None, None), ("C", 9, 4)]:
            conn.execute(
                text(
                    "INSERT INTO university (name, country, rank, impact_rank, home_urls, "
                    "created_at) VALUES (:n, 'X', :r, :m, '[]', :t)"
                ),
                {"n": name, "r": rank, "m": impact, "t": now},
            )
        ids = dict(conn.execute(text("SELECT name, id FROM university")).all())
    schema.upgrade(engine)
    assert edition_ranks(engine, FILE_EDITION) == {ids["A"]: (3, None), ids["C"]: (9, 4)}
    import_universities(engine, [UniversitySpec("D", "X", ("d.edu",), 1)])
    assert len(edition_ranks(engine, FILE_EDITION)) == 3
    t = RankTable("t", (), "UTF-8", ",", {}, ())
    import_edition(engine, t, "empty")  # the sequence is past the moved edition's id
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM rank_edition")).scalar() == 2
    assert ranks_stored(engine) == {"A": None, "B": None, "C": None, "D": None}
    delete_edition(engine, "empty")
    schema.downgrade(engine, "0017")
    with engine.connect() as conn:
        got = conn.execute(select(University.name, University.rank).order_by(University.name))
        assert got.all() == [("A", 3), ("B", None), ("C", 9), ("D", 1)]
    engine.dispose()
