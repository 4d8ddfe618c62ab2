"""Duplicate groups from duplicate pairs: connected components, greedy cliques, FPmax.

Seed 003 (Ignatov, Kuznetsov et al., 003_284e3196b8ef7b92.txt) names three ways to turn
the relation "is a near-duplicate of" into clusters:

``components``
    Connected components of the duplicate graph (the weakest definition, AltaVista's;
    efficient, but the relation is not transitive, so a chain can join unlike texts).
    O(n + m) for n documents and m pairs (:func:`scipy.sparse.csgraph.connected_components`).
``cliques``
    Every member similar to every other (the strongest definition; maximum cliques are
    NP-hard). Here a greedy, bounded cover: inside each component, repeatedly take the
    unassigned document of highest degree, add its unassigned neighbours in order of
    decreasing degree whenever they are adjacent to every member so far, stop at
    ``max_clique_size``. O(Σ_c d_c · e_c) over components c with maximum degree d_c and
    e_c edges; each document lands in exactly one clique.
``fpmax``
    Seed 003's own definition: a cluster is a *closed* set of documents whose sketches
    share at least ``min_common`` elements, found as frequent itemsets of the dual
    context (sketch elements are the transactions, documents the items) with FPmax*
    (Grahne & Zhu 2003) through :func:`mlxtend.frequent_patterns.fpmax`. Maximal
    frequent sets are closed. FPmax runs per connected component of the duplicate pairs
    (documents in different components share no qualifying element there), on the
    elements held by at least two of its documents; a component of more than
    ``fpmax_max_docs`` documents falls back to greedy cliques, because the number of
    itemsets can grow exponentially (seed 003, Fig. 5.2, FPmax* times).

Overlapping cliques or itemsets are made disjoint greedily: largest (then most
supported) first, each keeps the members not taken yet and survives if two remain (a
subset of a frequent set is frequent, of a clique a clique). Every group gets a
canonical document (:func:`choose_canonical`): the longest text, or the earliest fetched.

References
----------
D. I. Ignatov, S. O. Kuznetsov et al., seed 003: duplicate clusters as frequent closed
itemsets; comparison with connected components and cliques.
G. Grahne, J. Zhu, "Efficiently using prefix-trees in mining frequent itemsets", FIMI 2003.
A. Z. Broder, S. C. Glassman, M. S. Manasse, G. Zweig, "Syntactic clustering of the
Web", WWW 1997 (components of the resemblance graph).

Examples
--------
>>> import numpy as np
>>> pairs = np.array([[0, 1], [1, 2], [3, 4]])
>>> [g.tolist() for g in build_groups(6, pairs, grouping="components")]
[[0, 1, 2], [3, 4]]
>>> [g.tolist() for g in build_groups(6, pairs, grouping="cliques")]
[[0, 1], [3, 4]]
>>> choose_canonical([np.array([0, 1, 2])], rule="longest", lengths=np.array([5, 9, 9]))
[1]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from core.choices import CANONICAL_RULES, GROUPINGS
from core.exceptions import ParameterError

# GROUPINGS: the ways to build groups from pairs; CANONICAL_RULES: how a group's canonical
# document is chosen (core.choices)


@dataclass(frozen=True, slots=True)
class Group:
    """A group of near-duplicate documents.

    Attributes
    ----------
    members : tuple of int
        Document indices, ascending (at least two).
    canonical : int
        The member kept for clustering.
    """

    members: tuple[int, ...]
    canonical: int


def _as_pairs(n: int, pairs: np.ndarray) -> np.ndarray:
    p = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if p.size and (p.min() < 0 or p.max() >= n):
        raise ParameterError(f"pair indices must lie in 0..{n - 1}")
    return p[p[:, 0] != p[:, 1]]


def _components(n: int, pairs: np.ndarray) -> list[np.ndarray]:
    if n == 0 or pairs.shape[0] == 0:
        return []
    graph = coo_matrix(
        (np.ones(pairs.shape[0], dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n)
    )
    _, labels = connected_components(graph, directed=False)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    return [c for c in np.split(order, bounds) if c.shape[0] > 1]


def connected_groups(n: int, pairs: np.ndarray) -> list[np.ndarray]:
    """Connected components of size two or more, ordered by their smallest member.

    Parameters
    ----------
    n : int
        Number of documents.
    pairs : ndarray of shape (m, 2)
        Duplicate pairs (document indices).

    Returns
    -------
    list of ndarray
        Sorted member indices of each component.
    """
    comps = _components(n, _as_pairs(n, pairs))
    return sorted((np.sort(c) for c in comps), key=lambda c: int(c[0]))


def _adjacency(pairs: np.ndarray) -> dict[int, set[int]]:
    adj: dict[int, set[int]] = {}
    for a, b in pairs.tolist():
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    return adj


def _greedy_cliques(
    members: np.ndarray, adj: dict[int, set[int]], max_size: int
) -> list[list[int]]:
    unassigned = set(members.tolist())
    out: list[list[int]] = []
    while len(unassigned) > 1:
        seed = min(unassigned, key=lambda v: (-len(adj.get(v, set()) & unassigned), v))
        clique = [seed]
        candidates = sorted(
            adj.get(seed, set()) & unassigned, key=lambda v: (-len(adj[v] & unassigned), v)
        )
        for v in candidates:
            if len(clique) >= max_size:
                break
            if all(v in adj[u] for u in clique):
                clique.append(v)
        unassigned.difference_update(clique)
        if len(clique) > 1:
            out.append(sorted(clique))
    return out


def clique_groups(n: int, pairs: np.ndarray, *, max_size: int = 100) -> list[np.ndarray]:
    """A greedy cover of the duplicate graph by disjoint cliques of at most ``max_size``.

    Parameters
    ----------
    n : int
    pairs : ndarray of shape (m, 2)
    max_size : int
        Largest clique built (>= 2).

    Returns
    -------
    list of ndarray
        Sorted members of each clique with two or more documents.

    Raises
    ------
    ParameterError
        ``max_size`` < 2.
    """
    if max_size < 2:
        raise ParameterError(f"max_clique_size must be >= 2, got {max_size}")
    p = _as_pairs(n, pairs)
    adj = _adjacency(p)
    out: list[np.ndarray] = []
    for comp in _components(n, p):
        out.extend(np.array(c, dtype=np.int64) for c in _greedy_cliques(comp, adj, max_size))
    return sorted(out, key=lambda c: int(c[0]))


def _fpmax_component(
    comp: np.ndarray, features: Sequence[np.ndarray], min_common: int
) -> list[tuple[list[int], float]]:
    import pandas as pd
    from mlxtend.frequent_patterns import fpmax

    docs = comp.tolist()
    owners = np.concatenate(
        [np.full(len(np.unique(features[d])), k, dtype=np.int64) for k, d in enumerate(docs)]
    )
    values = np.concatenate([np.unique(np.asarray(features[d], dtype=np.uint64)) for d in docs])
    if values.shape[0] == 0:
        return []
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    keep = counts[inverse] >= 2
    if not keep.any():
        return []
    rows_of_value = np.cumsum(counts >= 2) - 1
    rows = rows_of_value[inverse[keep]]
    n_rows = int(np.count_nonzero(counts >= 2))
    if n_rows < min_common:
        return []
    table = np.zeros((n_rows, len(docs)), dtype=bool)
    table[rows, owners[keep]] = True
    frame = pd.DataFrame(table, columns=list(range(len(docs))))
    found = fpmax(frame, min_support=min_common / n_rows, use_colnames=True)
    out = []
    for support, itemset in zip(found["support"], found["itemsets"], strict=True):
        if len(itemset) > 1:
            out.append((sorted(docs[k] for k in itemset), float(support)))
    return out


def fpmax_groups(
    n: int,
    pairs: np.ndarray,
    features: Sequence[np.ndarray],
    *,
    min_common: int = 1,
    max_docs: int = 40,
    max_clique_size: int = 100,
) -> list[np.ndarray]:
    """Disjoint groups from the maximal (closed) frequent document sets of seed 003.

    Parameters
    ----------
    n : int
    pairs : ndarray of shape (m, 2)
        The method's duplicate pairs; FPmax runs per connected component of them.
    features : sequence of ndarray of uint64
        Per document, the elements of its sketch (the method's signature keys).
    min_common : int
        How many sketch elements the documents of a group must share (>= 1).
    max_docs : int
        Components larger than this are covered by greedy cliques instead.
    max_clique_size : int
        Bound of the clique fallback.

    Returns
    -------
    list of ndarray

    Raises
    ------
    ParameterError
        ``min_common`` < 1, ``max_docs`` < 2, or ``features`` does not hold n arrays.
    """
    if min_common < 1:
        raise ParameterError(f"min_common must be >= 1, got {min_common}")
    if max_docs < 2:
        raise ParameterError(f"fpmax_max_docs must be >= 2, got {max_docs}")
    if len(features) != n:
        raise ParameterError(f"features holds {len(features)} documents, expected {n}")
    p = _as_pairs(n, pairs)
    adj = _adjacency(p)
    out: list[np.ndarray] = []
    for comp in _components(n, p):
        if comp.shape[0] > max_docs:
            sets = [(c, 0.0) for c in _greedy_cliques(comp, adj, max_clique_size)]
        else:
            sets = _fpmax_component(comp, features, min_common)
        taken: set[int] = set()
        for members, _support in sorted(sets, key=lambda s: (-len(s[0]), -s[1], s[0])):
            rest = [m for m in members if m not in taken]
            if len(rest) > 1:
                taken.update(rest)
                out.append(np.array(rest, dtype=np.int64))
    return sorted(out, key=lambda c: int(c[0]))


def build_groups(
    n: int,
    pairs: np.ndarray,
    *,
    grouping: str = "components",
    features: Sequence[np.ndarray] | None = None,
    min_common: int = 1,
    max_clique_size: int = 100,
    fpmax_max_docs: int = 40,
) -> list[np.ndarray]:
    """Disjoint duplicate groups from pairs, by one of :data:`GROUPINGS`.

    Parameters
    ----------
    n : int
        Number of documents.
    pairs : ndarray of shape (m, 2)
    grouping : {"components", "cliques", "fpmax"}
    features : sequence of ndarray, optional
        Required by ``fpmax``: each document's sketch elements.
    min_common : int
        ``fpmax``: sketch elements a group must share.
    max_clique_size, fpmax_max_docs : int
        Bounds of ``cliques`` and ``fpmax``.

    Returns
    -------
    list of ndarray
        Sorted members of each group, groups ordered by their smallest member.

    Raises
    ------
    ParameterError
        Unknown grouping, or ``fpmax`` without features.
    """
    if grouping == "components":
        return connected_groups(n, pairs)
    if grouping == "cliques":
        return clique_groups(n, pairs, max_size=max_clique_size)
    if grouping == "fpmax":
        if features is None:
            raise ParameterError("grouping 'fpmax' needs the documents' sketch features")
        return fpmax_groups(
            n,
            pairs,
            features,
            min_common=min_common,
            max_docs=fpmax_max_docs,
            max_clique_size=max_clique_size,
        )
    raise ParameterError(f"unknown grouping {grouping!r}; choose one of {', '.join(GROUPINGS)}")


def choose_canonical(
    groups: Sequence[np.ndarray],
    *,
    rule: str = "longest",
    lengths: np.ndarray,
    times: np.ndarray | None = None,
) -> list[int]:
    """The canonical member of every group.

    Parameters
    ----------
    groups : sequence of ndarray
    rule : {"longest", "earliest"}
        ``longest``: the largest ``lengths`` (ties: the earlier index). ``earliest``:
        the smallest ``times`` (NaN = unknown, last; ties: the longest, then the index).
    lengths : ndarray
        Text length of every document.
    times : ndarray of float, optional
        Fetch time of every document (e.g. POSIX seconds); required by ``earliest``.

    Returns
    -------
    list of int

    Raises
    ------
    ParameterError
        Unknown rule, or ``earliest`` without times.

    Examples
    --------
    >>> import numpy as np
    >>> choose_canonical([np.array([0, 1])], rule="earliest", lengths=np.array([1, 2]),
    ...                  times=np.array([np.nan, 5.0]))
    [1]
    """
    if rule not in CANONICAL_RULES:
        raise ParameterError(
            f"unknown canonical rule {rule!r}; choose one of {', '.join(CANONICAL_RULES)}"
        )
    lengths = np.asarray(lengths)
    if rule == "earliest":
        if times is None:
            raise ParameterError("canonical rule 'earliest' needs the documents' fetch times")
        t = np.asarray(times, dtype=np.float64)
        t = np.where(np.isnan(t), np.inf, t)
        return [int(min(g.tolist(), key=lambda d: (t[d], -int(lengths[d]), d))) for g in groups]
    return [int(min(g.tolist(), key=lambda d: (-int(lengths[d]), d))) for g in groups]


def make_groups(groups: Sequence[np.ndarray], canonical: Sequence[int]) -> list[Group]:
    """Pack member arrays and canonical choices into :class:`Group` objects."""
    return [Group(tuple(int(x) for x in g), int(c)) for g, c in zip(groups, canonical, strict=True)]
