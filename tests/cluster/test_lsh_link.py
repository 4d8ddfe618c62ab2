"""The paper's LSH single link: against exact single link, its levels, its dendrogram,
bad parameters and degenerate input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, is_monotonic, is_valid_linkage
from sklearn.metrics import adjusted_rand_score

from cluster import ExactSingleLink, LSHLink, MinHasher
from cluster.lsh import s_curve_threshold
from core.exceptions import ParameterError
from tests.quality_gates import floors


def refines(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Every cluster of ``fine`` lies inside one cluster of ``coarse``."""
    pairs = set(zip(fine.tolist(), coarse.tolist(), strict=True))
    return len(pairs) == len(set(fine.tolist()))


@pytest.fixture(scope="module")
def exact(reuters_sets):
    return {t: ExactSingleLink(threshold=t).fit(reuters_sets) for t in (0.3, 0.4)}


@pytest.fixture(scope="module")
def model(reuters_sets):
    return LSHLink(threshold=0.4, r0=12, r_min=3, step=3, num_perm=256, seed=1).fit(reuters_sets)


def test_agrees_with_exact_single_link(model, exact):
    """Pinned floor on the first 2,000 Reuters stories: the gate ``lsh_link_agreement``
    of tests/quality_gates.toml."""
    floor = floors("lsh_link_agreement")["ari"]
    assert adjusted_rand_score(exact[0.4].labels_, model.labels_) >= floor


def test_default_parameters_agree_with_exact_single_link(reuters_sets, exact):
    """The defaults (core.defaults CLUSTER_*, MINHASH_*) at their threshold."""
    from core import defaults as D

    m = LSHLink(
        threshold=D.CLUSTER_THRESHOLD,
        r0=D.CLUSTER_R0,
        r_min=D.CLUSTER_R_MIN,
        step=D.CLUSTER_STEP,
        num_perm=D.MINHASH_NUM_PERM,
        seed=D.MINHASH_SEED,
    ).fit(reuters_sets)
    ref = exact.get(D.CLUSTER_THRESHOLD) or ExactSingleLink(threshold=D.CLUSTER_THRESHOLD).fit(
        reuters_sets
    )
    assert adjusted_rand_score(ref.labels_, m.labels_) >= 0.95


def test_links_only_pairs_above_the_threshold(model, exact):
    """With exact Jaccard every LSH link is an edge of the threshold graph, so every LSH
    cluster lies inside one exact single-link cluster."""
    assert refines(model.labels_, exact[0.4].labels_)
    assert len(set(model.labels_.tolist())) >= len(set(exact[0.4].labels_.tolist()))


def test_levels(model):
    rs = [lvl.r for lvl in model.levels_]
    assert rs == [12, 9, 6, 3]
    for lvl in model.levels_:
        assert lvl.b == 256 // lvl.r
        assert lvl.s_curve == pytest.approx(s_curve_threshold(lvl.r, lvl.b))
        assert lvl.n_linked <= lvl.n_compared <= lvl.n_candidates
        assert set(lvl.to_dict()) >= {"r", "b", "s_curve", "n_clusters"}
    counts = [lvl.n_clusters for lvl in model.levels_]
    assert counts == sorted(counts, reverse=True)
    assert counts[-1] == len(set(model.labels_.tolist()))
    for before, after in zip(model.levels_, model.levels_[1:], strict=False):
        assert refines(before.labels, after.labels)  # levels only merge
    assert np.array_equal(model.levels_[-1].labels, model.labels_)
    # lower r admits less similar pairs: later levels compare more pairs
    assert model.levels_[-1].n_candidates > model.levels_[0].n_candidates


def test_linkage_matrix_in_scipy_format(model, reuters_sets):
    Z = model.linkage_matrix_
    assert Z.shape == (len(reuters_sets) - 1, 4)
    assert is_valid_linkage(Z) and is_monotonic(Z)
    cut = fcluster(Z, np.nextafter(1 - 0.4, 0), criterion="distance")
    assert adjusted_rand_score(cut, model.labels_) == 1.0
    # a cut at a higher similarity splits clusters further
    finer = fcluster(Z, 1 - 0.7, criterion="distance")
    assert refines(np.asarray(finer), model.labels_)
    merged = Z[:, 2] < 1.0
    assert (1 - Z[merged, 2] > 0.4).all()  # heights are 1 - similarity of linked pairs


def test_same_parameters_and_seed_same_clusters(reuters_sets):
    params = {"threshold": 0.3, "r0": 8, "r_min": 3, "step": 1, "num_perm": 64, "seed": 7}
    a = LSHLink(**params).fit(reuters_sets[:800])
    b = LSHLink(**params).fit(reuters_sets[:800])
    assert np.array_equal(a.labels_, b.labels_)
    assert np.array_equal(a.linkage_matrix_, b.linkage_matrix_)


def test_signature_similarity_and_precomputed_signatures(reuters_sets, exact):
    sig = MinHasher(num_perm=128, seed=4).sign(reuters_sets)
    m = LSHLink(threshold=0.4, r0=8, r_min=3, step=1, num_perm=128, seed=4,
                similarity="signature")  # fmt: skip
    m.fit(reuters_sets, signatures=sig)
    assert m.signatures_ is sig
    # fraction of equal rows: noisier than exact Jaccard, still close to single link
    assert adjusted_rand_score(exact[0.4].labels_, m.labels_) >= 0.8
    with pytest.raises(ValueError, match="seed"):
        LSHLink(num_perm=128, seed=5).fit(reuters_sets, signatures=sig)
    with pytest.raises(ValueError, match="signatures for"):
        LSHLink(num_perm=128, seed=4).fit(reuters_sets[:10], signatures=sig)


def test_progress_is_called_per_level(reuters_sets):
    seen = []
    LSHLink(r0=6, r_min=2, step=2, num_perm=32).fit(reuters_sets[:200], progress=seen.append)
    assert [lvl.r for lvl in seen] == [6, 4, 2]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"threshold": 0}, r"threshold must be in \(0, 1\), got 0"),
        ({"threshold": 1}, r"threshold must be in \(0, 1\), got 1"),
        ({"threshold": -0.5}, r"threshold must be in \(0, 1\), got -0.5"),
        ({"threshold": 1.2}, r"threshold must be in \(0, 1\), got 1.2"),
        ({"threshold": "0.3"}, r"threshold must be in \(0, 1\), got '0.3'"),
        ({"r0": 40, "num_perm": 32}, r"r0=40 must be an integer in 1..num_perm=32"),
        ({"step": 0}, r"step must be an integer >= 1, got 0"),
        ({"step": -2}, r"step must be an integer >= 1, got -2"),
        ({"r0": 4, "r_min": 5}, r"r_min=5 must be an integer in 1..r0=4"),
        ({"r_min": 0}, r"r_min must be an integer >= 1, got 0"),
        ({"num_perm": 0}, r"num_perm must be an integer in 1..4096"),
        ({"similarity": "cosine"}, r"similarity must be one of jaccard, signature"),
        ({"scheme": "sha1"}, r"scheme must be one of"),
        ({"seed": -1}, r"seed must be an integer"),
    ],
)
def test_bad_parameters_say_what_is_allowed(params, message):
    with pytest.raises(ParameterError, match=message) as info:
        LSHLink(**params).fit([np.arange(3, dtype=np.uint64)])
    assert isinstance(info.value, ValueError)


def test_degenerate_input():
    empty = np.empty(0, dtype=np.uint64)
    doc = np.arange(100, dtype=np.uint64)
    m = LSHLink().fit([])
    assert m.labels_.shape == (0,) and m.linkage_matrix_.shape == (0, 4)
    assert all(lvl.n_clusters == 0 for lvl in m.levels_)
    m = LSHLink().fit([doc])
    assert m.labels_.tolist() == [0]
    m = LSHLink().fit([doc] * 6)  # all identical: one cluster, merged at similarity 1
    assert m.labels_.tolist() == [0] * 6
    assert (m.linkage_matrix_[:, 2] == 0).all()
    m = LSHLink().fit([empty, empty, doc, empty])  # empty documents stay alone
    assert m.labels_.tolist() == [0, 1, 2, 3]
    m = LSHLink(similarity="signature").fit([empty, doc, empty, doc])
    assert m.labels_.tolist() == [0, 1, 2, 1]
