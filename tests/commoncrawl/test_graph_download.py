"""``webometrics citing commoncrawl-graph --release R``: the release found from its
published paths on a local stand-in of data.commoncrawl.org (127.0.0.1, the published
layout, byte ranges, cut connections, spoilt bytes, 503 Slow Down), downloaded into a
cache, resumed, checked, reused without the network, or streamed; bad names and an
unreachable server give a clear message and their exit code."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from crawler.commoncrawl.download import (
    FilePlan,
    GraphDownloader,
    Plan,
    Release,
    RemoteFile,
    describe,
    human,
)
from store import make_engine, session_scope
from store import models as m
from testbed.commoncrawl_server import PublishedRelease, ReleaseServer, publish, write_graphinfo
from tests.commoncrawl.graph_files import GraphCase, domain_graph, host_graph
from webometrics.cli import main

RELEASE = "cc-main-2026-jan-feb-mar"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, GraphCase]]:
    """Both levels of one release in the published layout, with their answers."""
    written = tmp_path_factory.mktemp("written")
    root = tmp_path_factory.mktemp("data.commoncrawl.org")
    cases = {"domain": domain_graph(written / "d"), "host": host_graph(written / "h")}
    for case in cases.values():
        publish(case.files, root)
    write_graphinfo(root, [RELEASE, "cc-main-2025-oct-nov-dec", "cc-main-2025-jul-aug-sep"])
    return root, cases


@pytest.fixture
def server(published: tuple[Path, dict[str, GraphCase]]) -> ReleaseServer:
    with ReleaseServer(published[0]) as srv:
        yield srv


@pytest.fixture(autouse=True)
def quick_politeness(monkeypatch: pytest.MonkeyPatch) -> None:
    """No 1-second pause between requests on 127.0.0.1 (the default is Common Crawl's)."""
    monkeypatch.setenv("WEBOMETRICS_COMMONCRAWL__REQUEST_INTERVAL", "0")
    monkeypatch.setenv("WEBOMETRICS_COMMONCRAWL__RETRIES", "3")
    monkeypatch.setenv("WEBOMETRICS_COMMONCRAWL__RETRY_MAX_WAIT", "0.3")
    monkeypatch.setenv("WEBOMETRICS_COMMONCRAWL__TIMEOUT", "10")
    monkeypatch.setenv("WEBOMETRICS_COMMONCRAWL__GRAPHINFO_URL", "")  # never the internet


@pytest.fixture
def db(graph_db: str) -> str:
    return graph_db


def _cli(url: str, cache: Path, base: str, *extra: str, level: str = "domain") -> int:
    return main(
        [
            "--db-url",
            url,
            "citing",
            "commoncrawl-graph",
            "--release",
            RELEASE,
            "--level",
            level,
            "--cache",
            str(cache),
            "--base-url",
            base,
            "--no-progress",
            *extra,
        ]
    )


def _stored(url: str) -> dict[str, set[str]]:
    engine = make_engine(url)
    out: dict[str, set[str]] = {}
    with session_scope(engine) as s:
        for node, uni in s.execute(
            select(m.CitingNode.node, m.University.name).join(
                m.University, m.University.id == m.CitingNode.university_id
            )
        ):
            out.setdefault(uni, set()).add(node)
    engine.dispose()
    return out


def _runs(url: str) -> int:
    engine = make_engine(url)
    with session_scope(engine) as s:
        n = s.scalar(select(func.count()).select_from(m.CrawlRun))
    engine.dispose()
    return int(n or 0)


def _expected(case: GraphCase) -> dict[str, set[str]]:
    return {uni: nodes for uni, nodes in case.expected.items() if nodes}


def _layout(root: Path, level: str) -> PublishedRelease:
    base = f"projects/hyperlinkgraph/{RELEASE}/{level}"
    if level == "domain":
        v, e = (f"{base}/{RELEASE}-domain-{k}.txt.gz" for k in ("vertices", "edges"))
        return PublishedRelease(
            RELEASE, level, (v,), (e,), f"{base}/{RELEASE}-domain-ranks.txt.gz", ()
        )
    lists = {}
    for kind in ("vertices", "edges"):
        listing = root / f"{base}/{RELEASE}-host-{kind}.paths.gz"
        lists[kind] = tuple(gzip.decompress(listing.read_bytes()).decode().split())
    return PublishedRelease(
        RELEASE, level, lists["vertices"], lists["edges"], f"{base}/{RELEASE}-host-ranks.txt.gz", ()
    )


def _gets(server: ReleaseServer, path: str) -> list[dict]:
    return [r for r in server.requests if r["method"] == "GET" and r["path"] == path]


# -- the dry run ------------------------------------------------------------------------------
def test_dry_run_shows_the_files_sizes_disk_and_time_and_fetches_nothing(
    db: str, published, server: ReleaseServer, tmp_path: Path, capsys
) -> None:
    root, _ = published
    layout = _layout(root, "host")
    cache = tmp_path / "cache"
    assert _cli(db, cache, server.url, "--dry-run", level="host") == 0
    out = capsys.readouterr().out
    for path in layout.files:
        size = (root / path).stat().st_size
        name = path.split("/host/", 1)[1]  # vertices/part-..., edges/part-..., <release>-...
        assert re.search(rf"{re.escape(human(size))}\s+to download\s+{re.escape(name)}", out), name
    total = sum((root / p).stat().st_size for p in layout.files)
    assert f"to download: {human(total)}" in out
    assert "disk free in the cache's folder:" in out
    assert "expected time:" in out and "10.0 MB/s, assumed" in out
    assert f"files: {len(layout.vertices)} vertices, {len(layout.edges)} edges, 1 ranks" in out
    # the listings were read, every part sized by HEAD, no part downloaded, nothing stored
    got = {r["path"] for r in server.requests if r["method"] == "GET"}
    assert got == {
        f"projects/hyperlinkgraph/{RELEASE}/host/{RELEASE}-host-{k}.paths.gz"
        for k in ("vertices", "edges")
    }
    assert {r["path"] for r in server.requests if r["method"] == "HEAD"} == set(layout.files)
    assert all("webometrics" in (r["agent"] or "") for r in server.requests)
    assert not list(cache.rglob("*.txt.gz")) and _runs(db) == 0


def test_dry_run_says_when_the_disk_is_short_and_suggests_stream(tmp_path: Path) -> None:
    base = f"projects/hyperlinkgraph/{RELEASE}/host"
    files = (
        RemoteFile("vertices", f"{base}/vertices/part-00000.txt.gz", 900 * 2**20),
        *(RemoteFile("edges", f"{base}/edges/part-{k:05d}.txt.gz", 2**30) for k in range(14)),
        RemoteFile("ranks", f"{base}/{RELEASE}-host-ranks.txt.gz", 2 * 2**30),
    )
    rel = Release(RELEASE, "host", "https://data.commoncrawl.org/", files)

    def plan(stream: bool) -> Plan:
        states = [FilePlan(f, "missing", 0, stream and f.kind == "edges") for f in files]
        states[1] = FilePlan(files[1], "complete", 2**30, False)  # one part cached
        return Plan(rel, tmp_path, tuple(states), 5 * 2**30, 1e7, "10.0 MB/s, assumed")

    short = plan(stream=False)
    text = "\n".join(describe(short))
    assert short.disk_short and short.to_store == (900 * 2**20) + 13 * 2**30 + 2 * 2**30
    assert "the disk is short" in text and "--stream" in text
    assert f"{human(short.to_store - 13 * 2**30)} are needed" in text  # what --stream leaves
    # the 14 edges parts on one line, with their states
    assert re.search(
        r"14\.0 GiB\s+1 in the cache, 13 to download\s+edges/part-\*\.gz \(14 parts\)", text
    )
    assert "vertices/part-00000.txt.gz" in text and f"{RELEASE}-host-ranks.txt.gz" in text
    streamed = plan(stream=True)
    text = "\n".join(describe(streamed))
    assert not streamed.disk_short and "1 in the cache, 13 streamed (not stored)" in text
    assert f"to store: {human(900 * 2**20 + 2 * 2**30)}" in text


def test_a_short_disk_stops_before_the_first_byte(
    db: str, published, server: ReleaseServer, tmp_path: Path, capsys, monkeypatch
) -> None:
    cache = tmp_path / "cache"
    # ask to keep more free than the disk has (its free space moves with other work on it)
    reserve = shutil.disk_usage(tmp_path).free + 2**30
    monkeypatch.setenv("WEBOMETRICS_COMMONCRAWL__RESERVE_MB", str(reserve / 2**20))
    assert _cli(db, cache, server.url, "--dry-run", level="host") == 0
    out = capsys.readouterr().out
    assert "the disk is short" in out and "--stream reads the edges" in out
    assert "kept free ([commoncrawl] reserve_mb)" in out
    assert _cli(db, cache, server.url, level="host") == 2
    err = capsys.readouterr().err
    assert "the disk is short" in err and "Nothing was downloaded" in err
    assert _cli(db, cache, server.url, "--stream", level="host") == 2
    err = capsys.readouterr().err
    assert "the disk is short" in err and "--stream reads" not in err  # already streaming
    # the listings were read and the parts sized; no part was downloaded, nothing stored
    assert not [r for r in server.requests if r["method"] == "GET" and "/part-" in r["path"]]
    assert not list(cache.rglob("*.txt.gz*")) and _runs(db) == 0


def test_two_downloads_into_one_cache_do_not_mix(
    db: str, server: ReleaseServer, tmp_path: Path, capsys
) -> None:
    import fcntl

    cache = tmp_path / "cache"
    lock = cache / f"projects/hyperlinkgraph/{RELEASE}/domain/webometrics-download.lock"
    lock.parent.mkdir(parents=True)
    with lock.open("w") as held:  # another download holds the release's folder
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        held.write("process 4242")
        held.flush()
        assert _cli(db, cache, server.url) == 4
        err = capsys.readouterr().err
        assert "process 4242 is downloading" in err and "--cache DIR" in err
        assert not list(cache.rglob("*.txt.gz*"))
    assert _cli(db, cache, server.url) == 0  # once it has ended


# -- download, resume, check, reuse -------------------------------------------------------------
def test_download_resumes_after_a_cut_and_stores_the_citing_domains(
    db: str, published, server: ReleaseServer, tmp_path: Path, capsys
) -> None:
    root, cases = published
    layout = _layout(root, "domain")
    edges = layout.edges[0]
    size = (root / edges).stat().st_size
    server.cut(edges, size // 2)
    cache = tmp_path / "cache"
    assert _cli(db, cache, server.url) == 0
    out = capsys.readouterr().out
    assert "1 resumed" in out
    gets = _gets(server, edges)
    assert len(gets) == 2 and gets[0]["range"] is None
    assert gets[1]["range"] == f"bytes={size // 2}-"
    for path in layout.files:
        assert (cache / path).read_bytes() == (root / path).read_bytes(), path
    assert not list(cache.rglob("*.part"))
    assert _stored(db) == _expected(cases["domain"])

    # a second run reads the cache alone: nothing listens at the base URL
    capsys.readouterr()
    assert _cli(db, cache, "http://127.0.0.1:9/") == 0
    out = capsys.readouterr().out
    assert "3 from the cache, 0 B downloaded" in out
    assert _runs(db) == 2 and _stored(db) == _expected(cases["domain"])
    # and the dry run says so, with the bandwidth this download measured
    assert _cli(db, cache, "http://127.0.0.1:9/", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "everything is in the cache" in out and "MB/s, measured" in out


def test_a_spoilt_download_and_a_truncated_cached_part_are_fetched_again(
    db: str, published, server: ReleaseServer, tmp_path: Path, capsys
) -> None:
    root, cases = published
    layout = _layout(root, "domain")
    vertices, edges = layout.vertices[0], layout.edges[0]
    cache = tmp_path / "cache"
    server.spoil(vertices)  # the full length, bytes changed: only the gzip check sees it
    assert _cli(db, cache, server.url) == 0
    assert "1 fetched again after a failed check" in capsys.readouterr().out
    assert [g["range"] for g in _gets(server, vertices)] == [None, None]
    assert (cache / vertices).read_bytes() == (root / vertices).read_bytes()

    # a cached part cut short on disk: resumed from the bytes it has
    data = (cache / edges).read_bytes()
    (cache / edges).write_bytes(data[: len(data) // 3])
    # a cached part spoilt on disk (same size): checked again, fetched again whole
    spoilt = bytearray((cache / vertices).read_bytes())
    spoilt[len(spoilt) // 2 : len(spoilt) // 2 + 32] = bytes(32)
    (cache / vertices).write_bytes(bytes(spoilt))
    server.clear()
    assert _cli(db, cache, server.url) == 0
    out = capsys.readouterr().out
    assert "1 resumed" in out and "1 fetched again" in out
    assert [g["range"] for g in _gets(server, edges)] == [f"bytes={len(data) // 3}-"]
    assert [g["range"] for g in _gets(server, vertices)] == [None]
    for path in layout.files:
        assert (cache / path).read_bytes() == (root / path).read_bytes(), path
    assert _stored(db) == _expected(cases["domain"])

    # a download stopped by the user or a crash leaves a .part: the next run continues it
    ranks = cache / layout.ranks
    kept = ranks.read_bytes()[:1000]
    ranks.unlink()
    ranks.with_name(ranks.name + ".part").write_bytes(kept)
    assert _cli(db, cache, server.url, "--dry-run") == 0
    assert re.search(r"partial: 1,000 B\s+" + re.escape(ranks.name), capsys.readouterr().out)
    server.clear()
    assert _cli(db, cache, server.url) == 0
    assert [g["range"] for g in _gets(server, layout.ranks)] == ["bytes=1000-"]
    assert ranks.read_bytes() == (root / layout.ranks).read_bytes()


def test_slow_down_answers_are_retried_after_their_retry_after(
    published, server: ReleaseServer, tmp_path: Path
) -> None:
    from core.settings import load_settings
    from crawler.commoncrawl.download import DownloadPolicy

    policy = DownloadPolicy.from_settings(load_settings(None))
    dl = GraphDownloader(tmp_path / "cache", base_url=server.url, policy=policy)
    server.fail(2, retry_after=0.2)
    rel = dl.resolve(RELEASE, "domain")
    fetched = dl.fetch(rel)
    assert len(fetched.vertices) == 1 and fetched.ranks is not None
    first = server.requests[:3]
    assert [r["method"] for r in first] == ["HEAD"] * 3 and first[0]["path"] == first[2]["path"]
    assert first[1]["time"] - first[0]["time"] >= 0.2 and first[2]["time"] - first[1]["time"] >= 0.2
    assert dl.http.retried >= 2


# -- streaming --------------------------------------------------------------------------------
def test_stream_reads_the_edges_over_the_network_without_storing_them(
    db: str, published, server: ReleaseServer, tmp_path: Path, capsys
) -> None:
    root, cases = published
    layout = _layout(root, "host")
    part = layout.edges[1]
    size = (root / part).stat().st_size
    server.cut(part, size // 2)  # a streamed part is resumed by range too
    cache = tmp_path / "cache"
    assert _cli(db, cache, server.url, "--stream", level="host") == 0
    out = capsys.readouterr().out
    assert f"{len(layout.edges)} edges parts streamed" in out
    assert not (cache / part).exists() and not list(cache.rglob("edges/*"))
    for path in (*layout.vertices, layout.ranks):
        assert (cache / path).read_bytes() == (root / path).read_bytes()
    assert [g["range"] for g in _gets(server, part)] == [None, f"bytes={size // 2}-"]
    assert _stored(db) == _expected(cases["host"])
    engine = make_engine(db)
    with session_scope(engine) as s:
        stats = s.scalars(select(m.CrawlRun.stats)).one()
    engine.dispose()
    assert stats["edges"] == len(cases["host"].edges)


def test_a_truncated_streamed_part_is_an_error_and_nothing_is_stored(
    db: str, published, tmp_path: Path, capsys
) -> None:
    root, _ = published
    spoilt = tmp_path / "spoilt"
    shutil.copytree(root, spoilt)
    part = spoilt / _layout(root, "host").edges[0]
    data = part.read_bytes()
    part.write_bytes(data[: len(data) - 20])  # the server's own copy is short
    with ReleaseServer(spoilt) as srv:
        assert _cli(db, tmp_path / "cache", srv.url, "--stream", level="host") == 2
    err = capsys.readouterr().err
    assert "truncated gzip part" in err and part.name in err
    assert _runs(db) == 0


# -- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("release", "code", "message"),
    [
        ("CC-MAIN-2024-33", 2, "names a crawl, not a graph"),
        ("cc-main-2026 jan", 2, "not a web graph release name"),
        ("cc-main-2019-nov-dec-jan", 2, "no domain graph vertices at"),
    ],
)
def test_bad_release_names(
    sqlite_url: str,
    server: ReleaseServer,
    tmp_path: Path,
    capsys,
    release: str,
    code: int,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBOMETRICS_COMMONCRAWL__GRAPHINFO_URL", server.url + "graphinfo.json")
    args = ["--db-url", sqlite_url, "citing", "commoncrawl-graph", "--release", release]
    args += ["--cache", str(tmp_path / "c"), "--base-url", server.url, "--dry-run"]
    assert main(args) == code
    err = capsys.readouterr().err
    assert message in err and "commoncrawl.org/web-graphs" in err
    if "no domain graph" in message:  # a well-formed name: the known releases are named
        assert f"the newest releases: {RELEASE}, cc-main-2025-oct-nov-dec" in err


def test_an_unreachable_server_is_exit_1_with_what_to_do(db: str, tmp_path: Path, capsys) -> None:
    assert _cli(db, tmp_path / "c", "http://127.0.0.1:9/") == 1
    err = capsys.readouterr().err
    assert "failed after 4 attempt(s)" in err and "--base-url" in err
    assert _runs(db) == 0


def test_local_files_and_download_options_do_not_mix(db: str, tmp_path: Path, capsys) -> None:
    args = ["--db-url", db, "citing", "commoncrawl-graph", "--vertices", "v.gz", "--edges", "e.gz"]
    assert main([*args, "--stream"]) == 2
    assert "only with --release NAME alone" in capsys.readouterr().err
    assert main(["--db-url", db, "citing", "commoncrawl-graph"]) == 2
    assert "give --release NAME" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["crawler.commoncrawl.download", "crawler.commoncrawl.dumps"])
def test_docstring_examples(name: str) -> None:
    """crawler/ is outside pytest's doctest paths: run the examples here."""
    import doctest
    import importlib

    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3
