"""Base vs head: compare time, FLOP/s, bytes, intensity and verdict of matched kernels (pure).

The pairs come from `ncu_roof.compare.pairs`. A kernel whose duration grows by more than the threshold
is a regression; one that shrinks by more is an improvement. Different GPUs or clocks are refused.
The gate (`--fail-on-regression`) judges a kernel launched often enough on both sides by the
shift of all its launches with its interval (`ncu_roof.base.shift`, as `history check` does).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.frame import FrameRows
from ncu_roof.analysis.model import finite_or_none, nan_to_none
from ncu_roof.analysis.records import device_name
from ncu_roof.base.shift import Movement, shift
from ncu_roof.base.vocabulary import MatchBy
from ncu_roof.compare.pairs import Change, KernelDiff, Status, classify, kernel_diff, pair_frame, sides
from ncu_roof.errors import GateError, UsageError

CLOCK_TOLERANCE_PCT = 2.0  # SM clocks (or report roofs) further apart than this: different clocks


GroupKey = tuple[str, str | None, str | None]  # a kernel and launch shape: name, grid, block


class MismatchError(UsageError):
    """Base and head ran on different GPUs or clocks; their numbers are not comparable."""


@dataclass(frozen=True)
class Diff:
    base_devices: tuple[str, ...]
    head_devices: tuple[str, ...]
    threshold_pct: float
    pairs: pl.DataFrame  # `pairs.pair_frame`: a row per pair
    total_duration_s: Change
    total_status: Status
    mismatch: str | None = None  # why the runs differ, when compared anyway
    notes: tuple[str, ...] = ()  # what could not be checked (clocks)

    @property
    def kernels(self) -> FrameRows[KernelDiff]:  # each pair made when asked for
        return FrameRows(self.pairs, kernel_diff)

    def count(self, status: Status) -> int:
        return int((self.pairs.get_column("status") == status.value).sum())


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
    total = Change(nan_to_none(base.total_duration_s), nan_to_none(head.total_duration_s))
    return Diff(
        base_devices=_device_names(base),
        head_devices=_device_names(head),
        threshold_pct=threshold_pct,
        pairs=pair_frame(base.launches, head.launches, match, threshold_pct),
        total_duration_s=total,
        total_status=classify(total, threshold_pct),
        mismatch=mismatch,
        notes=(clock_note,) if clock_note else (),
    )


def mismatch_reason(base: Analysis, head: Analysis) -> tuple[str | None, str | None]:
    """(why the runs are not comparable, why their clocks could not be compared; None: no reason):
    different GPU names, or different clocks, device by device: the median measured SM clock where
    both carry it, whatever roofs are used; else the compute roofs measured in the reports (peak
    per cycle x the measured clock) when both sides use them."""
    named = [{d.name or None for d in a.devices} for a in (base, head)]
    known = [names - {None} for names in named]  # a device that names none: unknown, not another
    if known[0] and known[1] and known[0] != known[1]:
        return f"base ran on {', '.join(_device_names(base))}, head on {', '.join(_device_names(head))}", None
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
        elif b.roofs.source == h.roofs.source == "report":
            for precision, peak in b.roofs.compute_flop_per_s.items():
                change = Change(peak, h.roofs.compute_flop_per_s.get(precision)).delta_pct
                if change is not None and abs(change) > CLOCK_TOLERANCE_PCT:
                    return (
                        f"the {precision} roof measured in the reports differs by {change:+.1f}% "
                        "(different clocks)",
                        None,
                    )
        else:
            unchecked.append(f"{b.roofs.source} vs {h.roofs.source}")
    unnamed = [side for side, names in zip(("base", "head"), named, strict=True) if None in names]
    notes = [f"GPUs not compared: a device of the {' and the '.join(unnamed)} names none"] if unnamed else []
    if unchecked:
        notes.append(
            "clocks not compared: no measured SM clock to compare, and the roofs are not measured in "
            f"the reports ({', '.join(dict.fromkeys(unchecked))}); check that both runs used the same "
            "clock settings"
        )
    return None, "; ".join(notes) or None


def kernel_pairs(result: Diff) -> dict[GroupKey, list[int]]:
    """The pairs of each kernel and launch shape (name, grid, block), in first-pair order."""
    key = ["name", "grid", "block"]
    groups = result.pairs.select(*key).with_row_index("row").group_by(key, maintain_order=True).agg("row")
    return {(name, grid, block): rows for name, grid, block, rows in groups.iter_rows()}


GATE_CONFIDENCE = 0.99  # the confidence of the interval a repeated kernel is gated on (as `history check`)


def gate(result: Diff, fail_on_regression_pct: float) -> None:
    """GateError (exit 1) when a kernel or the total got slower by more than the given percent: a
    kernel (name, grid, block) with an interval at `GATE_CONFIDENCE` when its shift is a regression
    (`Shift.verdict`), any other when its matched launch's time grew by more than the limit. The
    message counts kernels as the diff's headline does ("N slower"), and the total apart."""
    limit = fail_on_regression_pct
    base_s, head_s = sides(result.pairs, "duration_s")
    every = {k: shift(head_s[r], base_s[r], GATE_CONFIDENCE) for k, r in kernel_pairs(result).items()}
    shifts = {key: found for key, found in every.items() if found is not None and found.low_pct is not None}
    change = pl.col("duration_s").struct.field("delta_pct").fill_null(0.0)
    slower = [
        (k.name, k.duration_s.delta_pct or 0.0, "")
        for k in FrameRows(result.pairs.filter(change > limit), kernel_diff)
        if (k.name, k.grid, k.block) not in shifts
    ]
    for (name, _, _), found in shifts.items():
        if found.verdict(limit) is Movement.REGRESSION:
            interval = f" {found.interval} at {found.confidence:.0%}: real, reaching {limit:g}%"
            slower.append((name, found.shift_pct, interval))
    slower.sort(key=lambda item: -item[1])  # stable: the first pair of the worst change first
    noun = "kernel" if len(slower) == 1 else "kernels"
    parts = [  # the worst kernel, and the total
        f"{len(slower)} {noun} slower by more than {limit:g}% (worst {name} {pct:+.1f}%{interval})"
        for name, pct, interval in slower[:1]
    ]
    total = result.total_duration_s.delta_pct
    if total is not None and total > limit:
        parts.append(f"the total time is {total:+.1f}%")
    if parts:
        hint = "see the diff table; raise --fail-on-regression if this is expected"
        raise GateError("; ".join(parts), hint=hint)


def _device_names(analysis: Analysis) -> tuple[str, ...]:
    return tuple(sorted({device_name(d) for d in analysis.devices}))
