"""Base vs head: time, FLOP/s, bytes, intensity and verdict of matched kernels (pure). A kernel is
judged once, for the headline, the tables and the gate (`judge`): by its time summed over its pairs
timed on both sides and, launched often enough, the interval of its launches' shift (as `history
check`); the total as its kernels. Launches on one side only are new or removed, never slower;
different GPUs or clocks are refused."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.frame import FrameRows
from ncu_roof.analysis.model import finite_or_none
from ncu_roof.analysis.records import device_name
from ncu_roof.base.shift import Movement, Shift, shift
from ncu_roof.base.text import plural
from ncu_roof.base.vocabulary import MatchBy
from ncu_roof.compare.pairs import (
    Change,
    KernelDiff,
    Status,
    classify,
    kernel_diff,
    pair_frame,
    pairing_keys,
    sides,
)
from ncu_roof.errors import GateError, UsageError

CLOCK_TOLERANCE_PCT = 2.0  # SM clocks (or report roofs) further apart than this: different clocks
GATE_CONFIDENCE = 0.99  # the confidence of the interval a repeated kernel is judged on (as `history check`)


class MismatchError(UsageError):
    """Base and head ran on different GPUs or clocks; their numbers are not comparable."""


@dataclass(frozen=True)
class KernelChange:
    """A kernel's pairs (their rows) judged as one (`judge`): its time summed over the pairs timed
    on both sides, the shift of its launches (None, or no interval: too few), its status."""

    name: str
    rows: tuple[int, ...]
    duration_s: Change
    shift: Shift | None
    status: Status


@dataclass(frozen=True)
class Diff:
    base_devices: tuple[str, ...]
    head_devices: tuple[str, ...]
    threshold_pct: float
    pairs: pl.DataFrame  # `pairs.pair_frame`: a row per pair
    paired_on: tuple[str, ...]  # `pairs.pairing_keys`
    changes: tuple[KernelChange, ...]  # a kernel each, in first-pair order
    total_duration_s: Change  # over the pairs timed on both sides
    total_status: Status
    new_s: float  # the time of launches on the head only
    removed_s: float  # on the base only
    mismatch: str | None = None  # why the runs differ, when compared anyway
    notes: tuple[str, ...] = ()  # what could not be checked (clocks)

    @property
    def kernels(self) -> FrameRows[KernelDiff]:  # each pair made when asked for
        return FrameRows(self.pairs, kernel_diff)

    def count(self, status: Status) -> int:
        """The kernels (`changes`) of this status: the headline's, the tables' and the gate's count."""
        return sum(c.status is status for c in self.changes)

    @property
    def compared(self) -> bool:
        """Whether any kernel was timed on both sides (else nothing was judged)."""
        return any(self.count(s) for s in (Status.REGRESSED, Status.IMPROVED, Status.UNCHANGED))


def diff(
    base: Analysis,
    head: Analysis,
    *,
    threshold_pct: float = 5.0,
    allow_mismatch: bool = False,
    match: MatchBy = MatchBy.NAME_SHAPE,
) -> Diff:
    """Compare two analyses; raises MismatchError for different GPUs/clocks unless allowed."""
    if not 0 <= threshold_pct < float("inf"):  # NaN too
        words = f"threshold {threshold_pct}% must be a finite, non-negative percentage"
        raise UsageError(words, hint="pass e.g. --threshold 5%")
    mismatch, clock_note = mismatch_reason(base, head)
    if mismatch and not allow_mismatch:
        raise MismatchError(
            f"cannot compare: {mismatch}",
            hint="profile both on the same GPU and clocks, or pass --allow-mismatch",
        )
    before, after = _with_ordinals(base), _with_ordinals(head)
    pairs = pair_frame(before, after, match, threshold_pct)
    paired_on = pairing_keys(before, after, match)
    base_s, head_s = sides(pairs, "duration_s")
    base_shape = before.select(base_grid="grid", base_block="block").with_row_index("base_row")
    keyed = pairs.join(
        base_shape.cast({"base_row": pl.Int64}), on="base_row", how="left", maintain_order="left"
    )
    total, changes = _timed_sums(base_s, head_s), judge(keyed, paired_on, threshold_pct)
    return Diff(
        base_devices=_device_names(base),
        head_devices=_device_names(head),
        threshold_pct=threshold_pct,
        pairs=pairs,
        paired_on=paired_on,
        changes=changes,
        total_duration_s=total,
        total_status=_total_status(total, changes, threshold_pct),
        new_s=float(np.nansum(head_s[pairs.get_column("base_row").is_null().to_numpy()])),
        removed_s=float(np.nansum(base_s[pairs.get_column("head_row").is_null().to_numpy()])),
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
        counters = [d.sm_clock_recipe.removeprefix("counter:") for d in (b, h) if d.sm_clock_recipe]
        if clocks.delta_pct is not None and len(set(counters)) > 1:  # a report's SM, a details page's GPC
            unchecked.append(f"SM clocks measured by {' vs '.join(counters)}")
        elif clocks.delta_pct is not None:
            assert clocks.base is not None and clocks.head is not None
            if abs(clocks.delta_pct) > CLOCK_TOLERANCE_PCT:
                ghz = f"{clocks.base / 1e9:.3g} GHz → {clocks.head / 1e9:.3g} GHz"
                return f"the median measured SM clock differs by {clocks.delta_pct:+.1f}% ({ghz})", None
        elif b.roofs.source == h.roofs.source == "report":
            for precision, peak in b.roofs.compute_flop_per_s.items():
                change = Change(peak, h.roofs.compute_flop_per_s.get(precision)).delta_pct
                if change is not None and abs(change) > CLOCK_TOLERANCE_PCT:
                    differs = f"differs by {change:+.1f}% (different clocks)"
                    return f"the {precision} roof measured in the reports {differs}", None
        else:
            unchecked.append(
                "no measured SM clock to compare, and the roofs are not measured in the reports "
                f"({b.roofs.source} vs {h.roofs.source})"
            )
    unnamed = [side for side, names in zip(("base", "head"), named, strict=True) if None in names]
    notes = [f"GPUs not compared: a device of the {' and the '.join(unnamed)} names none"] if unnamed else []
    if unchecked:
        notes.append(
            f"clocks not compared ({'; '.join(dict.fromkeys(unchecked))}); check that both runs used the "
            "same clock settings"
        )
    return None, "; ".join(notes) or None


def judge(pairs: pl.DataFrame, paired_on: tuple[str, ...], limit_pct: float) -> tuple[KernelChange, ...]:
    """Each kernel (a name and launch shape, and range and device where launches pair by them), in
    first-pair order, judged against the limit: on one side only, new or removed; else by the change
    of its time summed over the pairs timed on both sides (`classify`), unless its launches give a
    shift with an interval at `GATE_CONFIDENCE`: then slower when the shift is a regression
    (`Shift.verdict`) or the summed change is beyond the limit and above the interval (some launches
    moved more than noise moves them all), faster the mirror, else unchanged."""
    base_s, head_s = sides(pairs, "duration_s")
    on_base, on_head = (pairs.get_column(c).is_not_null().to_numpy() for c in ("base_row", "head_row"))
    # a kernel: the head's name and shape, and the base's where they differ (`--match order`, `name`;
    # a launch on the head only: its own shape)
    keys = [pl.col("name", "base_name", "grid", "block")]
    keys += [pl.coalesce(f"base_{c}", c).alias(f"base_{c}") for c in ("grid", "block")]
    keys += [pl.col("nvtx")] if "nvtx" in paired_on else []
    keys += [pl.coalesce("head_device", "base_device").alias("device")] if "ordinal" in paired_on else []
    groups = pairs.select(*keys).with_row_index("row").group_by(pl.exclude("row"), maintain_order=True)
    kernels = groups.agg("row").get_column("row").to_list()
    sums = [_timed_sums(base_s[rows], head_s[rows]) for rows in kernels]
    changes = []
    for rows, time_s, status in zip(kernels, sums, classify(sums, limit_pct), strict=True):
        found = shift(head_s[rows], base_s[rows], GATE_CONFIDENCE)
        if not on_base[rows].any() or not on_head[rows].any():
            status = Status.ONLY_BASE if on_base[rows].any() else Status.ONLY_HEAD
        elif found is not None and (ends := found.ends) is not None:
            pct, movement = time_s.delta_pct or 0.0, found.verdict(limit_pct)  # 0: unknown
            if movement is Movement.REGRESSION or (status is Status.REGRESSED and pct > ends[1]):
                status = Status.REGRESSED
            elif movement is Movement.IMPROVEMENT or (status is Status.IMPROVED and pct < ends[0]):
                status = Status.IMPROVED
            elif status is not Status.UNKNOWN:
                status = Status.UNCHANGED
        changes.append(KernelChange(pairs["name"][rows[0]], tuple(rows), time_s, found, status))
    return tuple(changes)


def _total_status(total: Change, changes: tuple[KernelChange, ...], limit_pct: float) -> Status:
    """The total judged as a kernel is: beyond the limit, and its interval (each kernel's base time ×
    an end of its own interval; a kernel without one: × its own change) clear of 0 or below it."""
    status, pct = classify([total], limit_pct)[0], total.delta_pct
    if status not in (Status.REGRESSED, Status.IMPROVED) or pct is None or not total.base:
        return status
    ends, noisy = np.zeros(2), False  # the total's change, were each kernel at either end of its interval
    for c in changes:
        base_s, own, own_ends = c.duration_s.base, c.duration_s.delta_pct, c.shift and c.shift.ends
        if base_s is not None and own is not None:
            ends, noisy = ends + base_s * np.array(own_ends or (own, own)), noisy or own_ends is not None
    low_pct, high_pct = ends / total.base  # without a kernel with an interval, every change as measured
    real = low_pct > 0 or pct > high_pct if status is Status.REGRESSED else high_pct < 0 or pct < low_pct
    return status if not noisy or real else Status.UNCHANGED


def _timed_sums(base_s: np.ndarray, head_s: np.ndarray) -> Change:
    """Each side's durations summed over the pairs timed on both (None: no such pair)."""
    timed = ~np.isnan(base_s) & ~np.isnan(head_s)
    return Change(*((float(s[timed].sum()) if timed.any() else None) for s in (base_s, head_s)))


def gate(result: Diff) -> None:
    """GateError (exit 1) when a kernel or the total got slower by more than the diff's threshold:
    the kernels `judge` calls slower, counted as the headline counts them, the worst named, and
    the total apart; and when no kernel could be judged (none has a time on both sides)."""
    limit = result.threshold_pct
    if not result.compared:
        keys = [w for k, w in (("ordinal", "device"), ("nvtx", "NVTX range")) if k in result.paired_on]
        within = f"launches pair within their {' and '.join(keys)}; " if keys else ""
        hints = ["profile both runs with gpu__time_duration.sum"] if result.count(Status.UNKNOWN) else []
        if result.count(Status.ONLY_HEAD) or not hints:  # launches that paired with none
            hints.append(
                f"{within}--match order pairs the n-th launches whatever their names, devices and ranges"
            )
        raise GateError(
            f"nothing compared: none of the {plural(len(result.changes), 'kernel')} has a time on both sides",
            hint="; ".join(hints),
        )

    def slower_by(c: KernelChange) -> tuple[float, str]:
        """How much slower, and why: its launches' shift where a regression, else its time's change."""
        found, summed = c.shift, c.duration_s.delta_pct or 0.0
        if found is None or found.interval is None:
            return summed, ""
        real = found.verdict(limit) is Movement.REGRESSION
        why = f"real, reaching {limit:g}%" if real else "the sum above it"
        return (found.shift_pct if real else summed), f" {found.interval} at {found.confidence:.0%}: {why}"

    regressed = (c for c in result.changes if c.status is Status.REGRESSED)
    slower = sorted(regressed, key=lambda c: -slower_by(c)[0])  # stable: the first of the worst first
    parts = [f"{plural(len(slower), 'kernel')} slower by more than {limit:g}%"] if slower else []
    if slower:
        pct, why = slower_by(slower[0])
        parts[0] += f" (worst {slower[0].name} {pct:+.1f}%{why})"
    if result.total_status is Status.REGRESSED:  # beyond its kernels' noise, as `_total_status` judges
        parts.append(f"the total time is {result.total_duration_s.delta_pct or 0.0:+.1f}%")
    if parts:
        hint = "see the diff table; raise --fail-on-regression if this is expected"
        raise GateError("; ".join(parts), hint=hint)


def _with_ordinals(analysis: Analysis) -> pl.DataFrame:
    ordinals = {d.index: d.ordinal for d in analysis.devices}
    return analysis.launches.with_columns(ordinal=pl.col("device").replace_strict(ordinals, default=0))


def _device_names(analysis: Analysis) -> tuple[str, ...]:
    return tuple(sorted({device_name(d) for d in analysis.devices}))
