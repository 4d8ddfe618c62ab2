"""MinHash signatures: equal to datasketch value for value, estimates near exact Jaccard."""

from __future__ import annotations

import numpy as np
import pytest
from datasketch import MinHash

from cluster.minhash import SCHEMES, MinHasher, MinHashSignatures, permutations
from cluster.single_link import ShingleMatrix, threshold_edges
from core.exceptions import ParameterError


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    sa, sb = set(a.tolist()), set(b.tolist())
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


@pytest.mark.parametrize("scheme", SCHEMES)
def test_signatures_equal_datasketch_value_for_value(scheme, reuters_sets):
    docs = [*reuters_sets[:150], np.empty(0, dtype=np.uint64), reuters_sets[150]]
    hasher = MinHasher(num_perm=64, seed=42, scheme=scheme, block_bytes=1 << 16)
    sig = hasher.sign(docs)
    assert sig.hashvalues.shape == (len(docs), 64)
    for row, shingles in zip(sig.hashvalues, docs, strict=True):
        ref = MinHash(num_perm=64, seed=42, scheme=scheme, hashfunc=hasher.hashfunc)
        if len(shingles):
            ref.update_batch(shingles.tolist())
        assert np.array_equal(row, ref.hashvalues)
        assert row.dtype == ref.hashvalues.dtype
    assert sig.empty.tolist() == [False] * 150 + [True, False]


def test_permutations_are_datasketchs():
    for scheme in SCHEMES:
        ref = MinHash(num_perm=32, seed=7, scheme=scheme)
        assert np.array_equal(np.asarray(ref.permutations), permutations(32, 7, scheme))


def test_block_size_does_not_change_signatures(reuters_sets):
    big = MinHasher(num_perm=128).sign(reuters_sets[:300]).hashvalues
    small = MinHasher(num_perm=128, block_bytes=1 << 16).sign(reuters_sets[:300]).hashvalues
    assert np.array_equal(big, small)


def test_estimate_within_tolerance_of_exact_jaccard(reuters_sets_k2):
    """The fraction of equal rows estimates J with standard error sqrt(J(1-J)/num_perm);
    the 1-bit sketches (b-bit minwise hashing) with sqrt((1-J^2)/num_perm)."""
    num_perm = 256
    sig = MinHasher(num_perm=num_perm, seed=3).sign(reuters_sets_k2)
    rng = np.random.default_rng(0)
    # pairs over the whole range of similarity: sharing pairs found by the exact join
    # (their Jaccard recomputed here with Python sets) and random pairs
    si, sj, ss = threshold_edges(ShingleMatrix.from_sets(reuters_sets_k2), 0.05)
    pick = np.concatenate(
        [
            rng.permutation(np.flatnonzero((ss >= lo) & (ss < hi)))[:400]
            for lo, hi in ((0.05, 0.3), (0.3, 0.7), (0.7, 1.01))
        ]
    )
    i = np.r_[si[pick], rng.integers(0, 2000, 1000)]
    j = np.r_[sj[pick], rng.integers(0, 2000, 1000)]
    keep = i != j
    i, j = i[keep], j[keep]
    sets = reuters_sets_k2
    exact = np.array([jaccard(sets[a], sets[b]) for a, b in zip(i, j, strict=True)])
    for lo, hi in ((0.0, 0.05), (0.05, 0.3), (0.3, 0.7), (0.7, 1.01)):
        assert ((exact >= lo) & (exact < hi)).sum() >= 30  # every range is represented
    estimates = {
        "rows": (sig.pair_similarity(i, j), exact * (1 - exact), 0.02),
        "bits": (sig.pair_bit_similarity(i, j), 1 - exact**2, 0.05),
    }
    for name, (est, variance, mean_error) in estimates.items():
        sigma = np.sqrt(variance / num_perm)
        within = np.abs(est - exact) <= 4 * sigma + 2.5 / num_perm
        assert within.mean() >= 0.995, name
        assert np.abs(est - exact).mean() <= mean_error, name
    assert sig.similarity(int(i[0]), int(j[0])) == pytest.approx(estimates["rows"][0][0])
    # the bits rank the sharing pairs nearly as their Jaccard does (Spearman's rho; 0.85
    # measured at 256 rows), the rows better still
    share = exact >= 0.05
    rho = {}
    for name, (est, _, _) in estimates.items():
        ranks = [np.argsort(np.argsort(x[share])) for x in (exact, est)]
        rho[name] = np.corrcoef(*ranks)[0, 1]
    assert rho["rows"] > rho["bits"] >= 0.8


def test_bit_sketch_packs_the_lowest_bit_of_every_row():
    sets = [np.arange(k, k + 80, dtype=np.uint64) for k in (0, 5, 900)] + [
        np.empty(0, dtype=np.uint64)
    ]
    for num_perm in (64, 100, 1024):
        sig = MinHasher(num_perm=num_perm, seed=2).sign(sets)
        sketch = sig.bit_sketch(rows=3)
        assert sketch.dtype == np.uint64 and sketch.shape == (4, -(-num_perm // 64))
        bits = np.unpackbits(sketch.view(np.uint8), axis=1, bitorder="little")
        assert np.array_equal(bits[:, :num_perm], sig.hashvalues & 1)
        assert not bits[:, num_perm:].any()  # unused bits never disagree
        est = sig.pair_bit_similarity(np.array([0, 0, 1, 3]), np.array([0, 1, 2, 0]))
        assert est[0] == 1.0 and est[3] == 0.0  # itself; an empty document
        assert est[1] > est[2]  # 75/85 of the shingles shared, against none


def test_identical_and_disjoint_documents():
    a = np.arange(500, dtype=np.uint64) * np.uint64(2654435761)
    b = a + np.uint64(1)
    sig = MinHasher(num_perm=128).sign([a, a.copy(), b, np.empty(0, np.uint64)])
    assert sig.similarity(0, 1) == 1.0
    assert sig.similarity(0, 2) < 0.05
    assert sig.similarity(3, 3) == 0.0  # an empty document is similar to nothing


def test_signatures_carry_and_check_their_parameters(reuters_sets):
    s1 = MinHasher(num_perm=32, seed=1).sign(reuters_sets[:10])
    s2 = MinHasher(num_perm=32, seed=2).sign(reuters_sets[10:20])
    s3 = MinHasher(num_perm=32, seed=1, scheme="affine64").sign(reuters_sets[10:20])
    assert s1.params == {"num_perm": 32, "seed": 1, "scheme": "affine32", "hash_func": "low32"}
    with pytest.raises(ValueError, match="seed"):
        s1.concat(s2)
    with pytest.raises(ValueError, match="scheme"):
        s1.check_compatible(s3)
    s4 = MinHasher(num_perm=32, seed=1).sign(reuters_sets[10:20])
    both = s1.concat(s4)
    assert len(both) == 20
    assert np.array_equal(both.subset(range(10, 20)).hashvalues, s4.hashvalues)


def test_stored_rows_round_trip(reuters_sets):
    docs = [*reuters_sets[:20], np.empty(0, dtype=np.uint64)]
    for scheme in ("affine32", "affine64"):
        sig = MinHasher(num_perm=16, scheme=scheme).sign(docs)
        rows = [sig.row_bytes(k) for k in range(len(sig))]
        assert all(len(r) == 16 * 8 for r in rows)
        back = MinHashSignatures.from_rows(rows, **sig.params)
        assert np.array_equal(back.hashvalues, sig.hashvalues)
        assert back.empty.tolist() == sig.empty.tolist()
    with pytest.raises(ValueError, match="num_perm=32"):
        MinHashSignatures.from_rows(
            rows, num_perm=32, seed=1, scheme="affine64", hash_func="identity"
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_perm": 0}, "num_perm must be an integer in 1..4096"),
        ({"num_perm": 5000}, "num_perm"),
        ({"seed": -1}, "seed"),
        ({"scheme": "md5"}, "scheme must be one of affine32, affine64, legacy"),
        ({"hash_func": "sha1"}, "hash_func must be one of"),
        ({"scheme": "affine32", "hash_func": "identity"}, "use hash_func='low32'"),
    ],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ParameterError, match=message) as info:
        MinHasher(**kwargs)
    assert isinstance(info.value, ValueError)


def test_no_documents():
    sig = MinHasher(num_perm=8).sign([])
    assert sig.hashvalues.shape == (0, 8)
    assert len(sig) == 0
