"""``webometrics universities import-ranks | ranks`` and ``report --rank-edition`` on the
database the pipeline made: exit codes that say what was matched, a dry run that stores
nothing, a bad table refused whole, a re-import said to replace, and the report's rank
files read with the edition chosen."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from core.universities import parse_universities
from store.rank_editions import edition_ranks, list_editions
from tests.pipeline_world import UNIVERSITIES, PipelineWorld
from webometrics.cli import main


def write_table(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh, delimiter=";")
        w.writerow(["Institution", "Web site", "World Rank"])
        w.writerows(rows)
    return path


@pytest.fixture
def unis() -> list:
    return parse_universities(UNIVERSITIES)


def test_import_ranks_exit_codes_dry_run_and_replace(
    pipeline_db_copy: PipelineWorld, unis: list, tmp_path: Path, capsys
) -> None:
    db = ["--db-url", pipeline_db_copy.url]
    # each university's rank plus 100, given by a URL on a subdomain
    rows = [(u.name, f"https://www.cs.{u.domains[0]}/", str(u.rank + 100)) for u in unis]
    good = write_table(tmp_path / "good.csv", rows)
    cmd = [*db, "universities", "import-ranks"]
    assert main([*cmd, str(good), "--edition", "E1", "--dry-run"]) == 0  # with the registries
    assert "dry run: nothing stored" in capsys.readouterr().out
    engine = pipeline_db_copy.engine
    assert "E1" not in [e.name for e in list_editions(engine)]

    cmd.append("--no-registries")  # the rest by domain and name (quicker)
    assert main([*cmd, str(good), "--edition", "E1"]) == 0
    out = capsys.readouterr().out
    assert f"matched {len(unis)} rows" in out and "edition 'E1' stored" in out
    assert sorted(r for r, _i in edition_ranks(engine, "E1").values()) == sorted(
        u.rank + 100 for u in unis
    )

    # a row of a university not stored: exit 5, unless such rows are expected
    extra = write_table(tmp_path / "extra.csv", [*rows, ("Elsewhere U", "elsewhere.edu", "7")])
    assert main([*cmd, str(extra), "--edition", "E1"]) == 5
    out = capsys.readouterr().out
    assert "unmatched rows (1" in out and "Elsewhere U" in out and "replaced" in out
    assert main([*cmd, str(extra), "--edition", "E1", "--allow-unmatched-rows"]) == 0
    # a stored university the table leaves out: exit 5 whatever the options
    short = write_table(tmp_path / "short.csv", rows[1:])
    assert main([*cmd, str(short), "--edition", "E2", "--allow-unmatched-rows"]) == 5
    assert f"left without a rank (1):\n  {unis[0].name}" in capsys.readouterr().out

    # a bad table: exit 2 with every bad row, nothing stored
    bad = write_table(tmp_path / "bad.csv", [rows[0], (unis[1].name, "", "101-200")])
    before = list_editions(engine)
    assert main([*cmd, str(bad), "--edition", "E3"]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:3: rank '101-200' is a band" in err and "nothing was imported" in err
    assert list_editions(engine) == before
    assert main([*cmd, str(good), "--edition", "universities file"]) == 2

    assert main([*db, "universities", "ranks"]) == 0
    listing = capsys.readouterr().out
    assert listing.index("E2 *") < listing.index("E1") < listing.index("universities file")
    assert main([*db, "universities", "ranks", "--delete", "E2"]) == 0
    assert "default edition now: 'E1'" in capsys.readouterr().out
    engine.dispose()


def test_the_report_correlates_the_edition_chosen(
    pipeline_db_copy: PipelineWorld, unis: list, tmp_path: Path
) -> None:
    db = ["--db-url", pipeline_db_copy.url]
    ranks = {u.name: 10 * (i + 1) for i, u in enumerate(reversed(unis))}
    table = write_table(tmp_path / "t.csv", [(n, "", str(r)) for n, r in ranks.items()])
    assert main([*db, "universities", "import-ranks", str(table), "--edition", "mine"]) == 0
    file_ranks = {u.name: u.rank for u in unis}
    for edition, want in (("mine", ranks), ("universities file", file_ranks)):
        out = tmp_path / f"report-{edition}"
        assert main([*db, "report", "--out", str(out), "--rank-edition", edition]) == 0
        with (out / "rank_factors.csv").open(encoding="utf-8") as fh:
            got = list(csv.DictReader(fh))
        assert got and all(int(r["rank"]) == want[r["university"]] for r in got)
        assert {r["rank_edition"] for r in got} == {edition}
        with (out / "rank_correlation.csv").open(encoding="utf-8") as fh:
            assert {r["rank_edition"] for r in csv.DictReader(fh)} == {edition}
    assert main([*db, "report", "--out", str(tmp_path / "x"), "--rank-edition", "no"]) == 2
    assert not list((tmp_path / "x").iterdir())  # refused before anything was written
