"""The paper's finding as a computation: rank correlation of a university's groups with
its Webometrics rank.

Korelin, Blekanov and Sergeev (2015, seed ``000_d819228b9213e10a.txt``) set out to find
"the degree of influence of the number and sizes of these groups on the webometric
rating" and conclude that the larger the share of universities and scientific
communities around a university, the higher its Webometrics Impact. This module measures
that association on plain values, one *factor* against one *rank* over the universities:

- Spearman's ρ (:func:`scipy.stats.spearmanr`: Pearson's r of the average ranks, so ties
  are allowed) and Kendall's τ-b (:func:`scipy.stats.kendalltau`, tie-corrected);
- a two-sided p-value and a 95 % interval **of the same statistic, from the same
  approximation**, so that the interval excludes 0 exactly when p < 0.05:

  - from :data:`MIN_CONCLUSIVE` (10) universities on, Fisher's z: ``z = atanh(r)`` with
    the standard error of Bonett and Wright (2000) for ρ, ``sqrt((1 + ρ²/2) / (n - 3))``,
    and of Fieller, Hartley and Pearson (1957) for τ, ``sqrt(0.437 / (n - 4))``; the
    interval is ``tanh(z ± 1.96 SE)`` and the test ``2 (1 - Φ(|z| / SE))``;
  - below 10, the exact permutation test of the statistic (all n! pairings up to
    :data:`MAX_EXACT` universities, :func:`scipy.stats.permutation_test`; ``n_resamples``
    random pairings, seeded, above) and **no interval**: Fisher's z is accurate from about
    ten pairs (Bonett and Wright 2000), and a bootstrap of so few universities draws
    mostly repeated ones (on four universities it gave [0.775, 1.0] beside p = 0.5), so
    the cells stay blank and the note says why;
- ``n``, the universities that have both values, and a plain note: undefined (n < 3, or
  a factor or rank that is the same for every university: ρ and τ are then NaN), or too
  few to conclude (n < 10, the small-sample caveat, with the smallest p-value an exact
  test can reach, 2/n!: 0.083 with four universities, 5.5e-6 with the paper's nine);
- :func:`adjust_p`: p-values adjusted over every test of a family (Holm 1979, and
  Benjamini and Hochberg 1995): the report and the Rank page adjust over every factor x
  statistic x direction x rank tested in the run.

**The sign.** Rank 1 is the best. A *negative* ρ or τ therefore means that a *higher*
factor goes with a *better* (smaller) rank: the paper's conclusion predicts a negative
coefficient for the headline factor :data:`HEADLINE` (the share of universities plus
scientific communities). Every result says so in words (:attr:`Correlation.reading`).

Time: O(n log n) for ρ and O(n²) for τ with Fisher's z; the permutation test O(P n²)
with P = n! pairings (40,320 at n = 8) or ``n_resamples``, in batches of bounded memory.

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed ``000_d819228b9213e10a.txt``:
conclusion and the question of the influence of the groups on the rating.
D. G. Bonett, T. A. Wright, "Sample size requirements for estimating Pearson, Kendall and
Spearman correlations", *Psychometrika* 65 (2000) 23-28. E. C. Fieller, H. O. Hartley,
E. S. Pearson, "Tests for rank correlation coefficients. I", *Biometrika* 44 (1957).
S. Holm, "A simple sequentially rejective multiple test procedure", *Scand. J. Statist.*
6 (1979). Y. Benjamini, Y. Hochberg, "Controlling the false discovery rate", *JRSS B* 57
(1995). M. G. Kendall, "The treatment of ties in ranking problems", *Biometrika* 33
(1945) (τ-b).

Examples
--------
>>> shares = [0.45, 0.30, 0.20, 0.25, 0.10]
>>> ranks = [3, 16, 539, 100, 616]
>>> rho, tau = correlate(shares, ranks, factor="share_academic", n_resamples=999)
>>> round(rho.estimate, 2), round(tau.estimate, 2), rho.n
(-1.0, -1.0, 5)
>>> rho.reading
'ρ < 0: a higher share_academic goes with a better (smaller) rank'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: the paper's headline factor: the share of universities plus scientific communities
HEADLINE = "share_academic"
#: the paper's seven groups, each a share factor ``share_<category>``
PAPER_CATEGORIES: tuple[str, ...] = (
    "universities",
    "scientific_communities",
    "search_engines",
    "social_networks",
    "media",
    "news_portals",
    "other_organisations",
)
#: the factors of one university, in the order results are listed: the headline first,
#: then the number and total size of the clusters, then the share of each category
FACTORS: tuple[str, ...] = (
    HEADLINE,
    "n_clusters",
    "clustered_size",
    *(f"share_{c}" for c in PAPER_CATEGORIES),
)
#: the two statistics, as named in results
STATISTICS: tuple[str, ...] = ("spearman", "kendall")
#: below this many universities a result is too small to conclude from (the small-sample
#: caveat), its p-value is an exact permutation test and it has no interval; from it on,
#: Fisher's z gives both (accurate from about ten pairs: Bonett and Wright 2000)
MIN_CONCLUSIVE = 10
#: below this many universities ρ and τ are not computed
MIN_DEFINED = 3
#: up to this many universities the permutation test runs over all n! pairings, beyond it
#: over ``n_resamples`` random ones (seeded)
MAX_EXACT = 8
#: the p-value adjustments :func:`adjust_p` knows, as named in tables
ADJUSTMENTS: tuple[str, ...] = ("holm", "bh")
#: Fisher's z standard error times sqrt(n - 4) for Kendall's τ (Fieller et al. 1957)
_KENDALL_VARIANCE = 0.437
#: what the sign of a coefficient means, for tables and captions
SIGN_NOTE = (
    "rank 1 is the best: a negative ρ or τ means a higher factor goes with a better (smaller) rank"
)
_SYMBOL = {"spearman": "ρ", "kendall": "τ"}


@dataclass(frozen=True)
class Correlation:
    """One rank correlation of a factor with a rank over the universities.

    Attributes
    ----------
    factor : str
        The factor (e.g. ``share_academic``, ``n_clusters``).
    target : str
        What it is correlated with (``rank``: the Webometrics rank; ``impact_rank``).
    statistic : str
        ``spearman`` (ρ) or ``kendall`` (τ-b).
    n : int
        Universities that have both values.
    estimate : float
        ρ or τ; NaN when undefined (see ``note``).
    p_value : float
        Two-sided p-value (an exact permutation test below :data:`MIN_CONCLUSIVE`
        universities, Fisher's z from it on, see the module); NaN when undefined. Read it
        with ``low``, ``high``, ``n`` and, over many tests, its adjusted value
        (:func:`adjust_p`).
    low, high : float
        Fisher's z interval (``confidence``) of the same statistic and standard error as
        the test (it excludes 0 exactly when p < 1 - confidence); NaN when undefined or
        below :data:`MIN_CONCLUSIVE` universities (see ``note``).
    confidence : float
        The interval's level (0.95).
    reading : str
        The sign in words: which way a higher factor goes with the rank; empty when NaN.
    note : str
        Why the result is undefined or too small to conclude from; empty otherwise.
    """

    factor: str
    target: str
    statistic: str
    n: int
    estimate: float
    p_value: float
    low: float
    high: float
    confidence: float
    reading: str
    note: str

    @property
    def conclusive(self) -> bool:
        """``True`` when defined, ``n >= MIN_CONCLUSIVE`` and the interval excludes 0
        (before any adjustment for many tests)."""
        return (
            self.n >= MIN_CONCLUSIVE
            and not math.isnan(self.low)
            and not math.isnan(self.high)
            and (self.high < 0 or self.low > 0)
        )


def spearman_rho(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ along ``axis``: Pearson's r of the average ranks (ties allowed).

    Vectorised over the other axes (the permutation test's pairings); NaN where ``x`` or ``y``
    is constant. Equals :func:`scipy.stats.spearmanr` on one pair of vectors.

    Parameters
    ----------
    x, y : ndarray
        Paired values, the same shape.
    axis : int
        The axis of the universities.

    Returns
    -------
    ndarray
        ρ per slice.

    Examples
    --------
    >>> float(spearman_rho(np.array([1.0, 2.0, 2.0, 4.0]), np.array([4.0, 3.0, 1.0, 2.0])))
    -0.6324555320336759
    """
    from scipy.stats import rankdata

    rx = rankdata(x, axis=axis)
    ry = rankdata(y, axis=axis)
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=axis) / np.sqrt(
            (rx * rx).sum(axis=axis) * (ry * ry).sum(axis=axis)
        )


def kendall_tau_b(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Kendall's τ-b along ``axis``: (concordant − discordant pairs) over the square root
    of the pairs untied in ``x`` times those untied in ``y``.

    Vectorised over the other axes; NaN where ``x`` or ``y`` is constant. Equals
    :func:`scipy.stats.kendalltau` (``variant='b'``) on one pair of vectors. O(n²) per
    slice.

    Examples
    --------
    >>> float(kendall_tau_b(np.array([1.0, 2.0, 2.0, 4.0]), np.array([4.0, 3.0, 1.0, 2.0])))
    -0.5477225575051661
    """
    x = np.moveaxis(np.asarray(x, dtype=float), axis, -1)
    y = np.moveaxis(np.asarray(y, dtype=float), axis, -1)
    sx = np.sign(x[..., :, None] - x[..., None, :])
    sy = np.sign(y[..., :, None] - y[..., None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx * sy).sum(axis=(-2, -1)) / np.sqrt(
            (sx * sx).sum(axis=(-2, -1)) * (sy * sy).sum(axis=(-2, -1))
        )


_VECTORISED = {"spearman": spearman_rho, "kendall": kendall_tau_b}


def _reading(statistic: str, estimate: float, factor: str, target: str) -> str:
    if math.isnan(estimate):
        return ""
    sym = _SYMBOL[statistic]
    what = "rank" if target == "rank" else target.replace("_", " ")
    if estimate < 0:
        return f"{sym} < 0: a higher {factor} goes with a better (smaller) {what}"
    if estimate > 0:
        return f"{sym} > 0: a higher {factor} goes with a worse (larger) {what}"
    return f"{sym} = 0: no monotone association of {factor} with the {what}"


def fisher_z(
    estimate: float, n: int, statistic: str, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Fisher's z interval and two-sided test of a rank correlation, from the same
    standard error, so the interval excludes 0 exactly when ``p < 1 - confidence``.

    Parameters
    ----------
    estimate : float
        ρ or τ-b.
    n : int
        Pairs (at least 4 for ρ, 5 for τ).
    statistic : {"spearman", "kendall"}
        Which standard error: Bonett and Wright's (2000) ``sqrt((1 + ρ²/2) / (n - 3))``
        for ρ, Fieller, Hartley and Pearson's (1957) ``sqrt(0.437 / (n - 4))`` for τ.
    confidence : float

    Returns
    -------
    (low, high, p_value) : tuple of float

    Examples
    --------
    >>> low, high, p = fisher_z(0.5, 12, "spearman")
    >>> round(low, 3), round(high, 3), round(p, 4)
    (-0.143, 0.846, 0.1203)
    """
    from scipy.stats import norm

    if statistic == "spearman":
        se = math.sqrt((1 + estimate**2 / 2) / (n - 3))
    else:
        se = math.sqrt(_KENDALL_VARIANCE / (n - 4))
    # a perfect ρ or τ: z is infinite, the interval is the point ±1 and p = 0
    z = math.atanh(estimate) if abs(estimate) < 1 else math.copysign(math.inf, estimate)
    half = float(norm.ppf(0.5 + confidence / 2)) * se
    p_value = float(2 * norm.sf(abs(z) / se))
    return math.tanh(z - half), math.tanh(z + half), p_value


def permutation_p(
    x: np.ndarray, y: np.ndarray, statistic: str, *, n_resamples: int = 9999, seed: int = 0
) -> float:
    """Two-sided p-value of ρ or τ-b by permutation: over all n! pairings of ``x`` with
    ``y`` up to :data:`MAX_EXACT` values, over ``n_resamples`` random pairings (seeded)
    above (:func:`scipy.stats.permutation_test`). The t approximation of
    :func:`scipy.stats.spearmanr` gives p = 0 for a perfect ρ even with 4 universities.

    Examples
    --------
    >>> permutation_p(np.array([1.0, 2, 3, 4]), np.array([1.0, 2, 3, 4]), "spearman")
    0.08333333333333333
    """
    from scipy.stats import permutation_test

    func = _VECTORISED[statistic]
    n = len(x)
    exact = n <= MAX_EXACT
    res = permutation_test(
        (x,),  # one sample: only x is permuted, so n! pairings (two would permute both)
        lambda a, axis=-1: func(a, y, axis=axis),
        permutation_type="pairings",
        n_resamples=math.inf if exact else n_resamples,
        vectorized=True,
        batch=max(1, 2_000_000 // (n * n)),
        alternative="two-sided",
        rng=None if exact else np.random.default_rng(seed),
    )
    return float(res.pvalue)


def adjust_p(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """P-values adjusted for testing them all (a family), NaN ones left out of the family
    and kept NaN.

    Parameters
    ----------
    p_values : sequence of float
    method : {"holm", "bh"}
        ``holm``: Holm's (1979) step-down adjustment, which bounds the chance of any false
        positive in the family (valid whatever the dependence between the tests, as
        between ρ and τ of one factor); ``bh``: Benjamini and Hochberg's (1995) step-up
        adjustment (q-values), which bounds the expected share of false positives among
        the tests called significant.

    Returns
    -------
    list of float
        In the order of ``p_values``, each at most 1 and never below its raw p-value.

    Raises
    ------
    ValueError
        An unknown ``method``.

    Examples
    --------
    >>> adjust_p([0.01, 0.04, 0.03, 0.005])
    [0.03, 0.06, 0.06, 0.02]
    >>> [round(q, 4) for q in adjust_p([0.01, 0.04, 0.03, 0.005], "bh")]
    [0.02, 0.04, 0.04, 0.02]
    """
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown p-value adjustment {method!r}: use one of {ADJUSTMENTS}")
    index = [i for i, p in enumerate(p_values) if not math.isnan(p)]
    out = [math.nan] * len(p_values)
    m = len(index)
    order = sorted(index, key=lambda i: p_values[i])
    if method == "holm":
        running = 0.0
        for k, i in enumerate(order):
            running = max(running, min(1.0, (m - k) * p_values[i]))
            out[i] = running
    else:
        running = 1.0
        for k in range(m - 1, -1, -1):
            i = order[k]
            running = min(running, m * p_values[i] / (k + 1))
            out[i] = min(1.0, running)
    return out


def small_sample_note(n: int, *, exact: bool) -> str:
    """The small-sample caveat of a result over ``n < MIN_CONCLUSIVE`` universities, with
    its reason."""
    how = "all n! pairings" if exact else "random pairings"
    return (
        f"n = {n} < {MIN_CONCLUSIVE}: too few universities to conclude: one university "
        f"more or less can change the sign; p is an exact permutation test ({how}), the "
        f"smallest it can be is 2/n! = {2 / math.factorial(n):.2g}; no interval (Fisher's z "
        f"needs about {MIN_CONCLUSIVE}, a bootstrap of {n} draws mostly repeated universities)"
    )


def correlate(
    values: Sequence[float | None],
    ranks: Sequence[float | None],
    *,
    factor: str = "factor",
    target: str = "rank",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> tuple[Correlation, Correlation]:
    """Spearman's ρ and Kendall's τ-b of a factor with a rank, with n, p-value and an
    interval consistent with it (see the module).

    Parameters
    ----------
    values : sequence of float or None
        The factor per university.
    ranks : sequence of float or None
        The rank per university (1 is the best), in the same order. A university missing
        either value (``None`` or NaN) is left out.
    factor, target : str
        Names carried into the results.
    confidence : float
        The interval's level.
    n_resamples : int
        Random pairings of the permutation test above :data:`MAX_EXACT` universities
        (and below :data:`MIN_CONCLUSIVE`).
    seed : int
        Seed of those pairings: the same data give the same p-value.

    Returns
    -------
    (Correlation, Correlation)
        Spearman's, then Kendall's. Undefined (n < 3, or a constant factor or rank):
        NaN estimate, p-value and interval, and a note saying why. Below
        :data:`MIN_CONCLUSIVE` universities: an exact permutation p-value, a NaN interval
        and the small-sample note.

    Raises
    ------
    ValueError
        ``values`` and ``ranks`` differ in length, or ``confidence`` is not in (0, 1).

    Examples
    --------
    >>> rho, tau = correlate([1, 1, 1], [1, 2, 3], factor="n_clusters")
    >>> rho.estimate, rho.note
    (nan, 'n_clusters is the same (1) for all 3 universities: ρ is undefined')
    """
    from scipy.stats import kendalltau, spearmanr

    if len(values) != len(ranks):
        raise ValueError(f"{len(values)} values but {len(ranks)} ranks: give one of each")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    pairs = [
        (float(v), float(r))
        for v, r in zip(values, ranks, strict=True)
        if v is not None and r is not None and not math.isnan(v) and not math.isnan(r)
    ]
    n = len(pairs)
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs])

    def undefined(statistic: str, note: str) -> Correlation:
        nan = math.nan
        return Correlation(factor, target, statistic, n, nan, nan, nan, nan, confidence, "", note)

    out = []
    for statistic in STATISTICS:
        sym = _SYMBOL[statistic]
        if n < MIN_DEFINED:
            out.append(
                undefined(
                    statistic,
                    f"n = {n}: at least {MIN_DEFINED} universities with both {factor} and "
                    f"{target} are needed; {sym} is undefined",
                )
            )
            continue
        if np.all(x == x[0]):
            out.append(
                undefined(
                    statistic,
                    f"{factor} is the same ({x[0]:g}) for all {n} universities: {sym} is undefined",
                )
            )
            continue
        if np.all(y == y[0]):
            out.append(
                undefined(
                    statistic,
                    f"{target} is the same ({y[0]:g}) for all {n} universities: {sym} is undefined",
                )
            )
            continue
        test = spearmanr(x, y) if statistic == "spearman" else kendalltau(x, y)
        estimate = float(test.statistic)
        notes = []
        if n < MIN_CONCLUSIVE:
            p_value = permutation_p(x, y, statistic, n_resamples=n_resamples, seed=seed)
            low = high = math.nan
            notes.append(small_sample_note(n, exact=n <= MAX_EXACT))
        else:
            low, high, p_value = fisher_z(estimate, n, statistic, confidence)
            if low <= 0 <= high:
                notes.append(f"the {round(100 * confidence)} % interval includes 0")
        out.append(
            Correlation(
                factor,
                target,
                statistic,
                n,
                estimate,
                p_value,
                low,
                high,
                confidence,
                _reading(statistic, estimate, factor, target),
                "; ".join(notes),
            )
        )
    return out[0], out[1]


def correlate_factors(
    factors: Mapping[str, Sequence[float | None]],
    ranks: Sequence[float | None],
    *,
    target: str = "rank",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> list[Correlation]:
    """:func:`correlate` for each factor against the same ranks.

    Parameters
    ----------
    factors : mapping of str to sequence
        Factor name -> its value per university (same order as ``ranks``).
    ranks : sequence
        The rank per university.
    target, confidence, n_resamples, seed
        As in :func:`correlate` (the same seed for every factor).

    Returns
    -------
    list of Correlation
        Two per factor (Spearman, Kendall), in the order of ``factors``.

    Examples
    --------
    >>> rows = correlate_factors({"a": [1, 2, 3, 4], "b": [4, 3, 2, 1]}, [1, 2, 3, 4],
    ...                          n_resamples=99)
    >>> [(c.factor, c.statistic, round(c.estimate, 1)) for c in rows]
    [('a', 'spearman', 1.0), ('a', 'kendall', 1.0), ('b', 'spearman', -1.0), ('b', 'kendall', -1.0)]
    """
    out: list[Correlation] = []
    for name, values in factors.items():
        out += correlate(
            values,
            ranks,
            factor=name,
            target=target,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
    return out
