"""The extract stage on a real SQLite database of real pages: extraction in a process pool,
documents and their term counts, incremental runs, Ctrl-C and kill -9 with resume, a worker
that dies; documents stored before migration 0005 get their term counts (SQLite and
PostgreSQL)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import psutil
import pytest
from sqlalchemy import func, select

from core.domains import host_of, registered_domain
from core.settings import Settings
from core.shared_data import data_dir
from extract import ExtractOptions, extract_page
from extract.documents import DomainDocumentBuilder, PageText, select_pages
from extract.evaluate import AebPage, iter_trafilatura_eval
from extract.shingles import shingle_hashes
from extract.templates import TemplateRemover
from extract.terms import TermCounter, merge_counts, top_terms
from store import make_engine, schema
from store.models import Document, Page, University, UniversityDomain
from store.session import session_scope
from testbed.webkb import read_webkb
from tests.tiers import slow_fixture
from webometrics.stages import extract as stage
from webometrics.stages.extract.pool import run_pool

REPO = Path(__file__).resolve().parents[2]
SETTINGS = Settings()
INLINE = SETTINGS.replace(extract={"workers": 0})  # no pool to start
REBUILD = stage.ExtractScope(rebuild_documents=True)


def _engine(tmp_path: Path, name: str = "x.db"):
    engine = make_engine(f"sqlite:///{tmp_path / name}")
    schema.upgrade(engine)
    return engine


def _page(url: str, body: bytes, *, role: str = "external", **extra) -> dict:
    host = host_of(url)
    return {
        "url": url,
        "host": host,
        "registered_domain": registered_domain(host),
        "role": role,
        "http_status": 200,
        "content_type": extra.pop("content_type", "text/html"),
        "charset": extra.pop("charset", None),
        "content_length": len(body),
        "body": zlib.compress(body),
        "extraction_status": "pending",
        **extra,
    }


def _insert(engine, rows: list[dict]) -> None:
    with session_scope(engine) as s:
        s.add_all(Page(**r) for r in rows)


def _russian_cp1251(page: AebPage) -> bytes:
    text = page.html.decode("utf-8")
    text = re.sub(r"<meta charset=\"?[\w-]+\"?\s*/?>", "", text, flags=re.I)
    text = text.replace("<head>", '<head><meta charset="windows-1251">', 1)
    return text.encode("cp1251", errors="xmlcharrefreplace")


@pytest.fixture(scope="module")
def webkb_sites() -> dict[str, list]:
    archive = data_dir("webkb-4universities") / "webkb.tar.gz"
    sites: dict[str, list] = {"www.tc.cornell.edu": [], "www.cs.washington.edu": []}
    for p in read_webkb(archive):
        host = host_of(p.url)
        if host in sites and p.location is None and len(sites[host]) < 25:
            sites[host].append(p)
    return sites


@pytest.fixture(scope="module")
def corpus(aeb_pages, russian_page, webkb_sites) -> list[dict]:
    """~90 real pages: 40 news articles, a Russian article in windows-1251 (declared in
    meta, not in HTTP), a German page, 25 pages of one external site, 25 pages of a
    university's own site, a gzip body, an empty body and a truncated page."""
    rows = [_page(p.url, p.html) for p in aeb_pages[:40] if p.url != russian_page.url]
    rows.append(_page(russian_page.url, _russian_cp1251(russian_page)))
    german = next(p for p in iter_trafilatura_eval(limit=40) if ".de/" in p.url)
    rows.append(_page(german.url, german.html))
    for host, role in (("www.tc.cornell.edu", "external"), ("www.cs.washington.edu", "university")):
        for p in webkb_sites[host]:
            rows.append(_page(p.url, p.body, role=role, charset=None))
    raw_gz = next((data_dir("scrapinghub-aeb") / "html").glob("*.html.gz")).read_bytes()
    rows.append(_page("https://binary.example.org/file.html", raw_gz))
    rows.append(_page("https://empty.example.org/", b""))
    cut = aeb_pages[50]
    rows.append(_page(cut.url + "?truncated", cut.html[: len(cut.html) // 3]))
    return rows


@pytest.fixture(scope="module")
@slow_fixture
def extracted(tmp_path_factory, corpus):
    """The corpus extracted once with two workers; (engine, stats)."""
    engine = _engine(tmp_path_factory.mktemp("stage"))
    with session_scope(engine) as s:
        uni = University(name="University of Washington", country="United States")
        uni.domains.append(UniversityDomain(domain="washington.edu"))
        s.add(uni)
    _insert(engine, corpus)
    stats = stage.run(engine, SETTINGS.replace(extract={"workers": 2, "batch_size": 10}))
    return engine, stats


@pytest.mark.slow
def test_every_pending_page_gets_a_status(extracted, corpus):
    engine, stats = extracted
    assert stats.pages == len(corpus) and stats.workers == 2
    with session_scope(engine) as s:
        statuses = Counter(s.scalars(select(Page.extraction_status)))
        assert statuses["pending"] == 0
        by_url = {p.url: p for p in s.scalars(select(Page))}
    assert statuses == Counter(stats.by_status)
    assert by_url["https://binary.example.org/file.html"].extraction_status == "binary"
    assert by_url["https://empty.example.org/"].extraction_status == "empty"
    german = [p for p in by_url.values() if p.language == "de"]
    assert german and all(p.extraction_status == "language-filtered" for p in german)
    assert all(p.shingles is None for p in german)
    for p in by_url.values():
        assert p.extracted_at is not None
        if p.extraction_status != "ok":
            assert p.extraction_reason
    assert statuses["ok"] >= 70


def test_ok_pages_hold_text_language_and_shingles(extracted, aeb_pages):
    engine, _ = extracted
    with session_scope(engine) as s:
        pages = {p.url: p for p in s.scalars(select(Page).where(Page.extraction_status == "ok"))}
    news = [pages[p.url] for p in aeb_pages[:10] if p.url in pages]
    assert len(news) >= 8
    for page in news:
        assert page.text and page.title and page.language in ("en", "ru")
        assert 0 < page.language_score <= 1
        h = stage.shingles_of(page.shingles)
        expected = shingle_hashes(page.text, SETTINGS.shingle.k, page.language)
        assert np.array_equal(h, expected) and len(page.shingles) == 8 * len(h)


def test_russian_windows_1251_page(extracted, russian_page):
    engine, _ = extracted
    ru = russian_page
    with session_scope(engine) as s:
        page = s.scalars(select(Page).where(Page.url == ru.url)).one()
    assert page.extraction_status == "ok" and page.language == "ru"
    assert page.text == extract_page(ru.html, ru.url).text
    assert re.search("[а-я]{5}", page.text)


def test_documents_for_external_pages_and_domains(extracted):
    engine, stats = extracted
    with session_scope(engine) as s:
        ok = s.execute(
            select(Page.url, Page.registered_domain, Page.role).where(
                Page.extraction_status == "ok"
            )
        ).all()
        docs = {(d.unit, d.key): d for d in s.scalars(select(Document))}
    external = [r for r in ok if r.role != "university"]
    assert not any(r.registered_domain == "washington.edu" for r in external)
    page_docs = {k for u, k in docs if u == "page"}
    domain_docs = {k for u, k in docs if u == "domain"}
    assert page_docs == {r.url for r in external}
    assert domain_docs == {r.registered_domain for r in external}
    assert "washington.edu" not in domain_docs
    assert stats.page_documents == len(page_docs)
    assert stats.domain_documents == len(domain_docs)
    for (unit, _), d in docs.items():
        h = stage.shingles_of(d.shingles)
        assert d.n_shingles == len(h) and d.shingle_k == SETTINGS.shingle.k
        assert np.all(np.diff(h) > 0)
        assert d.text_length > 0 and d.language
        if unit == "page":
            assert d.page_id is not None and d.n_pages == 1


def test_multi_page_domain_document(extracted):
    engine, _ = extracted
    with session_scope(engine) as s:
        rows = s.execute(
            select(Page.url, Page.text, Page.language).where(
                Page.registered_domain == "cornell.edu", Page.extraction_status == "ok"
            )
        ).all()
        doc = s.scalars(
            select(Document).where(Document.unit == "domain", Document.key == "cornell.edu")
        ).one()
    assert len(rows) > SETTINGS.domain.max_pages
    expected = DomainDocumentBuilder.from_settings(SETTINGS).build(
        [PageText(r.url, r.text, r.language) for r in rows]
    )
    assert doc.n_pages == SETTINGS.domain.max_pages == expected.n_pages
    assert np.array_equal(stage.shingles_of(doc.shingles), expected.shingles)
    assert doc.text_length == expected.text_length


def test_documents_carry_their_term_counts(extracted):
    engine, _ = extracted
    cap = SETTINGS.domain.max_terms
    with session_scope(engine) as s:
        pages = {
            r.url: r
            for r in s.execute(
                select(Page.url, Page.text, Page.language).where(Page.extraction_status == "ok")
            )
        }
        docs = s.scalars(select(Document)).all()
        cornell = s.execute(
            select(Page.url, Page.text, Page.language)
            .where(Page.registered_domain == "cornell.edu", Page.extraction_status == "ok")
            .order_by(Page.id)
        ).all()
    counters: dict[str | None, TermCounter] = {}
    for d in docs:
        assert d.terms and d.n_terms == len(d.terms) <= cap
        assert all(isinstance(c, int) and c > 0 for c in d.terms.values())
        if d.unit == "page":
            p = pages[d.key]
            counter = counters.setdefault(p.language, TermCounter(language=p.language))
            assert d.terms == top_terms(counter.counts(p.text), cap)
    # a domain: the capped sum over its sampled pages' texts, site templates removed (the
    # removal itself: tests/extract/test_documents.py)
    texts = [r.text for r in cornell]
    chosen = select_pages([r.url for r in cornell], SETTINGS.domain.max_pages)
    remover = TemplateRemover(
        min_pages=SETTINGS.extract.template_min_pages,
        min_share=SETTINGS.extract.template_min_share,
    ).fit(texts)
    expected = top_terms(
        merge_counts(
            TermCounter(language=cornell[i].language).counts(remover.transform_one(texts[i]))
            for i in chosen
        ),
        cap,
    )
    (domain,) = [d for d in docs if d.unit == "domain" and d.key == "cornell.edu"]
    assert domain.terms == expected and domain.n_terms == len(expected)


def test_second_run_is_incremental(extracted, aeb_pages):
    engine, _ = extracted
    again = stage.run(engine, INLINE)
    assert again.pages == 0
    assert again.page_documents_written == 0 and again.domain_documents_written == 0
    new = aeb_pages[60]
    _insert(engine, [_page(new.url, new.html)])
    more = stage.run(engine, INLINE)
    assert more.pages == 1 and more.by_status == {"ok": 1}
    assert more.page_documents_written == 1 and more.domain_documents_written == 1
    # k changed: every document is rebuilt with the new k, no page is extracted again
    k3 = INLINE.replace(shingle={"k": 3})
    rebuilt = stage.run(engine, k3)
    assert rebuilt.pages == 0 and rebuilt.domain_documents_written == more.domain_documents
    with session_scope(engine) as s:
        assert set(s.scalars(select(Document.shingle_k))) == {3}


def test_redo_and_deleted_documents(tmp_path, aeb_pages):
    engine = _engine(tmp_path)
    _insert(engine, [_page(p.url, p.html) for p in aeb_pages[:3]])
    stage.run(engine, INLINE)
    with session_scope(engine) as s:
        assert s.scalar(select(func.count(Document.id))) == 6
    # keep only Russian pages now: the English pages are filtered and lose their documents
    ru_only = INLINE.replace(extract={"languages": ("ru",)})
    stats = stage.run(engine, ru_only, stage.ExtractScope(redo=("all",)))
    assert stats.reset == 3 and stats.by_status == {"language-filtered": 3}
    assert stats.documents_deleted == 6
    with session_scope(engine) as s:
        assert s.scalar(select(func.count(Document.id))) == 0
    with pytest.raises(Exception, match="cannot redo"):
        stage.run(engine, SETTINGS, stage.ExtractScope(redo=("pending",)))


@pytest.mark.slow
def test_a_page_that_kills_its_worker_is_isolated(tmp_path, aeb_pages):
    """A page whose extraction outlives the watchdog ends its worker; the pool is rebuilt,
    the pages in flight are retried one at a time, the culprit is marked error."""
    bodies = []
    for p in aeb_pages[40:181]:  # 140 real article bodies in one page: seconds of work
        m = re.search(r"<body[^>]*>(.*)</body>", p.html.decode("utf-8", "replace"), re.S | re.I)
        if m:
            bodies.append(f"<div>{m.group(1)}</div>")
    body = "<html><head><title>all</title></head><body>" + "".join(bodies) + "</body></html>"
    body = body.encode("utf-8")
    assert len(body) > 5_000_000
    small = [
        (i + 1, p.url, zlib.compress(p.html), "text/html", None, None, None)
        for i, p in enumerate(aeb_pages[:6])
    ]
    tasks = iter(
        [
            *small[:3],
            (99, "https://big.example.org/", zlib.compress(body), "text/html", None, None, None),
            *small[3:],
        ]
    )
    config = stage.WorkerConfig(
        ExtractOptions(timeout_seconds=None, max_html_bytes=50_000_000, languages=()),
        1,
        True,
        True,
        hard_seconds=0.75,
    )
    results: dict[int, dict] = {}
    restarts = run_pool(tasks, config, 2, lambda pid, cols: results.__setitem__(pid, cols))
    assert restarts == 2, {
        k: (v["extraction_status"], v["extraction_reason"]) for k, v in results.items()
    }
    assert results[99]["extraction_status"] == "error"
    assert "died twice" in results[99]["extraction_reason"]
    assert all(results[t[0]]["extraction_status"] == "ok" for t in small)


def _count(url: str) -> Counter:
    engine = make_engine(url)
    try:
        with session_scope(engine) as s:
            return Counter(s.scalars(select(Page.extraction_status)))
    finally:
        engine.dispose()


def _start(url: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "webometrics",
            "-q",
            "--db-url",
            url,
            "extract",
            "--workers",
            "2",
            "--batch-size",
            "5",
            *extra,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_done(url: str, proc: subprocess.Popen, at_least: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        done = sum(v for k, v in _count(url).items() if k != "pending")
        if done >= at_least:
            return
        time.sleep(0.2)
    pytest.fail("the extraction made no progress")


def _group_gone(pgid: int, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = []
        for p in psutil.process_iter(["pid"]):
            with __import__("contextlib").suppress(psutil.Error):
                if os.getpgid(p.info["pid"]) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
        if not alive:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("how", ["ctrl-c", "kill-9"])
@pytest.mark.slow
def test_interrupt_and_resume_through_the_cli(tmp_path, aeb_pages, how):
    engine = _engine(tmp_path)
    _insert(engine, [_page(p.url, p.html) for p in aeb_pages[:120]])
    engine.dispose()
    url = f"sqlite:///{tmp_path / 'x.db'}"
    proc = _start(url, "--no-documents")
    _wait_done(url, proc, at_least=10)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert b"interrupted" in err
        # extract makes no run `webometrics runs` lists: the message says what to do
        assert b"run `webometrics extract` again to go on" in err, err
    else:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert _group_gone(proc.pid), "worker processes outlived the interrupted run"
    half = _count(url)
    assert half["pending"] > 0 and sum(half.values()) - half["pending"] >= 10
    resumed = _start(url)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"extracted {half['pending']} pages" in out.decode()
    final = _count(url)
    assert final["pending"] == 0 and sum(final.values()) == 120
    # the resumed pages equal an uninterrupted extraction
    engine = make_engine(url)
    with session_scope(engine) as s:
        stored = dict(s.execute(select(Page.url, Page.text)).all())
    engine.dispose()
    for p in aeb_pages[:120:15]:
        assert stored[p.url] == (extract_page(p.html, p.url).text or None)


def test_domain_rebuilt_when_one_of_its_pages_drops_out(tmp_path, webkb_sites):
    engine = _engine(tmp_path)
    pages = webkb_sites["www.tc.cornell.edu"][:4]
    _insert(engine, [_page(p.url, p.body) for p in pages])
    stage.run(engine, INLINE)
    with session_scope(engine) as s:
        ok = s.scalars(select(Page.url).where(Page.extraction_status == "ok")).all()
        doc = s.scalars(select(Document).where(Document.unit == "domain")).one()
        assert doc.n_pages == len(ok) >= 3
        s.execute(
            Page.__table__.update().where(Page.url == ok[0]).values(extraction_status="pending")
        )
    stats = stage.run(engine, INLINE.replace(extract={"languages": ("ru",)}))
    assert stats.by_status == {"language-filtered": 1}
    assert stats.domain_documents_written == 1 and stats.documents_deleted == 1
    with session_scope(engine) as s:
        doc = s.scalars(select(Document).where(Document.unit == "domain")).one()
        assert doc.n_pages == len(ok) - 1
        assert ok[0] not in set(s.scalars(select(Document.key)))


def _terms(engine) -> dict[tuple[str, str], tuple[dict | None, int]]:
    with session_scope(engine) as s:
        rows = s.execute(select(Document.unit, Document.key, Document.terms, Document.n_terms))
        return {(r.unit, r.key): (r.terms, r.n_terms) for r in rows}


def test_documents_stored_before_migration_0005_get_their_terms(db_url, webkb_sites, aeb_pages):
    """Documents built before the term counts (back to revision 0004 and up again: the rows
    stay, ``terms`` NULL) are filled by ``--rebuild-documents`` and by a plain run, once;
    ``[domain] max_terms`` caps them, the most frequent kept."""
    engine = make_engine(db_url)
    schema.upgrade(engine)
    rows = [_page(p.url, p.body) for p in webkb_sites["www.tc.cornell.edu"][:4]]
    _insert(engine, [*rows, _page(aeb_pages[0].url, aeb_pages[0].html)])
    stage.run(engine, INLINE)
    fresh = _terms(engine)
    assert len(fresh) == 7 and all(t and n == len(t) for t, n in fresh.values())

    def before_0005() -> None:
        schema.downgrade(engine, "0004")
        schema.upgrade(engine)
        assert all(v == (None, 0) for v in _terms(engine).values())

    before_0005()
    stats = stage.run(engine, INLINE, REBUILD)
    assert stats.page_documents_written == 5 and _terms(engine) == fresh
    before_0005()
    stats = stage.run(engine, INLINE)
    assert stats.page_documents_written + stats.domain_documents_written == 7
    assert _terms(engine) == fresh
    again = stage.run(engine, INLINE)
    assert again.page_documents_written == again.domain_documents_written == 0
    capped = stage.run(engine, INLINE.replace(domain={"max_terms": 5}), REBUILD)
    assert capped.domain_documents_written == 2
    assert _terms(engine) == {
        key: (top_terms(t, 5), min(5, n)) for key, (t, n) in fresh.items() if t is not None
    }
    engine.dispose()


def test_the_statistics_leave_out_a_step_not_run(tmp_path, aeb_pages):
    """As the pipeline records them: no ``reset`` without ``redo``, no document counts
    without the documents."""
    engine = _engine(tmp_path)
    _insert(engine, [_page(p.url, p.html) for p in aeb_pages[:3]])
    pages_only = stage.run(engine, INLINE, stage.ExtractScope(documents=False)).stats()
    assert set(pages_only) == {
        "pages",
        "by_status",
        "workers",
        "worker_restarts",
        "seconds",
        "pages_per_second",
    }
    assert pages_only["pages"] == 3 and pages_only["workers"] == 0
    redone = stage.run(engine, INLINE, stage.ExtractScope(redo=("ok",))).stats()
    assert redone["reset"] == 3 and redone["pages"] == 3 and redone["page_documents"] == 3
    assert list(redone)[:2] == ["reset", "pages"] and "documents_seconds" in redone
    engine.dispose()
