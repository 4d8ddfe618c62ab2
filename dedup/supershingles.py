"""Broder's supershingles from 84 MinHashes: 6 groups of 14 and 14 groups of 6 (seed 001).

Each document's distinct k-word shingles (k = 5) are MinHashed with ``num_perm = 84``
permutations (:class:`cluster.minhash.MinHasher`, datasketch's ``affine64`` scheme over
the 64-bit shingle hashes). The 84 minima are cut into ``n_super`` consecutive groups of
``r = 84 / n_super``; each group is hashed into one *supershingle*, tagged with its
position. Two documents are duplicates when they share at least ``min_matches``
supershingles (seed 001's rule: one). A supershingle matches with probability ``s^r`` for
resemblance ``s``, so the pair is found with probability (seed 001, formula 10)

    P(s) = 1 - (1 - s^r)^b,    b = n_super.

Broder's 6x14 (Fetterly et al. 2003) finds few pairs at s = 0.7 (P = 0.04); seed 001
proposes 14x6 for s = 0.7 (P = 0.83). (Seed 001 also states P = 0.98 for 6x14 at
s = 0.9; its own formula gives 1 - (1 - 0.9^14)^6 = 0.79, the value used here.)
:func:`match_probability` tabulates both; ``bench/neardup.py`` prints the table. Pairs come
from hash buckets of
supershingles only. Time O(num_perm · total shingles); memory O(n · num_perm).

References
----------
A. Z. Broder, S. C. Glassman, M. S. Manasse, G. Zweig, "Syntactic clustering of the Web",
WWW 1997; D. Fetterly, M. Manasse, M. Najork, J. Wiener, "A large-scale study of the
evolution of web pages", WWW 2003 (84 functions, 6 supershingles of 14).
A. Tsimbalov, O. Zolotarev, seed 001_05c19045332a695a.txt (formula 10; 14 groups of 6).

Examples
--------
>>> round(match_probability(0.9, rows=14, bands=6), 2), round(match_probability(0.7, 6, 14), 2)
(0.79, 0.83)
"""

from __future__ import annotations

import numpy as np

from dedup.base import EMPTY, Corpus, NearDuplicateMethod, Signatures


def match_probability(s: float | np.ndarray, rows: int, bands: int) -> float | np.ndarray:
    """Probability that two documents of resemblance ``s`` share one of ``bands`` groups
    of ``rows`` MinHashes: ``1 - (1 - s**rows)**bands`` (a float for a scalar ``s``)."""
    p = 1.0 - (1.0 - np.asarray(s, dtype=np.float64) ** rows) ** bands
    return float(p) if p.ndim == 0 else p


_M = np.uint64(0x9E3779B97F4A7C15)


def group_keys(hashvalues: np.ndarray, n_groups: int, tag: int = 0) -> np.ndarray:
    """One 64-bit key per row and consecutive column group: ``(n, n_groups)`` uint64.

    Each key mixes the group's values and its position (and ``tag``) with a
    polynomial hash and the MurmurHash3 finaliser.
    """
    from extract.shingles import fmix64

    n, m = hashvalues.shape
    r = m // n_groups
    hv = hashvalues.astype(np.uint64, copy=False)
    out = np.empty((n, n_groups), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for g in range(n_groups):
            h = np.full(n, (tag << 16) + g + 1, dtype=np.uint64)
            for c in range(g * r, (g + 1) * r):
                h = h * _M + hv[:, c]
            out[:, g] = fmix64(h)
    return out


def minhash_matrix(shingles: list[np.ndarray], num_perm: int, seed: int) -> tuple:
    """MinHash values ``(n, num_perm)`` (``affine64``) and the empty-document mask."""
    from cluster.minhash import MinHasher

    sig = MinHasher(num_perm=num_perm, seed=seed, scheme="affine64", hash_func="identity").sign(
        shingles
    )
    return sig.hashvalues, sig.empty


class SupershingleMethod(NearDuplicateMethod):
    """Broder supershingles: ``num_perm`` MinHashes in ``n_super`` groups.

    Parameters
    ----------
    k : int, default 5
        Words per shingle.
    num_perm : int, default 84
        MinHash functions.
    n_super : int
        Supershingles (groups); ``num_perm`` must be a multiple of it.
    min_matches : int, default 1
        Supershingles two duplicates must share.
    seed : int, default 1
        Seed of the permutations.
    """

    input = "shingles"
    reference = "seed 001 (Tsimbalov & Zolotarev 2016); Broder et al. 1997"
    default_super = 6

    def __init__(
        self,
        *,
        k: int = 5,
        num_perm: int = 84,
        n_super: int | None = None,
        min_matches: int = 1,
        seed: int = 1,
    ) -> None:
        self.k = k
        self.num_perm = num_perm
        self.n_super = self.default_super if n_super is None else n_super
        self.min_matches = min_matches
        self.seed = seed

    def _validate(self) -> None:
        self._check(self.k >= 1, f"k must be >= 1, got {self.k}")
        self._check(
            self.n_super >= 1 and self.num_perm % self.n_super == 0,
            f"num_perm={self.num_perm} must be a multiple of n_super={self.n_super}",
        )
        self._check(
            1 <= self.min_matches <= self.n_super,
            f"min_matches must lie in 1..n_super, got {self.min_matches}",
        )

    @property
    def rows(self) -> int:
        """MinHashes per supershingle."""
        return self.num_perm // self.n_super

    def signatures(self, corpus: Corpus) -> Signatures:
        hv, empty = minhash_matrix(corpus.shingles(self.k), self.num_perm, self.seed)
        keys = group_keys(hv, self.n_super)
        feats = [EMPTY if empty[i] else keys[i] for i in range(len(corpus))]
        return Signatures(feats, min_common=self.min_matches)


class Broder6x14Method(SupershingleMethod):
    """6 supershingles of 14 MinHashes each (Broder; Fetterly et al.)."""

    name = "broder-6x14"
    label = "Broder 6x14 supershingles"
    default_super = 6


class Broder14x6Method(SupershingleMethod):
    """14 supershingles of 6 MinHashes each (seed 001's proposal for s = 0.7)."""

    name = "broder-14x6"
    label = "Broder 14x6 supershingles"
    default_super = 14
