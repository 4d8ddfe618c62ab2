"""A calibrated text classifier of a site's category: tf-idf of stemmed terms, a
multinomial logistic regression, bias-corrected temperature scaling.

A site (a registered domain) is read as the merged term counts of its fetched pages
(:func:`site_terms`: :class:`extract.terms.TermCounter` without a language, so English
and Russian words are each stop-listed and Snowball-stemmed by their script). The counts
are weighted ``(1 + log tf) · idf`` (smooth idf over the training sites, terms of fewer
than ``min_df`` sites dropped) and L2-normalised; a one-vs-rest linear support vector machine (or a
multinomial logistic regression, ``linear``; ``C``, classes weighted inversely to their
size) gives each category a score
``z = x·W + b``, and the probabilities are ``softmax(z / T + β)``: the temperature ``T``
and the class biases ``β`` (bias-corrected temperature scaling, Alexandari et al. 2020)
minimise the log loss of *out-of-fold* scores, a group k-fold by site of the training
data (``calibration_folds``), so the reported probability of a category is how often
such a site is of that category, not how sure an over-fitted model is.
:func:`calibration_scores` measures it (Brier score, expected calibration error).

The fitted model is a few arrays (vocabulary, idf, weights, T, β) and its provenance
(training sets, counts, date): :meth:`TextCategoryModel.save` writes them to one
``.npz`` file without pickled code and :func:`load_model` reads it back, checking
:data:`FORMAT_VERSION`.

Complexity: fitting is O(N·t·K·I) for N sites of t distinct terms, K categories and I
L-BFGS iterations, done ``calibration_folds + 1`` times; predicting is O(t·K) a site.
Memory: the weights, O(V·K) for V terms.

References
----------
A. Alexandari, A. Kundaje, A. Shrikumar (2020), *Maximum likelihood with bias-corrected
calibration is hard-to-beat at label shift adaptation*, ICML.
C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger (2017), *On calibration of modern neural
networks*, ICML (temperature scaling, ECE).
G. W. Brier (1950), *Verification of forecasts expressed in terms of probability*.

Examples
--------
>>> docs = site_terms([["University faculty and students, courses"],
...                    ["Breaking news: the minister said today"],
...                    ["Университет: факультет, студенты, кафедра"],
...                    ["Новости дня: министр сообщил сегодня"]] * 3)
>>> y = ["universities", "news_portals"] * 6
>>> m = TextCategoryModel(min_df=1, calibration_folds=2).fit(docs, y)
>>> m.classes_
('news_portals', 'universities')
>>> m.predict(site_terms([["студенты и факультет университета"]]))
['universities']
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from extract.terms import TermCounter

__all__ = [
    "FORMAT_VERSION",
    "TextCategoryModel",
    "calibration_scores",
    "load_model",
    "site_terms",
]

FORMAT_VERSION = 1
"""The version of the saved file's layout; :func:`load_model` refuses another."""

MAX_CHARS = 100_000
"""Characters of one page read by :func:`site_terms`."""


def site_terms(
    sites: Sequence[Sequence[str]], *, max_chars: int = MAX_CHARS
) -> list[dict[str, int]]:
    """The merged term counts of each site's page texts.

    Parameters
    ----------
    sites : sequence of sequence of str
        The texts (titles, pages) of each site.
    max_chars : int, default :data:`MAX_CHARS`
        Characters read from each text.

    Returns
    -------
    list of dict of str to int

    Examples
    --------
    >>> site_terms([["Running dogs", "dogs"], []])
    [{'run': 1, 'dog': 2}, {}]
    """
    flat = [t[:max_chars] for texts in sites for t in texts]
    counted = TermCounter(language=None).counts_of(flat)
    out: list[dict[str, int]] = []
    at = 0
    for texts in sites:
        merged: Counter[str] = Counter()
        for c in counted[at : at + len(texts)]:
            merged.update(c)
        at += len(texts)
        out.append(dict(merged))
    return out


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def _fit_scaling(scores: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Temperature and class biases minimising the log loss of ``softmax(z / T + β)``."""
    from scipy.optimize import minimize

    n, k = scores.shape
    onehot = np.zeros((n, k))
    onehot[np.arange(n), y] = 1.0

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        inv_t, beta = math.exp(params[0]), params[1:]
        z = scores * inv_t + beta
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        p = np.exp(logp)
        g = (p - onehot) / n  # d loss / d z
        grad = np.concatenate([[float((g * scores).sum()) * inv_t], g.sum(axis=0)])
        return float(-(onehot * logp).sum() / n), grad

    res = minimize(loss, np.zeros(k + 1), jac=True, method="L-BFGS-B")
    beta = res.x[1:] - res.x[1:].mean()
    return float(math.exp(-res.x[0])), beta


class TextCategoryModel:
    """The category of a site from the terms of its pages, with calibrated probabilities.

    Parameters
    ----------
    C : float, default 1.0
        Inverse regularisation strength of the linear model.
    min_df : int, default 2
        A term must occur in at least this many training sites.
    max_features : int, optional
        Keep the most frequent terms (by number of sites) only.
    calibration_folds : int, default 5
        Group k-fold (by site) of the out-of-fold scores the calibration is fitted on;
        fewer sites or a category in fewer sites than this lowers it (2 at least);
        0 leaves the model uncalibrated (``T = 1, β = 0``).
    max_iter : int, default 1000
        Iterations of the linear model's solver.
    linear : {"svm", "logistic"}, default "svm"
        The linear model: a multinomial logistic regression, or a one-vs-rest linear
        support vector machine (scikit-learn's ``LinearSVC``, squared hinge loss; about 6
        times faster to fit). Either's scores are calibrated the same way.

    Attributes
    ----------
    classes_ : tuple of str
        The categories, sorted.
    vocabulary_ : dict of str to int
        Term -> column.
    idf_ : ndarray of shape (n_terms,)
    coef_ : ndarray of shape (n_classes, n_terms)
    intercept_ : ndarray of shape (n_classes,)
    temperature_ : float
    bias_ : ndarray of shape (n_classes,)
    provenance_ : dict
        What it learnt from: ``trained_at`` (UTC, ISO 8601), ``samples`` and ``sites``
        per category, ``sources`` (given to :meth:`fit`), ``params``, ``calibration``
        (its folds and the out-of-fold log loss before and after).
    """

    def __init__(
        self,
        *,
        C: float = 1.0,
        min_df: int = 2,
        max_features: int | None = None,
        calibration_folds: int = 5,
        max_iter: int = 1000,
        linear: str = "svm",
    ) -> None:
        self.C = C
        self.min_df = min_df
        self.max_features = max_features
        self.calibration_folds = calibration_folds
        self.max_iter = max_iter
        self.linear = linear

    def get_params(self) -> dict[str, Any]:
        """The constructor's parameters."""
        return {
            "C": self.C,
            "min_df": self.min_df,
            "max_features": self.max_features,
            "calibration_folds": self.calibration_folds,
            "max_iter": self.max_iter,
            "linear": self.linear,
        }

    # --- features ---------------------------------------------------------------------

    def _vocabulary(self, docs: Sequence[Mapping[str, int]]) -> tuple[dict[str, int], np.ndarray]:
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        terms = sorted(t for t, n in df.items() if n >= self.min_df)
        if self.max_features is not None and len(terms) > self.max_features:
            terms = sorted(sorted(terms, key=lambda t: (-df[t], t))[: self.max_features])
        n = len(docs)
        idf = np.array([math.log((1 + n) / (1 + df[t])) + 1.0 for t in terms])
        return {t: i for i, t in enumerate(terms)}, idf

    @staticmethod
    def _matrix(
        docs: Sequence[Mapping[str, int]], vocabulary: Mapping[str, int], idf: np.ndarray
    ) -> sp.csr_matrix:
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for r, d in enumerate(docs):
            for term, count in d.items():
                c = vocabulary.get(term)
                if c is not None and count > 0:
                    rows.append(r)
                    cols.append(c)
                    vals.append((1.0 + math.log(count)) * idf[c])
        x = sp.csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocabulary)))
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ x)

    def transform(self, docs: Sequence[Mapping[str, int]]) -> sp.csr_matrix:
        """The L2-normalised tf-idf rows of term counts (terms outside the vocabulary
        dropped)."""
        self._check_fitted()
        return self._matrix(docs, self.vocabulary_, self.idf_)

    # --- fitting ----------------------------------------------------------------------

    def _regression(self, x: sp.csr_matrix, y: np.ndarray) -> Any:
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC
        from threadpoolctl import threadpool_limits

        # one thread: BLAS threads on a shared machine made a fit 5 times slower
        with threadpool_limits(1):
            if self.linear == "svm":
                # liblinear visits the samples in a random order: seeded, so that a model
                # trained twice on the same sites is the same (random_state=None drew from
                # numpy's global state, and the category scores moved from run to run)
                return LinearSVC(
                    C=self.C, class_weight="balanced", max_iter=self.max_iter, random_state=0
                ).fit(x, y)
            return LogisticRegression(
                C=self.C, class_weight="balanced", max_iter=self.max_iter, solver="lbfgs"
            ).fit(x, y)

    def _folds(self, y: np.ndarray, groups: np.ndarray) -> int:
        if self.calibration_folds == 0:
            return 0
        sites_per_class = [len(set(groups[y == k])) for k in np.unique(y)]
        return max(0, min(self.calibration_folds, len(set(groups)), *sites_per_class))

    def _out_of_fold(
        self, docs: Sequence[Mapping[str, int]], y: np.ndarray, groups: np.ndarray, folds: int
    ) -> np.ndarray:
        from sklearn.model_selection import StratifiedGroupKFold

        k = len(self.classes_)
        scores = np.zeros((len(docs), k))
        split = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=0)
        for train, test in split.split(np.zeros(len(y)), y, groups):
            vocab, idf = self._vocabulary([docs[i] for i in train])
            reg = self._regression(self._matrix([docs[i] for i in train], vocab, idf), y[train])
            z = np.full((len(test), k), -1e3)  # a class missing from the fold: never chosen
            d = reg.decision_function(self._matrix([docs[i] for i in test], vocab, idf))
            z[:, reg.classes_] = np.column_stack([-d / 2, d / 2]) if d.ndim == 1 else d
            scores[test] = z
        return scores

    def fit(
        self,
        docs: Sequence[Mapping[str, int]],
        y: Sequence[str],
        groups: Sequence[str] | None = None,
        *,
        sources: Mapping[str, Any] | None = None,
    ) -> TextCategoryModel:
        """Learn the categories from term counts of sites.

        Parameters
        ----------
        docs : sequence of mapping of str to int
            Term counts of each training sample (:func:`site_terms`).
        y : sequence of str
            Category of each sample.
        groups : sequence of str, optional
            Site of each sample: the calibration's folds keep a site's samples together
            (default: each sample its own site).
        sources : mapping, optional
            What the samples are (corpora, database), stored in ``provenance_``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Invalid parameters, lengths that differ, fewer than two categories, or no
            term left after ``min_df``.
        """
        if self.C <= 0 or self.min_df < 1 or self.calibration_folds < 0 or self.max_iter < 1:
            raise ValueError(
                f"C must be > 0, min_df >= 1, calibration_folds >= 0, max_iter >= 1; got "
                f"{self.get_params()}"
            )
        if self.linear not in ("logistic", "svm"):
            raise ValueError(f"linear must be 'logistic' or 'svm', got {self.linear!r}")
        if self.max_features is not None and self.max_features < 1:
            raise ValueError(f"max_features must be at least 1 or None, got {self.max_features}")
        if len(docs) != len(y) or (groups is not None and len(groups) != len(y)):
            raise ValueError(
                f"{len(docs)} documents, {len(y)} labels"
                + (f", {len(groups)} groups" if groups is not None else "")
                + ": give one label (and one site) per document"
            )
        classes = tuple(sorted(set(y)))
        if len(classes) < 2:
            raise ValueError(
                f"the training samples have {len(classes)} category ({', '.join(classes)}): "
                "a text model needs labelled texts of two categories at least"
            )
        self.classes_ = classes
        yi = np.array([classes.index(c) for c in y])
        g = np.array(groups if groups is not None else [str(i) for i in range(len(y))])
        self.vocabulary_, self.idf_ = self._vocabulary(docs)
        if not self.vocabulary_:
            raise ValueError(
                f"no term occurs in {self.min_df} training sites: give more texts or lower min_df"
            )
        reg = self._regression(self._matrix(docs, self.vocabulary_, self.idf_), yi)
        coef = reg.coef_ if len(classes) > 2 else np.vstack([-reg.coef_[0], reg.coef_[0]]) / 2
        inter = (
            reg.intercept_
            if len(classes) > 2
            else np.array([-reg.intercept_[0], reg.intercept_[0]]) / 2
        )
        self.coef_, self.intercept_ = np.asarray(coef, float), np.asarray(inter, float)
        folds = self._folds(yi, g)
        calibration: dict[str, Any] = {"folds": folds}
        self.temperature_, self.bias_ = 1.0, np.zeros(len(classes))
        if folds >= 2:
            oof = self._out_of_fold(docs, yi, g, folds)
            before = _log_loss(_softmax(oof), yi)
            self.temperature_, self.bias_ = _fit_scaling(oof, yi)
            after = _log_loss(_softmax(oof / self.temperature_ + self.bias_), yi)
            calibration.update(log_loss_before=round(before, 4), log_loss_after=round(after, 4))
        per_class = Counter(y)
        sites: dict[str, set[str]] = {c: set() for c in classes}
        for c, site in zip(y, g, strict=True):
            sites[c].add(str(site))
        self.provenance_ = {
            "trained_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "samples": {c: per_class[c] for c in classes},
            "sites": {c: len(sites[c]) for c in classes},
            "terms": len(self.vocabulary_),
            "sources": dict(sources or {}),
            "params": self.get_params(),
            "calibration": calibration,
        }
        return self

    # --- prediction -------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise ValueError("this TextCategoryModel is not fitted: call fit() or load_model()")

    def decision_function(self, docs: Sequence[Mapping[str, int]]) -> np.ndarray:
        """The uncalibrated scores ``x·W + b`` of each category (columns: ``classes_``)."""
        x = self.transform(docs)
        return np.asarray(x @ self.coef_.T + self.intercept_)

    def predict_proba(self, docs: Sequence[Mapping[str, int]]) -> np.ndarray:
        """Calibrated probabilities of the categories (columns: ``classes_``).

        A site without any known term gets the calibrated prior ``softmax(b / T + β)``.
        """
        return _softmax(self.decision_function(docs) / self.temperature_ + self.bias_)

    def predict(self, docs: Sequence[Mapping[str, int]]) -> list[str]:
        """The most probable category of each site."""
        return [self.classes_[i] for i in self.predict_proba(docs).argmax(axis=1)]

    def known_terms(self, doc: Mapping[str, int]) -> int:
        """How many distinct terms of ``doc`` the model knows (0: it cannot read it)."""
        self._check_fitted()
        return sum(1 for t in doc if t in self.vocabulary_)

    def top_terms(self, doc: Mapping[str, int], category: str, n: int = 8) -> list[str]:
        """The terms of ``doc`` that weigh most for ``category``: the text's evidence."""
        self._check_fitted()
        k = self.classes_.index(category)
        weighed = [
            (float(self.coef_[k, c]) * (1.0 + math.log(cnt)) * float(self.idf_[c]), t)
            for t, cnt in doc.items()
            if (c := self.vocabulary_.get(t)) is not None and cnt > 0
        ]
        return [t for w, t in sorted(weighed, reverse=True)[:n] if w > 0]

    # --- files ------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the fitted model to ``path`` (an ``.npz`` file: arrays and JSON, no
        pickle); returns the path written."""
        self._check_fitted()
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        terms = sorted(self.vocabulary_, key=self.vocabulary_.__getitem__)
        meta = {
            "format_version": FORMAT_VERSION,
            "classes": list(self.classes_),
            "params": self.get_params(),
            "temperature": self.temperature_,
            "provenance": self.provenance_,
        }
        tmp = p.with_name(p.name + ".tmp.npz")
        with tmp.open("wb") as fh:
            np.savez_compressed(
                fh,
                meta=np.array(json.dumps(meta, ensure_ascii=False)),
                terms=np.array(terms, dtype=np.str_),
                idf=self.idf_,
                coef=self.coef_,
                intercept=self.intercept_,
                bias=self.bias_,
            )
        tmp.replace(p)
        return p


def load_model(path: str | Path) -> TextCategoryModel:
    """Read a model written by :meth:`TextCategoryModel.save`.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Not a model file, or one of another :data:`FORMAT_VERSION`.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(
            f"no text model at {p}: train one with `webometrics category train`"
        )
    try:
        with np.load(p, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            arrays = {k: z[k] for k in ("terms", "idf", "coef", "intercept", "bias")}
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"{p} is not a text model file ({exc}): train it again") from exc
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{p} is a text model of format {meta.get('format_version')}, this program reads "
            f"format {FORMAT_VERSION}: train it again with `webometrics category train`"
        )
    m = TextCategoryModel(**meta["params"])
    m.classes_ = tuple(meta["classes"])
    m.vocabulary_ = {str(t): i for i, t in enumerate(arrays["terms"])}
    m.idf_, m.coef_, m.intercept_ = arrays["idf"], arrays["coef"], arrays["intercept"]
    m.temperature_, m.bias_ = float(meta["temperature"]), arrays["bias"]
    m.provenance_ = meta["provenance"]
    return m


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-12, 1.0))))


def calibration_scores(
    proba: np.ndarray, y: Sequence[int] | np.ndarray, *, bins: int = 10
) -> dict[str, float]:
    """Brier score, expected calibration error and log loss of probabilities.

    Parameters
    ----------
    proba : ndarray of shape (n, k)
        Each row a distribution over the classes.
    y : sequence of int
        The true class's column of each row.
    bins : int, default 10
        Equal-width bins of the top probability (ECE).

    Returns
    -------
    dict
        ``brier`` (mean squared distance to the one-hot truth, summed over classes: 0
        best, 2 worst), ``ece`` (the mean over rows of |accuracy - confidence| of their
        bin of top probability, Guo et al. 2017), ``log_loss``, ``accuracy``.

    Examples
    --------
    >>> s = calibration_scores(np.array([[0.9, 0.1], [0.2, 0.8]]), [0, 0])
    >>> s["brier"], s["accuracy"]
    (0.65, 0.5)
    """
    p = np.asarray(proba, float)
    yy = np.asarray(y, int)
    n = len(yy)
    onehot = np.zeros_like(p)
    onehot[np.arange(n), yy] = 1.0
    top = p.max(axis=1)
    right = (p.argmax(axis=1) == yy).astype(float)
    which = np.minimum((top * bins).astype(int), bins - 1)
    ece = sum(
        abs(right[which == b].mean() - top[which == b].mean()) * (which == b).sum()
        for b in range(bins)
        if (which == b).any()
    )
    return {
        "brier": round(float(((p - onehot) ** 2).sum(axis=1).mean()), 4),
        "ece": round(float(ece / n), 4),
        "log_loss": round(_log_loss(p, yy), 4),
        "accuracy": round(float(right.mean()), 4),
    }
