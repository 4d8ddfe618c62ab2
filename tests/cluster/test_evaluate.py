"""Clustering scores: definitions checked against brute-force counts and scikit-learn,
unlabelled documents left out, and a quality floor on real Reuters stories."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from cluster import ExactSingleLink
from cluster.evaluate import SCORES, hierarchical_f_measure, score_clustering
from tests.quality_gates import floors

TRUE = ["a", "a", "a", "b", "b", "c", "c", "c", "c", "a"]
PRED = [0, 0, 1, 1, 1, 2, 2, 2, 0, 0]


def brute_pairs(true, pred):
    tp = fp = fn = tn = 0
    for x, y in combinations(range(len(true)), 2):
        same_t, same_p = true[x] == true[y], pred[x] == pred[y]
        tp += same_t and same_p
        fp += same_p and not same_t
        fn += same_t and not same_p
        tn += not same_t and not same_p
    return tp, fp, fn, tn


def test_pair_counting_scores_equal_brute_force():
    s = score_clustering(TRUE, PRED)
    tp, fp, fn, tn = brute_pairs(TRUE, PRED)
    assert s["accuracy"] == pytest.approx((tp + tn) / (tp + fp + fn + tn))
    assert s["precision"] == pytest.approx(tp / (tp + fp))
    assert s["recall"] == pytest.approx(tp / (tp + fn))
    p, r = tp / (tp + fp), tp / (tp + fn)
    assert s["f_pairwise"] == pytest.approx(2 * p * r / (p + r))
    assert s["ari"] == pytest.approx(adjusted_rand_score(TRUE, PRED))
    assert s["nmi"] == pytest.approx(normalized_mutual_info_score(TRUE, PRED))


def test_class_f_purity_and_bcubed_by_hand():
    s = score_clustering(TRUE, PRED)
    # clusters: 0 = {a, a, c, a}, 1 = {a, b, b}, 2 = {c, c, c}
    assert s["purity"] == pytest.approx((3 + 2 + 3) / 10)
    f_a = 2 * (3 / 4) * (3 / 4) / (3 / 4 + 3 / 4)  # class a vs cluster 0
    f_b = 2 * (2 / 3) * 1 / (2 / 3 + 1)  # class b vs cluster 1
    f_c = 2 * 1 * (3 / 4) / (1 + 3 / 4)  # class c vs cluster 2
    assert s["f_class"] == pytest.approx(0.4 * f_a + 0.2 * f_b + 0.4 * f_c)
    # B-cubed: per document, share of its cluster in its class / of its class in its cluster
    bp = np.mean([3 / 4] * 3 + [1 / 4] + [1 / 3] + [2 / 3] * 2 + [1] * 3)
    br = np.mean([3 / 4] * 3 + [1 / 4] + [1 / 4] + [1] * 2 + [3 / 4] * 3)
    # order of the lists: a in 0 (x3), c in 0, a in 1, b in 1 (x2), c in 2 (x3)
    assert s["bcubed_precision"] == pytest.approx(bp)
    assert s["bcubed_recall"] == pytest.approx(br)
    assert s["bcubed_f"] == pytest.approx(2 * bp * br / (bp + br))
    assert (s["n_labelled"], s["n_classes"], s["n_clusters"]) == (10, 3, 3)


def test_unlabelled_documents_are_left_out():
    base = score_clustering(TRUE, PRED)
    more = score_clustering([*TRUE, None, float("nan"), None], [*PRED, 0, 2, 7])
    assert more["n_documents"] == 13 and more["n_labelled"] == 10
    for key in SCORES:
        assert more[key] == pytest.approx(base[key])


def test_perfect_and_trivial_clusterings():
    perfect = score_clustering(TRUE, [{"a": 5, "b": 6, "c": 7}[x] for x in TRUE])
    assert all(perfect[k] == pytest.approx(1.0) for k in SCORES)
    one = score_clustering(TRUE, [0] * len(TRUE))
    assert one["recall"] == 1.0 and one["bcubed_recall"] == 1.0
    assert one["purity"] == pytest.approx(0.4)
    alone = score_clustering(TRUE, list(range(len(TRUE))))
    assert alone["precision"] == 1.0 and alone["recall"] == 0.0 and alone["f_pairwise"] == 0.0
    assert score_clustering([None, None], [0, 1])["n_labelled"] == 0
    assert score_clustering(["a"], [3])["accuracy"] == 1.0
    with pytest.raises(ValueError, match="one class and one cluster per document"):
        score_clustering(TRUE, PRED[:-1])


def test_hierarchical_f_takes_the_best_node_of_the_tree():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(30, 2)) + np.repeat(np.array([[0, 0], [8, 8], [0, 8]]), 10, axis=0)
    truth = ["x"] * 10 + ["y"] * 10 + ["z"] * 10
    Z = linkage(points, method="single")
    assert hierarchical_f_measure(truth, Z) == pytest.approx(1.0)
    # the best node is never worse than any flat cut of the same tree
    from scipy.cluster.hierarchy import fcluster

    for k in (1, 2, 3, 5, 10):
        flat = fcluster(Z, k, criterion="maxclust")
        assert hierarchical_f_measure(truth, Z) >= score_clustering(truth, flat)["f_class"] - 1e-12
    # the completion joins (height 1.0) can be left out
    Z2 = np.array([[0, 1, 0.2, 2], [2, 3, 1.0, 3]], dtype=float)
    assert hierarchical_f_measure(["a", "a", "b"], Z2, max_height=1.0) == pytest.approx(1.0)
    assert hierarchical_f_measure([None, "a", "b"], Z2, max_height=1.0) == pytest.approx(1.0)


def test_quality_floor_on_reuters(reuters_2000, reuters_sets):
    """Pinned floors for exact single link at t = 0.25 on the first 2,000 stories
    (1-word stemmed shingles without stop words): the gate ``single_link_reuters`` of
    tests/quality_gates.toml (floors, measured figures, digest of the stories)."""
    floor = floors("single_link_reuters")
    model = ExactSingleLink(threshold=0.25).fit(reuters_sets)
    truth = [d.label for d in reuters_2000]
    s = score_clustering(truth, model.labels_)
    assert s["n_labelled"] == sum(d.label is not None for d in reuters_2000)
    assert s["f_class"] >= floor["f_class"]
    assert s["purity"] >= floor["purity"]
    assert s["nmi"] >= floor["nmi"]
    assert s["f_pairwise"] >= floor["f_pairwise"]
    f_dendrogram = hierarchical_f_measure(truth, model.linkage_matrix_, max_height=1.0)
    assert f_dendrogram >= floor["f_dendrogram"]
