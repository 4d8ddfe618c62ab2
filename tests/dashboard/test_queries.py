"""The dashboard's read queries (store.queries) on SQLite and PostgreSQL, through a
read-only engine, against the fixture's known rows."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

import pytest
from sqlalchemy import text

from store import make_engine, queries
from tests.stored_world import (
    CLUSTERINGS,
    DOMAINS,
    DUPLICATES,
    NAMED,
    NO_DOCUMENT,
    theme_terms,
)


@pytest.fixture
def ro(filled):
    engine = make_engine(filled.url, read_only=True)
    yield filled, engine
    engine.dispose()


def test_runs(ro) -> None:
    facts, engine = ro
    crawls = queries.list_crawl_runs(engine)
    assert [r.id for r in crawls] == sorted(
        [*facts.run_ids.values(), facts.failed_run_id], reverse=True
    )
    failed = next(r for r in crawls if r.id == facts.failed_run_id)
    assert failed.status == "failed" and "proxy refused" in failed.error
    assert failed.seconds == 60.0
    pipes = queries.list_pipeline_runs(engine)
    assert [p.status for p in pipes] == ["failed", "finished"]
    assert [s["name"] for s in pipes[1].stages] == ["crawl", "extract", "dedup", "cluster"]
    assert pipes[1].seconds == 42 * 60


def test_clusterings_scope_and_levels(ro) -> None:
    facts, engine = ro
    spbu = facts.university_ids["spbu.ru"]
    rows = queries.list_clusterings(engine, university_id=spbu, direction="outgoing")
    assert [r.id for r in rows] == [facts.clustering_ids[("spbu.ru", "outgoing")]]
    c = rows[0]
    assert (c.university_id, c.direction, c.run_id) == (spbu, "outgoing", facts.run_ids[1])
    assert [lvl["r"] for lvl in c.levels] == [8, 6, 4, 2]
    assert [lvl["n_clusters"] for lvl in c.levels] == [5, 4, 2, 2]
    assert len(queries.list_clusterings(engine)) == 3
    assert queries.list_clusterings(engine, university_id=facts.university_ids["nsu.ru"]) == []


def test_clusters_documents_and_pages(ro) -> None:
    facts, engine = ro
    cid = facts.clustering_ids[("spbu.ru", "outgoing")]
    final = queries.list_clusters(engine, cid)
    groups = CLUSTERINGS[("spbu.ru", "outgoing")]
    assert [(c.size, c.theme_terms) for c in final] == [
        (len(m), theme_terms(("spbu.ru", "outgoing"), name)) for name, m in groups.items()
    ]
    assert [c.size for c in final] == [3, 2]
    # the clusters of a named clustering carry their theme
    key = ("spbu.ru", "citing")
    named = queries.list_clusters(engine, facts.clustering_ids[key])
    assert [c.theme_terms for c in named] == [theme_terms(key, n) for n in CLUSTERINGS[key]]
    assert key in NAMED and named[0].theme_terms[0] == "ru-web-term"
    only = queries.list_clusters(engine, cid, categories=["scientific_communities"])
    assert [c.size for c in only] == [3]
    assert queries.cluster_levels(engine, cid) == [(-1, 2), (0, 5), (2, 2)]
    assert len(queries.list_clusters(engine, cid, level=0)) == 5
    pages = queries.domain_pages(engine, ["vk.com", "lenta.ru"], per_domain=2, roles=["external"])
    assert [p.url for p in pages] == [
        "https://lenta.ru/spbu.ru/0",
        "https://vk.com/nsu.ru/0",
        "https://vk.com/spbu.ru/0",
    ]
    assert all(p.role == "external" for p in pages)
    assert queries.domain_pages(engine, []) == []


def test_duplicates(ro) -> None:
    facts, engine = ro
    groups = queries.duplicate_groups(engine, facts.dedup_run_id)
    assert [(g.size, g.canonical_key) for g in groups] == [
        (3, "https://vk.com/spbu.ru/0"),
        (2, "https://mit.edu/spbu.ru/0"),
    ]
    assert [
        g.size for g in queries.duplicate_groups(engine, facts.dedup_run_id, language="en")
    ] == [2]
    members = queries.duplicate_members(engine, [groups[0].id])
    assert [(m.key, m.canonical) for m in members] == [
        ("https://vk.com/spbu.ru/0", True),
        ("https://vk.com/spbu.ru/1", False),
        ("https://vk.com/spbu.ru/2", False),
    ]
    # the languages of the domain documents and of the near-duplicate page documents
    langs = Counter(lang for dom, (lang, _c, _s) in DOMAINS.items() if dom not in NO_DOCUMENT)
    langs.update(DOMAINS[urlsplit(u).hostname][0] for c, o in DUPLICATES for u in (c, *o))
    assert queries.document_languages(engine) == sorted(langs, key=lambda k: (-langs[k], k))


def test_read_only_engine_refuses_writes(ro) -> None:
    _facts, engine = ro
    with pytest.raises(Exception) as info, engine.begin() as conn:
        conn.execute(text("UPDATE university SET rank = 1"))
    assert "read" in str(info.value).lower()
