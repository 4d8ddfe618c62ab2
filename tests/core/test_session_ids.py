"""Session ids removed from URLs (core/session_ids.py), in the path and in the query."""

from __future__ import annotations

import pytest

from core.domains import normalize_url
from core.session_ids import strip_session_ids

TOKEN = "0A1B2C3D4E5F60718293A4B5C6D7E8F9"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"http://u.edu/a/;jsessionid={TOKEN}", "http://u.edu/a/"),
        (f"http://u.edu/a.jsp;JSESSIONID={TOKEN}?x=1", "http://u.edu/a.jsp?x=1"),
        (f"http://u.edu/a;phpsessid={TOKEN}/b", "http://u.edu/a/b"),
        (f"http://u.edu/p.php?PHPSESSID={TOKEN}", "http://u.edu/p.php"),
        (f"http://u.edu/p.php?id=4&PHPSESSID={TOKEN}&b=2", "http://u.edu/p.php?id=4&b=2"),
        (f"http://u.edu/n/?sid={TOKEN}", "http://u.edu/n/"),
        (f"http://u.edu/e/?sessionid={TOKEN}", "http://u.edu/e/"),
        (f"http://u.edu/x?ASPSESSIONIDQQGGQGPG={TOKEN}", "http://u.edu/x"),
        ("http://u.edu/x?CFID=123&CFTOKEN=456&y=1", "http://u.edu/x?y=1"),
        ("http://u.edu/(S(lit3py55t21z5v55vlm25s55))/default.aspx", "http://u.edu/default.aspx"),
    ],
)
def test_session_ids_are_removed(url: str, expected: str) -> None:
    assert strip_session_ids(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://u.edu/list?sid=3",  # a short sid is a section number, not a session
        "http://u.edu/a/b?session=summer&page=2",
        "http://u.edu/about/",
        "http://u.edu/sidney/sessions.html",
    ],
)
def test_other_urls_are_left_as_written(url: str) -> None:
    assert strip_session_ids(url) == url


def test_one_page_is_one_normalised_url() -> None:
    spellings = [
        f"http://U.EDU/news/;jsessionid={TOKEN}",
        f"http://u.edu/news/?sid={TOKEN[::-1]}",
        "http://u.edu:80/news/#top",
    ]
    assert {normalize_url(u) for u in spellings} == {"http://u.edu/news/"}


def test_link_targets_carry_no_session_id() -> None:
    from scrapy.http import HtmlResponse

    from crawler.links import page_links

    body = (
        f'<a href="/a/;jsessionid={TOKEN}">A</a><a href="b/?PHPSESSID={TOKEN}&q=1">B</a>'
        f'<a href="http://other.org/?sessionid={TOKEN}">C</a>'
    ).encode()
    response = HtmlResponse(f"http://u.edu/x/;jsessionid={TOKEN}", body=body, encoding="utf-8")
    assert [link.target for link in page_links(response)] == [
        "http://u.edu/a/",
        "http://u.edu/x/b/?q=1",
        "http://other.org/",
    ]
