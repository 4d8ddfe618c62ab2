"""``webometrics citing commoncrawl-index`` on real WARC records served by byte range.

The index files are written by :mod:`testbed.commoncrawl_index` from the real WARC files
of ``shared/data/warc-samples`` (a Common Crawl 2020 excerpt, a ClueWeb-style shop site,
warcio's example.com and httpbin captures); the records are fetched from a local HTTP
server on 127.0.0.1 that answers byte ranges, or from the sample folder itself. The
universities are fictions whose domains real sample pages link to: ``twitter.com``
(linked from 01spb.ru and one live-radsport.ch page) and ``iana.org`` (linked from
example.com).
"""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.exceptions import ConfigError
from crawler.commoncrawl.captures import Capture, CaptureSelector
from crawler.commoncrawl.fetch import RangeFetcher, parse_capture
from crawler.commoncrawl.index import NameMatcher, read_cdxj, read_parquet
from store.models import Citation, CrawlRun, Environment, Page, University
from store.session import session_scope
from testbed.commoncrawl_index import IndexEntry, cdxj_line, warc_entries, write_cdxj, write_parquet
from webometrics.cli import main

CC_2020 = "resiliparse/warcfile.warc.gz"
SHOP = "resiliparse/clueweb-quirk.warc.gz"
EXAMPLE = "warcio/example.warc.gz"
HTTPBIN = "warcio/post-test.warc.gz"

#: the pages chosen with --limit-per-domain 2 and whether they cite their university
EXPECTED = {
    "http://01spb.ru/company/": ("Twitter Institute", "verified"),
    "http://06.live-radsport.ch/fahrerstatistik_801/Anthony_Ravard.html": (
        "Twitter Institute",
        "verified",
    ),
    "http://06.live-radsport.ch/tippspiel/stats_140_petzi.html": ("Twitter Institute", "missing"),
    # the two newest of the shop's 29 pages (timestamps by position, see shop_entries)
    "http://www.uraharajuku.st/shopdetail/001034000008/001/034/order/": (
        "Twitter Institute",
        "missing",
    ),
    "http://www.uraharajuku.st/shopdetail/001034000010/order/": ("Twitter Institute", "missing"),
    "http://example.com/": ("IANA University", "verified"),
}


def shop_entries(samples: Path) -> list[IndexEntry]:
    """The shop's captures; its WARC-Date values are malformed (``2008-10-294T...``), so
    each gets a day of October 2008 by its position in the file (the last is newest)."""
    return [
        e.replace(timestamp=f"200810{i + 1:02d}120000")
        for i, e in enumerate(warc_entries(samples / SHOP, samples))
    ]


def main_entries(samples: Path) -> list[IndexEntry]:
    return [*warc_entries(samples / CC_2020, samples), *warc_entries(samples / EXAMPLE, samples)]


@pytest.fixture
def cdx_files(tmp_path: Path, warc_samples: Path) -> list[Path]:
    """Two CDXJ files as Common Crawl splits its index: cdx-00000.gz, cdx-00001.gz."""
    return [
        write_cdxj(tmp_path / "cdx-00000.gz", main_entries(warc_samples)),
        write_cdxj(tmp_path / "cdx-00001.gz", shop_entries(warc_samples)),
    ]


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """A short politeness delay and one retry (through the environment, as a user would)."""
    monkeypatch.setenv("WEBOMETRICS_CRAWL__DOWNLOAD_DELAY", "0.02")
    monkeypatch.setenv("WEBOMETRICS_CRAWL__RETRY_TIMES", "1")
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)


def cli(db_url: str, *args: str) -> int:
    return main(["--db-url", db_url, "citing", "commoncrawl-index", "--no-progress", *args])


def stored(engine: Any) -> dict[str, Any]:
    with session_scope(engine) as s:
        names = dict(s.execute(select(University.id, University.name)).all())
        citations = {
            c.citing_url: (names[c.university_id], c.status, c.source, c.page_id, c.target_url)
            for c in s.scalars(select(Citation))
        }
        pages = {p.url: p for p in s.scalars(select(Page))}
        runs = list(s.scalars(select(CrawlRun).where(CrawlRun.kind == "commoncrawl-index")))
        env = {
            (names[e.university_id], e.domain, e.page_count)
            for e in s.scalars(select(Environment))
            if e.run_id in {r.id for r in runs}
        }
    return {"citations": citations, "pages": pages, "runs": runs, "env": env}


# -- the fixture writer --------------------------------------------------------------------------
def test_fixture_index_points_at_the_real_records(warc_samples: Path) -> None:
    """Every entry's offset and length cut out exactly its record (the fixture is sound)."""
    entries = [*main_entries(warc_samples), *shop_entries(warc_samples)]
    assert len(entries) == 16 + 1 + 29
    for e in entries:
        data = (warc_samples / e.filename).read_bytes()[e.offset : e.offset + e.length]
        cap = Capture(e.url, e.timestamp, e.mime, e.mime_detected, e.status, e.digest,
                      e.filename, e.offset, e.length, "idx", "idx:1")  # fmt: skip
        rec = parse_capture(data, cap, e.filename)
        assert rec["url"] == e.url and rec["status"] == 200
    line = cdxj_line(entries[1])
    assert line.startswith("ru,01spb)/company/ 20200808183112 {")
    assert '"offset": "12685"' in line and '"length": "18808"' in line


# -- end to end ----------------------------------------------------------------------------------
def test_cdxj_over_http_stores_verified_citing_pages(
    seeded: tuple[str, Any],
    cdx_files: list[Path],
    range_server: Any,
    fast: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, engine = seeded
    monkeypatch.setenv("WEBOMETRICS_CRAWL__DOWNLOAD_DELAY", "0.1")
    code = cli(url, "--index", *map(str, cdx_files), "--warc-prefix", range_server.url,
               "--limit-per-domain", "2")  # fmt: skip
    assert code == 0
    got = stored(engine)
    assert {u: c[:2] for u, c in got["citations"].items()} == EXPECTED
    for page_url, (uni, status) in EXPECTED.items():
        _, _, source, page_id, target = got["citations"][page_url]
        page = got["pages"][page_url]
        assert page.id == page_id and page.role == "citing" and page.http_status == 200
        assert page.warc_file.startswith(range_server.url) and page.warc_offset is not None
        assert source.startswith("commoncrawl-index:")
        assert page.extraction_status == "pending"
        if status == "verified":
            assert target is not None
            assert ("twitter.com" if uni == "Twitter Institute" else "iana.org") in target
    (run,) = got["runs"]
    assert run.status == "finished"
    assert run.stats["commoncrawl_index"]["chosen"] == 6
    assert run.stats["citations"] == {"missing": 3, "verified": 3}
    # the run's citing environment: the domains with verified pages
    assert got["env"] == {
        ("Twitter Institute", "01spb.ru", 1),
        ("Twitter Institute", "live-radsport.ch", 1),
        ("IANA University", "example.com", 1),
    }
    # one polite byte-range request per chosen capture, nothing else fetched
    requests = range_server.requests
    assert len(requests) == 6
    assert all(r["range"].startswith("bytes=") for r in requests)
    assert all(r["agent"].startswith("webometrics-crawler/") for r in requests)
    times = sorted(r["time"] for r in requests)
    assert (
        min(b - a for a, b in itertools.pairwise(times)) >= 0.05
    )  # [crawl] download_delay, less the jitter
    offsets = {(r["path"], r["range"]) for r in requests}
    assert ("resiliparse/warcfile.warc.gz", "bytes=12685-31492") in offsets


def test_parquet_index_from_a_local_folder(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, fast: None
) -> None:
    """The columnar index (read with DuckDB) and a local WARC folder give the same pages."""
    url, engine = seeded
    part = write_parquet(
        tmp_path / "part-00000.parquet", [*main_entries(warc_samples), *shop_entries(warc_samples)]
    )
    code = cli(url, "--index", str(part), "--warc-prefix", str(warc_samples),
               "--limit-per-domain", "2")  # fmt: skip
    assert code == 0
    got = stored(engine)
    assert {u: c[:2] for u, c in got["citations"].items()} == EXPECTED
    page = got["pages"]["http://01spb.ru/company/"]
    assert page.warc_file == str(warc_samples / CC_2020) and page.warc_offset == 12685


def test_limit_newest_and_one_capture_per_url(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, range_server: Any, fast: None
) -> None:
    url, engine = seeded
    entries = shop_entries(warc_samples)
    # a later capture of the oldest page: it becomes the newest URL, and counts once
    again = entries[0].replace(timestamp="20081101120000")
    index = write_cdxj(tmp_path / "cdx.gz", [*entries, again])
    assert cli(url, "--index", str(index), "--warc-prefix", range_server.url,
               "--limit-per-domain", "3", "--university", "Twitter Institute") == 0  # fmt: skip
    got = stored(engine)
    assert sorted(got["citations"]) == sorted([entries[0].url, entries[-1].url, entries[-2].url])
    assert len(range_server.requests) == 3


def test_newest_capture_of_a_url_is_the_one_fetched(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, range_server: Any
) -> None:
    """httpbin.org/post was captured twice (two real records): the later one is stored."""
    from core.settings import Settings
    from crawler.commoncrawl.fetch import FetchPolicy
    from webometrics.stages.citing_index import IndexScope, run

    _, engine = seeded
    entries = list(warc_entries(warc_samples / HTTPBIN, warc_samples))
    posts = [e for e in entries if e.url == "http://httpbin.org/post"]
    assert len(posts) == 2 and posts[0].timestamp < posts[1].timestamp
    index = write_cdxj(tmp_path / "cdx.gz", entries)
    settings = Settings().replace(crawl={"download_delay": 0.0})
    assert FetchPolicy.from_settings(settings).delay == 0.0
    result = run(
        engine,
        settings,
        IndexScope(
            index_files=(str(index),),
            warc_prefix=range_server.url,
            limit_per_domain=5,
            domains=("httpbin.org",),
            mime_types=("application/json",),
        ),
    )
    assert result.chosen == 2  # /post and /post?foo=bar
    page = stored(engine)["pages"]["http://httpbin.org/post"]
    assert page.warc_offset == posts[1].offset
    assert page.fetched_at.strftime("%Y%m%d%H%M%S") == posts[1].timestamp


def test_only_html_captures_that_answered_200_are_chosen(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, range_server: Any, fast: None
) -> None:
    url, engine = seeded
    entries = shop_entries(warc_samples)
    newest = entries[-1]
    # newer index lines that must be passed over: a redirect, a 404, a PDF, a revisit
    others = [
        newest.replace(url="http://www.uraharajuku.st/moved", status=301,
                       timestamp="20090101000000"),
        newest.replace(url="http://www.uraharajuku.st/gone", status=404,
                       timestamp="20090102000000"),
        newest.replace(url="http://www.uraharajuku.st/a.pdf", mime="application/pdf",
                       mime_detected="application/pdf", timestamp="20090103000000"),
        newest.replace(url="http://www.uraharajuku.st/again", mime="warc/revisit",
                       mime_detected="warc/revisit", timestamp="20090104000000"),
    ]  # fmt: skip
    index = write_cdxj(tmp_path / "cdx.gz", [*entries, *others])
    assert cli(url, "--index", str(index), "--warc-prefix", range_server.url,
               "--limit-per-domain", "1", "--domain", "uraharajuku.st") == 0  # fmt: skip
    got = stored(engine)
    assert sorted(got["citations"]) == [newest.url]
    with session_scope(engine) as s:  # --domain: a candidate for every stored university
        statuses = s.execute(select(Citation.university_id, Citation.status)).all()
    assert sorted(statuses) == [(1, "missing"), (2, "missing")]
    assert len(range_server.requests) == 1


def test_host_names_and_subdomains(warc_samples: Path, tmp_path: Path) -> None:
    """A stored host matches itself and its subdomains only; SURT and URL agree."""
    index = write_cdxj(tmp_path / "cdx", main_entries(warc_samples), compress=False)
    found = list(read_cdxj(index, NameMatcher(["06.live-radsport.ch", "jxtdw.com"])))
    assert sorted((c.name, c.url) for c in found) == [
        ("06.live-radsport.ch", "http://06.live-radsport.ch/fahrerstatistik_801/Anthony_Ravard.html"),
        ("06.live-radsport.ch", "http://06.live-radsport.ch/tippspiel/stats_140_petzi.html"),
        ("jxtdw.com", "http://0760.jxtdw.com/area/sanxiang/"),
    ]  # fmt: skip
    parquet = write_parquet(tmp_path / "p.parquet", main_entries(warc_samples))
    for chunk in (500, 1):  # one scan for both domains, one scan each
        again = list(
            read_parquet(parquet, NameMatcher(["06.live-radsport.ch", "jxtdw.com"]), chunk=chunk)
        )
        assert sorted((c.url, c.offset, c.length, c.timestamp) for c in again) == sorted(
            (c.url, c.offset, c.length, c.timestamp) for c in found
        )


def test_selector_keeps_memory_bounded() -> None:
    sel = CaptureSelector(limit=3)
    for i in range(1000):
        sel.add(Capture(f"http://a.org/{i % 100}", f"2020{i:010d}", "text/html", None, 200,
                        None, "f", i, 1, "idx", f"idx:{i}", "a.org"))  # fmt: skip
        assert len(sel._kept["a.org"]) <= 6
    assert [c.url for c in sel.chosen()["a.org"]] == [f"http://a.org/{i}" for i in (99, 98, 97)]


# -- politeness ----------------------------------------------------------------------------------
def test_a_busy_server_is_retried(
    seeded: tuple[str, Any], cdx_files: list[Path], range_server: Any, fast: None
) -> None:
    url, engine = seeded
    range_server.fail(1)  # one 503, then answers
    assert cli(url, "--index", str(cdx_files[0]), "--warc-prefix", range_server.url,
               "--domain", "example.com") == 0  # fmt: skip
    (run,) = stored(engine)["runs"]
    assert run.stats["commoncrawl_index"]["retried"] == 1
    assert len(range_server.requests) == 2


def test_a_server_that_keeps_failing_is_a_failed_run(
    seeded: tuple[str, Any], cdx_files: list[Path], range_server: Any, fast: None, capsys: Any
) -> None:
    url, engine = seeded
    range_server.fail(10)
    assert cli(url, "--index", str(cdx_files[0]), "--warc-prefix", range_server.url,
               "--domain", "example.com") == 1  # fmt: skip
    assert "failed after 2 attempt(s): HTTP 503" in capsys.readouterr().err
    got = stored(engine)
    assert got["runs"][0].status == "failed" and not got["pages"]


# -- bad input -----------------------------------------------------------------------------------
def _bad(url: str, engine: Any, capsys: Any, *args: str) -> str:
    assert cli(url, *args) == 2
    err = capsys.readouterr().err
    got = stored(engine)
    assert not got["pages"] and not got["citations"]
    return err


def test_a_line_that_is_not_json(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, range_server: Any, capsys: Any
) -> None:
    url, engine = seeded
    good = main_entries(warc_samples)
    bad = 'ru,01spb)/zzz 20200808183112 {"url": "http://01spb.ru/zzz", "mime": '
    index = write_cdxj(tmp_path / "cdx-00000.gz", good, extra_lines=[bad])
    err = _bad(url, engine, capsys, "--index", str(index), "--warc-prefix", range_server.url)
    with gzip.open(index, "rt", encoding="utf-8") as fh:
        number = 1 + [line.rstrip("\n") for line in fh].index(bad)
    assert f"{index}:{number}: the JSON of the CDXJ line is invalid" in err
    assert not stored(engine)["runs"] and not range_server.requests  # read before any fetch


def test_a_line_that_is_not_cdxj_and_a_missing_field(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, capsys: Any
) -> None:
    url, engine = seeded
    index = tmp_path / "cdx.txt"
    index.write_text("com,example)/ 20170306040206\n", encoding="utf-8")
    err = _bad(url, engine, capsys, "--index", str(index), "--warc-prefix", str(warc_samples))
    assert f"{index}:1: not a CDXJ line" in err
    index.write_text('com,example)/ 20170306040206 {"url": "http://example.com/", '
                     '"mime": "text/html", "status": "200"}\n', encoding="utf-8")  # fmt: skip
    err = _bad(url, engine, capsys, "--index", str(index), "--warc-prefix", str(warc_samples))
    assert f"{index}:1: the CDXJ line lacks the field(s) length, offset, filename" in err


def test_a_truncated_gzip_index_and_a_missing_file(
    tmp_path: Path, seeded: tuple[str, Any], cdx_files: list[Path], warc_samples: Path, capsys: Any
) -> None:
    url, engine = seeded
    data = cdx_files[1].read_bytes()
    cut = tmp_path / "cdx-cut.gz"
    cut.write_bytes(data[: len(data) - 40])
    err = _bad(url, engine, capsys, "--index", str(cut), "--warc-prefix", str(warc_samples))
    assert f"{cut}:" in err and "gzip file is truncated" in err
    err = _bad(url, engine, capsys, "--index", str(tmp_path / "nope.gz"),
               "--warc-prefix", str(warc_samples))  # fmt: skip
    assert "nope.gz: index file not found" in err


def test_a_range_answering_404_stores_nothing_of_its_index_file(
    seeded: tuple[str, Any], cdx_files: list[Path], range_server: Any, fast: None, capsys: Any
) -> None:
    url, engine = seeded
    range_server.answer_404(SHOP)
    code = cli(url, "--index", *map(str, cdx_files), "--warc-prefix", range_server.url,
               "--limit-per-domain", "2")  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert f"{range_server.url}{SHOP} bytes=242827-251855" in err and "HTTP 404" in err
    assert f"{cdx_files[1]}:" in err  # the index line too
    got = stored(engine)
    # cdx-00000.gz was stored whole before; nothing of cdx-00001.gz
    assert sorted(got["pages"]) == sorted(u for u in EXPECTED if "uraharajuku" not in u)
    assert got["runs"][0].status == "failed" and "HTTP 404" in got["runs"][0].error


def test_a_range_holding_another_record(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, range_server: Any, capsys: Any
) -> None:
    url, engine = seeded
    entries = main_entries(warc_samples)
    spb = next(e for e in entries if "01spb" in e.url)
    other = next(e for e in entries if "003338" in e.url)
    wrong = spb.replace(offset=other.offset, length=other.length)
    index = write_cdxj(tmp_path / "cdx.gz", [wrong])
    err = _bad(url, engine, capsys, "--index", str(index), "--warc-prefix", range_server.url,
               "--domain", "01spb.ru")  # fmt: skip
    assert f"bytes={other.offset}-{other.offset + other.length - 1}" in err
    assert f"the record there is for {other.url}, not {spb.url}" in err
    # a range that is no record at all
    index = write_cdxj(tmp_path / "cdx.gz", [spb.replace(offset=spb.offset + 7)])
    err = _bad(url, engine, capsys, "--index", str(index), "--warc-prefix", str(warc_samples),
               "--domain", "01spb.ru")  # fmt: skip
    assert "not a WARC record" in err or "no http(s) response record" in err


def test_a_missing_local_warc_file(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, capsys: Any
) -> None:
    url, engine = seeded
    spb = next(e for e in main_entries(warc_samples) if "01spb" in e.url)
    index = write_cdxj(tmp_path / "cdx.gz", [spb.replace(filename="crawl-data/x/none.warc.gz")])
    err = _bad(url, engine, capsys, "--index", str(index), "--warc-prefix", str(warc_samples),
               "--domain", "01spb.ru")  # fmt: skip
    assert "none.warc.gz bytes=12685-31492" in err and "file not found" in err


def test_options_and_environment_checks(
    tmp_path: Path, cdx_files: list[Path], warc_samples: Path, capsys: Any, seed_database: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'empty-env.db'}"
    seed_database(url, citing={}).dispose()
    assert cli(url, "--index", str(cdx_files[0]), "--warc-prefix", str(warc_samples)) == 2
    assert "no citing domains stored" in capsys.readouterr().err
    assert cli(url, "--index", str(cdx_files[0]), "--limit-per-domain", "0") == 2
    assert cli(url, "--index", str(cdx_files[0]), "--university", "Nowhere U",
               "--domain", "example.com", "--warc-prefix", str(warc_samples)) == 2  # fmt: skip
    assert "unknown university: Nowhere U" in capsys.readouterr().err
    assert cli(url, "--index", str(cdx_files[0]), "--warc-prefix", str(tmp_path / "no"),
               "--domain", "example.com") == 2  # fmt: skip
    assert "WARC folder not found" in capsys.readouterr().err


def test_cluster_idx_is_named_as_the_secondary_index(tmp_path: Path) -> None:
    idx = tmp_path / "cluster.idx"
    idx.write_text("com,example)/ 20170306040206\tcdx-00000.gz\t0\t1234\t1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="secondary index"):
        list(read_cdxj(idx, NameMatcher(["example.com"])))


def test_fetcher_reads_plain_warc_ranges(warc_samples: Path) -> None:
    """An uncompressed WARC file is cut by byte range too."""
    (e,) = warc_entries(warc_samples / "warcio/example-iana.org-chunked.warc", warc_samples)
    cap = Capture(e.url, e.timestamp, e.mime, None, 200, None, e.filename, e.offset, e.length,
                  "idx", "idx:1")  # fmt: skip
    fetcher = RangeFetcher(str(warc_samples))
    rec = parse_capture(fetcher.fetch(cap), cap, fetcher.location(cap))
    assert b"Internet Assigned Numbers Authority" in rec["body"]


def test_postgresql_one_transaction_per_index_file(
    postgres_url: str,
    seed_database: Any,
    cdx_files: list[Path],
    range_server: Any,
    fast: None,
    capsys: Any,
) -> None:
    """On PostgreSQL too: the first index file's pages and citations are stored, nothing
    of the second, whose range answers 404."""
    engine = seed_database(postgres_url)
    try:
        range_server.answer_404(SHOP)
        code = cli(postgres_url, "--index", *map(str, cdx_files), "--warc-prefix",
                   range_server.url, "--limit-per-domain", "2")  # fmt: skip
        assert code == 2 and "HTTP 404" in capsys.readouterr().err
        got = stored(engine)
        first = {u: c for u, c in EXPECTED.items() if "uraharajuku" not in u}
        assert {u: c[:2] for u, c in got["citations"].items()} == first
        assert sorted(got["pages"]) == sorted(first)
    finally:
        engine.dispose()


# -- the secondary index cluster.idx ------------------------------------------------------------
def test_cluster_idx_reads_only_the_needed_blocks(tmp_path: Path, warc_samples: Path) -> None:
    """Through cluster.idx the same captures are found as by reading every cdx file
    (the reference), for names at the start, middle and end of the key order, with
    hosts below a domain; fewer blocks are read than there are."""
    from crawler.commoncrawl.index import cluster_blocks, read_cluster_index
    from testbed.commoncrawl_index import write_cluster_index

    files = [
        write_cdxj(tmp_path / "cdx-00000.gz", main_entries(warc_samples), lines_per_member=2),
        write_cdxj(tmp_path / "cdx-00001.gz", shop_entries(warc_samples), lines_per_member=4),
    ]
    idx = write_cluster_index(tmp_path / "cluster.idx", files)
    n_blocks = len(idx.read_text().splitlines())
    fetcher = RangeFetcher(str(tmp_path))
    for names in (
        ["003338.cn"],  # the first key
        ["01spb.ru", "example.com", "jxtdw.com"],
        ["06.live-radsport.ch", "uraharajuku.st"],  # a host; the last file
        ["psb556.com", "nowhere.org"],
    ):
        matcher = NameMatcher(names)
        reference = [c for f in files for c in read_cdxj(f, matcher)]
        found = list(read_cluster_index(idx, matcher, fetcher))
        assert sorted((c.url, c.offset) for c in found) == sorted(
            (c.url, c.offset) for c in reference
        ), names
        blocks = list(cluster_blocks(idx, matcher))
        assert sum(length for _, _, length, _ in blocks) < sum(f.stat().st_size for f in files)
    assert n_blocks == 9 + 8


def test_cluster_idx_over_http(
    tmp_path: Path,
    seeded: tuple[str, Any],
    warc_samples: Path,
    range_server: Any,
    fast: None,
    capsys: Any,
) -> None:
    """The command with cluster.idx: cdx blocks and WARC records both by byte range."""
    from testbed.commoncrawl_index import write_cluster_index

    url, engine = seeded
    cdx_dir = tmp_path / "indexes"
    cdx_dir.mkdir()
    files = [
        write_cdxj(cdx_dir / "cdx-00000.gz", main_entries(warc_samples)),
        write_cdxj(cdx_dir / "cdx-00001.gz", shop_entries(warc_samples)),
    ]
    idx = write_cluster_index(tmp_path / "cluster.idx", files)
    with type(range_server)(cdx_dir) as cdx_server:
        code = cli(url, "--index", str(idx), "--cdx-prefix", cdx_server.url,
                   "--warc-prefix", range_server.url, "--limit-per-domain", "2")  # fmt: skip
        cdx_requests = cdx_server.requests
    assert code == 0
    got = stored(engine)
    assert {u: c[:2] for u, c in got["citations"].items()} == EXPECTED
    (run,) = got["runs"]
    assert run.stats["commoncrawl_index"]["cdx_requests"] == len(cdx_requests) >= 2
    assert all(r["range"] and r["path"].startswith("cdx-0000") for r in cdx_requests)
    # a block answering 404 is bad input naming its URL and range; nothing more is stored
    (tmp_path / "empty").mkdir()
    with type(range_server)(tmp_path / "empty") as empty:
        assert cli(url, "--index", str(idx), "--cdx-prefix", empty.url,
                   "--warc-prefix", range_server.url) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert f"{empty.url}cdx-00000.gz bytes=0-" in err and "HTTP 404" in err
    assert f"(block of {idx}:1)" in err
    assert len(stored(engine)["runs"]) == 1


def test_a_parquet_file_without_the_published_columns(
    tmp_path: Path, seeded: tuple[str, Any], warc_samples: Path, capsys: Any
) -> None:
    import duckdb

    url, engine = seeded
    part = tmp_path / "part-00000.parquet"
    duckdb.sql("SELECT 'http://example.com/' AS url, 200 AS status").write_parquet(str(part))
    err = _bad(url, engine, capsys, "--index", str(part), "--warc-prefix", str(warc_samples))
    assert f"{part}: not a Common Crawl columnar index file" in err and "url_host_name" in err
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1 but nothing else")
    err = _bad(url, engine, capsys, "--index", str(junk), "--warc-prefix", str(warc_samples))
    assert f"{junk}: not a readable Parquet file" in err


@pytest.mark.parametrize(
    "name",
    ["crawler.commoncrawl.captures", "crawler.commoncrawl.index", "testbed.commoncrawl_index"],
)
def test_docstring_examples(name: str) -> None:
    """crawler/ and testbed/ are outside pytest's doctest paths: run their examples here."""
    import doctest
    import importlib

    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3


def test_a_database_error_within_the_file_transaction(seeded: tuple[str, Any]) -> None:
    """A driver error inside the per-file transaction is reported as DatabaseError (exit
    code 2) naming the database, and nothing of the transaction is kept."""
    from sqlalchemy import text

    from core.exceptions import DatabaseError
    from webometrics.stages.citing_index import one_transaction

    _, engine = seeded
    failure = r"database sqlite:///.*cc\.db failed: no such table"
    with pytest.raises(DatabaseError, match=failure), one_transaction(engine) as conn:
        with session_scope(conn) as s:
            s.add(CrawlRun(kind="x"))
        with session_scope(conn) as s:
            s.execute(text("SELECT * FROM no_such_table"))
    with session_scope(engine) as s:
        assert s.scalar(text("SELECT count(*) FROM crawl_run WHERE kind = 'x'")) == 0
