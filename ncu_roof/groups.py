"""Fix first and fold repeats: each launch's headroom, and launches of one kernel as one group.

Pure functions of an `Analysis` (it is not changed): every renderer asks here, so the table, the
Markdown, the HTML, the JSON and the plot rank and fold kernels the same way.

* `headroom_s` = duration × (1 − achieved ÷ attainable) = duration − the roofline's minimum time:
  the time a launch would save if it ran at its binding roof. Unknown (None) without a roofline
  verdict, and for a launch measured above its roof (inconsistent data: no saving can be claimed).
* A group is the launches of one kernel on one device with one launch shape (name, grid, block,
  device): its launch count, total / mean / min / max duration, the verdicts seen, its headroom.
  Grouped by NVTX instead, a group is the launches in one NVTX range (the `Kernel.nvtx` text) on
  one device, whatever their kernels; launches in no range make the group `NO_NVTX`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

from ncu_roof.analysis import Analysis
from ncu_roof.records import Kernel, describe


class GroupBy(StrEnum):
    KERNEL = "kernel"  # name + launch shape + device
    NVTX = "nvtx"  # NVTX range + device
    NONE = "none"  # every launch on its own


class SortBy(StrEnum):
    TIME = "time"  # total duration, largest first
    HEADROOM = "headroom"  # time it would save at its roof, largest first


def headroom_s(kernel: Kernel) -> float | None:
    """Seconds this launch would save at its binding roof; None when that cannot be said."""
    duration, pct = kernel.duration_s, kernel.pct_of_roof
    if duration is None or pct is None or not (math.isfinite(duration) and math.isfinite(pct)):
        return None
    if pct > 100.0:  # above its roof: roofs and counters disagree
        return None
    return duration * (1.0 - pct / 100.0)


GroupKey = tuple[str, str | None, str | None, int]  # name (or NVTX range), grid, block, device
NO_NVTX = "(no NVTX range)"


def group_key(kernel: Kernel, by: GroupBy = GroupBy.KERNEL) -> GroupKey:
    """What a launch is grouped by: its kernel and launch shape, or (`NVTX`) its NVTX range."""
    if by is GroupBy.NVTX:
        return (kernel.nvtx if kernel.nvtx is not None else NO_NVTX, None, None, kernel.device)
    return (kernel.name, kernel.grid, kernel.block, kernel.device)


@dataclass(frozen=True)
class KernelGroup:
    """Launches of one kernel (name, grid, block, device) or NVTX range, slowest launch first."""

    key: GroupKey
    launches: tuple[Kernel, ...]
    time_share: float | None  # of the whole analysis' time
    device_share: float | None  # of its device's time
    total_duration_s: float | None = None  # sum over its launches with a duration

    @property
    def name(self) -> str:
        return self.key[0]

    @property
    def device(self) -> int:
        return self.key[3]

    @property
    def lead(self) -> Kernel:
        """The longest launch: the group's representative row."""
        return self.launches[0]

    @property
    def count(self) -> int:
        return len(self.launches)

    @cached_property
    def durations_s(self) -> list[float]:
        return [k.duration_s for k in self.launches if k.duration_s is not None]

    @cached_property
    def mean_duration_s(self) -> float | None:
        times = self.durations_s
        return sum(times) / len(times) if times else None

    @cached_property
    def min_duration_s(self) -> float | None:
        return min(self.durations_s, default=None)

    @cached_property
    def max_duration_s(self) -> float | None:
        return max(self.durations_s, default=None)

    @cached_property
    def verdicts(self) -> tuple[str, ...]:
        """The verdicts its launches got, most time first (usually one)."""
        time: dict[str, float] = {}
        for k in self.launches:
            verdict = describe(k)
            time[verdict] = time.get(verdict, 0.0) + (k.duration_s or 0.0)
        return tuple(sorted(time, key=lambda v: -time[v]))

    @cached_property
    def _headrooms_s(self) -> list[float | None]:
        return [headroom_s(k) for k in self.launches]

    @cached_property
    def headroom_s(self) -> float | None:
        """Sum over the launches that have one; a lower bound when some have none."""
        values = [h for h in self._headrooms_s if h is not None]
        return sum(values) if values else None

    @cached_property
    def headroom_complete(self) -> bool:
        return all(h is not None for h in self._headrooms_s)

    @cached_property
    def notes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for k in self.launches for n in k.notes))


def device_totals_s(analysis: Analysis) -> dict[int, float]:
    totals = {d.index: 0.0 for d in analysis.devices}
    for k in analysis.kernels:
        if k.duration_s is not None:
            totals[k.device] = totals.get(k.device, 0.0) + k.duration_s
    return totals


def group_kernels(analysis: Analysis, by: GroupBy = GroupBy.KERNEL) -> list[KernelGroup]:
    """Groups in first-launch order (`GroupBy.NONE`: one group per launch, keyed by kernel)."""
    total = analysis.total_duration_s
    per_device = device_totals_s(analysis)

    def group(launches: list[Kernel]) -> KernelGroup:
        first = launches[0]
        if len(launches) > 1:
            launches = sorted(launches, key=lambda k: -(k.duration_s or -1.0))
        times = [k.duration_s for k in launches if k.duration_s is not None]
        time = sum(times) if times else None
        device_total = per_device.get(first.device, 0.0)
        return KernelGroup(
            key=group_key(first, by),
            launches=tuple(launches),
            time_share=time / total if time is not None and total > 0 else None,
            device_share=time / device_total if time is not None and device_total > 0 else None,
            total_duration_s=time,
        )

    if by is GroupBy.NONE:
        return [group([k]) for k in analysis.kernels]
    buckets: dict[GroupKey, list[Kernel]] = {}
    for k in analysis.kernels:
        buckets.setdefault(group_key(k, by), []).append(k)
    return [group(launches) for launches in buckets.values()]


def ranked(groups: Iterable[KernelGroup], by: SortBy = SortBy.TIME) -> list[KernelGroup]:
    """Largest first by total time or by headroom; unknowns last, ties by first launch."""
    items = list(groups)
    if by is SortBy.HEADROOM:
        return sorted(items, key=lambda g: -(g.headroom_s if g.headroom_s is not None else -1.0))
    return sorted(items, key=lambda g: -(g.total_duration_s if g.total_duration_s is not None else -1.0))


def repeats(groups: Sequence[KernelGroup]) -> bool:
    """Whether any kernel ran more than once (then tables show groups by default)."""
    return any(g.count > 1 for g in groups)


@dataclass(frozen=True)
class FixFirst:
    """The group that would save the most time at its roofs."""

    group: KernelGroup
    saving_s: float
    share: float | None  # of the total time (of its device's, in a per-device view)


def fix_first(groups: Sequence[KernelGroup], total_s: float) -> FixFirst | None:
    candidates = [g for g in groups if g.headroom_s is not None and g.headroom_s > 0]
    if not candidates:
        return None
    best = ranked(candidates, SortBy.HEADROOM)[0]
    saving = best.headroom_s
    assert saving is not None
    return FixFirst(best, saving, saving / total_s if total_s > 0 else None)
