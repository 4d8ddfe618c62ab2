"""LSH banding of MinHash signatures: bucket keys, candidate pairs, the S-curve.

Locality-sensitive hashing for MinHash (Indyk & Motwani 1998; Broder 1997;
Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*, ch. 3): the signature
matrix is cut into ``b`` bands of ``r`` rows; documents whose ``r``-row slices are
equal in at least one band share a bucket and become candidate pairs. Two documents
of Jaccard similarity ``s`` become candidates with probability ``1 - (1 - s^r)^b``
(seed 001_05c19045332a695a.txt), an S-curve whose steepest point is near
``(1/b)^(1/r)`` (seed 000_d819228b9213e10a.txt, «Locality-Sensitive Hashing»).

A bucket key is a 64-bit hash of the band number and the slice's values (a polynomial
hash mod 2^64 and the MurmurHash3 finalizer); two different slices share a key with
probability about ``r · 2^-64`` per pair, and a pair that shares a bucket by such a
collision is only compared, never linked without its similarity.

:func:`bucket_pairs` implements the paper's bucket rule: a bucket keeps at most one
document per cluster (which one is decided by a seeded priority), and the pairs of
every bucket are generated at once with numpy.

Complexity: :func:`band_keys` O(n · b · r) time, O(n · b) memory; :func:`bucket_pairs`
O(n · b · log(n · b) + C) time and O(n · b + C) memory for C candidate pairs (the sum of
m(m-1)/2 over buckets of m documents of distinct clusters).

Examples
--------
>>> round(s_curve_threshold(r=4, b=32), 3)
0.42
>>> round(float(collision_probability(0.5, r=4, b=32)), 4)
0.8732
"""

from __future__ import annotations

import numpy as np

from cluster.minhash import fmix
from webometrics.exceptions import ParameterError

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MULT = np.uint64(0xFF51AFD7ED558CCD)


def s_curve_threshold(r: int, b: int) -> float:
    """The similarity ``(1/b)^(1/r)`` near which the S-curve of ``b`` bands of ``r`` rows rises.

    Parameters
    ----------
    r, b : int
        Rows per band and number of bands, both >= 1.

    Returns
    -------
    float
    """
    return float((1.0 / b) ** (1.0 / r))


def collision_probability(s: float | np.ndarray, r: int, b: int) -> float | np.ndarray:
    """Probability ``1 - (1 - s^r)^b`` that two documents of similarity ``s`` share a bucket."""
    return 1.0 - (1.0 - np.asarray(s, dtype=np.float64) ** r) ** b


def check_banding(r: int, b: int, num_perm: int) -> None:
    """Raise :class:`~webometrics.exceptions.ParameterError` unless ``b * r <= num_perm``.

    Raises
    ------
    ParameterError
        ``r`` or ``b`` below 1, or more rows than the signature has.
    """
    if r < 1 or b < 1:
        raise ParameterError(f"rows per band r and bands b must be >= 1, got r={r}, b={b}")
    if r * b > num_perm:
        raise ParameterError(
            f"b*r = {b}*{r} = {b * r} exceeds num_perm={num_perm}: use at most "
            f"b = num_perm // r = {num_perm // r} bands of r={r} rows"
        )


def band_keys(hashvalues: np.ndarray, r: int, b: int | None = None) -> np.ndarray:
    """The bucket key of every document in every band.

    Parameters
    ----------
    hashvalues : ndarray of shape (n, num_perm)
        MinHash signatures (uint32 or uint64).
    r : int
        Rows per band.
    b : int, optional
        Number of bands; default ``num_perm // r``. Band ``k`` covers rows
        ``k*r .. k*r + r - 1``.

    Returns
    -------
    ndarray of uint64, shape (n, b)
        Equal keys in the same column mean equal slices (up to a 2^-64 chance).

    Raises
    ------
    ParameterError
        ``b * r > num_perm``.

    Examples
    --------
    >>> import numpy as np
    >>> sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9]], dtype=np.uint32)
    >>> k = band_keys(sig, r=2)
    >>> bool(k[0, 0] == k[1, 0]), bool(k[0, 1] == k[1, 1])
    (True, False)
    """
    n, num_perm = hashvalues.shape
    if b is None:
        b = num_perm // r if r >= 1 else 0
    check_banding(r, b, num_perm)
    slices = hashvalues[:, : b * r].reshape(n, b, r)
    # a polynomial hash of the r values (odd multiplier, mod 2^64) seeded by the band,
    # then the MurmurHash3 finaliser; equal slices give equal keys, and unequal ones
    # collide with probability ~r / 2^64
    keys = np.empty((n, b), dtype=np.uint64)
    keys[:] = np.arange(1, b + 1, dtype=np.uint64) * _GOLDEN
    for c in range(r):
        keys *= _MULT
        keys += slices[:, :, c]
    return fmix(keys, 64)


def _pair_codes_in_groups(members: np.ndarray, sizes: np.ndarray, n: int) -> np.ndarray:
    """Codes ``min * n + max`` of all pairs within each contiguous group of ``members``."""
    starts = np.zeros(sizes.shape[0], dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    # every element pairs with the later elements of its group
    pos = np.arange(members.shape[0]) - np.repeat(starts, sizes)
    later = np.repeat(sizes, sizes) - 1 - pos
    total = int(later.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    first = np.repeat(np.arange(members.shape[0]), later)
    offs = np.zeros(members.shape[0], dtype=np.int64)
    np.cumsum(later[:-1], out=offs[1:])
    second = first + 1 + (np.arange(total) - np.repeat(offs, later))
    a, b = members[first], members[second]
    return np.minimum(a, b) * np.int64(n) + np.maximum(a, b)


def bucket_pairs(
    keys: np.ndarray,
    labels: np.ndarray | None = None,
    priority: np.ndarray | None = None,
    active: np.ndarray | None = None,
    max_pairs: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Candidate pairs: documents sharing a bucket in any band, one document per cluster.

    Parameters
    ----------
    keys : ndarray of uint64, shape (n, b)
        From :func:`band_keys`.
    labels : ndarray of int, shape (n,), optional
        Current cluster of every document. A bucket keeps one document per cluster, the
        one of lowest ``priority``; without labels every document is its own cluster.
    priority : ndarray, shape (n,), optional
        Which member of a cluster a bucket keeps (lowest first); default a seeded
        random choice made afresh in every bucket (a hash of document, bucket and seed).
    active : ndarray of bool, shape (n,), optional
        Documents that take part (empty documents should not); default all.
    max_pairs : int, optional
        Raise ``ValueError`` rather than generate more candidate pairs (memory guard).
    seed : int
        Seed of the random choice of the member a bucket keeps.

    Returns
    -------
    ndarray of int64, shape (m, 2)
        Distinct pairs ``(i, j)`` with ``i < j`` of documents of different clusters,
        sorted.

    Raises
    ------
    ValueError
        More than ``max_pairs`` candidate pairs.

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.array([[1, 5], [1, 6], [1, 6], [2, 7]], dtype=np.uint64)
    >>> bucket_pairs(keys).tolist()
    [[0, 1], [0, 2], [1, 2]]
    >>> bucket_pairs(keys, labels=np.array([0, 1, 1, 3])).tolist()
    [[0, 1]]
    """
    n, b = keys.shape
    empty = np.empty((0, 2), dtype=np.int64)
    if n < 2 or b == 0:
        return empty
    # sort (bucket key, document) packed in one uint64: the key's high bits, the document
    # in the low ones (buckets whose keys agree on the high bits would merge, with
    # probability ~2^-40 per pair of entries: a few extra pairs, never a lost one)
    dbits = int(n - 1).bit_length()
    low = np.uint64((1 << dbits) - 1)
    band = np.tile(np.arange(1, b + 1, dtype=np.uint64), n)
    flat = fmix(keys.reshape(-1) ^ (band * _GOLDEN), 64)
    packed = (flat & ~low) | np.repeat(np.arange(n, dtype=np.uint64), b)
    if active is not None:
        packed = packed[np.repeat(np.asarray(active, dtype=bool), b)]
    packed.sort()
    hi = packed & ~low
    # only buckets with two or more documents matter
    same_next = hi[1:] == hi[:-1]
    multi = np.zeros(hi.shape[0], dtype=bool)
    multi[1:] |= same_next
    multi[:-1] |= same_next
    packed, hi = packed[multi], hi[multi]
    if packed.shape[0] == 0:
        return empty
    doc = (packed & low).astype(np.int64)
    new_bucket = np.r_[True, hi[1:] != hi[:-1]]
    if labels is not None:
        lab = np.asarray(labels, dtype=np.int64)[doc]
        bucket = np.cumsum(new_bucket) - 1
        if priority is not None:
            prio = np.asarray(priority)[doc]
        else:  # a fresh random choice in every bucket, from the seed
            salt = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % 2**64)
            prio = fmix((doc.astype(np.uint64) + np.uint64(1)) * _GOLDEN ^ hi ^ salt, 64)
        bbits = max(1, int(bucket[-1]).bit_length())
        lbits = max(1, int(lab.max()).bit_length())
        pbits = 64 - bbits - lbits - dbits
        if priority is None and pbits >= 8:
            # one sort of (bucket, cluster, random priority, document) packed in 64 bits
            key = (
                (bucket.astype(np.uint64) << np.uint64(64 - bbits))
                | (lab.astype(np.uint64) << np.uint64(pbits + dbits))
                | ((prio >> np.uint64(64 - pbits)) << np.uint64(dbits))
                | doc.astype(np.uint64)
            )
            key.sort()
            doc = (key & low).astype(np.int64)
            bucket = (key >> np.uint64(64 - bbits)).astype(np.int64)
            lab = ((key >> np.uint64(pbits + dbits)) & np.uint64((1 << lbits) - 1)).astype(np.int64)
        else:
            o = np.lexsort((prio, lab, bucket))
            doc, bucket, lab = doc[o], bucket[o], lab[o]
        first = np.r_[True, (bucket[1:] != bucket[:-1]) | (lab[1:] != lab[:-1])]
        doc, bucket = doc[first], bucket[first]
        new_bucket = np.r_[True, bucket[1:] != bucket[:-1]]
    boundaries = np.r_[np.flatnonzero(new_bucket), doc.shape[0]]
    sizes = np.diff(boundaries)
    big = sizes >= 2
    if not big.any():
        return empty
    n_pairs = int((sizes[big] * (sizes[big] - 1) // 2).sum())
    if max_pairs is not None and n_pairs > max_pairs:
        raise ValueError(
            f"{n_pairs} candidate pairs exceed max_pairs={max_pairs}: raise r (fewer, more "
            "selective buckets) or the threshold"
        )
    members = doc[np.repeat(big, sizes)]
    codes = sorted_unique(_pair_codes_in_groups(members, sizes[big], n))
    return np.stack([codes // n, codes % n], axis=1)


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """The distinct values of an integer array, sorted (a sort and one pass; for the
    sizes met here faster than :func:`numpy.unique`).

    Examples
    --------
    >>> sorted_unique(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    a = np.sort(a)
    if a.shape[0] < 2:
        return a
    return a[np.r_[True, a[1:] != a[:-1]]]
