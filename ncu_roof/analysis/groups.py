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
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from itertools import chain

import numpy as np

from ncu_roof.analysis.columns import LaunchColumns, columns_of, distinct_rows, factorized
from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.model import intensity_array
from ncu_roof.analysis.records import Kernel
from ncu_roof.analysis.verdict_phrases import verdict_codes
from ncu_roof.base.codes import object_array


class GroupBy(StrEnum):
    KERNEL = "kernel"  # name + launch shape + device
    NVTX = "nvtx"  # NVTX range + device
    NONE = "none"  # every launch on its own


class SortBy(StrEnum):
    TIME = "time"  # total duration, largest first
    HEADROOM = "headroom"  # time it would save at its roof, largest first


def headroom_array(duration_s: np.ndarray, pct_of_roof: np.ndarray) -> np.ndarray:
    """Seconds each launch would save at its binding roof; NaN when that cannot be said (no
    duration or roofline verdict, or above its roof: roofs and counters disagree)."""
    known = np.isfinite(duration_s) & np.isfinite(pct_of_roof) & (pct_of_roof <= 100.0)
    with np.errstate(invalid="ignore"):
        return np.where(known, duration_s * (1.0 - pct_of_roof / 100.0), np.nan)


def headroom_s(kernel: Kernel) -> float | None:
    """Seconds this launch would save at its binding roof; None when that cannot be said."""
    nan = math.nan
    duration, pct = kernel.duration_s, kernel.pct_of_roof
    value = float(
        headroom_array(
            np.array([nan if duration is None else duration]), np.array([nan if pct is None else pct])
        )[0]
    )
    return None if math.isnan(value) else value


GroupKey = tuple[str, str | None, str | None, int]  # name (or NVTX range), grid, block, device
NO_NVTX = "(no NVTX range)"


def group_key(kernel: Kernel, by: GroupBy = GroupBy.KERNEL) -> GroupKey:
    """What a launch is grouped by: its kernel and launch shape, or (`NVTX`) its NVTX range."""
    if by is GroupBy.NVTX:
        return (kernel.nvtx if kernel.nvtx is not None else NO_NVTX, None, None, kernel.device)
    return (kernel.name, kernel.grid, kernel.block, kernel.device)


def _launch_keys(columns: LaunchColumns) -> list[GroupKey]:
    """`group_key` of every launch (by kernel), from the columns."""
    names, grids, blocks, device = (columns[c].tolist() for c in ("name", "grid", "block", "device"))
    return list(zip(names, grids, blocks, device, strict=True))


def _group_codes(columns: LaunchColumns, by: GroupBy) -> tuple[np.ndarray, list[GroupKey]]:
    """Each launch's group (0, 1, … in first-launch order) and the groups' keys (`group_key`):
    the key's columns coded one by one and their combinations found at once (a dict of 100,000
    key tuples cost 3x as much)."""
    device = columns["device"]
    if by is GroupBy.NVTX:
        texts = [object_array([NO_NVTX if r is None else r for r in columns["nvtx"].tolist()])]
    else:
        texts = [columns[c] for c in ("name", "grid", "block")]
    first, inverse = distinct_rows([*(factorized(t)[0] for t in texts), device])
    seen = np.argsort(first, kind="stable")  # the groups in first-launch order
    rank = np.empty(len(first), dtype=np.int64)
    rank[seen] = np.arange(len(first))
    rows = first[seen].tolist()
    cells = [[t[j] for j in rows] for t in texts]
    devices = device[rows].tolist()
    if by is GroupBy.NVTX:
        keys: list[GroupKey] = [(r, None, None, d) for r, d in zip(cells[0], devices, strict=True)]
    else:
        keys = list(zip(*cells, devices, strict=True))
    return rank[inverse], keys


@dataclass(frozen=True)
class KernelGroup:
    """Launches of one kernel (name, grid, block, device) or NVTX range, slowest launch first.

    It holds its launches' rows in the analysis and what is said of them; a `Kernel` is made
    only for the rows asked for (`lead`, `launches`)."""

    key: GroupKey
    rows: tuple[int, ...]  # its launches' rows in the analysis, slowest first
    kernels: Sequence[Kernel] = field(repr=False, compare=False)  # the analysis' launches
    time_share: float | None = None  # of the whole analysis' time
    device_share: float | None = None  # of its device's time
    total_duration_s: float | None = None  # sum over its launches with a duration
    mean_duration_s: float | None = None
    min_duration_s: float | None = None
    max_duration_s: float | None = None
    verdicts: tuple[str, ...] = ()  # the verdicts its launches got (with their basis), most time first
    verdict_shares: tuple[float, ...] = (1.0,)  # of its time, each of `verdicts` (nan: no time at all)
    headroom_s: float | None = None  # sum over the launches that have one (a lower bound if not all)
    headroom_complete: bool = True
    headroom_sol_s: float | None = None  # sum over the launches with SOL data (`Kernel.headroom_sol_s`)
    above_roof: bool = False  # some launch is measured above its roof
    notes: tuple[str, ...] = ()  # its launches' notes, each once, slowest launch's first

    @cached_property
    def figures(self) -> Kernel:
        """What a row of the group shows: the longest launch's identity with its launches' work,
        traffic and roof figures combined (`combined_figures`); the launch itself when alone."""
        if self.count == 1:
            return self.lead
        return combined_figures(self.lead, columns_of(self.kernels), np.array(self.rows, dtype="int64"))

    @property
    def name(self) -> str:
        return self.key[0]

    @property
    def device(self) -> int:
        return self.key[3]

    @property
    def lead(self) -> Kernel:
        """The longest launch: the group's representative row."""
        return self.kernels[self.rows[0]]

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def launches(self) -> tuple[Kernel, ...]:
        return tuple(self.kernels[j] for j in self.rows)

    @staticmethod
    def of(key: GroupKey, launches: Sequence[Kernel]) -> KernelGroup:
        """A group of the given launches (in that order), with their total time and nothing else."""
        times = [k.duration_s for k in launches if k.duration_s is not None]
        return KernelGroup(
            key, tuple(range(len(launches))), launches, total_duration_s=sum(times) if times else None
        )


def device_totals_s(analysis: Analysis) -> dict[int, float]:
    """Seconds per device: the sum of its launches' durations (absent: a device without one)."""
    totals: dict[int, float] = {}
    duration, device = analysis.columns["duration_s"], analysis.columns["device"]
    timed = ~np.isnan(duration)
    ids, inverse = np.unique(device[timed], return_inverse=True)
    for index, seconds in zip(
        ids.tolist(), np.bincount(inverse, weights=duration[timed]).tolist(), strict=True
    ):
        totals[index] = totals.get(index, 0.0) + seconds
    return totals


@dataclass(frozen=True)
class _PerLaunch:
    """What groups are made of, per launch (row j), as plain lists and arrays."""

    kernels: Sequence[Kernel]
    duration_s: np.ndarray
    durations_s: list[float]
    words: list[str]
    word_codes: np.ndarray  # into `phrases`
    phrases: np.ndarray
    headroom_s: np.ndarray
    headroom_sol_s: np.ndarray
    above: np.ndarray
    notes: np.ndarray
    total_s: float

    def shares(self, time: float | None, device_total_s: float) -> tuple[float | None, float | None]:
        """Of the whole analysis' time, and of its device's."""
        if time is None:
            return None, None
        whole = time / self.total_s if self.total_s > 0 else None
        return whole, time / device_total_s if device_total_s > 0 else None


def group_kernels(analysis: Analysis, by: GroupBy = GroupBy.KERNEL) -> list[KernelGroup]:
    """Groups in first-launch order (`GroupBy.NONE`: one group per launch, keyed by kernel),
    made once per analysis."""
    return list(analysis.derived(("groups", by), lambda: tuple(_group_kernels(analysis, by))))


def _group_kernels(analysis: Analysis, by: GroupBy) -> list[KernelGroup]:
    columns = analysis.columns
    n = len(columns)
    if by is GroupBy.NONE:
        codes, distinct = np.arange(n), _launch_keys(columns)
    else:
        codes, distinct = _group_codes(columns, by)
    duration = columns["duration_s"]
    order = np.lexsort((-np.nan_to_num(duration, nan=-1.0), codes))  # by group, slowest first
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]]) if n else np.zeros(0, int)
    per_device = device_totals_s(analysis)
    word_codes, phrases = verdict_codes(columns, basis=True)
    launches = _PerLaunch(
        kernels=analysis.kernels,
        duration_s=duration,
        durations_s=duration.tolist(),
        words=phrases[word_codes].tolist(),
        word_codes=word_codes,
        phrases=phrases,
        headroom_s=headroom_array(duration, columns["pct_of_roof"]),
        headroom_sol_s=columns["headroom_sol_s"],
        above=columns["pct_of_roof"] > 100.0,
        notes=columns["notes"],
        total_s=analysis.total_duration_s,
    )
    devices = columns["device"].tolist()
    out = []
    for start, end in zip(starts.tolist(), [*starts[1:].tolist(), n][: len(starts)], strict=True):
        rows = order[start:end]
        key = distinct[int(codes[rows[0]])]
        device_total = per_device.get(devices[int(rows[0])], 0.0)
        make = _one_launch if end - start == 1 else _launches
        out.append(make(key, rows, launches, device_total))
    return out  # in first-launch order: the groups' codes are


def _one_launch(key: GroupKey, rows: np.ndarray, x: _PerLaunch, device_total_s: float) -> KernelGroup:
    """A group of one launch (every group of `--launches`): no arrays to reduce."""
    j = int(rows[0])
    time = None if math.isnan(x.durations_s[j]) else x.durations_s[j]
    room = None if math.isnan(x.headroom_s[j]) else float(x.headroom_s[j])
    share, device_share = x.shares(time, device_total_s)
    return KernelGroup(
        key=key,
        rows=(j,),
        kernels=x.kernels,
        time_share=share,
        device_share=device_share,
        total_duration_s=time,
        mean_duration_s=time,
        min_duration_s=time,
        max_duration_s=time,
        verdicts=(x.words[j],),
        headroom_s=room,
        headroom_complete=room is not None,
        headroom_sol_s=None if math.isnan(x.headroom_sol_s[j]) else float(x.headroom_sol_s[j]),
        above_roof=bool(x.above[j]),
        notes=tuple(dict.fromkeys(x.notes[j])),
    )


def _launches(key: GroupKey, rows: np.ndarray, x: _PerLaunch, device_total_s: float) -> KernelGroup:
    """A group of several launches (`rows`, slowest first): sums, extremes, verdicts by time."""
    times = x.duration_s[rows][~np.isnan(x.duration_s[rows])]
    time = math.fsum(times.tolist()) if len(times) else None
    # each verdict's time, sums in launch order (slowest first); by time, ties by first seen
    words, first_at, inverse = np.unique(x.word_codes[rows], return_index=True, return_inverse=True)
    seconds = x.duration_s[rows]
    word_s = np.bincount(
        inverse.ravel(), weights=np.where(np.isnan(seconds), 0.0, seconds), minlength=len(words)
    )
    order = np.lexsort((first_at, -word_s))
    by_time = words[order]
    timed_s = float(word_s.sum())
    shares = word_s[order] / timed_s if timed_s > 0 else np.full(len(order), math.nan)
    rooms = x.headroom_s[rows]
    known = rooms[~np.isnan(rooms)]
    share, device_share = x.shares(time, device_total_s)
    return KernelGroup(
        key=key,
        rows=tuple(rows.tolist()),
        kernels=x.kernels,
        time_share=share,
        device_share=device_share,
        total_duration_s=time,
        mean_duration_s=time / len(times) if time is not None else None,
        min_duration_s=float(times.min()) if len(times) else None,
        max_duration_s=float(times.max()) if len(times) else None,
        verdicts=tuple(x.phrases[by_time].tolist()),
        verdict_shares=tuple(shares.tolist()),
        headroom_s=float(known.sum()) if len(known) else None,
        headroom_complete=len(known) == len(rooms),
        headroom_sol_s=_known_sum(x.headroom_sol_s[rows]),
        above_roof=bool(x.above[rows].any()),
        notes=tuple(dict.fromkeys(chain.from_iterable(dict.fromkeys(x.notes[rows].tolist())))),
    )


def combined_figures(lead: Kernel, columns: LaunchColumns, rows: np.ndarray) -> Kernel:
    """Several launches (`rows`) as one: FLOPs, integer operations and bytes summed, rates over
    their summed time, intensity over their summed bytes, % of roof, of each tier's roof and SOL
    percentages weighted by time, the SOL headroom summed; each over the launches that have the
    figure (and a duration), None where none has it."""

    def of(field: str, key: str | None = None) -> np.ndarray:  # the launches' values only
        values: np.ndarray = (columns[field] if key is None else columns.key(field, key))[rows]
        return values

    duration = np.where(of("duration_s") > 0, of("duration_s"), np.nan)

    def total(values: np.ndarray) -> float:
        known = ~np.isnan(values)
        return float(values[known].sum()) if known.any() else math.nan

    def sums(numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, float]:
        both = ~np.isnan(numerator) & ~np.isnan(denominator)
        return total(numerator[both]), total(denominator[both])

    def over(numerator: np.ndarray, denominator: np.ndarray) -> float | None:
        top, bottom = sums(numerator, denominator)
        return _or_none(top / bottom) if bottom > 0 else None

    def timed(pct: np.ndarray) -> float | None:  # a percentage weighted by each launch's time
        share = over(duration * pct / 100.0, np.where(np.isnan(pct), np.nan, duration))
        return None if share is None else 100.0 * share

    def ratio(flop: np.ndarray, nbytes: np.ndarray) -> float | None:
        top, bottom = sums(flop, nbytes)
        return _or_none(float(intensity_array(np.array([top]), np.array([bottom]))[0]))

    flop = of("flop", "total")
    nbytes = {t: of("bytes", t) for t in lead.bytes}
    return replace(
        lead,
        flop={p: _or_none(total(of("flop", p))) for p in lead.flop},
        bytes={t: _or_none(total(b)) for t, b in nbytes.items()},
        intensity_flop_per_byte={t: ratio(flop, b) for t, b in nbytes.items()},
        achieved_flop_per_s=over(flop, duration),
        achieved_byte_per_s={t: over(b, duration) for t, b in nbytes.items()},
        attainable_flop_per_s=over(flop, duration * of("pct_of_roof") / 100.0),
        pct_of_roof=timed(of("pct_of_roof")),
        sol_pct={k: timed(of("sol_pct", k)) for k in lead.sol_pct},
        pct_of_bandwidth={t: timed(of("pct_of_bandwidth", t)) for t in lead.pct_of_bandwidth},
        headroom_sol_s=_known_sum(of("headroom_sol_s")),
        ops={
            k: _known_sum(np.array([r.get(k) for r in of("ops").tolist()], dtype="float64")) for k in lead.ops
        },
    )


def _known_sum(values: np.ndarray) -> float | None:
    """The sum of the values that are not NaN; None where none is."""
    known = values[~np.isnan(values)]
    return float(known.sum()) if len(known) else None


def _or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


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
