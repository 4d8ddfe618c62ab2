"""One rule of text bodies for the crawler and extraction (:func:`core.choices.is_text_media_type`).

A JSON answer was stored as text by the crawler and then refused as binary by extraction;
now both sides read the same rule. A real crawl of a local web that serves an HTML page,
plain text, an RSS feed, JSON and a PNG, then the extract stage: a page's body is stored
exactly when extraction would read it, and a page extraction would call binary keeps no
body and is never extracted.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from core.choices import is_text_media_type
from extract.page import extract_page
from store.models import Page
from store.session import session_scope
from tests.tiers import slow_fixture
from webometrics.stages import crawl, extract

from .conftest import Answer, LocalWeb, fast_settings, html, migrated_engine, write_universities

A = "http://www.alpha-university.edu"
API = "http://api.example-data.org"

BODIES: dict[str, tuple[str, bytes]] = {
    f"{API}/records.json": ("application/json", b'{"records": [{"name": "Physics"}]}'),
    f"{API}/notes.txt": ("text/plain; charset=utf-8", b"Plain notes about the physics lab."),
    f"{API}/feed.rss": (
        "application/rss+xml",
        b'<?xml version="1.0"?><rss><channel><title>Lab news</title></channel></rss>',
    ),
    f"{API}/logo.png": ("image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
}


def site() -> dict[str, Answer]:
    pages = {
        f"{A}/": html("Alpha University", *((url, url) for url in BODIES), (f"{API}/", "API")),
        f"{API}/": html("Data portal"),
    }
    for url, (ctype, body) in BODIES.items():
        pages[url] = Answer(body=body, headers={"Content-Type": ctype})
    return pages


@pytest.fixture(scope="module")
@slow_fixture
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Page]:
    tmp = tmp_path_factory.mktemp("media")
    unis = write_universities(
        tmp / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    engine = migrated_engine(f"sqlite:///{tmp / 'm.db'}")
    settings = fast_settings(depth=1, external_pages_per_domain=10, jobdir=str(tmp / "job"))
    with LocalWeb(site()) as web:
        crawl.run(
            engine,
            settings.replace(crawl={"proxy": web.proxy_url}),
            crawl.CrawlScope(universities_file=str(unis), direction="outgoing"),
        )
    in_process = settings.replace(extract={"workers": 0})
    extract.run(engine, in_process, extract.ExtractScope(documents=False))
    with session_scope(engine) as s:
        pages = {p.url: p for p in s.scalars(select(Page))}
        for p in pages.values():
            s.expunge(p)
    return pages


def test_every_answer_was_crawled(stored: dict[str, Page]) -> None:
    assert set(BODIES) <= set(stored)
    assert all(stored[url].http_status == 200 for url in BODIES)


@pytest.mark.parametrize("url", list(BODIES))
def test_the_crawler_and_extraction_read_one_rule(stored: dict[str, Page], url: str) -> None:
    page: Any = stored[url]
    ctype, body = BODIES[url]
    text = is_text_media_type(ctype)
    # the crawler keeps the body exactly when it is text
    assert (page.body is not None) is text
    # extraction calls binary exactly what the crawler did not keep
    assert (extract_page(body, url, content_type=ctype).status == "binary") is (not text)
    # none of them is an HTML page: stored, never extracted (nor refused as binary)
    assert page.extraction_status == "skipped"
    assert page.extraction_reason.startswith("not HTML")


def test_json_is_not_text_on_either_side(stored: dict[str, Page]) -> None:
    page = stored[f"{API}/records.json"]
    assert page.body is None and page.content_type == "application/json"
    result = extract_page(BODIES[f"{API}/records.json"][1], content_type="application/json")
    assert result.status == "binary"
    assert "not HTML or text" in (result.reason or "")


def test_html_pages_are_extracted(stored: dict[str, Page]) -> None:
    assert stored[f"{API}/"].extraction_status == "ok"
    assert stored[f"{A}/"].extraction_status == "ok"


@pytest.mark.parametrize(
    ("ctype", "text"),
    [
        ("text/html; charset=utf-8", True),
        ("TEXT/PLAIN", True),
        ("application/xhtml+xml", True),
        ("application/xml", True),
        ("application/atom+xml", True),
        ("image/svg+xml", True),
        (None, True),
        ("application/json", False),
        ("application/ld+json", False),
        ("application/pdf", False),
        ("image/jpeg", False),
    ],
)
def test_the_rule(ctype: str | None, text: bool) -> None:
    assert is_text_media_type(ctype) is text
    status = extract_page(b"<html><body><p>words</p></body></html>", content_type=ctype).status
    assert (status == "binary") is (not text)
