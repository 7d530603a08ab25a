"""`history check`: the head's launches of each kernel group against the commits before it.

Per GPU, the baseline is the `baseline` latest commits before the head whose runs were measured
as the head's was (same metric set, ncu version and clock control; same device name, CC and SM
count as recorded, clocks within `CLOCK_TOLERANCE_PCT`). When no earlier commit was, the latest
ones are compared anyway and a movement is named for what changed — a **method change** or a
**hardware change**, never a regression. Every launch of every run of those commits is the noise
sample (`ncu_roof.base.shift.runs_shift`: Hodges–Lehmann shift, Moses interval widened by the
drift between the baseline's runs), the head's launches the other. A kernel group on one side
only is **new** or **missing at head**, never a regression.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from ncu_roof.base.shift import FIRE_FRACTION, Movement, Shift, runs_shift
from ncu_roof.base.text import plural
from ncu_roof.compare.comparison import CLOCK_TOLERANCE_PCT
from ncu_roof.errors import UsageError
from ncu_roof.history import BASELINE, CONFIDENCE, THRESHOLD_PCT
from ncu_roof.history.query import History, durations, gpus_of, recent_commits, runs_rows
from ncu_roof.history.store import open_dataset


class Kind(Enum):  # in the order a report lists them
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    METHOD_CHANGE = "method change"
    HARDWARE_CHANGE = "hardware change"
    MISSING = "missing at head"  # ran in the baseline, not at the head: never a regression
    NEW = "new"  # ran at the head, in no baseline commit: nothing to compare with
    NOISE = "noise"


METHOD = ("metric_set", "ncu_version", "clock_control")
HARDWARE = ("device_name", "cc", "sm_count")  # as the runs recorded them (never the GPU table's)
WORDS = {
    "metric_set": "metric set",
    "ncu_version": "ncu version",
    "clock_control": "clock control",
    "device_name": "GPU",
    "cc": "compute capability",
    "sm_count": "SM count",
    "sm_clock_hz": "SM clock",
}


@dataclass(frozen=True)
class Change:
    """Why the baseline was not measured as the head was."""

    kind: Kind  # METHOD_CHANGE or HARDWARE_CHANGE
    reason: str


def _shown(value: Any) -> str:
    return "unknown" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def provenance_change(head: Mapping[str, Any], base: Mapping[str, Any]) -> Change | None:
    """What differs between two runs' provenance rows (a method before the hardware), or None."""
    for kind, keys in ((Kind.METHOD_CHANGE, METHOD), (Kind.HARDWARE_CHANGE, HARDWARE)):
        for key in keys:
            if head.get(key) != base.get(key):
                return Change(kind, f"{WORDS[key]} {_shown(base.get(key))} → {_shown(head.get(key))}")
    h, b = head.get("sm_clock_hz"), base.get("sm_clock_hz")
    if (h is None) != (b is None) or (
        h is not None and b is not None and abs(h / b - 1) * 100 > CLOCK_TOLERANCE_PCT
    ):
        shown = " → ".join("unknown" if v is None else f"{v / 1e9:.3g} GHz" for v in (b, h))
        return Change(Kind.HARDWARE_CHANGE, f"SM clock {shown}")
    return None


def classify(
    head_runs_s: Sequence[np.ndarray],
    base_runs_s: Sequence[np.ndarray],
    threshold_pct: float,
    confidence: float,
    change: Change | None,
) -> tuple[Kind, Shift | None]:
    """One kernel group's movement: the shift of the head runs' durations against the baseline
    runs' (`runs_shift`), named a regression or improvement only when the two were measured alike
    (`change` None); across a change, a movement the gate would count is that change."""
    found = runs_shift(head_runs_s, base_runs_s, confidence)
    moved = found.verdict(threshold_pct) if found is not None else Movement.NOISE
    if moved is Movement.NOISE:
        return Kind.NOISE, found
    if change is not None:
        return change.kind, found
    return (Kind.REGRESSION if moved is Movement.REGRESSION else Kind.IMPROVEMENT), found


@dataclass(frozen=True)
class KernelMovement:
    name: str
    grid: str | None
    block: str | None
    gpu: str
    kind: Kind
    shift: Shift | None  # None: missing at the head, new, or no duration on a side
    head_launches: int
    baseline_launches: int
    baseline_commits: int  # of the baseline's, those the kernel group ran at
    reason: str
    last_good: str | None  # the newest baseline commit it ran at (a regression: the culprit window's start)
    first_bad: str  # the head


@dataclass(frozen=True)
class GpuBaseline:
    gpu: str
    commits: tuple[str, ...]  # newest first
    change: Change | None


@dataclass(frozen=True)
class CheckResult:
    head: str
    threshold_pct: float
    confidence: float
    baselines: tuple[GpuBaseline, ...]
    movements: tuple[KernelMovement, ...]
    # where a head GPU has no commit before it: the dataset's other GPU keys (the same GPU read
    # from another format, or added by an earlier version, may be filed under one of them)
    other_gpus: tuple[str, ...] = ()

    def of_kind(self, kind: Kind) -> list[KernelMovement]:
        return [m for m in self.movements if m.kind is kind]


def choose_baseline(
    head: Mapping[str, Any], prior: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], n: int
) -> GpuBaseline:
    """The `n` newest prior commits (newest first, each with its runs) measured as the head was
    (right after a change, a single one: its interval sees no run-to-run drift); if none was, the
    `n` newest ones, with what changed."""
    gpu = str(head["gpu"])
    alike = [c for c, runs in prior if all(provenance_change(head, r) is None for r in runs)]
    if alike:
        return GpuBaseline(gpu, tuple(alike[:n]), None)
    window = prior[:n]
    changes = (provenance_change(head, r) for _, runs in window for r in runs)
    change = next((c for c in changes if c is not None), None)
    return GpuBaseline(gpu, tuple(c for c, _ in window), change)


def _reason(kind: Kind, found: Shift | None, base: GpuBaseline, threshold_pct: float) -> str:
    if found is None:
        return "no duration on one side"
    if (ends := found.ends) is None:
        return (
            f"too few durations for an interval at {found.confidence:.0%} ({found.head_n} vs {found.base_n})"
        )
    interval = f"{found.shift_pct:+.1f}% {found.interval} at {found.confidence:.0%}"
    runs = plural(found.base_runs, "baseline run")
    drift = (
        f"run-to-run drift ±{found.drift_pct:.1f}% from {runs}"
        if found.drift_pct is not None
        else f"run-to-run drift not estimated ({runs})"
    )
    sizes = f"{found.head_n} durations vs {found.base_n} over {plural(len(base.commits), 'commit')}; {drift}"
    if kind in (Kind.METHOD_CHANGE, Kind.HARDWARE_CHANGE):
        assert base.change is not None
        return f"{interval}, across a {kind.value} ({base.change.reason}); {sizes}"
    floor = f"±{FIRE_FRACTION * threshold_pct:g}% ({FIRE_FRACTION:g} of the {threshold_pct:g}% threshold)"
    if kind is Kind.NOISE:
        if ends[0] <= 0 <= ends[1]:
            within = "the interval holds 0"
        elif abs(found.shift_pct) < FIRE_FRACTION * threshold_pct:
            within = f"real, but within {floor}"
        else:
            within = f"real, but confidently under the {threshold_pct:g}% threshold"
        return f"{interval}: {within}; {sizes}"
    return f"{interval}: real, and beyond {floor}; {sizes}"


def _grouped(
    columns: Mapping[str, np.ndarray],
) -> dict[tuple[str, str | None, str | None], dict[str, list[np.ndarray]]]:
    """(name, grid, block) → commit → its runs' durations (NaN where missing), a run's every launch."""
    values = np.ma.filled(np.ma.asarray(columns["duration_s"], dtype="float64"), np.nan).tolist()
    keys = (
        np.ma.filled(np.ma.asarray(columns[c], dtype=object), None).tolist()
        for c in ("name", "grid", "block", "commit", "run_id")
    )
    cells: dict[tuple[str, str | None, str | None], dict[str, dict[str, list[float]]]] = {}
    for name, grid, block, commit, run, value in zip(*keys, values, strict=True):
        cells.setdefault((name, grid, block), {}).setdefault(commit, {}).setdefault(run, []).append(value)
    return {k: {c: [np.array(v) for v in runs.values()] for c, runs in by.items()} for k, by in cells.items()}


def check(
    uri: str,
    head: str,
    baseline: int = BASELINE,
    threshold_pct: float = THRESHOLD_PCT,
    confidence: float = CONFIDENCE,
) -> CheckResult:
    """Classify every kernel group's movement at the head commit, GPU by GPU."""
    if baseline < 1:
        raise UsageError(f"--baseline {baseline}: must be at least 1", hint="e.g. --baseline 20")
    if not 0.5 <= confidence < 1:
        raise UsageError(f"--confidence {confidence:g} must lie in [0.5, 1)", hint="e.g. --confidence 0.99")
    history = History(open_dataset(uri))
    gpus = gpus_of(history, head)
    if not gpus:
        raise UsageError(f"commit {head} has no run in {uri}", hint=f"history add {uri} RUN --commit {head}")
    baselines, movements = [], []
    for gpu in gpus:
        base = _baseline(runs_rows(history, gpu), head, baseline)
        baselines.append(base)
        movements += _movements(history, head, base, threshold_pct, confidence)
    order = list(Kind)  # regressions first, worst first; then by name
    movements.sort(key=lambda m: (order.index(m.kind), -_shift_pct(m), m.name, m.grid or "", m.block or ""))
    others: tuple[str, ...] = ()
    if any(not b.commits for b in baselines):
        others = tuple(g for g in recent_commits(history, None, 1) if g not in gpus)
    return CheckResult(head, threshold_pct, confidence, tuple(baselines), tuple(movements), others)


def _shift_pct(movement: KernelMovement) -> float:
    found = movement.shift
    return found.shift_pct if found is not None and not math.isnan(found.shift_pct) else 0.0


def _baseline(runs: list[dict[str, Any]], head: str, n: int) -> GpuBaseline:
    """The head's baseline among one GPU's runs (in commit-time order)."""
    by_commit: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_commit.setdefault(r["commit"], []).append(r)
    order = list(by_commit)
    before = order[: order.index(head)][::-1]
    return choose_baseline(by_commit[head][0], [(c, by_commit[c]) for c in before], n)


def _one_side(head_ran: bool, ran: Sequence[str], base: GpuBaseline) -> tuple[Kind, str] | None:
    """A kernel group on one side only (`ran`: the baseline commits it ran at, newest first):
    missing at the head, or new; None when it ran on both sides."""
    if not head_ran:
        return Kind.MISSING, f"ran at {len(ran)} of {len(base.commits)} baseline commits (newest {ran[0]})"
    if not ran:
        where = f"none of the {len(base.commits)} baseline commits" if base.commits else "no commit before"
        return Kind.NEW, f"ran at the head and in {where}"
    return None


def _movements(
    history: History, head: str, base: GpuBaseline, threshold_pct: float, confidence: float
) -> list[KernelMovement]:
    """Every kernel group that ran at the head or in the baseline, classified: a group on one
    side only is new or missing at the head (reported, never a regression)."""
    out = []
    groups = _grouped(durations(history, base.gpu, [head, *base.commits]))
    for (name, grid, block), by_commit in groups.items():
        ran = [c for c in base.commits if c in by_commit]  # newest first
        head_runs = by_commit.get(head, [])
        base_runs = [run for c in ran for run in by_commit[c]]
        one_side = _one_side(head in by_commit, ran, base)
        found = None
        if one_side is not None:
            kind, reason = one_side
        else:
            kind, found = classify(head_runs, base_runs, threshold_pct, confidence, base.change)
            reason = _reason(kind, found, base, threshold_pct)
        counts = (sum(map(len, head_runs)), sum(map(len, base_runs)), len(ran))  # every launch, copies too
        last_good = ran[0] if ran else None
        out.append(KernelMovement(name, grid, block, base.gpu, kind, found, *counts, reason, last_good, head))
    return out
