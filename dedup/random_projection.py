"""Random projection (Charikar 2002): sign bits of random ±1 projections estimate cosine.

Seed 004: every token is mapped to a b-dimensional vector of ±1 (the same for all
pages), a page's vector is the sum over its tokens (so term frequency counts, unlike
shingling), positive components become 1 bits and the rest 0, and the number of equal
bits of two pages estimates their cosine similarity: ``cos(π · hamming / b)``
(Charikar). Here b = 256, the ±1 entries are the bits of seeded XXH3 hashes of each word
(stop words kept, no stemming: the raw token stream), and a pair is a duplicate when the
estimated cosine is at least ``threshold`` (0.95). Unlike :mod:`~dedup.simhash`
(64 bits, fixed Hamming radius, tf of content words), this is a cosine-threshold test
over the full token stream with a longer sketch.

Candidates come from bit-sampling LSH: the 256 bits are cut into ``bands`` (16) bands of
16; pairs sharing a band are verified by popcount. A pair at cosine 0.95 (angle 0.10 π)
agrees on a band with probability 0.9^16 ≈ 0.18 and is found with probability
1 - 0.82^16 ≈ 0.96. Cost O(total tokens + V · b + n · b); memory O(V · b).

References
----------
M. S. Charikar, "Similarity estimation techniques from rounding algorithms", STOC 2002.
Seed 004_c0888cd231dfb92b.txt (random projection).
"""

from __future__ import annotations

import numpy as np

from dedup.base import EMPTY, Corpus, NearDuplicateMethod, Signatures, pairs_from_keys
from dedup.simhash import popcount64, sign_matrix, weight_matrix


class RandomProjectionMethod(NearDuplicateMethod):
    """Charikar's random hyperplanes: ``n_bits`` sign bits, cosine threshold.

    Parameters
    ----------
    n_bits : int, default 256
        Multiple of 64.
    threshold : float, default 0.95
        Estimated cosine of a duplicate.
    bands : int, default 16
        LSH bands of the candidates (``n_bits`` must be a multiple).
    seed : int, default 7
    """

    name = "random-projection"
    label = "Random projection (Charikar)"
    reference = "seed 004; Charikar 2002"
    comparison = "bit-sampling LSH bands, verified by popcount"

    def __init__(
        self, *, n_bits: int = 256, threshold: float = 0.95, bands: int = 16, seed: int = 7
    ) -> None:
        self.n_bits = n_bits
        self.threshold = threshold
        self.bands = bands
        self.seed = seed

    def _validate(self) -> None:
        self._check(
            self.n_bits >= 64 and self.n_bits % 64 == 0,
            f"n_bits must be a positive multiple of 64, got {self.n_bits}",
        )
        self._check(
            -1 < self.threshold <= 1, f"threshold must lie in (-1, 1], got {self.threshold}"
        )
        self._check(
            self.bands >= 1 and self.n_bits % self.bands == 0,
            f"n_bits={self.n_bits} must be a multiple of bands={self.bands}",
        )

    def signatures(self, corpus: Corpus) -> Signatures:
        from dedup.supershingles import group_keys

        tokens = corpus.tokens()
        counts, vocab = weight_matrix(tokens)
        empty = np.asarray(counts.getnnz(axis=1) == 0)
        n = len(corpus)
        if not vocab:
            return Signatures([EMPTY] * n, data={"words": None})
        acc = np.asarray(counts @ sign_matrix(vocab, self.n_bits, seed=self.seed))
        positive = acc > 0
        weights = np.uint64(1) << np.arange(64, dtype=np.uint64)
        words = np.stack(
            [
                (positive[:, w * 64 : (w + 1) * 64].astype(np.uint64) * weights).sum(
                    axis=1, dtype=np.uint64
                )
                for w in range(self.n_bits // 64)
            ],
            axis=1,
        )
        # band keys: consecutive bit ranges of the sketch, as bytes of its words
        per_band = self.n_bits // self.bands
        as_bytes = words.view(np.uint8).reshape(n, self.n_bits // 8)
        if per_band % 8 == 0:
            band_vals = as_bytes.reshape(n, self.bands, per_band // 8)
            packed = np.zeros((n, self.bands), dtype=np.uint64)
            for c in range(per_band // 8):
                packed = (packed << np.uint64(8)) | band_vals[:, :, c].astype(np.uint64)
            keys = group_keys(packed, self.bands, tag=4)
        else:
            bits = np.unpackbits(as_bytes, axis=1, bitorder="little")
            keys = group_keys(bits.astype(np.uint64), self.bands, tag=4)
        feats = [EMPTY if empty[i] else keys[i] for i in range(n)]
        return Signatures(feats, data={"words": words})

    def pairs(self, signatures: Signatures) -> np.ndarray:
        words = signatures.data["words"]
        cand = pairs_from_keys(signatures.features)
        if words is None or cand.shape[0] == 0:
            return cand
        dist = np.zeros(cand.shape[0], dtype=np.int64)
        for w in range(words.shape[1]):
            dist += popcount64(words[cand[:, 0], w] ^ words[cand[:, 1], w])
        cosine = np.cos(np.pi * dist / self.n_bits)
        return cand[cosine >= self.threshold - 1e-12]
