"""A database in a read-only folder (issue 36, fault 6): a read-only bind mount (as root)
or a folder and file without write permission. The reading commands (``runs``,
``universities list``, ``report``) work; a command that writes says that the database is
read-only (exit 2), with the file's path as given, not a garbled ``file%3A...`` URL.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli import run_webometrics


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """``folder`` seen read-only: bound read-only elsewhere (root ignores permissions),
    else without write permission."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield folder
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    view = folder.with_name(folder.name + "-ro")
    view.mkdir()
    subprocess.run(["mount", "--bind", str(folder), str(view)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True)
        with pytest.raises(OSError):
            (view / "probe").write_text("x")  # really read-only
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


@pytest.mark.slow
def test_reading_commands_work_and_writes_say_read_only(filled_sqlite, tmp_path: Path) -> None:
    source = Path(filled_sqlite.url.removeprefix("sqlite:///"))
    folder = tmp_path / "db"
    folder.mkdir()
    shutil.copy(source, folder / "w.db")
    unis = tmp_path / "u.toml"
    unis.write_text('[[university]]\nname = "New U"\ncountry = "USA"\ndomains = ["new-u.edu"]\n')
    with read_only_folder(folder) as ro:
        db = f"sqlite:///{ro / 'w.db'}"
        for args in (("runs",), ("universities", "list"), ("report", "--out", str(tmp_path / "r"))):
            out = run_webometrics(*args, db=db, cwd=tmp_path)
            assert out.returncode == 0, (args, out.stderr[-2000:])
            assert out.stdout.strip()
        listed = run_webometrics("runs", db=db, cwd=tmp_path)
        assert "crawl runs" in listed.stdout and "finished" in listed.stdout
        for args in (("universities", "import", str(unis)), ("extract",)):
            out = run_webometrics(*args, db=db, cwd=tmp_path)
            assert out.returncode == 2, (args, out.stdout, out.stderr[-2000:])
            assert "read-only" in out.stderr, out.stderr
            assert str(ro / "w.db") in out.stderr and "%3A" not in out.stderr
            assert "Traceback" not in out.stderr
    assert any((tmp_path / "r").iterdir())


def test_the_dashboard_on_an_unmigrated_file_names_it_as_given(tmp_path: Path) -> None:
    # the dashboard opens SQLite read-only (file:PATH?mode=ro): its messages still say
    # sqlite:///PATH, not the engine's percent-encoded URI
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    path.write_bytes(b"")  # an empty file: a database with no schema
    done = run_webometrics("--db-url", f"sqlite:///{path}", "dashboard", "--port", "1")
    assert done.returncode == 3, done.stderr  # 3: the schema is out of date
    assert f"database sqlite:///{path} schema is out of date (empty" in done.stderr
    assert "%3A" not in done.stderr and "mode=ro" not in done.stderr
