"""``webometrics runs --prune`` (issue 36): the job folders that interrupted crawls keep
to be resumed are removed on request, and a finished crawl leaves no empty crawls
folder behind."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from sqlalchemy import select

from store.models import CrawlRun
from store.session import session_scope
from tests.cli import run_webometrics
from tests.crawler.conftest import LocalWeb, html, migrated_engine
from tests.crawler.test_db_outage import wait_for_pages
from tests.webometrics.test_runs import A, runs_env, small_web, start_crawl


@pytest.mark.slow
def test_prune_removes_the_job_folders_of_abandoned_runs(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    engine = migrated_engine(db)
    with small_web() as web:
        proc = start_crawl(tmp_path, web, db)
        wait_for_pages(engine, proc, 5)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=90)
    with session_scope(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        jobdir = Path(run.settings["jobdir"])
    assert run.status == "interrupted" and jobdir.is_dir()
    assert jobdir.parent == tmp_path / "w-crawls"
    pruned = run_webometrics("runs", "--prune", db=db, env=runs_env(tmp_path))
    assert pruned.returncode == 0, pruned.stderr
    assert f"pruned the job folders of 1 crawl run(s) ({run.id};" in pruned.stdout
    assert not jobdir.exists() and not jobdir.parent.exists()
    with session_scope(engine) as s:
        settings = s.get(CrawlRun, run.id).settings
    assert settings["pruned"] and "resume" not in settings
    listed = run_webometrics("runs", db=db, env=runs_env(tmp_path))
    assert "resume: " not in listed.stdout
    # a crawl that finishes removes its folder and the then empty crawls folder
    pages = {f"{A}/": html("Home", "/a.html"), f"{A}/a.html": html("A")}
    with LocalWeb(pages) as small:
        done = run_webometrics(
            "crawl", "--universities", str(tmp_path / "u.toml"), "--direction", "outgoing",
            "--proxy", small.proxy_url, "--no-progress", db=db, env=runs_env(tmp_path),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (tmp_path / "w-crawls").exists()
    engine.dispose()
