"""The paper's finding as a computation: rank correlation of a university's groups with
its Webometrics rank.

Korelin, Blekanov and Sergeev (2015, seed ``000_d819228b9213e10a.txt``) set out to find
"the degree of influence of the number and sizes of these groups on the webometric
rating" and conclude that the larger the share of universities and scientific
communities around a university, the higher its Webometrics Impact. This module measures
that association on plain values, one *factor* against one *rank* over the universities:

- Spearman's ρ (:func:`scipy.stats.spearmanr`: Pearson's r of the average ranks, so ties
  are allowed) and Kendall's τ-b (:func:`scipy.stats.kendalltau`, tie-corrected), each
  with its two-sided p-value (Spearman's exact over all n! pairings up to
  :data:`MAX_EXACT` universities, :func:`scipy.stats.permutation_test`; Kendall's exact
  for small n without ties, as scipy computes it);
- a bootstrap 95 % interval (:func:`scipy.stats.bootstrap`, percentile method, paired
  resampling of the universities, a fixed seed, so the same data give the same interval);
- ``n``, the universities that have both values, and a plain note: undefined (n < 3, or
  a factor or rank that is the same for every university: ρ and τ are then NaN), or too
  few to conclude (n < 5). A p-value is never given without its interval and ``n``.

**The sign.** Rank 1 is the best. A *negative* ρ or τ therefore means that a *higher*
factor goes with a *better* (smaller) rank: the paper's conclusion predicts a negative
coefficient for the headline factor :data:`HEADLINE` (the share of universities plus
scientific communities). Every result says so in words (:attr:`Correlation.reading`).

Time: O(B n log n) for Spearman and O(B n²) for Kendall with B bootstrap resamples and
n universities (the resamples are ranked in batches of bounded memory: O(batch · n²)).

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed ``000_d819228b9213e10a.txt``:
conclusion and the question of the influence of the groups on the rating.
B. Efron, R. Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 13 (percentile
interval). M. G. Kendall, "The treatment of ties in ranking problems", *Biometrika* 33
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
import warnings
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
#: below this many universities a result is marked as too small to conclude from
MIN_CONCLUSIVE = 5
#: below this many universities ρ and τ are not computed
MIN_DEFINED = 3
#: up to this many universities Spearman's p-value is exact (all n! pairings), beyond it
#: scipy's t approximation
MAX_EXACT = 8
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
        Two-sided p-value (exact for few universities, see the module); NaN when undefined.
        Read it with ``low``, ``high`` and ``n``.
    low, high : float
        The bootstrap interval (``confidence``); NaN when undefined.
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
        """``True`` when defined, ``n >= MIN_CONCLUSIVE`` and the interval excludes 0."""
        return (
            self.n >= MIN_CONCLUSIVE
            and not math.isnan(self.low)
            and not math.isnan(self.high)
            and (self.high < 0 or self.low > 0)
        )


def spearman_rho(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ along ``axis``: Pearson's r of the average ranks (ties allowed).

    Vectorised over the other axes (the bootstrap's resamples); NaN where ``x`` or ``y``
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


def _interval(
    x: np.ndarray, y: np.ndarray, statistic: str, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float, int]:
    """The bootstrap percentile interval, and how many resamples were left out (a
    resample in which the factor or the rank is constant has no ρ or τ)."""
    from scipy.stats import bootstrap

    func = _VECTORISED[statistic]
    n = len(x)
    batch = max(1, 4_000_000 // (n * n)) if statistic == "kendall" else None
    with warnings.catch_warnings():
        # degenerate resamples (NaN) make scipy warn; they are counted and left out below
        warnings.simplefilter("ignore")
        res = bootstrap(
            (x, y),
            func,
            n_resamples=n_resamples,
            batch=batch,
            vectorized=True,
            paired=True,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    dist = np.asarray(res.bootstrap_distribution, dtype=float)
    finite = dist[np.isfinite(dist)]
    left_out = int(dist.size - finite.size)
    if finite.size == 0:
        return math.nan, math.nan, left_out
    if left_out == 0:
        return float(res.confidence_interval.low), float(res.confidence_interval.high), 0
    alpha = (1 - confidence) / 2
    low, high = np.percentile(finite, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high), left_out


def _exact_spearman_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p-value of Spearman's ρ over all n! pairings of ``x`` with ``y``
    (:func:`scipy.stats.permutation_test`); the t approximation of
    :func:`scipy.stats.spearmanr` gives p = 0 for a perfect ρ even with 4 universities."""
    from scipy.stats import permutation_test

    # one sample: only x is permuted, so n! pairings (two samples would permute both)
    res = permutation_test(
        (x,),
        lambda a, axis=-1: spearman_rho(a, y, axis=axis),
        permutation_type="pairings",
        n_resamples=math.inf,
        vectorized=True,
        alternative="two-sided",
    )
    return float(res.pvalue)


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
    """Spearman's ρ and Kendall's τ-b of a factor with a rank, with n, p-value and a
    bootstrap interval.

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
        Bootstrap resamples (universities drawn with replacement, factor and rank kept
        together).
    seed : int
        Seed of the resampling: the same data give the same interval.

    Returns
    -------
    (Correlation, Correlation)
        Spearman's, then Kendall's. Undefined (n < 3, or a constant factor or rank):
        NaN estimate, p-value and interval, and a note saying why.

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
        estimate, p_value = float(test.statistic), float(test.pvalue)
        if statistic == "spearman" and n <= MAX_EXACT:
            p_value = _exact_spearman_p(x, y)
        low, high, left_out = _interval(x, y, statistic, confidence, n_resamples, seed)
        notes = []
        if n < MIN_CONCLUSIVE:
            notes.append(
                f"n = {n} is too small to conclude (fewer than {MIN_CONCLUSIVE} universities): "
                "with so few the bootstrap interval is unreliable too"
            )
        elif not (math.isnan(low) or math.isnan(high)) and low <= 0 <= high:
            notes.append(f"the {round(100 * confidence)} % interval includes 0")
        if left_out:
            notes.append(
                f"{left_out} of {n_resamples} resamples had a constant {factor} or {target} "
                f"(no {sym}) and are left out of the interval"
            )
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
