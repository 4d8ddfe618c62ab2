"""Centroid reassignment after Leiden (cluster.reassign): the compiled pass against a plain
NumPy reading of its rule on real labelled sites, its edge cases, and ActivityClusterer's
levels staying nested around the reassigned clusters."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cluster.activity import ActivityClusterer
from cluster.knn import knn_edges
from cluster.nested_leiden import igraph_leiden
from cluster.reassign import reassign
from cluster.unionfind import canonical_labels
from corpora.activity import load_activity_corpus


@pytest.fixture(scope="module")
def fitted():
    """The 556 real websites clustered without reassignment: matrix, graph, Leiden's labels."""
    corpus = load_activity_corpus("websites")
    counts = ActivityClusterer.term_counts(corpus.texts, corpus.languages)
    model = ActivityClusterer(reassign=0).fit(counts)
    return counts, model


def reference_pass(X: sp.csr_matrix, labels: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """The rule read plainly: dense centroids, the own one without the document, the
    neighbours' clusters as the only others, a move only to a more similar positive one."""
    dense = X.toarray().astype(np.float64)
    k = labels.max() + 1
    sums = np.zeros((k, dense.shape[1]))
    np.add.at(sums, labels, dense)
    new = labels.copy()
    for d in range(dense.shape[0]):
        x = dense[d]
        if not x.any():
            continue
        rest = sums[labels[d]] - x
        norm = np.linalg.norm(rest)
        best, best_sim = labels[d], (x @ rest / norm if norm > 1e-6 else -np.inf)
        for c in dict.fromkeys(labels[j] for j in nb[d] if j >= 0):
            if c == labels[d]:
                continue
            dot = x @ sums[c]
            if dot > 0 and dot / np.linalg.norm(sums[c]) > best_sim + 1e-9:
                best, best_sim = c, dot / np.linalg.norm(sums[c])
        new[d] = best
    return new


def test_the_compiled_pass_follows_the_rule(fitted):
    _counts, model = fitted
    labels = model.labels_
    got, moved = reassign(model.matrix_, labels, model.graph_.neighbours)
    want = reference_pass(model.matrix_, labels, model.graph_.neighbours)
    assert np.array_equal(got, want)
    assert moved == int(np.count_nonzero(want != labels)) > 0  # real sites do move


def test_a_moved_document_is_closer_to_its_new_centroid_than_to_its_old_one(fitted):
    _counts, model = fitted
    X, labels = model.matrix_, model.labels_
    new, _moved = reassign(X, labels, model.graph_.neighbours)
    dense = X.toarray().astype(np.float64)
    for d in np.flatnonzero(new != labels):
        old = dense[labels == labels[d]].sum(axis=0) - dense[d]
        target = dense[labels == new[d]].sum(axis=0)
        assert dense[d] @ target / np.linalg.norm(target) > dense[d] @ old / max(
            np.linalg.norm(old), 1e-12
        )


def test_edge_cases_keep_the_labels():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
    labels = np.array([0, 1, 1, 0])
    nb = np.array([[2, 1], [0, 2], [0, 3], [0, 1]])
    # rows of zeros never move; a document alone in its cluster moves only to a cluster
    # it shares terms with (document 2 shares none with cluster 0)
    assert reassign(X, labels, nb)[0].tolist() == [0, 1, 1, 0]
    same, moved = reassign(X, labels, nb, passes=0)
    assert np.array_equal(same, labels) and moved == 0
    empty, moved = reassign(sp.csr_matrix((0, 3)), np.zeros(0, np.int64), np.zeros((0, 2), int))
    assert empty.shape == (0,) and moved == 0
    # no neighbours known: nothing to compare with, nothing moves
    alone = np.full((4, 2), -1)
    assert reassign(X, labels, alone)[0].tolist() == labels.tolist()


def test_passes_stop_once_nothing_moves(fitted):
    _counts, model = fitted
    args = (model.matrix_, model.labels_, model.graph_.neighbours)
    _one, moved_one = reassign(*args, passes=1)
    many, _moved_many = reassign(*args, passes=50)
    again, moved_again = reassign(model.matrix_, many, model.graph_.neighbours)
    assert moved_one > 0
    assert moved_again == 0 and np.array_equal(again, many)  # a fixed point was reached


def test_the_clusterer_reassigns_leidens_clusters_and_keeps_its_levels_nested(fitted):
    counts, plain = fitted
    n = plain.matrix_.shape[0]
    i, j, w = knn_edges(plain.graph_.neighbours, plain.graph_.similarities)
    leiden = igraph_leiden(n, i, j, w, quality="rb", resolution=1.0, seed=1, n_iterations=5)
    assert np.array_equal(plain.labels_, leiden.labels)  # reassign=0: Leiden as found
    assert plain.graph_stats_["reassigned"] == 0

    model = ActivityClusterer().fit(counts)  # the default: one pass
    moved, _ = reassign(plain.matrix_, plain.labels_, plain.graph_.neighbours)
    assert np.array_equal(model.labels_, canonical_labels(moved))
    assert model.graph_stats_["reassigned"] == int(np.count_nonzero(moved != plain.labels_)) > 0
    assert [lv.role for lv in model.levels_] == ["finer", "clusters", "coarser"]
    for fine, coarse in zip(model.levels_, model.levels_[1:], strict=False):
        for c in np.unique(fine.labels):
            assert len(np.unique(coarse.labels[fine.labels == c])) == 1
    assert "reassign" in model.graph_stats_["seconds"]
