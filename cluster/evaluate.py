"""External scores of a clustering against reference classes.

Every score is computed from the contingency table ``n_ck`` (documents of class ``c``
in cluster ``k``; ``n_c``, ``n_k`` its margins; ``N`` labelled documents). Documents
without a class (``None`` or NaN in ``labels_true``) are left out of every score —
they are not a class of their own — but they may be clustered with the others.

Pair-counting scores (Rand 1971) count the ``N (N - 1) / 2`` pairs of labelled
documents: TP pairs share a class and a cluster, FP share a cluster only, FN a class
only, TN neither.

``accuracy``
    Rand accuracy (TP + TN) / all pairs.
``precision``, ``recall``, ``f_pairwise``
    Pairwise TP / (TP + FP), TP / (TP + FN) and their harmonic mean (the Acc, P, R, F
    of the paper's Table 1 are read as these pair-counting scores).
``f_class``
    Class F-measure (Larsen & Aone 1999): ``Σ_c (n_c / N) max_k F(c, k)`` with
    ``F(c, k) = 2 P R / (P + R)``, ``P = n_ck / n_k``, ``R = n_ck / n_c``.
``purity``
    ``(1 / N) Σ_k max_c n_ck``.
``nmi``
    Normalised mutual information (arithmetic mean normalisation,
    :func:`sklearn.metrics.normalized_mutual_info_score`).
``ari``
    Adjusted Rand index (Hubert & Arabie 1985, :func:`sklearn.metrics.adjusted_rand_score`).
``bcubed_precision``, ``bcubed_recall``, ``bcubed_f``
    B-cubed (Bagga & Baldwin 1998; Amigó et al. 2009): the mean over documents of the
    share of its cluster that is of its class (``Σ n_ck² / n_k / N``), of its class that
    is in its cluster (``Σ n_ck² / n_c / N``), and their harmonic mean.

Complexity: O(N + number of non-empty cells of the contingency table).

References
----------
W. M. Rand, "Objective criteria for the evaluation of clustering methods", JASA 1971.
B. Larsen, C. Aone, "Fast and effective text mining using linear-time document
clustering", KDD 1999.
L. Hubert, P. Arabie, "Comparing partitions", *Journal of Classification* 2 (1985).
A. Bagga, B. Baldwin, "Entity-based cross-document coreferencing using the vector
space model", COLING 1998. E. Amigó et al., "A comparison of extrinsic clustering
evaluation metrics based on formal constraints", *Information Retrieval* 12 (2009).

Examples
--------
>>> s = score_clustering(["a", "a", "b", "b", None], [0, 0, 1, 2, 2])
>>> s["n_labelled"], s["purity"], s["precision"], s["recall"]
(4, 1.0, 1.0, 0.5)
>>> round(s["f_class"], 4)
0.8333
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

SCORES = (
    "accuracy",
    "precision",
    "recall",
    "f_pairwise",
    "f_class",
    "purity",
    "nmi",
    "ari",
    "bcubed_precision",
    "bcubed_recall",
    "bcubed_f",
)
"""The score keys of :func:`score_clustering`, all in [0, 1] (ARI in [-0.5, 1])."""


def _is_missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _harmonic(a: float, b: float) -> float:
    return 2.0 * a * b / (a + b) if a + b > 0 else 0.0


def score_clustering(
    labels_true: Sequence[Any] | np.ndarray, labels_pred: Sequence[Any] | np.ndarray
) -> dict[str, float | int]:
    """Score a clustering against reference classes.

    Parameters
    ----------
    labels_true : sequence
        The class of every document; ``None`` (or NaN) for a document without one.
    labels_pred : sequence
        The cluster of every document (any hashable labels).

    Returns
    -------
    dict
        ``n_documents``, ``n_labelled``, ``n_classes``, ``n_clusters`` (clusters holding a
        labelled document) and every score of :data:`SCORES`, defined in the module
        docstring. With fewer than two labelled documents the pair-counting scores are
        1.0 by convention (no pair can be wrong).

    Raises
    ------
    ValueError
        The two sequences differ in length.
    """
    true = list(labels_true)
    pred = list(labels_pred)
    if len(true) != len(pred):
        raise ValueError(
            f"labels_true has {len(true)} entries but labels_pred {len(pred)}: give one "
            "class and one cluster per document"
        )
    keep = [k for k, x in enumerate(true) if not _is_missing(x)]
    n = len(keep)
    out: dict[str, float | int] = {"n_documents": len(true), "n_labelled": n}
    if n == 0:
        out.update({"n_classes": 0, "n_clusters": 0})
        out.update(dict.fromkeys(SCORES, 0.0))
        return out
    _, t = np.unique(np.array([str(true[k]) for k in keep]), return_inverse=True)
    _, p = np.unique(np.array([str(pred[k]) for k in keep]), return_inverse=True)
    t, p = t.reshape(-1), p.reshape(-1)
    C = contingency_matrix(t, p, sparse=True).tocsr().astype(np.float64)
    nck = C.data
    n_c = np.asarray(C.sum(axis=1)).ravel()
    n_k = np.asarray(C.sum(axis=0)).ravel()
    out["n_classes"] = int(n_c.shape[0])
    out["n_clusters"] = int(n_k.shape[0])

    tp = float((nck * (nck - 1)).sum() / 2)
    same_cluster = float((n_k * (n_k - 1)).sum() / 2)
    same_class = float((n_c * (n_c - 1)).sum() / 2)
    total = n * (n - 1) / 2
    if total == 0:
        precision = recall = accuracy = 1.0
    else:
        fp, fn = same_cluster - tp, same_class - tp
        tn = total - tp - fp - fn
        accuracy = (tp + tn) / total
        precision = tp / same_cluster if same_cluster else 1.0
        recall = tp / same_class if same_class else 1.0
    out["accuracy"] = accuracy
    out["precision"] = precision
    out["recall"] = recall
    out["f_pairwise"] = _harmonic(precision, recall)

    coo = C.tocoo()
    cell_p = coo.data / n_k[coo.col]
    cell_r = coo.data / n_c[coo.row]
    cell_f = np.where(cell_p + cell_r > 0, 2 * cell_p * cell_r / (cell_p + cell_r), 0.0)
    best_f = np.zeros(n_c.shape[0])
    np.maximum.at(best_f, coo.row, cell_f)
    out["f_class"] = float((n_c / n * best_f).sum())
    out["purity"] = float(np.asarray(C.max(axis=0).todense()).sum() / n)
    out["nmi"] = float(normalized_mutual_info_score(t, p))
    out["ari"] = float(adjusted_rand_score(t, p))
    bp = float((coo.data**2 / n_k[coo.col]).sum() / n)
    br = float((coo.data**2 / n_c[coo.row]).sum() / n)
    out["bcubed_precision"] = bp
    out["bcubed_recall"] = br
    out["bcubed_f"] = _harmonic(bp, br)
    return out


def hierarchical_f_measure(
    labels_true: Sequence[Any] | np.ndarray,
    linkage_matrix: np.ndarray,
    max_height: float | None = None,
) -> float:
    """Class F-measure of a whole dendrogram (Larsen & Aone 1999).

    For a hierarchical clustering the F-measure of a class is the best it reaches at
    *any* node of the tree (leaves included): ``Σ_c (n_c / N) max_node F(c, node)``
    (Larsen & Aone 1999; Steinbach, Karypis & Kumar 2000). Unlabelled documents are left
    out of the node sizes as in :func:`score_clustering`.

    Parameters
    ----------
    labels_true : sequence
        The class of every document; ``None`` (or NaN) for none.
    linkage_matrix : ndarray of shape (n - 1, 4)
        SciPy linkage matrix over the same documents.
    max_height : float, optional
        Only nodes merged at a height below it count (e.g. ``1.0`` leaves out the
        joins of :func:`cluster.unionfind.single_linkage` that complete the tree).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0, 1, 0.1, 2], [2, 3, 0.2, 2], [4, 5, 1.0, 4]])
    >>> hierarchical_f_measure(["a", "a", "b", "b"], Z)
    1.0
    """
    true = list(labels_true)
    n = len(true)
    keep = np.array([not _is_missing(x) for x in true], dtype=bool)
    if n == 0 or not keep.any():
        return 0.0
    _, t = np.unique(np.array([str(x) for x in true], dtype=object)[keep].astype(str),
                     return_inverse=True)  # fmt: skip
    n_classes = int(t.max()) + 1
    counts = np.zeros((n + linkage_matrix.shape[0], n_classes), dtype=np.float64)
    counts[np.flatnonzero(keep), t.reshape(-1)] = 1.0
    valid = np.zeros(n + linkage_matrix.shape[0], dtype=bool)
    valid[:n] = keep
    for k, (a, b, h, _) in enumerate(linkage_matrix):
        counts[n + k] = counts[int(a)] + counts[int(b)]
        valid[n + k] = max_height is None or h < max_height
    counts = counts[valid]
    n_c = counts.sum(axis=0)  # leaves are all valid nodes of size 1 per labelled doc
    n_c = np.bincount(t.reshape(-1), minlength=n_classes).astype(np.float64)
    size = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(size > 0, counts / size, 0.0)
        r = counts / n_c
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return float((n_c / n_c.sum() * f.max(axis=0)).sum())
