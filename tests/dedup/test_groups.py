"""Groupings against references: networkx components, clique property, brute-force FPmax."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from corpora.clough import load_clough
from dedup.base import Corpus
from dedup.groups import build_groups, choose_canonical
from dedup.registry import get_method
from dedup.simhash import SimHashMethod, popcount64
from dedup.simjoin import jaccard_join
from dedup.supershingles import match_probability
from tests.quality_gates import floors


@pytest.fixture(scope="module")
def random_graph():
    rng = np.random.default_rng(3)
    n = 120
    pairs = np.unique(np.sort(rng.integers(0, n, size=(160, 2)), axis=1), axis=0)
    return n, pairs[pairs[:, 0] != pairs[:, 1]]


def test_components_equal_networkx(random_graph):
    n, pairs = random_graph
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs.tolist())
    ref = sorted(sorted(c) for c in nx.connected_components(g) if len(c) > 1)
    ours = sorted(c.tolist() for c in build_groups(n, pairs, grouping="components"))
    assert ours == ref


def test_cliques_are_disjoint_cliques_within_components(random_graph):
    n, pairs = random_graph
    edges = {tuple(p) for p in pairs.tolist()}
    groups = build_groups(n, pairs, grouping="cliques", max_clique_size=3)
    members = [m for g in groups for m in g.tolist()]
    assert len(members) == len(set(members))
    for g in groups:
        assert 2 <= len(g) <= 3
        assert all((a, b) in edges for a, b in itertools.combinations(g.tolist(), 2))


def test_fpmax_groups_share_min_common_features():
    rng = np.random.default_rng(5)
    feats = [rng.choice(40, size=12, replace=False).astype(np.uint64) for _ in range(30)]
    feats += [
        np.concatenate([f[:10], [100 + i, 200 + i]]).astype(np.uint64)
        for i, f in enumerate(feats[:10])
    ]
    n = len(feats)
    pairs = np.array([(i, j) for i, j in itertools.combinations(range(n), 2)
                      if len(set(feats[i].tolist()) & set(feats[j].tolist())) >= 9])  # fmt: skip
    groups = build_groups(n, pairs, grouping="fpmax", features=feats, min_common=9)
    assert groups, "no closed sets found"
    for g in groups:
        common = set.intersection(*(set(feats[d].tolist()) for d in g.tolist()))
        assert len(common) >= 9
    members = [m for g in groups for m in g.tolist()]
    assert len(members) == len(set(members))


def test_canonical_rules():
    groups = [np.array([2, 5, 7])]
    lengths = np.array([0, 0, 10, 0, 0, 30, 0, 30])
    assert choose_canonical(groups, rule="longest", lengths=lengths) == [5]
    times = np.full(8, np.nan)
    times[7] = 1.0
    assert choose_canonical(groups, rule="earliest", lengths=lengths, times=times) == [7]


def test_simhash_tables_find_every_pair_within_k():
    clough = [d.text for d in load_clough()]
    m = SimHashMethod(k=12, n_blocks=16).fit(Corpus(clough, languages=["en"] * len(clough)))
    fps = m.signatures_.data["fingerprints"]
    i, j = np.triu_indices(len(fps), 1)
    brute = {(a, b) for a, b, d in zip(i, j, popcount64(fps[i] ^ fps[j]), strict=True) if d <= 12}
    assert brute, "the test needs some pairs within distance 12"
    assert {tuple(p) for p in m.pairs_.tolist()} == brute


def test_jaccard_join_is_exact_on_clough():
    clough = Corpus([d.text for d in load_clough()], languages=["en"] * 100)
    sets = clough.shingles(3)
    pairs, _sims = jaccard_join(sets, 0.3)
    brute = set()
    for a, b in itertools.combinations(range(len(sets)), 2):
        sa, sb = set(sets[a].tolist()), set(sets[b].tolist())
        if sa and len(sa & sb) / len(sa | sb) >= 0.3:
            brute.add((a, b))
    assert len(brute) > 10 and {tuple(p) for p in pairs.tolist()} == brute


def test_match_probability_of_seed_001():
    assert match_probability(0.7, rows=14, bands=6) == pytest.approx(0.040, abs=0.001)
    assert match_probability(0.5, rows=14, bands=6) == pytest.approx(0.00037, abs=0.00001)
    assert match_probability(0.7, rows=6, bands=14) == pytest.approx(0.826, abs=0.001)


def test_minhash_lsh_quality_floor_on_reuters(shared_data):
    """On the first 3000 Reuters stories against the exact 5-shingle join (A11): the
    gate ``minhash_lsh_reuters`` of tests/quality_gates.toml (its floors leave room for
    the randomness of MinHash)."""
    from corpora.reuters import load_reuters

    texts = [d.text for d in load_reuters(limit=3000)]
    corpus = Corpus(texts, languages=["en"] * len(texts))
    truth = {tuple(p) for p in get_method("a11-decomposition").fit(corpus).pairs_.tolist()}
    found = {tuple(p) for p in get_method("minhash-lsh").fit(corpus).pairs_.tolist()}
    assert len(truth) > 20
    recall = len(truth & found) / len(truth)
    precision = len(truth & found) / max(len(found), 1)
    floor = floors("minhash_lsh_reuters")
    assert recall >= floor["recall"] and precision >= floor["precision"], (recall, precision)
