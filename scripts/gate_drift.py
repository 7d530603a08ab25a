"""`history check` under run-to-run drift: how often it raises a false alarm, and how often it
catches a step, with the baseline's runs kept apart (the interval widened by the drift they show:
`base.shift.runs_shift`) and with every launch pooled into one run (Moses' interval of the
launches alone: a baseline of one run, and the rule before the drift band).

    .venv/bin/python scripts/gate_drift.py [--trials 4000] [--baseline 8] [--seed 1]

Each trial is `--baseline` commits of one run each and a head run, classified by
`history.check.classify` at the command's defaults (5 % threshold, 99 %). A run is `launches`
durations of a kernel: its median, times the run's drift (log-normal, σ `drift`, shared by the
run's launches), times each launch's jitter (log-normal, σ `jitter`), rounded to ncu's 32 ns; the
head's launches are times 1 + step. Both rules classify the same durations. The rates are
fractions of `--trials` (a rate of 1 % is ±0.3 % at 4,000 trials, two standard errors).
"""

from __future__ import annotations

import argparse

import numpy as np

from ncu_roof.history import CONFIDENCE, THRESHOLD_PCT
from ncu_roof.history.check import Kind, classify

STEPS_PCT = (0.0, 5.0, 10.0)  # the first: false alarms; the others: steps caught
CASES = (  # kernel median, launch jitter, launches a run, run-to-run drift (σ, log)
    *((5e-6, 0.02, 20, drift) for drift in (0.0, 0.005, 0.01, 0.015)),
    (17.4e-6, 0.006, 105, 0.003),  # the A10 report's 17 µs kernel: 105 launches, ±0.1 µs
    *((100e-6, 0.005, 200, drift) for drift in (0.003, 0.01)),  # measured far more precisely
    (100e-6, 0.03, 20, 0.003),  # tests/test_history_simulation.py's noisiest kernel
)


def runs(rng: np.random.Generator, case: tuple[float, float, int, float], count: int) -> np.ndarray:
    """`count` runs (rows) of a case's launches, rounded to 32 ns."""
    kernel_s, jitter, launches, drift = case
    noise = rng.normal(0.0, drift, (count, 1)) + rng.normal(0.0, jitter, (count, launches))
    rounded: np.ndarray = np.maximum(np.round(kernel_s * np.exp(noise) / 32e-9), 1) * 32e-9
    return rounded


def rates(case: tuple[float, float, int, float], trials: int, baseline: int, seed: int) -> list[float]:
    """Per step (`STEPS_PCT`) and rule (runs apart, pooled): the fraction of trials called a regression."""
    rng = np.random.default_rng(seed)
    alarms = np.zeros((len(STEPS_PCT), 2))
    for _ in range(trials):
        base = runs(rng, case, baseline)
        head = runs(rng, case, 1)[0]
        for i, step_pct in enumerate(STEPS_PCT):
            head_s = head * (1 + step_pct / 100)
            for j, base_runs in enumerate((list(base), [base.ravel()])):
                kind, _ = classify([head_s], base_runs, THRESHOLD_PCT, CONFIDENCE, None)
                alarms[i, j] += kind is Kind.REGRESSION
    return (alarms / trials).ravel().tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--baseline", type=int, default=8, help="baseline commits, one run each")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    steps = [f"{f'+{s:g} %' if s else 'no step'} {rule}" for s in STEPS_PCT for rule in ("runs", "pooled")]
    print("| kernel | jitter | launches | drift | " + " | ".join(steps) + " |")
    print("|---" * (4 + len(steps)) + "|")
    for number, case in enumerate(CASES):
        kernel_s, jitter, launches, drift = case
        found = rates(case, args.trials, args.baseline, args.seed + number)
        cells = [f"{kernel_s * 1e6:g} µs", f"{jitter:.1%}", str(launches), f"{drift:.1%}"]
        print("| " + " | ".join(cells + [f"{rate:.2%}" for rate in found]) + " |", flush=True)


if __name__ == "__main__":
    main()
