"""tf-idf weighting of term counts: the weighted document vectors of activity clustering.

Each document is a mapping term → count (:mod:`extract.terms`). The corpus being
clustered (one university's environment in one direction, say) gives the vocabulary and
the document frequencies ``df``; a term's weight in a document is

``w(t, d) = (1 + ln tf(t, d)) · idf(t)``, with ``idf(t) = ln((1 + n) / (1 + df(t))) + 1``

(sublinear tf, smoothed idf: Salton & Buckley 1988; scikit-learn's ``TfidfVectorizer``
with ``sublinear_tf=True``), and every document vector is L2-normalised, so that the dot
product of two vectors is their cosine.

Two caps remove what cannot tell kinds of activity apart:

- ``min_df``: a term seen in fewer documents than this (by default a term of one
  document only) links no pair of documents; it is left out of the vocabulary, so that
  it does not dilute the vector's norm.
- ``max_df``: a term in more than this share of the documents (site boilerplate such as
  *home*, *contact*, *copyright*, the words of a shared template) is left out.

Complexity: O(N) time and memory for N (document, term) entries, plus O(V log V) to
order a vocabulary of V terms.

References
----------
G. Salton, C. Buckley, "Term-weighting approaches in automatic text retrieval",
*Information Processing & Management* 24 (1988) 513-523.

Examples
--------
>>> docs = [{"oil": 3, "price": 1}, {"oil": 1, "opec": 2}, {"goal": 2, "match": 1},
...         {"goal": 1, "match": 1, "oil": 1}]
>>> tf = TfidfWeighting(min_df=2, max_df=0.9).fit(docs)
>>> tf.vocabulary_
['goal', 'match', 'oil']
>>> X = tf.transform(docs)
>>> X.shape, round(float(X[0].multiply(X[1]).sum()), 3)
((4, 3), 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from cluster.base import Constraints, Estimator, Interval
from core import defaults as D

__all__ = ["DF_CONSTRAINTS", "TfidfWeighting", "counts_matrix"]

DF_CONSTRAINTS: Constraints = {
    "min_df": [Interval(int, 1, None, label="an integer >= 1 (documents)")],
    "max_df": [Interval(float, 0, 1, closed="right", label="a share of the documents in (0, 1]")],
}
"""The constraints of the document-frequency caps (also the activity clusterer's)."""


def counts_matrix(
    documents: Sequence[Mapping[str, int]],
) -> tuple[sp.csr_matrix, list[str]]:
    """Term counts as a CSR matrix (documents × terms, columns in sorted term order).

    Parameters
    ----------
    documents : sequence of mapping str → int
        Term counts per document; counts <= 0 are ignored.

    Returns
    -------
    X : scipy.sparse.csr_matrix of float32, shape (n, V)
        Sorted column indices in every row.
    terms : list of str
        The term of each column.

    Examples
    --------
    >>> X, terms = counts_matrix([{"b": 2, "a": 1}, {}, {"b": 1}])
    >>> terms, X.toarray().tolist()
    (['a', 'b'], [[1.0, 2.0], [0.0, 0.0], [0.0, 1.0]])
    """
    index: dict[str, int] = {}
    cols: list[np.ndarray] = []  # one small array a document: 12 bytes an entry, not ~70
    vals: list[np.ndarray] = []
    indptr = np.zeros(len(documents) + 1, dtype=np.int64)
    lookup = index.setdefault
    for d, counts in enumerate(documents):
        kept = {t: c for t, c in counts.items() if c > 0}
        cols.append(np.fromiter((lookup(t, len(index)) for t in kept), np.int32, len(kept)))
        vals.append(np.fromiter(kept.values(), np.float32, len(kept)))
        indptr[d + 1] = indptr[d] + len(kept)
    terms = sorted(index)
    remap = np.empty(len(index), dtype=np.int64)
    remap[[index[t] for t in terms]] = np.arange(len(terms))
    col = remap[np.concatenate(cols)] if cols else np.empty(0, dtype=np.int64)
    data = np.concatenate(vals) if vals else np.empty(0, dtype=np.float32)
    X = sp.csr_matrix((data, col, indptr), shape=(len(documents), len(terms)))
    X.sum_duplicates()
    X.sort_indices()
    return X, terms


class TfidfWeighting(Estimator):
    """Sublinear tf, smoothed idf, L2-normalised: term counts → weighted vectors.

    Parameters
    ----------
    min_df : int, default ``TFIDF_MIN_DF`` (2)
        Terms in fewer documents are left out (see the module docstring).
    max_df : float, default ``TFIDF_MAX_DF`` (0.5)
        Terms in more than this share of the documents are left out. The defaults are
        those of the paper's single link on weighted documents (``LSHLink(similarity=
        "weighted")``); the activity clustering passes ``[activity]`` ``min_df`` and
        ``max_df``.

    Attributes
    ----------
    vocabulary_ : list of str
        The terms kept, sorted; column ``c`` of :meth:`transform` is ``vocabulary_[c]``.
    idf_ : ndarray of float32
        The idf of each kept term.
    n_documents_ : int
        Documents the weights were fitted on.
    n_dropped_ : dict
        Terms left out by each cap (``min_df``, ``max_df``).

    Raises
    ------
    ParameterError
        ``min_df``/``max_df`` out of range (a ``ValueError``).

    Notes
    -----
    Time and memory O(N) for N (document, term) entries.
    """

    _parameter_constraints: ClassVar[Constraints] = DF_CONSTRAINTS

    def __init__(self, *, min_df: int = D.TFIDF_MIN_DF, max_df: float = D.TFIDF_MAX_DF) -> None:
        self.min_df = min_df
        self.max_df = max_df

    def fit(self, documents: Sequence[Mapping[str, int]]) -> TfidfWeighting:
        """Learn the vocabulary and idf from the documents' term counts."""
        self.fit_transform(documents)
        return self

    def fit_transform(self, documents: Sequence[Mapping[str, int]]) -> sp.csr_matrix:
        """Fit, then :meth:`transform` the same documents (one pass over the counts)."""
        self.check_params()
        counts, terms = counts_matrix(documents)
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        keep = (df >= self.min_df) & (df <= self.max_df * n)
        self.n_dropped_ = {
            "min_df": int(np.count_nonzero(df < self.min_df)),
            "max_df": int(np.count_nonzero((df >= self.min_df) & (df > self.max_df * n))),
        }
        cols = np.flatnonzero(keep)
        self.vocabulary_ = [terms[c] for c in cols.tolist()]
        self._index = {t: c for c, t in enumerate(self.vocabulary_)}
        self.idf_ = (np.log((1.0 + n) / (1.0 + df[cols])) + 1.0).astype(np.float32)
        self.n_documents_ = n
        return self._weigh(counts[:, cols])

    def transform(self, documents: Sequence[Mapping[str, int]]) -> sp.csr_matrix:
        """The L2-normalised tf-idf vectors (CSR, float32, rows of unknown terms only are 0).

        Raises
        ------
        RuntimeError
            Called before :meth:`fit`.
        """
        if not hasattr(self, "idf_"):
            raise RuntimeError("TfidfWeighting is not fitted: call fit(documents) first")
        index = self._index
        filtered = [{t: c for t, c in d.items() if t in index} for d in documents]
        counts, terms = counts_matrix(filtered)
        cols = np.asarray([index[t] for t in terms], dtype=np.int64)
        counts = sp.csr_matrix(
            (counts.data, cols[counts.indices], counts.indptr),
            shape=(len(documents), len(self.vocabulary_)),
        )
        counts.sort_indices()
        return self._weigh(counts)

    def _weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        X = counts.astype(np.float32).tocsr()
        X.data = (1.0 + np.log(X.data)) * self.idf_[X.indices]
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        X.data /= np.repeat(norms, np.diff(X.indptr)).astype(np.float32)
        X.sort_indices()
        return X
