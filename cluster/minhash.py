"""MinHash signatures of a whole corpus at once, value for value those of datasketch 2.x.

MinHash (Broder 1997): under a random permutation π of the shingle universe, the
probability that two sets have the same minimum is their Jaccard similarity, so the
fraction of equal rows among ``num_perm`` independent minima estimates it, with
standard error ``sqrt(J (1 - J) / num_perm)`` (seed 001_05c19045332a695a.txt; seed
000_d819228b9213e10a.txt, «Minhashing»).

The permutations are datasketch's (``datasketch.MinHash``, version 2.x), drawn from
``numpy.random.RandomState(seed)`` exactly as datasketch draws them:

``affine32`` / ``affine64``
    the input hash ``h`` (32 / 64 bits) is mixed once by the MurmurHash3 finalizer
    ``fmix`` and permuted by ``a_k * fmix(h) + b_k mod 2^w`` (``a_k`` odd);
``legacy``
    datasketch before 2.0: ``(a_k * h + b_k) mod (2^61 - 1)``, truncated to 32 bits.

The input of datasketch's ``hashfunc`` here is a shingle's 64-bit hash
(:func:`extract.shingle_hashes`); the hash functions of :data:`HASH_FUNCTIONS` map it
to the scheme's width: ``identity`` (64 bits, for ``affine64``) or ``low32`` (its low
32 bits, for ``affine32`` and ``legacy``). The same Python callable is what a test
passes to ``datasketch.MinHash(hashfunc=...)`` to check equality value for value.

Vectorised signing (:meth:`MinHasher.sign`) concatenates the shingles of a block of
documents, computes the ``num_perm x n_shingles`` matrix of permuted values with numpy
(permutations x shingles, so each permutation is one contiguous row) and reduces each
document's columns with ``np.minimum.reduceat``. Blocks are independent: with
``n_jobs > 1`` a pool of threads signs them at once (numpy's ufuncs release the GIL), with
the same values.

Complexity: time O(num_perm · S) for S shingles in the corpus (with duplicates within
a document counted once per occurrence); memory O(n · num_perm) for the signatures
plus one block of ``num_perm x block`` values per thread (16 MiB by default: 4,096
shingles a block at 1,024 permutations, the fastest of 1 to 64 MiB on Reuters-21578 in
``bench/results/signatures.md``; :attr:`MinHasher.block_bytes`).

References
----------
A. Z. Broder, "On the resemblance and containment of documents", SEQUENCES 1997.
E. Zhu et al., datasketch 2.0, ``datasketch/minhash.py`` (permutation schemes).

Examples
--------
>>> import numpy as np
>>> hasher = MinHasher(num_perm=16, seed=1)
>>> sets = [np.arange(100, dtype=np.uint64), np.arange(50, 150, dtype=np.uint64)]
>>> sig = hasher.sign(sets)
>>> sig.hashvalues.shape, sig.scheme, sig.hash_func
((2, 16), 'affine32', 'low32')
>>> 0.0 <= sig.similarity(0, 1) <= 1.0
True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from cluster.base import N_JOBS, SEED, Interval, Options, check_param
from core import defaults as D
from core.choices import SCHEMES
from core.exceptions import ParameterError

NUM_PERM = Interval(int, 1, 4096)
"""Permutations of a signature (rows)."""

_MERSENNE = np.uint64((1 << 61) - 1)
_MAX32 = (1 << 32) - 1
DTYPES: dict[str, type[np.unsignedinteger[Any]]] = {
    "affine32": np.uint32,
    "affine64": np.uint64,
    "legacy": np.uint64,
}
# bytes of signature rows gathered per step of MinHashSignatures.pair_similarity (both
# ends)
CACHE_BLOCK_BYTES = 16 << 20
_WIDTH = {"affine32": 32, "affine64": 64, "legacy": 32}
_EMPTY = {"affine32": _MAX32, "affine64": (1 << 64) - 1, "legacy": _MAX32}
_FMIX = {
    32: (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35), np.uint32(16)),
    64: (
        np.uint64(33),
        np.uint64(0xFF51AFD7ED558CCD),
        np.uint64(33),
        np.uint64(0xC4CEB9FE1A85EC53),
        np.uint64(33),
    ),
}


def hash_identity(h: int) -> int:
    """The datasketch ``hashfunc`` of the ``identity`` hash: a 64-bit shingle hash as is."""
    return int(h)


def hash_low32(h: int) -> int:
    """The datasketch ``hashfunc`` of the ``low32`` hash: the low 32 bits of a shingle hash."""
    return int(h) & _MAX32


def _identity_vec(h: np.ndarray) -> np.ndarray:
    return h.astype(np.uint64, copy=False)


def _low32_vec(h: np.ndarray) -> np.ndarray:
    return h.astype(np.uint32)  # numpy truncates to the low 32 bits


HASH_FUNCTIONS: dict[str, tuple[Callable[[int], int], Callable[[np.ndarray], np.ndarray], int]] = {
    "identity": (hash_identity, _identity_vec, 64),
    "low32": (hash_low32, _low32_vec, 32),
}
"""Hash function name -> (datasketch ``hashfunc``, its numpy form, output width in bits)."""

DEFAULT_HASH = {"affine32": "low32", "affine64": "identity", "legacy": "low32"}
"""The hash function each scheme uses when none is given."""


def fmix(hv: np.ndarray, width: int) -> np.ndarray:
    """The MurmurHash3 finalizer (a bijection on ``[0, 2^width)``), as datasketch applies it.

    Parameters
    ----------
    hv : ndarray of uint32 or uint64
    width : {32, 64}

    Returns
    -------
    ndarray
        Same shape and dtype.
    """
    s1, m1, s2, m2, s3 = _FMIX[width]
    hv = hv ^ (hv >> s1)
    hv = hv * m1
    hv = hv ^ (hv >> s2)
    hv = hv * m2
    return hv ^ (hv >> s3)


def permutations(num_perm: int, seed: int, scheme: str) -> np.ndarray:
    """The ``(2, num_perm)`` array ``[a, b]`` of datasketch's permutations.

    Drawn from ``numpy.random.RandomState(seed)`` in the order datasketch 2.x draws them,
    so ``datasketch.MinHash(num_perm, seed, scheme=scheme).permutations`` is equal.

    Examples
    --------
    >>> permutations(3, 1, "affine32").dtype
    dtype('uint32')
    """
    gen = np.random.RandomState(seed)
    if scheme == "legacy":
        return np.array(
            [
                (
                    gen.randint(1, _MERSENNE, dtype=np.uint64),
                    gen.randint(0, _MERSENNE, dtype=np.uint64),
                )
                for _ in range(num_perm)
            ],
            dtype=np.uint64,
        ).T
    width = _WIDTH[scheme]
    dtype = DTYPES[scheme]
    a = gen.randint(0, 1 << (width - 1), num_perm, dtype=dtype) * dtype(2) + dtype(1)
    b = gen.randint(0, 1 << width, num_perm, dtype=dtype)
    return np.array([a, b])


@dataclass(frozen=True, eq=False)
class MinHashSignatures:
    """The MinHash signatures of a corpus and what produced them.

    Attributes
    ----------
    hashvalues : ndarray of shape (n_documents, num_perm)
        uint32 (``affine32``) or uint64; row ``i`` is document ``i``'s signature.
    num_perm, seed : int
    scheme : str
        One of :data:`SCHEMES`.
    hash_func : str
        A key of :data:`HASH_FUNCTIONS`.
    empty : ndarray of bool, shape (n_documents,)
        Documents without shingles (their rows hold the empty sentinel, the scheme's
        maximum value, as in datasketch).

    Notes
    -----
    Combining or comparing two :class:`MinHashSignatures` checks that num_perm, seed, scheme and
    hash function match (:meth:`check_compatible`).
    """

    hashvalues: np.ndarray
    num_perm: int
    seed: int
    scheme: str
    hash_func: str
    empty: np.ndarray

    def __len__(self) -> int:
        return int(self.hashvalues.shape[0])

    @property
    def params(self) -> dict[str, Any]:
        """num_perm, seed, scheme and hash function, as stored with every signature."""
        return {
            "num_perm": self.num_perm,
            "seed": self.seed,
            "scheme": self.scheme,
            "hash_func": self.hash_func,
        }

    def check_compatible(self, other: MinHashSignatures) -> None:
        """Raise ``ValueError`` unless ``other`` was made with the same parameters.

        Raises
        ------
        ValueError
            num_perm, seed, scheme or hash function differ; the message names them.
        """
        diffs = [
            f"{k}: {v!r} != {other.params[k]!r}"
            for k, v in self.params.items()
            if other.params[k] != v
        ]
        if diffs:
            raise ValueError(
                "signatures made with different MinHash parameters cannot be compared or "
                "combined (" + "; ".join(diffs) + "): sign both corpora with one MinHasher"
            )

    def similarity(self, i: int, j: int) -> float:
        """Fraction of equal rows of documents ``i`` and ``j`` (0 when either is empty)."""
        if self.empty[i] or self.empty[j]:
            return 0.0
        return float(np.count_nonzero(self.hashvalues[i] == self.hashvalues[j])) / self.num_perm

    def pair_similarity(self, i: np.ndarray, j: np.ndarray, block: int = 65536) -> np.ndarray:
        """Fraction of equal rows for many pairs at once.

        Parameters
        ----------
        i, j : ndarray of int, same shape
            Document indices.
        block : int
            At most this many pairs compared per numpy step (bounds memory at about
            ``block * num_perm`` values). The step is smaller still when the two
            gathered blocks of rows would not fit in about 16 MiB
            (:data:`CACHE_BLOCK_BYTES`): the comparison is bound by memory traffic,
            and blocks that stay in the processor's cache made it 2.7 times faster
            (1,024 permutations, 2,048 pairs a step instead of 29,127;
            ``bench/results/linkage.md``). The values are the same.

        Returns
        -------
        ndarray of float64
            0 for any pair with an empty document.
        """
        i = np.asarray(i, dtype=np.intp)
        j = np.asarray(j, dtype=np.intp)
        out = np.empty(i.shape[0], dtype=np.float64)
        hv = self.hashvalues
        row_bytes = max(1, self.num_perm * hv.dtype.itemsize)
        block = max(1, min(int(block), CACHE_BLOCK_BYTES // (2 * row_bytes)))
        for s in range(0, i.shape[0], block):
            ii, jj = i[s : s + block], j[s : s + block]
            out[s : s + block] = np.count_nonzero(hv[ii] == hv[jj], axis=1)
        out /= self.num_perm
        out[self.empty[i] | self.empty[j]] = 0.0
        return out

    def bit_sketch(self, rows: int = 65536) -> np.ndarray:
        """The lowest bit of every row, packed 64 to a word: 1-bit minwise hashing.

        Li & König ("b-Bit Minwise Hashing", WWW 2010) keep only the lowest ``b`` bits of
        each MinHash value; with ``b = 1`` a signature of ``num_perm`` rows takes
        ``num_perm / 8`` bytes, a 32nd of its uint32 values, and two documents still
        tell their similarity (:meth:`pair_bit_similarity`).

        Parameters
        ----------
        rows : int
            Documents packed per step (bounds the working memory; a memory-mapped
            signature matrix is read in such steps).

        Returns
        -------
        ndarray of uint64, shape (n_documents, ceil(num_perm / 64))
            Bit ``r`` of document ``i`` is row ``r``'s lowest bit; unused bits are 0.
        """
        n, p = self.hashvalues.shape
        words = -(-p // 64)
        out = np.zeros((n, words * 8), dtype=np.uint8)
        for s in range(0, n, max(1, rows)):
            low = (np.asarray(self.hashvalues[s : s + rows]) & 1).astype(np.uint8)
            packed = np.packbits(low, axis=1, bitorder="little")
            out[s : s + rows, : packed.shape[1]] = packed
        return out.view(np.uint64)

    def pair_bit_similarity(self, i: np.ndarray, j: np.ndarray, block: int = 65536) -> np.ndarray:
        """The similarity of many pairs estimated from their 1-bit sketches.

        Two rows' lowest bits agree when the rows are equal (probability ``s``, the
        Jaccard similarity) and by chance half the time otherwise, so with ``a`` of the
        ``num_perm`` bits agreeing, ``2 a / num_perm - 1`` estimates ``s`` (clipped to
        [0, 1]; standard deviation about ``sqrt((1 - s^2) / num_perm)``, 0.031 at
        ``s = 0.15`` with 1,024 rows, against 0.011 for :meth:`pair_similarity`) for a
        32nd of its memory traffic: enough to rank candidate pairs before their
        similarity is computed (:class:`cluster.lsh_leiden.LSHLeiden`).

        Parameters
        ----------
        i, j : ndarray of int, same shape
            Document indices.
        block : int
            Pairs compared per numpy step.

        Returns
        -------
        ndarray of float64
            0 for any pair with an empty document.

        Examples
        --------
        >>> sig = MinHasher(num_perm=256, seed=1).sign(
        ...     [np.arange(100, dtype=np.uint64), np.arange(50, 150, dtype=np.uint64)])
        >>> est = sig.pair_bit_similarity(np.array([0]), np.array([1]))
        >>> bool(abs(est[0] - 50 / 150) < 0.15), bool(abs(sig.similarity(0, 1) - 50 / 150) < 0.1)
        (True, True)
        """
        i = np.asarray(i, dtype=np.intp)
        j = np.asarray(j, dtype=np.intp)
        sk = self.bit_sketch()
        out = np.empty(i.shape[0], dtype=np.float64)
        for s in range(0, i.shape[0], max(1, block)):
            differ = np.bitwise_count(sk[i[s : s + block]] ^ sk[j[s : s + block]])
            out[s : s + block] = differ.sum(axis=1, dtype=np.int64)
        np.clip(1.0 - 2.0 * out / self.num_perm, 0.0, 1.0, out=out)
        out[self.empty[i] | self.empty[j]] = 0.0
        return out

    def subset(self, index: Sequence[int] | np.ndarray) -> MinHashSignatures:
        """The signatures of some documents, in the order given."""
        idx = np.asarray(index, dtype=np.intp)
        return MinHashSignatures(
            self.hashvalues[idx], self.num_perm, self.seed, self.scheme, self.hash_func,
            self.empty[idx],
        )  # fmt: skip

    def concat(self, *others: MinHashSignatures) -> MinHashSignatures:
        """These signatures followed by others made with the same parameters.

        Raises
        ------
        ValueError
            Another set was made with different parameters.
        """
        for o in others:
            self.check_compatible(o)
        return MinHashSignatures(
            np.concatenate([self.hashvalues, *(o.hashvalues for o in others)]),
            self.num_perm, self.seed, self.scheme, self.hash_func,
            np.concatenate([self.empty, *(o.empty for o in others)]),
        )  # fmt: skip

    def row_bytes(self, i: int) -> bytes:
        """Document ``i``'s signature as little-endian uint64 bytes (the stored form)."""
        return self.hashvalues[i].astype("<u8").tobytes()

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[bytes],
        *,
        num_perm: int,
        seed: int,
        scheme: str,
        hash_func: str,
    ) -> MinHashSignatures:
        """Rebuild signatures from stored little-endian uint64 rows (:meth:`row_bytes`).

        Raises
        ------
        ValueError
            A row does not hold ``num_perm`` values.
        """
        dtype = DTYPES[scheme]
        hv = np.empty((len(rows), num_perm), dtype=dtype)
        for k, row in enumerate(rows):
            values = np.frombuffer(row, dtype="<u8")
            if values.shape[0] != num_perm:
                raise ValueError(
                    f"stored signature {k} holds {values.shape[0]} values, expected "
                    f"num_perm={num_perm}"
                )
            hv[k] = values.astype(dtype)
        empty = np.all(hv == dtype(_EMPTY[scheme]), axis=1)
        return cls(hv, num_perm, seed, scheme, hash_func, empty)


class MinHasher:
    """Signs whole corpora with datasketch's MinHash permutations, vectorised.

    Parameters
    ----------
    num_perm : int, default ``[minhash] num_perm`` (1024)
        Number of permutations (rows of a signature), 1 .. 4096.
    seed : int, default ``[minhash] seed`` (1)
        Seed of the permutations (``numpy.random.RandomState``), 0 .. 2**31-1.
    scheme : {"affine32", "affine64", "legacy"}, default ``[minhash] scheme``
        datasketch's permutation scheme (:data:`core.choices.SCHEMES`).
    hash_func : {"low32", "identity"}, optional
        Maps a 64-bit shingle hash to the scheme's width; default :data:`DEFAULT_HASH`.
    block_bytes : int, default 16 MiB
        Memory of one block of permuted values.

    Raises
    ------
    ParameterError
        A parameter is outside what is allowed (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> from datasketch import MinHash
    >>> shingles = np.array([11, 22, 33], dtype=np.uint64)
    >>> h = MinHasher(num_perm=8, seed=3)
    >>> ref = MinHash(num_perm=8, seed=3, scheme="affine32", hashfunc=h.hashfunc)
    >>> ref.update_batch(shingles.tolist())
    >>> bool(np.array_equal(h.sign([shingles]).hashvalues[0], ref.hashvalues))
    True
    """

    def __init__(
        self,
        *,
        num_perm: int = D.MINHASH_NUM_PERM,
        seed: int = D.MINHASH_SEED,
        scheme: str = D.MINHASH_SCHEME,
        hash_func: str | None = None,
        block_bytes: int = 16 << 20,
    ) -> None:
        check_param("num_perm", num_perm, [NUM_PERM])
        check_param("seed", seed, [SEED])
        check_param("scheme", scheme, [Options(SCHEMES)])
        hash_func = hash_func or DEFAULT_HASH[scheme]
        if hash_func not in HASH_FUNCTIONS:
            raise ParameterError(
                f"hash_func must be one of {', '.join(HASH_FUNCTIONS)}; got {hash_func!r}"
            )
        if HASH_FUNCTIONS[hash_func][2] > _WIDTH[scheme]:
            raise ParameterError(
                f"hash_func {hash_func!r} gives 64-bit values but scheme {scheme!r} takes 32-bit "
                "ones: use hash_func='low32' or scheme='affine64'"
            )
        if block_bytes < 1 << 16:
            raise ParameterError(f"block_bytes must be >= 65536, got {block_bytes}")
        self.num_perm = int(num_perm)
        self.seed = int(seed)
        self.scheme = scheme
        self.hash_func = hash_func
        self.block_bytes = int(block_bytes)
        self.permutations = permutations(self.num_perm, self.seed, scheme)
        self._dtype = DTYPES[scheme]

    @property
    def hashfunc(self) -> Callable[[int], int]:
        """The datasketch ``hashfunc`` equivalent to :attr:`hash_func`."""
        return HASH_FUNCTIONS[self.hash_func][0]

    @property
    def params(self) -> dict[str, Any]:
        """num_perm, seed, scheme and hash function."""
        return {
            "num_perm": self.num_perm,
            "seed": self.seed,
            "scheme": self.scheme,
            "hash_func": self.hash_func,
        }

    def datasketch(self, shingles: np.ndarray) -> Any:
        """The reference: one ``datasketch.MinHash`` updated with ``shingles``."""
        from datasketch import MinHash

        m = MinHash(
            num_perm=self.num_perm, seed=self.seed, scheme=self.scheme, hashfunc=self.hashfunc
        )
        if len(shingles):
            m.update_batch(np.asarray(shingles, dtype=np.uint64).tolist())
        return m

    def _permute(self, hv: np.ndarray) -> np.ndarray:
        """``num_perm x len(hv)`` permuted values of input hashes ``hv`` (scheme width)."""
        a, b = self.permutations
        if self.scheme == "legacy":
            phv = np.multiply(a[:, None], hv[None, :].astype(np.uint64))
            phv += b[:, None]
            phv %= _MERSENNE
            phv &= np.uint64(_MAX32)
            return phv
        mixed = fmix(hv.astype(self._dtype, copy=False), _WIDTH[self.scheme])
        phv = np.multiply(a[:, None], mixed[None, :])
        phv += b[:, None]
        return phv

    def _blocks(self, lengths: np.ndarray) -> list[np.ndarray]:
        """The non-empty documents cut into blocks whose shingles fill one block of values."""
        per_block = max(1, self.block_bytes // (self.num_perm * np.dtype(self._dtype).itemsize))
        nonempty = np.flatnonzero(lengths > 0)
        csum = np.cumsum(lengths[nonempty])
        blocks, start = [], 0
        while start < nonempty.shape[0]:
            # documents [start, stop) of `nonempty` whose shingles fit in one block
            done = int(csum[start - 1]) if start else 0
            stop = max(start + 1, int(np.searchsorted(csum, done + per_block, side="right")))
            blocks.append(nonempty[start:stop])
            start = stop
        return blocks

    def sign(self, shingle_sets: Sequence[np.ndarray], n_jobs: int = 1) -> MinHashSignatures:
        """Sign every document: equal, row for row, to datasketch's MinHash of its shingles.

        Parameters
        ----------
        shingle_sets : sequence of ndarray of uint64
            One array of shingle hashes per document (duplicates allowed, order free).
        n_jobs : int, default 1
            Threads that sign blocks of documents at once (numpy releases the GIL in its
            ufuncs); ``-1`` all cores, ``-2`` all but one (:func:`effective_n_jobs`). The
            values do not depend on it.

        Returns
        -------
        MinHashSignatures
            ``hashvalues`` of shape ``(len(shingle_sets), num_perm)``.

        Raises
        ------
        ParameterError
            ``n_jobs`` is 0 or not an integer.

        Notes
        -----
        Threads rather than processes (``bench/results/signatures.md``, Reuters-21578 on
        2 idle cores): at 1,024 permutations two threads sign 1.3 to 1.7 times as fast as
        one, two forked processes writing to shared memory (the shingles sent to them)
        0.9 times. At 128 permutations a block is too little work to share: a second
        thread (0.6 to 0.85x) or process (0.6x) slows signing down; pass ``n_jobs=1``.
        """
        workers = effective_n_jobs(n_jobs)
        n = len(shingle_sets)
        lengths = np.fromiter((len(s) for s in shingle_sets), dtype=np.int64, count=n)
        out = np.full((n, self.num_perm), _EMPTY[self.scheme], dtype=self._dtype)
        empty = lengths == 0
        vec = HASH_FUNCTIONS[self.hash_func][1]

        def sign_block(docs: np.ndarray) -> None:
            values = np.concatenate([np.asarray(shingle_sets[d], dtype=np.uint64) for d in docs])
            offsets = np.zeros(docs.shape[0], dtype=np.int64)
            np.cumsum(lengths[docs][:-1], out=offsets[1:])
            phv = self._permute(vec(values))
            out[docs] = np.minimum.reduceat(phv, offsets, axis=1).T

        blocks = self._blocks(lengths)
        if workers > 1 and len(blocks) > 1:
            # blocks write disjoint rows of `out`: no lock needed
            with ThreadPoolExecutor(min(workers, len(blocks))) as pool:
                for _ in pool.map(sign_block, blocks):
                    pass
        else:
            for docs in blocks:
                sign_block(docs)
        return MinHashSignatures(out, self.num_perm, self.seed, self.scheme, self.hash_func, empty)


def effective_n_jobs(n_jobs: int) -> int:
    """The number of workers ``n_jobs`` asks for (joblib's convention).

    Parameters
    ----------
    n_jobs : int
        ``>= 1`` that many; ``-1`` every core available to the process, ``-2`` all but
        one, and so on (at least 1).

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        ``n_jobs`` is 0 or not an integer.

    Examples
    --------
    >>> effective_n_jobs(3)
    3
    >>> effective_n_jobs(-1) >= 1
    True
    """
    check_param("n_jobs", n_jobs, [N_JOBS])
    if n_jobs > 0:
        return int(n_jobs)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores + 1 + int(n_jobs))
