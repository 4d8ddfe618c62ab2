"""Citing sources: Majestic and Ahrefs exports, URL lists, links in stored pages."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from core.exceptions import ConfigError
from crawler.sources import (
    UniversityDomains,
    dedupe,
    read_backlinks,
    read_url_list,
    stored_candidates,
)
from crawler.storage import CitingCandidate

REPO = Path(__file__).resolve().parents[2]
UNIS = [
    UniversityDomains(1, frozenset({"cornell.edu"})),
    UniversityDomains(2, frozenset({"utexas.edu"})),
    UniversityDomains(3, frozenset({"washington.edu"})),
    UniversityDomains(4, frozenset({"wisc.edu"})),
]


def test_majestic_export_of_the_test_web(testbed_dir: Path, testbed_manifest) -> None:
    """The test web's Majestic-style export (its web export's column names) gives every
    citing page of the manifest, each assigned to the university its target is in."""
    report = read_backlinks(testbed_dir / "citing" / "backlinks-majestic.csv", UNIS)
    got = {(c.university_id, c.url) for c in report.candidates}
    keys = {"cornell": 1, "texas": 2, "washington": 3, "wisconsin": 4}
    expected = {
        (keys[u["key"]], c["url"]) for u in testbed_manifest.universities for c in u["citing"]
    }
    assert got == expected
    assert {c.source for c in report.candidates} == {"majestic"}
    assert not report.skipped


def test_ahrefs_export_utf16_tab_separated(tmp_path: Path) -> None:
    text = (
        "Referring page title\tReferring page URL\tDomain rating\tTarget URL\tAnchor\tNofollow\n"
        "Blog\thttps://blog.example.org/post\t41\thttp://www.cs.wisc.edu/\tWisconsin CS\tfalse\n"
        "Other\thttps://x.example.net/\t12\thttps://elsewhere.org/\tx\tfalse\n"
        "Bad\tmailto:a@b.c\t12\thttp://www.cs.wisc.edu/\tx\tfalse\n"
    )
    path = tmp_path / "ahrefs.csv"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    report = read_backlinks(path, UNIS)
    assert report.candidates == [CitingCandidate("https://blog.example.org/post", 4, "ahrefs")]
    assert report.skipped == {
        "target outside the crawled universities": 1,
        "not an http(s) source URL": 1,
    }


def test_majestic_api_column_names(tmp_path: Path) -> None:
    path = tmp_path / "api.csv"
    path.write_text(
        "SourceURL;TargetURL;AnchorText;FlagNoFollow\nhttp://a.org/;http://cs.utexas.edu/;UT;0\n",
        encoding="utf-8",
    )
    assert read_backlinks(path, UNIS).candidates == [
        CitingCandidate("http://a.org/", 2, "majestic")
    ]


def test_unknown_columns_are_an_error_naming_the_accepted_ones(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("url,anchor\nhttp://a.org/,x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"Source URL.*Referring page URL"):
        read_backlinks(path, UNIS)
    with pytest.raises(ConfigError, match="not found"):
        read_backlinks(tmp_path / "missing.csv", UNIS)


def test_url_lists(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text(
        "# citing pages\n\nhttp://a.org/one\nhttp://b.org/two  washington.edu\n"
        "http://c.org/three http://www.cs.cornell.edu/people\nhttp://d.org/ nowhere.org\n",
        encoding="utf-8",
    )
    report = read_url_list(path, UNIS)
    got = [(c.url, c.university_id) for c in report.candidates]
    assert got == [
        *[("http://a.org/one", u.id) for u in UNIS],  # no target: every university
        ("http://b.org/two", 3),
        ("http://c.org/three", 1),
    ]
    assert report.skipped == {"target outside the crawled universities": 1}
    assert [c.university_id for c in read_url_list(path, UNIS, university_id=2).candidates][:4] == [
        2,
        3,
        1,
    ]
    bad = tmp_path / "bad.txt"
    bad.write_text("www.no-scheme.org\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.txt:1"):
        read_url_list(bad, UNIS)


def test_dedupe_keeps_the_export_claim() -> None:
    cands = [
        CitingCandidate("http://a.org/x", 1, "crawl"),
        CitingCandidate("HTTP://A.ORG/x", 1, "majestic"),
        CitingCandidate("http://a.org/x", 2, "urls"),
    ]
    assert sorted(dedupe(cands), key=lambda c: c.university_id) == [
        CitingCandidate("HTTP://A.ORG/x", 1, "majestic"),
        CitingCandidate("http://a.org/x", 2, "urls"),
    ]


def test_stored_pages_that_link_into_a_university(tmp_path: Path) -> None:
    from core.universities import parse_universities
    from crawler.items import LinkRecord, PageItem
    from crawler.storage import store_batch
    from store.models import CrawlRun
    from store.session import session_scope
    from store.universities import import_universities

    from .conftest import migrated_engine

    engine = migrated_engine(f"sqlite:///{tmp_path / 's.db'}")
    import_universities(engine, parse_universities(REPO / "testbed" / "universities.toml"))
    with session_scope(engine) as s:
        s.add(CrawlRun(kind="outgoing"))
    items = [
        PageItem(
            url="http://news.example.org/a",
            fingerprint=None,
            role="external",
            university_id=None,
            http_status=200,
            links=[LinkRecord("http://www.cs.wisc.edu/x", "UW", False)],
        ),
        PageItem(  # a university's own page linking to itself is not a citation
            url="http://www.cs.wisc.edu/y",
            fingerprint=None,
            role="university",
            university_id=4,
            http_status=200,
            links=[LinkRecord("http://www.cs.cornell.edu/", "Cornell", False)],
        ),
    ]
    store_batch(engine, 1, items)
    got = {(c.url, c.university_id, c.source) for c in stored_candidates(engine, UNIS).candidates}
    assert got == {
        ("http://news.example.org/a", 4, "crawl"),
        ("http://www.cs.wisc.edu/y", 1, "crawl"),
    }
