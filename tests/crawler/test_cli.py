"""``webometrics crawl`` and ``webometrics import warc`` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import LocalWeb, html, write_universities

A = "http://www.alpha-university.edu"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    env.update(
        WEBOMETRICS_DB_URL="sqlite:///w.db",
        WEBOMETRICS_CRAWL__DOWNLOAD_DELAY="0",
        WEBOMETRICS_CRAWL__AUTOTHROTTLE="false",
    )
    return subprocess.run(
        [sys.executable, "-m", "webometrics", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_crawl_command_with_progress(tmp_path: Path) -> None:
    assert run("db", "upgrade", cwd=tmp_path).returncode == 0
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    pages = {
        f"{A}/": html("Home", "/a.html", ("http://news.example.org/x", "News")),
        f"{A}/a.html": html("A"),
        "http://news.example.org/x": html("X", (f"{A}/", "Alpha")),
    }
    with LocalWeb(pages) as web:
        out = run(
            "crawl", "--universities", str(unis), "--proxy", web.proxy_url,
            "--depth", "1", "--jobdir", "job", cwd=tmp_path,
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "crawl run 1 finished: 3 pages fetched" in out.stdout
    assert "1 outgoing and 1 citing domains" in out.stdout  # the news page cites Alpha
    assert "crawl outgoing" in out.stderr and "crawl citing" in out.stderr  # progress bars
    assert (tmp_path / "job" / "outgoing.log").is_file()
    records = [
        json.loads(line)
        for line in (tmp_path / "job" / "outgoing.progress.jsonl").read_text().splitlines()
    ]  # the last one: the crawl's end, with nothing queued or held
    assert records[-1]["event"] == "closed"
    assert records[-1]["queued"] == 0 and records[-1]["held"] == 0


@pytest.mark.slow
def test_crawl_errors_say_what_to_do(tmp_path: Path) -> None:
    assert run("db", "upgrade", cwd=tmp_path).returncode == 0
    none = run("crawl", "--direction", "outgoing", cwd=tmp_path)
    assert none.returncode == 2
    assert "no universities to crawl" in none.stderr and "universities import" in none.stderr
    unis = write_universities(
        tmp_path / "u.toml", {"name": "Alpha University", "domains": ["alpha-university.edu"]}
    )
    missing = run(
        "crawl", "--universities", str(unis), "--direction", "citing", "--backlinks",
        "nope.csv", cwd=tmp_path,
    )  # fmt: skip
    assert missing.returncode == 2 and "nope.csv: backlink file not found" in missing.stderr
    bad = run("crawl", "--direction", "sideways", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


@pytest.mark.slow
def test_import_warc_command(tmp_path: Path, shared_data: Path) -> None:
    assert run("db", "upgrade", cwd=tmp_path).returncode == 0
    sample = shared_data / "warc-samples" / "resiliparse" / "warcfile.warc.gz"
    out = run("import", "warc", str(sample), "--no-progress", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "16 records from 1 file(s), 16 pages stored" in out.stdout
    assert run("refresh", "--check", cwd=tmp_path).returncode == 0  # nothing left stale
    missing = run("import", "warc", "nothing.warc.gz", cwd=tmp_path)
    assert missing.returncode == 2 and "nothing.warc.gz: WARC/ARC file not found" in missing.stderr


@pytest.mark.slow
def test_whole_pipeline_run_calls_the_crawl_stage(tmp_path: Path) -> None:
    """``webometrics run --stages crawl`` records the crawl as a pipeline stage."""
    import sqlite3

    assert run("db", "upgrade", cwd=tmp_path).returncode == 0
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    with LocalWeb({f"{A}/": html("Home", ("http://news.example.org/", "News"))}) as web:
        out = run(
            "run", "--universities", str(unis), "--stages", "crawl", "--direction",
            "outgoing", "--proxy", web.proxy_url, cwd=tmp_path,
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    db = sqlite3.connect(tmp_path / "w.db")
    (stages,) = db.execute("SELECT stages FROM pipeline_run").fetchone()
    (pipeline_run_id, status) = db.execute(
        "SELECT pipeline_run_id, status FROM crawl_run"
    ).fetchone()
    assert '"crawl"' in stages and '"finished"' in stages
    assert pipeline_run_id == 1 and status == "finished"
