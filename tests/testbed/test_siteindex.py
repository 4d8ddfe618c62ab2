"""The site index on its own: what it answers for stored, missing and forbidden URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from testbed.siteindex import IndexWriter, SiteIndex, is_forbidden_host, url_key
from testbed.sites import category_of, kind_of_path


@pytest.fixture
def index(tmp_path: Path):
    w = IndexWriter()
    w.add("http://www.Example.edu/a/", 200, [("Content-Type", "text/html")], b"<p>dir</p>")
    w.add("http://www.example.edu/b.html", 200, [("Content-Type", "text/html")], b"<p>b</p>",
          delay=1.5)  # fmt: skip
    huge = {"bytes": 100_000, "head": "<html>", "tail": "</html>", "filler": "x"}
    w.add("http://www.example.edu/huge", 200, [("Content-Type", "text/html")], generated=huge)
    w.add_prefix("http://www.example.edu/cal/", "calendar")
    w.write(tmp_path / "site")
    idx = SiteIndex(tmp_path)
    yield idx
    idx.close()


def test_url_keys():
    assert url_key("HTTP://A.B:80/x%7Ey?b=1&a=2#f") == "http://a.b/x~y?a=2&b=1"
    assert url_key("https://a.b:443") == "https://a.b/"
    assert url_key("http://a.b:8080/") == "http://a.b:8080/"
    assert url_key("http://[::1]:80/") == "http://[::1]/"
    with pytest.raises(ValueError):
        url_key("/relative")


def test_answers(index: SiteIndex):
    got = index.answer("http://WWW.EXAMPLE.EDU:80/a/")
    assert got.status == 200 and got.body == b"<p>dir</p>"
    moved = index.answer("http://www.example.edu/a")
    assert moved.status == 301 and moved.header("Location") == "http://www.example.edu/a/"
    assert index.answer("http://www.example.edu/b.html").delay == 1.5
    assert index.answer("http://www.example.edu/nothing").status == 404
    dead = index.answer("http://elsewhere.example.com/")
    assert dead.status == 502 and dead.header("X-Testbed-Error") == "unknown-host"
    for url in ("http://169.254.169.254/latest/", "http://10.1.2.3/", "http://localhost:8000/",
                "http://[::1]/", "http://127.0.0.1/"):  # fmt: skip
        assert index.answer(url).status == 403, url
    huge = index.answer("http://www.example.edu/huge")
    body = b"".join(huge.chunks(4096))
    assert len(body) == huge.length == 100_000
    assert body.startswith(b"<html>") and body.endswith(b"</html>")


def test_calendar_prefix(index: SiteIndex):
    page = index.answer("http://www.example.edu/cal/2026/12/")
    assert page.status == 200 and b"../../2027/01/" in page.body and b"../../2026/11/" in page.body
    assert index.answer("http://www.example.edu/cal/2026/13/").status == 404
    assert index.answer("http://www.example.edu/cal/whatever").status == 404


def test_forbidden_hosts():
    assert is_forbidden_host("192.168.0.10") and is_forbidden_host("fe80::1")
    assert is_forbidden_host("api.localhost") and is_forbidden_host("0.0.0.0")
    assert not is_forbidden_host("8.8.8.8") and not is_forbidden_host("trouble.testbed.example")


def test_categories_by_name_and_by_seeded_hash():
    assert category_of("cam.ac.uk", seed=1) == "universities"
    assert category_of("lycos.com", seed=1) == "search"
    assert category_of("geocities.com", seed=1) == "social"
    assert category_of("imdb.com", seed=1) == "media"
    assert category_of("lenta.ru", seed=1) == "news"
    assert category_of("ieee.org", seed=1) == "scientific"
    assert category_of("microsoft.com", seed=1) == "other"
    names = [f"site{i}.com" for i in range(200)]
    first = [category_of(n, seed=1) for n in names]
    assert first == [category_of(n, seed=1) for n in names]  # stable across calls
    assert first != [category_of(n, seed=2) for n in names]  # the seed matters
    assert len(set(first)) >= 5


def test_kinds_of_paths():
    assert kind_of_path("/papers/x.ps.Z") == "octet"
    assert kind_of_path("/x.PDF") == "pdf" and kind_of_path("/a/b.jpeg") == "jpeg"
    assert kind_of_path("/~user/") == "html" and kind_of_path("/cgi-bin/q?x=1") == "html"
