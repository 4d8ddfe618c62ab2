"""A crawl farm over the local test web (issue 9, "Distributed crawling").

The same crawl (the four WebKB universities, both directions, depth 2) is run twice on a
private PostgreSQL server: once by one crawler process, once by three processes sharing
a real redis-server -- two started by ``webometrics crawl --redis URL --processes 2``
and one by ``webometrics crawl-worker --redis URL`` in its own process, as on a second
machine. Every URL must be fetched exactly once by the farm, and both databases must
hold the same pages (status, role, depth, university, error kind), the same links and
the same citations. The farm's processes stop by themselves when the frontier is empty.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.domains import normalize_url
from store.models import Citation, Link, Page, University
from store.session import session_scope
from webometrics.stages import crawl

from .conftest import fast_settings, migrated_engine

REPO = Path(__file__).resolve().parents[2]
DEPTH = 2
EXTRA_PAGES = 2
UNIVERSITY_PAGES = 90  # fewer than some of the test web's universities have within DEPTH


def _settings() -> Any:
    # no retries: a retry is a second fetch; budgets that bind (extra pages of external
    # domains, pages per university): which requests fill a budget depends on the pages,
    # not on the order answers arrive in, in one process as in many;
    # and a generous timeout: with no retries, one answer slowed past the timeout on a
    # loaded machine would cut its whole subtree from one of the two crawls compared
    return fast_settings(
        depth=DEPTH,
        retry_times=0,
        download_timeout=60.0,
        external_pages_per_domain=EXTRA_PAGES,
        max_pages_per_university=UNIVERSITY_PAGES,
        concurrent_requests=16,
    )


def _snapshot(engine: Any) -> dict[str, Any]:
    with session_scope(engine) as s:
        names = {u.id: u.name for u in s.scalars(select(University))}
        pages = {
            p.url: (
                p.role,
                p.depth,
                p.http_status,
                (p.fetch_error or "").split(":", 1)[0],
                names.get(p.university_id) if p.university_id else None,
            )
            for p in s.scalars(select(Page))
        }
        links = set(
            s.execute(
                select(Page.url, Link.target_url, Link.anchor, Link.nofollow).join(
                    Page, Page.id == Link.source_page_id
                )
            ).all()
        )
        citations = {
            (names[c.university_id], c.citing_url): c.status for c in s.scalars(select(Citation))
        }
    return {"pages": pages, "links": links, "citations": citations}


def _page_fetches(log: list[dict[str, Any]]) -> collections.Counter[str]:
    """Requests per URL as sent (two spellings of one page are two requests to the
    server, in one process as in many; robots.txt files are counted apart)."""
    return collections.Counter(e["url"] for e in log if not e["url"].endswith("/robots.txt"))


def _by_page(fetches: collections.Counter[str]) -> collections.Counter[str]:
    pages: collections.Counter[str] = collections.Counter()
    for url, n in fetches.items():
        pages[normalize_url(url)] += n
    return pages


@pytest.fixture(scope="module")
def crawls(
    testbed_dir: Path,
    postgres_server: Any,
    redis_server: Any,
) -> dict[str, Any]:
    from testbed.server import TestbedServer

    universities = str(REPO / "testbed" / "universities.toml")
    one = migrated_engine(postgres_server.create_database())
    farm = migrated_engine(postgres_server.create_database())
    farm_url = farm.url.render_as_string(hide_password=False)
    scope = crawl.CrawlScope(
        universities_file=universities, direction="both", testbed_dir=str(testbed_dir)
    )
    with TestbedServer(testbed_dir) as server:
        settings = _settings().replace(crawl={"proxy": server.proxy_url})
        single = crawl.run(one, settings, scope)
        n_single = len(server.requests)
        env = dict(os.environ, WEBOMETRICS_DB_URL=farm_url)
        worker = subprocess.Popen(
            [sys.executable, "-m", "webometrics", "crawl-worker", "--redis", redis_server.url,
             "--wait", "60", "--no-progress"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            farm_settings = settings.replace(crawl={"redis_url": redis_server.url, "processes": 2})
            distributed = crawl.run(farm, farm_settings, scope)
            out, err = worker.communicate(timeout=120)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        log = server.requests
    return {
        "single": single,
        "farm": distributed,
        "worker": (worker.returncode, out, err),
        "single_fetches": _page_fetches(log[:n_single]),
        "farm_fetches": _page_fetches(log[n_single:]),
        "one": _snapshot(one),
        "many": _snapshot(farm),
        "redis": redis_server,
    }


def test_three_processes_took_part_and_stopped_by_themselves(crawls: dict[str, Any]) -> None:
    code, out, err = crawls["worker"]
    assert code == 0, err[-3000:]
    assert "pages stored by this worker" in out
    stored_by_worker = int(out.split(";")[-1].split()[0])
    assert stored_by_worker > 0  # the third process did part of the work
    # two phases x (two local processes + the worker's)
    assert crawls["farm"].farm_workers == 6
    assert crawls["farm"].processes == 2


def test_every_page_is_fetched_exactly_once(crawls: dict[str, Any]) -> None:
    fetches = crawls["farm_fetches"]
    assert len(fetches) > 500
    assert {url: n for url, n in fetches.items() if n > 1} == {}
    # the same pages as one process: a page linked under two spellings that Scrapy
    # fingerprints alike ("http://www.acm.org" and ".../") is asked for under the one
    # that arrives first, in one process as in many
    assert _by_page(fetches) == _by_page(crawls["single_fetches"])


def test_the_same_pages_are_stored(crawls: dict[str, Any]) -> None:
    one, many = crawls["one"]["pages"], crawls["many"]["pages"]
    assert len(one) > 500
    assert set(one) == set(many)
    assert {u: v for u, v in many.items() if one[u] != v} == {}


def test_both_budgets_were_filled(crawls: dict[str, Any]) -> None:
    """The crawls compared filled both budgets (a university's pages, a domain's extra
    pages), so which pages filled them had to be chosen the same way."""
    from core.domains import registered_domain

    pages = crawls["one"]["pages"]
    per_university = collections.Counter(  # pages of the university's own crawl
        v[4] for v in pages.values() if v[0] == "university" and v[1] is not None
    )
    assert max(per_university.values()) == UNIVERSITY_PAGES
    per_domain = collections.Counter(
        registered_domain(url) for url, v in pages.items() if v[0] == "external"
    )
    assert max(per_domain.values()) >= 1 + EXTRA_PAGES


def test_the_same_links_and_citations_are_stored(crawls: dict[str, Any]) -> None:
    one, many = crawls["one"], crawls["many"]
    assert len(one["links"]) > 500
    assert one["links"] == many["links"]
    assert one["citations"] and one["citations"] == many["citations"]
    assert crawls["single"].pages == crawls["farm"].pages


def test_the_run_keys_are_removed_from_redis(crawls: dict[str, Any]) -> None:
    from crawler.redis_frontier import connect

    server = connect(crawls["redis"].url)
    run_id = crawls["farm"].run_id
    assert list(server.scan_iter(match=f"webometrics:run:{run_id}:*")) == []
    assert server.get("webometrics:active") is None


@pytest.fixture(scope="module")
def killed(
    crawls: dict[str, Any], testbed_dir: Path, postgres_server: Any, redis_server: Any
) -> dict[str, Any]:
    """A farm of three processes (one local, two crawl-workers) where one worker is
    killed with SIGKILL mid-crawl: the others take back its requests after the lease."""
    import signal
    import threading
    import time

    from sqlalchemy import func

    from testbed.server import TestbedServer

    farm = migrated_engine(postgres_server.create_database())
    env = dict(os.environ, WEBOMETRICS_DB_URL=farm.url.render_as_string(hide_password=False))
    settings = _settings().replace(crawl={"worker_lease": 5.0})
    with TestbedServer(testbed_dir) as server:
        workers = [
            subprocess.Popen(
                [sys.executable, "-m", "webometrics", "crawl-worker", "--redis",
                 redis_server.url, "--wait", "60", "--no-progress"],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True,
            )
            for _ in range(2)
        ]  # fmt: skip
        outcome: dict[str, Any] = {}

        def coordinate() -> None:
            try:
                outcome["stats"] = crawl.run(
                    farm,
                    settings.replace(
                        crawl={
                            "proxy": server.proxy_url,
                            "redis_url": redis_server.url,
                            "processes": 1,
                        }
                    ),
                    crawl.CrawlScope(
                        universities_file=str(REPO / "testbed" / "universities.toml"),
                        direction="both",
                        testbed_dir=str(testbed_dir),
                    ),
                )
            except Exception as exc:  # reported by the test
                outcome["error"] = exc

        thread = threading.Thread(target=coordinate)
        thread.start()
        deadline = time.monotonic() + 120
        stored = 0
        while time.monotonic() < deadline and stored < 300:
            time.sleep(0.2)
            with session_scope(farm) as s:
                stored = s.scalar(select(func.count()).select_from(Page)) or 0
        os.killpg(workers[0].pid, signal.SIGKILL)  # the worker and its crawler process
        thread.join(300)
        survivor = workers[1].communicate(timeout=120)
        workers[0].wait()
    return {
        "outcome": outcome,
        "stored_at_kill": stored,
        "survivor": (workers[1].returncode, *survivor),
        "many": _snapshot(farm),
        "one": crawls["one"],
    }


def test_a_killed_process_loses_nothing(killed: dict[str, Any]) -> None:
    assert "error" not in killed["outcome"], killed["outcome"].get("error")
    assert killed["stored_at_kill"] >= 300
    code, _out, err = killed["survivor"]
    assert code == 0, err[-3000:]
    one, many = killed["one"], killed["many"]
    assert set(one["pages"]) == set(many["pages"])
    assert {u: v for u, v in many["pages"].items() if one["pages"][u] != v} == {}
    assert one["links"] == many["links"]
    assert one["citations"] == many["citations"]
