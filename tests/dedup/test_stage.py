"""The dedup stage on a real SQLite database, through the command line too."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from sqlalchemy import func, select

from core.exceptions import NothingToDoError, ParameterError
from core.settings import Settings
from store import make_engine, schema
from store.models import DedupRun, Document, DuplicateGroup, DuplicateMember, Page
from store.session import session_scope
from webometrics.stages import dedup


@pytest.fixture
def stored(tmp_path, planted):
    """Pages and page documents of the planted corpus, plus a domain document per page."""
    url = f"sqlite:///{tmp_path / 'dedup.db'}"
    engine = make_engine(url)
    schema.upgrade(engine)
    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    from extract.shingles import shingle_hashes

    with session_scope(engine) as s:
        for k, text in enumerate(planted.texts):
            page = Page(
                url=f"https://site{k}.example.org/story",
                host=f"site{k}.example.org",
                registered_domain=f"site{k}.example.org",
                text=text,
                language="en",
                extraction_status="ok",
                fetched_at=t0 + dt.timedelta(hours=k),
            )
            s.add(page)
            s.flush()
            s.add(
                Document(
                    unit="page",
                    key=page.url,
                    page_id=page.id,
                    domain=page.registered_domain,
                    language="en",
                    text_length=len(text),
                    fetched_at=page.fetched_at,
                )
            )
            sh = shingle_hashes(text, 5, "en")
            s.add(
                Document(
                    unit="domain",
                    key=page.registered_domain,
                    domain=page.registered_domain,
                    language="en",
                    text_length=len(text),
                    n_shingles=len(sh),
                    shingles=sh.astype("<u8").tobytes(),
                    shingle_k=5,
                    fetched_at=page.fetched_at,
                )
            )
    yield url, engine
    engine.dispose()


def _groups(engine, run_id):
    with session_scope(engine) as s:
        out = {}
        for g in s.scalars(select(DuplicateGroup).where(DuplicateGroup.dedup_run_id == run_id)):
            keys = sorted(s.get(Document, m.document_id).key for m in g.members)
            out[tuple(keys)] = s.get(Document, g.canonical_document_id).key
        return out


def _dedup(**keys: str) -> Settings:
    """The default settings with these ``[dedup]`` keys."""
    return Settings().replace(dedup=keys)


def test_stage_writes_groups_with_canonical_documents(stored, planted):
    _url, engine = stored
    settings = Settings().replace(dedup={"canonical": "earliest"})
    stats = dedup.run(engine, settings.replace(dedup={"method": "a12-3plus5", "unit": "page"}))
    assert stats.n_documents == len(planted.texts)
    groups = _groups(engine, stats.dedup_run_id)
    site = "https://site{}.example.org/story".format
    assert groups[(site(0), site(planted.exact))] == site(0)  # earliest fetched
    assert groups[tuple(sorted((site(2), site(planted.edited))))] == site(2)
    assert stats.n_duplicates == sum(len(k) - 1 for k in groups)
    with session_scope(engine) as s:
        row = s.get(DedupRun, stats.dedup_run_id)
        assert (row.method, row.unit, row.grouping) == ("a12-3plus5", "page", "components")
        assert row.parameters["canonical"] == "earliest"
        assert s.scalar(select(func.count()).select_from(DuplicateMember)) == sum(
            len(k) for k in groups
        )


def test_stage_on_domain_documents_uses_page_texts_or_shingles(stored, planted):
    _url, engine = stored
    stats = dedup.run(engine, _dedup(method="broder-14x6", unit="domain", grouping="fpmax"))
    groups = _groups(engine, stats.dedup_run_id)
    assert ("site0.example.org", f"site{planted.exact}.example.org") in groups
    # without page texts, text methods refuse and shingle methods use stored shingles
    with session_scope(engine) as s:
        for p in s.scalars(select(Page)):
            p.text = None
    with pytest.raises(ParameterError, match="reads text"):
        dedup.run(engine, _dedup(method="a4-long-sent", unit="domain"))
    stats = dedup.run(engine, _dedup(method="minhash-lsh", unit="domain"))
    assert ("site0.example.org", f"site{planted.exact}.example.org") in _groups(
        engine, stats.dedup_run_id
    )


def test_stage_without_documents_says_what_to_do(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    schema.upgrade(engine)
    with pytest.raises(NothingToDoError, match="webometrics extract"):
        dedup.run(engine, _dedup(method="a0-md5", unit="page"))
    engine.dispose()


@pytest.mark.slow
def test_command_line(stored, planted, webometrics):
    url, engine = stored
    out = webometrics("dedup", "--list-methods", db=url)
    assert out.returncode == 0 and "a12-3plus5" in out.stdout and "spotsigs" in out.stdout
    out = webometrics(
        "dedup", "--method", "simhash", "--unit", "page", "--grouping", "cliques",
        "--param", "k=4", db=url,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "non-canonical documents will be left out of clustering" in out.stdout
    with session_scope(engine) as s:
        row = s.scalars(select(DedupRun).order_by(DedupRun.id.desc())).first()
        assert row.parameters["k"] == 4 and row.n_groups >= 2
    bad = webometrics("dedup", "--method", "nope", "--unit", "page", db=url)
    assert bad.returncode == 2 and "unknown near-duplicate method" in bad.stderr
    lengths = np.array([len(t) for t in planted.texts])
    assert lengths.min() > 0
