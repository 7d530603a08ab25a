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


def finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def compute_roof(
    flop_by_precision: Mapping[str, float | None], peaks: Mapping[str, float]
) -> tuple[float | None, str | None]:
    """The compute roof of a kernel and its dominant precision.

    With several precisions, the roof is the FLOP-weighted harmonic combination of their peaks
    (the time the FLOPs would take, each at its own peak), so a kernel with one precision gets
    exactly that precision's peak.
    """
    work = {p: f for p, f in flop_by_precision.items() if finite(f) and f is not None and f > 0}
    if not work:
        usable = [p for p in ("fp32", "fp64", "fp16", "tensor") if p in peaks]
        return (peaks[usable[0]], None) if usable else (None, None)
    dominant = max(work, key=lambda p: work[p])
    if any(p not in peaks or not peaks[p] > 0 for p in work):
        return None, dominant
    seconds = sum(f / peaks[p] for p, f in work.items())
    return sum(work.values()) / seconds, dominant


def roofline(
    flop: float | None,
    bytes_by_tier: Mapping[str, float | None],
    peak_flop_per_s: float | None,
    bandwidth_byte_per_s: Mapping[str, float],
    compute_precision: str | None = None,
) -> RooflinePoint:
    """Place one kernel against its roofs. Missing inputs give None, never a guess."""
    tiers = {
        t: b
        for t, b in bytes_by_tier.items()
        if b is not None and finite(b) and b >= 0 and bandwidth_byte_per_s.get(t, 0) > 0
    }
    intensity: dict[str, float] = {}
    ridge: dict[str, float] = {}
    caps: dict[str, float] = {}
    times: dict[str, float] = {}
    have_flop = flop is not None and finite(flop)
    for tier, nbytes in tiers.items():
        bandwidth = bandwidth_byte_per_s[tier]
        times[tier] = nbytes / bandwidth
        if peak_flop_per_s is not None and peak_flop_per_s > 0:
            ridge[tier] = peak_flop_per_s / bandwidth
        if have_flop and flop is not None:
            ai = flop / nbytes if nbytes > 0 else math.inf
            intensity[tier] = ai
            memory_cap = bandwidth * ai
            caps[tier] = memory_cap if peak_flop_per_s is None else min(peak_flop_per_s, memory_cap)
    if have_flop and flop is not None and peak_flop_per_s is not None and peak_flop_per_s > 0:
        times[COMPUTE] = flop / peak_flop_per_s
        caps[COMPUTE] = peak_flop_per_s
    binding = _binding(times)
    time_at_roof = times[binding] if binding is not None else None
    attainable = min(caps.values()) if caps else None
    return RooflinePoint(
        flop=flop if have_flop else None,
        intensity_flop_per_byte=intensity,
        ridge_flop_per_byte=ridge,
        cap_flop_per_s=caps,
        peak_flop_per_s=peak_flop_per_s,
        compute_precision=compute_precision,
        attainable_flop_per_s=attainable,
        binding=binding,
        time_at_roof_s=time_at_roof,
    )


def _binding(times: Mapping[str, float]) -> str | None:
    if not times or max(times.values()) <= 0:
        return None
    longest = max(times.values())
    if times.get(COMPUTE, -1.0) >= longest:
        return COMPUTE
    return max((t for t in times if t != COMPUTE), key=lambda t: times[t])


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
