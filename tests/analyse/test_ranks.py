"""Rank correlations of a university's groups with its rank (analyse.ranks): hand-computed
values, scipy on known data, the bootstrap interval, and the undefined and small cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from analyse.ranks import (
    FACTORS,
    HEADLINE,
    MIN_CONCLUSIVE,
    correlate,
    correlate_factors,
    kendall_tau_b,
    spearman_rho,
)

# the paper's nine universities with the ranks of its Table 2 (examples/universities.toml)
# and a share of universities + scientific communities per university, made up
PAPER_RANKS = [539, 616, 188, 1, 3, 2, 6, 7, 17]
SHARES = [0.21, 0.18, 0.24, 0.41, 0.33, 0.38, 0.29, 0.35, 0.30]


def test_spearman_by_hand_with_ties() -> None:
    # ranks of x: 1, 2.5, 2.5, 4; of y: 4, 3, 1, 2; centred: (-1.5, 0, 0, 1.5) and
    # (1.5, 0.5, -1.5, -0.5): sum of products -3, sums of squares 4.5 and 5
    rho, _tau = correlate([1, 2, 2, 4], [4, 3, 1, 2], n_resamples=99)
    assert rho.estimate == pytest.approx(-3 / math.sqrt(4.5 * 5))
    assert rho.n == 4


def test_kendall_by_hand_with_ties() -> None:
    # pairs: 1 concordant, 4 discordant, 1 tied in x: (1 - 4) / sqrt((6 - 1) * 6)
    _rho, tau = correlate([1, 2, 2, 4], [4, 3, 1, 2], n_resamples=99)
    assert tau.estimate == pytest.approx(-3 / math.sqrt(30))


def test_estimates_and_p_values_are_scipys() -> None:
    rho, tau = correlate(SHARES, PAPER_RANKS, factor=HEADLINE)
    s = stats.spearmanr(SHARES, PAPER_RANKS)
    k = stats.kendalltau(SHARES, PAPER_RANKS)
    assert (rho.estimate, rho.p_value) == pytest.approx((s.statistic, s.pvalue))
    assert (tau.estimate, tau.p_value) == pytest.approx((k.statistic, k.pvalue))
    assert rho.estimate < 0 and tau.estimate < 0
    assert rho.reading == f"ρ < 0: a higher {HEADLINE} goes with a better (smaller) rank"
    assert tau.reading.startswith("τ < 0: a higher")


@pytest.mark.parametrize(
    "func, ref", [(spearman_rho, stats.spearmanr), (kendall_tau_b, stats.kendalltau)]
)
def test_vectorised_statistics_equal_scipy_on_every_resample(func, ref) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(50, 8)).astype(float)  # many ties
    y = rng.integers(0, 6, size=(50, 8)).astype(float)
    got = func(x, y, axis=-1)
    for i in range(50):
        want = ref(x[i], y[i]).statistic
        if np.isnan(want):
            assert np.isnan(got[i])
        else:
            assert got[i] == pytest.approx(want)


def test_interval_is_scipys_paired_percentile_bootstrap_and_repeatable() -> None:
    rho, tau = correlate(SHARES, PAPER_RANKS, n_resamples=2000, seed=3)
    ref = stats.bootstrap(
        (np.array(SHARES), np.array(PAPER_RANKS, dtype=float)),
        lambda a, b: stats.spearmanr(a, b).statistic,
        paired=True,
        vectorized=False,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(3),
    )
    # nine distinct values: no resample is constant, so scipy's interval is used as is
    assert "left out" not in rho.note
    assert (rho.low, rho.high) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high)
    )
    assert rho.low <= rho.estimate <= rho.high
    assert tau.low <= tau.estimate <= tau.high
    assert -1 <= rho.low < rho.high <= 1
    again, _ = correlate(SHARES, PAPER_RANKS, n_resamples=2000, seed=3)
    assert (again.low, again.high) == (rho.low, rho.high)
    assert rho.confidence == 0.95


def test_perfect_association_over_enough_universities_is_conclusive() -> None:
    x = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    rho, tau = correlate(x, [80, 70, 60, 50, 40, 30, 20, 10], n_resamples=999)
    assert rho.estimate == pytest.approx(-1.0) and tau.estimate == pytest.approx(-1.0)
    assert (rho.low, rho.high) == pytest.approx((-1.0, -1.0))
    assert rho.conclusive and tau.conclusive
    assert rho.note == ""


def test_weak_association_says_the_interval_includes_zero() -> None:
    x = [1, 2, 3, 4, 5, 6, 7]
    y = [3, 7, 1, 5, 2, 6, 4]
    rho, _ = correlate(x, y, n_resamples=999)
    assert rho.low < 0 < rho.high
    assert "interval includes 0" in rho.note
    assert not rho.conclusive


def test_fewer_than_five_universities_carry_the_plain_note_and_the_interval() -> None:
    rho, tau = correlate([0.4, 0.3, 0.2, 0.1], [1, 2, 3, 4], n_resamples=999)
    for c in (rho, tau):
        assert c.n == 4 < MIN_CONCLUSIVE
        assert "too small to conclude" in c.note
        assert not math.isnan(c.low) and not math.isnan(c.high)
        assert not c.conclusive
    # four universities: 4 of 256 equally likely resamples repeat one university, more
    # repeat a value; those have no ρ and are counted in the note
    assert "resamples had a constant" in rho.note


def test_fewer_than_three_and_missing_values_give_nan_with_a_note() -> None:
    rho, tau = correlate([0.5, None, 0.2, math.nan], [1, 2, None, 4], factor="share_media")
    for c in (rho, tau):
        assert c.n == 1
        assert math.isnan(c.estimate) and math.isnan(c.p_value) and math.isnan(c.low)
        assert "at least 3 universities" in c.note
        assert c.reading == ""
    empty, _ = correlate([], [])
    assert empty.n == 0 and math.isnan(empty.estimate)


def test_constant_factor_or_rank_is_undefined_not_an_error() -> None:
    rho, tau = correlate([2, 2, 2, 2, 2], [1, 2, 3, 4, 5], factor="n_clusters")
    assert math.isnan(rho.estimate) and math.isnan(tau.high)
    assert rho.note == "n_clusters is the same (2) for all 5 universities: ρ is undefined"
    rho, _ = correlate([1, 2, 3], [7, 7, 7], target="impact_rank")
    assert rho.note == "impact_rank is the same (7) for all 3 universities: ρ is undefined"


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="3 values but 2 ranks"):
        correlate([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="confidence"):
        correlate([1, 2, 3], [1, 2, 3], confidence=95)


def test_correlate_factors_keeps_the_order_and_the_headline_first() -> None:
    assert FACTORS[0] == HEADLINE
    rows = correlate_factors({HEADLINE: SHARES, "n_clusters": [3] * 9}, PAPER_RANKS, n_resamples=99)
    assert [(r.factor, r.statistic) for r in rows] == [
        (HEADLINE, "spearman"),
        (HEADLINE, "kendall"),
        ("n_clusters", "spearman"),
        ("n_clusters", "kendall"),
    ]
    assert math.isnan(rows[2].estimate) and "the same (3)" in rows[2].note


def test_spearman_p_value_is_exact_over_every_pairing_for_few_universities() -> None:
    # a perfect ρ with 4 universities: 2 of the 4! pairings are as extreme (scipy's t
    # approximation would say p = 0)
    rho, tau = correlate([0.4, 0.3, 0.2, 0.1], [1, 2, 3, 4], n_resamples=99)
    assert rho.p_value == pytest.approx(2 / 24)
    assert tau.p_value == pytest.approx(stats.kendalltau([0.4, 0.3, 0.2, 0.1], [1, 2, 3, 4]).pvalue)
    # with ties, against a count over itertools.permutations
    from itertools import permutations

    x, y = [1.0, 2.0, 2.0, 4.0, 3.0], [4.0, 3.0, 1.0, 2.0, 5.0]
    observed = abs(stats.spearmanr(x, y).statistic)
    extreme = [abs(stats.spearmanr(p, y).statistic) >= observed - 1e-12 for p in permutations(x)]
    rho, _ = correlate(x, y, n_resamples=99)
    assert rho.p_value == pytest.approx(sum(extreme) / len(extreme))
