"""The trouble cases answer as the manifest specifies, wherever they are."""

from __future__ import annotations

import io
import time
from urllib.parse import urlsplit

import pytest
from protego import Protego

from testbed.build import BuildOptions
from testbed.links import page_links
from testbed.manifest import Manifest
from testbed.server import TestbedServer
from testbed.siteindex import url_key
from testbed.trouble import FORBIDDEN_URLS

CASES = (
    "redirect_chain", "redirect_loop", "not_found", "server_error", "slow", "cp1251", "koi8r",
    "broken_charset", "pdf", "jpeg", "oversized", "robots",
)  # fmt: skip
WHERE = ("university:cornell", "university:texas", "university:washington",
         "university:wisconsin", "external")  # fmt: skip


def test_every_case_exists_everywhere(manifest: Manifest):
    for where in WHERE:
        cases = {t["case"] for t in manifest.trouble(where=where)}
        assert set(CASES) <= cases, where
        assert ("trap" in cases) == (where != "external")
    assert manifest.trouble("https_redirect", "external")


def test_start_pages_link_to_the_trouble_and_the_forbidden_addresses(manifest: Manifest, fetch):
    for uni in manifest.universities:
        start = uni["start_urls"][0]
        got = fetch(start)
        assert got.status == 200 and b"<!-- testbed: injected links -->" in got.body
        targets = {url_key(link.target) for link in page_links(start, [], got.body)}
        wanted = {url_key(t["url"]) for t in manifest.trouble(where=f"university:{uni['key']}")}
        wanted |= {url_key(t["url"]) for t in manifest.trouble(where="external")}
        wanted |= {url_key(u) for u in FORBIDDEN_URLS}
        assert wanted <= targets
        nofollow = [
            link for link in uni["external_links"] if link["source"] == start and link["nofollow"]
        ]
        assert [link["target"] for link in nofollow] == [
            "http://trouble.testbed.example/nofollow.html"
        ]


@pytest.mark.parametrize("where", ["university:cornell", "external"])
def test_redirects(manifest: Manifest, fetch, where):
    (chain,) = manifest.trouble("redirect_chain", where)
    first = fetch(chain["url"])
    assert first.status == 301
    second = fetch(first.headers["location"])
    assert second.status == 302
    final = fetch(chain["url"], redirects=True)
    assert final.status == 200 and final.url == chain["expected"]["final_url"]
    (loop,) = manifest.trouble("redirect_loop", where)
    seen = []
    url = loop["url"]
    for _ in range(4):
        got = fetch(url)
        assert got.status == 302
        seen.append(url)
        url = got.headers["location"]
    assert seen[0] == seen[2] and seen[1] == seen[3] and seen[0] != seen[1]
    if where == "external":
        assert manifest.target(loop["url"])["error"] == "redirect_loop"
        assert manifest.target(chain["url"])["final_url"] == chain["expected"]["final_url"]


def test_https_through_connect(manifest: Manifest, fetch, server: TestbedServer):
    (case,) = manifest.trouble("https_redirect", "external")
    got = fetch(case["url"])
    assert got.status == 301 and got.headers["location"].startswith("https://")
    final = fetch(case["url"], redirects=True)
    assert final.status == 200 and final.url == case["expected"]["final_url"]
    tunnel = [e for e in server.requests if e["url"] == case["expected"]["final_url"]]
    assert tunnel and tunnel[-1]["via"] == "tunnel"


def test_errors_and_slow_page(manifest: Manifest, fetch):
    for where in ("university:texas", "external"):
        (nf,) = manifest.trouble("not_found", where)
        assert fetch(nf["url"]).status == 404
        (se,) = manifest.trouble("server_error", where)
        assert fetch(se["url"]).status == 500
    (slow,) = manifest.trouble("slow", "university:washington")
    started = time.monotonic()
    got = fetch(slow["url"])
    assert got.status == 200
    assert time.monotonic() - started >= slow["expected"]["delay"] == BuildOptions().slow_seconds


def test_unknown_hosts_are_dead(fetch):
    got = fetch("http://www.no-such-site-in-1997.com/")
    assert got.status == 502 and got.headers["x-testbed-error"] == "unknown-host"


def test_the_calendar_is_endless(manifest: Manifest, fetch):
    (trap,) = manifest.trouble("trap", "university:wisconsin")
    url = trap["url"]
    months = []
    for _ in range(30):
        got = fetch(url)
        assert got.status == 200
        months.append(url)
        nexts = [link.target for link in page_links(url, [], got.body) if "next" in link.anchor]
        assert len(nexts) == 1
        url = nexts[0]
    assert len(set(months)) == 30
    assert url.endswith("/1999/07/")
    # the manifest lists the trap's first page and never its later months
    pages = {url_key(p["url"]) for p in manifest.university("wisconsin")["pages"]}
    assert url_key(months[1]) not in pages


def test_russian_charsets(manifest: Manifest, fetch):
    (cp,) = manifest.trouble("cp1251", "university:cornell")
    got = fetch(cp["url"])
    assert got.headers["content-type"] == "text/html; charset=windows-1251"
    assert cp["expected"]["contains"] in got.body.decode("cp1251")
    (koi,) = manifest.trouble("koi8r", "university:cornell")
    got = fetch(koi["url"])
    assert got.headers["content-type"] == "text/html"  # declared in <meta> only
    assert b"charset=koi8-r" in got.body
    assert koi["expected"]["contains"] in got.body.decode("koi8_r")
    (broken,) = manifest.trouble("broken_charset", "external")
    got = fetch(broken["url"])
    assert got.headers["content-type"] == "text/html; charset=utf-8"
    with pytest.raises(UnicodeDecodeError):
        got.body.decode("utf-8")
    assert cp["expected"]["contains"] in got.body.decode("cp1251")


def test_binary_files(manifest: Manifest, fetch):
    from PIL import Image

    (pdf,) = manifest.trouble("pdf", "external")
    got = fetch(pdf["url"])
    assert got.headers["content-type"] == "application/pdf"
    assert got.body.startswith(b"%PDF-1.4") and got.body.rstrip().endswith(b"%%EOF")
    (jpg,) = manifest.trouble("jpeg", "university:texas")
    got = fetch(jpg["url"])
    assert got.headers["content-type"] == "image/jpeg" and got.body[:2] == b"\xff\xd8"
    assert Image.open(io.BytesIO(got.body)).size == (64, 48)


def test_oversized_page(manifest: Manifest, fetch):
    (big,) = manifest.trouble("oversized", "university:cornell")
    head = fetch(big["url"], method="HEAD")
    assert int(head.headers["content-length"]) == BuildOptions().oversized_bytes
    got = fetch(big["url"])
    assert len(got.body) == big["expected"]["bytes"] == BuildOptions().oversized_bytes
    assert got.body.rstrip().endswith(b"</html>")
    assert big["expected"]["error"] == "too_large"
    assert manifest.target("http://trouble.testbed.example/huge.html")["error"] == "too_large"


def test_robots_txt_disallows_the_private_pages(manifest: Manifest, fetch):
    for case in manifest.trouble("robots"):
        url = case["url"]
        parts = urlsplit(url)
        robots = fetch(f"{parts.scheme}://{parts.netloc}/robots.txt")
        assert robots.status == 200
        assert not Protego.parse(robots.body.decode()).can_fetch(url, "webometrics-crawler")
        assert url_key(url) in manifest.robots_disallowed
        assert fetch(url).status == 200  # served: only robots.txt keeps a crawler away
    for uni in manifest.universities:
        assert (
            f"Disallow: {uni['robots_disallowed_dirs'][1]}"
            in fetch(uni["start_urls"][0] + "robots.txt").body.decode()
        )


def test_forbidden_addresses_are_refused_and_logged(manifest: Manifest, testbed_dir, make_fetch):
    assert manifest.forbidden[: len(FORBIDDEN_URLS)] == list(FORBIDDEN_URLS)
    assert "http://www/" in manifest.forbidden  # a single-label host linked in 1997
    for url in manifest.forbidden:
        info = manifest.target(url)
        assert info["error"] == "forbidden_address" and not info["reachable"]
    with TestbedServer(testbed_dir) as srv:
        fetch = make_fetch(srv.proxy_url)
        for url in manifest.forbidden:
            got = fetch(url)
            assert got.status == 403 and got.headers["x-testbed-error"] == "forbidden-address"
        assert [url_key(e["url"]) for e in srv.requests] == [url_key(u) for u in manifest.forbidden]
