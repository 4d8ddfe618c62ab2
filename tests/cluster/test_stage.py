"""``webometrics cluster`` on a real SQLite database filled with documents built from real
Reuters stories: what it stores, filters, duplicates, determinism, the command line."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from cluster import LSHLink
from core import defaults as D
from core.exceptions import NothingToDoError, ParameterError, StageError
from core.settings import Settings
from extract import Shingler
from store import make_engine, schema
from store.models import (
    Cluster,
    Clustering,
    ClusterMember,
    CrawlRun,
    DedupRun,
    Document,
    DuplicateGroup,
    DuplicateMember,
    Environment,
    Signature,
    University,
)
from store.session import session_scope
from tests.cli import run_webometrics as _cli
from webometrics.cli import build_parser
from webometrics.commands.cluster import cluster_settings
from webometrics.stages import cluster as stage

REPO = Path(__file__).resolve().parents[2]
N_DOMAINS = 240
PARAMS = {"threshold": 0.3, "r0": 8, "r_min": 3, "step": 1}
P = D.MINHASH_NUM_PERM
#: the paper's single link on the domain documents
PAPER = Settings().replace(cluster={"method": "paper", "unit": "domain", **PARAMS})


def options(*argv: str, settings: Settings | None = None) -> Settings:
    """The settings ``webometrics cluster ARGV`` runs with."""
    args = build_parser().parse_args(["cluster", *argv])
    return cluster_settings(settings or Settings(), args)


@pytest.fixture
def stored(tmp_path, reuters_2000):
    """240 domain documents, each the 1-word shingles of two consecutive Reuters stories
    (so topics repeat across domains), in the environments of two universities; plus a
    dedup run that marks three copies as duplicates."""
    url = f"sqlite:///{tmp_path / 'cluster.db'}"
    engine = make_engine(url)
    schema.upgrade(engine)
    shingler = Shingler(k=1, language="en")
    with session_scope(engine) as s:
        run = CrawlRun(kind="both", status="finished")
        uni_a = University(name="Alpha University", country="Russia", rank=1)
        uni_b = University(name="Beta University", country="UK", rank=2)
        s.add_all([run, uni_a, uni_b])
        s.flush()
        docs = []
        for k in range(N_DOMAINS):
            text = reuters_2000[2 * k].text + "\n\n" + reuters_2000[2 * k + 1].text
            sh = shingler.hashes(text)
            domain = f"site{k:03d}.example.com"
            doc = Document(
                unit="domain",
                key=domain,
                domain=domain,
                language="en",
                text_length=len(text),
                n_shingles=len(sh),
                shingles=sh.astype("<u8").tobytes(),
                shingle_k=1,
            )
            docs.append(doc)
            # Alpha: outgoing to the even sites, citing from k < 80; Beta: the rest
            if k % 2 == 0:
                s.add(Environment(run_id=run.id, university_id=uni_a.id, domain=domain,
                                  direction="outgoing", link_count=3))  # fmt: skip
            if k < 80:
                s.add(Environment(run_id=run.id, university_id=uni_a.id, domain=domain,
                                  direction="citing", link_count=1))  # fmt: skip
            if k >= 80 and k % 2 == 1:
                s.add(Environment(run_id=run.id, university_id=uni_b.id, domain=domain,
                                  direction="outgoing", link_count=2))  # fmt: skip
        # three exact copies of site000's document on other domains
        for c in range(3):
            domain = f"copy{c}.example.net"
            docs.append(
                Document(unit="domain", key=domain, domain=domain, language="en",
                         shingles=docs[0].shingles, n_shingles=docs[0].n_shingles, shingle_k=1)
            )  # fmt: skip
            s.add(Environment(run_id=run.id, university_id=uni_a.id, domain=domain,
                              direction="outgoing", link_count=1))  # fmt: skip
        s.add_all(docs)
        s.flush()
        dedup = DedupRun(method="a0-md5", unit="domain", n_documents=len(docs), n_groups=1)
        s.add(dedup)
        s.flush()
        group = DuplicateGroup(dedup_run_id=dedup.id, method="a0-md5",
                               canonical_document_id=docs[0].id, size=4)  # fmt: skip
        s.add(group)
        s.flush()
        for d in (docs[0], *docs[N_DOMAINS:]):
            s.add(DuplicateMember(group_id=group.id, document_id=d.id))
    yield url, engine
    engine.dispose()


def partition(engine, clustering_id: int, level: int = -1) -> set[frozenset[str]]:
    with session_scope(engine) as s:
        rows = s.execute(
            select(Cluster.label, Document.key)
            .join(ClusterMember, ClusterMember.cluster_id == Cluster.id)
            .join(Document, Document.id == ClusterMember.document_id)
            .where(Cluster.clustering_id == clustering_id, Cluster.level == level)
        ).all()
    groups: dict[int, set[str]] = defaultdict(set)
    for label, key in rows:
        groups[label].add(key)
    return {frozenset(g) for g in groups.values()}


def test_stores_signatures_clustering_levels_and_clusters(stored):
    _url, engine = stored
    stats = stage.cluster_one(engine, PAPER)
    assert stats.n_documents == N_DOMAINS  # the three copies are left out
    assert stats.n_excluded_duplicates == 3
    assert (stats.method, stats.linkage, stats.direction) == ("paper", "single", "both")
    with session_scope(engine) as s:
        c = s.get(Clustering, stats.clustering_id)
        assert (c.algorithm, c.linkage, c.unit) == ("lsh-link", "single", "domain")
        assert c.parameters["threshold"] == 0.3 and c.parameters["num_perm"] == P
        assert c.parameters["levels_r"] == [8, 7, 6, 5, 4, 3]
        assert c.filter["direction"] == "both" and c.filter["university"] is None
        assert c.n_documents == N_DOMAINS and c.n_excluded_duplicates == 3
        assert [lvl["r"] for lvl in c.levels] == [8, 7, 6, 5, 4, 3]
        for lvl in c.levels:
            assert lvl["b"] == P // lvl["r"]
            assert lvl["s_curve"] == pytest.approx((1 / lvl["b"]) ** (1 / lvl["r"]), abs=1e-6)
            assert {"n_clusters", "n_candidates", "n_linked"} <= set(lvl)
        assert c.n_clusters == c.levels[-1]["n_clusters"]
        for level in (-1, *range(6)):
            sizes = s.scalars(
                select(Cluster.size).where(Cluster.clustering_id == c.id, Cluster.level == level)
            ).all()
            assert sum(sizes) == N_DOMAINS
            n_members = s.scalar(
                select(func.count())
                .select_from(ClusterMember)
                .join(Cluster)
                .where(Cluster.clustering_id == c.id, Cluster.level == level)
            )
            assert n_members == N_DOMAINS
        sigs = s.scalars(select(Signature)).all()
        assert len(sigs) == N_DOMAINS == stats.signatures_written
        assert {(g.num_perm, g.seed, g.scheme) for g in sigs} == {(P, 1, "affine32")}
        assert sigs[0].hash_func == "xxh3_64+fmix64|low32"
        assert len(sigs[0].hashvalues) == P * 8
        ids = s.scalars(
            select(Document.id).where(Document.key.like("site%")).order_by(Document.id)
        ).all()
        shingles = [
            np.frombuffer(s.get(Document, i).shingles, dtype="<u8").astype(np.uint64) for i in ids
        ]
        keys = [s.get(Document, i).key for i in ids]
    # the stored clusters are LSHLink's on the same documents
    model = LSHLink(**PARAMS).fit(shingles)
    direct: dict[int, set[str]] = defaultdict(set)
    for key, label in zip(keys, model.labels_.tolist(), strict=True):
        direct[label].add(key)
    assert partition(engine, stats.clustering_id) == {frozenset(g) for g in direct.values()}
    assert stats.n_multi >= 10  # topics repeat: real clusters, not only singletons
    # levels only merge: every level's partition refines the next one
    parts = [partition(engine, stats.clustering_id, level) for level in range(6)]
    for fine, coarse in pairwise(parts):
        assert all(any(f <= g for g in coarse) for f in fine)


def test_same_parameters_and_seed_same_clusters(stored):
    _url, engine = stored
    settings = PAPER.replace(minhash={"seed": 5})
    first = stage.cluster_one(engine, settings)
    second = stage.cluster_one(engine, settings)
    assert second.signatures_written == 0  # unchanged signatures are kept
    assert partition(engine, first.clustering_id) == partition(engine, second.clustering_id)
    for level in range(6):
        assert partition(engine, first.clustering_id, level) == partition(
            engine, second.clustering_id, level
        )


def test_duplicates_kept_on_request(stored):
    _url, engine = stored
    stats = stage.cluster_one(engine, PAPER, keep_duplicates=True)
    assert stats.n_documents == N_DOMAINS + 3 and stats.n_excluded_duplicates == 0
    copies = {"site000.example.com", *(f"copy{c}.example.net" for c in range(3))}
    assert any(copies <= group for group in partition(engine, stats.clustering_id))


def test_university_and_direction_filters(stored):
    _url, engine = stored
    out = stage.cluster_one(engine, PAPER, "Alpha University", "outgoing")
    assert out.n_documents == N_DOMAINS // 2 and out.n_excluded_duplicates == 3
    keys = set().union(*partition(engine, out.clustering_id))
    assert keys == {f"site{k:03d}.example.com" for k in range(0, N_DOMAINS, 2)}
    both = stage.cluster_one(engine, PAPER, "Alpha University")
    assert both.n_documents == N_DOMAINS // 2 + 40  # even sites, and odd ones below 80
    citing = stage.cluster_one(engine, PAPER, direction="citing")
    assert citing.n_documents == 80
    beta = stage.cluster_one(engine, PAPER, "Beta University")
    assert beta.n_documents == (N_DOMAINS - 80) // 2
    with session_scope(engine) as s:
        c = s.get(Clustering, out.clustering_id)
        assert c.filter["university"] == "Alpha University"
        assert c.filter["direction"] == "outgoing"
        assert c.filter["university_id"] == s.scalar(
            select(University.id).where(University.name == "Alpha University")
        )


def test_each_university_and_direction_on_its_own(stored):
    _url, engine = stored
    result = stage.run(engine, PAPER)
    scopes = [(c.university, c.direction) for c in result.clusterings]
    assert scopes == [
        ("Alpha University", "outgoing"),
        ("Alpha University", "citing"),
        ("Beta University", "outgoing"),
    ]
    assert result.skipped == ("Beta University (citing)",)
    assert result.n_documents == N_DOMAINS // 2 + 80 + (N_DOMAINS - 80) // 2
    assert result.n_clusters == sum(c.n_clusters for c in result.clusterings)
    # the statistics a pipeline run records: the keys of every clustering, as JSON
    stats = result.stats()
    assert set(stats) == {"clusterings", "skipped", "n_documents", "n_clusters"}
    assert stats["skipped"] == ["Beta University (citing)"]
    first = stats["clusterings"][0]
    assert list(first) == [
        "clustering_id", "unit", "linkage", "method", "university", "direction",
        "n_documents", "n_excluded_duplicates", "dedup_run_id", "n_clusters", "n_multi",
        "largest", "n_levels", "signatures_written", "signature_store", "workers", "seconds",
    ]  # fmt: skip
    assert first["university"] == "Alpha University" and first["method"] == "paper"
    every = stage.run(engine, PAPER, stage.ClusterScope(university="all"))
    assert [(c.university, c.direction) for c in every.clusterings] == [(None, "both")]
    alpha = stage.run(engine, PAPER, stage.ClusterScope("Alpha University", "citing"))
    assert [c.n_documents for c in alpha.clusterings] == [80] and alpha.skipped == ()


def test_errors_say_what_to_do(stored, tmp_path):
    _url, engine = stored
    with pytest.raises(ParameterError, match="no university named 'Gamma'"):
        stage.cluster_one(engine, PAPER, "Gamma")
    with pytest.raises(ParameterError, match="direction must be one of"):
        stage.cluster_one(engine, PAPER, direction="sideways")
    given = r"cluster\.threshold = 1\.5: Input should be less than 1 \(a value given on the"
    with pytest.raises(ParameterError, match=given):
        options("--threshold", "1.5")
    with pytest.raises(ParameterError, match=r"r0=5000 must be an integer in 1\.\.num_perm="):
        stage.cluster_one(engine, PAPER.replace(cluster={"r0": 5000}))
    with pytest.raises(NothingToDoError, match="no page documents"):
        stage.cluster_one(engine, PAPER.replace(cluster={"unit": "page"}))
    # one selection: its own message; several: skipped, and an error when all are empty
    pages = options("--unit", "page")
    with pytest.raises(NothingToDoError, match="no page documents of Beta University"):
        stage.run(engine, pages, stage.ClusterScope("Beta University", "citing"))
    with pytest.raises(NothingToDoError, match="for any university and direction"):
        stage.run(engine, pages)
    empty = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    schema.upgrade(empty)
    with pytest.raises(StageError, match="webometrics extract"):
        stage.run(empty, Settings())
    empty.dispose()


def test_options_land_in_their_settings():
    """The command line's options override their keys; the paper's imply --method paper."""
    settings = options("--threshold", "0.3", "--r0", "8", "--num-perm", "64", "--seed", "3")
    assert stage.resolve_method(settings) == "paper"
    assert (settings.cluster.threshold, settings.cluster.r0) == (0.3, 8)
    assert (settings.minhash.num_perm, settings.minhash.seed) == (64, 3)
    assert settings.activity == Settings().activity
    assert options("--workers", "2", "--unit", "page").minhash.workers == 2
    assert options("--unit", "page").cluster.unit == "page"
    assert options() == Settings()


def test_command_line(stored):
    url, engine = stored
    out = _cli("-q", "cluster", "--unit", "domain", "--university", "Alpha University",
               "--direction", "outgoing", "--threshold", "0.3", "--r0", "8", "--r-min", "3",
               "--step", "1", "--num-perm", "64", "--seed", "3", db=url)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "120 domain documents" in out.stdout
    assert "3 duplicates of dedup run 1 left out" in out.stdout
    with session_scope(engine) as s:
        c = s.scalars(select(Clustering).order_by(Clustering.id.desc())).first()
        assert c.parameters["num_perm"] == 64 and c.parameters["seed"] == 3
        assert c.n_excluded_duplicates == 3
    kept = _cli("-q", "cluster", "--unit", "domain", "--keep-duplicates", "--method", "paper",
                "--university", "all", db=url)  # fmt: skip
    assert kept.returncode == 0 and "duplicates of dedup run 1 kept" in kept.stdout
    bad = _cli("cluster", "--threshold", "1.5", db=url)
    assert bad.returncode == 2
    assert "cluster.threshold = 1.5: Input should be less than 1" in bad.stderr
    bad = _cli("cluster", "--r0", "4", "--r-min", "6", db=url)
    assert bad.returncode == 2 and "r_min=6 must be an integer in 1..r0=4" in bad.stderr
