"""Compiled bounded heaps of the exact k-NN graph (:func:`cluster.knn.exact_knn`).

One min-heap per row keeps the row's ``k`` best neighbours so far under one total order:
the larger similarity first, of equal similarities the smaller id. Its root is the worst
kept and is also cached in ``root`` (0 until the heap is full), so most offers cost one
comparison. Because the order is total, the ``k`` kept do not depend on the order of the
offers: blocks may come in any order, threads may keep heaps of their own and merge them
after (:func:`merge_heaps`), and the result is the same.

The arrays of a heap set: ``values`` (m, k) float32, ``ids`` (m, k) int64, ``size`` (m,)
int32, ``root`` (m,) float32. Imported by :func:`cluster.knn.exact_knn` when it first
runs (numba compiles on the first import after an install and caches on disk beside
this module).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["finish_heaps", "merge_heaps", "offer_block"]


@numba.njit(cache=True, nogil=True, inline="always")
def _offer(
    values: np.ndarray,
    ids: np.ndarray,
    size: np.ndarray,
    root: np.ndarray,
    h: int,
    new: int,
    v: float,
) -> None:
    """Offer ``new`` with similarity ``v`` (> 0, and ``>= root[h]``: the callers test the
    root first, since most offers stop there) to heap ``h``."""
    k = values.shape[1]
    if size[h] == k:
        if v == root[h] and new > ids[h, 0]:
            return
        at = 0  # replace the root, then sift it down
        while True:
            child = 2 * at + 1
            if child >= k:
                break
            other = child + 1
            if other < k and (
                values[h, other] < values[h, child]
                or (values[h, other] == values[h, child] and ids[h, other] > ids[h, child])
            ):
                child = other
            if values[h, child] < v or (values[h, child] == v and ids[h, child] > new):
                values[h, at] = values[h, child]
                ids[h, at] = ids[h, child]
                at = child
            else:
                break
    else:  # add, then sift up: the worst (smallest value, larger id) on top
        at = size[h]
        size[h] += 1
        while at > 0:
            parent = (at - 1) // 2
            if values[h, parent] > v or (values[h, parent] == v and ids[h, parent] < new):
                values[h, at] = values[h, parent]
                ids[h, at] = ids[h, parent]
                at = parent
            else:
                break
    values[h, at] = v
    ids[h, at] = new
    if size[h] == k:
        root[h] = values[h, 0]


@numba.njit(cache=True, nogil=True)
def offer_block(
    S: np.ndarray,
    first: int,
    own: np.ndarray,
    col0: int,
    mirror_from: int,
    values: np.ndarray,
    ids: np.ndarray,
    size: np.ndarray,
    root: np.ndarray,
) -> None:
    """Offer ``S[c, r]`` (> 0), the similarity of row ``col0 + c`` to the block's row
    ``own[r]``, to heap ``first + r`` as ``col0 + c`` (not the row ``own[r]`` itself)
    and, where ``col0 + c >= mirror_from``, to heap ``col0 + c`` as ``own[r]``. Row by row
    of ``S``: the mirrored offers of a row go to one heap and the block's heaps stay in
    cache."""
    for c in range(S.shape[0]):
        other = col0 + c
        for r in range(S.shape[1]):
            v = S[c, r]
            if not v > 0:
                continue
            # the root test before the call: most offers stop at it
            if other != own[r] and v >= root[first + r]:
                _offer(values, ids, size, root, first + r, other, v)
            if other >= mirror_from and v >= root[other]:
                _offer(values, ids, size, root, other, own[r], v)


@numba.njit(cache=True, nogil=True)
def merge_heaps(
    values: np.ndarray,
    ids: np.ndarray,
    size: np.ndarray,
    root: np.ndarray,
    values2: np.ndarray,
    ids2: np.ndarray,
    size2: np.ndarray,
) -> None:
    """Offer every entry of the second heap set to the first, heap by heap."""
    for h in range(values.shape[0]):
        for p in range(size2[h]):
            if values2[h, p] >= root[h]:
                _offer(values, ids, size, root, h, ids2[h, p], values2[h, p])


@numba.njit(cache=True, nogil=True)
def finish_heaps(
    values: np.ndarray, ids: np.ndarray, size: np.ndarray, nb: np.ndarray, sims: np.ndarray
) -> None:
    """Each heap into its row of ``nb`` / ``sims``, most similar first, ties by the smaller
    id (a stable sort of the ids' order by value); the rest of the row is left as is."""
    for h in range(values.shape[0]):
        m = size[h]
        order = np.argsort(ids[h, :m])
        order = order[np.argsort(-values[h, order], kind="mergesort")]
        for place in range(m):
            nb[h, place] = ids[h, order[place]]
            sims[h, place] = values[h, order[place]]
