"""Base vs head: match kernels, compare time, FLOP/s, bytes, intensity and verdict (pure).

Kernels match by (name, grid, block, order among equals) by default: the n-th launch of a shape in
the base pairs with the n-th launch of that shape in the head. `MatchBy.NAME` ignores the launch
shape (a kernel relaunched with another grid); `MatchBy.ORDER` pairs the n-th launch of the base
with the n-th of the head whatever their names (a renamed kernel). A kernel whose duration grows
by more than the threshold is a regression; one that shrinks by more is an improvement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from ncu_roof.analysis import Analysis
from ncu_roof.errors import GateError, UsageError
from ncu_roof.matching import MatchBy
from ncu_roof.model import finite, finite_or_none
from ncu_roof.records import Kernel, describe

if TYPE_CHECKING:
    import pandas as pd

CLOCK_TOLERANCE_PCT = 2.0  # SM clocks (or report roofs) further apart than this: different clocks
KernelKey = tuple[int, int, int]  # (input, run, id): ncu's launch IDs restart in each run


class Status(StrEnum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    UNCHANGED = "unchanged"
    UNKNOWN = "unknown"  # a duration is missing on one side
    ONLY_BASE = "only-base"
    ONLY_HEAD = "only-head"


class MismatchError(UsageError):
    """Base and head ran on different GPUs or clocks; their numbers are not comparable."""


@dataclass(frozen=True)
class Change:
    base: float | None
    head: float | None

    @property
    def delta_pct(self) -> float | None:
        """(head − base) / base in percent; None when either side is missing or base is 0."""
        if not (finite(self.base) and finite(self.head)) or self.base == 0:
            return None
        assert self.base is not None and self.head is not None
        return 100.0 * (self.head - self.base) / self.base


@dataclass(frozen=True)
class KernelDiff:
    name: str
    grid: str | None
    block: str | None
    occurrence: int  # 0 for the first launch of this (name, grid, block), 1 for the next, …
    base_id: int | None
    head_id: int | None
    duration_s: Change
    flop_per_s: Change
    bytes: Mapping[str, Change]
    intensity_flop_per_byte: Mapping[str, Change]
    verdict_base: str | None
    verdict_head: str | None
    status: Status
    base_key: KernelKey | None = None
    head_key: KernelKey | None = None

    @property
    def verdict_changed(self) -> bool:
        return None not in (self.verdict_base, self.verdict_head) and (self.verdict_base != self.verdict_head)


@dataclass(frozen=True)
class Diff:
    base_devices: tuple[str, ...]
    head_devices: tuple[str, ...]
    threshold_pct: float
    kernels: tuple[KernelDiff, ...]
    total_duration_s: Change
    total_status: Status
    mismatch: str | None = None  # why the runs differ, when compared anyway
    notes: tuple[str, ...] = ()  # what could not be checked (clocks)

    def with_status(self, *statuses: Status) -> list[KernelDiff]:
        return [k for k in self.kernels if k.status in statuses]


def diff(
    base: Analysis,
    head: Analysis,
    *,
    threshold_pct: float = 5.0,
    allow_mismatch: bool = False,
    match: MatchBy = MatchBy.NAME_SHAPE,
) -> Diff:
    """Compare two analyses; raises MismatchError for different GPUs/clocks unless allowed."""
    if threshold_pct < 0:
        raise UsageError(f"threshold {threshold_pct}% is negative", hint="pass e.g. --threshold 5%")
    mismatch, clock_note = mismatch_reason(base, head)
    if mismatch and not allow_mismatch:
        raise MismatchError(
            f"cannot compare: {mismatch}",
            hint="profile both on the same GPU and clocks, or pass --allow-mismatch",
        )
    pairs = match_kernels(base.kernels, head.kernels, match)
    total = Change(_total(base.kernels), _total(head.kernels))
    return Diff(
        base_devices=_device_names(base),
        head_devices=_device_names(head),
        threshold_pct=threshold_pct,
        kernels=tuple(kernel_diff(b, h, n, threshold_pct) for b, h, n in pairs),
        total_duration_s=total,
        total_status=classify(total, threshold_pct),
        mismatch=mismatch,
        notes=(clock_note,) if clock_note else (),
    )


def mismatch_reason(base: Analysis, head: Analysis) -> tuple[str | None, str | None]:
    """(why the runs are not comparable or None, why their clocks could not be compared or None).

    Different GPU names, or different clocks, device by device: the median measured SM clock when
    the analysis carries it, whatever roofs are used; else the compute roofs measured in the
    reports (peak per cycle x the measured clock) when both sides use them.
    """
    base_names, head_names = _device_names(base), _device_names(head)
    if base_names != head_names:
        names = f"base ran on {', '.join(base_names) or '?'}, head on {', '.join(head_names) or '?'}"
        return names, None
    unchecked: list[str] = []
    for b, h in zip(base.devices, head.devices, strict=False):
        clocks = Change(finite_or_none(b.sm_clock_hz), finite_or_none(h.sm_clock_hz))
        if clocks.delta_pct is not None:
            assert clocks.base is not None and clocks.head is not None
            if abs(clocks.delta_pct) > CLOCK_TOLERANCE_PCT:
                return (
                    f"the median measured SM clock differs by {clocks.delta_pct:+.1f}% "
                    f"({clocks.base / 1e9:.3g} GHz → {clocks.head / 1e9:.3g} GHz)",
                    None,
                )
            continue
        if b.roofs.source == "report" and h.roofs.source == "report":
            for precision, peak in b.roofs.compute_flop_per_s.items():
                change = Change(peak, h.roofs.compute_flop_per_s.get(precision)).delta_pct
                if change is not None and abs(change) > CLOCK_TOLERANCE_PCT:
                    return (
                        f"the {precision} roof measured in the reports differs by {change:+.1f}% "
                        "(different clocks)",
                        None,
                    )
            continue
        unchecked.append(f"{b.roofs.source} vs {h.roofs.source}")
    if not unchecked:
        return None, None
    return None, (
        "clocks not compared: no measured SM clock to compare, and the roofs are not measured in "
        f"the reports ({', '.join(dict.fromkeys(unchecked))}); check that both runs used the same "
        "clock settings"
    )


def kernel_key(kernel: Kernel) -> KernelKey:
    return (kernel.input, kernel.run, kernel.id)


def match_kernels(
    base: Sequence[Kernel], head: Sequence[Kernel], match: MatchBy = MatchBy.NAME_SHAPE
) -> list[tuple[Kernel | None, Kernel | None, int]]:
    """Pairs (base, head, occurrence), in head order, then base-only kernels in base order.

    One merge of the two launch lists on what `match` compares (name and launch shape, name, or
    nothing: launch order) plus the occurrence among equals, whatever their length.
    """
    on = [*_MATCH_COLUMNS[match], "occurrence"]
    heads, bases = _shapes(head, match), _shapes(base, match)
    merged = heads.merge(bases, how="left", on=on, suffixes=("", "_base"))
    matched = merged["row_base"].dropna().astype(int)
    pairs: list[tuple[Kernel | None, Kernel | None, int]] = [
        (None if math.isnan(b) else base[int(b)], head[h], n)  # NaN: no base launch
        for h, b, n in zip(merged["row"], merged["row_base"], merged["occurrence"], strict=True)
    ]
    only_base = bases[~bases["row"].isin(matched)]
    pairs += [(base[b], None, n) for b, n in zip(only_base["row"], only_base["occurrence"], strict=True)]
    return pairs


_MATCH_COLUMNS: dict[MatchBy, tuple[str, ...]] = {
    MatchBy.NAME_SHAPE: ("name", "grid", "block"),
    MatchBy.NAME: ("name",),
    MatchBy.ORDER: (),
}
_NO_SHAPE = "\x00"  # stands for a missing grid or block, so that two missing ones match


def _shapes(kernels: Sequence[Kernel], match: MatchBy) -> pd.DataFrame:
    """(the compared fields, occurrence among equals, row) of each launch, in order."""
    import pandas as pd

    frame = pd.DataFrame(
        {
            "name": [k.name for k in kernels],
            "grid": [_NO_SHAPE if k.grid is None else k.grid for k in kernels],
            "block": [_NO_SHAPE if k.block is None else k.block for k in kernels],
        },
        dtype=object,
    )
    keys = list(_MATCH_COLUMNS[match])
    frame["occurrence"] = frame.groupby(keys, sort=False).cumcount() if keys else range(len(frame))
    frame["row"] = range(len(frame))
    return frame


def kernel_diff(
    base: Kernel | None, head: Kernel | None, occurrence: int, threshold_pct: float
) -> KernelDiff:
    either = head if head is not None else base
    assert either is not None
    duration = Change(_get(base, "duration_s"), _get(head, "duration_s"))
    tiers = sorted({*(base.bytes if base else {}), *(head.bytes if head else {})})
    if base is None:
        status = Status.ONLY_HEAD
    elif head is None:
        status = Status.ONLY_BASE
    else:
        status = classify(duration, threshold_pct)
    return KernelDiff(
        name=either.name,
        grid=either.grid,
        block=either.block,
        occurrence=occurrence,
        base_id=base.id if base else None,
        head_id=head.id if head else None,
        duration_s=duration,
        flop_per_s=Change(_get(base, "achieved_flop_per_s"), _get(head, "achieved_flop_per_s")),
        bytes={t: Change(_tier(base, "bytes", t), _tier(head, "bytes", t)) for t in tiers},
        intensity_flop_per_byte={
            t: Change(_tier(base, "intensity_flop_per_byte", t), _tier(head, "intensity_flop_per_byte", t))
            for t in tiers
        },
        verdict_base=describe(base) if base else None,
        verdict_head=describe(head) if head else None,
        status=status,
        base_key=kernel_key(base) if base else None,
        head_key=kernel_key(head) if head else None,
    )


def classify(duration: Change, threshold_pct: float) -> Status:
    change = duration.delta_pct
    if change is None:
        return Status.UNKNOWN
    if change > threshold_pct:
        return Status.REGRESSED
    if change < -threshold_pct:
        return Status.IMPROVED
    return Status.UNCHANGED


def slower_than(result: Diff, limit_pct: float) -> list[KernelDiff]:
    """Matched kernels whose time grew by more than `limit_pct` (the headline's "slower" when the
    limit is the threshold), worst first."""
    slower = [k for k in result.kernels if (k.duration_s.delta_pct or 0.0) > limit_pct]
    return sorted(slower, key=lambda k: -(k.duration_s.delta_pct or 0.0))


def gate(result: Diff, fail_on_regression_pct: float) -> None:
    """GateError (exit 1) when a kernel or the total got slower by more than the given percent.

    The message counts kernels as the diff's headline does ("N slower"), and the total apart.
    """
    limit = fail_on_regression_pct
    slower = slower_than(result, limit)
    total = result.total_duration_s.delta_pct
    total_slower = total is not None and total > limit
    if not slower and not total_slower:
        return
    noun = "kernel" if len(slower) == 1 else "kernels"
    parts = []
    if slower:
        worst = slower[0]
        parts.append(
            f"{len(slower)} {noun} slower by more than {limit:g}% "
            f"(worst {worst.name} {worst.duration_s.delta_pct:+.1f}%)"
        )
    if total_slower:
        parts.append(f"the total time is {total:+.1f}%")
    raise GateError(
        "; ".join(parts),
        hint="see the diff table; raise --fail-on-regression if this is expected",
    )


def _device_names(analysis: Analysis) -> tuple[str, ...]:
    return tuple(sorted({d.name or "?" for d in analysis.devices}))


def _total(kernels: Sequence[Kernel]) -> float | None:
    times = [k.duration_s for k in kernels if k.duration_s is not None]
    return sum(times) if times else None


def _get(kernel: Kernel | None, field: str) -> float | None:
    if kernel is None:
        return None
    return finite_or_none(getattr(kernel, field))


def _tier(kernel: Kernel | None, field: str, tier: str) -> float | None:
    if kernel is None:
        return None
    return finite_or_none(getattr(kernel, field).get(tier))


