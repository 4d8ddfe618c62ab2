"""LSH banding of MinHash signatures: bucket keys, candidate pairs, the S-curve.

Locality-sensitive hashing for MinHash (Indyk & Motwani 1998; Broder 1997;
Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*, ch. 3): the signature
matrix is cut into ``b`` bands of ``r`` rows; documents whose ``r``-row slices are
equal in at least one band share a bucket and become candidate pairs. Two documents
of Jaccard similarity ``s`` become candidates with probability ``1 - (1 - s^r)^b``
(seed 001_05c19045332a695a.txt), an S-curve whose steepest point is near
``(1/b)^(1/r)`` (seed 000_d819228b9213e10a.txt, «Locality-Sensitive Hashing»).

A bucket key is a 64-bit hash of the band number and the slice's values (the
MurmurHash3 finalizer chained over the ``r`` values); two different slices share a key
with probability about ``2^-64`` per pair, so buckets are, in practice, exact.

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
    slices = hashvalues[:, : b * r].reshape(n, b, r).astype(np.uint64)
    keys = np.broadcast_to(np.arange(1, b + 1, dtype=np.uint64) * _GOLDEN, (n, b)).copy()
    for c in range(r):
        keys = fmix((keys ^ slices[:, :, c]) * _GOLDEN, 64)
    return keys


def _pairs_in_groups(members: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """All pairs within each contiguous group of ``members``: an (m, 2) array."""
    # position of every element within its group, and how many later elements it pairs with
    group_of = np.repeat(np.arange(sizes.shape[0]), sizes)
    pos = np.arange(members.shape[0]) - np.repeat(starts, sizes)
    counts_per_elem = sizes[group_of] - 1 - pos
    total = int(counts_per_elem.sum())
    if total == 0:
        return np.empty((0, 2), dtype=np.int64)
    first = np.repeat(np.arange(members.shape[0]), counts_per_elem)
    offs = np.zeros(members.shape[0], dtype=np.int64)
    np.cumsum(counts_per_elem[:-1], out=offs[1:])
    second = first + 1 + (np.arange(total) - np.repeat(offs, counts_per_elem))
    return np.stack([members[first], members[second]], axis=1)


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
    doc = np.repeat(np.arange(n, dtype=np.int64), b)
    band = np.tile(np.arange(b, dtype=np.uint64), n)
    flat = fmix(keys.reshape(-1) ^ ((band + np.uint64(1)) * _GOLDEN), 64)
    if active is not None:
        keep = np.repeat(np.asarray(active, dtype=bool), b)
        doc, flat = doc[keep], flat[keep]
    order = np.argsort(flat, kind="stable")
    flat, doc = flat[order], doc[order]
    # only buckets with two or more documents matter
    same_next = flat[1:] == flat[:-1]
    multi = np.zeros(flat.shape[0], dtype=bool)
    multi[1:] |= same_next
    multi[:-1] |= same_next
    flat, doc = flat[multi], doc[multi]
    if flat.shape[0] == 0:
        return np.empty((0, 2), dtype=np.int64)
    if labels is not None:
        lab = np.asarray(labels)[doc]
        if priority is not None:
            prio = np.asarray(priority)[doc]
        else:  # a fresh random choice in every bucket, from the seed
            salt = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % 2**64)
            prio = fmix((doc.astype(np.uint64) + np.uint64(1)) * _GOLDEN ^ flat ^ salt, 64)
        o = np.lexsort((prio, lab, flat))
        flat, doc, lab = flat[o], doc[o], lab[o]
        first = np.ones(flat.shape[0], dtype=bool)
        first[1:] = (flat[1:] != flat[:-1]) | (lab[1:] != lab[:-1])
        flat, doc = flat[first], doc[first]
    boundaries = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1], True])
    sizes = np.diff(boundaries)
    big = sizes >= 2
    if not big.any():
        return np.empty((0, 2), dtype=np.int64)
    n_pairs = int((sizes[big] * (sizes[big] - 1) // 2).sum())
    if max_pairs is not None and n_pairs > max_pairs:
        raise ValueError(
            f"{n_pairs} candidate pairs exceed max_pairs={max_pairs}: raise r (fewer, more "
            "selective buckets) or the threshold"
        )
    sel = np.repeat(big, sizes)
    members = doc[sel]
    new_sizes = sizes[big]
    new_starts = np.zeros(new_sizes.shape[0], dtype=np.int64)
    np.cumsum(new_sizes[:-1], out=new_starts[1:])
    pairs = _pairs_in_groups(members, new_starts, new_sizes)
    pairs.sort(axis=1)
    codes = sorted_unique(pairs[:, 0] * np.int64(n) + pairs[:, 1])
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
