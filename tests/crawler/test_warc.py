"""WARC/ARC import on real archives (../shared/data/warc-samples)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import select

from core.exceptions import ConfigError
from crawler.warc import DamagedArchiveError, NotAnArchiveError, import_warc, iter_records
from store.models import CrawlRun, Link, Page
from store.session import session_scope

from .conftest import migrated_engine

#: http(s) response/resource records per sample file, counted with warcio where it reads
#: the file and by hand where it cannot (the ClueWeb09 WARC 0.18 file has wrong
#: Content-Length values; the Common Crawl ARC files were gzipped as one member)
EXPECTED = {
    "chatnoir-copycat/00.warc.gz": 23,
    "chatnoir-copycat/small-sample-1213893279526_0.arc.gz": 145,
    "chatnoir-copycat/small-sample-1262850551027_8.arc.gz": 8,
    "resiliparse/clueweb-quirk.warc.gz": 29,
    "resiliparse/warcfile.warc.gz": 16,
    "warcio/example-iana.org-chunked.warc": 1,
    "warcio/example-resource.warc.gz": 1,
    "warcio/example.arc.gz": 1,
    "warcio/example.warc.gz": 1,
    "warcio/post-test.warc.gz": 3,
}


@pytest.fixture(scope="module")
def samples(shared_data: Path) -> Path:
    folder = shared_data / "warc-samples"
    assert folder.is_dir(), f"{folder} is missing"
    return folder


def test_every_sample_file_is_read(samples: Path) -> None:
    for name, n in EXPECTED.items():
        records = list(iter_records(samples / name))
        assert len(records) == n, name
        for rec in records:
            assert rec["url"].startswith(("http://", "https://"))
            assert 100 <= rec["status"] < 600


def test_chunked_and_gzip_payloads_are_decoded(samples: Path) -> None:
    (rec,) = iter_records(samples / "warcio" / "example-iana.org-chunked.warc")
    assert rec["url"] == "http://www.iana.org/"
    assert b"<title>Internet Assigned Numbers Authority</title>" in rec["body"]
    arc = list(iter_records(samples / "chatnoir-copycat/small-sample-1262850551027_8.arc.gz"))
    assert all(r["body"].lstrip()[:1] in (b"<", b"") for r in arc)  # HTML, not gzip bytes


def test_import_warc_stores_pages_with_offsets(tmp_path: Path, samples: Path) -> None:
    from warcio.archiveiterator import ArchiveIterator

    engine = migrated_engine(f"sqlite:///{tmp_path / 'w.db'}")
    files = [samples / name for name in EXPECTED]
    result = import_warc(engine, files)
    assert result["records"] == sum(EXPECTED.values())
    with session_scope(engine) as s:
        run = s.get(CrawlRun, result["run_id"])
        assert run.kind == "import-warc" and run.status == "finished"
        pages = s.scalars(select(Page)).all()
        assert len(pages) == result["stats"]["pages_recorded"] >= 220
        by_status = {p.http_status for p in pages}
        assert {200, 301, 302, 404} <= by_status
        ru = s.scalars(select(Page).where(Page.url == "http://01spb.ru/company/")).one()
        assert ru.charset == "cp1251" and ru.extraction_status == "pending"
        # a seekable file's offset leads back to the record
        iana = s.scalars(select(Page).where(Page.url == "http://www.iana.org/")).one()
        with open(iana.warc_file, "rb") as fh:
            fh.seek(iana.warc_offset)
            record = next(iter(ArchiveIterator(fh)))
            assert record.rec_headers.get_header("WARC-Target-URI") == "http://www.iana.org/"
    again = import_warc(engine, files[:2])  # a second import updates, adds nothing
    with session_scope(engine) as s:
        assert len(s.scalars(select(Page)).all()) == len(pages)
        clueweb = "http://00000-nrt-realestate.homepagestartup.com/"  # in the first file
        assert (
            s.scalars(select(Page.last_run_id).where(Page.url == clueweb)).one()
            == (again["run_id"])
        )
        assert (
            s.scalars(select(Page.last_run_id).where(Page.url == ru.url)).one()
            == (result["run_id"])
        )


def _png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def test_missing_or_foreign_files_are_refused_before_a_run(tmp_path: Path) -> None:
    import gzip

    engine = migrated_engine(f"sqlite:///{tmp_path / 'w.db'}")
    with pytest.raises(ConfigError, match="not found"):
        import_warc(engine, [tmp_path / "nope.warc.gz"])
    foreign = {
        "empty.warc": (b"", "the file is empty"),
        "junk.warc": (b"this is not an archive\n" * 10, "starts with b'this is not"),
        "picture.warc.gz": (_png(), "starts with b'\\x89PNG"),
        "text.warc.gz": (gzip.compress(b"hello\n" * 50), "starts with b'hello"),
        "badgzip.warc.gz": (b"\x1f\x8b" + b"\x00" * 40, "gzip compression is broken"),
    }
    for name, (data, says) in foreign.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(NotAnArchiveError, match=re.escape(says)) as info:
            list(iter_records(path))
        assert info.value.exit_code == 2 and "nothing was imported" in str(info.value)
        with pytest.raises(NotAnArchiveError):  # checked before the good file is read
            import_warc(engine, [path])
    with session_scope(engine) as s:
        assert s.scalars(select(CrawlRun)).all() == [] and s.scalars(select(Page)).all() == []


def _offsets(path: Path) -> list[tuple[int, int]]:
    """(offset, length) of every record, as warcio reads them."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        records = ArchiveIterator(fh)
        return [(records.get_record_offset(), records.get_record_length()) for _ in records]


def _cut(src: Path, at: int, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes()[:at])
    return dst


#: (sample file, where in which record to cut, what the error says)
CUTS = [
    ("resiliparse/warcfile.warc.gz", "mid-header", 9, "inside the header"),
    ("resiliparse/warcfile.warc.gz", "mid-payload", 20, "before its Content-Length"),
    ("resiliparse/warcfile.warc.gz", "next-member-header", 30, "inside the header"),
    ("resiliparse/warcfile.warc.gz", "member-trailer", 49, "end-of-stream marker"),
    ("warcio/example-iana.org-chunked.warc", "mid-header", 1, "header"),
    ("warcio/example-iana.org-chunked.warc", "mid-payload", 1, "before its Content-Length"),
    ("warcio/example-iana.org-chunked.warc", "mid-header", 2, "header"),
]


@pytest.mark.parametrize(("name", "where", "index", "says"), CUTS)
def test_a_cut_warc_file_yields_the_records_before_then_fails(
    tmp_path: Path, samples: Path, name: str, where: str, index: int, says: str
) -> None:
    src = samples / name
    offsets = _offsets(src)
    start, length = offsets[index]
    at = {
        "mid-header": start + 40,
        "mid-payload": start + length // 2,
        "next-member-header": start + 5,  # inside the gzip header of the member
        "member-trailer": start + length - 4,  # inside the gzip member's trailer
    }[where]
    full = list(iter_records(src))
    before = []
    with pytest.raises(DamagedArchiveError, match=re.escape(says)) as info:
        for rec in iter_records(_cut(src, at, tmp_path / src.name)):
            before.append(rec)
    exc = info.value
    assert exc.exit_code == 1 and exc.path == tmp_path / src.name
    assert start <= exc.offset <= at and f"byte {exc.offset}" in str(exc)
    assert [r["url"] for r in before] == [r["url"] for r in full[: len(before)]]
    assert [r["body"] for r in before] == [r["body"] for r in full[: len(before)]]
    kept = sum(1 for r in full if r["offset"] is not None and r["offset"] < start)
    assert len(before) in (kept, kept + 1)  # + the record whose member trailer is cut


def test_a_cut_between_members_is_a_shorter_archive(tmp_path: Path, samples: Path) -> None:
    """A gzip WARC cut exactly where a member starts is a valid archive: nothing in it
    tells that records are missing."""
    src = samples / "resiliparse/warcfile.warc.gz"
    start, _ = _offsets(src)[30]
    got = list(iter_records(_cut(src, start, tmp_path / "w.warc.gz")))
    assert [r["url"] for r in got] == [r["url"] for r in iter_records(src) if r["offset"] < start]


@pytest.mark.parametrize(
    "name", ["chatnoir-copycat/00.warc.gz", "chatnoir-copycat/small-sample-1213893279526_0.arc.gz"]
)
def test_a_cut_old_file_read_leniently_fails_too(tmp_path: Path, samples: Path, name: str) -> None:
    src = samples / name
    full = list(iter_records(src))
    at = int(src.stat().st_size * 0.6)
    before = []
    with pytest.raises(DamagedArchiveError, match="gzip stream ends or breaks") as info:
        for rec in iter_records(_cut(src, at, tmp_path / src.name)):
            before.append(rec)
    assert info.value.offset == at
    assert 0 < len(before) < len(full)
    assert [r["url"] for r in before] == [r["url"] for r in full[: len(before)]]


def test_a_cut_import_keeps_what_came_before_and_a_rerun_completes_it(
    db_url: str, tmp_path: Path, samples: Path
) -> None:
    """SQLite and PostgreSQL: the run is failed with file, offset and reason; the
    records before the cut are stored; the same command on the repaired file resumes
    the run and stores nothing twice (pages by URL, links per run)."""
    from core.universities import UniversitySpec
    from store.universities import import_universities

    engine = migrated_engine(db_url)
    import_universities(engine, [UniversitySpec("SPb", "Russia", ("01spb.ru",))])
    src = samples / "resiliparse/warcfile.warc.gz"
    full = list(iter_records(src))
    path = _cut(src, int(src.stat().st_size * 0.6), tmp_path / "trunc.warc.gz")
    with pytest.raises(DamagedArchiveError) as info:
        import_warc(engine, [path], batch_size=3)
    message = str(info.value)
    assert message.startswith(f"{path}: byte {info.value.offset}: the response record there")
    assert "stored in crawl run" in message and "run the same command again" in message
    with session_scope(engine) as s:
        (run,) = s.scalars(select(CrawlRun)).all()
        assert run.status == "failed" and run.error == message and run.finished_at
        assert run.stats["import"]["damaged"]["offset"] == info.value.offset
        stored = set(s.scalars(select(Page.url)))
        n_before = run.stats["import"]["records"]
        assert stored == {r["url"] for r in full[:n_before]} and 0 < n_before < len(full)
        run_id = run.id
    path.write_bytes(src.read_bytes())  # the file is repaired
    again = import_warc(engine, [path], batch_size=3)
    assert again["run_id"] == run_id and again["resumed"]
    fresh = migrated_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    import_universities(fresh, [UniversitySpec("SPb", "Russia", ("01spb.ru",))])
    reference = import_warc(fresh, [src])
    with session_scope(engine) as s:
        (run,) = s.scalars(select(CrawlRun)).all()
        assert run.status == "finished" and run.error is None
        assert len(s.scalars(select(Page)).all()) == reference["stats"]["pages_recorded"]
        n_links = len(s.scalars(select(Link)).all())
    assert n_links == reference["links"] > 0
    assert again["stats"]["links"] == n_links
