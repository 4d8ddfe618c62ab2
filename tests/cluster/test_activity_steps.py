"""The activity clusterer as an estimator of steps (weighting → neighbours → communities →
reassignment), on 400 real Reuters stories: the steps listed, replaced and set as
scikit-learn's ``Pipeline`` does, cloned, and the default steps given explicitly giving the
clusters of the default."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from cluster.activity import STEPS, ActivityClusterer
from cluster.base import clone
from cluster.knn import KNeighbours
from cluster.nested_leiden import LeidenCommunities
from cluster.reassign import CentroidReassignment
from cluster.weighting import CountsBuilder, TermCountMatrix, TfidfWeighting
from core.exceptions import ParameterError
from corpora.reuters import ReutersDocument


@pytest.fixture(scope="module")
def counts(reuters_2000: list[ReutersDocument]) -> TermCountMatrix:
    texts = [d.text for d in reuters_2000[:400]]
    return CountsBuilder().add(ActivityClusterer.term_counts(texts, ["en"] * 400)).build()


@pytest.fixture(scope="module")
def default(counts: TermCountMatrix) -> ActivityClusterer:
    return ActivityClusterer().fit(counts)


def levels(model: ActivityClusterer) -> list[list[int]]:
    return [model.labels_.tolist(), *[lvl.labels.tolist() for lvl in model.levels_]]


def test_the_steps_in_order_built_from_the_parameters() -> None:
    model = ActivityClusterer(min_df=3, n_neighbors=7, seed=4, reassign=2)
    steps = model.named_steps
    assert list(steps) == list(STEPS)
    assert isinstance(steps["weighting"], TfidfWeighting) and steps["weighting"].min_df == 3
    assert steps["neighbours"].get_params()["n_neighbors"] == 7
    assert steps["communities"].seed == steps["neighbours"].seed == 4
    assert steps["reassignment"].get_params() == {"passes": 2}


def test_get_params_deep_lists_every_step() -> None:
    model = ActivityClusterer(neighbours=KNeighbours(n_neighbors=9))
    shallow = model.get_params()
    assert set(STEPS) <= set(shallow) and not any("__" in k for k in shallow)
    deep = model.get_params(deep=True)
    assert deep["neighbours"] is model.neighbours and deep["neighbours__n_neighbors"] == 9
    assert deep["weighting__min_df"] == model.min_df
    assert deep["communities__resolution"] == model.resolution
    assert deep["reassignment__passes"] == model.reassign
    for name in STEPS:  # every parameter of every step
        step = model.named_steps[name]
        assert {f"{name}__{k}" for k in step.get_params()} <= set(deep)


def test_set_params_replaces_a_step_and_sets_its_parameters() -> None:
    model = ActivityClusterer()
    # a default step's parameter is the clusterer's own it is built from
    assert model.set_params(reassignment__passes=3, weighting__max_df=0.5) is model
    assert (model.reassign, model.max_df, model.reassignment) == (3, 0.5, None)
    # a step given is replaced, then its own parameters set
    model.set_params(neighbours=KNeighbours(), neighbours__n_neighbors=5)
    assert model.neighbours.n_neighbors == 5 and model.n_neighbors == "auto"
    with pytest.raises(ParameterError, match=r"neighbours__bogus|bogus: not a parameter"):
        model.set_params(neighbours__bogus=1)
    with pytest.raises(ParameterError, match=r"communities__bogus: not a parameter of the "):
        model.set_params(communities__bogus=1)
    with pytest.raises(ParameterError, match=r"stepz: not a parameter of ActivityClusterer"):
        model.set_params(stepz__k=1)
    model.set_params(reassignment="passthrough")
    with pytest.raises(ParameterError, match=r"reassignment__passes: reassignment of "):
        model.set_params(reassignment__passes=1)


@pytest.mark.parametrize("how", ["cluster.base", "sklearn.base"])
def test_clone_copies_the_parameters_and_the_steps(how: str, counts: TermCountMatrix) -> None:
    if how == "sklearn.base":
        from sklearn.base import clone as copy
    else:
        copy = clone
    model = ActivityClusterer(seed=3, neighbours=KNeighbours(n_neighbors=8, seed=3))
    model.fit(counts)
    twin = copy(model)
    assert type(twin) is ActivityClusterer and not hasattr(twin, "labels_")
    assert twin.neighbours is not model.neighbours
    assert not hasattr(twin.neighbours, "graph_")  # unfitted
    assert repr(twin) == repr(model)
    assert twin.get_params(deep=True).keys() == model.get_params(deep=True).keys()
    assert levels(twin.fit(counts)) == levels(model)


def test_default_steps_given_give_the_default_clusters(
    counts: TermCountMatrix, default: ActivityClusterer
) -> None:
    explicit = ActivityClusterer(
        weighting=TfidfWeighting(min_df=2, max_df=1.0),
        neighbours=KNeighbours(),
        communities=LeidenCommunities(),
        reassignment=CentroidReassignment(),
    ).fit(counts)
    assert levels(explicit) == levels(default)
    assert explicit.vocabulary_ == default.vocabulary_
    stats = {k: v for k, v in explicit.graph_stats_.items() if k != "seconds"}
    assert stats == {k: v for k, v in default.graph_stats_.items() if k != "seconds"}
    assert set(explicit.steps_) == set(STEPS)
    assert explicit.steps_["neighbours"] is explicit.neighbours  # fitted in place
    assert explicit.result_params()["neighbours"] == repr(explicit.neighbours)
    assert default.result_params()["neighbours"] is None


def test_passthrough_steps(counts: TermCountMatrix, default: ActivityClusterer) -> None:
    # no reassignment: Leiden's clusters, as with reassign=0
    none = ActivityClusterer(reassignment="passthrough").fit(counts)
    assert levels(none) == levels(ActivityClusterer(reassign=0).fit(counts))
    assert "reassignment" not in none.steps_ and none.graph_stats_["reassigned"] == 0
    # the documents already weighted: the default's matrix gives the default's clusters
    assert default.graph_stats_["n_empty"] == 0
    given = ActivityClusterer(weighting="passthrough").fit(default.matrix_)
    assert levels(given) == levels(default)
    assert sp.issparse(given.matrix_) and given.matrix_.shape == default.matrix_.shape


class Shuffled:
    """A neighbour step of another kind: the default's neighbours, each row's shuffled
    (a step need only have the interface)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def fit(self, X: Any) -> Shuffled:
        inner = KNeighbours().fit(X)
        rng = np.random.default_rng(self.seed)
        order = rng.permuted(np.tile(np.arange(inner.graph_.neighbours.shape[1]),
                                     (X.shape[0], 1)), axis=1)  # fmt: skip
        inner.graph_.neighbours = np.take_along_axis(inner.graph_.neighbours, order, 1)
        inner.graph_.similarities = np.take_along_axis(inner.graph_.similarities, order, 1)
        self.graph_, self.edges_ = inner.graph_, inner.edges_
        return self


def test_a_step_of_its_own_kind(counts: TermCountMatrix, default: ActivityClusterer) -> None:
    # the same edges in another order of neighbours: the same clusters
    model = ActivityClusterer(neighbours=Shuffled(seed=2)).fit(counts)
    assert model.labels_.tolist() == default.labels_.tolist()
    # something that is not a step is refused at fit, named
    with pytest.raises(ParameterError, match=r"^communities must be None or a step with fit"):
        ActivityClusterer(communities=Shuffled()).fit(counts)
    with pytest.raises(ParameterError, match=r"^weighting must be None or 'passthrough' or "):
        ActivityClusterer(weighting=KNeighbours()).fit(counts)
    # a step given checks its own parameters when fitted
    with pytest.raises(ParameterError, match=r"^max_bucket must be"):
        ActivityClusterer(neighbours=KNeighbours(max_bucket=1)).fit(counts)
