"""Coarser levels of the activity clustering (issue 21, item 3): each merges whole clusters
of the level before it, on real corpora, and never changes the clusters themselves."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from cluster.activity import ActivityClusterer
from cluster.evaluate import score_clustering
from cluster.knn import knn_edges
from cluster.nested_leiden import igraph_leiden, merged_levels, modularity
from core.exceptions import ParameterError
from core.settings import Settings
from corpora.activity import load_activity_corpus


@pytest.fixture(scope="module")
def bbc():
    """BBC News: 2,225 stories of 5 topics, the corpus the default grain over-splits."""
    corpus = load_activity_corpus("bbc")
    return corpus, ActivityClusterer.term_counts(corpus.texts, corpus.languages)


def _nested(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Every cluster of ``fine`` lies inside one cluster of ``coarse``."""
    pairs = np.unique(np.column_stack([fine, coarse]), axis=0)
    return len(np.unique(pairs[:, 0])) == pairs.shape[0]


def test_default_levels_finer_clusters_coarser_nested(bbc):
    corpus, counts = bbc
    model = ActivityClusterer().fit(counts)
    roles = [lvl.role for lvl in model.levels_]
    assert roles == ["finer", "clusters", "coarser"]
    assert [lvl.resolution for lvl in model.levels_] == [2.0, 1.0, 0.5]
    assert np.array_equal(model.labels_, model.levels_[1].labels)
    for fine, coarse in zip(model.levels_, model.levels_[1:], strict=False):
        assert _nested(fine.labels, coarse.labels)
    sizes = [lvl.n_clusters for lvl in model.levels_]
    assert sizes[0] > sizes[1] > sizes[2] >= 1, sizes
    # the coarser grain is what an analyst of BBC's 5 topics wants to see: closer to them
    truth = np.asarray(corpus.labels)
    f = [score_clustering(truth, lvl.labels)["f_class"] for lvl in model.levels_]
    assert f[2] > f[1], f


def test_coarser_levels_never_change_the_clusters(bbc):
    _corpus, counts = bbc
    with_coarser = ActivityClusterer(coarser=(0.5, 0.25)).fit(counts)
    without = ActivityClusterer(coarser=()).fit(counts)
    assert np.array_equal(with_coarser.labels_, without.labels_)
    assert [lvl.role for lvl in without.levels_] == ["finer", "clusters"]
    assert [lvl.resolution for lvl in with_coarser.levels_] == [2.0, 1.0, 0.5, 0.25]
    assert with_coarser.n_levels() == 4 and without.n_levels() == 2


def test_a_merge_never_lowers_modularity_at_its_resolution(bbc):
    """Leiden on the graph of the clusters starts from the clusters themselves (each its
    own node), so the merged level's modularity at the smaller resolution is at least
    theirs: the graph of the clusters has the whole graph's modularity."""
    _corpus, counts = bbc
    model = ActivityClusterer(coarser=()).fit(counts)
    n = len(counts)
    nb, sims = model.graph_.neighbours, model.graph_.similarities
    i, j, w = knn_edges(nb, sims)
    base = model.levels_[-1]
    for gamma in (0.8, 0.5, 0.2):
        (merged,) = merged_levels(n, i, j, w, base, quality="rb", resolutions=[gamma], seed=1)
        assert merged.quality >= modularity(n, i, j, w, base.labels, gamma) - 1e-12
        assert merged.quality == pytest.approx(modularity(n, i, j, w, merged.labels, gamma))
        assert _nested(base.labels, merged.labels)


@pytest.mark.parametrize("quality", ["modularity", "cpm"])
def test_coarser_levels_of_every_quality(quality):
    rng = np.random.default_rng(3)
    # three dense groups of 20 nodes, weakly joined
    i, j = np.triu_indices(60, 1)
    same = i // 20 == j // 20
    keep = same | (rng.random(i.shape[0]) < 0.02)
    i, j = i[keep], j[keep]
    w = np.where(same[keep], 0.9, 0.1)
    base = igraph_leiden(60, i, j, w, quality=quality, resolution=0.5, seed=1)
    levels = merged_levels(60, i, j, w, base, quality=quality, resolutions=[0.05, 0.01], seed=1)
    assert [lvl.role for lvl in levels] == ["coarser", "coarser"]
    assert _nested(base.labels, levels[0].labels) and _nested(levels[0].labels, levels[1].labels)
    assert levels[1].n_clusters <= levels[0].n_clusters <= base.n_clusters


def test_empty_graph_and_one_cluster():
    empty = igraph_leiden(0, np.zeros(0, int), np.zeros(0, int), np.zeros(0), quality="rb",
                          resolution=1.0, seed=1)  # fmt: skip
    assert merged_levels(0, np.zeros(0, int), np.zeros(0, int), np.zeros(0), empty,
                         quality="rb", resolutions=[0.5], seed=1)[0].n_clusters == 0  # fmt: skip
    i, j, w = np.array([0, 1]), np.array([1, 2]), np.array([1.0, 1.0])
    one = igraph_leiden(3, i, j, w, quality="rb", resolution=1.0, seed=1)
    (level,) = merged_levels(3, i, j, w, one, quality="rb", resolutions=[0.5], seed=1)
    assert level.labels.tolist() == one.labels.tolist()


@pytest.mark.parametrize("coarser", [(1.0,), (0.0,), (-0.5,), ("half",), (True,)])
def test_a_bad_coarser_factor_is_refused(coarser):
    with pytest.raises(ParameterError, match="factor of the clusters' resolution"):
        ActivityClusterer(coarser=coarser).check_params()


def test_settings_coarser_factors():
    assert Settings.model_validate({"activity": {"coarser": [0.5, 0.25]}}).activity.coarser == (
        0.5,
        0.25,
    )
    assert Settings.model_validate({"activity": {"coarser": []}}).activity.coarser == ()
    with pytest.raises(ValidationError, match="between 0 and 1"):
        Settings.model_validate({"activity": {"coarser": [1.5]}})
    model = ActivityClusterer.from_settings(
        Settings.model_validate({"activity": {"resolution": [3.0, 1.5], "coarser": [0.5]}})
    )
    assert model.coarser_resolutions() == [0.75]
