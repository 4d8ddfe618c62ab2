"""Shingle hashes: determinism, distinctness, k, batch = single, hash quality on real text."""

from __future__ import annotations

import numpy as np
import pytest

from corpora.reuters import load_reuters
from extract.shingles import Shingler, shingle_hashes, shingle_hashes_from_tokens
from extract.tokens import tokenize


@pytest.fixture(scope="module")
def reuters_texts() -> list[str]:
    return [d.text for d in load_reuters(limit=3000)]


def test_sorted_distinct_uint64(reuters_texts):
    for text in reuters_texts[:200]:
        for k in (1, 2, 5):
            h = shingle_hashes(text, k=k, language="en")
            assert h.dtype == np.uint64
            assert np.all(np.diff(h.astype(np.float64)) >= 0)
            assert len(np.unique(h)) == len(h)


def test_counts_match_distinct_word_windows():
    tokens = ["a", "rose", "is", "a", "rose", "is", "a", "rose"]
    assert len(shingle_hashes_from_tokens(tokens, 1)) == 3
    assert len(shingle_hashes_from_tokens(tokens, 2)) == 3  # a rose, rose is, is a
    assert len(shingle_hashes_from_tokens(tokens, 3)) == 3
    assert len(shingle_hashes_from_tokens(tokens, 8)) == 1
    assert len(shingle_hashes_from_tokens(tokens, 20)) == 1  # shorter than k: one shingle
    assert len(shingle_hashes_from_tokens([], 3)) == 0
    with pytest.raises(ValueError, match="k >= 1"):
        shingle_hashes_from_tokens(tokens, 0)


def test_order_matters_for_k_above_one_and_k_separates_spaces():
    ab = shingle_hashes_from_tokens(["x", "y"], 2)
    ba = shingle_hashes_from_tokens(["y", "x"], 2)
    assert not np.array_equal(ab, ba)
    assert not np.intersect1d(
        shingle_hashes_from_tokens(["x", "y", "z"], 2), shingle_hashes_from_tokens(["x", "y"], 1)
    ).size


def test_shingler_equals_function_and_tokenize_path(reuters_texts):
    for lang in ("en", None):
        for k in (1, 3):
            sh = Shingler(k=k, language=lang, max_memo=5000)  # small memo: exercises clearing
            batch = sh.hashes_many(reuters_texts[:400])
            for text, h in zip(reuters_texts[:400], batch, strict=True):
                ref = shingle_hashes_from_tokens(tokenize(text, lang, stem=True, stopwords=True), k)
                assert np.array_equal(h, ref)
                assert np.array_equal(h, shingle_hashes(text, k, lang))


def test_hash_bits_are_uniform_on_real_shingles(reuters_texts):
    """Well distributed: every one of the 64 bits is set in ~half of the distinct shingles,
    and the top 8 bits fill 256 buckets evenly (chi-square)."""
    all_h = np.unique(np.concatenate([shingle_hashes(t, 3, "en") for t in reuters_texts]))
    n = len(all_h)
    assert n > 100_000
    bits = ((all_h[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).mean(axis=0)
    assert np.all(np.abs(bits - 0.5) < 0.01)
    counts = np.bincount((all_h >> np.uint64(56)).astype(np.int64), minlength=256)
    expected = n / 256
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 350  # 255 degrees of freedom: p ≈ 1e-4 at 350


def test_no_collisions_among_distinct_reuters_shingles(reuters_texts):
    """Distinct token windows give distinct 64-bit hashes (seed 001, Table 3)."""
    windows: set[tuple[str, ...]] = set()
    for text in reuters_texts[:1500]:
        toks = tokenize(text, "en", stem=True, stopwords=True)
        windows.update(tuple(toks[i : i + 3]) for i in range(len(toks) - 2))
    hashes = {int(shingle_hashes_from_tokens(list(w), 3)[0]) for w in windows}
    assert len(windows) > 50_000
    assert len(hashes) == len(windows)
