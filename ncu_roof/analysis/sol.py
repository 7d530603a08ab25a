"""Nsight's Speed-of-Light rule (SOLBottleneck) for n kernels, and the ladder that combines it with
the roofline's binding roof into one verdict; pure functions over SI numbers and percentages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ncu_roof.analysis.model import busiest, is_set, objects
from ncu_roof.base.arrays import equals
from ncu_roof.base.vocabulary import COMPUTE, SOL_MEMORY_UNITS, Bound, VerdictBasis

# Nsight's SOLBottleneck rule (sections/SpeedOfLight.py): neither SM nor memory reaches 60 % →
# latency ("small grid" under one wave); 10 points or more apart, or either at 80 % or more → bound
# by the busier one; otherwise balanced.
LATENCY_SOL_PCT = 60.0
BALANCED_SOL_POINTS = 10.0
HIGH_THROUGHPUT_SOL_PCT = 80.0
SMALL_GRID_WAVES = 1.0


@dataclass(frozen=True)
class SolArrays:
    """Nsight's SOLBottleneck rule for n kernels."""

    bound: np.ndarray  # object: Bound (UNKNOWN where SM or memory SOL is missing)
    unit: np.ndarray  # object: busiest memory unit ("dram", "l2", "l1") of a memory-bound kernel, or None
    small_grid: np.ndarray  # bool: latency-bound with under one wave per SM


def sol_arrays(
    sm_pct: np.ndarray, memory_pct: np.ndarray, breakdown_pct: Mapping[str, np.ndarray], waves: np.ndarray
) -> SolArrays:
    """Classify n kernels by SOL percentages alone (no roofs, counters); `breakdown_pct`: the memory units."""
    sm, mem = sm_pct, memory_pct
    known = np.isfinite(sm) & np.isfinite(mem)
    high = (sm >= HIGH_THROUGHPUT_SOL_PCT) | (mem >= HIGH_THROUGHPUT_SOL_PCT)
    latency = known & ~high & (sm < LATENCY_SOL_PCT) & (mem < LATENCY_SOL_PCT)
    decided = known & ~latency & (high | (np.abs(sm - mem) >= BALANCED_SOL_POINTS))
    memory = decided & (mem > sm)
    compute, balanced = decided & ~memory, known & ~latency & ~decided
    n = len(sm)
    bound = objects(Bound.UNKNOWN, n)
    for mask, value in ((latency, Bound.LATENCY), (compute, Bound.COMPUTE), (memory, Bound.MEMORY)):
        bound[mask] = value
    bound[balanced] = Bound.BALANCED
    unit = np.where(memory, busiest_unit_arrays(breakdown_pct, n)[1], objects(None, n))
    return SolArrays(bound=bound, unit=unit, small_grid=latency & (waves < SMALL_GRID_WAVES))


@dataclass(frozen=True)
class VerdictArrays:
    bound: np.ndarray  # object: Bound
    basis: np.ndarray  # object: VerdictBasis
    disagrees: np.ndarray  # bool: roofline and SOL both decided, one compute, the other memory


def verdict_arrays(binding: np.ndarray, roofline_supported: np.ndarray, sol: SolArrays) -> VerdictArrays:
    """The verdict ladder: the roofline where its data allow, then SOL alone (latency first), else unknown;
    where both decide and SOL says otherwise (the other side, or latency), `disagrees`: both shown."""
    has_roofline = roofline_supported & is_set(binding)
    compute = equals(binding, COMPUTE)
    memory = is_set(binding) & ~compute
    bound = sol.bound.copy()
    bound[has_roofline & memory] = Bound.MEMORY
    bound[has_roofline & compute] = Bound.COMPUTE
    basis = objects(VerdictBasis.NONE, len(binding))
    basis[~equals(sol.bound, Bound.UNKNOWN)] = VerdictBasis.SOL
    basis[has_roofline] = VerdictBasis.ROOFLINE
    opposite = (compute & equals(sol.bound, Bound.MEMORY)) | (memory & equals(sol.bound, Bound.COMPUTE))
    disagrees = has_roofline & (opposite | equals(sol.bound, Bound.LATENCY))
    return VerdictArrays(bound=bound, basis=basis, disagrees=disagrees)


# The busiest unit of Speed of Light: the memory breakdown first, so that a tie with the
# compute-memory figure (the largest of the memory units) names the unit itself
BUSIEST_UNIT_ORDER = (*SOL_MEMORY_UNITS, "sm", "memory")


def busiest_unit_arrays(sol_pct: Mapping[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per launch, its busiest Speed-of-Light unit's throughput % and the unit ("dram", "l2",
    "l1", "sm", "memory"); NaN and None for a launch without any SOL percentage."""
    return busiest({u: sol_pct[u] for u in BUSIEST_UNIT_ORDER if u in sol_pct}, n)


def headroom_array(duration_s: np.ndarray, pct: np.ndarray) -> np.ndarray:
    """Seconds a launch would save at the roof it reaches `pct` % of (binding roof, or busiest SOL unit at its
    access pattern and mix): duration × (1 − pct / 100); NaN without either, or over 100 % (bad data)."""
    duration = np.asarray(duration_s, dtype="float64")
    pct = np.asarray(pct, dtype="float64")
    known = np.isfinite(duration) & (duration > 0) & np.isfinite(pct) & (pct >= 0) & (pct <= 100.0)
    with np.errstate(invalid="ignore"):
        return np.where(known, duration * (1.0 - pct / 100.0), np.nan)
