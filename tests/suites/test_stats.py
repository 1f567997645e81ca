"""The suite statistics against independent computations: SciPy's exact binomial test and
bootstrap, a published Wilson example and the score test inverted numerically, Holm by
brute force from its definition, numpy's percentile, and the bootstrap's coverage."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoman_tui.suites.stats import (
    holm,
    mcnemar_exact,
    paired_bootstrap_ci,
    percentile,
    wilson,
)

# SciPy takes a second to import: the tests comparing against it import it themselves,
# so collecting this module stays cheap.

# --- Wilson -----------------------------------------------------------------------------


def test_wilson_matches_newcombe_1998_worked_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, Table I: 81/263 -> 0.2553 to 0.3662.
    low, high = wilson(81, 263) or (math.nan, math.nan)
    assert round(low, 4) == 0.2553
    assert round(high, 4) == 0.3662


def _score_interval_by_root_finding(k: int, n: int) -> tuple[float, float]:
    """The bounds where the normal score statistic equals 1.96, found numerically."""
    from scipy import optimize
    from scipy import stats as scipy_stats

    z = scipy_stats.norm.ppf(0.975)
    p_hat = k / n

    def score(p0: float) -> float:
        return float(abs(p_hat - p0) / math.sqrt(p0 * (1 - p0) / n) - z)

    eps = 1e-15
    low = 0.0 if k == 0 else optimize.brentq(score, eps, min(p_hat, 1 - eps), xtol=1e-14)
    high = 1.0 if k == n else optimize.brentq(score, max(p_hat, eps), 1 - eps, xtol=1e-14)
    return low, high


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (1, 2),
                                      (81, 263), (500, 1000), (1, 5000), (4999, 5000)])
def test_wilson_equals_the_inverted_score_test(k: int, n: int) -> None:
    expected = _score_interval_by_root_finding(k, n)
    got = wilson(k, n)
    assert got is not None
    assert got == pytest.approx(expected, abs=1e-9)


def test_wilson_edges() -> None:
    assert wilson(0, 0) is None
    assert wilson(0, 7)[0] == 0.0  # type: ignore[index]
    assert wilson(7, 7)[1] == 1.0  # type: ignore[index]
    with pytest.raises(ValueError):
        wilson(4, 3)
    with pytest.raises(ValueError):
        wilson(-1, 3)


@given(st.integers(min_value=1, max_value=100_000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))))
def test_wilson_is_ordered_within_unit_and_contains_the_rate(kn: tuple[int, int]) -> None:
    k, n = kn
    low, high = wilson(k, n) or (math.nan, math.nan)
    assert 0.0 <= low <= k / n <= high <= 1.0
    assert low < high


# --- McNemar ----------------------------------------------------------------------------

_PAIRS = ([(a, b) for a in range(0, 30) for b in range(0, 30)]
          + [(7, 300), (150, 151), (1000, 1100), (2500, 2000), (4000, 4500), (0, 3000),
             (12_000, 11_500), (30, 5000)])


@pytest.mark.parametrize(("a", "b"), _PAIRS[::7] + _PAIRS[-8:])
def test_mcnemar_matches_scipy_binomtest(a: int, b: int) -> None:
    from scipy import stats as scipy_stats

    n = a + b
    expected = 1.0 if n == 0 else scipy_stats.binomtest(min(a, b), n, 0.5).pvalue
    got = mcnemar_exact(a, b)
    # Away from the double's underflow the two agree to SciPy's own accuracy.
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_mcnemar_every_small_table_matches_scipy() -> None:
    from scipy import stats as scipy_stats

    for a, b in _PAIRS:
        n = a + b
        expected = 1.0 if n == 0 else scipy_stats.binomtest(min(a, b), n, 0.5).pvalue
        assert mcnemar_exact(a, b) == pytest.approx(expected, rel=1e-12), (a, b)


def test_mcnemar_exact_values_by_hand() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0
    assert mcnemar_exact(0, 1) == 1.0  # 2 * 1/2
    assert mcnemar_exact(0, 5) == 2 / 32
    assert mcnemar_exact(1, 9) == 2 * (1 + 10) / 1024


def test_mcnemar_large_counts_do_not_underflow_to_a_wrong_zero() -> None:
    # 2 * 2^-1100 is below the smallest double: 0.0 is what double precision forces.
    assert mcnemar_exact(0, 1100) == 0.0
    # 2 * 2^-1000 is representable (subnormal range not reached): it must not be 0.
    assert mcnemar_exact(0, 1000) == 2.0 ** -999
    # log10 of the exact tail, computed independently with lgamma sums.
    a, b = 3000, 4200
    n = a + b
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(a + 1)]
    top = max(logs)
    log_p = math.log(2) + top + math.log(sum(math.exp(x - top) for x in logs)) - n * math.log(2)
    assert math.log(mcnemar_exact(a, b)) == pytest.approx(log_p, rel=1e-10)


def test_mcnemar_is_fast_for_thousands_of_discordant_pairs() -> None:
    start = time.perf_counter()
    mcnemar_exact(9000, 11_000)
    assert time.perf_counter() - start < 2.0  # measured about 0.03 s


@given(st.integers(0, 400), st.integers(0, 400))
def test_mcnemar_is_symmetric_and_a_probability(a: int, b: int) -> None:
    p = mcnemar_exact(a, b)
    assert p == mcnemar_exact(b, a)
    assert 0.0 < p <= 1.0
    # A more lopsided table is at least as significant.
    assert mcnemar_exact(min(a, b), max(a, b) + 1) <= p


# --- Holm -------------------------------------------------------------------------------


def _holm_by_definition(p_values: list[float | None]) -> list[float | None]:
    """Each p's adjusted value: the largest (m - #{smaller p}) * p' over every p' ≤ p."""
    present = [p for p in p_values if p is not None]
    m = len(present)
    out: list[float | None] = []
    for p in p_values:
        if p is None:
            out.append(None)
            continue
        candidates = [(m - sum(1 for q in present if q < r)) * r for r in present if r <= p]
        out.append(min(1.0, max(candidates)))
    return out


def test_holm_worked_example() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> kept at 0.06.
    got = holm([0.01, 0.04, 0.03, None, 0.005])
    assert got == pytest.approx([0.03, 0.06, 0.06, None, 0.02])
    assert got[3] is None


def test_holm_caps_at_one_and_handles_empty() -> None:
    assert holm([]) == []
    assert holm([None, None]) == [None, None]
    assert holm([0.9, 0.6]) == [1.0, 1.0]
    assert holm([0.2]) == [0.2]
    with pytest.raises(ValueError):
        holm([1.5])


@given(st.lists(st.one_of(st.none(), st.floats(0.0, 1.0),
                          st.sampled_from([0.01, 0.05, 0.5])), max_size=12))
def test_holm_equals_brute_force(p_values: list[float | None]) -> None:
    got = holm(p_values)
    expected = _holm_by_definition(p_values)
    assert [g is None for g in got] == [e is None for e in expected]
    for g, e, p in zip(got, expected, p_values, strict=True):
        if p is not None:
            assert g == pytest.approx(e, rel=1e-12, abs=1e-300)
            assert p <= g <= 1.0  # type: ignore[operator]
    # Monotone: a smaller raw p never gets a larger adjusted one.
    pairs = sorted((p, g) for p, g in zip(p_values, got, strict=True) if p is not None)
    assert all(x[1] <= y[1] for x, y in itertools.pairwise(pairs))  # type: ignore[operator]


# --- percentile -------------------------------------------------------------------------


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=60),
       st.floats(0.0, 100.0))
def test_percentile_equals_numpy(values: list[float], q: float) -> None:
    assert percentile(values, q) == np.percentile(values, q)


def test_percentile_edges() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


# --- paired bootstrap -------------------------------------------------------------------


@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_bootstrap_agrees_with_scipy_percentile_bootstrap(statistic: str) -> None:
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(7)
    a = rng.gamma(2.0, 0.2, size=300)
    b = a + rng.normal(0.05, 0.1, size=300)
    diffs = a - b
    ours = paired_bootstrap_ci(diffs.tolist(), statistic, iterations=4000, seed=3)  # type: ignore[arg-type]
    function = np.median if statistic == "median" else np.mean
    theirs = scipy_stats.bootstrap(
        (a, b), lambda x, y, axis: function(x - y, axis=axis), paired=True,
        method="percentile", n_resamples=4000, confidence_level=0.95,
        random_state=np.random.default_rng(11), vectorized=True,
    ).confidence_interval
    assert ours is not None
    width = theirs.high - theirs.low
    # Two independent Monte Carlo estimates of the same percentiles: within a tenth of the
    # interval's width (their spread over seeds is about a twentieth).
    assert ours[0] == pytest.approx(theirs.low, abs=0.1 * width)
    assert ours[1] == pytest.approx(theirs.high, abs=0.1 * width)


def test_bootstrap_median_covers_the_true_median_about_95_percent() -> None:
    rng = np.random.default_rng(2024)
    true_median = math.log(2) * 0.5  # exponential with scale 0.5: skewed, like TTFTs
    datasets = 300
    covered = 0
    for i in range(datasets):
        diffs = rng.exponential(0.5, size=60).tolist()
        low, high = paired_bootstrap_ci(diffs, iterations=1000, seed=i) or (math.nan, math.nan)
        covered += low <= true_median <= high
    # Binomial(300, ~0.95) has sd ~ 1.3%; the percentile interval of a median runs a
    # little narrow at n = 60, hence the generous lower bound.
    assert 0.88 <= covered / datasets <= 0.99


def test_bootstrap_mean_covers_the_true_mean_about_95_percent() -> None:
    rng = np.random.default_rng(99)
    datasets = 300
    covered = 0
    for i in range(datasets):
        diffs = rng.normal(0.002, 0.01, size=80)  # per-cell cost differences, USD
        low, high = paired_bootstrap_ci(diffs.tolist(), "mean", iterations=1000, seed=i) or (0, 0)
        covered += low <= 0.002 <= high
    assert 0.88 <= covered / datasets <= 0.99


def test_bootstrap_is_deterministic_for_a_seed_and_varies_with_it() -> None:
    diffs = np.random.default_rng(5).normal(size=200).tolist()
    assert paired_bootstrap_ci(diffs, seed=1) == paired_bootstrap_ci(diffs, seed=1)
    assert paired_bootstrap_ci(diffs, seed=1) != paired_bootstrap_ci(diffs, seed=2)


@pytest.mark.parametrize("n", [1, 2, 7, 50, 51, 400])
def test_bootstrap_medians_are_distributed_as_a_direct_resamplings(n: int) -> None:
    # The medians are drawn from the order statistics of the resampled indices (Beta
    # draws), not by drawing every index: their distribution must be a direct
    # resampling's. Two-sample Kolmogorov-Smirnov on 20,000 medians each, and every
    # median is one a resample can have.
    from scipy.stats import ks_2samp

    from anoman_tui.suites.stats import _resampled_medians

    data = np.sort(np.random.default_rng(8).normal(size=n))
    direct = np.median(data[np.random.default_rng(4).integers(0, n, size=(20_000, n))],
                       axis=1)
    drawn = _resampled_medians(data, 20_000, np.random.default_rng(5))
    if n == 1:
        assert set(drawn) == set(direct) == {data[0]}
        return
    assert ks_2samp(direct, drawn).pvalue > 0.001
    possible = {(a + b) / 2 for a in data for b in data} if n % 2 == 0 else set(data)
    assert set(drawn.tolist()) <= {float(v) for v in possible}


def test_bootstrap_edges() -> None:
    assert paired_bootstrap_ci([]) is None
    assert paired_bootstrap_ci([0.25]) == (0.25, 0.25)
    assert paired_bootstrap_ci([1.0, 1.0, 1.0], "mean") == (1.0, 1.0)
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1.0], "mode")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1.0], level=1.0)
    with pytest.raises(ValueError):
        paired_bootstrap_ci([math.nan])


def test_bootstrap_10000_pairs_stays_under_a_second() -> None:
    diffs = np.random.default_rng(1).normal(size=10_000).tolist()
    start = time.perf_counter()
    paired_bootstrap_ci(diffs)
    # Measured about 0.3 s here (median, 2000 iterations); noisy shared machines get slack.
    assert time.perf_counter() - start < 3.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5.0, 5.0), min_size=1, max_size=40),
       st.sampled_from(["median", "mean"]), st.integers(0, 2**32 - 1))
def test_bootstrap_interval_is_ordered_and_within_the_data(
        diffs: list[float], statistic: str, seed: int) -> None:
    low, high = paired_bootstrap_ci(diffs, statistic, iterations=200,  # type: ignore[arg-type]
                                    seed=seed) or (math.nan, math.nan)
    assert min(diffs) - 1e-12 <= low <= high <= max(diffs) + 1e-12
