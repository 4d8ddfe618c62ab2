"""The count matrix of the activity clustering: built batch by batch
(:class:`cluster.weighting.CountsBuilder`) and streamed from the database
(:func:`webometrics.stages.cluster.documents.load_term_counts`), it is the matrix of the
mappings at once and of a plain dense count; its tf-idf is that of the mappings."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import delete

from cluster.weighting import CountsBuilder, TermCountMatrix, TfidfWeighting, counts_matrix
from core.exceptions import StageError
from corpora.activity import load_activity_corpus
from extract.terms import count_terms
from store import make_engine
from store.models import Document
from store.session import session_scope
from webometrics.stages.cluster.documents import Selection, load_term_counts


@pytest.fixture(scope="module")
def site_counts() -> list[dict[str, int]]:
    """Term counts of the 556 real labelled websites."""
    corpus = load_activity_corpus("websites")
    return count_terms(corpus.texts, corpus.languages)


def same_matrix(a: TermCountMatrix, b: TermCountMatrix) -> bool:
    """Same terms, shape, index arrays, values and dtypes."""
    x, y = a.counts, b.counts
    arrays = [(getattr(x, f), getattr(y, f)) for f in ("data", "indices", "indptr")]
    return (
        a.terms == b.terms
        and x.shape == y.shape
        and all(np.array_equal(u, v) and u.dtype == v.dtype for u, v in arrays)
    )


def test_batches_give_the_matrix_of_one_pass_and_of_a_dense_count(site_counts):
    whole = CountsBuilder().add(site_counts).build()
    for size in (1, 7, 100, 1000):
        builder = CountsBuilder()
        for start in range(0, len(site_counts), size):
            builder.add(site_counts[start : start + size])
        assert len(builder) == len(site_counts)
        assert same_matrix(builder.build(), whole), size
    terms = sorted({t for c in site_counts for t in c})
    dense = np.zeros((len(site_counts), len(terms)), dtype=np.float32)
    column = {t: i for i, t in enumerate(terms)}
    for d, counts in enumerate(site_counts):
        for t, c in counts.items():
            dense[d, column[t]] = c
    assert whole.terms == terms and np.array_equal(whole.counts.toarray(), dense)
    X = whole.counts
    assert (X.indices.dtype, X.data.dtype, X.has_sorted_indices) == (np.int32, np.float32, True)
    X2, terms2 = counts_matrix(site_counts)
    assert same_matrix(TermCountMatrix(X2, terms2), whole)


def test_empty_documents_and_non_positive_counts():
    assert CountsBuilder().build().counts.shape == (0, 0)
    m = CountsBuilder().add([{}, {"a": 0, "b": -1}]).add([{"b": 2}, {}]).build()
    assert m.terms == ["b"] and m.counts.toarray().tolist() == [[0.0], [0.0], [2.0], [0.0]]
    assert len(m) == 4


def test_tfidf_of_the_matrix_is_that_of_the_mappings(site_counts):
    matrix = CountsBuilder().add(site_counts).build()
    before = matrix.counts.copy()
    for min_df, max_df in ((2, 1.0), (1, 0.5), (3, 0.2)):
        a = TfidfWeighting(min_df=min_df, max_df=max_df)
        b = TfidfWeighting(min_df=min_df, max_df=max_df)
        Xa, Xb = a.fit_transform(site_counts), b.fit_transform(matrix)
        assert a.vocabulary_ == b.vocabulary_ and a.n_dropped_ == b.n_dropped_
        assert np.array_equal(a.idf_, b.idf_)
        for f in ("data", "indices", "indptr"):
            assert np.array_equal(getattr(Xa, f), getattr(Xb, f))
    assert (matrix.counts != before).nnz == 0  # read, not changed


def test_counts_streamed_from_the_database(migrated_url, site_counts):
    engine = make_engine(migrated_url)
    docs = site_counts[:150]
    with session_scope(engine) as s:
        rows = [Document(unit="domain", key=f"s{k}.example", domain=f"s{k}.example",
                         terms=c, n_terms=len(c)) for k, c in enumerate(docs)]  # fmt: skip
        s.add_all(rows)
        s.flush()
        ids = [r.id for r in rows]
    selection = Selection("domain")
    expected = CountsBuilder().add(docs).build()
    for chunk in (1, 7, 5000):
        assert same_matrix(load_term_counts(engine, ids, selection, chunk=chunk), expected)
    backwards = load_term_counts(engine, ids[::-1], selection, chunk=11)
    assert same_matrix(backwards, CountsBuilder().add(docs[::-1]).build())
    with session_scope(engine) as s:
        s.add(Document(unit="domain", key="old.example", domain="old.example"))
        s.flush()
        old = s.query(Document.id).filter(Document.key == "old.example").scalar()
    with pytest.raises(StageError, match=r"1 of the 151 domain documents .*--rebuild-documents"):
        load_term_counts(engine, [*ids, old], selection, chunk=7)
    with session_scope(engine) as s:
        s.execute(delete(Document).where(Document.id == ids[3]))
    with pytest.raises(StageError, match="deleted while clustering"):
        load_term_counts(engine, ids, selection)
    engine.dispose()
