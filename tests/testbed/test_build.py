"""The generator: determinism, and a manifest that states what the server serves."""

from __future__ import annotations

import csv
import hashlib
import html
import random
import re
import tarfile
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from protego import Protego

from core.domains import in_domains, registered_domain
from testbed import CATEGORIES
from testbed.build import BuildOptions
from testbed.links import page_links
from testbed.manifest import Manifest
from testbed.siteindex import SiteIndex, url_key
from testbed.sites import category_of
from webometrics.cli import main

UNIS = ("cornell", "texas", "washington", "wisconsin")


def _digest(folder: Path) -> dict[str, str]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name not in ("BUILD-OK",):
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.mark.slow
def test_build_is_deterministic_and_the_cli_builds(testbed_dir: Path, tmp_path: Path, capsys):
    """A second build (through the command line, in another folder) is byte-identical."""
    out = tmp_path / "web"
    assert main(["testbed", "build", "--out", str(out)]) == 0
    assert "test web written to" in capsys.readouterr().out
    first, second = _digest(testbed_dir), _digest(out)
    assert set(first) == set(second)
    assert len(first) >= 10
    assert first == second


def test_options_are_validated():
    from core.exceptions import ParameterError

    with pytest.raises(ParameterError, match="min_pages"):
        BuildOptions(min_pages=5, max_pages=2).validate()
    with pytest.raises(ParameterError, match="link_rot"):
        BuildOptions(link_rot=1.5).validate()


def test_universities_and_their_pages(manifest: Manifest, testbed_dir: Path):
    index = SiteIndex(testbed_dir)
    assert [u["key"] for u in manifest.universities] == list(UNIS)
    for uni in manifest.universities:
        assert uni["country"] == "USA" and uni["rank"] >= 1
        domains = set(uni["domains"])
        assert len(domains) == 1
        starts = {url_key(s) for s in uni["start_urls"]}
        pages = {url_key(p["url"]): p for p in uni["pages"]}
        for s in starts:
            assert pages[s]["depth"] == 0 and pages[s]["status"] == 200
        # the WebKB pages: hundreds per university, most reachable from the start page
        assert len(pages) > 700
        reachable = [p for p in pages.values() if p["depth"] is not None]
        assert len(reachable) / len(pages) > 0.8
        for p in uni["pages"]:
            assert in_domains(urlsplit(p["url"]).hostname or "", domains)
            assert index.get(p["url"]).status == p["status"]
        (sitemap,) = uni["sitemaps"]
        robots = index.get(urlsplit(sitemap)._replace(path="/robots.txt").geturl()).body
        assert f"Sitemap: {sitemap}".encode() in robots
        listed = re.findall(rb"<loc>(.*?)</loc>", index.get(sitemap).body)
        assert [u.decode() for u in listed] == uni["start_urls"]
    index.close()


def test_external_links_are_what_the_served_pages_hold(
    manifest: Manifest, testbed_dir: Path, fetch
):
    """Re-extract the links of pages fetched through the server: every external link of
    the page is in the manifest and nothing else (start pages and a seeded sample)."""
    rng = random.Random(7)
    for uni in manifest.universities:
        domains = set(uni["domains"])
        by_source: dict[str, set[str]] = {}
        for link in uni["external_links"]:
            by_source.setdefault(url_key(link["source"]), set()).add(link["target"])
            host = urlsplit(link["target"]).hostname or ""
            assert not in_domains(host, domains)
            assert link["target"].startswith(("http://", "https://"))
            assert "#" not in link["target"]
            assert link["target"] in manifest.data["targets"]
        html_pages = [
            p["url"]
            for p in uni["pages"]
            if p["status"] == 200 and (p["content_type"] or "").startswith("text/html")
        ]
        sample = [*uni["start_urls"], *rng.sample(html_pages, 40)]
        for url in sample:
            got = fetch(url)
            assert got.status == 200
            headers = [("Content-Type", got.headers.get("content-type", "text/html"))]
            links = page_links(url, headers, got.body)
            external = {
                link.target
                for link in links
                if not in_domains(urlsplit(link.target).hostname or "", domains)
            }
            assert external == by_source.get(url_key(url), set()), url
    assert sum(len(u["external_links"]) for u in manifest.universities) > 10_000


def test_targets_answer_as_the_manifest_says(manifest: Manifest, fetch):
    """A seeded sample of targets of every kind, fetched through the server."""
    rng = random.Random(11)
    by_error: dict[str | None, list[str]] = {}
    for url, info in manifest.data["targets"].items():
        by_error.setdefault(info["error"], []).append(url)
    assert {None, "http_404", "http_502", "robots", "forbidden_address"} <= set(by_error)
    for error, urls in sorted(by_error.items(), key=lambda x: str(x[0])):
        if error in ("robots", "forbidden_address", "redirect_loop", "too_large"):
            continue  # the trouble cases, checked one by one in test_trouble
        for url in rng.sample(urls, min(len(urls), 60 if error is None else 15)):
            info = manifest.target(url)
            got = fetch(url, redirects=True)
            assert got.status == info["final_status"], (url, info)
            if error is None:
                assert info["reachable"]
                assert url_key(got.url) == url_key(info["final_url"])
                assert len(got.body) == info["bytes"]
    reachable = sum(1 for t in manifest.data["targets"].values() if t["reachable"])
    assert reachable > 2000


def test_sites_categories_and_real_texts(manifest: Manifest, shared_data: Path, fetch):
    sites = manifest.data["sites"]
    kinds = Counter(s["kind"] for s in sites.values())
    assert kinds["generated"] == BuildOptions().max_sites
    assert kinds["citing"] == 4 * BuildOptions().citing_sites
    assert kinds["university"] >= 3 and kinds["corpus"] > 50
    generated = {d: s for d, s in sites.items() if s["kind"] in ("generated", "citing")}
    assert set(Counter(s["category"] for s in generated.values())) == set(CATEGORIES)
    assert {s["language"] for s in generated.values()} == {"en", "ru"}
    for d, s in generated.items():
        assert s["category"] in CATEGORIES and s["pages"], d
        if s["kind"] == "generated":
            assert s["category"] == category_of(d, seed=manifest.data["seed"])
    assert sites["yahoo.com"]["category"] == "search"
    assert sites["acm.org"]["category"] == "scientific"
    assert sites["washington.edu"]["kind"] == "university"
    # the page bodies are the real texts they name: check BBC pages against the corpus
    with tarfile.open(shared_data / "bbc-fulltext" / "bbc-fulltext.tar.gz") as tar:
        bbc = {
            m.name: tar.extractfile(m).read().decode("utf-8", "replace")
            for m in tar
            if m.isfile() and m.name.endswith(".txt")
        }
    checked = 0
    for s in generated.values():
        for page in s["pages"]:
            src = page["source"]
            if src.startswith("bbc/") and checked < 25:
                body = fetch(page["url"], redirects=True).body.decode("utf-8")
                lines = [line.strip() for line in bbc[src].splitlines() if line.strip()]
                headline, first = lines[0], lines[1]
                assert html.escape(headline) in body and html.escape(first[:80]) in body
                checked += 1
    assert checked == 25


def test_citing_pages_and_backlink_files(manifest: Manifest, testbed_dir: Path, fetch):
    for uni in manifest.universities:
        citing = uni["citing"]
        expected = Counter(c["expected"] for c in citing)
        assert expected["verified"] >= BuildOptions().citing_sites
        assert expected["missing"] == 1 and expected["gone"] == 1
        for c in citing:
            got = fetch(c["url"], redirects=True)
            if c["expected"] == "gone":
                assert got.status == 404
                continue
            assert got.status == 200
            links = page_links(got.url, [("Content-Type", "text/html")], got.body)
            has = any(url_key(link.target) == url_key(c["target"]) for link in links)
            assert has == (c["expected"] == "verified"), c
            assert in_domains(urlsplit(c["target"]).hostname or "", set(uni["domains"]))
        with open(testbed_dir / "citing" / f"{uni['key']}.majestic.csv", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert [(r["Source URL"], r["Target URL"], r["Anchor Text"]) for r in rows] == [
            (c["url"], c["target"], c["anchor"]) for c in citing
        ]
        urls = (testbed_dir / "citing" / f"{uni['key']}.txt").read_text().split()
        assert set(urls) == {c["url"] for c in citing}
    with open(testbed_dir / "citing" / "backlinks-majestic.csv", encoding="utf-8") as f:
        total = list(csv.DictReader(f))
    assert len(total) == sum(len(u["citing"]) for u in manifest.universities)


def test_robots_disallowed_urls_follow_the_served_robots_txt(manifest: Manifest, fetch):
    parsers: dict[str, Protego] = {}
    disallowed = manifest.data["robots_disallowed"]
    assert len(disallowed) > 50
    for url in disallowed:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in parsers:
            got = fetch(origin + "/robots.txt", redirects=True)
            assert got.status == 200, origin
            parsers[origin] = Protego.parse(got.body.decode())
        assert not parsers[origin].can_fetch(url, "webometrics-crawler"), url
    # each university disallows one real directory of its WebKB pages
    for uni in manifest.universities:
        real = [p for p in uni["pages"] if not p["robots_allowed"] and "/testbed/" not in p["url"]]
        assert len(real) >= 3
        assert all(p["depth"] is None for p in real)  # a polite crawl never gets there


def test_registered_domains_of_the_webkb_urls():
    assert registered_domain("www.cs.cornell.edu") == "cornell.edu"
    assert registered_domain("www.cs.utexas.edu") == "utexas.edu"
    assert registered_domain("www.cs.washington.edu") == "washington.edu"
    assert registered_domain("www.cs.wisc.edu") == "wisc.edu"
