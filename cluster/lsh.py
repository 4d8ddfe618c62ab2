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
m(m-1)/2 over buckets of m documents of distinct clusters). :func:`candidate_pairs` gives
the same pairs within a memory budget (signatures read in row chunks, bucket entries in
hash partitions on disk): O(budget + n + C) memory, 16 · n · b more bytes of disk I/O.

Examples
--------
>>> round(s_curve_threshold(r=4, b=32), 3)
0.42
>>> round(float(collision_probability(0.5, r=4, b=32)), 4)
0.8732
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np

from cluster.minhash import fmix
from core import defaults as D
from core.exceptions import ParameterError

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
    """Raise :class:`~core.exceptions.ParameterError` unless ``b * r <= num_perm``.

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


def pair_codes_in_groups(members: np.ndarray, sizes: np.ndarray, n: int) -> np.ndarray:
    """Codes ``min * n + max`` of all pairs within each contiguous group of ``members``
    (groups of ``sizes`` elements, one after the other; groups of one give no pair), in
    no particular order.

    The groups of one size are taken together: their members as the rows of a matrix,
    the pairs as its upper-triangle columns (a few numpy passes over the codes, where
    one index per code made it about twice as slow on the LSH buckets of Reuters).

    Examples
    --------
    >>> sorted(pair_codes_in_groups(np.array([3, 1, 2, 0]), np.array([3, 1]), 10).tolist())
    [12, 13, 23]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.zeros(sizes.shape[0], dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    n64 = np.int64(n)
    codes = []
    for size in np.unique(sizes[sizes >= 2]).tolist():
        rows = members[starts[sizes == size][:, None] + np.arange(size)]
        a, b = np.triu_indices(size, 1)
        x, y = rows[:, a], rows[:, b]
        code = np.minimum(x, y).astype(np.int64)
        code *= n64
        code += np.maximum(x, y)
        codes.append(code.ravel())
    return np.concatenate(codes) if codes else np.empty(0, dtype=np.int64)


def bucket_pairs(
    keys: np.ndarray,
    labels: np.ndarray | None = None,
    priority: np.ndarray | None = None,
    active: np.ndarray | None = None,
    max_pairs: int | None = None,
    seed: int = 0,
    max_bucket: int | None = None,
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
        Seed of the random choice of the member a bucket keeps (and of the order that
        cuts a bucket above ``max_bucket``).
    max_bucket : int, optional
        A bucket of more documents (after one per cluster) is cut into runs of
        ``max_bucket`` documents in a seeded random order, and only the pairs within a
        run are taken: a slice that many documents share is weak evidence of
        similarity, and its pairs would be quadratic in their number. Default: no cut.

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
    if n < 2 or b == 0:
        return _EMPTY_PAIRS.copy()
    dbits = int(n - 1).bit_length()
    packed = _multi_entries(_entries(keys, 0, dbits, active), dbits)
    if packed.shape[0] == 0:
        return _EMPTY_PAIRS.copy()
    doc, new_bucket = _one_per_cluster(packed, dbits, labels, priority, seed)
    codes, n_pairs = _pair_codes(doc, new_bucket, n, max_pairs, max_bucket, seed)
    if max_pairs is not None and n_pairs > max_pairs:
        raise _too_many(n_pairs, max_pairs)
    return _as_pairs(sorted_unique(codes), n)


_EMPTY_PAIRS = np.empty((0, 2), dtype=np.int64)


def _entries(keys: np.ndarray, doc0: int, dbits: int, active: np.ndarray | None) -> np.ndarray:
    """The (bucket, document) entries of documents ``doc0 ..`` packed in one uint64 each.

    The bucket (a hash of the band number and the band's key) in the high bits, the
    document in the low ``dbits``; buckets whose hashes agree on the high bits merge, with
    probability ~2^-40 per pair of entries: a few extra pairs, never a lost one.
    ``active`` holds the flags of these documents only.
    """
    m, b = keys.shape
    low = np.uint64((1 << dbits) - 1)
    flat = fmix(keys ^ (np.arange(1, b + 1, dtype=np.uint64) * _GOLDEN), 64).reshape(-1)
    packed = (flat & ~low) | np.repeat(np.arange(doc0, doc0 + m, dtype=np.uint64), b)
    if active is not None:
        packed = packed[np.repeat(np.asarray(active, dtype=bool), b)]
    return packed


def _multi_entries(packed: np.ndarray, dbits: int) -> np.ndarray:
    """``packed`` sorted (in place), only the entries of buckets of two or more documents."""
    low = np.uint64((1 << dbits) - 1)
    packed.sort()
    hi = packed & ~low
    same_next = hi[1:] == hi[:-1]
    multi = np.zeros(hi.shape[0], dtype=bool)
    multi[1:] |= same_next
    multi[:-1] |= same_next
    return packed[multi]


def _one_per_cluster(
    packed: np.ndarray,
    dbits: int,
    labels: np.ndarray | None,
    priority: np.ndarray | None,
    seed: int,
    bbits: int | None = None,
    lbits: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The documents of the sorted multi-document entries ``packed``, one per (bucket,
    cluster), and where each bucket starts.

    ``bbits`` and ``lbits`` (bits of the bucket count and of the largest label among the
    entries) default to those of ``packed``; a caller that splits the entries into parts
    passes those of the whole, so that every part decides as the whole would.
    """
    low = np.uint64((1 << dbits) - 1)
    hi = packed & ~low
    doc = (packed & low).astype(np.int64)
    new_bucket = np.r_[True, hi[1:] != hi[:-1]]
    if labels is None:
        return doc, new_bucket
    lab = np.asarray(labels, dtype=np.int64)[doc]
    bucket = np.cumsum(new_bucket) - 1
    if priority is not None:
        prio = np.asarray(priority)[doc]
    else:  # a fresh random choice in every bucket, from the seed
        salt = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % 2**64)
        prio = fmix((doc.astype(np.uint64) + np.uint64(1)) * _GOLDEN ^ hi ^ salt, 64)
    if bbits is None:
        bbits = max(1, int(bucket[-1]).bit_length())
    if lbits is None:
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
    return doc, np.r_[True, bucket[1:] != bucket[:-1]]


def _pair_codes(
    doc: np.ndarray,
    new_bucket: np.ndarray,
    n: int,
    max_pairs: int | None,
    max_bucket: int | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, int]:
    """Codes ``i * n + j`` of the pairs within every bucket (not yet distinct), and how many
    there are; no codes when they are more than ``max_pairs``. Buckets of more than
    ``max_bucket`` documents are cut first (:func:`_capped_buckets`)."""
    if max_bucket is not None:
        doc, new_bucket = _capped_buckets(doc, new_bucket, max_bucket, seed)
    boundaries = np.r_[np.flatnonzero(new_bucket), doc.shape[0]]
    sizes = np.diff(boundaries)
    big = sizes >= 2
    if not big.any():
        return np.empty(0, dtype=np.int64), 0
    n_pairs = int((sizes[big] * (sizes[big] - 1) // 2).sum())
    if max_pairs is not None and n_pairs > max_pairs:
        return np.empty(0, dtype=np.int64), n_pairs
    members = doc[np.repeat(big, sizes)]
    return pair_codes_in_groups(members, sizes[big], n), n_pairs


def _capped_buckets(
    doc: np.ndarray, new_bucket: np.ndarray, max_bucket: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The buckets of more than ``max_bucket`` documents cut into runs of ``max_bucket``, in
    a seeded random order drawn afresh in every bucket; ``(doc, new_run)``.

    The order hashes each document with a hash of its bucket's members (the XOR of
    theirs), so a bucket is cut the same way whichever hash partition it falls in.
    """
    starts = np.flatnonzero(new_bucket)
    sizes = np.diff(np.r_[starts, doc.shape[0]])
    big = sizes > max_bucket
    if not big.any():
        return doc, new_bucket
    salt = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x7F4A7C159E3779B9) % 2**64)
    own = fmix((doc.astype(np.uint64) + np.uint64(1)) * _GOLDEN ^ salt, 64)
    members = np.repeat(np.bitwise_xor.reduceat(own, starts), sizes)
    prio = fmix(own ^ members * _MULT, 64)
    bucket = np.repeat(np.arange(starts.shape[0]), sizes)
    order = np.lexsort((prio, bucket))
    pos = np.arange(doc.shape[0]) - np.repeat(starts, sizes)
    new_run = new_bucket | (np.repeat(big, sizes) & (pos % max_bucket == 0))
    return doc[order], new_run


def _too_many(n_pairs: int, max_pairs: int, more: bool = False) -> ValueError:
    return ValueError(
        f"{'more than ' if more else ''}{n_pairs} candidate pairs exceed max_pairs={max_pairs}: "
        "raise r (fewer, more selective buckets) or the threshold"
    )


def _as_pairs(codes: np.ndarray, n: int) -> np.ndarray:
    return np.stack([codes // n, codes % n], axis=1)


def candidate_pairs(
    hashvalues: np.ndarray,
    r: int,
    b: int | None = None,
    *,
    labels: np.ndarray | None = None,
    active: np.ndarray | None = None,
    max_pairs: int | None = None,
    seed: int = 0,
    memory_bytes: int = D.CLUSTER_BAND_MEMORY_MB << 20,
    parts: int | None = None,
    tmp_dir: str | Path | None = None,
    max_bucket: int | None = None,
) -> np.ndarray:
    """``bucket_pairs(band_keys(hashvalues, r, b), ...)`` within a memory budget.

    The same pairs, value for value, for any budget: the signatures are read in row
    chunks (a memory-mapped matrix is never loaded whole) and, when the ``n · b`` bucket
    entries of the level would take more than ``memory_bytes``, the entries are written
    to ``2^k`` hash partitions on disk (a bucket falls in one partition, chosen by the top
    bits of its hash) and the partitions are processed one at a time, twice: first to
    count the buckets of two or more documents and the largest label among them (which
    set the bit widths of the one-document-per-cluster choice, so that every partition
    chooses as the whole would), then to choose and pair.

    Parameters
    ----------
    hashvalues : ndarray of shape (n, num_perm)
        The signatures; a :class:`numpy.memmap` is read in row chunks.
    r, b : int
        Rows per band and bands (default ``num_perm // r``).
    labels, active, max_pairs, seed, max_bucket
        As for :func:`bucket_pairs`.
    memory_bytes : int, default ``CLUSTER_BAND_MEMORY_MB`` MiB
        Working memory of the banding; the pairs found come on top (O(C) for C pairs).
    parts : int, optional
        Number of hash partitions, a power of two (1: none); default the fewest whose
        entries fit in ``memory_bytes``.
    tmp_dir : path, optional
        Where the partitions go; default beside a memory-mapped ``hashvalues``, else the
        system's temporary directory.

    Returns
    -------
    ndarray of int64, shape (m, 2)
        As :func:`bucket_pairs`.

    Raises
    ------
    ParameterError
        ``b * r > num_perm``, a budget below 1 MiB, or ``parts`` not a power of two.
    ValueError
        More than ``max_pairs`` candidate pairs.

    Notes
    -----
    Time: that of :func:`bucket_pairs` plus, when partitioned, writing and reading the
    ``n · b`` entries twice (8 bytes each). Memory: ``memory_bytes`` plus O(n) for the
    labels and flags, plus the pairs.

    Examples
    --------
    >>> import numpy as np
    >>> hv = np.random.default_rng(0).integers(0, 4, size=(50, 8), dtype=np.uint32)
    >>> one = candidate_pairs(hv, 2)
    >>> split = candidate_pairs(hv, 2, parts=4)
    >>> bool(np.array_equal(one, bucket_pairs(band_keys(hv, 2))) and np.array_equal(one, split))
    True
    """
    n, num_perm = hashvalues.shape
    if b is None:
        b = num_perm // r if r >= 1 else 0
    check_banding(r, b, num_perm)
    if memory_bytes < 1 << 20:
        raise ParameterError(f"memory_bytes must be >= 1 MiB, got {memory_bytes}")
    if parts is not None and (parts < 1 or parts & (parts - 1)):
        raise ParameterError(f"parts must be a power of two >= 1, got {parts}")
    # one row chunk: the signatures' rows, their band slices, keys and packed entries
    row_bytes = num_perm * hashvalues.dtype.itemsize * 2 + b * 8 * 6
    rows = max(1, memory_bytes // 4 // row_bytes)
    n_active = n if active is None else int(np.count_nonzero(active))
    if n < 2 or b == 0 or n_active < 2:
        return _EMPTY_PAIRS.copy()
    if parts is None:
        need = n_active * b * _ENTRY_BYTES / memory_bytes
        parts = 1 if need <= 1 else 1 << math.ceil(math.log2(need))
    if parts == 1:
        keys = np.empty((n, b), dtype=np.uint64)
        for s in range(0, n, rows):
            keys[s : s + rows] = band_keys(np.asarray(hashvalues[s : s + rows]), r, b)
        return bucket_pairs(
            keys, labels, active=active, max_pairs=max_pairs, seed=seed, max_bucket=max_bucket
        )
    if tmp_dir is None and isinstance(hashvalues, np.memmap) and hashvalues.filename:
        tmp_dir = Path(hashvalues.filename).parent
    with tempfile.TemporaryDirectory(prefix="lsh-bands-", dir=tmp_dir) as tmp:
        return _partitioned_pairs(
            hashvalues, r, b, labels, active, max_pairs, seed, rows, parts, Path(tmp), max_bucket
        )


_ENTRY_BYTES = 80
"""Working bytes per (document, band) entry of :func:`bucket_pairs` (its packed entries,
their sort, hashes and choice arrays), an upper estimate."""


def _partitioned_pairs(
    hashvalues: np.ndarray,
    r: int,
    b: int,
    labels: np.ndarray | None,
    active: np.ndarray | None,
    max_pairs: int | None,
    seed: int,
    rows: int,
    parts: int,
    tmp: Path,
    max_bucket: int | None = None,
) -> np.ndarray:
    """:func:`candidate_pairs` through ``parts`` hash partitions in the folder ``tmp``."""
    n = hashvalues.shape[0]
    dbits = int(n - 1).bit_length()
    shift = np.uint64(64 - (parts.bit_length() - 1))
    paths = [tmp / f"part{k:05d}.u64" for k in range(parts)]
    files = [open(path, "wb") for path in paths]  # noqa: SIM115 - closed below
    try:
        for s in range(0, n, rows):
            e = min(n, s + rows)
            keys = band_keys(np.asarray(hashvalues[s:e]), r, b)
            flags = None if active is None else np.asarray(active[s:e], dtype=bool)
            packed = _entries(keys, s, dbits, flags)
            part = (packed >> shift).astype(np.intp)
            packed = packed[np.argsort(part, kind="stable")]
            bounds = np.r_[0, np.cumsum(np.bincount(part, minlength=parts))]
            for k in np.flatnonzero(np.diff(bounds)):
                packed[bounds[k] : bounds[k + 1]].tofile(files[k])
    finally:
        for f in files:
            f.close()
    # first pass: keep the buckets of two or more documents; count them, find the labels
    n_buckets, lab_max = 0, 0
    low = np.uint64((1 << dbits) - 1)
    for path in paths:
        packed = _multi_entries(np.fromfile(path, dtype=np.uint64), dbits)
        packed.tofile(path)
        if packed.shape[0]:
            hi = packed & ~low
            n_buckets += 1 + int(np.count_nonzero(hi[1:] != hi[:-1]))
            if labels is not None:
                doc = (packed & low).astype(np.int64)
                lab_max = max(lab_max, int(np.asarray(labels)[doc].max()))
    if n_buckets == 0:
        return _EMPTY_PAIRS.copy()
    bbits = max(1, int(n_buckets - 1).bit_length())
    lbits = max(1, lab_max.bit_length())
    # second pass: one document per cluster in every bucket, and the pairs
    codes: list[np.ndarray] = []
    n_pairs = 0
    for path in paths:
        packed = np.fromfile(path, dtype=np.uint64)
        if packed.shape[0] == 0:
            continue
        doc, new_bucket = _one_per_cluster(packed, dbits, labels, None, seed, bbits, lbits)
        left = None if max_pairs is None else max_pairs - n_pairs
        part_codes, part_pairs = _pair_codes(doc, new_bucket, n, left, max_bucket, seed)
        n_pairs += part_pairs
        if max_pairs is not None and n_pairs > max_pairs:
            raise _too_many(n_pairs, max_pairs, more=True)
        codes.append(sorted_unique(part_codes))
    if not codes:
        return _EMPTY_PAIRS.copy()
    return _as_pairs(sorted_unique(np.concatenate(codes)), n)


def level_pairs(
    hashvalues: np.ndarray,
    r: int,
    b: int,
    *,
    active: np.ndarray,
    labels: np.ndarray | None = None,
    max_pairs: int | None = None,
    seed: int = 0,
    memory_bytes: int = D.CLUSTER_BAND_MEMORY_MB << 20,
    max_bucket: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The candidate pairs of one banding of a fit, and their codes ``i * n + j``.

    The banding step shared by :class:`~cluster.lsh_link.LSHLink` (one call a level)
    and :class:`~cluster.lsh_leiden.LSHLeiden` (one call a banding of its schedule):
    :func:`candidate_pairs`, or no pairs (and no banding check) when there are fewer
    than two documents or fewer than two active ones.

    Parameters
    ----------
    hashvalues : ndarray of shape (n, num_perm)
        The signatures.
    r, b : int
        Rows per band and bands.
    active : ndarray of bool, shape (n,)
        The documents that take part (non-empty ones).
    labels, max_pairs, seed, memory_bytes, max_bucket
        As for :func:`candidate_pairs`.

    Returns
    -------
    pairs : ndarray of int64, shape (m, 2)
        As :func:`candidate_pairs` (sorted, distinct, ``i < j``).
    codes : ndarray of int64, shape (m,)
        ``i * max(n, 1) + j`` of every pair, sorted and distinct.

    Raises
    ------
    ParameterError, ValueError
        As :func:`candidate_pairs`.

    Examples
    --------
    >>> hv = np.array([[1, 2], [1, 2], [3, 4]], dtype=np.uint32)
    >>> pairs, codes = level_pairs(hv, 1, 2, active=np.ones(3, dtype=bool))
    >>> pairs.tolist(), codes.tolist()
    ([[0, 1]], [1])
    """
    n = int(hashvalues.shape[0])
    if n >= 2 and int(np.count_nonzero(active)) >= 2:
        pairs = candidate_pairs(
            hashvalues,
            r,
            b,
            labels=labels,
            active=active,
            max_pairs=max_pairs,
            seed=seed,
            memory_bytes=memory_bytes,
            max_bucket=max_bucket,
        )
    else:
        pairs = np.empty((0, 2), dtype=np.int64)
    return pairs, pairs[:, 0] * np.int64(max(n, 1)) + pairs[:, 1]


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


def strongest_candidates(
    n: int, i: np.ndarray, j: np.ndarray, strength: np.ndarray, k: int | None, seed: int = 0
) -> np.ndarray:
    """Mask of the candidate pairs among the ``k`` strongest of either end.

    ``strength`` ranks the pairs on a few integer levels, e.g. a similarity estimate
    quantised (:meth:`cluster.minhash.MinHashSignatures.pair_bit_similarity`), cheaper
    than the similarity the pairs kept then get. Every document keeps its candidates
    stronger than its *cut* (the highest level at which it has ``k`` candidates or more)
    and a seeded random share of those at the cut, so that it keeps ``k`` on average; a
    pair stays when either end keeps it (as
    :func:`cluster.graph_leiden.sparsify_neighbours`). The random choice hashes the
    pair, so it does not depend on the order of the pairs. Levels above
    :data:`RANKED_LEVELS` rank as that level.

    Parameters
    ----------
    n : int
        Number of documents.
    i, j : ndarray of int
        The candidate pairs' ends.
    strength : ndarray of int
        Every pair's level, >= 1 (higher: stronger).
    k : int or None
        Candidates kept per document; ``None`` keeps all.
    seed : int
        Seed of the choice among the pairs at a document's cut.

    Returns
    -------
    ndarray of bool
        One flag per pair.

    Notes
    -----
    Time O(m + n · L) for m pairs and L = ``min(max(strength), RANKED_LEVELS) + 1`` (one
    histogram of the levels per document), memory O(m + n · L).

    Examples
    --------
    >>> i, j = np.array([0, 0, 0, 1]), np.array([1, 2, 3, 2])
    >>> strongest_candidates(4, i, j, np.array([5, 3, 1, 1]), 1).tolist()
    [True, True, True, False]
    """
    m = int(np.asarray(i).shape[0])
    if k is None or m == 0:
        return np.ones(m, dtype=bool)
    i = np.asarray(i, dtype=np.intp)
    j = np.asarray(j, dtype=np.intp)
    level = np.minimum(strength, RANKED_LEVELS).astype(np.uint8)  # small: fewer bytes to move
    width = int(level.max()) + 1
    hist = np.bincount(i * width + level, minlength=n * width)
    hist += np.bincount(j * width + level, minlength=n * width)
    hist = hist.reshape(n, width)
    at_least = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]  # candidates at level >= l
    enough = at_least >= k
    enough[:, 0] = True
    cut = width - 1 - np.argmax(enough[:, ::-1], axis=1)  # 0: fewer than k, all kept
    rows = np.arange(n)
    above = np.where(cut + 1 < width, at_least[rows, np.minimum(cut + 1, width - 1)], 0)
    share = np.where(cut > 0, (k - above) / np.maximum(hist[rows, cut], 1), 1.0)
    cut = cut.astype(np.uint8)
    cut_i, cut_j = cut[i], cut[j]
    keep = (level > cut_i) | (level > cut_j)
    tie = np.flatnonzero(~keep & ((level == cut_i) | (level == cut_j)))
    if tie.shape[0]:
        ti, tj, tl = i[tie], j[tie], level[tie]
        code = ti.astype(np.uint64) * np.uint64(max(n, 1)) + tj.astype(np.uint64)
        salt = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % 2**64)
        draw = (fmix(code ^ salt, 64) >> np.uint64(11)).astype(np.float64) / float(1 << 53)
        keep[tie] = ((tl == cut_i[tie]) & (draw < share[ti])) | (
            (tl == cut_j[tie]) & (draw < share[tj])
        )
    return keep


RANKED_LEVELS = 255
"""The highest level :func:`strongest_candidates` tells apart (its histogram holds
``n · (RANKED_LEVELS + 1)`` counts at most; a level fits in a byte)."""
