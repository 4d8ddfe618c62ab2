"""MinHash + LSH through datasketch's ``MinHashLSH`` (Broder 1997; Indyk & Motwani 1998).

Each document's k-word shingles (k = 5) are MinHashed with ``num_perm`` permutations
(:class:`cluster.minhash.MinHasher`, value for value datasketch's ``affine32`` MinHash)
and wrapped as :class:`datasketch.LeanMinHash`; a :class:`datasketch.MinHashLSH` with the
given Jaccard ``threshold`` picks its bands and rows (minimising false positives and
negatives at equal weight) and files every document. Each document is queried; a
candidate pair is kept when its MinHash estimate of Jaccard (equal rows / num_perm) is at
least ``threshold``. This is the method of the anchors (datasketch, text-dedup).
Time O(num_perm · total shingles + n · bands); memory O(n · num_perm).

References
----------
A. Z. Broder, "On the resemblance and containment of documents", 1997.
P. Indyk, R. Motwani, "Approximate nearest neighbors", STOC 1998.
E. Zhu et al., datasketch 2.0 (``MinHashLSH``).
"""

from __future__ import annotations

import math

import numpy as np

from dedup.base import EMPTY, Corpus, NearDuplicateMethod, Signatures, unique_pairs


class MinHashLshMethod(NearDuplicateMethod):
    """MinHash signatures in datasketch's ``MinHashLSH``, candidates verified.

    Parameters
    ----------
    k : int, default 5
    num_perm : int, default 128
    threshold : float, default 0.8
        Jaccard threshold of the LSH index and of the verification.
    seed : int, default 1
    """

    name = "minhash-lsh"
    label = "MinHash + LSH (datasketch)"
    reference = "Broder 1997; datasketch MinHashLSH"
    input = "shingles"
    comparison = "LSH buckets (datasketch), verified by MinHash estimate"

    def __init__(
        self, *, k: int = 5, num_perm: int = 128, threshold: float = 0.8, seed: int = 1
    ) -> None:
        self.k = k
        self.num_perm = num_perm
        self.threshold = threshold
        self.seed = seed

    def _validate(self) -> None:
        self._check(self.k >= 1, f"k must be >= 1, got {self.k}")
        self._check(self.num_perm >= 2, f"num_perm must be >= 2, got {self.num_perm}")
        self._check(0 < self.threshold < 1, f"threshold must lie in (0, 1), got {self.threshold}")

    def signatures(self, corpus: Corpus) -> Signatures:
        from cluster.minhash import MinHasher

        sig = MinHasher(num_perm=self.num_perm, seed=self.seed, scheme="affine32").sign(
            corpus.shingles(self.k)
        )
        hv = sig.hashvalues
        pos = np.arange(self.num_perm, dtype=np.uint64) << np.uint64(32)
        keys = hv.astype(np.uint64) | pos[None, :]
        feats = [EMPTY if sig.empty[i] else keys[i] for i in range(len(corpus))]
        return Signatures(
            feats,
            min_common=math.ceil(self.threshold * self.num_perm),
            data={"hashvalues": hv, "empty": sig.empty},
        )

    def pairs(self, signatures: Signatures) -> np.ndarray:
        from datasketch import LeanMinHash, MinHashLSH

        hv = signatures.data["hashvalues"]
        empty = signatures.data["empty"]
        lsh = MinHashLSH(threshold=self.threshold, num_perm=self.num_perm)
        docs = np.flatnonzero(~empty).tolist()
        sketches = {
            d: LeanMinHash(seed=self.seed, hashvalues=hv[d], scheme="affine32") for d in docs
        }
        with lsh.insertion_session() as session:
            for d in docs:
                session.insert(d, sketches[d], check_duplication=False)
        ii: list[int] = []
        jj: list[int] = []
        for d in docs:
            for other in lsh.query(sketches[d]):
                if other > d:
                    ii.append(d)
                    jj.append(other)
        cand = unique_pairs(np.array(ii, np.int64), np.array(jj, np.int64), len(hv))
        if cand.shape[0] == 0:
            return cand
        est = np.count_nonzero(hv[cand[:, 0]] == hv[cand[:, 1]], axis=1) / self.num_perm
        return cand[est >= self.threshold - 1e-12]
