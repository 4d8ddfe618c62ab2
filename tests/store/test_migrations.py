"""Migrations against real SQLite and PostgreSQL: upgrade, compare, downgrade, round-trip."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select, text

from core.exceptions import SchemaOutOfDateError
from store import make_engine, schema, session_scope
from store import models as m


def test_upgrade_matches_models_and_downgrades(db_url: str) -> None:
    engine = make_engine(db_url)
    schema.upgrade(engine)
    assert schema.current_revision(engine) == schema.head_revision(engine)
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(ctx, m.Base.metadata)
    assert diff == [], f"models and migrations differ: {diff}"
    schema.upgrade(engine)  # a second upgrade changes nothing
    assert schema.current_revision(engine) == schema.head_revision(engine)
    schema.downgrade(engine, "base")
    tables = set(inspect(engine).get_table_names()) - {"alembic_version"}
    assert tables == set()
    assert schema.current_revision(engine) is None
    engine.dispose()


def test_out_of_date_schema_is_refused(db_url: str) -> None:
    engine = make_engine(db_url)
    with pytest.raises(SchemaOutOfDateError, match="webometrics db upgrade"):
        schema.require_current(engine)
    engine.dispose()


def test_round_trip_every_model(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    now = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    sig = np.arange(8, dtype=np.uint64) * np.uint64(2**61 - 1)
    with session_scope(engine) as s:
        uni = m.University(name="Test U", country="Nowhere", rank=7, home_urls=["https://t.edu/"])
        uni.domains.append(m.UniversityDomain(domain="t.edu"))
        run = m.CrawlRun(kind="outgoing", settings={"depth": 2}, stats={"pages": 1})
        s.add_all([uni, run])
        s.flush()
        page = m.Page(
            url="https://t.edu/",
            host="t.edu",
            registered_domain="t.edu",
            university_id=uni.id,
            role="university",
            http_status=200,
            content_type="text/html",
            fetched_at=now,
            body=b"\x78\x9c",
            text="Привет, мир",
            title="T",
            language="ru",
            language_score=0.9,
            extraction_status="ok",
            first_run_id=run.id,
            last_run_id=run.id,
        )
        s.add(page)
        s.flush()
        s.add(
            m.Link(
                run_id=run.id,
                source_page_id=page.id,
                target_url="https://x.org/a",
                target_host="x.org",
                target_domain="x.org",
                anchor="X",
                nofollow=True,
            )
        )
        s.add(
            m.Citation(
                run_id=run.id,
                university_id=uni.id,
                citing_url="https://c.org/",
                citing_domain="c.org",
                source="urls",
                status="verified",
            )
        )
        s.add(
            m.Environment(
                run_id=run.id,
                university_id=uni.id,
                domain="x.org",
                direction="outgoing",
                link_count=1,
                page_count=1,
            )
        )
        doc = m.Document(
            unit="domain",
            key="x.org",
            domain="x.org",
            n_shingles=8,
            shingles=sig.tobytes(),
            shingle_k=1,
            terms={"физик": 3, "univers": 1},
            n_terms=2,
        )
        s.add(doc)
        s.flush()
        s.add(
            m.Signature(
                document_id=doc.id,
                num_perm=8,
                seed=1,
                scheme="s",
                hash_func="xxh64",
                hashvalues=sig.tobytes(),
            )
        )
        dedup = m.DedupRun(method="md5", n_documents=1)
        group = m.DuplicateGroup(method="md5", canonical_document_id=doc.id, size=1)
        group.members.append(m.DuplicateMember(document_id=doc.id))
        dedup.groups.append(group)
        clustering = m.Clustering(
            unit="domain", parameters={"threshold": 0.3}, levels=[{"r": 16, "b": 8}]
        )
        cluster = m.Cluster(level=-1, label=0, size=1, theme_terms=["физика"], category="media")
        cluster.members.append(m.ClusterMember(document_id=doc.id))
        clustering.clusters.append(cluster)
        s.add_all(
            [
                dedup,
                clustering,
                m.DomainCategory(domain="x.org", category="media", evidence={"k": ["news"]}),
                m.PipelineRun(stages=[{"name": "crawl", "status": "ok"}]),
            ]
        )
    with session_scope(engine) as s:
        got = s.scalar(select(m.Page).where(m.Page.url == "https://t.edu/"))
        assert got is not None and got.text == "Привет, мир" and got.fetched_at == now
        assert s.scalar(select(m.University)).domains[0].domain == "t.edu"
        stored = s.scalar(select(m.Signature))
        assert np.array_equal(np.frombuffer(stored.hashvalues, dtype=np.uint64), sig)
        assert s.scalar(select(m.Cluster)).theme_terms == ["физика"]
        assert s.scalar(select(m.Clustering)).levels == [{"r": 16, "b": 8}]
        stored_doc = s.scalar(select(m.Document))
        assert stored_doc.terms == {"физик": 3, "univers": 1} and stored_doc.n_terms == 2
        for model in (
            m.Link,
            m.Citation,
            m.Environment,
            m.Document,
            m.DedupRun,
            m.DuplicateGroup,
            m.DuplicateMember,
            m.ClusterMember,
            m.DomainCategory,
            m.PipelineRun,
            m.CrawlRun,
            m.UniversityDomain,
        ):
            assert len(s.scalars(select(model)).all()) == 1, model.__name__
    engine.dispose()


def test_named_constraints_and_foreign_keys(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    insp = inspect(engine)
    uniques = {u["name"] for u in insp.get_unique_constraints("page")}
    assert "uq_page_url" in uniques
    fks = {f["name"] for f in insp.get_foreign_keys("link")}
    assert "fk_link_source_page_id_page" in fks
    # foreign keys are enforced (SQLite gets PRAGMA foreign_keys=ON)
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError), session_scope(engine) as s:
        s.add(m.Link(source_page_id=999999, target_url="u", target_host="h", target_domain="h"))
    engine.dispose()


def test_0005_term_columns_up_and_down_keep_the_documents(db_url: str) -> None:
    """Revision 0005 adds ``document.terms`` (NULL) and ``n_terms`` (0) to the stored rows;
    its downgrade drops them in place: the documents and their signatures stay (a batch
    copy of the table would cascade-delete the signatures on SQLite)."""
    engine = make_engine(db_url)
    schema.upgrade(engine, "0004")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO document (id, unit, key, domain, n_pages, text_length, n_shingles,"
                " created_at) VALUES (1, 'domain', 'x.org', 'x.org', 1, 10, 0, :t)"
            ),
            {"t": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)},
        )
        conn.execute(
            text(
                "INSERT INTO signature (document_id, num_perm, seed, scheme, hash_func,"
                " hashvalues, created_at) VALUES (1, 1, 1, 's', 'h', :b, :t)"
            ),
            {"b": bytes(8), "t": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)},
        )
    schema.upgrade(engine)
    with session_scope(engine) as s:
        doc = s.scalars(select(m.Document)).one()
        assert doc.terms is None and doc.n_terms == 0
        doc.terms, doc.n_terms = {"term": 2}, 1
    with session_scope(engine) as s:
        assert s.execute(select(m.Document.terms, m.Document.n_terms)).one() == ({"term": 2}, 1)
    schema.downgrade(engine, "0004")
    assert schema.current_revision(engine) == "0004"
    columns = {c["name"] for c in inspect(engine).get_columns("document")}
    assert {"terms", "n_terms"}.isdisjoint(columns) and "shingles" in columns
    with engine.connect() as conn:
        assert conn.execute(text("SELECT key FROM document")).scalars().all() == ["x.org"]
        assert conn.execute(text("SELECT COUNT(*) FROM signature")).scalar() == 1
    schema.upgrade(engine)
    assert schema.current_revision(engine) == schema.head_revision(engine)
    engine.dispose()
