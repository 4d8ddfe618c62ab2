"""The corpus loaders of the linkage benchmark, on the shared data."""

from __future__ import annotations

from collections import Counter

import pytest

from corpora.bbc import TOPICS, load_bbc
from corpora.lenta import RUBRICS, load_lenta
from corpora.tgcontest_categories import CATEGORIES, load_tgcontest_categories
from corpora.webkb import (
    PAGE_TYPES,
    html_to_text,
    load_webkb,
    split_http,
    url_from_filename,
)
from tests.tiers import slow_fixture


def test_bbc_has_five_topics_and_reads_the_latin1_file() -> None:
    docs = load_bbc()
    assert Counter(d.label for d in docs) == {
        "business": 510,
        "entertainment": 386,
        "politics": 417,
        "sport": 511,
        "tech": 401,
    }
    assert set(TOPICS) == {d.label for d in docs}
    assert len({d.doc_id for d in docs}) == 2225
    odd = next(d for d in docs if d.doc_id == "sport/199")
    assert "£" in odd.text  # the one Latin-1 byte, read as a pound sign
    assert all(d.title and d.body for d in docs)


@pytest.fixture(scope="module")
@slow_fixture
def webkb() -> list:
    return load_webkb()


def test_webkb_page_types_without_http_headers(webkb: list) -> None:
    assert Counter(p.label for p in webkb) == {
        "student": 1641,
        "faculty": 1124,
        "course": 930,
        "project": 504,
        "department": 182,
        "staff": 137,
    }
    assert {p.label for p in webkb} == set(PAGE_TYPES)
    assert {p.university for p in webkb} == {"cornell", "texas", "washington", "wisconsin", "misc"}
    assert all(p.url.startswith(("http://", "ftp://", "file://")) for p in webkb)
    # no header line survives into the text, no tag either
    for p in webkb:
        head = p.text[:300].lower()
        assert "content-type:" not in head and "server: " not in head, p.url
        assert "<html" not in head and "<body" not in head, p.url
    assert sum(len(p.text) >= 50 for p in webkb) / len(webkb) >= 0.98
    cs100 = next(p for p in webkb if p.url.endswith("CS100A/home.html"))
    assert cs100.title.startswith("CS 100A") and "Syllabus" in cs100.text


def test_webkb_helpers() -> None:
    assert url_from_filename("http\uf03a^^a.edu\uf03a80^x^") == "http://a.edu:80/x/"
    headers, body = split_http(b"WWW Alert:  redirect\nDate: x\nLocation: y\n\n<html>b</html>")
    assert headers["location"] == "y" and body == b"<html>b</html>"
    # a file that starts with HTML keeps everything
    assert split_http(b"<HTML>\n\n<p>x</p>") == ({}, b"<HTML>\n\n<p>x</p>")
    # text before the blank line that is not a header is not stripped
    raw = b"Just some text\n\nmore"
    assert split_http(raw) == ({}, raw)
    title, text = html_to_text("<title>T</title><p>a\x00b</p><!-- c --><style>s</style>")
    assert (title, text) == ("T", "T\n\na b")
    assert html_to_text("   ") == ("", "")


def test_webkb_rejects_unknown_classes() -> None:
    with pytest.raises(ValueError, match="unknown WebKB classes"):
        load_webkb(("professor",))
    with pytest.raises(ValueError, match="extractor"):
        load_webkb(extractor="boilerpipe")


def test_lenta_rubrics() -> None:
    docs = load_lenta()
    counts = Counter(d.label for d in docs)
    assert counts["construction"] == 28 and counts["former-ussr"] == 102
    assert set(counts) == set(RUBRICS.values())
    assert len(docs) == 773 and all(d.text for d in docs)
    assert any("Лифт" in d.text or "лифт" in d.text for d in docs)


def test_tgcontest_categories_each_url_once() -> None:
    ru = load_tgcontest_categories("ru")
    en = load_tgcontest_categories("en")
    both = load_tgcontest_categories("all")
    assert (len(ru), len(en), len(both)) == (291, 151, 442)
    for docs in (ru, en):
        assert len({d.url for d in docs}) == len(docs)
        assert {d.label for d in docs} <= set(CATEGORIES)
    assert Counter(d.label for d in ru)["not_news"] == 38
    assert all(d.translation for d in en) and not any(d.translation for d in ru)
    assert {d.part for d in ru} == {"training", "exam", "honey"}
    with pytest.raises(ValueError, match="language"):
        load_tgcontest_categories("de")


def test_webkb_mangled_header_lines_are_stripped() -> None:
    raw = b"Date: Mon\nServer: NCSA/1.4.cp: No match.\n: text/html\n\n<html>x</html>"
    headers, body = split_http(raw)
    assert body == b"<html>x</html>" and headers["date"] == "Mon"
