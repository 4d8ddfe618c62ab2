"""Exact single link: against networkx components of the threshold graph, identical
documents, the dendrogram, the blocked dense/sparse join, degenerate input."""

from __future__ import annotations

from itertools import combinations

import networkx as nx
import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, is_monotonic, is_valid_linkage

from cluster.single_link import ExactSingleLink, ShingleMatrix, threshold_edges
from cluster.unionfind import UnionFind, canonical_labels, single_linkage
from core.exceptions import ParameterError


def partition(labels) -> set[frozenset[int]]:
    groups: dict[int, set[int]] = {}
    for doc, lab in enumerate(np.asarray(labels).tolist()):
        groups.setdefault(lab, set()).add(doc)
    return {frozenset(g) for g in groups.values()}


@pytest.fixture(scope="module")
def small(reuters_sets):
    """600 real stories plus an exact copy of one and an empty document."""
    sets = list(reuters_sets[:600])
    sets.append(sets[17].copy())  # identical to document 17: distance 0
    sets.append(np.empty(0, dtype=np.uint64))
    return sets


@pytest.fixture(scope="module")
def brute(small):
    """All-pairs Jaccard with Python sets."""
    py = [set(s.tolist()) for s in small]
    out = {}
    for a, b in combinations(range(len(py)), 2):
        union = len(py[a] | py[b])
        if union:
            j = len(py[a] & py[b]) / union
            if j > 0.05:
                out[(a, b)] = j
    return out


@pytest.mark.parametrize("t", [0.1, 0.3, 0.5, 0.8])
def test_equals_networkx_components_of_the_threshold_graph(small, brute, t):
    graph = nx.Graph()
    graph.add_nodes_from(range(len(small)))
    graph.add_edges_from(p for p, j in brute.items() if j > t)
    expected = {frozenset(c) for c in nx.connected_components(graph)}
    model = ExactSingleLink(threshold=t).fit(small)
    assert partition(model.labels_) == expected
    assert model.n_edges_ == graph.number_of_edges()
    assert len(expected) < len(small)  # the threshold links something


def test_identical_documents_link(small):
    model = ExactSingleLink(threshold=0.99).fit(small)
    assert model.labels_[17] == model.labels_[600]
    # their merge is at height 0 (similarity 1)
    first = model.linkage_matrix_[0]
    assert first[2] == 0.0 and {int(first[0]), int(first[1])} == {17, 600}
    # the empty document stays alone
    assert (model.labels_ == model.labels_[601]).sum() == 1


def test_blocked_join_equals_brute_force(small, brute):
    matrix = ShingleMatrix.from_sets(small)
    n_cols = matrix.X.shape[1]
    # one block, many small blocks of rows; all columns sparse, some or all dense
    for block, dense in ((1 << 24, None), (5000, None), (5000, 0), (1 << 24, 50), (5000, n_cols)):
        i, j, s = threshold_edges(matrix, 0.2, block_entries=block, dense_columns=dense)
        got = dict(zip(zip(i.tolist(), j.tolist(), strict=True), s.tolist(), strict=True))
        expected = {p: v for p, v in brute.items() if v > 0.2}
        assert got.keys() == expected.keys()
        assert all(got[p] == pytest.approx(expected[p], abs=1e-12) for p in got)


def test_pair_jaccard_equals_python_sets(small):
    matrix = ShingleMatrix.from_sets(small)
    rng = np.random.default_rng(1)
    i = np.r_[rng.integers(0, len(small), 3000), 17, 601, 601, 5]
    j = np.r_[rng.integers(0, len(small), 3000), 600, 601, 3, 5]
    got = matrix.pair_jaccard(i, j)
    py = [set(s.tolist()) for s in small]
    for a, b, g in zip(i.tolist(), j.tolist(), got.tolist(), strict=True):
        union = len(py[a] | py[b])
        assert g == pytest.approx(len(py[a] & py[b]) / union if union else 0.0)
    # small tables of documents (many chunks) give the same answer
    assert np.array_equal(matrix.pair_intersections(i, j, block_bytes=1 << 12),
                          matrix.pair_intersections(i, j))  # fmt: skip


def test_dendrogram_cuts_give_single_link_at_every_higher_threshold(small):
    model = ExactSingleLink(threshold=0.2).fit(small)
    Z = model.linkage_matrix_
    n = len(small)
    assert Z.shape == (n - 1, 4)
    assert is_valid_linkage(Z) and is_monotonic(Z)
    for t in (0.2, 0.35, 0.6):
        # clusters at similarity > t: cut just below distance 1 - t
        cut = fcluster(Z, np.nextafter(1 - t, 0), criterion="distance")
        assert partition(cut) == partition(ExactSingleLink(threshold=t).fit(small).labels_)


def test_degenerate_input():
    empty = np.empty(0, dtype=np.uint64)
    m = ExactSingleLink(threshold=0.5).fit([])
    assert m.labels_.shape == (0,) and m.linkage_matrix_.shape == (0, 4)
    m = ExactSingleLink(threshold=0.5).fit([np.arange(5, dtype=np.uint64)])
    assert m.labels_.tolist() == [0] and m.linkage_matrix_.shape == (0, 4)
    m = ExactSingleLink(threshold=0.5).fit([empty, empty, empty])
    assert m.labels_.tolist() == [0, 1, 2]
    assert is_valid_linkage(m.linkage_matrix_)
    same = np.arange(40, dtype=np.uint64)
    m = ExactSingleLink(threshold=0.9).fit([same] * 5)
    assert m.labels_.tolist() == [0] * 5
    assert (m.linkage_matrix_[:, 2] == 0).all()


@pytest.mark.parametrize("t", [0, 1, -0.2, 1.5, "0.3"])
def test_threshold_outside_the_open_interval(t):
    with pytest.raises(ParameterError, match=r"threshold must be in \(0, 1\)") as info:
        ExactSingleLink(threshold=t).fit([np.arange(3, dtype=np.uint64)])
    assert isinstance(info.value, ValueError)


def test_union_find_and_linkage_helpers():
    uf = UnionFind(4)
    assert uf.union(0, 1) and uf.union(2, 3) and uf.union(1, 3)
    assert not uf.union(0, 2)
    assert canonical_labels(np.array([5, 5, 2, 9, 2])).tolist() == [0, 0, 1, 2, 1]
    # duplicated edges keep their largest similarity; loops are ignored
    Z, labels = single_linkage(3, np.array([0, 1, 0, 2]), np.array([1, 0, 0, 2]),
                               np.array([0.4, 0.7, 1.0, 1.0]))  # fmt: skip
    assert labels.tolist() == [0, 0, 1]
    assert Z[0].tolist() == pytest.approx([0, 1, 0.3, 2])
    assert Z[1].tolist() == [2, 3, 1.0, 3]
