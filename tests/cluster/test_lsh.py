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
