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
    adjust_p,
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


def test_estimates_are_scipys_and_p_is_exact_below_ten() -> None:
    rho, tau = correlate(SHARES, PAPER_RANKS, factor=HEADLINE, n_resamples=4999, seed=1)
    s = stats.spearmanr(SHARES, PAPER_RANKS)
    k = stats.kendalltau(SHARES, PAPER_RANKS)
    assert (rho.estimate, tau.estimate) == pytest.approx((s.statistic, k.statistic))
    # nine universities: a permutation test of 4999 random pairings (seeded), within its
    # Monte Carlo error of scipy's exact Kendall p (no ties: exact over every pairing)
    assert tau.p_value == pytest.approx(k.pvalue, abs=0.005)
    assert rho.p_value == pytest.approx(
        stats.permutation_test(
            (np.array(SHARES),),
            lambda a: stats.spearmanr(a, PAPER_RANKS).statistic,
            permutation_type="pairings",
            n_resamples=4999,
            rng=np.random.default_rng(5),
        ).pvalue,
        abs=0.005,
    )
    again, _ = correlate(SHARES, PAPER_RANKS, factor=HEADLINE, n_resamples=4999, seed=1)
    assert again.p_value == rho.p_value
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


# twelve universities: Fisher's z from ten on
X12 = [0.12, 0.31, 0.22, 0.45, 0.18, 0.39, 0.27, 0.50, 0.09, 0.33, 0.41, 0.15]
R12 = [300, 40, 120, 5, 260, 30, 90, 2, 610, 75, 12, 180]


def test_from_ten_universities_the_interval_and_p_are_fishers_z_by_hand() -> None:
    rho, tau = correlate(X12, R12)
    n = 12
    for c, se in (
        (rho, math.sqrt((1 + rho.estimate**2 / 2) / (n - 3))),  # Bonett and Wright 2000
        (tau, math.sqrt(0.437 / (n - 4))),  # Fieller, Hartley and Pearson 1957
    ):
        z = math.atanh(c.estimate)
        assert (c.low, c.high) == pytest.approx(
            (math.tanh(z - 1.959964 * se), math.tanh(z + 1.959964 * se))
        )
        assert c.p_value == pytest.approx(2 * stats.norm.sf(abs(z) / se))
        assert c.low <= c.estimate <= c.high
        assert "n = " not in c.note  # no small-sample caveat from 10 on
    assert rho.confidence == 0.95


@pytest.mark.parametrize("seed", range(6))
def test_interval_excludes_zero_exactly_when_p_is_below_five_percent(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 40))
    x = rng.normal(size=n)
    y = x * rng.uniform(0, 0.6) + rng.normal(size=n)
    for c in correlate(list(x), list(y)):
        assert (c.low > 0 or c.high < 0) == (c.p_value < 0.05)


def test_perfect_association_over_enough_universities_is_conclusive() -> None:
    x = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    rho, tau = correlate(x, [100, 90, 80, 70, 60, 50, 40, 30, 20, 10])
    assert rho.estimate == pytest.approx(-1.0) and tau.estimate == pytest.approx(-1.0)
    assert (rho.low, rho.high) == pytest.approx((-1.0, -1.0))
    assert rho.p_value == 0.0
    assert rho.conclusive and tau.conclusive
    assert rho.note == ""


def test_weak_association_says_the_interval_includes_zero() -> None:
    x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    y = [3, 7, 1, 11, 2, 6, 4, 5, 10, 8, 9]
    rho, _ = correlate(x, y)
    assert rho.low < 0 < rho.high
    assert rho.p_value >= 0.05
    assert "interval includes 0" in rho.note
    assert not rho.conclusive


@pytest.mark.parametrize("n", [4, 5, 9])
def test_below_ten_universities_the_caveat_says_why_and_no_interval(n: int) -> None:
    x = [0.1 * (i + 1) for i in range(n)]
    rho, tau = correlate(x, list(range(n, 0, -1)), n_resamples=999)
    for c in (rho, tau):
        assert c.n == n < MIN_CONCLUSIVE
        assert f"n = {n} < 10: too few universities to conclude" in c.note
        assert f"2/n! = {2 / math.factorial(n):.2g}" in c.note
        assert math.isnan(c.low) and math.isnan(c.high)  # blank, with the reason
        assert not c.conclusive
    # the case the issue saw: four universities, ρ = 0.775 with ties, p = 0.5 and a
    # bootstrap interval of [0.775, 1.0]; now p alone, exact, and no interval
    rho, _ = correlate([5, 5, 5, 6], [9, 14, 17, 21], factor="n_clusters")
    assert rho.estimate == pytest.approx(0.7746, abs=1e-4)
    assert rho.p_value == pytest.approx(0.5)
    assert math.isnan(rho.low)


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


def test_p_value_is_exact_over_every_pairing_for_few_universities() -> None:
    # a perfect ρ with 4 universities: 2 of the 4! pairings are as extreme (scipy's t
    # approximation would say p = 0)
    rho, tau = correlate([0.4, 0.3, 0.2, 0.1], [1, 2, 3, 4], n_resamples=99)
    assert rho.p_value == pytest.approx(2 / 24)
    assert tau.p_value == pytest.approx(stats.kendalltau([0.4, 0.3, 0.2, 0.1], [1, 2, 3, 4]).pvalue)
    # Kendall's with ties, against a count over itertools.permutations
    from itertools import permutations

    x, y = [1.0, 2.0, 2.0, 4.0, 3.0], [4.0, 3.0, 1.0, 2.0, 5.0]
    observed = abs(stats.kendalltau(x, y).statistic)
    extreme = [abs(stats.kendalltau(p, y).statistic) >= observed - 1e-12 for p in permutations(x)]
    _, tau = correlate(x, y, n_resamples=99)
    assert tau.p_value == pytest.approx(sum(extreme) / len(extreme))
    # with ties, against a count over itertools.permutations
    from itertools import permutations

    x, y = [1.0, 2.0, 2.0, 4.0, 3.0], [4.0, 3.0, 1.0, 2.0, 5.0]
    observed = abs(stats.spearmanr(x, y).statistic)
    extreme = [abs(stats.spearmanr(p, y).statistic) >= observed - 1e-12 for p in permutations(x)]
    rho, _ = correlate(x, y, n_resamples=99)
    assert rho.p_value == pytest.approx(sum(extreme) / len(extreme))


def test_holm_and_benjamini_hochberg_against_known_values() -> None:
    p = [0.01, 0.04, 0.03, 0.005, math.nan, 0.5]
    # Holm by hand over the five defined: sorted 0.005, 0.01, 0.03, 0.04, 0.5 times 5, 4,
    # 3, 2, 1, running maximum: 0.025, 0.04, 0.09, 0.09, 0.5
    holm = adjust_p(p, "holm")
    assert holm[:4] + holm[5:] == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.5])
    assert math.isnan(holm[4])
    bh = adjust_p(p, "bh")
    defined = [v for v in p if not math.isnan(v)]
    want = list(stats.false_discovery_control(defined, method="bh"))
    assert [v for v in bh if not math.isnan(v)] == pytest.approx(want)
    assert all(a >= b for a, b in zip(holm[:4], p[:4], strict=True))
    with pytest.raises(ValueError, match="unknown p-value adjustment"):
        adjust_p(p, "bonferroni")
