"""WARC/ARC import on real archives (../shared/data/warc-samples)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from core.exceptions import ConfigError
from crawler.warc import import_warc, iter_records
from store.models import CrawlRun, Page
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


def test_missing_or_foreign_files_are_reported(tmp_path: Path) -> None:
    engine = migrated_engine(f"sqlite:///{tmp_path / 'w.db'}")
    with pytest.raises(ConfigError, match="not found"):
        import_warc(engine, [tmp_path / "nope.warc.gz"])
    junk = tmp_path / "junk.warc"
    junk.write_bytes(b"this is not an archive\n" * 10)
    assert list(iter_records(junk)) == []
