"""Kill a crawl with SIGKILL in the middle, start it again: nothing stored is lost, nothing
is fetched twice, and the resumed crawl is as complete as an uninterrupted one.

"Fetched twice" is measured on the test web's own request log. The only requests a
resumed crawl may repeat are those that were on the wire when the process died (sent,
no answer yet: the frontier says "in flight"), and retries of 5xx answers that were
still queued.
"""

from __future__ import annotations

import collections
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from sqlalchemy import func, select

from core.domains import normalize_url
from crawler.frontier import IN_FLIGHT, RECEIVED
from store.models import CrawlRun, Link, Page, University
from store.session import session_scope

from .conftest import migrated_engine

REPO = Path(__file__).resolve().parents[2]
KILL_AFTER_PAGES = 120


def _command(db: str, proxy: str, jobdir: Path) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    env.update(
        WEBOMETRICS_DB_URL=db,
        WEBOMETRICS_CRAWL__DOWNLOAD_DELAY="0",
        WEBOMETRICS_CRAWL__AUTOTHROTTLE="false",
        WEBOMETRICS_CRAWL__RETRY_TIMES="1",
        WEBOMETRICS_CRAWL__FLUSH_SECONDS="0.5",
        WEBOMETRICS_CRAWL__BATCH_SIZE="40",
        WEBOMETRICS_CRAWL__DOWNLOAD_TIMEOUT="15",
    )
    cmd = [
        sys.executable, "-m", "webometrics", "crawl",
        "--universities", str(REPO / "testbed" / "universities.toml"),
        "--direction", "outgoing", "--proxy", proxy, "--jobdir", str(jobdir),
        "--depth", "1", "--no-progress",
    ]  # fmt: skip
    return cmd, env


def _stored(engine) -> dict[str, str | None]:
    with session_scope(engine) as s:
        return dict(s.execute(select(Page.url, Page.content_hash)).all())


@pytest.mark.slow
def test_sigkill_then_resume(tmp_path: Path, testbed_dir: Path, testbed_manifest) -> None:
    from testbed.server import TestbedServer

    db = f"sqlite:///{tmp_path / 'resume.db'}"
    engine = migrated_engine(db)
    jobdir = tmp_path / "job"
    with TestbedServer(testbed_dir) as server:
        cmd, env = _command(db, server.proxy_url, jobdir)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 180
        n = 0
        while time.monotonic() < deadline and proc.poll() is None:
            with session_scope(engine) as s:
                n = s.scalar(select(func.count()).select_from(Page))
            if n >= KILL_AFTER_PAGES:
                break
            time.sleep(0.1)
        assert proc.poll() is None, f"the crawl ended before the kill: {proc.stderr.read()}"
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children, "the crawl runs in a child process"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()
        # the crawl process dies with its parent (PR_SET_PDEATHSIG)
        _gone, alive = psutil.wait_procs(children, timeout=30)
        assert not alive
        first_log = server.requests
        server.clear_log()

        before = _stored(engine)
        frontier = sqlite3.connect(jobdir / "frontier.sqlite")
        in_flight = {
            normalize_url(u)
            for (u,) in frontier.execute("SELECT url FROM request WHERE state=?", (IN_FLIGHT,))
        }
        received = {
            normalize_url(u)
            for (u,) in frontier.execute("SELECT url FROM request WHERE state=?", (RECEIVED,))
        }
        robots_kept = {normalize_url(u) for (u,) in frontier.execute("SELECT url FROM robots")}
        frontier.close()
        with session_scope(engine) as s:
            run = s.scalars(select(CrawlRun)).one()
            assert run.status == "running"  # killed: nobody could record anything
        assert len(before) >= KILL_AFTER_PAGES

        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr[-3000:]
        second_log = server.requests

    after = _stored(engine)
    # 1. nothing stored before the kill is lost (nor changed)
    assert all(after.get(url) == digest for url, digest in before.items())
    # 2. nothing is fetched twice
    first = collections.Counter(normalize_url(e["url"]) for e in first_log)
    second = collections.Counter(normalize_url(e["url"]) for e in second_log)
    statuses = collections.defaultdict(set)
    for e in first_log + second_log:
        statuses[normalize_url(e["url"])].add(e["status"])
    repeated = set(first) & set(second)
    retried = {u for u in repeated if statuses[u] & {500, 502, 503, 504, 408, 429}}
    robots = {u for u in repeated if u.endswith("/robots.txt")}
    assert repeated - retried - robots <= in_flight, sorted(repeated - retried - robots - in_flight)
    assert robots.isdisjoint(robots_kept)  # stored robots.txt answers are replayed
    assert not (set(second) & set(before)) - retried - robots  # stored pages never again
    assert not (set(second) & received)  # answers received before the kill are replayed
    assert sum(second.values()) > 0 and sum(first.values()) > 0
    # 3. the resumed run is the same run, finished, and complete
    with session_scope(engine) as s:
        runs = s.scalars(select(CrawlRun)).all()
        assert len(runs) == 1 and runs[0].status == "finished" and runs[0].stats["resumed"]
        ids = {u.name: u.id for u in s.scalars(select(University))}
        links = {
            (uid, normalize_url(src), tgt)
            for uid, src, tgt in s.execute(
                select(Page.university_id, Page.url, Link.target_url).join(
                    Page, Page.id == Link.source_page_id
                )
            )
        }
    for uni in testbed_manifest.universities:
        for e in testbed_manifest.external_links(uni["key"], 1):
            key = (ids[uni["name"]], normalize_url(e["source"]), normalize_url(e["target"]))
            assert key in links, e


@pytest.mark.slow
def test_restart_replays_answers_and_failures_received_before_the_kill(
    tmp_path: Path, local_web
) -> None:
    """The moment between an outcome and its page's commit, made deterministic: a finished
    crawl's frontier is put back into the state a kill at that moment leaves (two requests
    'received': an answer and a timeout), the run marked interrupted; the restart stores
    both outcomes again without a single request for them."""
    import json

    from crawler.frontier import DONE, dumps
    from webometrics.stages import crawl

    from .conftest import Answer, fast_settings, html, write_universities

    a = "http://www.alpha-university.edu"
    pages = {
        f"{a}/": html("Home", "/ok.html", "/slow.html"),
        f"{a}/ok.html": html("OK"),
        f"{a}/slow.html": Answer(body=b"<p>slow</p>", delay=2.0),
    }
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{a}/"]},
    )
    engine = migrated_engine(f"sqlite:///{tmp_path / 'r.db'}")
    jobdir = tmp_path / "job"
    settings = fast_settings(download_timeout=1.0, retry_times=0, jobdir=str(jobdir))
    scope = crawl.CrawlScope(universities_file=str(unis), direction="outgoing")
    with local_web(pages) as web:
        settings = settings.replace(crawl={"proxy": web.proxy_url})
        crawl.run(engine, settings, scope)
        with session_scope(engine) as s:
            before = {p.url: (p.http_status, p.fetch_error) for p in s.scalars(select(Page))}
            run = s.scalars(select(CrawlRun)).one()
            run.status = "running"
        assert before[f"{a}/slow.html"][1].startswith("timeout: ")
        # the frontier as a kill right after the two outcomes leaves it
        db = sqlite3.connect(jobdir / "frontier.sqlite")
        ok_blob = db.execute(
            "SELECT response FROM request WHERE url=?", (f"{a}/ok.html",)
        ).fetchone()
        assert ok_blob == (None,)  # done: its stored answer was dropped
        from scrapy.http import HtmlResponse

        from crawler.middlewares import response_to_blob

        answer = HtmlResponse(url=f"{a}/ok.html", body=pages[f"{a}/ok.html"].body,
                              headers={"Content-Type": "text/html; charset=utf-8"})  # fmt: skip
        db.execute(
            "UPDATE request SET state=?, response=? WHERE url=?",
            (RECEIVED, response_to_blob(answer), f"{a}/ok.html"),
        )
        db.execute(
            "UPDATE request SET state=?, response=? WHERE url=?",
            (RECEIVED, dumps({"failure": before[f"{a}/slow.html"][1]}), f"{a}/slow.html"),
        )
        db.commit()
        db.close()
        state = json.loads((jobdir / "state.json").read_text())
        state["phases_done"] = []
        (jobdir / "state.json").write_text(json.dumps(state))
        asked = len(web.fetched())
        stats = crawl.run(engine, settings, scope)
        assert web.fetched()[asked:] == []  # nothing asked again, not even robots.txt
    assert stats.resumed and stats.scrapy["outgoing"]["webometrics/replayed"] == 2
    with session_scope(engine) as s:
        after = {p.url: (p.http_status, p.fetch_error) for p in s.scalars(select(Page))}
    assert after == before
    db = sqlite3.connect(jobdir / "frontier.sqlite")
    assert {state for (state,) in db.execute("SELECT state FROM request")} == {DONE}
    db.close()
