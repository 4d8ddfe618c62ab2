"""The console script end to end, as a user runs it (a real subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "webometrics", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_lists_the_commands(tmp_path: Path) -> None:
    out = run("--help", cwd=tmp_path)
    assert out.returncode == 0
    for command in ("db", "universities"):
        assert command in out.stdout


@pytest.mark.slow
def test_db_upgrade_twice_then_import_and_list(tmp_path: Path) -> None:
    env = {"WEBOMETRICS_DB_URL": "sqlite:///x.db"}
    first = run("db", "upgrade", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    assert "upgraded empty ->" in first.stdout
    second = run("db", "upgrade", cwd=tmp_path, env=env)
    assert second.returncode == 0 and "nothing to do" in second.stdout
    assert (tmp_path / "x.db").exists()
    imp = run(
        "universities",
        "import",
        str(REPO / "examples" / "universities.toml"),
        cwd=tmp_path,
        env=env,
    )
    assert imp.returncode == 0 and "9 created" in imp.stdout, imp.stderr
    listed = run("universities", "list", cwd=tmp_path, env=env)
    assert listed.returncode == 0 and "ox.ac.uk" in listed.stdout
    assert listed.stdout.index("Harvard") < listed.stdout.index("Saint Petersburg")


def test_out_of_date_schema_exit_3(tmp_path: Path) -> None:
    out = run("universities", "list", cwd=tmp_path, env={"WEBOMETRICS_DB_URL": "sqlite:///e.db"})
    assert out.returncode == 3
    assert "run `webometrics db upgrade`" in out.stderr


@pytest.mark.parametrize(
    ("env", "args", "expected"),
    [
        (
            {"WEBOMETRICS_DB_URL": "postgresql+psycopg://u@127.0.0.1:1/none"},
            ("db", "current"),
            "cannot reach the database postgresql+psycopg://u@127.0.0.1:1/none",
        ),
        (
            {"WEBOMETRICS_DB_URL": "nonsense"},
            ("db", "current"),
            "database URL 'nonsense' is malformed",
        ),
        (
            {},
            ("--config", "missing.toml", "db", "current"),
            "missing.toml: configuration file not found",
        ),
        ({"WEBOMETRICS_CLUSTER__THRESHOLD": "2"}, ("db", "current"), "cluster.threshold"),
    ],
)
def test_bad_input_exit_2(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...], expected: str
) -> None:
    out = run(*args, cwd=tmp_path, env=env)
    assert out.returncode == 2, out.stderr
    assert expected in out.stderr


@pytest.mark.slow
def test_bad_universities_file_exit_2_nothing_written(tmp_path: Path) -> None:
    env = {"WEBOMETRICS_DB_URL": "sqlite:///x.db"}
    assert run("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    bad = tmp_path / "u.toml"
    bad.write_text('[[university]]\nname = "A"\ncountry = "X"\ndomains = ["a.edu", "a.edu"]\n')
    out = run("universities", "import", str(bad), cwd=tmp_path, env=env)
    assert out.returncode == 2 and "duplicate domain 'a.edu'" in out.stderr
    listed = run("universities", "list", cwd=tmp_path, env=env)
    assert "no universities stored" in listed.stdout


def test_no_command_prints_help_and_exits_2(tmp_path: Path) -> None:
    out = run(cwd=tmp_path)
    assert out.returncode == 2 and "usage:" in out.stdout


@pytest.mark.slow
def test_an_output_folder_that_cannot_hold_the_output_is_refused_first(tmp_path: Path) -> None:
    """``--out`` at a file, or under one: exit 2 at once with what is wrong (the test web's
    build used to run its steps for 15 s and then fail with a traceback); a file the
    report cannot write: exit 1 naming it, no traceback."""
    env = {"WEBOMETRICS_DB_URL": "sqlite:///x.db"}
    assert run("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    (tmp_path / "f.txt").write_text("in the way")
    for args, expected in [
        (("report", "--out", "f.txt"), "--out f.txt: a file of that name is there"),
        (("report", "--out", "f.txt/sub"), "--out f.txt/sub: cannot write there"),
        (("testbed", "build", "--out", "f.txt/sub"), "--out f.txt/sub: cannot write there"),
    ]:
        out = run(*args, cwd=tmp_path, env=env)
        assert out.returncode == 2, (args, out.stderr)
        assert expected in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "sub").exists() and (tmp_path / "f.txt").read_text() == "in the way"
    (tmp_path / "rep" / "README.md").mkdir(parents=True)  # a folder where a file goes
    out = run("report", "--out", "rep", cwd=tmp_path, env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "rep/README.md: Is a directory; check the path" in out.stderr, out.stderr
