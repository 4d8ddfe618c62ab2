"""A damaged database and a server that stops (issue 36, faults 7 and 8).

A page of a copy of an SQLite database is overwritten: ``extract`` and ``crawl`` say that
the database file is damaged, point to ``PRAGMA integrity_check`` and the backup, and
exit non-zero, with no traceback and no Scrapy warning blamed. PostgreSQL stopped under
``extract``: one clean error line, no chained tracebacks (``-vv`` shows them).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from store import make_engine
from tests.cli import FAST_CRAWL, run_webometrics, start_webometrics
from tests.crawler.conftest import LocalWeb, html, write_universities
from tests.crawler.test_db_outage import PrivatePostgres
from tests.stored_world import fill_world, migrated_world_url

A = "http://www.alpha-university.edu"


def damage(path: Path, table: str = "page") -> None:
    """Overwrite the root page of ``table``'s b-tree with garbage (the header kept)."""
    with sqlite3.connect(path) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    with open(path, "r+b") as fh:
        fh.seek((root[0] - 1) * size)
        fh.write(b"\xa5" * size)
    try:
        with sqlite3.connect(path) as conn:
            verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        verdict = str(exc)
    assert verdict != "ok"


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("webometrics: error:")]


@pytest.mark.slow
def test_extract_and_crawl_say_the_database_file_is_damaged(filled_sqlite, tmp_path: Path) -> None:
    db_file = tmp_path / "w.db"
    shutil.copy(Path(filled_sqlite.url.removeprefix("sqlite:///")), db_file)
    damage(db_file)
    db = f"sqlite:///{db_file}"
    out = run_webometrics("extract", "--workers", "1", db=db, cwd=tmp_path)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    (line,) = _error_lines(out.stderr)
    assert f"the database file {db_file} is damaged" in line
    assert "PRAGMA integrity_check" in line and "backup" in line
    pages = {f"{A}/": html("Alpha", "/a.html"), f"{A}/a.html": html("Alpha a")}
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    with LocalWeb(pages) as web:
        out = run_webometrics(
            "crawl", "--universities", str(unis), "--direction", "outgoing", "--proxy",
            web.proxy_url, "--no-progress", db=db, cwd=tmp_path, env=FAST_CRAWL,
        )  # fmt: skip
    assert out.returncode != 0
    (line,) = _error_lines(out.stderr)
    assert f"the database file {db_file} is damaged" in line, out.stderr[-3000:]
    assert "Warning" not in line


@pytest.mark.slow
@pytest.mark.requires_postgres
def test_postgresql_stopping_under_extract_is_one_clean_line(tmp_path: Path, corpora) -> None:
    pg = PrivatePostgres()
    try:
        url = migrated_world_url(pg.server.create_database())
        fill_world(url, corpora)
        engine = make_engine(url)
        with engine.begin() as conn:  # every page to extract again, ten times over
            columns = [
                c
                for c in conn.execute(
                    text(
                        "SELECT column_name FROM information_schema.columns "
                        "WHERE table_name = 'page' AND column_name NOT IN ('id', 'url') "
                        "ORDER BY ordinal_position"
                    )
                ).scalars()
            ]
            listed = ", ".join(columns)
            conn.execute(
                text(
                    f"INSERT INTO page (url, {listed}) SELECT url || '?copy=' || g, {listed} "
                    "FROM page, generate_series(1, 10) AS g"
                )
            )
            conn.execute(text("UPDATE page SET extraction_status = 'pending'"))
        engine.dispose()
        proc = start_webometrics("extract", "--workers", "1", db=url, cwd=tmp_path)
        engine = make_engine(url)
        query = text("SELECT count(*) FROM page WHERE extraction_status <> 'pending'")
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            with engine.connect() as conn:  # its first batch committed: under way
                if conn.execute(query).scalar():
                    break
            time.sleep(0.1)
        engine.dispose()
        assert proc.poll() is None, proc.communicate()
        pg.stop()
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode != 0
        assert "Traceback" not in err, err[-5000:]
        (line,) = _error_lines(err)
        assert "database" in line
        # besides the progress bar: the error, and the lock's warnings (lost, not taken
        # again); 254 lines with 7 chained tracebacks before
        said = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("extract:")]
        assert len(said) <= 4, err
    finally:
        pg.server.stop()


@pytest.mark.slow
def test_a_server_that_accepts_and_never_answers_is_given_up(tmp_path: Path) -> None:
    """A database address whose server accepts connections and never answers: the
    command gives up after the connect timeout (``DATABASE_CONNECT_TIMEOUT``), not
    minutes later."""
    import socket
    import threading

    from core.defaults import DATABASE_CONNECT_TIMEOUT

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])  # accepted, never answered

    threading.Thread(target=accept, daemon=True).start()
    port = listener.getsockname()[1]
    try:
        started = time.monotonic()
        out = run_webometrics("runs", db=f"postgresql://u@127.0.0.1:{port}/db", cwd=tmp_path)
        took = time.monotonic() - started
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert out.returncode == 2, out.stderr
    (line,) = _error_lines(out.stderr)
    assert "cannot reach the database" in line and "timeout" in line.lower(), line
    assert took < DATABASE_CONNECT_TIMEOUT + 30
