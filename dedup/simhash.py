"""SimHash: 64-bit Charikar fingerprints, Hamming distance <= k via permuted tables.

Charikar 2002; Manku, Jain, Das Sarma 2007 (seed 004). Every feature (a word, stop words
dropped, stemmed) is hashed to 64 bits (XXH3 via :func:`extract.shingles.token_hashes`);
the fingerprint's bit b is set when the sum over the document's features of
``weight · (+1 if the feature's bit b is set else -1)`` is positive, the weight being the
term frequency. Near-duplicates have fingerprints within Hamming distance ``k`` (3 for
64 bits, Manku et al.).

Pairs within distance k are found without comparing all pairs, with Manku et al.'s
permuted tables: the 64 bits are cut into ``n_blocks`` blocks; two fingerprints within
distance k agree exactly on at least ``n_blocks - k`` blocks (pigeonhole), so one table
per choice of ``n_blocks - k`` blocks, keyed by those blocks' bits, brings every such
pair into a common bucket; candidates are then checked by popcount. With k = 3 and 6
blocks there are C(6, 3) = 20 tables keyed by about 32 bits. Documents without features
have no fingerprint. The vocabulary × 64 sign matrix is built once and the document ×
vocabulary weight matrix is multiplied by it (sparse × dense), so the cost is
O(total tokens + V · 64 + n · 64 · tables). Memory O(V · 64).

References
----------
M. S. Charikar, "Similarity estimation techniques from rounding algorithms", STOC 2002.
G. S. Manku, A. Jain, A. Das Sarma, "Detecting near-duplicates for web crawling",
WWW 2007.
Seed 004_c0888cd231dfb92b.txt (SimHash).
"""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np
from scipy.sparse import csr_matrix

from dedup.base import EMPTY, Corpus, NearDuplicateMethod, Signatures, pairs_from_keys


def weight_matrix(tokens: list[list[str]]) -> tuple[csr_matrix, list[str]]:
    """The document × vocabulary matrix of term counts, and the vocabulary."""
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for d, toks in enumerate(tokens):
        for t in toks:
            rows.append(d)
            cols.append(vocab.setdefault(t, len(vocab)))
    m = csr_matrix(
        (np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(len(tokens), len(vocab))
    )
    m.sum_duplicates()
    return m, list(vocab)


def sign_matrix(vocabulary: list[str], n_bits: int, seed: int = 0) -> np.ndarray:
    """``(V, n_bits)`` matrix of ±1: bit b of each word's hash (64 bits per seed round)."""
    import xxhash

    out = np.empty((len(vocabulary), n_bits), dtype=np.float32)
    shifts = np.arange(64, dtype=np.uint64)
    for r in range(0, n_bits, 64):
        h = np.fromiter(
            (xxhash.xxh3_64_intdigest(w, seed + r) for w in vocabulary),
            dtype=np.uint64,
            count=len(vocabulary),
        )
        width = min(64, n_bits - r)
        bits = (h[:, None] >> shifts[None, :width]) & np.uint64(1)
        out[:, r : r + width] = bits.astype(np.float32) * 2 - 1
    return out


def pack_bits(positive: np.ndarray) -> np.ndarray:
    """Rows of booleans (``n x 64``) as uint64 fingerprints, bit b = column b."""
    weights = np.uint64(1) << np.arange(positive.shape[1], dtype=np.uint64)
    return (positive.astype(np.uint64) * weights[None, :]).sum(axis=1, dtype=np.uint64)


def popcount64(x: np.ndarray) -> np.ndarray:
    """Set bits of each uint64."""
    x = x.astype(np.uint64)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1, dtype=np.int64)


def block_masks(n_blocks: int, k: int) -> list[np.uint64]:
    """One 64-bit mask per table: the union of ``n_blocks - k`` of the blocks."""
    edges = np.linspace(0, 64, n_blocks + 1).round().astype(int)
    blocks = [((1 << int(hi)) - 1) ^ ((1 << int(lo)) - 1) for lo, hi in pairwise(edges)]
    return [
        np.uint64(sum(blocks[i] for i in c)) for c in combinations(range(n_blocks), n_blocks - k)
    ]


class SimHashMethod(NearDuplicateMethod):
    """SimHash fingerprints within Hamming distance ``k``.

    Parameters
    ----------
    k : int, default 3
        Largest Hamming distance of a duplicate.
    n_blocks : int, default 6
        Blocks of the permuted tables (> k); C(n_blocks, k) tables.
    stem : bool, default True
    """

    name = "simhash"
    label = "SimHash (64-bit)"
    reference = "seed 004; Charikar 2002; Manku et al. 2007"
    comparison = "permuted tables (pigeonhole on blocks), verified by popcount"

    def __init__(self, *, k: int = 3, n_blocks: int = 6, stem: bool = True) -> None:
        self.k = k
        self.n_blocks = n_blocks
        self.stem = stem

    def _validate(self) -> None:
        self._check(0 <= self.k < 64, f"k must lie in 0..63, got {self.k}")
        self._check(
            self.k < self.n_blocks <= 64, f"n_blocks must lie in k+1..64, got {self.n_blocks}"
        )

    def signatures(self, corpus: Corpus) -> Signatures:
        tokens = corpus.tokens(stem=self.stem, drop_stopwords=True)
        weights, vocab = weight_matrix(tokens)
        empty = np.asarray(weights.getnnz(axis=1) == 0)
        if not vocab:
            return Signatures([EMPTY] * len(corpus), data={"fingerprints": None, "empty": empty})
        acc = weights @ sign_matrix(vocab, 64)
        fps = pack_bits(np.asarray(acc) > 0)
        masks = np.array(block_masks(self.n_blocks, self.k), dtype=np.uint64)
        with np.errstate(over="ignore"):
            tags = np.arange(1, masks.shape[0] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        # table t files a fingerprint under its masked bits, tagged with t
        keys = (fps[:, None] & masks[None, :]) ^ tags[None, :]
        feats = [EMPTY if empty[i] else keys[i] for i in range(len(corpus))]
        return Signatures(feats, data={"fingerprints": fps, "empty": empty})

    def pairs(self, signatures: Signatures) -> np.ndarray:
        fps = signatures.data["fingerprints"]
        cand = pairs_from_keys(signatures.features)
        if fps is None or cand.shape[0] == 0:
            return cand
        dist = popcount64(fps[cand[:, 0]] ^ fps[cand[:, 1]])
        return cand[dist <= self.k]
