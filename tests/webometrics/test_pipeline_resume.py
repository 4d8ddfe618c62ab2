"""The resume advice of a pipeline run works when pasted (issue 36, fault 5): it names
the database (``--db-url``, a password by its environment variable), the proxy, the
direction, and only the stages still to do: not a crawl that finished, not a stage the
run was not asked for.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from store.models import CrawlRun, Page, PipelineRun
from store.session import session_scope
from tests.cli import cli_env, run_webometrics, start_webometrics
from tests.crawler.conftest import migrated_engine, write_universities
from tests.crawler.test_db_outage import wait_for_pages
from tests.webometrics.test_runs import A, runs_env, small_web
from webometrics.liveness import resume_hint


@pytest.mark.slow
def test_the_resume_advice_of_an_interrupted_pipeline_run_works_pasted(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    engine = migrated_engine(db)
    write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    env = runs_env(tmp_path)
    with small_web() as web:
        proc = start_webometrics(
            "run", "--universities", "u.toml", "--stages", "crawl,extract", "--direction",
            "outgoing", "--proxy", web.proxy_url, db=db, cwd=tmp_path, env=env,
        )  # fmt: skip
        wait_for_pages(engine, proc, 5)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err[-3000:]
        listed = run_webometrics("runs", db=db, env=env)
        hint = next(
            line.split("resume: ", 1)[1]
            for line in listed.stdout.splitlines()
            if "resume: " in line and " run " in line
        )
        with session_scope(engine) as s:
            crawl_resume = s.scalars(select(CrawlRun)).one().settings["resume"]
        assert hint.startswith(crawl_resume + " && webometrics --db-url " + db)
        assert f"--proxy {web.proxy_url}" in hint and "--direction outgoing" in hint
        assert hint.endswith("--stages extract")  # the crawl resumed by its own command
        # pasted elsewhere (no ./webometrics.db there, no WEBOMETRICS_DB_URL)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        shell = cli_env(None, env)  # the console script of this interpreter on PATH
        shell["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{shell.get('PATH', '')}"
        done = subprocess.run(
            ["bash", "-c", hint], cwd=elsewhere, env=shell, capture_output=True,
            text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
    assert not (elsewhere / "webometrics.db").exists()
    with session_scope(engine) as s:
        assert s.scalars(select(CrawlRun)).one().status == "finished"
        runs = s.scalars(select(PipelineRun).order_by(PipelineRun.id)).all()
        assert [r.status for r in runs] == ["interrupted", "finished"]
        assert [st["name"] for st in runs[1].stages] == ["extract"]
        pending = s.scalars(select(Page).where(Page.extraction_status == "pending")).all()
        assert not pending
    engine.dispose()


def test_the_advice_names_only_the_stages_still_to_do() -> None:
    command = "webometrics --db-url sqlite:////d/w.db run --universities /d/u.toml"
    todo = ["crawl", "extract", "dedup"]
    crawl_stage = {
        "name": "crawl",
        "status": "running",
        "resume": {"command": command, "todo": todo},
    }
    finished_crawl = CrawlRun(status="finished", settings={"resume": "webometrics crawl ..."})
    row = PipelineRun(status="interrupted", stages=[crawl_stage])
    # killed after its crawl finished, before the stage was recorded finished
    assert resume_hint("pipeline", row, finished_crawl) == f"{command} --stages extract,dedup"
    # a run that never crawled
    stage = {"name": "dedup", "status": "failed",
             "resume": {"command": command, "todo": ["dedup", "cluster"]}}  # fmt: skip
    done = {"name": "extract", "status": "finished"}
    row = PipelineRun(status="failed", stages=[done, stage])
    assert resume_hint("pipeline", row, None) == f"{command} --stages dedup,cluster"
