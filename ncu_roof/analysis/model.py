"""The roofline model, shared by `analyze` and `predict`: pure functions, SI units.

For every tier with bytes, cap = min(peak, bandwidth × intensity); the lowest cap binds.
Equivalently, each roof implies a minimum time (FLOPs / peak, bytes / bandwidth) and the longest
one binds; the time form also covers a kernel with zero FLOPs (pure memory traffic), whose caps
are all zero, without dividing by zero. A tie between compute and memory is compute-bound
(intensity ≥ ridge point, as in the seeds)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ncu_roof.base.arrays import equals, object_array
from ncu_roof.base.vocabulary import COMPUTE, Bound


@dataclass(frozen=True)
class RooflinePoint:
    """Where one kernel (measured or predicted) sits against one set of roofs."""

    flop: float | None
    intensity_flop_per_byte: Mapping[str, float]
    ridge_flop_per_byte: Mapping[str, float]
    cap_flop_per_s: Mapping[str, float]  # per tier, plus "compute"
    peak_flop_per_s: float | None  # the compute roof used (FLOP-weighted over precisions)
    compute_precision: str | None  # the precision that dominates the FLOPs
    attainable_flop_per_s: float | None
    binding: str | None  # a tier name, "compute", or None when nothing can be said
    time_at_roof_s: float | None


def finite_or_none(value: float | None) -> float | None:
    """The value, or None when it is missing or not finite (JSON's null, never 0)."""
    return value if value is not None and math.isfinite(value) else None


def finite_map(values: Mapping[str, float]) -> dict[str, float | None]:
    return {k: finite_or_none(v) for k, v in values.items()}


DEFAULT_PRECISIONS = ("fp32", "fp64", "fp16", "tensor")  # the roof shown when a kernel has no FLOPs


def default_precision(peaks: Mapping[str, object]) -> str | None:
    return next((p for p in DEFAULT_PRECISIONS if p in peaks), None)


@dataclass(frozen=True)
class RooflineArrays:
    """`roofline_arrays` for n kernels at once: one array (n,) per quantity, NaN where undefined."""

    intensity_flop_per_byte: Mapping[str, np.ndarray]
    ridge_flop_per_byte: Mapping[str, np.ndarray]
    cap_flop_per_s: Mapping[str, np.ndarray]  # per tier, plus "compute"
    attainable_flop_per_s: np.ndarray
    binding: np.ndarray  # object: a tier name, "compute", or None
    time_at_roof_s: np.ndarray
    unroofed: Mapping[str, np.ndarray]  # bool, per tier: traffic, no roof; per precision: FLOPs, no peak


Roof = float | np.ndarray  # one value for every kernel, or one per kernel


def per_kernel(value: Roof | None, n: int) -> np.ndarray:
    """A roof as n values, NaN where it is missing, zero or negative."""
    array = np.broadcast_to(np.asarray(np.nan if value is None else value, dtype="float64"), (n,))
    return np.where(np.isfinite(array) & (array > 0), array, np.nan)


def _at_peaks(
    work_by_kind: Mapping[str, np.ndarray], peaks: Mapping[str, Roof]
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Per kind of work: its amounts, where some was done (NaN: none), and the seconds it takes
    at its own peak (0 where none was done, NaN where it has no peak)."""
    work = [np.asarray(w, dtype="float64") for w in work_by_kind.values()]
    busy = [np.nan_to_num(w, nan=0.0) > 0 for w in work]
    peak = [per_kernel(peaks.get(k), len(work[0])) for k in work_by_kind]
    with np.errstate(all="ignore"):
        seconds = [np.where(b, w / p, 0.0) for w, p, b in zip(work, peak, busy, strict=True)]
    return work, busy, seconds


def compute_roof_arrays(
    flop_by_precision: Mapping[str, np.ndarray], peaks: Mapping[str, Roof]
) -> tuple[np.ndarray, np.ndarray]:
    """n kernels' compute roof and dominant precision (of ≥ 1): the FLOP-weighted harmonic mean of the peaks
    (the FLOPs' time at each peak), one precision: exactly its peak; FLOPs without a peak: unknown."""
    names = list(flop_by_precision)
    flops, work, seconds = _at_peaks(flop_by_precision, peaks)
    # summed as numpy adds a row of the matrix of the columns side by side, as ever: bit for bit
    done = np.column_stack([np.where(w, f, 0.0) for f, w in zip(flops, work, strict=True)]).sum(axis=1)
    with np.errstate(all="ignore"):
        combined = done / np.column_stack(seconds).sum(axis=1)
    dominant = row_max([np.where(w, f, -1.0) for f, w in zip(flops, work, strict=True)])[1]
    any_work, first = np.logical_or.reduce(work), default_precision(peaks)
    roof = np.where(any_work, combined, per_kernel(peaks[first] if first else None, len(done)))
    precisions = object_array([*names, None])  # None (the last): no work
    return roof, precisions[np.where(any_work, dominant, len(names))]


def intensity_array(flop: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """FLOP per byte; over no bytes ∞ for work and none for no work (0 / 0); NaN where either is unknown."""
    with np.errstate(all="ignore"):
        out: np.ndarray = np.where(nbytes > 0, flop / nbytes, np.where(flop > 0, np.inf, np.nan))
    return np.where(np.isnan(flop) | np.isnan(nbytes), np.nan, out)


def roofline_arrays(
    flop: np.ndarray,
    bytes_by_tier: Mapping[str, np.ndarray],
    peak_flop_per_s: np.ndarray,
    bandwidth_byte_per_s: Mapping[str, Roof],
    compute_time_s: np.ndarray,
    unpeaked: Mapping[str, np.ndarray] | None = None,
) -> RooflineArrays:
    """Place n kernels against their roofs (one per tier, or per kernel); `compute_time_s`, where finite, is
    the compute roof's time instead of FLOP / peak: every compute ceiling's (integer operations at their
    peaks, the busiest pipe), so non-floating-point work can be compute-bound. `unpeaked` (per precision):
    launches whose FLOPs of it lack a peak: as with traffic without a roof, no roof can be said to bind."""
    peak, n = peak_flop_per_s, len(flop)
    has_peak, has_flop = np.isfinite(peak) & (peak > 0), np.isfinite(flop)
    bandwidth = {tier: per_kernel(bandwidth_byte_per_s.get(tier), n) for tier in bytes_by_tier}
    # traffic without a roof: the tier may bind, so no verdict (never a silent skip)
    unroofed = {t: np.isfinite(b) & (b > 0) & np.isnan(bandwidth[t]) for t, b in bytes_by_tier.items()}
    unroofed |= dict(unpeaked or {})
    roofed = {t: b for t, b in bytes_by_tier.items() if not np.isnan(bandwidth[t]).all()}
    valid = {t: np.isfinite(b) & (b >= 0) & np.isfinite(bandwidth[t]) for t, b in roofed.items()}
    with np.errstate(all="ignore"):
        computable, has_other = has_flop & has_peak, np.isfinite(compute_time_s)
        compute_s = np.fmax(
            np.where(computable, flop / peak, np.nan), np.where(has_other, compute_time_s, np.nan)
        )
        # the compute cap in FLOP/s: the peak, or the FLOPs over the compute roof's time when
        # another ceiling (integer work, a busy pipe) takes longer than the FLOPs at their peak
        slower = has_other & (flop > 0) & (compute_s > 0)
        compute_cap = np.where(slower, flop / compute_s, np.where(computable, peak, np.nan))
        tier_s = {t: np.where(valid[t], b / bandwidth[t], np.nan) for t, b in roofed.items()}
        ridge = {
            t: np.where(has_peak & np.isfinite(bandwidth[t]), peak / bandwidth[t], np.nan) for t in roofed
        }
        intensity = {t: np.where(valid[t], intensity_array(flop, b), np.nan) for t, b in roofed.items()}
        caps = {
            t: np.where(np.isnan(ai), np.nan, np.fmin(compute_cap, bandwidth[t] * ai))
            for t, ai in intensity.items()
        }
    times = {**tier_s, COMPUTE: compute_s}
    filled = [np.where(np.isnan(t), -np.inf, t) for t in times.values()]
    longest, slowest = row_max(filled)
    which = np.where(filled[-1] >= longest, len(tier_s), slowest)  # the compute roof: the last
    # unknown FLOPs and no other compute ceiling: no roof can be said to bind; nor can one when
    # a tier has traffic but no roof
    blind = np.logical_or.reduce([*unroofed.values(), np.zeros(n, dtype=bool)])
    # and no traffic measured on any tier: nothing to weigh the compute roof against
    weighed = np.logical_or.reduce([*(np.isfinite(t) for t in tier_s.values()), np.zeros(n, dtype=bool)])
    decided = (longest > 0) & (has_flop | has_other) & weighed & ~blind
    names = object_array([*times, None])  # the roof that binds; None (the last) where undecided
    binding = names[np.where(decided, which, len(times))]
    # no FLOPs: a cap in FLOP/s says nothing (every tier's is 0 and the compute one the peak,
    # whatever binds), so caps and attainable are undefined; the binding roof and the time at it
    # still are (time cancels no work: integer work or a busy pipe may bind)
    caps = {tier: np.where(flop == 0, np.nan, cap) for tier, cap in {**caps, COMPUTE: compute_cap}.items()}
    lowest = np.fmin.reduce(list(caps.values()))  # the lowest cap binds (NaN: none known)
    return RooflineArrays(
        intensity_flop_per_byte=intensity,
        ridge_flop_per_byte=ridge,
        cap_flop_per_s=caps,
        attainable_flop_per_s=np.where(np.isnan(lowest) | blind | ~weighed, np.nan, lowest),
        binding=binding,
        time_at_roof_s=np.where(decided, longest, np.nan),
        unroofed=unroofed,
    )


def roofline(
    flop: float | None,
    bytes_by_tier: Mapping[str, float | None],
    peak_flop_per_s: float | None,
    bandwidth_byte_per_s: Mapping[str, float],
    compute_precision: str | None = None,
    compute_time_s: float | None = None,
) -> RooflinePoint:
    """Place one kernel against its roofs (`roofline_arrays` for n = 1). Missing inputs give None."""

    def one(value: float | None) -> np.ndarray:
        return np.array([np.nan if value is None else value], dtype="float64")

    nbytes = {t: one(b) for t, b in bytes_by_tier.items()}
    arrays = roofline_arrays(
        one(flop), nbytes, one(peak_flop_per_s), bandwidth_byte_per_s, one(compute_time_s)
    )

    def present(values: Mapping[str, np.ndarray]) -> dict[str, float]:
        return {k: float(v[0]) for k, v in values.items() if not np.isnan(v[0])}

    return RooflinePoint(
        flop=finite_or_none(flop),
        intensity_flop_per_byte=present(arrays.intensity_flop_per_byte),
        ridge_flop_per_byte=present(arrays.ridge_flop_per_byte),
        cap_flop_per_s=present(arrays.cap_flop_per_s),
        peak_flop_per_s=peak_flop_per_s,
        compute_precision=compute_precision,
        attainable_flop_per_s=nan_to_none(arrays.attainable_flop_per_s[0]),
        binding=arrays.binding[0],
        time_at_roof_s=nan_to_none(arrays.time_at_roof_s[0]),
    )


def known_sum(values: np.ndarray, exact: bool = False) -> float:
    """The sum of the values that are not NaN (`exact`: correctly rounded, `math.fsum`, as durations
    are summed; else numpy's, as the figures are); NaN where none is."""
    known = values[~np.isnan(values)]
    return (math.fsum(known.tolist()) if exact else float(known.sum())) if len(known) else math.nan


def nan_to_none(value: float) -> float | None:
    """A number, None where it is NaN (missing, never 0)."""
    return None if math.isnan(value) else float(value)


def work_time_arrays(
    work_by_kind: Mapping[str, np.ndarray], peaks: Mapping[str, Roof]
) -> tuple[np.ndarray, np.ndarray]:
    """n kernels' work time: each kind (FLOPs per precision, integer-path ops) at its peak, summed, and the
    slowest; NaN where work lacks a peak or none was measured, kind None for no work. Needs ≥ 1 kind."""
    names = list(work_by_kind)
    work, busy, seconds = _at_peaks(work_by_kind, peaks)
    total = np.column_stack(seconds).sum(axis=1)
    total = np.where(np.logical_and.reduce([np.isnan(w) for w in work]), np.nan, total)
    ranked = [np.where(b, np.nan_to_num(s, nan=np.inf), -1.0) for b, s in zip(busy, seconds, strict=True)]
    kinds = object_array([*names, None])  # None (the last): nothing was done
    return total, kinds[np.where(np.logical_or.reduce(busy), row_max(ranked)[1], len(names))]


def objects(value: object, n: int) -> np.ndarray:
    """n references to one Python value (an enum, a name, None) as an object array (`np.full` of
    a text makes a text object per row, at 70x the cost, and launches no longer share it)."""
    out = np.empty(n, dtype=object)
    out.fill(value)
    return out


def row_max(columns: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the columns' largest (NaN largest) and the first column with it: axis-1 `max` and `argmax`
    without the n x k matrix (numpy reduces its short axis row by row, up to 20x slower). Needs ≥ 1 column."""
    best = np.array(columns[0], dtype="float64")
    at = np.zeros(len(best), dtype=np.int64)
    for i, column in enumerate(columns[1:], start=1):
        better = (column > best) | (np.isnan(column) & ~np.isnan(best))
        at[better] = i
        best[better] = column[better]
    return best, at


def busiest(columns: Mapping[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the largest known value and its column's key (first on a tie); NaN and None where none is."""
    if not columns:
        return np.full(n, np.nan), objects(None, n)
    values = (np.asarray(c, dtype="float64") for c in columns.values())
    best, at = row_max([np.where(np.isnan(c), -np.inf, c) for c in values])
    known = best > -np.inf  # an inf stays inf (`inf%`), not the largest float
    return np.where(known, best, np.nan), object_array([*columns, None])[np.where(known, at, len(columns))]


# Pipes that execute arithmetic: the busiest is a compute ceiling. Load/store, texture, address and
# branch pipes move or steer data; their traffic is judged by the memory tiers.
NON_COMPUTE_PIPES = ("lsu", "tex", "adu", "ipa", "cbu", "tma")


def busiest_pipe(pipes: Mapping[str, np.ndarray], rows: np.ndarray, compute_only: bool = True) -> np.ndarray:
    """These rows' busiest arithmetic pipe (any: not `compute_only`) as `alu pipe 76%`; None: none."""
    skipped = NON_COMPUTE_PIPES if compute_only else ()
    chosen = {f"{p} pipe ": a[rows] for p, a in pipes.items() if not p.startswith(skipped)}
    pct, pipe = busiest(chosen, len(rows))
    named = is_set(pipe)
    pipe[named] = pipe[named] + fixed(pct[named], 0) + "%"
    return pipe


def bit_codes(flags: Sequence[np.ndarray]) -> np.ndarray:
    """Per row, its flags as the bits of one integer (bit i: `flags[i]`; one flag or more, at most
    62), set column by column (a boolean matrix times the powers of two ran row by row)."""
    codes = np.zeros(len(flags[0]), dtype=np.int64)
    for i, flag in enumerate(flags):
        codes |= flag.astype(np.int64) << i
    return codes


def fixed(values: np.ndarray, digits: int) -> np.ndarray:
    """Each number as `f"{v:.{digits}f}"`, an object array (to join elementwise with `+`). Whole
    numbers are formatted once per distinct rounded value (percentages: ~100 formats, not one a
    row): `rint` rounds as `format` does (half to even, exact binary value; -0.4 is -0.0, `-0`)."""
    if digits == 0 and len(values) > 1024:
        rounded = np.rint(values)
        distinct, inverse = np.unique(rounded, return_inverse=True)
        out: np.ndarray = object_array(list(map("{:.0f}".format, distinct.tolist())))[inverse.ravel()]
        zero = rounded == 0  # 0.0 and -0.0 are one value to `unique`, not to `format`
        out[zero] = np.where(np.signbit(rounded[zero]), "-0", "0")
        return out
    return object_array(list(map(f"{{:.{digits}f}}".format, values.tolist())))


def is_set(values: np.ndarray) -> np.ndarray:
    return ~equals(values, None)


def bound_of(binding: str | None) -> Bound:
    return Bound.UNKNOWN if binding is None else (Bound.COMPUTE if binding == COMPUTE else Bound.MEMORY)


# Ding & Williams, "An Instruction Roofline Model for GPUs" (PMBS 2019): work = warp instructions,
# traffic = memory transactions; a global/local transaction is one 32-byte sector at L1, L2 and
# DRAM; a shared-memory transaction is one wavefront (unverified: 128 bytes, 32 banks x 4 B).
TRANSACTION_BYTES = {"dram": 32.0, "l2": 32.0, "l1": 32.0, "shared": 128.0}


@dataclass(frozen=True)
class InstructionArrays:
    """The instruction roofline of n kernels; NaN where undefined."""

    warp_inst_per_s: np.ndarray
    issue_peak_warp_inst_per_s: np.ndarray  # SMs x schedulers x SM clock: 1 warp instruction each
    intensity_warp_inst_per_transaction: Mapping[str, np.ndarray]
    transaction_peak_per_s: Mapping[str, np.ndarray]  # bandwidth / transaction size


def instruction_arrays(
    warp_inst: np.ndarray,
    duration_s: np.ndarray,
    issue_peak_warp_inst_per_s: np.ndarray,
    bytes_by_tier: Mapping[str, np.ndarray],
    bandwidth_byte_per_s: Mapping[str, Roof],
) -> InstructionArrays:
    n = len(warp_inst)
    sizes = {tier: size for tier, size in TRANSACTION_BYTES.items() if tier in bytes_by_tier}
    with np.errstate(all="ignore"):
        transactions = {tier: bytes_by_tier[tier] / size for tier, size in sizes.items()}
        timed = np.isfinite(duration_s) & (duration_s > 0)
        return InstructionArrays(
            warp_inst_per_s=np.where(timed, warp_inst / duration_s, np.nan),
            issue_peak_warp_inst_per_s=per_kernel(issue_peak_warp_inst_per_s, n),
            intensity_warp_inst_per_transaction={
                tier: np.where(t > 0, warp_inst / t, np.nan) for tier, t in transactions.items()
            },
            transaction_peak_per_s={
                t: per_kernel(bandwidth_byte_per_s.get(t), n) / s for t, s in sizes.items()
            },
        )
