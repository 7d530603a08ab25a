"""The gate on a simulated history (deterministic seed): 300 kernels × 60 commits, one run of 20
launches per commit, 1–3 % launch jitter, 1 % outlier launches (×1.5–4), 0.3 % run-to-run drift
shared by every kernel, a clock change (commit 25: compute-bound kernels 12 % faster, as the clocks
say), a method change (commit 40: another metric set, every kernel 8 % slower under it), and a
persistent step of +5 % to +25 % at one commit in 100 of the kernels (40 of them exactly +5 %).

The classifier (`history.check.choose_baseline` + `classify`) is run as `history check` runs it,
for every commit of every kernel, at the command's defaults (`--threshold 5% --confidence 0.99
--baseline 20`): the issue's targets are ≥ 99 % of the injected steps found, ≤ 1 false alarm per
10,000 comparisons of the kernels without one, and neither change ever called a regression.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ncu_roof.history import BASELINE, CONFIDENCE, THRESHOLD_PCT
from ncu_roof.history.check import Kind, choose_baseline, classify

KERNELS, COMMITS, LAUNCHES, INJECTED, EXACT = 300, 60, 20, 100, 40
CLOCK_AT, METHOD_AT = 25, 40


def provenance(commit: int) -> dict[str, Any]:
    return {
        "gpu": "h100-pcie",
        "commit": f"c{commit}",
        "metric_set": "a" if commit < METHOD_AT else "b",
        "ncu_version": "2025.1",
        "clock_control": "base",
        "device_name": "NVIDIA H100 PCIe",
        "cc": "9.0",
        "sm_count": 114.0,
        "sm_clock_hz": 1.41e9 if commit < CLOCK_AT else 1.62e9,
    }


def simulate(seed: int = 25) -> tuple[np.ndarray, dict[int, tuple[int, float]]]:
    """Durations (kernel, commit, launch) and the injected steps: kernel → (commit, size)."""
    rng = np.random.default_rng(seed)
    level = np.exp(rng.normal(np.log(100e-6), 1.0, KERNELS))[:, None]
    jitter = rng.uniform(0.01, 0.03, KERNELS)[:, None, None]
    drift = rng.normal(0.0, 0.003, COMMITS)[None, :, None]
    noise = np.exp(drift + jitter * rng.standard_normal((KERNELS, COMMITS, LAUNCHES)))
    outliers = rng.random(noise.shape) < 0.01
    noise[outliers] *= rng.uniform(1.5, 4.0, int(outliers.sum()))
    commit = np.arange(COMMITS)[None, :]
    compute_bound = (rng.random(KERNELS) < 0.5)[:, None]
    clock = np.where((commit >= CLOCK_AT) & compute_bound, 1.41 / 1.62, 1.0)
    method = np.where(commit >= METHOD_AT, 1.08, 1.0)
    steps: dict[int, tuple[int, float]] = {}
    chosen = rng.choice(KERNELS, INJECTED, replace=False).tolist()
    sizes = [0.05] * EXACT + rng.uniform(0.05, 0.25, INJECTED - EXACT).tolist()
    factor = np.ones((KERNELS, COMMITS))
    for kernel, size in zip(chosen, sizes, strict=True):
        at = int(rng.choice([c for c in range(5, COMMITS) if c not in (CLOCK_AT, METHOD_AT)]))
        steps[kernel] = (at, size)
        factor[kernel, at:] *= 1.0 + size
    return level[:, :, None] * (clock * method * factor)[:, :, None] * noise, steps


def classified(durations: np.ndarray) -> np.ndarray:
    """Kind per (kernel, commit ≥ 1), as `history check` of that commit would say."""
    rows = [provenance(c) for c in range(COMMITS)]
    kinds = np.empty((KERNELS, COMMITS), dtype=object)
    for head in range(1, COMMITS):
        prior = [(f"c{c}", [rows[c]]) for c in range(head - 1, -1, -1)]
        base = choose_baseline(rows[head], prior, BASELINE)
        used = [int(c[1:]) for c in base.commits]
        for kernel in range(KERNELS):
            runs = list(durations[kernel, used])  # a run a commit
            head_runs = [durations[kernel, head]]
            kinds[kernel, head], _ = classify(head_runs, runs, THRESHOLD_PCT, CONFIDENCE, base.change)
    return kinds


@pytest.fixture(scope="module")
def history() -> tuple[np.ndarray, dict[int, tuple[int, float]]]:
    durations, steps = simulate()
    return classified(durations), steps


def test_injected_regressions_are_found(history: tuple[np.ndarray, dict[int, tuple[int, float]]]) -> None:
    kinds, steps = history
    found = [kinds[k, at] is Kind.REGRESSION for k, (at, _) in steps.items()]
    exact = [kinds[k, at] is Kind.REGRESSION for k, (at, size) in steps.items() if size == 0.05]
    assert len(found) == INJECTED and len(exact) == EXACT
    assert sum(found) / len(found) >= 0.99
    assert sum(exact) / len(exact) >= 0.99  # a step of exactly the threshold included


def test_at_most_one_false_alarm_per_10000_comparisons(
    history: tuple[np.ndarray, dict[int, tuple[int, float]]],
) -> None:
    kinds, steps = history
    quiet = [k for k in range(KERNELS) if k not in steps]
    comparisons = kinds[quiet, 1:].ravel().tolist()
    alarms = sum(1 for kind in comparisons if kind is Kind.REGRESSION)
    assert len(comparisons) >= 10_000
    assert alarms <= len(comparisons) / 10_000


def test_clock_and_method_changes_are_never_regressions(
    history: tuple[np.ndarray, dict[int, tuple[int, float]]],
) -> None:
    kinds, steps = history
    for at, kind in ((CLOCK_AT, Kind.HARDWARE_CHANGE), (METHOD_AT, Kind.METHOD_CHANGE)):
        quiet = [k for k in range(KERNELS) if k not in steps]
        assert not (kinds[quiet, at] == Kind.REGRESSION).any()
        assert not (kinds[:, at] == Kind.REGRESSION).any()
        moved = [k for k in range(KERNELS) if k not in steps and kinds[k, at] is not Kind.NOISE]
        assert moved and all(kinds[k, at] is kind for k in moved)
    assert (kinds[:, METHOD_AT] == Kind.METHOD_CHANGE).sum() >= 0.9 * KERNELS  # +8 % on every kernel
