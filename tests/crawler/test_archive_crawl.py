"""Archived crawls of the test web (issue 35, part 1): Cornell's site as the test web's
Wayback Machine holds it in 2015 and in 2020, and as its Common Crawl holds it in spring
2015, then a live crawl of the same site, all in one database; checked against the
manifest's ``archive`` truth (:mod:`testbed.archive`)."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text

from core.domains import registered_domain
from store.models import CrawlRun, Environment, Page
from store.session import session_scope
from testbed.archive import HOSTS, old_links
from testbed.siteindex import url_key
from tests.tiers import slow_fixture
from webometrics.stages import crawl

from .conftest import fast_settings, migrated_engine, write_universities

HOME = "http://www.cs.cornell.edu/"
#: (archive, --from, --to, the truth's year)
CRAWLS = (
    ("wayback", "2015", "2015", "2015"),
    ("wayback", "2020", "2020", "2020"),
    ("commoncrawl", "2015-03", "2015-04", "2015"),
)


@pytest.fixture(scope="module")
@slow_fixture
def archived(tmp_path_factory: pytest.TempPathFactory, testbed_dir: Path) -> dict[str, Any]:
    from testbed.server import TestbedServer

    tmp = tmp_path_factory.mktemp("archive-crawl")
    url = f"sqlite:///{tmp / 'archive.db'}"
    engine = migrated_engine(url)
    unis = write_universities(
        tmp / "u.toml", {"name": "Cornell University", "domains": ["cornell.edu"], "home": [HOME]}
    )
    scope = crawl.CrawlScope(universities_file=str(unis))
    runs: dict[tuple[str, str], Any] = {}
    with TestbedServer(testbed_dir) as server:
        for archive, start, end, year in CRAWLS:
            settings = fast_settings(
                depth=1,
                max_pages_per_university=12,
                external_pages_per_domain=0,
                proxy=server.proxy_url,
                jobdir=str(tmp / f"job-{archive}-{start}"),
                archive=archive,
                archive_from=start,
                archive_to=end,
                archive_rate=100.0,
                archive_backoff=0.0,
            )
            runs[(archive, year)] = crawl.run(engine, settings, scope)
        archive_log = server.requests
        server.clear_log()
        live = crawl.run(
            engine,
            fast_settings(depth=0, external_pages_per_domain=0, proxy=server.proxy_url,
                          jobdir=str(tmp / "job-live")),
            scope,
        )  # fmt: skip
    return {"url": url, "engine": engine, "runs": runs, "live": live, "log": archive_log}


@pytest.fixture(scope="module")
def truth(testbed_manifest: Any) -> dict[str, dict[str, str]]:
    """The archives' captures by URL key: ``{url_key: {year: timestamp}}``."""
    caps = testbed_manifest.data["archive"]["captures"]
    return {url_key(u): years for u, years in caps.items()}


def _pages(engine: Any, run_id: int) -> list[Page]:
    with session_scope(engine) as s:
        pages = list(s.scalars(select(Page).where(Page.last_run_id == run_id)))
        s.expunge_all()
    return pages


def _stamp(page: Page) -> str:
    assert page.captured_at is not None
    return page.captured_at.strftime("%Y%m%d%H%M%S")


def test_two_dates_store_two_versions_with_their_capture_times(
    archived: dict[str, Any], truth: dict[str, dict[str, str]]
) -> None:
    with session_scope(archived["engine"]) as s:
        rows = s.execute(
            select(Page.url, Page.archive, Page.captured_at, Page.content_hash, Page.last_run_id)
            .where((Page.original_url == HOME) | (Page.url == HOME))
        ).all()  # fmt: skip
    by_run = {r.last_run_id: r for r in rows}
    runs = archived["runs"]
    v2015 = by_run[runs[("wayback", "2015")].run_id]
    v2020 = by_run[runs[("wayback", "2020")].run_id]
    live = by_run[archived["live"].run_id]
    assert len(rows) == 4  # three archived versions (two of them the same capture) + live
    assert v2015.captured_at.strftime("%Y%m%d%H%M%S") == truth[url_key(HOME)]["2015"]
    assert v2020.captured_at.strftime("%Y%m%d%H%M%S") == truth[url_key(HOME)]["2020"]
    assert v2015.content_hash != v2020.content_hash  # the 2015 version differs
    assert v2020.content_hash == live.content_hash  # the 2020 version is today's page
    assert live.archive is None and live.captured_at is None
    assert v2015.url == f"https://web.archive.org/web/{truth[url_key(HOME)]['2015']}id_/{HOME}"


@pytest.mark.parametrize(("archive", "year"), [(a, y) for a, _, _, y in CRAWLS])
def test_every_page_is_the_capture_the_archive_holds(
    archived: dict[str, Any], truth: dict[str, dict[str, str]], archive: str, year: str
) -> None:
    pages = _pages(archived["engine"], archived["runs"][(archive, year)].run_id)
    captured = [p for p in pages if p.capture_status == "captured"]
    missing = [p for p in pages if p.capture_status == "no_capture"]
    assert captured and missing
    for p in pages:
        assert p.archive == archive and p.original_url
        assert p.url != p.original_url
    for p in captured:
        assert _stamp(p) == truth[url_key(p.original_url)][year], p.original_url
    for p in missing:  # not archived that year (or a URL the test web never had)
        assert year not in truth.get(url_key(p.original_url), {}), p.original_url


def test_a_url_without_capture_is_recorded_as_such_not_as_an_error(
    archived: dict[str, Any],
) -> None:
    result = archived["runs"][("wayback", "2015")]
    missing = [
        p for p in _pages(archived["engine"], result.run_id) if p.capture_status == "no_capture"
    ]
    assert missing
    for p in missing:
        assert p.fetch_error is None and p.http_status is None and p.body is None
        assert p.extraction_status == "skipped"
        assert p.url.startswith("https://web.archive.org/web/20150101-20151231*/")
    assert not any("capture" in kind for kind in result.errors)


def test_the_years_link_to_partly_different_sites(archived: dict[str, Any]) -> None:
    runs = archived["runs"]
    with session_scope(archived["engine"]) as s:
        env = collections.defaultdict(set)
        for run_id, domain in s.execute(select(Environment.run_id, Environment.domain)):
            env[run_id].add(domain)
    gone = {registered_domain(u.split("/")[2]) for u in old_links(HOME)}
    in_2015 = env[runs[("wayback", "2015")].run_id]
    in_2020 = env[runs[("wayback", "2020")].run_id]
    assert gone <= in_2015  # sites of 2015 its home page linked to
    assert not gone & in_2020
    assert in_2015 & in_2020  # and most links stayed
    assert env[runs[("commoncrawl", "2015")].run_id] == in_2015


def test_common_crawl_reads_the_same_captures_by_byte_range(archived: dict[str, Any]) -> None:
    runs = archived["runs"]
    wayback = {
        p.original_url: p for p in _pages(archived["engine"], runs[("wayback", "2015")].run_id)
    }
    common = _pages(archived["engine"], runs[("commoncrawl", "2015")].run_id)
    both = [p for p in common if p.capture_status == "captured" and p.original_url in wayback]
    assert both
    for p in both:
        w = wayback[p.original_url]
        assert (p.captured_at, p.content_hash) == (w.captured_at, w.content_hash)
        assert p.url.startswith("https://index.commoncrawl.org/CC-MAIN-2015-14/")


def test_an_archived_crawl_asks_only_the_archives(archived: dict[str, Any]) -> None:
    hosts = collections.Counter(e["url"].split("/")[2] for e in archived["log"])
    assert set(hosts) <= HOSTS
    assert hosts["data.commoncrawl.org"] > 0  # WARC records by byte range
    ranges = [e for e in archived["log"] if "data.commoncrawl.org" in e["url"]]
    assert all(e["status"] == 206 for e in ranges)


def test_runs_record_their_collection_and_count_their_own_site_pages(
    archived: dict[str, Any],
) -> None:
    engine = archived["engine"]
    with session_scope(engine) as s:
        runs = {
            r.id: (r.archive, r.archive_from, r.archive_to) for r in s.scalars(select(CrawlRun))
        }
        site_pages = dict(
            s.execute(text("SELECT run_id, site_pages FROM v_university_table2")).all()
        )
        own = dict(
            s.execute(
                select(Page.last_run_id, text("COUNT(*)"))
                .where(Page.role == "university")
                .group_by(Page.last_run_id)
            ).all()
        )
    w2015 = archived["runs"][("wayback", "2015")].run_id
    assert runs[w2015][0] == "wayback" and runs[w2015][1].isoformat() == "2015-01-01"
    assert runs[archived["live"].run_id] == (None, None, None)
    # each run's site pages are its collection's only (the live run is the newest)
    for run_id, n in site_pages.items():
        assert n == own[run_id], run_id


def test_the_dashboard_compares_the_collections(
    archived: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import apptest

    at = apptest.open_page(archived["url"], monkeypatch, "views/overview.py")
    options = at.selectbox(key="overview-run-collection").options
    assert options[:2] == ["every collection", "live"]
    assert "wayback 2015-01-01..2015-12-31" in options
    names = [b.label for b in at.get("download_button")]
    compared = [t.value for t in at.table][1]  # Table 2, then the collections compared
    assert "table 2 by collection" in " ".join(names)
    assert "wayback 2020-01-01..2020-12-31" in compared.index.get_level_values("collection")
    at.selectbox(key="overview-run-collection").set_value("wayback 2015-01-01..2015-12-31").run()
    assert not at.exception, at.exception
    run_id = archived["runs"][("wayback", "2015")].run_id
    assert at.selectbox(key="overview-run").value == run_id
    assert at.selectbox(key="overview-run").options == [
        o for o in at.selectbox(key="overview-run").options if "wayback 2015" in o
    ]


def test_report_of_a_collection_names_it_and_compares_the_collections(
    archived: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv

    from store.analytics import collections as stored_collections
    from webometrics.cli import main

    db = ["--db-url", archived["url"]]
    labels = [c.collection for c in stored_collections(archived["engine"])]
    w2015 = "wayback 2015-01-01..2015-12-31"
    assert len(labels) == 4 and labels[0] == "live" and w2015 in labels
    out = tmp_path / "r2015"
    assert main([*db, "report", "--out", str(out), "--collection", w2015]) == 0
    run_2015 = archived["runs"][("wayback", "2015")].run_id
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert f"crawl run {run_2015}" in readme and f"Collection: {w2015}" in readme
    assert f"collection {w2015}" in (out / "table2.md").read_text(encoding="utf-8")
    with (out / "collections.csv").open(encoding="utf-8") as fh:
        compared = list(csv.DictReader(fh))
    assert {r["collection"] for r in compared} == set(labels)
    # each collection's row is Table 2 of its newest run: the 2015 row is this report's
    t2 = (out / "table2.csv").read_text(encoding="utf-8").splitlines()[1].split(",")
    row = next(r for r in compared if r["collection"] == w2015)
    assert int(row["run_id"]) == run_2015 and row["external_domains"] == t2[5]
    # the default is the live web's newest run
    live = tmp_path / "live"
    assert main([*db, "report", "--out", str(live)]) == 0
    assert f"crawl run {archived['live'].run_id}" in (live / "README.md").read_text("utf-8")
    # an unknown label, or a run of another collection: exit 2, the labels listed
    capsys.readouterr()
    assert main([*db, "report", "--out", str(tmp_path / "x"), "--collection", "2015"]) == 2
    err = capsys.readouterr().err
    assert all(repr(label) in err for label in labels), err
    wrong = ["--run", str(run_2015), "--collection", "live"]
    assert main([*db, "report", "--out", str(tmp_path / "y"), *wrong]) == 2
    assert "belongs to the collection" in capsys.readouterr().err


# once the Overview's run is over and it shows the collections compared: the page's text
COLLECTIONS_SHOWN = """(() => {
    const h = Array.from(document.querySelectorAll('h3'))
        .find(e => e.innerText.startsWith('Collections compared'));
    if (!h || document.querySelector('[data-testid="stStatusWidget"]')) return null;
    h.scrollIntoView({block: 'start'});
    const table = Array.from(document.querySelectorAll('[data-testid="stTable"]'))
        .find(t => h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
    return {
        table: table ? table.innerText : '',
        text: document.body.innerText,
        exceptions: document.querySelectorAll('[data-testid="stException"]').length,
    };
})()"""


# once the Rank page's run is over and it shows the collections side by side: the text of
# the section, from its heading to the next heading (the tables' cells included)
RANK_COLLECTIONS_SHOWN = """(() => {
    const h = Array.from(document.querySelectorAll('h3'))
        .find(e => e.innerText.startsWith('Collections compared'));
    if (!h || document.querySelector('[data-testid="stStatusWidget"]')) return null;
    const grids = Array.from(document.querySelectorAll('[data-testid="stDataFrame"]'))
        .filter(t => h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
    const cells = grids.map(g => Array.from(g.querySelectorAll('[role="gridcell"],th'))
        .map(c => c.innerText || c.textContent).join('|'));
    if (cells.length < 2 || !cells[0]) return null;
    h.scrollIntoView({block: 'start'});
    return {
        relation: cells[0],
        shares: cells[1],
        text: document.body.innerText,
        exceptions: document.querySelectorAll('[data-testid="stException"]').length,
    };
})()"""


@pytest.mark.requires_browser
@pytest.mark.timeout(240)
def test_the_overview_compares_the_collections_in_chromium(
    archived: dict[str, Any], tmp_path: Path
) -> None:
    """The Overview in a real browser on the archived crawls: the collections compared,
    naming every collection with its period; a screenshot of it
    (``$WEBOMETRICS_SCREENSHOTS`` keeps it, else the test's temporary folder)."""
    import base64
    import os
    import time

    from store.analytics import collections as stored_collections
    from tests.dashboard.test_browser import chromium, dashboard_server, free_port, wait_for

    labels = [c.collection for c in stored_collections(archived["engine"])]
    shots = Path(os.environ.get("WEBOMETRICS_SCREENSHOTS") or tmp_path)
    with (
        dashboard_server(archived["url"], free_port(), tmp_path / "dashboard.log") as address,
        chromium(tmp_path / "profile") as client,
    ):
        client.call("Page.enable")
        client.call("Page.navigate", url=address)
        shown = wait_for(client, COLLECTIONS_SHOWN, timeout=120)
        wait_for(client, "document.fonts.status === 'loaded'")
        time.sleep(1.0)
        shown = client.evaluate(COLLECTIONS_SHOWN)
        shot = client.call("Page.captureScreenshot", format="png")
        # the Rank page: the live web by default, the collections' rank relation side by side
        client.call("Page.navigate", url=address.rstrip("/") + "/ranks")
        ranks = wait_for(client, RANK_COLLECTIONS_SHOWN, timeout=120)
        time.sleep(1.0)
        ranks = client.evaluate(RANK_COLLECTIONS_SHOWN)
        rank_shot = client.call("Page.captureScreenshot", format="png")
    png = base64.b64decode(shot["data"])
    (shots / "archives-collections.png").write_bytes(png)
    rank_png = base64.b64decode(rank_shot["data"])
    (shots / "archives-ranks.png").write_bytes(rank_png)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert shown["exceptions"] == 0, shown["text"][:2000]
    section = shown["text"].split("Collections compared", 1)[1]
    # both archived years and the live web, each named with its period, in the table
    assert {"wayback 2015-01-01..2015-12-31", "wayback 2020-01-01..2020-12-31"} <= set(labels)
    for label in labels:
        assert label in shown["table"], shown["table"]
        run = next(
            c.newest_run_id for c in stored_collections(archived["engine"]) if c.collection == label
        )
        assert f"{label}: run {run}" in section, section[:2000]
    # the Rank page in the same browser: no exception, the picker on the live web, and
    # each collection with its period and newest run in both tables, the shares one row
    # per university and collection (five columns, however many collections)
    assert rank_png[:8] == b"\x89PNG\r\n\x1a\n" and len(rank_png) > 20_000
    assert ranks["exceptions"] == 0, ranks["text"][:2000]
    assert "Rank vs groups" in ranks["text"]
    for c in stored_collections(archived["engine"]):
        assert c.collection in ranks["relation"], ranks["relation"]
        assert str(c.newest_run_id) in ranks["relation"], ranks["relation"]
        assert f"|{c.collection}|{c.newest_run_id}|" in ranks["shares"], ranks["shares"]
    assert ranks["shares"].startswith("university|rank|collection|run|academic share|")


def test_the_rank_page_starts_on_the_live_web_and_puts_the_collections_side_by_side(
    archived: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from store.analytics import collections as stored_collections
    from tests import apptest

    at = apptest.open_page(archived["url"], monkeypatch, "views/ranks.py")
    assert at.selectbox(key="ranks-run-collection").value == "live"
    assert at.selectbox(key="ranks-run").value == archived["live"].run_id
    found = stored_collections(archived["engine"])
    frames = {tuple(df.value.columns): df.value for df in at.dataframe if "collection" in df.value}
    relation = next(v for k, v in frames.items() if "ρ" in k)
    assert list(relation["collection"]) == [c.collection for c in found]
    assert list(relation["run"]) == [c.newest_run_id for c in found]
    shares = next(df.value for df in at.dataframe if "academic share" in df.value)
    # one row per university and collection, not a column per collection (which
    # overflowed the page with four collections)
    assert list(shares.columns) == ["university", "rank", "collection", "run", "academic share"]
    assert len(shares) == shares["university"].nunique() * len(found)
    for university, rows in shares.groupby("university", sort=False):
        assert list(rows["collection"]) == [c.collection for c in found], university
        assert list(rows["run"]) == [c.newest_run_id for c in found], university
