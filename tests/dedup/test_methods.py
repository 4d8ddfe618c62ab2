"""Every near-duplicate method on real Reuters stories with planted copies."""

from __future__ import annotations

import numpy as np
import pytest

from core.exceptions import ParameterError
from dedup.base import Corpus
from dedup.registry import METHODS, get_method

# methods that cannot see through a changed word: exact hashes of the whole text
WHOLE_TEXT = {"a0-md5"}


def _pairs(method, texts):
    m = get_method(method).fit(Corpus(texts, languages=["en"] * len(texts)))
    return {tuple(p) for p in m.pairs_.tolist()}, m


@pytest.mark.parametrize("name", list(METHODS))
def test_finds_copies_and_rejects_unrelated(name, planted):
    pairs, m = _pairs(name, planted.texts)
    assert (0, planted.exact) in pairs, f"{name} missed the exact copy"
    if name in WHOLE_TEXT:
        assert (1, planted.reformatted) in pairs, f"{name} missed the re-wrapped copy"
        assert (2, planted.edited) not in pairs
    else:
        assert (2, planted.edited) in pairs, f"{name} missed the lightly edited copy"
    unrelated = {(a, b) for a, b in pairs if b < planted.n_base}
    assert not unrelated, f"{name} paired unrelated stories {sorted(unrelated)[:5]}"
    assert m.pairs_.dtype == np.int64 and (m.pairs_[:, 0] < m.pairs_[:, 1]).all()


@pytest.mark.parametrize("name", list(METHODS))
def test_empty_and_one_word_documents(name, planted):
    texts = ["", "   ", "word", "word", planted.texts[0], planted.texts[planted.exact], "\n\n"]
    pairs, m = _pairs(name, texts)
    assert (4, 5) in pairs
    for a, b in pairs:
        assert a not in (0, 1, 6) and b not in (0, 1, 6), f"{name} paired an empty document"
    assert len(m.signatures_) == len(texts)
    for grouping in ("components", "cliques", "fpmax"):
        groups = m.groups(grouping=grouping, lengths=np.array([len(t) for t in texts]))
        assert any(set(g.members) >= {4, 5} for g in groups)


@pytest.mark.parametrize("name", list(METHODS))
def test_tiny_corpora(name):
    for texts in ([], [""], ["only one document here"]):
        m = get_method(name).fit(Corpus(texts) if texts else Corpus([]))
        assert m.pairs_.shape == (0, 2)


def test_text_methods_refuse_shingle_only_corpora():
    corpus = Corpus(shingles=[np.array([1, 2, 3], dtype=np.uint64)] * 2)
    with pytest.raises(ParameterError, match="reads text"):
        get_method("a4-long-sent").fit(corpus)
    m = get_method("broder-14x6").fit(corpus)
    assert m.pairs_.tolist() == [[0, 1]]


def test_registry_rejects_unknown_names_and_parameters():
    with pytest.raises(ParameterError, match="minhash-lsh"):
        get_method("no-such-method")
    with pytest.raises(ParameterError, match="threshold"):
        get_method("simhash", threshold=0.5)
    with pytest.raises(ParameterError, match="num_perm=84 must be a multiple"):
        get_method("broder-6x14", n_super=5).fit(["a b c"])
