"""The checks every estimator passes (scikit-learn's ``parametrize_with_checks`` in small).

Each estimator of :mod:`cluster` is built on :class:`cluster.base.Estimator`; for each:
made with no arguments it is the command line's (its defaults equal its settings
section), its ``repr`` and ``get_params``/``set_params`` come from the signature, every
parameter outside what is allowed is refused at ``fit`` with a :class:`ParameterError`
that names it, and a fit with a seed gives the same result twice. Fitted on real
Reuters-21578 stories.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from cluster.activity import DEFAULT_STEPS, ActivityClusterer
from cluster.base import Estimator
from cluster.graph_leiden import ExactLeiden
from cluster.knn import KNeighbours
from cluster.lsh_leiden import LSHLeiden
from cluster.lsh_link import LSHLink
from cluster.single_link import ExactSingleLink
from cluster.weighting import TfidfWeighting
from core import defaults as D
from core.exceptions import ParameterError
from core.settings import Settings
from corpora.reuters import ReutersDocument
from dedup.base import NearDuplicateMethod
from extract import Shingler
from extract.terms import TermCounter

ESTIMATORS: list[type[Estimator]] = [
    LSHLink,
    LSHLeiden,
    ExactSingleLink,
    ExactLeiden,
    ActivityClusterer,
    TfidfWeighting,
]
READS_TERMS = (ActivityClusterer, TfidfWeighting)

# parameters checked by the estimator's own rules (schedules, levels), not one constraint
CHECKED_BY_RULES = {"resolution", "coarser", "rows"}

# a value that no constraint of a parameter allows: the first of these it refuses
NOT_ALLOWED = [-(10**9), 10**12, "no-such-choice", None, object()]

# threads: one in the library (scikit-learn's n_jobs=None), [minhash] workers (every core)
# on the command line; the results do not depend on it
NOT_PINNED = {"n_jobs"}


@pytest.fixture(scope="module")
def stories(reuters_2000: list[ReutersDocument]) -> list[str]:
    return [d.text for d in reuters_2000[:160]]


@pytest.fixture(scope="module")
def shingle_sets(stories: list[str]) -> list[np.ndarray]:
    return Shingler(k=1, language="en").hashes_many(stories)


@pytest.fixture(scope="module")
def term_counts(stories: list[str]) -> list[dict[str, int]]:
    counter = TermCounter(language="en")
    return [dict(counter.counts(text)) for text in stories]


def fit_input(est: type[Estimator], shingle_sets: list, term_counts: list) -> list:
    return term_counts if issubclass(est, READS_TERMS) else shingle_sets


def result(model: Any, data: list) -> list:
    """What a fit gives: the labels of every level, or the weighted vectors."""
    if isinstance(model, TfidfWeighting):
        return model.fit_transform(data).toarray().tolist()
    fitted = model.fit(data)
    assert fitted is model
    levels = getattr(model, "levels_", [])
    return [model.labels_.tolist(), *[lvl.labels.tolist() for lvl in levels]]


def _pairs() -> list[tuple[type[Estimator], str]]:
    return [(est, name) for est in ESTIMATORS for name in est._parameter_constraints]


# ------------------------------------------------------------------ defaults = settings


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: e.__name__)
def test_no_arguments_is_the_command_line(est: type[Estimator]) -> None:
    settings = Settings()
    defaults = est().get_params()
    configured = est.from_settings(settings).get_params()
    assert configured.keys() == defaults.keys()
    for name, value in defaults.items():
        if name not in NOT_PINNED:
            assert configured[name] == value, f"{est.__name__}({name}) != its setting"
    for name, key in est._settings_keys.items():
        section, field = key.split(".")
        assert field in type(getattr(settings, section)).model_fields, key
        assert name in defaults


def test_the_settings_sections() -> None:
    # every estimator but the tf-idf weighting reads a section; its defaults are named
    for est in ESTIMATORS:
        assert bool(est._settings_keys) is (est is not TfidfWeighting), est.__name__
    assert TfidfWeighting().get_params() == {
        "min_df": D.TFIDF_MIN_DF,
        "max_df": D.TFIDF_MAX_DF,
    }
    # the Leiden estimators share the [cluster] leiden_* keys; LSHLink the paper's
    assert LSHLeiden().get_params()["threshold"] == D.CLUSTER_LEIDEN_THRESHOLD == 0.02
    assert (LSHLeiden().num_perm, LSHLeiden().rows, LSHLeiden().bands) == (1024, 2, 64)
    assert ExactLeiden().threshold == D.CLUSTER_LEIDEN_THRESHOLD
    assert LSHLink().threshold == ExactSingleLink().threshold == D.CLUSTER_THRESHOLD


def test_settings_reach_the_estimators() -> None:
    s = Settings().replace(
        cluster={"threshold": 0.4, "r0": 8, "leiden_threshold": 0.05, "leiden_rows": 3,
                 "quality": "cpm", "resolution": [0.1], "max_neighbours": 7},
        minhash={"num_perm": 256, "seed": 7, "workers": 2},
        activity={"n_neighbors": 12, "min_df": 3, "seed": 9},
    )  # fmt: skip
    assert (
        LSHLink.from_settings(s).get_params() | {"max_pairs": None}
        == LSHLink(threshold=0.4, r0=8, num_perm=256, seed=7, n_jobs=2, max_pairs=None).get_params()
    )
    leiden = LSHLeiden.from_settings(s, threshold=0.1)
    assert (leiden.threshold, leiden.rows, leiden.num_perm, leiden.seed) == (0.1, 3, 256, 7)
    assert (leiden.quality, leiden.resolution, leiden.max_neighbours) == ("cpm", (0.1,), 7)
    exact = ExactLeiden.from_settings(s)
    assert (exact.threshold, exact.seed, exact.quality) == (0.05, 7, "cpm")
    assert ExactSingleLink.from_settings(s).threshold == 0.4
    act = ActivityClusterer.from_settings(s, seed=4)
    assert (act.n_neighbors, act.min_df, act.seed, act.n_jobs) == (12, 3, 4, 2)


def test_modularity_takes_no_resolution_from_the_settings() -> None:
    # [cluster] resolution holds the levels of rb and cpm; modularity has none
    s = Settings().replace(cluster={"quality": "modularity"})
    assert LSHLeiden.from_settings(s).resolution is None
    assert ExactLeiden.from_settings(s).resolution is None
    assert LSHLeiden.from_settings(Settings(), quality="modularity").resolutions() == [1.0]
    assert LSHLeiden.from_settings(s, resolution=1.0).resolution == 1.0


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: e.__name__)
def test_from_settings_refuses_an_unknown_override(est: type[Estimator]) -> None:
    with pytest.raises(ParameterError, match=rf"thresold: not a parameter of {est.__name__}"):
        est.from_settings(Settings(), thresold=0.5)


# ------------------------------------------------------------------ parameters


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: e.__name__)
def test_params_come_from_the_signature(est: type[Estimator]) -> None:
    model = est()
    params = model.get_params()
    assert list(params) == est.param_names()
    text = repr(model)
    assert text.startswith(f"{est.__name__}(") and text.endswith(")")
    for name, value in params.items():
        assert f"{name}={value!r}" in text
    # round trips: through the constructor and through set_params
    assert est(**params).get_params() == params
    name = next(iter(params))
    changed = model.set_params(**{name: "changed"})
    assert changed is model and model.get_params()[name] == "changed"
    assert model.set_params(**params).get_params() == params
    with pytest.raises(ParameterError, match=r"bogus: not a parameter of"):
        model.set_params(bogus=1)
    # result_params leaves out exactly the parameters the result does not depend on
    kept = model.result_params()
    assert set(params) - set(kept) == set(est._resource_params)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: e.__name__)
def test_every_parameter_is_checked(est: type[Estimator]) -> None:
    unchecked = set(est.param_names()) - set(est._parameter_constraints)
    assert unchecked <= CHECKED_BY_RULES


@pytest.mark.parametrize(("est", "name"), _pairs(), ids=lambda x: getattr(x, "__name__", x))
def test_bad_parameters_are_refused_at_fit(
    est: type[Estimator], name: str, shingle_sets: list, term_counts: list
) -> None:
    constraints = est._parameter_constraints[name]
    bad = next(v for v in NOT_ALLOWED if not any(c(v) for c in constraints))
    model = est().set_params(**{name: bad})  # stored as given; checked at fit
    allowed = " or ".join(str(c) for c in constraints)
    message = f"{name} must be {allowed}, got {bad!r}"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$") as info:
        result(model, fit_input(est, shingle_sets, term_counts)[:3])
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("est", "params", "message"),
    [
        (LSHLeiden, {"rows": 0}, "rows per band must be integers >= 1"),
        (LSHLeiden, {"rows": 2000}, "r=2000 exceeds num_perm=1024"),
        (LSHLeiden, {"resolution": -1.0}, "every resolution must be a number > 0"),
        (ExactLeiden, {"resolution": []}, "resolution is an empty list"),
        (ActivityClusterer, {"resolution": 0}, "every resolution must be a number > 0"),
        (LSHLink, {"r0": 40, "num_perm": 32}, r"r0=40 must be an integer in 1..num_perm=32"),
        (LSHLink, {"r0": 4, "r_min": 5}, r"r_min=5 must be an integer in 1..r0=4"),
        (ActivityClusterer, {"rows": 8, "num_perm": 4}, "rows=8 exceeds num_perm=4"),
        (ActivityClusterer, {"coarser": 1.5}, "coarser=1.5: every coarser level is a factor"),
        (ExactLeiden, {"quality": "modularity"}, "modularity has no resolution"),
    ],
)
def test_rules_between_parameters(
    est: type[Estimator], params: dict, message: str, shingle_sets: list, term_counts: list
) -> None:
    with pytest.raises(ParameterError, match=message):
        result(est(**params), fit_input(est, shingle_sets, term_counts)[:3])


# ------------------------------------------------------------------ fitting


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: e.__name__)
def test_fit_is_deterministic_with_a_seed(
    est: type[Estimator], shingle_sets: list, term_counts: list
) -> None:
    data = fit_input(est, shingle_sets, term_counts)
    seed = {"seed": 5} if "seed" in est.param_names() else {}
    first = result(est(**seed), data)
    assert result(est(**seed), data) == first
    if est is TfidfWeighting:
        assert len(first) == len(data)
    else:  # labels of every document; something was found: not every document alone
        assert len(first[0]) == len(data)
        assert len(set(first[0])) < len(data)


def test_the_near_duplicate_methods_share_the_base() -> None:
    from dedup.registry import METHODS, get_method

    assert issubclass(NearDuplicateMethod, Estimator)
    for name in METHODS:
        method = get_method(name)
        assert repr(method).startswith(type(method).__name__ + "(")
        assert method.set_params(**method.get_params()).get_params() == method.get_params()


def test_the_signers_default_to_their_settings() -> None:
    """The MinHash signers are no estimators (they transform, they do not fit), but their
    defaults are the command line's too: [minhash] for the shingle sets, [activity] for
    the weighted samples of the activity clustering."""
    from cluster import MinHasher, WeightedMinHasher

    settings = Settings()
    signer = MinHasher()
    assert (signer.num_perm, signer.seed, signer.scheme) == (
        settings.minhash.num_perm,
        settings.minhash.seed,
        settings.minhash.scheme,
    )
    weighted = WeightedMinHasher(dim=8)
    assert (weighted.num_perm, weighted.seed) == (
        settings.activity.num_perm,
        settings.activity.seed,
    )


def test_the_clusterer_reads_each_step_parameter_from_the_steps_setting() -> None:
    """ActivityClusterer's settings keys come from its steps' (one table, no drift):
    KNeighbours' ``n_neighbors`` ... ``n_jobs`` are the clusterer's, and so on."""
    ours = ActivityClusterer._settings_keys
    assert KNeighbours._settings_keys, "the neighbour step reads [activity]"
    for cls, names in DEFAULT_STEPS.values():
        for theirs, key in cls._settings_keys.items():
            assert ours[names[theirs]] == key, f"{cls.__name__}.{theirs}"
