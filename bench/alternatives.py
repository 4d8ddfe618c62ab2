"""Alternatives to the activity clustering's default, over Leiden seeds: worth adopting?

Issue 21 asks for class F within 0.005 of the textbook method (tf-idf, exact 16-NN,
Leiden) on every labelled corpus, measured with one Leiden seed. ``bench/activity.py``'s
seed study shows that one seed moves class F by more than that on the small corpora, so
each alternative here is scored on the mean over Leiden seeds 1-5 as well as on seed 1,
against the textbook's own class F by seed (from ``bench/results/activity.json``).

The alternatives change one thing of the default ``ActivityClusterer()`` each:

* **the terms**: *terms as stored* (each document's ``[domain] max_terms`` (1,000) most
  frequent terms, what the extract stage stores and the cluster stage clusters; the
  default here counts every term of the text); *no stop list* (every word of two
  letters or more that is not all digits, Snowball-stemmed: the default's terms with the
  stop words kept, as scikit-learn's ``TfidfVectorizer`` keeps them unless told
  otherwise; idf weighs them down);
  *unstemmed terms* (the default's words and stop list, not stemmed, as the textbook's
  terms are); *stems and words* (each word counted twice: its stem and, apart, itself,
  so two texts that share the word match more than two that share only its stem);
  *light English stems* (Harman's S-stemmer, plurals only, for English words; Snowball's
  for the others); *digits kept* (the default's terms and words of digits, as the
  textbook keeps them); *the textbook's tf-idf* (the textbook's own matrix, scikit-learn's
  ``TfidfVectorizer`` of :func:`bench.activity.tfidf`, through the default's other
  steps: how much of the gap to the textbook the terms make). None of the last six is open
  to the cluster stage, which clusters the stemmed term counts the extract stage stored;
  they measure where the gap comes from;
* **the weights**: *min_df 1* (the terms of one document kept: they link no pair, but
  weigh in each vector's norm) and *min_df 3*; *max_df 0.5* (the textbook's cap); *BM25*
  (Okapi BM25's saturated tf, ``k1`` 1.2, ``b`` 0.75, and its idf, instead of sublinear
  tf-idf; rows L2-normalised); other tf functions than ``1 + ln tf`` (:data:`TF`: sqrt,
  raw, binary, tf^0.6, and the larger of ``1 + ln tf`` and ``sqrt tf``, which differs
  from the default only from tf 8 on); the idf to the power 0.5 or 1.5;
* **the edges**: *SNN weights* (each k-NN edge weighted by the Jaccard overlap of its
  two ends' neighbour sets, as PhenoGraph does, instead of their cosine); *k 12, 16, 20*
  (a fixed number of neighbours instead of round(2.5 ln n); 16 is the textbook's); the
  cosine to the power 0 (unweighted edges), 0.5 or 2 as edge weights;
* **the Leiden step**, on the default's graph: *Leiden to convergence* (iterations until
  no node moves, as the textbook's ``leidenalg`` runs, instead of five) and *2 Leiden
  iterations*; *the textbook's Leiden* (``leidenalg``'s modularity, the textbook's own
  community step); *resolution 0.9, 1.1, 1.2* (coarser or finer clusters than
  modularity's); *best of 8 by modularity* (eight seeded
  runs, the partition of largest quality kept: the usual advice for a stochastic
  optimiser); *consensus E x I* (Lancichinetti & Fortunato 2012; the ensemble of ECG,
  Poulin & Théberge 2019): ``E`` seeded runs of ``I`` iterations, each edge reweighted
  ``w · (0.05 + 0.95 · share of runs joining its ends)``, then Leiden once more;
* **the reassignment after Leiden** (:mod:`cluster.reassign`, one pass in the default):
  *no reassignment* (Leiden's clusters as found), *reassign P passes* (2 or 3), and
  *reassign, every centroid* (one pass comparing each document with every cluster's
  centroid, not only its neighbours' clusters: a dense documents × clusters product).

Every alternative but those of the reassignment ends with the default's one pass. A last
section chooses the number of passes (0 to 3) leave-one-corpus-out: for each corpus, the
number with the best mean class F (seeds 1-5) on the eight others, and its class F on the
corpus left out; another chooses the same way among every alternative the cluster stage
can run (all but the six of other terms), which is how a new default would be chosen;
a last one chooses between stemmed and unstemmed terms per corpus without labels, by the
larger modularity of the clusters.

Unless the alternative changes them, every graph is the default's k-NN graph (exact
neighbours, ``k`` = round(2.5 ln n)) of its matrix, and every Leiden partition is Leiden
with the default's quality, resolution and iterations (RB at 1, five). A last table
times, at the 20,000 Reuters stories of ``bench/activity.py``'s scaling table, what each
alternative changes: the neighbour step (on its matrix) and the Leiden step with the
reassignment (seed 1), against the 0.5 x textbook budget there.

Every alternative is ``ActivityClusterer`` with one step swapped (``set_params``): a
weighting step (BM25, other tf or idf), a neighbour step (SNN weights, another k or
edge weight), a community step (best of 8, consensus, the textbook's Leiden), a
reassignment step (passes, every centroid, ``"passthrough"``), or one step's
parameter (``weighting__min_df``); the rest is the clusterer's own code. The default's
neighbour step finds each matrix's graph once for every seed and Leiden alternative.

Run: ``.venv/bin/python bench/alternatives.py [--corpora bbc,lenta]`` (about 10 minutes);
``--smoke`` (60 websites, 300 stories, a temporary folder);
writes ``bench/results/alternatives.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.activity import LeidenalgModularity  # noqa: E402
from bench.common import RESULTS, load_averages, machine, run_date, write_results  # noqa: E402
from bench.steps import CachedNeighbours  # noqa: E402
from cluster.activity import ActivityClusterer  # noqa: E402
from cluster.knn import KNeighbours  # noqa: E402
from cluster.nested_leiden import LeidenCommunities  # noqa: E402
from cluster.reassign import CentroidReassignment, centroid_sums  # noqa: E402
from cluster.weighting import TfidfWeighting  # noqa: E402
from core import defaults as D  # noqa: E402
from corpora.activity import corpus_names, load_activity_corpus  # noqa: E402

SEEDS = (1, 2, 3, 4, 5)
FLOOR = 0.05
"""The weight share an edge keeps when no consensus member puts its ends together (ECG's)."""
BEST_OF = 8
CONSENSUS = ((8, 2), (16, 2))
"""Consensus members ``E`` and Leiden iterations ``I`` of each member."""
BM25_K1, BM25_B = 1.2, 0.75
SCALE_DOCS = 20_000
WEB_CORPORA = ("websites", "testweb")
"""The corpora of web sites, the project's own kind of documents."""

KS = (12, 16, 20)
"""Fixed numbers of neighbours tried instead of round(2.5 ln n) (16: the textbook's)."""
IDF_POWERS = (0.5, 1.5)
EDGE_POWERS = (0.0, 0.5, 2.0)
RESOLUTIONS = (0.9, 1.1, 1.2)
"""Resolutions of the clusters tried instead of 1 (modularity's)."""

PASSES = (0, 1, 2, 3)
"""Passes of reassignment the leave-one-corpus-out choice is made among."""

Alternative = tuple[str, str, dict[str, Any]]
"""An alternative: its name, the term counts it clusters (``"default"``, every term of the
text; ``"as stored"``, a document's 1,000 most frequent; ``"no stop list"``,
``"unstemmed"``, ``"stems and words"``, ``"light"``, ``"digits"`` or ``"textbook"``: terms
the extract stage does not store) and what it changes of the default clusterer
(``set_params`` keywords)."""

LOSS = 0.005
"""A corpus's mean class F lower than the default's by more than this is a loss (the
issue's "without losing elsewhere")."""


# --- the steps that differ from the default's -------------------------------------------
# Each alternative is ``ActivityClusterer`` with one step swapped or one step's parameter
# set; everything else is the clusterer's own code (nothing rebuilt here).


def light_stem(word: str) -> str:
    """Harman's S-stemmer (1991): English plurals only (``-ies`` to ``-y``, ``-es`` to
    ``-e``, a final ``-s`` dropped; not after ``a e o`` / ``u s`` as the rules say)."""
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


TERM_KINDS = ("unstemmed", "stemmed", "stems and words", "light")
"""What :func:`counts_without_stemming` counts of each kept word: the word, its Snowball
stem, both (the word marked apart from the stems), or Harman's light stem of English
words (Snowball's of other languages)."""


def counts_without_stemming(
    texts: Sequence[str], languages: Sequence[str | None], *, terms: str = "unstemmed",
    digits: bool = False,
) -> Any:  # fmt: skip
    """The default's words and stop list (:func:`extract.tokens.words`,
    :data:`extract.terms.MIN_TERM_LENGTH`, digits out, :func:`extract.tokens.stopwords_for`
    of the text's language, py3langid's when not given), counted as ``terms`` says (one of
    :data:`TERM_KINDS`); ``digits``: words of digits kept."""
    import py3langid

    from cluster.weighting import CountsBuilder
    from extract.terms import MIN_TERM_LENGTH
    from extract.tokens import stem_words, stopwords_for, words

    if terms not in TERM_KINDS:
        raise ValueError(f"terms={terms!r}: use one of {TERM_KINDS}")
    docs = []
    for text, language in zip(texts, languages, strict=True):
        language = language or py3langid.classify(text[:5000])[0]
        stop = stopwords_for(language)
        kept = [w for w in words(text) if len(w) >= MIN_TERM_LENGTH and w not in stop
                and (digits or not w.isdigit())]  # fmt: skip
        if terms == "unstemmed" or not kept:
            counted = Counter(kept)
        elif terms == "light" and language == "en":
            counted = Counter(light_stem(w) for w in kept)
        else:
            counted = Counter(stem_words(kept, language))
            if terms == "stems and words":
                counted.update("=" + w for w in kept)  # "=": never a stem
        docs.append(dict(counted))
    return CountsBuilder().add(docs).build()


def counts_without_stop_list(texts: Sequence[str], languages: Sequence[str | None]) -> Any:
    """The default's term counts with the stop words kept (same words, length, digits and
    stems: :func:`extract.tokens.words`, :data:`extract.terms.MIN_TERM_LENGTH`,
    :func:`extract.tokens.stem_words`)."""
    from cluster.weighting import CountsBuilder
    from extract.terms import MIN_TERM_LENGTH
    from extract.tokens import stem_words, words

    docs = []
    for text, language in zip(texts, languages, strict=True):
        kept = [w for w in words(text) if len(w) >= MIN_TERM_LENGTH and not w.isdigit()]
        docs.append(dict(Counter(stem_words(kept, language) if kept else [])))
    return CountsBuilder().add(docs).build()


class BM25Weighting:  # a step need only have the interface (and parameters to list)
    """A weighting step: Okapi BM25 weights of the default's kept terms (``min_df``,
    ``max_df``), rows L2-normalised."""

    def __init__(self, *, k1: float = BM25_K1, b: float = BM25_B) -> None:
        self.k1 = k1
        self.b = b

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b}

    def __repr__(self) -> str:
        return f"BM25Weighting(k1={self.k1}, b={self.b})"

    def fit_transform(self, counts: Any) -> sp.csr_matrix:
        C = counts.counts.tocsr().astype(np.float64)
        n = C.shape[0]
        df = np.bincount(C.indices, minlength=C.shape[1])
        keep = np.flatnonzero((df >= D.ACTIVITY_MIN_DF) & (df <= D.ACTIVITY_MAX_DF * n))
        C, df = C[:, keep].tocsr(), df[keep]
        self.vocabulary_ = [counts.terms[t] for t in keep]
        length = np.asarray(C.sum(axis=1)).ravel()
        rows = np.repeat(np.arange(n), np.diff(C.indptr))
        relative = length[rows] / max(float(length.mean()), 1e-9)
        tf = C.data * (self.k1 + 1) / (C.data + self.k1 * (1 - self.b + self.b * relative))
        C.data = tf * np.log(1.0 + (n - df[C.indices] + 0.5) / (df[C.indices] + 0.5))
        norms = np.sqrt(np.asarray(C.multiply(C).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        C.data /= np.repeat(norms, np.diff(C.indptr))
        return C.astype(np.float32)


TF: dict[str, Any] = {
    "sqrt tf": np.sqrt,
    "raw tf": lambda tf: tf,
    "binary tf": np.ones_like,
    "tf^0.6": lambda tf: tf**0.6,
    "max(1 + ln tf, sqrt tf)": lambda tf: np.maximum(1.0 + np.log(tf), np.sqrt(tf)),
}
"""Term-frequency functions tried instead of the default's sublinear ``1 + ln tf``."""


class TfWeighting(TfidfWeighting):
    """The default's weighting step (the same kept terms, smoothed idf, rows
    L2-normalised) with another tf function (:data:`TF`; ``"sublinear"``: the default's)
    and the idf raised to ``idf_power``."""

    def __init__(
        self, *, tf: str = "sublinear", idf_power: float = 1.0,
        min_df: int = D.ACTIVITY_MIN_DF, max_df: float = D.ACTIVITY_MAX_DF,
    ) -> None:  # fmt: skip
        super().__init__(min_df=min_df, max_df=max_df)
        self.tf = tf
        self.idf_power = idf_power

    def _weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        X = counts.astype(np.float32).tocsr()
        tf = 1.0 + np.log(X.data) if self.tf == "sublinear" else TF[self.tf](X.data)
        X.data = (tf * self.idf_[X.indices] ** self.idf_power).astype(np.float32)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        X.data /= np.repeat(norms, np.diff(X.indptr)).astype(np.float32)
        X.sort_indices()
        return X


class EdgePower:
    """A neighbour step: another step's graph, each edge weighted by its cosine to the
    power ``power`` (0: unweighted edges) instead of the cosine."""

    def __init__(self, step: Any, power: float) -> None:
        self.step = step
        self.power = power

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        return {"step": self.step, "power": self.power}

    def __repr__(self) -> str:
        return f"EdgePower({self.step!r}, power={self.power})"

    def fit(self, X: sp.csr_matrix) -> EdgePower:
        self.step.fit(X)
        i, j, w = self.step.edges_
        self.graph_, self.edges_ = self.step.graph_, (i, j, w**self.power)
        return self


class TextbookLeiden(LeidenalgModularity):
    """The textbook's community step (``leidenalg``'s modularity Leiden, iterated until
    no node moves), its seed set as the default's is."""

    def set_params(self, **params: Any) -> TextbookLeiden:
        for key, value in params.items():
            setattr(self, key, value)
        return self


class SNNNeighbours(KNeighbours):
    """The default's neighbour step, its edges weighted by the Jaccard overlap of their
    ends' neighbour sets (each node counted in its own set; edges of no overlap dropped),
    as PhenoGraph weighs them."""

    def fit(self, X: sp.csr_matrix) -> SNNNeighbours:
        super().fit(X)
        nb = self.graph_.neighbours
        n = nb.shape[0]
        i, j, _w = self.edges_
        rows = np.repeat(np.arange(n), nb.shape[1])
        ok = nb.ravel() >= 0
        A = sp.csr_matrix((np.ones(int(ok.sum())), (rows[ok], nb.ravel()[ok])), shape=(n, n))
        A = ((A + sp.identity(n, format="csr")) > 0).astype(np.float64).tocsr()
        size = np.asarray(A.sum(axis=1)).ravel()
        common = np.asarray(A[i].multiply(A[j]).sum(axis=1)).ravel()
        jaccard = common / (size[i] + size[j] - common)
        keep = jaccard > 0
        self.edges_ = (i[keep], j[keep], jaccard[keep])
        return self


CLUSTERS_ONLY: dict[str, Any] = {"resolution": min(D.ACTIVITY_RESOLUTION), "coarser": ()}
"""The default's clusters and no other level (the levels never change the clusters)."""


class BestOf(LeidenCommunities):
    """The community step keeping the partition of largest quality among ``runs``
    seeded runs of the default's."""

    def __init__(
        self, *, runs: int = BEST_OF, resolution: Any = CLUSTERS_ONLY["resolution"],
        coarser: Any = (), seed: int = D.ACTIVITY_SEED,
    ) -> None:  # fmt: skip
        super().__init__(resolution=resolution, coarser=coarser, seed=seed)
        self.runs = runs

    def fit(self, graph: Any) -> BestOf:
        seed = int(self.seed)
        found = []
        for m in range(self.runs):
            self.seed = seed * 1000 + m
            found.append(super().fit(graph).clusters_)
        self.seed = seed
        self.clusters_ = max(found, key=lambda level: level.quality)
        return self


class Consensus(LeidenCommunities):
    """The community step running Leiden once more on the graph reweighted by how often
    ``members`` seeded runs of ``iters`` iterations join each edge
    (``w · (FLOOR + (1 - FLOOR) · share)``)."""

    def __init__(
        self, *, members: int = 8, iters: int = 2, resolution: Any = CLUSTERS_ONLY["resolution"],
        coarser: Any = (), seed: int = D.ACTIVITY_SEED,
    ) -> None:  # fmt: skip
        super().__init__(resolution=resolution, coarser=coarser, seed=seed)
        self.members = members
        self.iters = iters

    def fit(self, graph: Any) -> Consensus:
        import igraph as ig

        from cluster.graph_leiden import edge_pairs

        n, i, j, w = graph
        g = ig.Graph(n=n, edges=edge_pairs(i, j))
        together = np.zeros(len(i))
        try:
            for m in range(self.members):
                ig.set_random_number_generator(random.Random(int(self.seed) * 1000 + m))
                found = g.community_leiden(
                    objective_function="modularity", weights=w.tolist(), n_iterations=self.iters
                )
                labels = np.asarray(found.membership)
                together += labels[i] == labels[j]
        finally:
            ig.set_random_number_generator(random)
        super().fit((n, i, j, w * (FLOOR + (1 - FLOOR) * together / self.members)))
        return self


class EveryCentroid(CentroidReassignment):
    """The reassignment step comparing each document with every cluster's centroid (one
    pass, a dense documents x clusters product), not only its neighbours' clusters."""

    def fit(self, X: sp.csr_matrix, neighbours: np.ndarray, labels: np.ndarray) -> EveryCentroid:
        X = X.astype(np.float64)
        sums, norms = centroid_sums(X, labels)
        dots = np.asarray((X @ sums.T).todense())
        rows = np.arange(X.shape[0])
        own = dots[rows, labels]
        xx = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        rest = norms[labels] - 2 * own + xx
        sims = dots / np.sqrt(np.maximum(norms, 1e-300))
        sims[dots <= 0] = -np.inf
        ok = rest > 1e-12 * np.maximum(norms[labels], 1.0)
        sims[rows, labels] = np.where(ok, (own - xx) / np.sqrt(np.where(ok, rest, 1.0)), -np.inf)
        best = sims.argmax(axis=1)
        keep = (xx == 0) | (sims[rows, best] <= sims[rows, labels])
        self.labels_ = np.where(keep, labels, best)
        self.moved_ = int(np.count_nonzero(self.labels_ != labels))
        return self


def alternatives() -> list[Alternative]:
    """Each alternative: its name, the counts it clusters and the steps it swaps (fresh
    step objects: a step is fitted in place)."""
    out: list[Alternative] = [
        ("default", "default", {}),
        ("no reassignment", "default", {"reassignment": "passthrough"}),
        ("reassign 2 passes", "default", {"reassignment": CentroidReassignment(passes=2)}),
        ("reassign 3 passes", "default", {"reassignment": CentroidReassignment(passes=3)}),
        ("reassign, every centroid", "default", {"reassignment": EveryCentroid()}),
        ("no stop list", "no stop list", {}),
        (f"terms as stored ({D.DOMAIN_MAX_TERMS:,} a document)", "as stored", {}),
        ("unstemmed terms", "unstemmed", {}),
        ("stems and words", "stems and words", {}),
        ("light English stems", "light", {}),
        ("the textbook's tf-idf", "textbook", {"weighting": "passthrough"}),
        ("min_df 1", "default", {"weighting__min_df": 1}),
        ("max_df 0.5", "default", {"weighting__max_df": 0.5}),
        ("BM25", "default", {"weighting": BM25Weighting()}),
        ("min_df 3", "default", {"weighting__min_df": 3}),
        *[(name, "default", {"weighting": TfWeighting(tf=name)}) for name in TF],
        *[(f"idf^{p}", "default", {"weighting": TfWeighting(idf_power=p)}) for p in IDF_POWERS],
        ("digits kept", "digits", {}),
        ("SNN weights", "default", {"neighbours": "snn"}),
        *[(f"k {k}", "default", {"neighbours": f"k{k}"}) for k in KS],
        *[(f"edges cosine^{p}", "default", {"neighbours": f"cosine^{p}"}) for p in EDGE_POWERS],
        ("Leiden to convergence", "default", {"communities__n_iterations": -1}),
        ("2 Leiden iterations", "default", {"communities__n_iterations": 2}),
        ("the textbook's Leiden (leidenalg)", "default", {"communities": TextbookLeiden()}),
        *[(f"resolution {r}", "default", {"communities__resolution": r}) for r in RESOLUTIONS],
        (f"best of {BEST_OF} by modularity", "default", {"communities": BestOf()}),
    ]
    out += [(f"consensus {m}x{i}", "default", {"communities": Consensus(members=m, iters=i)})
            for m, i in CONSENSUS]  # fmt: skip
    return out


def clusterer(params: dict[str, Any], neighbours: dict[str, CachedNeighbours]) -> Any:
    """The default clusterer (its clusters only, :data:`CLUSTERS_ONLY`) with an
    alternative's steps; the neighbour step one of ``neighbours`` (``"snn"`` or the
    default's), each finding a matrix's graph once."""
    swapped = {**params, "neighbours": neighbours[params.get("neighbours", "default")]}
    return ActivityClusterer(**CLUSTERS_ONLY).set_params(**swapped)


def cached_neighbours() -> dict[str, CachedNeighbours]:
    """The default's neighbour step, the SNN one, those of other k and of other edge
    weights, each finding a matrix's graph once."""
    default = CachedNeighbours(KNeighbours())
    out: dict[str, Any] = {"default": default, "snn": CachedNeighbours(SNNNeighbours())}
    out.update({f"k{k}": CachedNeighbours(KNeighbours(n_neighbors=k)) for k in KS})
    out.update({f"cosine^{p}": EdgePower(default, p) for p in EDGE_POWERS})
    return out


def seeded(model: Any, seed: int) -> Any:
    """The clusterer with Leiden seed ``seed`` (its own community step's, or the
    default's through the clusterer's ``seed``)."""
    return model.set_params(communities__seed=seed)


def capped_counts(counts: Any, max_terms: int) -> Any:
    """Each document's ``max_terms`` most frequent terms only, as the extract stage stores
    a document's terms (:func:`extract.terms.top_terms`, ``[domain] max_terms``)."""
    from cluster.weighting import CountsBuilder
    from extract.terms import top_terms

    C = counts.counts.tocsr()
    docs = []
    for i in range(C.shape[0]):
        row = slice(C.indptr[i], C.indptr[i + 1])
        terms = {counts.terms[j]: int(n) for j, n in zip(C.indices[row], C.data[row], strict=True)}
        docs.append(top_terms(terms, max_terms))
    return CountsBuilder().add(docs).build()


def all_counts(texts: list[str], languages: list[str | None]) -> dict[str, Any]:
    """The term counts the alternatives cluster, by kind (``"textbook"``: the textbook's
    weighted matrix, clustered with the weighting step passed through)."""
    from bench.activity import tfidf

    default = ActivityClusterer.count_matrix(texts, languages)
    return {
        "default": default,
        "as stored": capped_counts(default, D.DOMAIN_MAX_TERMS),
        "no stop list": counts_without_stop_list(texts, languages),
        "unstemmed": counts_without_stemming(texts, languages),
        "stems and words": counts_without_stemming(texts, languages, terms="stems and words"),
        "light": counts_without_stemming(texts, languages, terms="light"),
        "digits": counts_without_stemming(texts, languages, terms="stemmed", digits=True),
        "textbook": tfidf(list(texts)),
    }


# --- the measurements ---------------------------------------------------------------------


def corpus_rows(name: str, limit: int | None = None) -> list[dict[str, Any]]:
    """Class F, the clusters' modularity by seed and Leiden seconds of every alternative
    on one corpus."""
    from cluster import score_clustering

    corpus = load_activity_corpus(name, limit=limit)
    counts = all_counts(corpus.texts, corpus.languages)
    neighbours = cached_neighbours()
    rows = []
    for label, kind, params in alternatives():
        model = clusterer(params, neighbours)
        scores, seconds, quality = [], [], []
        for seed in SEEDS:
            seeded(model, seed).fit(counts[kind])
            spent = model.graph_stats_["seconds"]
            seconds.append(spent["leiden"] + spent["reassign"])
            f = score_clustering(corpus.labels, model.labels_)["f_class"]
            scores.append(round(float(f), 4))
            clusters = [lv for lv in model.levels_ if lv.role == "clusters"]
            quality.append(round(float(clusters[0].quality), 4) if clusters else None)
        rows.append({"corpus": name, "method": label, "f_by_seed": scores,
                     "quality_by_seed": quality,
                     "seconds": round(float(np.mean(seconds)), 3)})  # fmt: skip
    return rows


def scale_rows(size: int = SCALE_DOCS) -> list[dict[str, Any]]:
    """Neighbour and Leiden seconds of every alternative on ``size`` Reuters stories
    (seed 1; each alternative finds its own graph)."""
    from bench.activity import reuters_scale

    texts, _labels = reuters_scale(size)
    counts = all_counts(texts, ["en"] * len(texts))
    rows = []
    for label, kind, params in alternatives():
        model = seeded(clusterer(params, cached_neighbours()), 1).fit(counts[kind])
        spent = model.graph_stats_["seconds"]
        rows.append({"method": label, "neighbours": round(spent["neighbours"], 3),
                     "leiden": round(spent["leiden"] + spent["reassign"], 3),
                     "edges": int(model.graph_stats_["edges"])})  # fmt: skip
    return rows


def textbook_by_seed() -> dict[str, list[float]]:
    """The textbook method's class F by seed per corpus, from ``activity.json``."""
    path = RESULTS / "activity.json"
    if not path.exists():
        return {}
    report = json.loads(path.read_text(encoding="utf-8"))
    return {
        r["corpus"]: r["f_class_by_seed"]
        for r in report.get("seed_rows", [])
        if r.get("method") == "anchor" and "error" not in r
    }


def goal_lines(rows: list[dict[str, Any]], textbook: dict[str, list[float]]) -> list[str]:
    """Issue 21's class F line per alternative: with seed 1, and on the means over seeds."""
    lines = []
    for label, _counts, _params in alternatives():
        mine = {r["corpus"]: r["f_by_seed"] for r in rows if r["method"] == label}
        both = [c for c in mine if c in textbook]
        seed1 = [c for c in both if mine[c][0] < textbook[c][0] - 0.005]
        means = [c for c in both if np.mean(mine[c]) < np.mean(textbook[c]) - 0.005]
        lines.append(
            f"- {label}: within 0.005 of the textbook with seed 1 on {len(both) - len(seed1)} "
            f"of {len(both)} corpora (short: {', '.join(seed1) or 'none'}); on the means "
            f"over seeds {SEEDS[0]}-{SEEDS[-1]} on {len(both) - len(means)} of {len(both)} "
            f"(short: {', '.join(means) or 'none'})"
        )
    return lines


def summary(rows: list[dict[str, Any]], scale: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per alternative, against the default: mean class F gain over the corpora (and on
    the web corpora), the spread over seeds and the seconds added at 20,000 stories."""
    base = {r["corpus"]: r for r in rows if r["method"] == "default"}
    timed = {s["method"]: s["neighbours"] + s["leiden"] for s in scale}
    out = []
    for label, _counts, _params in alternatives():
        mine = [r for r in rows if r["method"] == label and r["corpus"] in base]
        if not mine:
            continue
        gain = {
            r["corpus"]: float(np.mean(r["f_by_seed"]) - np.mean(base[r["corpus"]]["f_by_seed"]))
            for r in mine
        }
        web = [g for c, g in gain.items() if c in WEB_CORPORA]
        out.append({
            "method": label,
            "mean_gain": round(float(np.mean(list(gain.values()))), 4),
            "min_gain": round(min(gain.values()), 4),
            "losses": sorted(c for c, g in gain.items() if g < -LOSS),
            "max_gain": round(max(gain.values()), 4),
            "web_gain": round(float(np.mean(web)), 4) if web else None,
            "mean_sd": round(float(np.mean([np.std(r["f_by_seed"]) for r in mine])), 4),
            "extra_seconds": (round(timed[label] - timed["default"], 2)
                              if label in timed and "default" in timed else None),
        })  # fmt: skip
    return out


def pass_label(passes: int) -> str:
    """The alternative that reassigns ``passes`` times after Leiden."""
    return {0: "no reassignment", 1: "default"}.get(passes, f"reassign {passes} passes")


def choose_passes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Leave-one-corpus-out: per corpus, the passes (of :data:`PASSES`) with the best mean
    class F over seeds on the other corpora, its class F on the corpus, and the best
    passes on the corpus itself (the oracle)."""
    mean = {(r["corpus"], r["method"]): float(np.mean(r["f_by_seed"])) for r in rows}
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    if len(corpora) < 2 or not all((c, pass_label(p)) in mean for c in corpora for p in PASSES):
        return []  # leaving one corpus out needs another to choose on
    out = []
    for held in corpora:
        others = [c for c in corpora if c != held]
        chosen = max(PASSES, key=lambda p: np.mean([mean[c, pass_label(p)] for c in others]))
        oracle = max(PASSES, key=lambda p: mean[held, pass_label(p)])
        out.append({"corpus": held, "chosen": chosen, "f": round(mean[held, pass_label(chosen)], 4),
                    "oracle": oracle, "oracle_f": round(mean[held, pass_label(oracle)], 4),
                    "none_f": round(mean[held, pass_label(0)], 4)})  # fmt: skip
    return out


def choose_alternative(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Leave-one-corpus-out among the alternatives on the default's term counts: per corpus,
    the one with the best mean class F over seeds on the other corpora, its class F on
    the corpus and the default's there."""
    stored = {label for label, kind, _params in alternatives() if kind == "default"}
    mean = {(r["corpus"], r["method"]): float(np.mean(r["f_by_seed"]))
            for r in rows if r["method"] in stored}  # fmt: skip
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    labels = [label for label in stored if all((c, label) in mean for c in corpora)]
    if len(corpora) < 2 or "default" not in labels:
        return []
    out = []
    for held in corpora:
        others = [c for c in corpora if c != held]
        chosen = max(  # the default on a tie
            sorted(labels), key=lambda a: (np.mean([mean[c, a] for c in others]), a == "default")
        )
        out.append({"corpus": held, "chosen": chosen, "f": round(mean[held, chosen], 4),
                    "default_f": round(mean[held, "default"], 4)})  # fmt: skip
    return out


STEM_CHOICE = ("default", "unstemmed terms")
"""The two term kinds :func:`stem_choice` chooses between without labels."""


def stem_choice(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stemmed or unstemmed terms chosen without labels: per corpus and seed, the one
    whose clusters have the larger modularity (at resolution 1); the mean class F of the
    choice against each kind's."""
    by = {(r["corpus"], r["method"]): r for r in rows if r["method"] in STEM_CHOICE}
    out = []
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        stem, plain = (by.get((corpus, m)) for m in STEM_CHOICE)
        if (
            stem is None
            or plain is None
            or None in stem["quality_by_seed"] + plain["quality_by_seed"]
        ):
            continue
        picked = [
            fp if qp > qs else fs
            for fs, fp, qs, qp in zip(stem["f_by_seed"], plain["f_by_seed"],
                                      stem["quality_by_seed"], plain["quality_by_seed"],
                                      strict=True)
        ]  # fmt: skip
        out.append({
            "corpus": corpus,
            "stemmed": round(float(np.mean(stem["f_by_seed"])), 4),
            "unstemmed": round(float(np.mean(plain["f_by_seed"])), 4),
            "q_stemmed": round(float(np.mean(stem["quality_by_seed"])), 4),
            "q_unstemmed": round(float(np.mean(plain["quality_by_seed"])), 4),
            "chosen": round(float(np.mean(picked)), 4),
        })  # fmt: skip
    return out


def markdown(report: dict[str, Any]) -> str:
    textbook = report["textbook"]
    out = [
        "# Alternatives to the activity clustering's default (`bench/alternatives.py`)",
        "",
        f"{report['machine']}; {report['date']}; load averages (1, 5, 15 min) "
        f"{report['load_before']} before, {report['load_after']} after. Each alternative "
        "changes one thing of the default `ActivityClusterer()` (the module docstring says "
        "what); *Leiden s*: the mean seconds of its Leiden step and reassignment per seed.",
        "",
        "## Issue 21's class F line",
        "",
        *goal_lines(report["rows"], textbook),
        "",
        "## Against the default",
        "",
        "Mean over the corpora of the change in mean class F (seeds "
        f"{SEEDS[0]}-{SEEDS[-1]}), the same on the web corpora ({', '.join(WEB_CORPORA)}), "
        f"the mean standard deviation over seeds, and the seconds added at {SCALE_DOCS:,} "
        "Reuters stories (neighbour and Leiden steps).",
        "",
        "| alternative | mean change | min | max | web corpora | sd over seeds | "
        f"+ s at {SCALE_DOCS:,} | corpora losing more than {LOSS} |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in report["summary"]:
        web = "-" if s["web_gain"] is None else f"{s['web_gain']:+.4f}"
        extra = "-" if s["extra_seconds"] is None else f"{s['extra_seconds']:+.2f}"
        out.append(
            f"| {s['method']} | {s['mean_gain']:+.4f} | {s['min_gain']:+.4f} | "
            f"{s['max_gain']:+.4f} | {web} | {s['mean_sd']:.4f} | {extra} | "
            f"{', '.join(s.get('losses', [])) or 'none'} |"
        )
    out += [
        "",
        f"## Class F over Leiden seeds {SEEDS[0]}-{SEEDS[-1]}",
        "",
        "| corpus | alternative | mean | sd | seed 1 | min-max | Leiden s | textbook mean | "
        "textbook seed 1 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        f = r["f_by_seed"]
        ref = textbook.get(r["corpus"])
        ref_txt = f"{np.mean(ref):.4f} | {ref[0]:.4f}" if ref else "- | -"
        out.append(
            f"| {r['corpus']} | {r['method']} | {np.mean(f):.4f} | {np.std(f):.4f} | "
            f"{f[0]:.4f} | {min(f):.3f}-{max(f):.3f} | {r['seconds']:.3f} | {ref_txt} |"
        )
    if report.get("passes"):
        out += [
            "",
            "## Passes of reassignment, chosen leave-one-corpus-out",
            "",
            f"Per corpus: the passes (of {', '.join(map(str, PASSES))}) with the best mean "
            "class F over seeds on the other corpora, its class F here, Leiden's own "
            "(0 passes), and the best passes on this corpus (needs its labels).",
            "",
            "| corpus | chosen passes | class F | 0 passes | oracle passes | oracle class F |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        out += [f"| {r['corpus']} | {r['chosen']} | {r['f']:.4f} | {r['none_f']:.4f} | "
                f"{r['oracle']} | {r['oracle_f']:.4f} |" for r in report["passes"]]  # fmt: skip
    if report.get("chosen"):
        other_terms = ", ".join(f"*{label}*" for label, kind, _ in alternatives()
                                if kind != "default")  # fmt: skip
        out += [
            "",
            "## Every alternative on the default's terms, chosen leave-one-corpus-out",
            "",
            f"Per corpus: the alternative on the default's term counts (all but {other_terms}) "
            "with the best mean class F over seeds on the other corpora, its class F here and "
            "the default's.",
            "",
            "| corpus | chosen on the others | its class F | default's |",
            "|---|---|---:|---:|",
        ]
        out += [f"| {r['corpus']} | {r['chosen']} | {r['f']:.4f} | {r['default_f']:.4f} |"
                for r in report["chosen"]]  # fmt: skip
    if report.get("stem_choice"):
        out += [
            "",
            "## Stemmed or unstemmed terms, chosen by modularity",
            "",
            "Per corpus: the mean class F over seeds of the default's stemmed terms and of "
            "unstemmed terms, the mean modularity (resolution 1) of their clusters, and the "
            "class F when each seed takes the kind whose clusters have the larger modularity "
            "(no labels).",
            "",
            "| corpus | stemmed F | unstemmed F | stemmed modularity | unstemmed modularity "
            "| chosen by modularity F |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        out += [f"| {r['corpus']} | {r['stemmed']:.4f} | {r['unstemmed']:.4f} | "
                f"{r['q_stemmed']:.4f} | {r['q_unstemmed']:.4f} | {r['chosen']:.4f} |"
                for r in report["stem_choice"]]  # fmt: skip
    out += ["", f"## Seconds at {SCALE_DOCS:,} Reuters stories (seed 1)", ""]
    out += ["| alternative | edges | neighbours s | Leiden and reassignment s |",
            "|---|---:|---:|---:|"]  # fmt: skip
    out += [f"| {r['method']} | {r['edges']:,} | {r['neighbours']:.2f} | {r['leiden']:.2f} |"
            for r in report["scale"]]  # fmt: skip
    return "\n".join(out) + "\n"


SMOKE_ARGV = ["--smoke"]
"""The arguments of the smoke test (tests/bench): tiny data, a temporary folder."""
SMOKE_LIMIT, SMOKE_SCALE = 60, 300


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora", default=",".join(corpus_names(pooled=False)), help="comma-separated"
    )
    smoke = f"{SMOKE_LIMIT} websites, {SMOKE_SCALE} stories, a temporary folder"
    parser.add_argument("--smoke", action="store_true", help=smoke)
    args = parser.parse_args(argv)
    before = load_averages()
    rows: list[dict[str, Any]] = []
    corpora = ["websites"] if args.smoke else [c for c in args.corpora.split(",") if c]
    for name in corpora:
        rows += corpus_rows(name, SMOKE_LIMIT if args.smoke else None)
        means = [
            f"{r['method']} {np.mean(r['f_by_seed']):.4f}" for r in rows if r["corpus"] == name
        ]
        print(f"{name}: " + "; ".join(means), flush=True)
    scale = scale_rows(SMOKE_SCALE if args.smoke else SCALE_DOCS)
    report = {
        "machine": machine(),
        "date": run_date(),
        "load_before": before,
        "seeds": SEEDS,
        "rows": rows,
        "scale": scale,
        "summary": summary(rows, scale),
        "passes": choose_passes(rows),
        "chosen": choose_alternative(rows),
        "stem_choice": stem_choice(rows),
        "textbook": textbook_by_seed(),
        "load_after": load_averages(),
    }
    md = markdown(report)
    print(md)
    out = Path(tempfile.mkdtemp(prefix="alternatives-")) if args.smoke else RESULTS
    write_results(out / "alternatives", report, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
