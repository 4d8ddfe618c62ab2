"""LSH banding: bucket keys, candidate pairs against a brute-force bucketing, the S-curve."""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

import numpy as np
import pytest

from cluster.lsh import (
    band_keys,
    bucket_pairs,
    check_banding,
    collision_probability,
    s_curve_threshold,
    strongest_candidates,
)
from cluster.minhash import MinHasher
from cluster.single_link import ShingleMatrix, threshold_edges
from core.exceptions import ParameterError


@pytest.fixture(scope="module")
def signatures(reuters_sets):
    return MinHasher(num_perm=64, seed=5).sign(reuters_sets)


def brute_buckets(hv: np.ndarray, r: int, b: int) -> list[list[int]]:
    """Buckets by the exact tuple of every band's rows."""
    out = []
    for band in range(b):
        groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for doc in range(hv.shape[0]):
            groups[tuple(hv[doc, band * r : (band + 1) * r].tolist())].append(doc)
        out.extend(g for g in groups.values() if len(g) > 1)
    return out


def test_equal_keys_iff_equal_slices(signatures):
    hv = signatures.hashvalues[:400]
    for r, b in ((4, 16), (3, 21), (2, 32)):
        keys = band_keys(hv, r, b)
        assert keys.shape == (400, b)
        for band in range(b):
            slices = [tuple(x) for x in hv[:, band * r : (band + 1) * r].tolist()]
            by_slice = {s: i for i, s in enumerate(slices)}
            by_key = {k: i for i, k in enumerate(keys[:, band].tolist())}
            # the same partition of documents
            assert len(by_slice) == len(by_key)
            for i, s in enumerate(slices):
                assert keys[by_slice[s], band] == keys[i, band]
    # different bands never share a key, even for equal slices
    twin = np.tile(np.arange(8, dtype=np.uint32), (1, 2))
    k = band_keys(twin, r=8)
    assert k[0, 0] != k[0, 1]


def test_candidate_pairs_equal_brute_force(signatures):
    hv = signatures.hashvalues[:600]
    r, b = 2, 32
    expected = set()
    for group in brute_buckets(hv, r, b):
        expected.update(combinations(sorted(group), 2))
    got = bucket_pairs(band_keys(hv, r, b))
    assert len(expected) > 1000
    assert {tuple(p) for p in got.tolist()} == expected
    assert (got[:, 0] < got[:, 1]).all()


def random_candidates(n: int, m: int, seed: int) -> tuple[np.ndarray, ...]:
    """``m`` distinct pairs of ``n`` documents and a strength level for each (1-8, most
    of them 1: most candidates of a banding are weak)."""
    rng = np.random.default_rng(seed)
    codes = np.unique(rng.integers(0, n * n, 3 * m))
    i, j = codes // n, codes % n
    ok = i < j
    i, j = i[ok][:m], j[ok][:m]
    return i, j, np.minimum(rng.geometric(0.6, i.shape[0]), 8)


def test_strongest_candidates_keep_each_documents_best():
    n, k = 300, 12
    i, j, strength = random_candidates(n, 12000, seed=4)
    keep = strongest_candidates(n, i, j, strength, k, seed=1)
    kept_at = np.bincount(np.r_[i[keep], j[keep]], minlength=n)
    for node in range(n):
        mine = (i == node) | (j == node)
        levels = strength[mine]
        if levels.shape[0] <= k:  # fewer candidates than k: all of them
            assert keep[mine].all()
            continue
        # the cut: the highest level at which the document has k candidates
        cut = max(c for c in range(1, 9) if (levels >= c).sum() >= k)
        assert keep[mine & (strength > cut)].all(), node
        assert kept_at[node] >= (levels > cut).sum()
    # a pair stays only when one of its ends ranks it at or above its cut
    assert keep.sum() < 0.5 * i.shape[0]
    # every document keeps k on average (more through the other end's choice)
    assert keep.sum() <= 1.1 * n * k
    assert kept_at.mean() >= k


def test_strongest_candidates_do_not_depend_on_the_order_of_the_pairs():
    n = 200
    i, j, strength = random_candidates(n, 6000, seed=8)
    keep = strongest_candidates(n, i, j, strength, 10, seed=3)
    order = np.random.default_rng(0).permutation(i.shape[0])
    again = strongest_candidates(n, i[order], j[order], strength[order], 10, seed=3)
    assert np.array_equal(again, keep[order])
    other = strongest_candidates(n, i, j, strength, 10, seed=4)
    assert not np.array_equal(other, keep)  # the seed draws among the ties at a cut ...
    assert (other | keep).sum() < 1.3 * keep.sum()  # ... and only there
    assert strongest_candidates(n, i, j, strength, None).all()
    assert strongest_candidates(n, i, j, strength, 10**6).all()
    assert strongest_candidates(n, i[:0], j[:0], strength[:0], 10).shape == (0,)


def test_max_bucket_cuts_large_buckets_into_runs(signatures):
    hv = signatures.hashvalues[:600]
    r, b = 1, 32  # one row a band: large buckets
    keys = band_keys(hv, r, b)
    every = {tuple(p) for p in bucket_pairs(keys).tolist()}
    largest = max(len(g) for g in brute_buckets(hv, r, b))
    assert largest > 40
    for cap in (2, 8, 40):
        got = bucket_pairs(keys, max_bucket=cap, seed=3)
        pairs = {tuple(p) for p in got.tolist()}
        assert pairs <= every and len(pairs) < len(every)
        # a document meets at most cap - 1 others in a band, so at most b * (cap - 1)
        degree = np.bincount(got.ravel(), minlength=600)
        assert degree.max() <= b * (cap - 1)
        # the buckets no larger than the cap keep all their pairs
        for group in brute_buckets(hv, r, b):
            if len(group) <= cap:
                assert set(combinations(sorted(group), 2)) <= pairs
    # another seed cuts the buckets elsewhere; the same seed, the same way
    again = bucket_pairs(keys, max_bucket=8, seed=3)
    assert np.array_equal(again, bucket_pairs(keys, max_bucket=8, seed=3))
    assert not np.array_equal(again, bucket_pairs(keys, max_bucket=8, seed=4))
    assert np.array_equal(bucket_pairs(keys, max_bucket=largest), bucket_pairs(keys))


def test_one_document_per_cluster_in_a_bucket(signatures):
    hv = signatures.hashvalues[:600]
    r, b = 2, 32
    labels = np.arange(600) // 3  # clusters of three consecutive stories
    got = bucket_pairs(band_keys(hv, r, b), labels, seed=11)
    pairs = {tuple(p) for p in got.tolist()}
    assert all(labels[i] != labels[j] for i, j in pairs)
    # every two clusters that share a bucket are compared at least once ...
    cluster_pairs_expected = set()
    for group in brute_buckets(hv, r, b):
        labs = sorted({int(labels[d]) for d in group})
        cluster_pairs_expected.update(combinations(labs, 2))
    cluster_pairs_got = {tuple(sorted((int(labels[i]), int(labels[j])))) for i, j in pairs}
    assert cluster_pairs_got == cluster_pairs_expected
    # ... but through one kept document per cluster and bucket: fewer document pairs
    all_pairs = {tuple(p) for p in bucket_pairs(band_keys(hv, r, b)).tolist()}
    assert pairs < all_pairs
    # the kept document is a seeded choice: same seed, same pairs
    again = bucket_pairs(band_keys(hv, r, b), labels, seed=11)
    assert np.array_equal(got, again)


def test_inactive_documents_take_no_part(signatures):
    hv = signatures.hashvalues[:300]
    active = np.ones(300, dtype=bool)
    active[::2] = False
    got = bucket_pairs(band_keys(hv, 2), active=active)
    assert active[got].all()


def test_collision_rate_follows_the_s_curve(reuters_sets_k2):
    """Observed share of pairs sharing a bucket vs 1 - (1 - s^r)^b, by similarity."""
    matrix = ShingleMatrix.from_sets(reuters_sets_k2)
    i, j, s = threshold_edges(matrix, 0.02)
    r, b = 4, 30
    n = len(reuters_sets_k2)
    found = np.zeros(i.shape[0])
    seeds = range(1, 9)  # the pairs are not independent: average over permutations
    for seed in seeds:
        sig = MinHasher(num_perm=120, seed=seed).sign(reuters_sets_k2)
        cand = bucket_pairs(band_keys(sig.hashvalues, r, b))
        found += np.isin(i * n + j, cand[:, 0] * n + cand[:, 1])
    found /= len(seeds)
    for lo, hi in ((0.1, 0.25), (0.25, 0.4), (0.4, 0.6), (0.6, 1.01)):
        sel = (s >= lo) & (s < hi)
        assert sel.sum() >= 50
        predicted = collision_probability(s[sel], r, b).mean()
        observed = found[sel].mean()
        assert abs(observed - predicted) <= 0.05, (lo, hi, observed, predicted)
    assert s_curve_threshold(r, b) == pytest.approx((1 / 30) ** (1 / 4))


def test_banding_limits():
    check_banding(4, 32, 128)
    with pytest.raises(ParameterError, match=r"b\*r = 33\*4 = 132 exceeds num_perm=128"):
        check_banding(4, 33, 128)
    with pytest.raises(ValueError, match="must be >= 1"):
        check_banding(0, 4, 128)
    with pytest.raises(ValueError, match="exceeds num_perm"):
        band_keys(np.zeros((3, 16), dtype=np.uint32), r=5, b=4)


def test_pair_guard_and_degenerate_input(signatures):
    keys = band_keys(signatures.hashvalues[:600], 1)
    with pytest.raises(ValueError, match="exceed max_pairs=10"):
        bucket_pairs(keys, max_pairs=10)
    assert bucket_pairs(np.empty((0, 4), dtype=np.uint64)).shape == (0, 2)
    assert bucket_pairs(np.arange(8, dtype=np.uint64).reshape(2, 4)).shape == (0, 2)
    same = np.ones((3, 2), dtype=np.uint64)
    assert bucket_pairs(same).tolist() == [[0, 1], [0, 2], [1, 2]]
