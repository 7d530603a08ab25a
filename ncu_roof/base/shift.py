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
Why 0.65: a shift of exactly the threshold T, estimated with a standard error σ, is missed with
probability Φ(−0.35·T/σ), and no shift raises an alarm with probability Φ(−0.65·T/σ) (nor more
than the interval's (1 − confidence)/2). 0.65 = z(10⁻⁵) / (z(10⁻⁵) + z(10⁻²)): up to σ ≈ T/6.6
a step of T is caught 99 % of the time while an unchanged kernel alarms once in 100,000 — ten
times under the gate's target of 1 in 10,000, the margin for what the interval does not see
(run-to-run drift; a baseline of one commit). docs/history.md has the operating characteristics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from statistics import NormalDist

import numpy as np

MAX_SAMPLE = 2000  # a larger sample is thinned to this many of its quantiles (m·n pairs stay ≤ 4e6)
MIN_LAUNCHES = 2  # fewer launches on a side: no interval (a single launch is no noise sample)
FIRE_FRACTION = 0.65  # of the threshold: what a real movement's estimate must reach (docstring)


class Movement(Enum):
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NOISE = "noise"


@dataclass(frozen=True)
class Shift:
    """Head vs base: the estimated change of the time in percent, its interval (None where the
    samples are too small for one at this confidence), and the sample sizes (measurements: copies
    of one average count once, `one_per_copy`)."""

    shift_pct: float
    low_pct: float | None
    high_pct: float | None
    head_n: int
    base_n: int
    confidence: float

    @property
    def interval(self) -> str | None:
        """The interval as every sink writes it, `[+1.2%, +8.0%]`; None without one."""
        if self.low_pct is None or self.high_pct is None:
            return None
        return f"[{self.low_pct:+.1f}%, {self.high_pct:+.1f}%]"

    def verdict(self, threshold_pct: float) -> Movement:
        """Regression: the interval lies above 0 and reaches +threshold, and the estimate reaches
        `FIRE_FRACTION` of it (improvement the mirror); anything else is noise."""
        if self.low_pct is None or self.high_pct is None:
            return Movement.NOISE
        floor_pct = FIRE_FRACTION * threshold_pct
        if self.low_pct > 0 and self.shift_pct >= floor_pct and self.high_pct >= threshold_pct:
            return Movement.REGRESSION
        if self.high_pct < 0 and self.shift_pct <= -floor_pct and self.low_pct <= -threshold_pct:
            return Movement.IMPROVEMENT
        return Movement.NOISE


def _pct(log_ratio: float) -> float:
    return 100.0 * math.expm1(log_ratio)


def one_per_copy(durations_s: np.ndarray) -> np.ndarray:
    """The positive durations of one sample; a single one where they are all the same (copies of
    one average: a `--print-summary` row's "Invocations N"), every one otherwise."""
    kept: np.ndarray = durations_s[np.isfinite(durations_s) & (durations_s > 0)]
    return kept[:1] if len(kept) > 1 and bool((kept == kept[0]).all()) else kept


def _logs(durations_s: np.ndarray) -> np.ndarray:
    """The logs of the positive durations (`one_per_copy`), thinned to `MAX_SAMPLE` of their
    quantiles."""
    logs: np.ndarray = np.log(one_per_copy(durations_s))
    if len(logs) <= MAX_SAMPLE:
        return logs
    thinned: np.ndarray = np.quantile(logs, (np.arange(MAX_SAMPLE) + 0.5) / MAX_SAMPLE)
    return thinned


def rank_bound(n: int, m: int, confidence: float) -> int:
    """C of Moses' interval: the interval is the C-th smallest to the C-th largest difference;
    0 when the samples are too small for an interval at this confidence."""
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    return max(0, math.floor(n * m / 2.0 - z * math.sqrt(n * m * (n + m + 1) / 12.0)))


def shift(head_s: np.ndarray, base_s: np.ndarray, confidence: float = 0.99) -> Shift | None:
    """The shift of `head_s` against `base_s` (durations in seconds; NaN and non-positive values
    left out, a side of one value copied counted once); None when a side has no duration."""
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
    return Shift(_pct(float(ordered[middle].mean())), low, high, n, m, confidence)
