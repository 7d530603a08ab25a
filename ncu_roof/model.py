"""The roofline model, shared by `analyze` and `predict`: pure functions, SI units.

For every tier with bytes, cap = min(peak, bandwidth × intensity); the lowest cap binds.
Equivalently, each roof implies a minimum time (FLOPs / peak, bytes / bandwidth) and the longest
one binds; the time form also covers a kernel with zero FLOPs (pure memory traffic), whose caps
are all zero, without dividing by zero. A tie between compute and memory is compute-bound
(intensity ≥ ridge point, as in the seeds).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

PRECISIONS = ("fp64", "fp32", "fp16", "tensor")
TIERS = ("dram", "l2", "l1", "shared")
SOL_KEYS = ("sm", "memory", "dram", "l2", "l1")  # Nsight's Speed-of-Light percentages
COMPUTE = "compute"
LATENCY_SOL_PCT = 60.0  # Nsight's SOLBottleneck rule: neither SM nor memory reaches 60 % → latency


class Bound(Enum):
    MEMORY = "memory"
    COMPUTE = "compute"
    LATENCY = "latency"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Roofs:
    """Peaks per precision (FLOP/s) and bandwidth per tier (byte/s); tier names are free."""

    compute_flop_per_s: Mapping[str, float]
    bandwidth_byte_per_s: Mapping[str, float]
    source: str
    sources: Mapping[str, str] = field(default_factory=dict)
    name: str | None = None


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
    unroofed: tuple[str, ...] = ()  # tiers with traffic but no roof: nothing can be said


def finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def finite_or_none(value: float | None) -> float | None:
    """The value, or None when it is missing or not finite (JSON's null, never 0)."""
    return value if value is not None and math.isfinite(value) else None


DEFAULT_PRECISIONS = ("fp32", "fp64", "fp16", "tensor")  # the roof shown when a kernel has no FLOPs


@dataclass(frozen=True)
class RooflineArrays:
    """`roofline_arrays` for n kernels at once: one array (n,) per quantity, NaN where undefined."""

    intensity_flop_per_byte: Mapping[str, np.ndarray]
    ridge_flop_per_byte: Mapping[str, np.ndarray]
    cap_flop_per_s: Mapping[str, np.ndarray]  # per tier, plus "compute"
    attainable_flop_per_s: np.ndarray
    binding: np.ndarray  # object: a tier name, "compute", or None
    time_at_roof_s: np.ndarray
    unroofed: Mapping[str, np.ndarray] = field(default_factory=dict)  # bool: traffic, no roof


Roof = float | np.ndarray  # one value for every kernel, or one per kernel


def _per_kernel(value: Roof | None, n: int) -> np.ndarray:
    """A roof as n values, NaN where it is missing, zero or negative."""
    array = np.broadcast_to(np.asarray(np.nan if value is None else value, dtype="float64"), (n,))
    return np.where(np.isfinite(array) & (array > 0), array, np.nan)


def compute_roof_arrays(
    flop_by_precision: Mapping[str, np.ndarray], peaks: Mapping[str, Roof]
) -> tuple[np.ndarray, np.ndarray]:
    """Compute roof and dominant precision of n kernels (see `compute_roof`); needs ≥ 1 precision."""
    names = list(flop_by_precision)
    flops = np.column_stack([np.asarray(flop_by_precision[p], dtype="float64") for p in names])
    n = flops.shape[0]
    peak = np.column_stack([_per_kernel(peaks.get(p), n) for p in names])
    work = np.nan_to_num(flops, nan=0.0) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = np.where(work, flops / peak, 0.0).sum(axis=1)
        combined = np.where(work, flops, 0.0).sum(axis=1) / seconds
    dominant = np.array(names, dtype=object)[np.argmax(np.where(work, flops, -1.0), axis=1)]
    any_work = work.any(axis=1)
    first = next((p for p in DEFAULT_PRECISIONS if p in peaks), None)
    default = _per_kernel(peaks.get(first) if first else None, n)
    roof = np.where(any_work, combined, default)
    nothing = np.full(n, None, dtype=object)
    return roof, np.where(any_work, dominant, nothing)


def compute_roof(
    flop_by_precision: Mapping[str, float | None], peaks: Mapping[str, Roof]
) -> tuple[float | None, str | None]:
    """The compute roof of a kernel and its dominant precision.

    With several precisions, the roof is the FLOP-weighted harmonic combination of their peaks
    (the time the FLOPs would take, each at its own peak), so a kernel with one precision gets
    exactly that precision's peak. A precision with FLOPs but no peak leaves the roof unknown.
    """
    arrays = {
        p: np.array([np.nan if f is None else f], dtype="float64") for p, f in flop_by_precision.items()
    }
    if not arrays:
        arrays = {DEFAULT_PRECISIONS[0]: np.array([np.nan])}
    roof, dominant = compute_roof_arrays(arrays, peaks)
    return _scalar(roof[0]), dominant[0]


def roofline_arrays(
    flop: np.ndarray,
    bytes_by_tier: Mapping[str, np.ndarray],
    peak_flop_per_s: np.ndarray,
    bandwidth_byte_per_s: Mapping[str, Roof],
) -> RooflineArrays:
    """Place n kernels against their roofs (one value per tier for all, or one per kernel)."""
    flop = np.asarray(flop, dtype="float64")
    peak = np.asarray(peak_flop_per_s, dtype="float64")
    has_peak = np.isfinite(peak) & (peak > 0)
    has_flop = np.isfinite(flop)
    intensity: dict[str, np.ndarray] = {}
    ridge: dict[str, np.ndarray] = {}
    caps: dict[str, np.ndarray] = {}
    times: dict[str, np.ndarray] = {}
    unroofed: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for tier, raw in bytes_by_tier.items():
            bandwidth = _per_kernel(bandwidth_byte_per_s.get(tier), len(flop))
            nbytes = np.asarray(raw, dtype="float64")
            # traffic without a roof: the tier may bind, so no verdict (never a silent skip)
            unroofed[tier] = np.isfinite(nbytes) & (nbytes > 0) & np.isnan(bandwidth)
            if np.isnan(bandwidth).all():
                continue
            valid = np.isfinite(nbytes) & (nbytes >= 0) & np.isfinite(bandwidth)
            times[tier] = np.where(valid, nbytes / bandwidth, np.nan)
            ridge[tier] = np.where(has_peak & np.isfinite(bandwidth), peak / bandwidth, np.nan)
            ai = np.where(valid & has_flop, np.where(nbytes > 0, flop / nbytes, np.inf), np.nan)
            memory_cap = bandwidth * ai
            intensity[tier] = ai
            caps[tier] = np.where(has_peak, np.fmin(peak, memory_cap), memory_cap)
            caps[tier] = np.where(np.isnan(ai), np.nan, caps[tier])
        computable = has_flop & has_peak
        times[COMPUTE] = np.where(computable, flop / peak, np.nan)
        caps[COMPUTE] = np.where(computable, peak, np.nan)
    timing = np.column_stack(list(times.values()))
    filled = np.where(np.isnan(timing), -np.inf, timing)
    longest = filled.max(axis=1)
    names = np.array(list(times), dtype=object)
    compute_wins = filled[:, list(times).index(COMPUTE)] >= longest
    binding = np.where(compute_wins, COMPUTE, names[np.argmax(filled, axis=1)])
    # unknown FLOPs: the compute roof cannot be placed, so no roof can be said to bind
    blind = np.logical_or.reduce([*unroofed.values(), np.zeros(len(flop), dtype=bool)])
    decided = (longest > 0) & has_flop & ~blind
    binding = np.where(decided, binding, np.full(len(binding), None, dtype=object))
    cap_matrix = np.column_stack(list(caps.values()))
    attainable = np.where(
        np.isnan(cap_matrix).all(axis=1) | blind,
        np.nan,
        np.nanmin(np.where(np.isnan(cap_matrix), np.inf, cap_matrix), axis=1),
    )
    return RooflineArrays(
        intensity_flop_per_byte=intensity,
        ridge_flop_per_byte=ridge,
        cap_flop_per_s=caps,
        attainable_flop_per_s=attainable,
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
) -> RooflinePoint:
    """Place one kernel against its roofs (`roofline_arrays` for n = 1). Missing inputs give None."""

    def one(value: float | None) -> np.ndarray:
        return np.array([np.nan if value is None else value], dtype="float64")

    arrays = roofline_arrays(
        one(flop), {t: one(b) for t, b in bytes_by_tier.items()}, one(peak_flop_per_s), bandwidth_byte_per_s
    )
    return point_at(arrays, 0, flop, peak_flop_per_s, compute_precision)


def point_at(
    arrays: RooflineArrays,
    i: int,
    flop: float | None,
    peak_flop_per_s: float | None,
    compute_precision: str | None,
) -> RooflinePoint:
    """Kernel `i` of a `roofline_arrays` result, with NaN entries left out."""

    def present(values: Mapping[str, np.ndarray]) -> dict[str, float]:
        return {k: float(v[i]) for k, v in values.items() if not np.isnan(v[i])}

    return RooflinePoint(
        flop=flop if finite(flop) else None,
        intensity_flop_per_byte=present(arrays.intensity_flop_per_byte),
        ridge_flop_per_byte=present(arrays.ridge_flop_per_byte),
        cap_flop_per_s=present(arrays.cap_flop_per_s),
        peak_flop_per_s=peak_flop_per_s,
        compute_precision=compute_precision,
        attainable_flop_per_s=_scalar(arrays.attainable_flop_per_s[i]),
        binding=arrays.binding[i],
        time_at_roof_s=_scalar(arrays.time_at_roof_s[i]),
        unroofed=tuple(t for t, v in arrays.unroofed.items() if v[i]),
    )


def _scalar(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def bound_of(binding: str | None) -> Bound:
    if binding is None:
        return Bound.UNKNOWN
    return Bound.COMPUTE if binding == COMPUTE else Bound.MEMORY


def is_latency_bound(sol_sm_pct: float | None, sol_memory_pct: float | None) -> bool:
    """Nsight's rule: neither SM nor memory throughput reaches 60 % of its peak."""
    if not (finite(sol_sm_pct) and finite(sol_memory_pct)):
        return False
    assert sol_sm_pct is not None and sol_memory_pct is not None
    return sol_sm_pct < LATENCY_SOL_PCT and sol_memory_pct < LATENCY_SOL_PCT
