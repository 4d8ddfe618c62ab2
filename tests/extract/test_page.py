"""extract_page on real pages and on every kind of bad input: a status, never an exception."""

from __future__ import annotations

import gzip
import re
import threading
import time

import pytest

from core.settings import Settings
from core.shared_data import data_dir
from extract import ExtractOptions, PageExtraction, extract_page
from extract.evaluate import aeb_counts, iter_trafilatura_eval, scores_from_counts
from extract.page import STATUSES
from tests.quality_gates import floors

ALL_LANGUAGES = ExtractOptions(languages=())


def _check(result: PageExtraction) -> PageExtraction:
    assert isinstance(result, PageExtraction)
    assert result.status in STATUSES
    if result.status != "ok":
        assert result.reason
    return result


def _to_cp1251(html: bytes, declared: str | None) -> bytes:
    text = html.decode("utf-8")
    text = re.sub(r"<meta charset=\"?[\w-]+\"?\s*/?>", "", text, flags=re.I)
    if declared:
        text = text.replace("<head>", f'<head><meta charset="{declared}">', 1)
    return text.encode("cp1251", errors="xmlcharrefreplace")


def test_real_english_article(english_page):
    r = _check(extract_page(english_page.html, english_page.url))
    assert r.status == "ok" and r.language == "en" and r.language_score > 0.9
    assert r.title and r.charset == "utf-8"
    floor = floors("extraction_pages")["english_f1"]
    assert scores_from_counts([aeb_counts(english_page.gold, r.text)]).f1 > floor


def test_real_russian_article_in_utf8(russian_page):
    r = _check(extract_page(russian_page.html, russian_page.url))
    assert r.status == "ok" and r.language == "ru"
    floor = floors("extraction_pages")["russian_f1"]
    assert scores_from_counts([aeb_counts(russian_page.gold, r.text)]).f1 > floor


@pytest.mark.parametrize(
    ("declared_http", "declared_meta"),
    [
        (None, "windows-1251"),  # meta says the truth
        ("windows-1251", None),  # HTTP says the truth
        (None, None),  # nothing declared: detection
        ("utf-8", "utf-8"),  # both lie: bytes are windows-1251
        ("iso-8859-1", None),  # a server default that lies
    ],
)
def test_russian_windows_1251_page(russian_page, declared_http, declared_meta):
    body = _to_cp1251(russian_page.html, declared_meta)
    r = _check(extract_page(body, russian_page.url, charset=declared_http))
    assert r.status == "ok", r.reason
    assert r.charset == "windows-1251"
    assert r.language == "ru"
    reference = extract_page(russian_page.html, russian_page.url).text
    assert r.text == reference
    if declared_http in ("utf-8", "iso-8859-1") or declared_meta == "utf-8":
        assert r.reason and "declared" in r.reason  # the wrong declaration is reported


def test_russian_koi8r_page_declared_as_windows_1251(russian_page):
    text = russian_page.html.decode("utf-8")
    text = re.sub(r"<meta charset=\"?[\w-]+\"?\s*/?>", "", text, flags=re.I)
    body = text.encode("koi8_r", errors="xmlcharrefreplace")
    for declared in (None, "windows-1251", "koi8-r"):
        r = _check(extract_page(body, russian_page.url, charset=declared))
        assert r.status == "ok" and r.charset == "koi8-r" and r.language == "ru", declared


def test_utf8_declared_as_windows_1251_is_read_as_utf8(russian_page):
    r = _check(extract_page(russian_page.html, russian_page.url, charset="windows-1251"))
    assert r.status == "ok" and r.charset == "utf-8" and "valid UTF-8" in r.reason


def test_utf16_with_bom(english_page):
    body = english_page.html.decode("utf-8").encode("utf-16")
    r = _check(extract_page(body, english_page.url))
    assert r.status == "ok" and r.language == "en"


def test_empty_and_whitespace_only():
    for body in (b"", "", None):
        r = _check(extract_page(body))
        assert r.status == "empty" and "empty body" in r.reason
    for body in (b"   \n\t\r\n  ", " \u00a0 \n", b"\xef\xbb\xbf   "):
        r = _check(extract_page(body))
        assert r.status == "empty" and "whitespace" in r.reason


def test_markup_without_text_is_empty():
    r = _check(extract_page(b"<html><head><title></title></head><body><div></div></body></html>"))
    assert r.status == "empty" and "no main text" in r.reason


def test_binary_bodies():
    raw_gz = next((data_dir("scrapinghub-aeb") / "html").glob("*.html.gz")).read_bytes()
    r = _check(extract_page(raw_gz))
    assert r.status == "binary" and "gzip" in r.reason
    archive = (data_dir("trafilatura-eval") / "trafilatura-eval-html.tar.gz").read_bytes()[:65536]
    assert _check(extract_page(archive)).status == "binary"
    # real HTML with NUL bytes spliced in (a broken transfer)
    html = gzip.decompress(raw_gz)
    r = _check(extract_page(html[:500] + b"\x00" * 64 + html[500:]))
    assert r.status == "binary" and "NUL" in r.reason
    r = _check(extract_page(html, content_type="application/pdf"))
    assert r.status == "binary" and "application/pdf" in r.reason
    for magic in (b"%PDF-1.7\n", b"\x89PNG\r\n\x1a\n", b"PK\x03\x04", b"\xff\xd8\xff\xe0"):
        assert _check(extract_page(magic + html[:2000])).status == "binary"


def test_fifty_megabytes_is_refused_quickly(english_page):
    body = english_page.html * (50 * 1024 * 1024 // len(english_page.html) + 1)
    assert len(body) >= 50 * 1024 * 1024
    started = time.perf_counter()
    r = _check(extract_page(body, english_page.url))
    assert time.perf_counter() - started < 2.0
    assert r.status == "too-large" and "max_html_bytes" in r.reason
    assert _check(extract_page(body.decode("utf-8"))).status == "too-large"


def test_truncated_pages_still_extract(aeb_pages):
    for page in aeb_pages[:6]:
        for cut in (0.3, 0.6, 0.9):
            body = page.html[: int(len(page.html) * cut)]
            r = _check(extract_page(body, page.url, ALL_LANGUAGES))
            assert r.status in ("ok", "empty")
    # cut inside a multi-byte UTF-8 character of a Russian page
    ru = next(p for p in aeb_pages if "gto-normativy" in p.url)
    i = ru.html.index("Как".encode()) + 1
    r = _check(extract_page(ru.html[: i + 4000] + ru.html[i + 4001 : i + 30000], ru.url))
    assert r.status in ("ok", "empty")


def test_malformed_html(english_page):
    html = english_page.html.decode("utf-8")
    broken = [
        html.replace(">", "", 200),  # tags never closed
        re.sub(r"</(div|p|span)>", "", html),  # no end tags
        html.replace("<", "<<", 300),
        "<div>" * 20000 + "deep text " * 50,  # nesting beyond parser limits
        "<html><body><p>" + "x" * 100 + "<script>" + "y" * 10000,  # unterminated script
        "<?xml version='1.0' encoding='windows-1251'?>" + html,  # a lying XML declaration
        "plain text only, no markup at all. " * 30,
    ]
    for body in broken:
        r = _check(extract_page(body, english_page.url, ALL_LANGUAGES))
        assert r.status in ("ok", "empty", "error")
    r = _check(extract_page("plain text only, no markup at all. " * 30, None, ALL_LANGUAGES))
    assert r.status == "ok" and "plain text only" in r.text


def test_wrong_input_type_is_an_error_status():
    r = _check(extract_page(12345))  # type: ignore[arg-type]
    assert r.status == "error" and "int" in r.reason


def test_hard_time_cap(aeb_pages):
    big = max(aeb_pages, key=lambda p: len(p.html))
    opts = ExtractOptions(timeout_seconds=0.002, languages=())
    started = time.perf_counter()
    r = _check(extract_page(big.html, big.url, opts))
    assert r.status == "timeout" and "timeout_seconds" in r.reason
    assert time.perf_counter() - started < 1.0
    # the cap is removed afterwards: a normal extraction still works
    assert _check(extract_page(big.html, big.url, ALL_LANGUAGES)).status == "ok"


def test_time_cap_is_skipped_outside_the_main_thread(english_page):
    out: list[PageExtraction] = []
    opts = ExtractOptions(timeout_seconds=0.001, languages=())
    t = threading.Thread(target=lambda: out.append(extract_page(english_page.html, None, opts)))
    t.start()
    t.join()
    assert out[0].status == "ok"


def test_language_filter_and_confidence():
    german = next(
        p for p in iter_trafilatura_eval(limit=40) if p.url.endswith(".de/") or ".de/" in p.url
    )
    r = _check(extract_page(german.html, german.url))
    assert r.status == "language-filtered" and r.language == "de"
    assert "en, ru" in r.reason and r.text  # the text is kept for inspection
    assert 0 < r.language_score <= 1
    r = _check(extract_page(german.html, german.url, ExtractOptions(languages=("de",))))
    assert r.status == "ok" and r.language == "de"


def test_options_from_settings():
    s = Settings().replace(extract={"favor": "precision", "languages": ("ru",), "fallback": False})
    opts = ExtractOptions.from_settings(s.extract)
    assert opts.favor == "precision" and opts.languages == ("ru",) and not opts.fallback
    kwargs = opts.trafilatura_kwargs()
    assert kwargs["favor_precision"] and kwargs["fast"] and not kwargs["favor_recall"]
    with pytest.raises(ValueError, match="favor"):
        ExtractOptions(favor="fast")  # type: ignore[arg-type]
