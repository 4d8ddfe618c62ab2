"""Clustering beyond one process, on real Reuters-21578 stories: signatures signed by
several threads, a memory-mapped signature store signed from a stream, banding within a
memory budget (hash partitions on disk), and the cluster stage with --signature-store.
Every path must give the clusters of the single-process, in-memory run, exactly."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from cluster import LSHLeiden, LSHLink, MinHasher
from cluster.lsh import band_keys, bucket_pairs, candidate_pairs
from cluster.minhash import effective_n_jobs
from cluster.sigstore import ListShingles, SignatureStore, pair_jaccard_segments
from cluster.single_link import ShingleMatrix
from core.exceptions import DataNotFoundError, ParameterError
from core.settings import Settings
from extract import Shingler
from store import make_engine, schema
from store.models import (
    Cluster,
    ClusterMember,
    CrawlRun,
    DedupRun,
    Document,
    DuplicateGroup,
    DuplicateMember,
    Signature,
)
from store.session import session_scope
from webometrics.stages import cluster as stage

REPO = Path(__file__).resolve().parents[2]
N_DOCS = 1200  # of the 2,000 stories of the session fixture: keeps the module fast


@pytest.fixture(scope="module")
def sets(reuters_sets: list[np.ndarray]) -> list[np.ndarray]:
    """1-word shingles of 1,200 Reuters stories, plus one document without shingles."""
    return [*reuters_sets[: N_DOCS - 1], np.empty(0, dtype=np.uint64)]


def blocks(sets: list[np.ndarray], size: int):
    """The shingle sets as a stream (a generator) of blocks."""
    for start in range(0, len(sets), size):
        yield sets[start : start + size]


@pytest.fixture(scope="module")
def store_1024(sets, tmp_path_factory) -> SignatureStore:
    folder = tmp_path_factory.mktemp("store1024")
    return SignatureStore.write(folder, MinHasher(num_perm=1024), blocks(sets, 250), n_jobs=2)


@pytest.fixture(scope="module")
def store_128(sets, tmp_path_factory) -> SignatureStore:
    folder = tmp_path_factory.mktemp("store128")
    return SignatureStore.write(folder, MinHasher(num_perm=128), blocks(sets, 333))


# --- parallel signing ---------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["affine32", "affine64", "legacy"])
def test_threads_sign_bit_identical(sets, scheme):
    hasher = MinHasher(num_perm=256, scheme=scheme, block_bytes=1 << 18)  # many blocks
    one = hasher.sign(sets)
    assert one.empty.sum() == 1 and one.empty[-1]
    for n_jobs in (2, 3, -1):
        other = hasher.sign(sets, n_jobs=n_jobs)
        assert other.hashvalues.dtype == one.hashvalues.dtype
        assert np.array_equal(other.hashvalues, one.hashvalues)
        assert np.array_equal(other.empty, one.empty)


def test_n_jobs_values():
    assert effective_n_jobs(2) == 2
    assert effective_n_jobs(-1) == len(os.sched_getaffinity(0))
    assert effective_n_jobs(-1000) == 1
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ParameterError, match="n_jobs must be a non-zero integer"):
            effective_n_jobs(bad)
    with pytest.raises(ParameterError, match="n_jobs"):
        LSHLink(n_jobs=0).fit([np.arange(3, dtype=np.uint64)])


# --- the signature store --------------------------------------------------------------------


def test_store_is_the_in_memory_signatures_memory_mapped(sets, store_1024):
    ref = MinHasher(num_perm=1024).sign(sets)
    sig = SignatureStore.open(store_1024.path, expect=MinHasher(num_perm=1024)).signatures()
    assert isinstance(sig.hashvalues, np.memmap) and not sig.hashvalues.flags.writeable
    assert sig.hashvalues.shape == (N_DOCS, 1024) and sig.hashvalues.dtype == np.uint32
    assert np.array_equal(sig.hashvalues, ref.hashvalues)
    assert np.array_equal(sig.empty, ref.empty)
    assert sig.params == ref.params
    assert len(store_1024) == N_DOCS and store_1024.ids is None
    assert store_1024.lengths.tolist() == [len(s) for s in sets]
    assert np.load(store_1024.path / "signatures.npy", mmap_mode="r").shape == (N_DOCS, 1024)


def test_store_keeps_ids_and_replaces_a_store_of_the_same_parameters(sets, tmp_path):
    hasher = MinHasher(num_perm=64, seed=7)
    first = SignatureStore.write(tmp_path, hasher, blocks(sets[:100], 30), ids=range(100, 200))
    assert first.ids.tolist() == list(range(100, 200))
    again = SignatureStore.write(tmp_path, hasher, blocks(sets[100:150], 1000))
    assert len(again) == 50 and again.ids is None
    assert np.array_equal(again.signatures().hashvalues, hasher.sign(sets[100:150]).hashvalues)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "empty.npy",
        "lengths.npy",
        "signatures.npy",
        "store.json",
    ]


def test_store_signs_one_block_at_a_time(sets, tmp_path):
    hasher = MinHasher(num_perm=1024, block_bytes=1 << 20)
    whole = N_DOCS * 1024 * 4
    tracemalloc.start()
    try:
        SignatureStore.write(tmp_path, hasher, blocks(sets, 100), n_jobs=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < whole / 2, f"peak {peak} bytes while writing a {whole}-byte matrix"


def test_store_refuses_other_parameters(sets, tmp_path):
    SignatureStore.write(tmp_path, MinHasher(num_perm=64), blocks(sets[:50], 20))
    with pytest.raises(ParameterError, match=r"num_perm=64 \(wanted 128\).*choose another"):
        SignatureStore.open(tmp_path, expect=MinHasher(num_perm=128))
    with pytest.raises(ParameterError, match=r"seed=1 \(wanted 2\)"):
        SignatureStore.open(tmp_path, expect={"seed": 2})
    with pytest.raises(ParameterError, match=r"scheme='affine32' \(wanted 'affine64'\)"):
        SignatureStore.write(tmp_path, MinHasher(num_perm=64, scheme="affine64"), [sets[:5]])
    # the refused write left the store as it was
    kept = SignatureStore.open(tmp_path, expect=MinHasher(num_perm=64))
    assert len(kept) == 50
    with pytest.raises(DataNotFoundError, match="no signature store"):
        SignatureStore.open(tmp_path / "elsewhere")
    with pytest.raises(ParameterError, match="3 ids for 5 signed documents"):
        SignatureStore.write(tmp_path / "ids", MinHasher(num_perm=64), [sets[:5]], ids=[1, 2, 3])
    assert not (tmp_path / "ids" / "store.json").exists()


# --- banding within a memory budget ---------------------------------------------------------


def test_candidate_pairs_equal_for_any_budget(store_128):
    sig = store_128.signatures()
    dense = np.asarray(sig.hashvalues)
    active = ~sig.empty
    labels = np.random.default_rng(3).integers(0, 300, N_DOCS)
    cases = ((2, {}), (4, {"labels": labels, "seed": 11}), (3, {"labels": labels}),
             (1, {"max_bucket": 5, "seed": 2}))  # fmt: skip
    for r, kwargs in cases:
        ref = bucket_pairs(band_keys(dense, r), active=active, **kwargs)
        assert ref.shape[0] > 100
        for parts in (None, 2, 32):
            for hv in (dense, sig.hashvalues):
                got = candidate_pairs(hv, r, labels=kwargs.get("labels"), active=active,
                                      seed=kwargs.get("seed", 0), parts=parts,
                                      max_bucket=kwargs.get("max_bucket"))  # fmt: skip
                assert np.array_equal(got, ref), (r, parts, type(hv))
    with pytest.raises(ValueError, match="candidate pairs exceed max_pairs=100"):
        candidate_pairs(sig.hashvalues, 1, max_pairs=100, parts=8)
    with pytest.raises(ParameterError, match="power of two"):
        candidate_pairs(dense, 2, parts=3)


def test_jaccard_by_segments_equals_the_whole_matrix(sets):
    rng = np.random.default_rng(5)
    i, j = rng.integers(0, N_DOCS, 20000), rng.integers(0, N_DOCS, 20000)
    i, j = np.minimum(i, j)[i != j], np.maximum(i, j)[i != j]
    ref = ShingleMatrix.from_sets(sets).pair_jaccard(i, j)
    for memory in (1 << 16, 1 << 20, 256 << 20):
        source = ListShingles(sets)
        assert np.array_equal(pair_jaccard_segments(source, i, j, memory), ref)
    assert source.n_fetched <= N_DOCS  # everything fits: each document fetched once


# --- the models: identical clusters ---------------------------------------------------------


def same_link(a: LSHLink, b: LSHLink) -> None:
    assert np.array_equal(a.labels_, b.labels_)
    assert np.array_equal(a.linkage_matrix_, b.linkage_matrix_)
    assert len(a.levels_) == len(b.levels_)
    for x, y in zip(a.levels_, b.levels_, strict=True):
        assert {**x.to_dict(), "seconds": 0} == {**y.to_dict(), "seconds": 0}
        assert np.array_equal(x.labels, y.labels)


def test_lsh_link_identical_with_threads_and_store(sets, store_1024):
    base = LSHLink().fit(sets)  # the defaults: jaccard, 1024 permutations, r = 12, 8, 4
    assert base.labels_.max() + 1 < N_DOCS - 50  # real merges
    same_link(base, LSHLink(n_jobs=2).fit(sets))
    # from the memory map, shingles fetched segment by segment, banding in partitions
    source = ListShingles(sets)
    stored = LSHLink(band_memory_mb=1).fit(source, signatures=store_1024.signatures())
    assert isinstance(stored.signatures_.hashvalues, np.memmap)
    assert source.n_fetched > 0
    same_link(base, stored)
    # signature similarity needs no shingles at all
    sig_base = LSHLink(similarity="signature", r0=8, r_min=4, step=2).fit(sets)
    sig_store = LSHLink(similarity="signature", r0=8, r_min=4, step=2, band_memory_mb=1).fit(
        signatures=store_1024.signatures()
    )
    same_link(sig_base, sig_store)


def test_lsh_leiden_identical_with_threads_and_store(sets, store_128):
    params = {
        "threshold": 0.2, "num_perm": 128, "rows": [4, 3], "bands": None,
        "resolution": [1.0, 0.5], "seed": 1,
    }  # fmt: skip
    base = LSHLeiden(**params).fit(sets)
    others = [
        LSHLeiden(**params, n_jobs=2).fit(sets),
        LSHLeiden(**params, band_memory_mb=1).fit(signatures=store_128.signatures()),
        LSHLeiden(**params, similarity="jaccard").fit(sets),
    ]
    jac_store = LSHLeiden(**params, similarity="jaccard", band_memory_mb=1).fit(
        ListShingles(sets), signatures=store_128.signatures()
    )
    assert base.graph_stats_["edges"] > 500
    for a, b in ((base, others[0]), (base, others[1]), (others[2], jac_store)):
        assert np.array_equal(a.labels_, b.labels_)
        assert [lvl.labels.tolist() for lvl in a.levels_] == [
            lvl.labels.tolist() for lvl in b.levels_
        ]
        assert {k: v for k, v in a.graph_stats_.items() if k != "seconds"} == {
            k: v for k, v in b.graph_stats_.items() if k != "seconds"
        }


def test_fit_says_what_is_missing(sets, store_128):
    with pytest.raises(ParameterError, match="give the shingle sets, or precomputed signatures"):
        LSHLink().fit()
    with pytest.raises(ParameterError, match="similarity='jaccard' needs the shingle sets"):
        LSHLink(num_perm=128).fit(signatures=store_128.signatures())
    with pytest.raises(ParameterError, match=r"sign it into a cluster\.sigstore\.SignatureStore"):
        LSHLeiden().fit(ListShingles(sets))
    with pytest.raises(ValueError, match="cannot be used by a model with"):
        LSHLeiden(num_perm=64).fit(signatures=store_128.signatures())
    with pytest.raises(ValueError, match="signatures for 10 documents"):
        LSHLeiden().fit(sets[:10], signatures=store_128.signatures())


# --- the cluster stage ------------------------------------------------------------------------


@pytest.fixture
def db(tmp_path, reuters_2000):
    """180 domain documents, each two consecutive Reuters stories' 1-word shingles, and a
    dedup run that marks two copies of the first as duplicates."""
    url = f"sqlite:///{tmp_path / 'scale.db'}"
    engine = make_engine(url)
    schema.upgrade(engine)
    shingler = Shingler(k=1, language="en")
    with session_scope(engine) as s:
        s.add(CrawlRun(kind="both", status="finished"))
        docs = []
        for k in range(180):
            sh = shingler.hashes(reuters_2000[2 * k].text + "\n" + reuters_2000[2 * k + 1].text)
            docs.append(
                Document(unit="domain", key=f"site{k:03d}.example.com",
                         domain=f"site{k:03d}.example.com", language="en", n_shingles=len(sh),
                         shingles=sh.astype("<u8").tobytes(), shingle_k=1)
            )  # fmt: skip
        for c in range(2):
            docs.append(
                Document(unit="domain", key=f"copy{c}.example.net", domain=f"copy{c}.example.net",
                         language="en", n_shingles=docs[0].n_shingles,
                         shingles=docs[0].shingles, shingle_k=1)
            )  # fmt: skip
        s.add_all(docs)
        s.flush()
        dedup = DedupRun(method="a0-md5", unit="domain", n_documents=len(docs), n_groups=1)
        s.add(dedup)
        s.flush()
        group = DuplicateGroup(dedup_run_id=dedup.id, method="a0-md5",
                               canonical_document_id=docs[0].id, size=3)  # fmt: skip
        s.add(group)
        s.flush()
        for d in (docs[0], *docs[180:]):
            s.add(DuplicateMember(group_id=group.id, document_id=d.id))
    yield url, engine
    engine.dispose()


def partitions(engine, clustering_id: int) -> dict[int, set[frozenset[str]]]:
    with session_scope(engine) as s:
        rows = s.execute(
            select(Cluster.level, Cluster.label, Document.key)
            .join(ClusterMember, ClusterMember.cluster_id == Cluster.id)
            .join(Document, Document.id == ClusterMember.document_id)
            .where(Cluster.clustering_id == clustering_id)
        ).all()
    groups: dict[tuple[int, int], set[str]] = defaultdict(set)
    for level, label, key in rows:
        groups[level, label].add(key)
    out: dict[int, set[frozenset[str]]] = defaultdict(set)
    for (level, _), keys in groups.items():
        out[level].add(frozenset(keys))
    return dict(out)


def signature_rows(engine) -> dict[tuple[int, int], bytes]:
    with session_scope(engine) as s:
        rows = s.execute(select(Signature.document_id, Signature.num_perm, Signature.hashvalues))
        return {(d, p): bytes(h) for d, p, h in rows}


@pytest.mark.parametrize("linkage", ["single", "leiden"])
def test_stage_with_signature_store_gives_the_same_clusters(db, tmp_path, linkage):
    _url, engine = db
    params = {"threshold": 0.3, "r0": 8, "r_min": 3, "step": 1} if linkage == "single" else {}
    cluster = {"method": "paper", "unit": "domain", "linkage": linkage, **params}
    plain = stage.cluster_one(engine, Settings().replace(cluster=cluster, minhash={"workers": 1}))
    assert plain.workers == 1 and plain.signature_store is None
    rows = signature_rows(engine)
    folder = tmp_path / "store"
    small = Settings().replace(  # band_memory_mb 1: partitions on disk
        cluster={**cluster, "band_memory_mb": 1, "signature_store": str(folder)},
        minhash={"workers": 2},
    )
    out = stage.cluster_one(engine, small)
    assert out.n_documents == plain.n_documents == 180 and out.workers == 2
    assert out.n_excluded_duplicates == 2 and out.signature_store == str(folder)
    assert out.signatures_written == 0  # the stored rows are those of the in-memory run
    assert signature_rows(engine) == rows and len(rows) == 180
    first, second = (
        partitions(engine, plain.clustering_id),
        partitions(engine, out.clustering_id),
    )
    assert first == second and len(first) == out.n_levels + 1
    # real clusters at some level, not only singletons (or one giant)
    assert max(sum(len(g) >= 2 for g in part) for part in first.values()) >= 5
    store = SignatureStore.open(folder)
    with session_scope(engine) as s:
        kept = s.scalars(
            select(Document.id).where(~Document.key.like("copy%")).order_by(Document.id)
        ).all()
    assert store.ids.tolist() == kept


def test_command_line_workers_and_signature_store(db, tmp_path):
    url, _engine = db
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    env["WEBOMETRICS_DB_URL"] = url

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "webometrics", "-q", "cluster", *args]
        return subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300
        )

    folder = tmp_path / "cli-store"
    ok = cli("--unit", "domain", "--num-perm", "128", "--workers", "2",
             "--signature-store", str(folder))  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "180 domain documents" in ok.stdout and f"signature store {folder}" in ok.stdout
    assert len(SignatureStore.open(folder, expect={"num_perm": 128})) == 180
    bad = cli("--unit", "domain", "--num-perm", "256", "--signature-store", str(folder))
    assert bad.returncode == 2
    assert "num_perm=128 (wanted 256)" in bad.stderr and "choose another folder" in bad.stderr
    zero = cli("--workers", "0")
    assert zero.returncode == 2 and "minhash.workers" in zero.stderr
    assert "0 is not allowed" in zero.stderr
