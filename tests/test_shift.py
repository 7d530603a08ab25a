"""`ncu_roof.base.shift`: the Hodges–Lehmann shift, Moses' interval and the drift band, checked by hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from ncu_roof.base.shift import (
    FIRE_FRACTION,
    Movement,
    Shift,
    _shift,
    one_per_copy,
    rank_bound,
    runs_shift,
    shift,
)


def test_the_estimate_is_the_median_of_the_differences_of_logs() -> None:
    # the base's two equal durations are one measurement: log differences 0.1, 0.2, median 0.15,
    # a change of e^0.15 - 1 = +16.18 %
    found = shift(np.exp([0.1, 0.2]), np.exp([0.0, 0.0]))
    assert found is not None
    assert math.isclose(found.shift_pct, 100 * math.expm1(0.15))
    assert (found.low_pct, found.high_pct, found.head_n, found.base_n) == (None, None, 2, 1)  # too few


def test_copies_of_one_average_are_no_noise_sample() -> None:
    # a --print-summary row of "Invocations 20" is 20 copies of one average: 4 % slower is one
    # measurement against one, no interval, never a regression at 99 %
    found = shift(np.full(20, 1.04e-3), np.full(20, 1.0e-3))
    assert found is not None
    assert (found.low_pct, found.high_pct, found.head_n, found.base_n) == (None, None, 1, 1)
    assert found.verdict(5.0) is Movement.NOISE


def test_a_kernel_confidently_slower_by_less_than_the_threshold_is_no_regression() -> None:
    # +4 % with its whole interval [+3.3 %, +4.7 %] under the 5 % threshold: real, but not a
    # regression of 5 %; the same interval reaching +5.1 % is one (estimate 4 % ≥ 0.65 x 5 %)
    below = Shift(4.0, 3.3, 4.7, 100, 100, 0.99)
    reaching = Shift(4.0, 3.3, 5.1, 100, 100, 0.99)
    assert below.verdict(5.0) is Movement.NOISE
    assert reaching.verdict(5.0) is Movement.REGRESSION
    assert Shift(-4.0, -4.7, -3.3, 100, 100, 0.99).verdict(5.0) is Movement.NOISE
    assert Shift(-4.0, -5.1, -3.3, 100, 100, 0.99).verdict(5.0) is Movement.IMPROVEMENT


def test_the_rank_bound_is_the_tables() -> None:
    # Hollander & Wolfe, m = n = 10, two-sided 95 %: C = 24 (normal approximation: 50 - 1.96·13.23)
    assert rank_bound(10, 10, 0.95) == 24
    assert rank_bound(3, 3, 0.99) == 0  # no interval from 3 against 3 at 99 %
    assert rank_bound(20, 400, 0.99) == math.floor(4000 - 2.5758 * math.sqrt(8000 * 421 / 12))


def test_the_interval_is_the_c_th_smallest_and_largest_difference() -> None:
    head = np.exp(np.arange(10) * 0.01 + 0.05)  # the base shifted by +0.05 in logs
    base = np.exp(np.arange(10) * 0.01)
    found = shift(head, base, confidence=0.95)
    assert found is not None and found.low_pct is not None and found.high_pct is not None
    differences = np.sort(np.subtract.outer(np.log(head), np.log(base)).ravel())
    assert math.isclose(found.low_pct, 100 * math.expm1(differences[23]))  # the 24th smallest
    assert math.isclose(found.high_pct, 100 * math.expm1(differences[100 - 24]))
    assert math.isclose(found.shift_pct, 100 * math.expm1(0.05))


def test_an_outlier_launch_moves_the_estimate_by_at_most_one_rank() -> None:
    base = np.full(20, 100e-6) * np.exp(np.linspace(-0.01, 0.01, 20))
    head = base * 1.10
    spiked = head.copy()
    spiked[0] *= 50
    clean, noisy = shift(head, base), shift(spiked, base)
    assert clean is not None and noisy is not None
    assert abs(noisy.shift_pct - clean.shift_pct) < 0.2


def test_missing_and_non_positive_durations_are_left_out() -> None:
    assert shift(np.array([np.nan, 0.0]), np.array([1.0])) is None
    found = shift(np.array([2.0, np.nan]), np.array([1.0, -1.0]))
    assert (
        found is not None and (found.head_n, found.base_n) == (1, 1) and math.isclose(found.shift_pct, 100.0)
    )


def test_the_verdict_needs_a_real_movement_of_at_least_0_65_of_the_threshold() -> None:
    def at(low: float, est: float, high: float) -> Movement:
        return Shift(est, low, high, 20, 400, 0.99).verdict(5.0)

    assert FIRE_FRACTION == 0.65
    assert at(0.5, 6.0, 11.0) is Movement.REGRESSION
    assert at(-0.5, 6.0, 12.0) is Movement.NOISE  # the interval holds 0
    assert at(1.0, 3.25, 5.0) is Movement.REGRESSION  # real, and 0.65 of the 5 % threshold
    assert at(1.0, 3.2, 4.8) is Movement.NOISE  # real, but under 0.65 of the threshold
    assert at(-9.0, -6.0, -1.0) is Movement.IMPROVEMENT
    assert at(-5.0, -3.25, -1.0) is Movement.IMPROVEMENT and at(-4.0, -3.2, -1.0) is Movement.NOISE
    assert Shift(9.0, None, None, 1, 1, 0.99).verdict(5.0) is Movement.NOISE


def _ratio(pct: float) -> float:
    return 1 + pct / 100


@given(
    st.lists(st.floats(1e-6, 1e-2), min_size=2, max_size=30),
    st.lists(st.floats(1e-6, 1e-2), min_size=2, max_size=30),
    st.floats(0.5, 2.0),
)
def test_scaling_the_head_shifts_estimate_and_interval_alike(
    head: list[float], base: list[float], k: float
) -> None:
    # (two durations the scaling rounds to one float would count once: another sample)
    assume(len(set(np.array(head) * k)) == len(set(head)))
    one, scaled = shift(np.array(head), np.array(base)), shift(np.array(head) * k, np.array(base))
    assert one is not None and scaled is not None
    assert math.isclose(_ratio(scaled.shift_pct), _ratio(one.shift_pct) * k, rel_tol=1e-9)
    if one.low_pct is not None and scaled.low_pct is not None and one.high_pct is not None:
        assert one.low_pct <= one.shift_pct <= one.high_pct
        assert math.isclose(_ratio(scaled.low_pct), _ratio(one.low_pct) * k, rel_tol=1e-9)


def test_the_interval_is_written_one_way_and_is_none_without_one() -> None:
    found = Shift(shift_pct=4.25, low_pct=1.24, high_pct=8.0, head_n=12, base_n=30, confidence=0.95)
    assert found.interval == "[+1.2%, +8.0%]"
    assert Shift(-3.0, -6.04, None, 3, 3, 0.95).interval is None


def _short_kernel_run(rng: np.random.Generator, scale: float) -> np.ndarray:
    """105 launches of a 17.4 µs kernel as ncu writes their durations (whole multiples of 32 ns,
    as in the corpus' A10 report: its 105 launches take 18 values), the first one cold (x2.5)."""
    durations = rng.normal(17.4e-6, 0.1e-6, 105) * scale
    durations[0] *= 2.5
    rounded: np.ndarray = np.round(durations / 32e-9) * 32e-9
    return rounded


def test_repeated_durations_of_a_short_kernel_are_each_a_measurement() -> None:
    # 20 baseline runs against a head 10 % slower: each repeated value is a measurement; counted
    # once, the 20 cold launches (each its own value) outweighed the ~20 values of 2,000 typical
    # launches, and the estimate came out negative, the regression noise
    rng = np.random.default_rng(1)
    base = np.concatenate([_short_kernel_run(rng, 1.0) for _ in range(20)])
    found = shift(_short_kernel_run(rng, 1.10), base)
    assert found is not None and found.head_n == 105 and found.base_n == 2100  # (thinned to 500 to compute)
    assert 9.0 < found.shift_pct < 11.0 and found.verdict(5.0) is Movement.REGRESSION
    alike = shift(_short_kernel_run(rng, 1.0), base)
    assert alike is not None and alike.verdict(5.0) is Movement.NOISE


def _runs(medians: list[float], step: float = 0.0) -> list[np.ndarray]:
    """A run of 21 launches around each median log duration (±0.5 %, the middle one the median)."""
    return [np.exp(median + step + np.linspace(-0.005, 0.005, 21)) * 1e-4 for median in medians]


def test_the_interval_widens_to_the_drift_between_the_baseline_runs() -> None:
    # 5 baseline runs whose medians drift by ±2-4 % (their MAD 0.02: σ = 1.4826 x 0.02), a head
    # run 6.2 % slower: its launches' interval lies above 0, but one more run of the baseline
    # drifts that far: the band is ±z·σ·√(1/1 + 1/5) = ±8.7 %, and the movement is noise
    base, head = _runs([-0.04, -0.02, 0.0, 0.02, 0.04]), _runs([0.0], step=0.06)
    band = NormalDist().inv_cdf(0.995) * 1.4826 * 0.02 * math.sqrt(1 + 1 / 5)
    found = runs_shift(head, base)
    assert found is not None and found.drift_pct is not None and found.low_pct is not None
    assert (found.base_runs, found.head_n, found.base_n) == (5, 21, 105)
    assert math.isclose(found.shift_pct, 100 * math.expm1(0.06))
    assert math.isclose(found.drift_pct, 100 * math.expm1(band))
    assert math.isclose(found.low_pct, 100 * math.expm1(0.06 - band))
    assert found.verdict(5.0) is Movement.NOISE
    # the same launches as one run: no drift seen, the launches' interval alone, a regression
    pooled = runs_shift([np.concatenate(head)], [np.concatenate(base)])
    assert pooled is not None and (pooled.base_runs, pooled.drift_pct) == (1, None)
    assert pooled.low_pct is not None and pooled.low_pct > 0 and pooled.verdict(5.0) is Movement.REGRESSION


def test_runs_of_one_same_duration_are_each_a_measurement() -> None:
    # 8 commits whose one launch each took one 32 ns step of the same length: 8 measurements, not
    # one average copied (counted once, the baseline held one value: no interval, and a head 20 %
    # slower read as noise)
    base, head = [np.array([5.024e-6])] * 8, [5.024e-6 * np.array([1.2, 1.21, 1.19, 1.2, 1.22])]
    found = runs_shift(head, base)
    assert found is not None and (found.base_n, found.base_runs) == (8, 8) and found.ends is not None
    assert found.verdict(5.0) is Movement.REGRESSION


def test_the_drift_band_shrinks_with_the_heads_runs_and_ignores_an_outlier_run() -> None:
    # one baseline run 30 % off moves the MAD of 5 runs by one rank, not by 30 %; two head runs
    # halve the head's part of the band: √(1/2 + 1/5) against √(1 + 1/5)
    base = _runs([-0.01, 0.0, 0.0, 0.01, 0.3])
    one, two = runs_shift(_runs([0.05]), base), runs_shift(_runs([0.05, 0.05]), base)
    assert one is not None and one.drift_pct is not None and two is not None and two.drift_pct is not None
    z = NormalDist().inv_cdf(0.995)
    assert math.isclose(one.drift_pct, 100 * math.expm1(z * 1.4826 * 0.01 * math.sqrt(1 + 1 / 5)))
    assert math.isclose(two.drift_pct, 100 * math.expm1(z * 1.4826 * 0.01 * math.sqrt(1 / 2 + 1 / 5)))


@given(
    st.lists(st.lists(st.floats(1e-6, 1e-2), min_size=1, max_size=8), min_size=1, max_size=6),
    st.lists(st.lists(st.floats(1e-6, 1e-2), min_size=1, max_size=8), min_size=1, max_size=3),
)
def test_runs_only_ever_widen_the_interval_of_their_launches(
    base: list[list[float]], head: list[list[float]]
) -> None:
    runs = runs_shift([np.array(r) for r in head], [np.array(r) for r in base])
    pooled = _shift(np.concatenate([one_per_copy(np.array(r)) for r in head]),  # each run's copies once,
                    np.concatenate([one_per_copy(np.array(r)) for r in base]), 0.99)  # fmt: skip
    assert runs is not None and pooled is not None
    assert (runs.shift_pct, runs.head_n, runs.base_n) == (pooled.shift_pct, pooled.head_n, pooled.base_n)
    assert runs.base_runs == len(base)
    if pooled.low_pct is None or pooled.high_pct is None:
        assert (runs.low_pct, runs.high_pct, runs.drift_pct) == (None, None, None)
        return
    assert runs.low_pct is not None and runs.high_pct is not None
    assert runs.low_pct <= pooled.low_pct and runs.high_pct >= pooled.high_pct
    assert (runs.drift_pct is None) == (len(base) < 2)
