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

The counts arrive as mappings, or as a :class:`TermCountMatrix` that a
:class:`CountsBuilder` appends batch by batch (int32 columns, float32 counts, a term →
column dict): the cluster stage streams the stored counts from the database into one,
so that a million documents' mappings are never held at once (``bench/million.py``).
Both give the same weights to the last bit.

Complexity: O(N) time and memory for N (document, term) entries, plus O(V log V) to
order a vocabulary of V terms; the builder holds 8 bytes an entry plus one batch.

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

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from cluster.base import Constraints, Estimator, Interval
from core import defaults as D

__all__ = [
    "DF_CONSTRAINTS",
    "CountsBuilder",
    "TermCountMatrix",
    "TfidfWeighting",
    "counts_matrix",
]

DF_CONSTRAINTS: Constraints = {
    "min_df": [Interval(int, 1, None, label="an integer >= 1 (documents)")],
    "max_df": [Interval(float, 0, 1, closed="right", label="a share of the documents in (0, 1]")],
}
"""The constraints of the document-frequency caps (also the activity clusterer's)."""


@dataclasses.dataclass(frozen=True)
class TermCountMatrix:
    """Term counts as a CSR matrix and the term of each column.

    Attributes
    ----------
    counts : scipy.sparse.csr_matrix of float32, shape (n, V)
        Count of term ``terms[c]`` in document ``d`` at ``(d, c)``; int32 column indices,
        sorted in every row.
    terms : list of str
        The term of each column, sorted.
    """

    counts: sp.csr_matrix
    terms: list[str]

    def __len__(self) -> int:
        return int(self.counts.shape[0])


class CountsBuilder:
    """Appends batches of term-count mappings into one :class:`TermCountMatrix`.

    Each batch becomes two flat arrays (int32 columns, float32 counts: 8 bytes an entry)
    and a term → column dict grows with the vocabulary, so that streaming the documents
    batch by batch holds their counts as a matrix, never all of their mappings.

    Notes
    -----
    Memory O(N + V) for N (document, term) entries and V terms, plus one batch; time
    O(N) to add, O(N + V log V) to :meth:`build`.

    Examples
    --------
    >>> b = CountsBuilder().add([{"b": 2, "a": 1}, {}])
    >>> m = b.add([{"b": 1, "c": 0}]).build()
    >>> m.terms, m.counts.toarray().tolist(), len(m)
    (['a', 'b'], [[1.0, 2.0], [0.0, 0.0], [0.0, 1.0]], 3)
    """

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._lengths: list[np.ndarray] = []

    def __len__(self) -> int:
        return sum(int(x.shape[0]) for x in self._lengths)

    def add(self, documents: Iterable[Mapping[str, int]]) -> CountsBuilder:
        """Append the documents' counts (counts <= 0 are ignored); returns ``self``."""
        lookup, index = self._index.setdefault, self._index
        cols: list[int] = []
        vals: list[int] = []
        lengths: list[int] = []
        for counts in documents:
            kept = [(t, c) for t, c in counts.items() if c > 0]
            cols.extend(lookup(t, len(index)) for t, _ in kept)
            vals.extend(c for _, c in kept)
            lengths.append(len(kept))
        self._cols.append(np.asarray(cols, dtype=np.int32))
        self._vals.append(np.asarray(vals, dtype=np.float32))
        self._lengths.append(np.asarray(lengths, dtype=np.int64))
        return self

    def build(self) -> TermCountMatrix:
        """The matrix of every document added, columns in sorted term order."""
        index = self._index
        terms = sorted(index)
        remap = np.empty(len(index), dtype=np.int32)
        remap[[index[t] for t in terms]] = np.arange(len(terms), dtype=np.int32)
        col = remap[np.concatenate(self._cols)] if self._cols else np.empty(0, np.int32)
        self._cols.clear()
        data = np.concatenate(self._vals) if self._vals else np.empty(0, np.float32)
        self._vals.clear()
        lengths = np.concatenate(self._lengths) if self._lengths else np.empty(0, np.int64)
        indptr = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        X = sp.csr_matrix((data, col, indptr), shape=(lengths.shape[0], len(terms)))
        X.sum_duplicates()
        X.sort_indices()
        return TermCountMatrix(X, terms)


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
    built = CountsBuilder().add(documents).build()
    return built.counts, built.terms


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

    def fit(self, documents: Sequence[Mapping[str, int]] | TermCountMatrix) -> TfidfWeighting:
        """Learn the vocabulary and idf from the documents' term counts (mappings, or a
        :class:`TermCountMatrix` built from them)."""
        self.fit_transform(documents)
        return self

    def fit_transform(
        self, documents: Sequence[Mapping[str, int]] | TermCountMatrix
    ) -> sp.csr_matrix:
        """Fit, then :meth:`transform` the same documents (one pass over the counts).

        ``documents``: term-count mappings, or their :class:`TermCountMatrix` (the same
        weights; the matrix is read, not changed).
        """
        self.check_params()
        if not isinstance(documents, TermCountMatrix):
            documents = CountsBuilder().add(documents).build()
        counts, terms = documents.counts, documents.terms
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
