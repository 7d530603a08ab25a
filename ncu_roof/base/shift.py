"""How much slower one sample of durations is than another, with a distribution-free interval.

The shift is the Hodges–Lehmann estimate on log durations: the median of every head − base
difference of logs, as a percent change of the time (`100 · (e^d − 1)`). Its interval at a
confidence level is Moses' distribution-free one, from the Mann–Whitney statistic's null
distribution (normal approximation): the C-th smallest and largest of those differences,
`C = ⌊mn/2 − z·√(mn(m+n+1)/12)⌋`. It assumes only that both samples are independent draws of one
noise distribution, shifted; it is robust (an outlier launch moves it by at most one rank) and
deterministic (no resampling), as a CI gate must be. docs/history.md says why not a bootstrap.

The threshold is the smallest movement the gate must catch. A movement is **real** when its
interval excludes 0, and **counts** when the estimate reaches `FIRE_FRACTION` (0.65) of the
threshold and the interval reaches the threshold (a kernel confidently slower by less is no
regression): a regression is all three, slower (`verdict`). A sample of one duration copied is one
measurement (`one_per_copy`: a `--print-summary`'s rows are one average copied per invocation, no
noise sample); any other repeat counts, durations being written in ncu's 32 ns steps.
Why 0.65 = z(10⁻⁵) / (z(10⁻⁵) + z(10⁻²)): up to a standard error σ ≈ T/6.6 a step of exactly the
threshold T is caught 99 % of the time (missed with Φ(−0.35·T/σ)) while an unchanged kernel alarms
once in 100,000 (Φ(−0.65·T/σ)): ten times under the gate's target, the margin for drift
(docs/history.md, "Why 0.65 of the threshold", has the operating characteristics).

The interval sees launch jitter only: a whole run shifted (clocks, heat, other tenants) is one
draw, however many launches it has. `runs_shift` widens it by the drift the baseline's runs show
(the drift band, `estimate ± z·σ·√(1/h + 1/k)`, σ the robust spread of the k baseline runs'
median log durations, h the head's runs): the interval is the wider of the two on each side."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from statistics import NormalDist, median

import numpy as np

MAX_SAMPLE = 500  # a larger sample is thinned to this many of its quantiles (m·n pairs stay ≤ 250,000)
MIN_LAUNCHES = 2  # fewer launches on a side: no interval (a single launch is no noise sample)
FIRE_FRACTION = 0.65  # of the threshold: what a real movement's estimate must reach (docstring)
MIN_RUNS = 2  # fewer baseline runs with a duration: no estimate of the run-to-run drift
MAD_SIGMA = 1.4826  # the median absolute deviation times this estimates a normal's σ


class Movement(Enum):
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NOISE = "noise"


@dataclass(frozen=True)
class Shift:
    """Head vs base: the estimated change of the time in percent, its interval (None: samples too
    small), the sample sizes (measured, not thinned; copies of one average count once); with runs
    (`runs_shift`), the baseline's runs with a duration and the drift band's half-width in percent."""

    shift_pct: float
    low_pct: float | None
    high_pct: float | None
    head_n: int
    base_n: int
    confidence: float
    base_runs: int = 1
    drift_pct: float | None = None

    @property
    def ends(self) -> tuple[float, float] | None:
        """The interval's (low, high) in percent; None without one."""
        return None if self.low_pct is None or self.high_pct is None else (self.low_pct, self.high_pct)

    @property
    def interval(self) -> str | None:
        """The interval as every sink writes it, `[+1.2%, +8.0%]`; None without one."""
        return None if self.ends is None else "[{:+.1f}%, {:+.1f}%]".format(*self.ends)

    def verdict(self, threshold_pct: float) -> Movement:
        """Regression: the interval lies above 0 and reaches +threshold, and the estimate reaches
        `FIRE_FRACTION` of it (improvement the mirror); anything else is noise."""
        if self.ends is None:
            return Movement.NOISE
        (low, high), floor_pct = self.ends, FIRE_FRACTION * threshold_pct
        if low > 0 and self.shift_pct >= floor_pct and high >= threshold_pct:
            return Movement.REGRESSION
        if high < 0 and self.shift_pct <= -floor_pct and low <= -threshold_pct:
            return Movement.IMPROVEMENT
        return Movement.NOISE


def _pct(log_ratio: float) -> float:
    return 100.0 * math.expm1(log_ratio)


def one_per_copy(durations_s: np.ndarray) -> np.ndarray:
    """The positive durations of one sample; a single one where they are all the same (copies of
    one average: a `--print-summary` row's "Invocations N"), every one otherwise."""
    kept: np.ndarray = durations_s[np.isfinite(durations_s) & (durations_s > 0)]
    return kept[:1] if len(kept) > 1 and bool((kept == kept[0]).all()) else kept


def _logs(kept_s: np.ndarray) -> np.ndarray:
    """The logs of the durations kept (`one_per_copy`), thinned to `MAX_SAMPLE` of their quantiles."""
    logs: np.ndarray = np.log(kept_s)
    return logs if len(logs) <= MAX_SAMPLE else np.quantile(logs, (np.arange(MAX_SAMPLE) + 0.5) / MAX_SAMPLE)


def _z(confidence: float) -> float:
    """The two-sided normal quantile of a confidence: 2.576 at 0.99."""
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def rank_bound(n: int, m: int, confidence: float) -> int:
    """C of Moses' interval (the C-th smallest to the C-th largest difference); 0: samples too small."""
    return max(0, math.floor(n * m / 2.0 - _z(confidence) * math.sqrt(n * m * (n + m + 1) / 12.0)))


def shift(head_s: np.ndarray, base_s: np.ndarray, confidence: float = 0.99) -> Shift | None:
    """The shift of `head_s` against `base_s` (durations in seconds; NaN and non-positive values
    left out, a side of one value copied counted once); None when a side has no duration."""
    return _shift(one_per_copy(head_s), one_per_copy(base_s), confidence)


def _shift(head_s: np.ndarray, base_s: np.ndarray, confidence: float) -> Shift | None:
    """`shift` of samples whose copies are already counted once (`runs_shift`: each run's apart)."""
    head, base = _logs(head_s), _logs(base_s)
    if not len(head) or not len(base):
        return None
    n, m = len(head), len(base)
    differences = np.subtract.outer(head, base).ravel()
    total = len(differences)
    c = rank_bound(n, m, confidence) if min(n, m) >= MIN_LAUNCHES else 0
    middle = [(total - 1) // 2, total // 2]
    ends = [c - 1, total - c] if c >= 1 else []
    ordered = np.partition(differences, sorted({*middle, *ends}))
    low, high = (_pct(float(ordered[c - 1])), _pct(float(ordered[total - c]))) if c >= 1 else (None, None)
    return Shift(_pct(float(ordered[middle].mean())), low, high, len(head_s), len(base_s), confidence)


def runs_shift(
    head_runs_s: Sequence[np.ndarray], base_runs_s: Sequence[np.ndarray], confidence: float = 0.99
) -> Shift | None:
    """The shift of every head launch against every baseline launch (`shift`; a run's copies of
    one average counted once), its interval widened to the drift band (module docstring; σ from
    the median absolute deviation) where the baseline has `MIN_RUNS` runs with a duration."""
    head_runs = [r for r in map(one_per_copy, head_runs_s) if len(r)]
    base_runs = [r for r in map(one_per_copy, base_runs_s) if len(r)]
    if not head_runs or not base_runs:
        return None
    found = _shift(np.concatenate(head_runs), np.concatenate(base_runs), confidence)
    assert found is not None  # both sides hold a positive duration
    k = len(base_runs)
    if (ends := found.ends) is None or k < MIN_RUNS:
        return replace(found, base_runs=k)
    medians = np.log([median(r.tolist()) for r in base_runs])  # (np.median: ~20 µs a call, 800 groups × 20)
    sigma = MAD_SIGMA * median(np.abs(medians - median(medians.tolist())).tolist())
    band = _z(confidence) * sigma * math.sqrt(1 / len(head_runs) + 1 / k)
    estimate = math.log1p(found.shift_pct / 100)
    low, high = min(ends[0], _pct(estimate - band)), max(ends[1], _pct(estimate + band))
    return replace(found, low_pct=low, high_pct=high, base_runs=k, drift_pct=_pct(band))
