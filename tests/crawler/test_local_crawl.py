"""A whole crawl (both directions) of a small local web with every behaviour in view."""

from __future__ import annotations

import collections
import zlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.domains import normalize_url
from store.models import Citation, CrawlRun, Environment, Link, Page
from store.session import session_scope
from tests.tiers import slow_fixture
from webometrics.stages import crawl

from .conftest import Answer, fast_settings, html, migrated_engine, write_universities

A = "http://www.alpha-university.edu"
LABS = "http://labs.alpha-university.edu"
NEWS = "http://www.news-site.com"


def site() -> dict[str, Answer]:
    text = {"Content-Type": "text/plain"}
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{A}/from-sitemap.html</loc></url>"
        "<url><loc>http://elsewhere.org/not-ours.html</loc></url></urlset>"
    )
    return {
        f"{A}/robots.txt": Answer(
            body=f"User-agent: *\nDisallow: /private/\nSitemap: {A}/sitemap.xml\n".encode(),
            headers=text,
        ),
        f"{A}/sitemap.xml": Answer(body=sitemap.encode(), headers={"Content-Type": "text/xml"}),
        f"{A}/": html(
            "Alpha University",
            ("/a.html", "About"),
            (f"{LABS}/", "Labs"),
            ("/private/secret.html", "Secret"),
            (f"{NEWS}/story.html", "Story", "nofollow"),
            (f"{NEWS}/story.html#comments", "Comments"),
            ("http://169.254.169.254/latest/meta-data/", "Metadata"),
            ("ftp://ftp.alpha-university.edu/pub/", "FTP"),
            ("mailto:dean@alpha-university.edu", "Mail"),
            (f"{NEWS}/moved", "Moved story"),
            ("/slow.html", "Slow"),
            ("/big.html", "Big"),
            ("/missing.html", "Missing"),
            ("/to-metadata", "Cloud"),
            ("http:// www.broken-link.com/", "Broken 1997 link"),
            ("http://down-site.org/page.html", "Down"),
        ),
        f"{A}/a.html": html("About", ("/b.html", "B"), ("http://blog-host.net/post", "Blog post")),
        f"{A}/b.html": html("B", ("/c.html", "C"), ("http://beyond.org/", "Beyond")),
        f"{A}/c.html": html("C", ("http://too-deep.org/", "Too deep")),
        f"{LABS}/": html("Labs", (f"{NEWS}/story.html", "Lab story"), ("/lab2.html", "Lab 2")),
        f"{LABS}/lab2.html": html("Lab 2"),
        f"{A}/from-sitemap.html": html("Sitemap only", ("http://sitemap-only.org/", "Partner")),
        f"{A}/slow.html": Answer(body=b"<html>slow</html>", delay=3.0),
        f"{A}/big.html": Answer(body=b"<html>" + b"x" * 5000 + b"</html>"),
        f"{A}/to-metadata": Answer(302, headers={"Location": "http://169.254.169.254/"}),
        f"{A}/private/secret.html": html("Secret"),
        f"{NEWS}/story.html": html(
            "Story",
            ("/more1.html", "More 1"),
            ("/more2.html", "More 2"),
            ("/more3.html", "More 3"),
            (f"{A}/", "Alpha University"),
        ),
        f"{NEWS}/moved": Answer(301, headers={"Location": "/story-new.html"}),
        f"{NEWS}/story-new.html": html("New story"),
        f"{NEWS}/more1.html": html("More 1"),
        f"{NEWS}/more2.html": html("More 2"),
        f"{NEWS}/more3.html": html("More 3"),
        "http://blog-host.net/post": html("Post"),
        "http://beyond.org/": html("Beyond"),
        "http://sitemap-only.org/": html("Partner"),
        "http://citing-only.org/page": html("Citing", (f"{A}/a.html", "Alpha about page")),
        "http://gone.org/": Answer(404, b"gone"),
        "http://down-site.org/robots.txt": Answer(503, b"<html>maintenance</html>"),
        "http://down-site.org/page.html": html("Down"),
    }


@pytest.fixture(scope="module")
@slow_fixture
def crawled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.crawler.conftest import LocalWeb

    tmp = tmp_path_factory.mktemp("local")
    unis = write_universities(
        tmp / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    urls = tmp / "citing.txt"
    urls.write_text(
        f"{NEWS}/story.html\nhttp://blog-host.net/post\nhttp://citing-only.org/page\n"
        "http://gone.org/\n",
        encoding="utf-8",
    )
    engine = migrated_engine(f"sqlite:///{tmp / 'c.db'}")
    settings = fast_settings(
        depth=2,
        external_pages_per_domain=2,
        download_timeout=1.5,
        max_response_bytes=4096,
        warc_dir=str(tmp / "warc"),
        jobdir=str(tmp / "job"),
    )
    scope = crawl.CrawlScope(universities_file=str(unis), direction="both", urls=(str(urls),))
    with LocalWeb(site()) as web:
        stats = crawl.run(engine, settings.replace(crawl={"proxy": web.proxy_url}), scope)
        log = web.requests
    return {"engine": engine, "stats": stats, "log": log, "tmp": tmp}


def _pages(engine) -> dict[str, Page]:
    with session_scope(engine) as s:
        return {p.url: p for p in s.scalars(select(Page))}


@pytest.mark.slow
def test_what_was_fetched(crawled: dict[str, Any]) -> None:
    counts = collections.Counter(r["url"] for r in crawled["log"])
    fetched = set(counts)
    for url in (
        f"{A}/",
        f"{A}/a.html",
        f"{A}/b.html",  # depth 2
        f"{LABS}/",  # a subdomain belongs to the university
        f"{LABS}/lab2.html",
        f"{A}/sitemap.xml",
        f"{A}/from-sitemap.html",  # only in the sitemap robots.txt names
        f"{NEWS}/story.html",
        f"{NEWS}/moved",
        f"{NEWS}/story-new.html",  # the redirect is followed
        "http://blog-host.net/post",
        "http://beyond.org/",  # linked from a depth-2 page
        "http://sitemap-only.org/",
        "http://citing-only.org/page",  # citing phase
        "http://gone.org/",
    ):
        assert url in fetched, url
    for url in (
        f"{A}/c.html",  # depth 3
        "http://too-deep.org/",
        f"{A}/private/secret.html",  # robots.txt
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.169.254/",
        "http://elsewhere.org/not-ours.html",  # in the sitemap, not the university's
        "http://down-site.org/page.html",  # its robots.txt answers 503: RFC 9309 disallow
    ):
        assert url not in fetched, url
    more = [u for u in fetched if u.startswith(f"{NEWS}/more")]
    assert len(more) == 2  # external_pages_per_domain
    retried = {u for u, n in counts.items() if n > 1}
    # the timeout and the 503 robots.txt, retried once each; nothing else twice
    assert retried == {f"{A}/slow.html", "http://down-site.org/robots.txt"}
    assert counts[f"{A}/robots.txt"] == 1


def test_pages_depths_and_errors_with_reasons(crawled: dict[str, Any]) -> None:
    pages = _pages(crawled["engine"])
    assert pages[f"{A}/"].depth == 0 and pages[f"{A}/a.html"].depth == 1
    assert pages[f"{LABS}/lab2.html"].depth == 2
    assert pages[f"{A}/from-sitemap.html"].depth == 0  # a seed, like the start pages
    assert pages[f"{A}/"].role == "university" and pages[f"{NEWS}/story.html"].role == "external"
    assert pages["http://citing-only.org/page"].role == "citing"
    home = pages[f"{A}/"]
    assert b"Alpha University" in zlib.decompress(home.body)
    assert home.extraction_status == "pending" and home.charset == "utf-8"
    errors = {
        f"{A}/slow.html": "timeout: ",
        f"{A}/big.html": "too_large: ",
        f"{A}/missing.html": "http_404: Not Found",
        f"{A}/private/secret.html": "robots: disallowed by robots.txt",
        "http://169.254.169.254/latest/meta-data/": "unsafe: host 169.254.169.254 is an IP "
        "address (link-local)",
        "http://169.254.169.254/": "unsafe: ",  # the redirect's hop
        "http:// www.broken-link.com/": "bad_url: ",
        "http://down-site.org/page.html": "robots: robots.txt unreachable (HTTP 503); RFC 9309",
    }
    for url, start in errors.items():
        assert pages[url].fetch_error is not None and pages[url].fetch_error.startswith(start), (
            url,
            pages[url].fetch_error,
        )
    assert pages[f"{A}/to-metadata"].http_status == 302
    assert pages[f"{NEWS}/moved"].http_status == 301 and pages[f"{NEWS}/moved"].fetch_error is None
    assert "ftp://ftp.alpha-university.edu/pub/" not in pages


def test_links_with_anchor_nofollow_and_source(crawled: dict[str, Any]) -> None:
    with session_scope(crawled["engine"]) as s:
        rows = s.execute(
            select(Page.url, Link.target_url, Link.anchor, Link.nofollow, Link.external).join(
                Page, Page.id == Link.source_page_id
            )
        ).all()
    links = {(src, tgt): (anchor, nofollow) for src, tgt, anchor, nofollow, _ in rows}
    assert links[(f"{A}/", f"{NEWS}/story.html")] == ("Story", True)  # the first one wins
    assert links[(f"{A}/b.html", "http://beyond.org/")] == ("Beyond", False)
    assert links[(f"{A}/", "http://169.254.169.254/latest/meta-data/")] == ("Metadata", False)
    assert links[(f"{LABS}/", f"{NEWS}/story.html")] == ("Lab story", False)
    # an external page keeps only its links into the university (citing evidence)
    assert links[(f"{NEWS}/story.html", f"{A}/")] == ("Alpha University", False)
    assert not any(src == f"{NEWS}/story.html" and "more" in tgt for src, tgt in links)
    assert not any(tgt.startswith(("mailto:", "ftp:")) for _, tgt in links)
    internal = [(s_, t) for s_, t in links if s_.startswith(A) and t.startswith(A)]
    assert internal == []  # links inside the university are followed, not stored


def test_citations_environment_and_run_stats(crawled: dict[str, Any]) -> None:
    engine = crawled["engine"]
    with session_scope(engine) as s:
        cites = {c.citing_url: c for c in s.scalars(select(Citation))}
        env = {(e.domain, e.direction): e for e in s.scalars(select(Environment))}
        run = s.scalars(select(CrawlRun)).one()
    assert cites[f"{NEWS}/story.html"].status == "verified"
    assert cites[f"{NEWS}/story.html"].anchor == "Alpha University"
    assert cites["http://citing-only.org/page"].status == "verified"
    assert cites["http://citing-only.org/page"].target_url == f"{A}/a.html"
    assert cites["http://blog-host.net/post"].status == "missing"
    assert cites["http://gone.org/"].status == "error"
    # the story was fetched by the outgoing phase and not again by the citing phase
    assert sum(r["url"] == f"{NEWS}/story.html" for r in crawled["log"]) == 1
    assert env[("news-site.com", "outgoing")].link_count == 3  # home x2 targets, labs
    assert env[("news-site.com", "outgoing")].page_count == 4  # story, new story, 2 more (200)
    assert env[("news-site.com", "citing")].page_count == 1
    assert env[("citing-only.org", "citing")].link_count == 1
    assert ("alpha-university.edu", "outgoing") not in env
    stats = crawled["stats"]
    assert run.status == "finished" and run.kind == "both" and run.stats["pages"] == stats.pages
    assert stats.errors["robots"] == 2 and stats.errors["too_large"] == 1
    assert stats.errors["unsafe"] == 2 and stats.errors["timeout"] == 1
    assert stats.citations == {"error": 1, "missing": 1, "verified": 2}
    assert stats.bytes > 0 and stats.scrapy["outgoing"]["downloader/request_count"] > 20


def test_warc_output_reimports_as_the_same_pages(crawled: dict[str, Any], tmp_path: Path) -> None:
    from crawler.warc import import_warc, iter_records

    files = sorted((crawled["tmp"] / "warc").glob("*.warc.gz"))
    assert files
    records = [r for f in files for r in iter_records(f)]
    urls = {normalize_url(r["url"]) for r in records}
    pages = _pages(crawled["engine"])
    answered = {u for u, p in pages.items() if p.http_status is not None}
    assert answered <= urls  # every answer is in the archive (and robots.txt files too)
    home = pages[f"{A}/"]
    with open(home.warc_file, "rb") as fh:
        fh.seek(home.warc_offset)
        from warcio.archiveiterator import ArchiveIterator

        record = next(iter(ArchiveIterator(fh)))
        assert record.rec_headers.get_header("WARC-Target-URI") == f"{A}/"
        assert record.content_stream().read() == zlib.decompress(home.body)
    engine = migrated_engine(f"sqlite:///{tmp_path / 'again.db'}")
    import_warc(engine, files)
    again = _pages(engine)
    reimported = {u for u, p in again.items() if p.http_status == 200}
    original = {u for u, p in pages.items() if p.http_status == 200}
    assert reimported == original | {f"{A}/robots.txt"}  # robots.txt answers are archived too


def test_page_budget_per_university(postgres_url: str, tmp_path: Path, local_web) -> None:
    """On PostgreSQL: at most max_pages_per_university requests inside the university."""
    pages = {f"{A}/": html("Home", *[f"/p{i}.html" for i in range(10)])}
    pages.update({f"{A}/p{i}.html": html(f"P{i}") for i in range(10)})
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    engine = migrated_engine(postgres_url)
    with local_web(pages) as web:
        stats = crawl.run(
            engine,
            fast_settings(max_pages_per_university=4, depth=5, proxy=web.proxy_url),
            crawl.CrawlScope(universities_file=str(unis), direction="outgoing"),
        )
        fetched = [u for u in web.fetched() if not u.endswith("/robots.txt")]
    assert len(fetched) == 4 and fetched[0] == f"{A}/"
    assert stats.pages == 4 and stats.roles == {"university": 4}
    engine.dispose()


@pytest.mark.slow
def test_inline_extraction(tmp_path: Path, local_web, shared_data: Path) -> None:
    """With extract_inline the pages arrive extracted (text, language, shingles): a real
    article page of the scrapinghub-aeb corpus, checked against its gold main text."""
    import gzip
    import json

    import numpy as np

    aeb = shared_data / "scrapinghub-aeb"
    key = "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856"
    body = gzip.decompress((aeb / "html" / f"{key}.html.gz").read_bytes())
    gold = json.loads((aeb / "ground-truth.json").read_text(encoding="utf-8"))[key]
    pages = {f"{A}/": Answer(body=body, headers={"Content-Type": "text/html; charset=utf-8"})}
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    engine = migrated_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with local_web(pages) as web:
        crawl.run(
            engine,
            fast_settings(extract_inline=True, proxy=web.proxy_url),
            crawl.CrawlScope(universities_file=str(unis), direction="outgoing"),
        )
    page = _pages(engine)[f"{A}/"]
    assert page.extraction_status == "ok" and page.language == "en"
    assert "Gaming used to be so simple." in gold["articleBody"]
    assert "Gaming used to be so simple." in page.text
    from extract.shingles import shingle_hashes

    stored = np.frombuffer(page.shingles, dtype="<u8")
    assert len(stored) > 20
    assert np.array_equal(stored, shingle_hashes(page.text, k=1, language="en"))


def test_http_cache_serves_a_second_run(tmp_path: Path, local_web) -> None:
    """With [crawl] http_cache_dir (RFC 2616 policy) a second run gets still-fresh pages
    (by Last-Modified age) from the cache instead of the server."""
    modified = {"Content-Type": "text/html", "Last-Modified": "Thu, 14 Nov 1996 15:19:48 GMT"}
    pages = {
        f"{A}/": Answer(body=b"<a href='/a.html'>a</a> <a href='http://x.org/'>x</a>",
                        headers=modified),
        f"{A}/a.html": Answer(body=b"<p>a</p>", headers=modified),
        "http://x.org/": Answer(body=b"<p>x</p>", headers=modified),
    }  # fmt: skip
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    engine = migrated_engine(f"sqlite:///{tmp_path / 'c.db'}")
    settings = fast_settings(http_cache_dir=str(tmp_path / "cache"))
    scope = crawl.CrawlScope(universities_file=str(unis), direction="outgoing")
    with local_web(pages) as web:
        settings = settings.replace(crawl={"proxy": web.proxy_url})
        first = crawl.run(engine, settings, scope)
        asked = len(web.fetched())
        second = crawl.run(engine, settings, scope)
        again = [u for u in web.fetched()[asked:] if not u.endswith("/robots.txt")]
    assert first.pages == second.pages == 3
    assert again == []  # the three pages came from the cache
    assert second.scrapy["outgoing"]["httpcache/hit"] == 3


def test_a_second_run_revalidates_and_refetches_only_what_changed(
    tmp_path: Path, local_web
) -> None:
    """Pages that must be revalidated (``Cache-Control: no-cache`` with an ETag) are asked
    again with ``If-None-Match``: unchanged ones answer 304 and keep their stored text, a
    changed one is downloaded and stored anew."""
    from sqlalchemy import select

    from store.models import Page
    from store.session import session_scope

    def page(body: bytes, etag: str) -> Answer:
        headers = {"Content-Type": "text/html", "ETag": etag, "Cache-Control": "no-cache"}
        return Answer(body=body, headers=headers)

    pages = {
        f"{A}/": page(b"<a href='/a.html'>a</a> <a href='/b.html'>b</a>", '"root1"'),
        f"{A}/a.html": page(b"<p>a stays</p>", '"a1"'),
        f"{A}/b.html": page(b"<p>b before</p>", '"b1"'),
    }
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    engine = migrated_engine(f"sqlite:///{tmp_path / 'c.db'}")
    settings = fast_settings(http_cache_dir=str(tmp_path / "cache"))
    scope = crawl.CrawlScope(universities_file=str(unis), direction="outgoing")
    with local_web(pages) as web:
        settings = settings.replace(crawl={"proxy": web.proxy_url})
        crawl.run(engine, settings, scope)
        asked = len(web.requests)
        web.pages[f"{A}/b.html"] = page(b"<p>b after</p>", '"b2"')
        second = crawl.run(engine, settings, scope)
        again = {r["url"]: r["status"] for r in web.requests[asked:]}
    again.pop(f"{A}/robots.txt", None)
    assert again == {f"{A}/": 304, f"{A}/a.html": 304, f"{A}/b.html": 200}
    scrapy = second.scrapy["outgoing"]
    assert scrapy["httpcache/revalidate"] == 2  # the two 304 answers served from the cache
    with session_scope(engine) as s:
        bodies = {p.url: (p.http_status, zlib.decompress(p.body)) for p in s.scalars(select(Page))}
    assert bodies[f"{A}/a.html"] == (200, b"<p>a stays</p>")  # from the cache, as stored
    assert bodies[f"{A}/b.html"] == (200, b"<p>b after</p>")
