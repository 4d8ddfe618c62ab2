"""LSHLeiden and Leiden on similarity graphs: planted communities, real topics, degenerate
input, seeds, parameters."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from cluster.evaluate import score_clustering
from cluster.graph_leiden import (
    ExactLeiden,
    check_quality,
    leiden_levels,
    sparsify_neighbours,
)
from cluster.lsh_leiden import LSHLeiden
from cluster.lsh_link import LSHLink
from cluster.minhash import MinHasher
from core import defaults as D
from core.exceptions import ParameterError
from corpora.bbc import load_bbc
from corpora.reuters import load_reuters
from extract.shingles import Shingler
from tests.quality_gates import floors


def planted_graph(
    sizes: list[int], p_in: float, p_out: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A weighted stochastic block model: strong edges inside blocks, weak and rare across."""
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(len(sizes)), sizes)
    n = truth.shape[0]
    i, j = np.triu_indices(n, k=1)
    same = truth[i] == truth[j]
    u = rng.random(i.shape[0])
    keep = np.where(same, u < p_in, u < p_out)
    w = np.where(same, rng.uniform(0.3, 0.9, i.shape[0]), rng.uniform(0.05, 0.3, i.shape[0]))
    return truth, i[keep], j[keep], w[keep]


def planted_topics(n_topics: int, per_topic: int, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Shingle sets of documents drawn from disjoint topic vocabularies plus shared words."""
    rng = np.random.default_rng(seed)
    shared = np.arange(10**6, 10**6 + 3000, dtype=np.uint64)
    sets, truth = [], []
    for t in range(n_topics):
        vocab = np.arange(t * 1000, t * 1000 + 200, dtype=np.uint64)
        for _ in range(per_topic):
            own = rng.choice(vocab, 80, replace=False)
            common = rng.choice(shared, 30, replace=False)
            sets.append(np.unique(np.concatenate([own, common])))
            truth.append(t)
    return sets, np.array(truth)


# ------------------------------------------------------------------ planted communities


@pytest.mark.parametrize(
    ("quality", "resolution"), [("rb", 1.0), ("modularity", None), ("cpm", 0.05)]
)
def test_planted_communities_in_a_similarity_graph_are_recovered(
    quality: str, resolution: float | None
) -> None:
    truth, i, j, w = planted_graph([60, 50, 40, 30, 20], p_in=0.3, p_out=0.01, seed=7)
    levels = leiden_levels(truth.shape[0], i, j, w, quality=quality, resolutions=resolution, seed=3)
    assert len(levels) == 1
    assert adjusted_rand_score(truth, levels[0].labels) >= 0.98
    assert levels[0].n_clusters == 5


def test_planted_topics_are_recovered_from_shingle_sets() -> None:
    sets, truth = planted_topics(n_topics=4, per_topic=40, seed=11)
    lsh = LSHLeiden(threshold=0.1, rows=3, resolution=1.0, seed=5).fit(sets)
    assert adjusted_rand_score(truth, lsh.labels_) >= 0.98
    exact = ExactLeiden(threshold=0.1, resolution=1.0, seed=5).fit(sets)
    assert adjusted_rand_score(truth, exact.labels_) >= 0.98
    stats = lsh.graph_stats_
    assert stats["nodes"] == 160
    assert stats["edges"] <= stats["pairs_above_threshold"] <= stats["candidate_pairs"]
    # within-topic Jaccard is about 0.3, across topics about 0.003: LSH checks far fewer
    # pairs than the 12,720 of the corpus
    assert stats["candidate_pairs"] < 12720 // 2


def test_two_unrelated_topics_split_in_two() -> None:
    bbc = load_bbc()
    docs = [d for d in bbc if d.label == "sport"][:80] + [d for d in bbc if d.label == "tech"][:80]
    sets = Shingler(k=1, language="en", stem=True, stopwords=True).hashes_many(
        [d.text for d in docs]
    )
    truth = [d.label for d in docs]
    # 20 neighbours a document: with the default 10, the 80 sport stories form two
    # communities (60 and 20) at every level, on this corpus of two large topics
    model = LSHLeiden(
        threshold=0.05, rows=2, similarity="jaccard", resolution=[1.0, 0.5, 0.2], seed=1,
        max_neighbours=20,
    ).fit(sets)  # fmt: skip
    assert model.levels_[-1].n_clusters == 2
    assert adjusted_rand_score(truth, model.labels_) >= 0.95  # measured: 1.0
    # the finer levels split the topics further, never across them
    for level in model.levels_:
        assert score_clustering(truth, level.labels)["purity"] >= 0.99


def test_reuters_quality_floor_and_beats_lsh_link() -> None:
    docs = [d for d in load_reuters(limit=4000) if d.label]
    sets = Shingler(k=1, language="en", stem=True, stopwords=True).hashes_many(
        [d.text for d in docs]
    )
    truth = [d.label for d in docs]
    # LSHLeiden() is the command line's --linkage leiden (the settings chosen on WebKB)
    leiden = score_clustering(truth, LSHLeiden().fit(sets).labels_)
    assert leiden["f_class"] >= floors("lsh_leiden_reuters")["f_class"]  # quality_gates.toml
    best_link = max(
        score_clustering(truth, LSHLink(threshold=t).fit(sets).labels_)["f_class"]
        for t in (0.2, 0.3)
    )  # LSHLink's best thresholds here (0.467 at t=0.2)
    assert leiden["f_class"] > best_link


# ------------------------------------------------------------------ levels and seeds


def test_levels_are_nested_and_ordered_finest_first() -> None:
    truth, i, j, w = planted_graph([40, 40, 30, 30, 20], p_in=0.2, p_out=0.03, seed=2)
    levels = leiden_levels(
        truth.shape[0], i, j, w, quality="rb", resolutions=[0.1, 2.0, 0.5, 1.0], seed=9
    )
    assert [lv.resolution for lv in levels] == [2.0, 1.0, 0.5, 0.1]
    counts = [lv.n_clusters for lv in levels]
    assert counts == sorted(counts, reverse=True)
    for fine, coarse in itertools.pairwise(levels):
        # every fine cluster lies inside one coarse cluster
        pairs = set(zip(fine.labels.tolist(), coarse.labels.tolist(), strict=True))
        assert len({f for f, _ in pairs}) == len(pairs)
    assert all(lv.to_dict()["n_clusters"] == lv.n_clusters for lv in levels)


def test_same_seed_same_clusters() -> None:
    sets, _ = planted_topics(n_topics=6, per_topic=25, seed=4)
    params = {"threshold": 0.05, "rows": 2, "resolution": [2.0, 1.0, 0.5], "seed": 17}
    a = LSHLeiden(**params).fit(sets)
    b = LSHLeiden(**params).fit(sets)
    for la, lb in zip(a.levels_, b.levels_, strict=True):
        assert np.array_equal(la.labels, lb.labels)
        assert la.quality == lb.quality
    assert np.array_equal(a.signatures_.hashvalues, b.signatures_.hashvalues)


def test_labels_are_canonical() -> None:
    sets, _ = planted_topics(n_topics=3, per_topic=20, seed=8)
    labels = LSHLeiden(threshold=0.1, resolution=1.0).fit(sets).labels_
    first_seen = [int(x) for x in dict.fromkeys(labels.tolist())]
    assert first_seen == list(range(labels.max() + 1))


def test_precomputed_signatures_give_the_same_clusters() -> None:
    sets, _ = planted_topics(n_topics=3, per_topic=20, seed=8)
    sig = MinHasher(num_perm=64, seed=2).sign(sets)
    a = LSHLeiden(num_perm=64, seed=2, threshold=0.1).fit(sets)
    b = LSHLeiden(num_perm=64, seed=2, threshold=0.1).fit(sets, signatures=sig)
    assert np.array_equal(a.labels_, b.labels_)
    with pytest.raises(ValueError, match="num_perm"):
        LSHLeiden(num_perm=128, seed=2).fit(sets, signatures=sig)
    with pytest.raises(ValueError, match="signatures for"):
        LSHLeiden(num_perm=64, seed=2).fit(sets[:5], signatures=sig)


# ------------------------------------------------------------------ degenerate input


@pytest.mark.parametrize("estimator", [LSHLeiden, ExactLeiden])
def test_degenerate_inputs(estimator: type) -> None:
    empty = estimator().fit([])
    assert empty.labels_.tolist() == []
    assert empty.graph_stats_["edges"] == 0

    one = estimator().fit([np.arange(50, dtype=np.uint64)])
    assert one.labels_.tolist() == [0]

    blanks = estimator().fit([np.empty(0, dtype=np.uint64)] * 4)
    assert blanks.labels_.tolist() == [0, 1, 2, 3]

    # no two documents share a shingle: no edge, every document alone
    disjoint = [np.arange(k * 100, k * 100 + 60, dtype=np.uint64) for k in range(6)]
    model = estimator(resolution=[1.0, 0.5]).fit(disjoint)
    assert model.graph_stats_["edges"] == 0
    assert model.graph_stats_["isolated"] == 6
    assert all(lv.labels.tolist() == list(range(6)) for lv in model.levels_)

    # identical documents form one cluster; an empty one stays alone
    same = [np.arange(80, dtype=np.uint64)] * 5 + [np.empty(0, dtype=np.uint64)]
    assert estimator().fit(same).labels_.tolist() == [0, 0, 0, 0, 0, 1]


# ------------------------------------------------------------------ helpers and parameters


def test_sparsify_neighbours_matches_brute_force() -> None:
    rng = np.random.default_rng(0)
    n = 40
    i, j = np.triu_indices(n, k=1)
    pick = rng.random(i.shape[0]) < 0.3
    i, j = i[pick], j[pick]
    w = rng.random(i.shape[0])
    for k in (1, 3, 7):
        keep = sparsify_neighbours(n, i, j, w, k)
        expected = np.zeros(i.shape[0], dtype=bool)
        for node in range(n):
            incident = np.flatnonzero((i == node) | (j == node))
            top = incident[np.argsort(-w[incident], kind="stable")][:k]
            expected[top] = True
        assert np.array_equal(keep, expected)
    assert sparsify_neighbours(n, i, j, w, None).all()


def test_max_neighbours_bounds_the_graph() -> None:
    sets, _ = planted_topics(n_topics=2, per_topic=60, seed=1)
    full = LSHLeiden(threshold=0.1, max_neighbours=None).fit(sets).graph_stats_
    sparse = LSHLeiden(threshold=0.1, max_neighbours=5).fit(sets).graph_stats_
    assert sparse["edges"] < full["edges"] == full["pairs_above_threshold"]
    assert sparse["edges"] <= 5 * 120


def test_max_candidates_scores_each_documents_strongest_candidates() -> None:
    sets, truth = planted_topics(n_topics=3, per_topic=80, seed=2)
    every = LSHLeiden(threshold=0.1, max_candidates=None).fit(sets)
    stats = every.graph_stats_
    assert stats["pairs_scored"] == stats["candidate_pairs"]
    capped = LSHLeiden(threshold=0.1, max_candidates=10).fit(sets)
    few = capped.graph_stats_
    assert few["candidate_pairs"] == stats["candidate_pairs"]
    assert few["pairs_scored"] < 0.5 * stats["pairs_scored"]
    assert few["pairs_scored"] <= 1.2 * 10 * len(sets)
    # the strongest candidates hold the topics
    assert adjusted_rand_score(truth, capped.labels_) >= 0.95
    assert adjusted_rand_score(truth, every.labels_) >= 0.95
    # "auto": LEIDEN_CANDIDATES_PER_NEIGHBOUR candidates for every neighbour kept
    assert LSHLeiden(max_neighbours=10).candidate_cap() == 10 * D.LEIDEN_CANDIDATES_PER_NEIGHBOUR
    assert LSHLeiden(max_neighbours=None).candidate_cap() is None
    assert LSHLeiden(max_candidates=50).candidate_cap() == 50
    assert LSHLeiden(max_candidates=None, max_neighbours=20).candidate_cap() is None


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"threshold": 0.0}, "threshold"),
        ({"threshold": 1.0}, "threshold"),
        ({"quality": "louvain"}, "quality"),
        ({"quality": "modularity", "resolution": 0.5}, "modularity has no resolution"),
        ({"resolution": -1.0}, "resolution"),
        ({"resolution": []}, "empty"),
        ({"rows": 0}, "rows"),
        ({"rows": []}, "empty schedule"),
        ({"rows": 2000}, "exceeds num_perm"),
        ({"bands": 0}, "bands"),
        ({"similarity": "cosine"}, "similarity"),
        ({"max_neighbours": 0}, "max_neighbours"),
        ({"max_candidates": 0}, "max_candidates"),
        ({"max_candidates": "many"}, "max_candidates"),
        ({"max_bucket": 1}, "max_bucket"),
        ({"n_iterations": 0}, "n_iterations"),
        ({"num_perm": 0}, "num_perm"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_parameters_say_what_is_allowed(params: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        LSHLeiden(**params).fit([np.arange(10, dtype=np.uint64)] * 2)


def test_check_quality_defaults_and_order() -> None:
    assert check_quality("modularity", None) == [1.0]
    assert check_quality("modularity", 1.0) == [1.0]
    assert check_quality("cpm", [0.01, 0.1]) == [0.1, 0.01]
    with pytest.raises(ParameterError, match="> 0"):
        check_quality("rb", [1.0, True])


def test_banding_schedule_unions_candidates() -> None:
    sets, _ = planted_topics(n_topics=3, per_topic=20, seed=3)
    one = LSHLeiden(threshold=0.1, rows=4, num_perm=128, bands=None).fit(sets).graph_stats_
    two = LSHLeiden(threshold=0.1, rows=[4, 2], num_perm=128, bands=None).fit(sets).graph_stats_
    assert [b["r"] for b in two["bandings"]] == [4, 2]
    assert [b["b"] for b in two["bandings"]] == [32, 64]
    assert two["candidate_pairs"] >= max(b["candidates"] for b in two["bandings"])
    assert two["candidate_pairs"] >= one["candidate_pairs"]


def test_bands_are_at_most_what_the_signature_holds() -> None:
    sets, _ = planted_topics(n_topics=2, per_topic=10, seed=3)
    # [cluster] leiden_bands = 64 bands of r = 2 rows, fewer on a short signature
    assert LSHLeiden().banding_schedule() == [(2, 64)]
    assert LSHLeiden(num_perm=64).banding_schedule() == [(2, 32)]
    assert LSHLeiden(num_perm=64, rows=[4, 2], bands=20).banding_schedule() == [(4, 16), (2, 20)]
    stats = LSHLeiden(num_perm=64, threshold=0.1).fit(sets).graph_stats_
    assert [(b["r"], b["b"]) for b in stats["bandings"]] == [(2, 32)]
