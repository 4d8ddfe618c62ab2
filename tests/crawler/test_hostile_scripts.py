"""A hostile site's rate limits and script-built links, crawled for real (issue 35).

One small local web (:class:`tests.crawler.conftest.LocalWeb` on loopback): a page that
answers 429 with ``Retry-After: 1`` once, one that answers 503 once without the header,
links that stand only in scripts and JSON blocks, a menu that a linked script builds, and
a link that a script assembles from pieces (no literal holds it), which only a rendering
crawl finds. The crawl without rendering is run on one machine and in a crawl farm
(Redis + PostgreSQL); the rendering one drives Debian's headless Chromium.
"""

from __future__ import annotations

import collections
import zlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from store.models import Link, Page
from store.session import session_scope
from tests.tiers import slow_fixture
from webometrics.stages import crawl

from .conftest import Answer, LocalWeb, fast_settings, html, migrated_engine, write_universities

A = "http://www.alpha-university.edu"
WAIT = 2  # the Retry-After of the rate-limited page, seconds
EPS = 0.05  # the clock's grain between the crawler's and the server's threads, seconds

HOME = f"""<html><head><title>Alpha University</title>
<script type="application/ld+json">
{{"@context": "https://schema.org", "@type": "CollegeOrUniversity",
  "url": "{A}/", "logo": "{A}/logo.png",
  "sameAs": ["http://www.json-partner.org/alpha", "https://twitter.com/alpha"]}}
</script>
<script src="/js/menu.js"></script>
</head><body><h1>Alpha University</h1>
<p>{"Welcome to the university. " * 20}</p>
<ul><li><a href="/limited.html">Limited</a></li><li><a href="/flaky.html">Flaky</a></li>
<li><a href="/dom-menu.html">Departments</a></li></ul>
<div id="partners"></div>
<script>
var partners = ["http://www.script-partner.org/", "/js-only.html", "/js/helper.js",
                "text/html", "{{{{partner.url}}}}"];
</script>
<button onclick="location.href='http://www.onclick-partner.net/'">Go</button>
</body></html>"""

MENU_JS = """document.addEventListener('DOMContentLoaded', function () {
  var menu = [['Library', 'https://www.menu-partner.com/'], ['Staff', '/staff.html']];
});"""

DOM_MENU = f"""<html><head><title>Departments</title></head><body><h1>Departments</h1>
<p>{"Our departments. " * 30}</p><ul id="menu"></ul>
<script>
var host = 'dom' + '-partner';
var a = document.createElement('a');
a.href = 'http://www.' + host + '.com/';
a.textContent = 'DOM partner';
document.getElementById('menu').appendChild(a);
</script></body></html>"""


def site() -> dict[str, Any]:
    page = {"Content-Type": "text/html; charset=utf-8"}
    return {
        f"{A}/robots.txt": Answer(body=b"User-agent: *\nDisallow:\n"),
        f"{A}/": Answer(body=HOME.encode(), headers=page),
        f"{A}/js/menu.js": Answer(
            body=MENU_JS.encode(), headers={"Content-Type": "application/javascript"}
        ),
        f"{A}/limited.html": [
            Answer(429, b"slow down", headers={"Retry-After": str(WAIT)}),
            html("Limited page", ("http://www.limited-partner.org/", "Partner")),
        ],
        f"{A}/flaky.html": [Answer(503, b"busy"), html("Flaky page")],
        f"{A}/dom-menu.html": Answer(body=DOM_MENU.encode(), headers=page),
        f"{A}/js-only.html": html("Only in a script"),
        f"{A}/staff.html": html("Staff"),
    }


def _crawl(
    engine: Any, tmp: Path, pages: dict[str, Any] | None = None, **crawl_settings: Any
) -> dict[str, Any]:
    unis = write_universities(
        tmp / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    scope = crawl.CrawlScope(universities_file=str(unis), direction="outgoing")
    settings = fast_settings(depth=2, external_pages_per_domain=0, retry_backoff=0.5)
    with LocalWeb(site() if pages is None else pages) as web:
        stats = crawl.run(
            engine,
            settings.replace(crawl={"proxy": web.proxy_url, "jobdir": str(tmp / "job")}).replace(
                crawl=crawl_settings
            ),
            scope,
        )
        log = web.requests
    with session_scope(engine) as s:
        pages = {
            p.url: (p.http_status, p.body, p.fetch_error, p.depth) for p in s.scalars(select(Page))
        }
        links = {
            (src, t): f
            for src, t, f in s.execute(
                select(Page.url, Link.target_url, Link.found_in).join(
                    Page, Page.id == Link.source_page_id
                )
            )
        }
    return {"stats": stats, "log": log, "pages": pages, "links": links}


@pytest.fixture(scope="module")
@slow_fixture
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("scripts")
    return _crawl(migrated_engine(f"sqlite:///{tmp / 'c.db'}"), tmp)


def _fetches(log: list[dict[str, Any]]) -> collections.Counter[str]:
    return collections.Counter(r["url"] for r in log)


def _check_rate_limits(result: dict[str, Any], *, one_process: bool = True) -> None:
    """What is stored and the order the server saw, with no upper bound on a delay (a
    loaded machine only makes things later): the lower bounds below are causal (a retry
    leaves at least Retry-After after its 429 was answered, and the server logged the 429
    before answering it)."""
    log, pages = result["log"], result["pages"]
    fetches = _fetches(log)
    for path, body in (("/limited.html", b"Limited page"), ("/flaky.html", b"Flaky page")):
        assert fetches[f"{A}{path}"] == 2, path  # the error answer, then the page
        status, stored, error, _ = pages[f"{A}{path}"]
        assert (status, error) == (200, None), path
        assert body in zlib.decompress(stored), path
    limited = [r for r in log if r["url"] == f"{A}/limited.html"]
    assert limited[1]["time"] - limited[0]["time"] >= WAIT - EPS
    # the host was held: what reached it during the wait was only the first fetch of a
    # page of the 429 page's level or above (sent with it, before its answer); no retry
    # (the 503's asks for less than WAIT) and no page found later left before the wait
    # was over, however late the machine let anything arrive
    depth = {url: row[3] for url, row in pages.items()}
    level = depth[f"{A}/limited.html"]
    seen: set[str] = set()
    during = []
    for r in log:
        t = r["time"] - limited[0]["time"]
        if r["url"].startswith(A) and 0 < t < WAIT - EPS and r is not limited[0]:
            during.append((r["url"], r["url"] in seen, depth.get(r["url"])))
        seen.add(r["url"])
    assert [d for d in during if d[1] or d[2] is None or d[2] > level] == [], during
    # and slowed afterwards: its requests come apart (unpaced, they come all at once;
    # in a farm each process paces its own requests); the span, not each gap, so that
    # one answer the server logged late does not count as two requests close together
    host = [r["time"] - limited[0]["time"] for r in log if r["url"].startswith(A)]
    after = sorted(t for t in host if t >= WAIT - EPS)
    assert len(after) >= 3
    if not one_process:
        return
    assert after[-1] - after[0] >= 0.05 * (len(after) - 1), after


def test_429_and_503_pages_are_stored_once_with_their_content(plain: dict[str, Any]) -> None:
    _check_rate_limits(plain)
    assert plain["stats"].scrapy["outgoing"]["retry_after/header"] == 1


def test_links_of_scripts_and_json_blocks_are_followed_and_marked(plain: dict[str, Any]) -> None:
    links = plain["links"]
    assert links[(f"{A}/", "http://www.script-partner.org/")] == "script"
    assert links[(f"{A}/", "http://www.onclick-partner.net/")] == "script"
    assert links[(f"{A}/", "http://www.json-partner.org/alpha")] == "json"
    assert links[(f"{A}/js/menu.js", "https://www.menu-partner.com/")] == "script"
    assert links[(f"{A}/limited.html", "http://www.limited-partner.org/")] == "html"
    fetched = _fetches(plain["log"])
    # site paths of scripts are crawled; files of scripts, MIME types, templates are not
    assert fetched[f"{A}/js-only.html"] == fetched[f"{A}/staff.html"] == 1
    assert not any(u.endswith("/js/helper.js") or "partner.url" in u for u in fetched)
    assert "http://www.json-partner.org/alpha" in fetched  # a target, fetched once
    # the link a script assembles from pieces needs a browser
    assert not any("dom-partner" in target for _, target in links)


def test_without_script_links_only_html_links_are_kept(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tmp = tmp_path_factory.mktemp("noscripts")
    calm = {u: a[-1] if isinstance(a, list) else a for u, a in site().items()}  # no waits
    result = _crawl(migrated_engine(f"sqlite:///{tmp / 'c.db'}"), tmp, calm, script_links=False)
    assert set(result["links"].values()) == {"html"}
    assert f"{A}/js-only.html" not in result["pages"]


def test_rate_limits_are_honoured_in_a_crawl_farm(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: Any, redis_server: Any
) -> None:
    tmp = tmp_path_factory.mktemp("farm")
    engine = migrated_engine(postgres_server.create_database())
    result = _crawl(engine, tmp, redis_url=redis_server.url, processes=2)
    _check_rate_limits(result, one_process=False)  # the other process held the host too
    assert result["links"][(f"{A}/", "http://www.script-partner.org/")] == "script"


@pytest.mark.requires_browser
@pytest.mark.parametrize("mode", ["auto", "always"])
def test_a_menu_built_by_a_script_is_found_when_rendering(
    mode: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp(f"render-{mode}")
    result = _crawl(migrated_engine(f"sqlite:///{tmp / 'c.db'}"), tmp, render=mode)
    links = result["links"]
    assert links[(f"{A}/dom-menu.html", "http://www.dom-partner.com/")] == "rendered"
    # the rendered page is fetched once and stored with the server's HTML
    assert _fetches(result["log"])[f"{A}/dom-menu.html"] == 1
    status, body, _, _ = result["pages"][f"{A}/dom-menu.html"]
    assert status == 200 and b"createElement" in zlib.decompress(body)
    stats = result["stats"].scrapy["outgoing"]
    rendered = stats["render/pages"]
    html_pages = sum(1 for s, b, _, _ in result["pages"].values() if s == 200 and b)
    if mode == "auto":  # the plain pages are not rendered
        assert 0 < rendered < html_pages and stats["render/skipped"] > 0
    else:
        assert rendered >= 5


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("render", "sometimes", "'never', 'auto' or 'always'"),
        ("retry_after_max", -1, "greater than or equal to 0"),
        ("render_timeout", 0, "greater than 0"),
    ],
)
def test_bad_values_are_refused_with_a_clear_message(
    key: str, value: Any, says: str, tmp_path: Path
) -> None:
    from core.exceptions import ConfigError
    from core.settings import load_settings

    toml = tmp_path / "webometrics.toml"
    toml.write_text(f"[crawl]\n{key} = {value!r}\n".replace("'", '"'), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(toml, environ={})
    assert key in str(err.value) and says in str(err.value)


def test_a_missing_browser_is_refused_before_the_run(tmp_path: Path) -> None:
    from core.exceptions import ConfigError

    engine = migrated_engine(f"sqlite:///{tmp_path / 'c.db'}")
    unis = write_universities(
        tmp_path / "u.toml", {"name": "Alpha", "domains": ["alpha-university.edu"]}
    )
    settings = fast_settings(render="auto", render_browser=str(tmp_path / "no-chromium"))
    with pytest.raises(ConfigError, match="render_browser"):
        crawl.run(engine, settings, crawl.CrawlScope(universities_file=str(unis)))
