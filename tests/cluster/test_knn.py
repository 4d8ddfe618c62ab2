"""The k-NN graph (:mod:`cluster.knn`): the exact blocked product against scikit-learn's
brute force, NN-descent's recall against the exact graph on real Reuters stories, the
choice of ``candidates="auto"``, seeds and edge cases (issue 21, item 2)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cluster.knn as knn
from cluster.activity import ActivityClusterer, auto_neighbours
from cluster.knn import exact_knn, nndescent_knn
from cluster.weighting import TfidfWeighting
from extract.terms import count_terms


@pytest.fixture(scope="module")
def reuters_tfidf(reuters_2000) -> sp.csr_matrix:
    """The clusterer's tf-idf of the first 2,000 Reuters stories."""
    counts = count_terms([d.text for d in reuters_2000], ["en"] * len(reuters_2000))
    return TfidfWeighting(min_df=2, max_df=1.0).fit_transform(counts)


def tie_aware_recall(X: sp.csr_matrix, found: np.ndarray, exact_sims: np.ndarray) -> float:
    """Share of the exact neighbours found; a neighbour as similar as the k-th counts."""
    n, k = found.shape
    rows = np.repeat(np.arange(n), k)
    cols = found.ravel()
    ok = cols >= 0
    sims = np.full(rows.shape[0], -1.0)
    sims[ok] = np.asarray(X[rows[ok]].multiply(X[cols[ok]]).sum(axis=1)).ravel()
    wanted = (exact_sims > 0).sum(axis=1)
    kth = np.where(wanted > 0, exact_sims[np.arange(n), np.maximum(wanted - 1, 0)], np.inf)
    hits = (sims.reshape(n, k) >= kth[:, None] - 1e-6).sum(axis=1)
    return float(np.minimum(hits, wanted).sum() / wanted.sum())


def test_exact_knn_equals_scikit_learn_brute_force(reuters_tfidf):
    from sklearn.neighbors import NearestNeighbors

    X, k = reuters_tfidf, 19
    nb, sims = exact_knn(X, k, n_jobs=2, block=300)  # several blocks, in threads
    nn = NearestNeighbors(n_neighbors=k + 1, metric="cosine", algorithm="brute").fit(X)
    dist, _ = nn.kneighbors(X)
    ref = 1.0 - dist[:, 1:]  # the row itself first (its cosine 1)
    assert np.allclose(np.where(ref > 1e-6, ref, 0), sims, atol=1e-5)
    assert tie_aware_recall(X, nb, sims) == 1.0
    assert np.array_equal(nb, exact_knn(X, k)[0])  # threads and blocks change nothing
    assert np.array_equal(nb[:5], exact_knn(X, k, rows=np.arange(5))[0])


@pytest.mark.slow
def test_nndescent_recall_and_seed(reuters_tfidf):
    X = reuters_tfidf
    k = auto_neighbours(X.shape[0])
    _, exact_sims = exact_knn(X, k)
    nb, sims = nndescent_knn(X, k, seed=3, n_jobs=2)
    recall = tie_aware_recall(X, nb, exact_sims)
    assert recall >= 0.95, recall  # measured 0.98-0.99 on these stories
    again, _ = nndescent_knn(X, k, seed=3, n_jobs=2)
    assert np.array_equal(nb, again)  # same seed and threads: same graph
    ok = nb >= 0
    assert np.all(nb != np.arange(X.shape[0])[:, None])  # never its own neighbour
    assert np.all(np.diff(sims, axis=1) <= 1e-6)  # most similar first
    cosines = np.asarray(X[np.nonzero(ok)[0]].multiply(X[nb[ok]]).sum(axis=1)).ravel()
    assert np.allclose(sims[ok], cosines, atol=1e-5)


@pytest.mark.parametrize("find", [exact_knn, nndescent_knn])
def test_edge_cases(find):
    # n <= k: every other row, padded
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32))
    nb, sims = find(X, 5)
    assert nb.shape == (3, 5) and nb[:, 2:].max() == -1 and sims[:, 2:].max() == 0
    assert nb[1, :2].tolist() == [2, 0]  # cosines 0.8 and 0.6: most similar first
    # empty rows have no neighbour and are no one's neighbour
    E = sp.csr_matrix(np.array([[1.0, 0], [0, 0], [0.8, 0.6], [0, 0]], dtype=np.float32))
    nb, sims = find(E, 2)
    assert nb[1].tolist() == [-1, -1] and nb[3].tolist() == [-1, -1]
    assert not np.isin([1, 3], nb).any()
    # exact duplicates: each other's best, similarity 1, never itself
    rng = np.random.default_rng(0)
    D = sp.csr_matrix(np.repeat(rng.random((30, 6)), 3, axis=0).astype(np.float32))
    D = sp.csr_matrix(D.multiply(1 / np.sqrt(D.multiply(D).sum(axis=1))))
    nb, sims = find(D, 2)
    assert np.all(nb != np.arange(90)[:, None])
    assert np.all(nb // 3 == np.arange(90)[:, None] // 3) and np.allclose(sims, 1, atol=1e-5)


def test_auto_picks_nndescent_above_the_exact_limit(reuters_tfidf, monkeypatch):
    X = reuters_tfidf[:600]
    step = ActivityClusterer(n_neighbors=10).named_steps["neighbours"]
    assert step.fit(X).graph_.stats["candidates"] == "exact"
    monkeypatch.setattr(knn, "EXACT_WORK", 1000)
    graph = step.fit(X).graph_
    assert graph.stats["candidates"] == "nndescent"
    assert tie_aware_recall(X, graph.neighbours, exact_knn(X, 10)[1]) >= 0.95


@pytest.mark.parametrize(
    ("block", "n_jobs", "subset"), [(50, 2, False), (7, 1, False), (500, 1, False), (13, 2, True)]
)
def test_exact_knn_breaks_ties_at_the_kth_place_by_the_smaller_index(block, n_jobs, subset):
    """Quantised similarities make many ties; the heaps keep, of equal values, the
    smaller column, whatever the order of the offers (the symmetric product offers a
    block's similarities to later rows before those rows' own blocks come): the result
    is the full sort's first k for every block size and thread count, and for a subset
    of the rows (every block times all columns)."""
    rng = np.random.default_rng(5)
    X = sp.csr_matrix(rng.integers(0, 3, size=(120, 4)).astype(np.float32))
    X = sp.csr_matrix(X.multiply(1 / np.sqrt(np.maximum(X.multiply(X).sum(axis=1), 1e-9))))
    k = 7
    if subset:
        rows = np.arange(3, 120, 4)
        part, part_sims = exact_knn(X, k, block=block, n_jobs=n_jobs, rows=rows)
        nb, sims = np.full((120, k), -1), np.zeros((120, k), np.float32)
        nb[rows], sims[rows] = part, part_sims
    else:
        rows = np.arange(120)
        nb, sims = exact_knn(X, k, block=block, n_jobs=n_jobs)
    S = (X @ X.T).toarray().astype(np.float32)
    for r in rows:
        cols = [c for c in range(X.shape[0]) if c != r and S[r, c] > 0]
        best = sorted(cols, key=lambda c: (-S[r, c], c))[:k]
        assert nb[r, : len(best)].tolist() == best, r
        assert np.all(nb[r, len(best) :] == -1) and np.all(sims[r, len(best) :] == 0)
        assert np.allclose(sims[r, : len(best)], S[r, best])
