"""The words every layer shares: precisions, memory tiers, Speed-of-Light keys, verdicts, `Roofs`,
the traffic a tier is judged by, how `diff` pairs kernels: the recipe names its FLOPs and bytes with
them, the roofs and the model key their peaks by them, the analysis and every sink read them. No
numpy or pandas here: the CLI may import this early."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum

PRECISIONS = ("fp64", "fp32", "fp16", "tensor")
CUDA_CORE_PRECISIONS = PRECISIONS[:3]  # the FMA pipes' FLOPs (tensor work is its own path)
TIERS = ("dram", "l2", "l1", "shared")
SOL_KEYS = ("sm", "memory", "dram", "l2", "l1")  # Nsight's Speed-of-Light percentages
SOL_MEMORY_UNITS = ("dram", "l2", "l1")  # the memory SOL breakdown that names the busiest unit
COMPUTE = "compute"  # the binding roof of a compute-bound kernel (the others are tier names)

# display names, for every sink
PRECISION_NAMES = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "tensor": "Tensor"}
TIER_NAMES = {"dram": "DRAM", "l2": "L2", "l1": "L1", "shared": "Shared"}
TIER_WORDS = {**TIER_NAMES, "shared": "shared-memory"}  # in a sentence: "measured shared-memory bytes"


class Bound(Enum):
    MEMORY = "memory"
    COMPUTE = "compute"
    LATENCY = "latency"
    BALANCED = "balanced"  # Speed of Light: compute and memory within 10 points, both at 60-80 %
    UNKNOWN = "unknown"


class VerdictBasis(Enum):
    """What a verdict rests on: the roofline (work, bytes, roofs), Nsight's SOL rule, or nothing."""

    ROOFLINE = "roofline"
    SOL = "sol"
    NONE = "none"


# what every sink writes after a verdict: "memory-bound (dram) · SOL"
BASIS_WORDS = {VerdictBasis.ROOFLINE: "roofline", VerdictBasis.SOL: "SOL", VerdictBasis.NONE: "none"}
BASIS_LEGEND = (
    "· roofline / · SOL / · none = what the verdict rests on: the roofline (FLOPs, bytes, roofs), "
    "Nsight's Speed-of-Light percentages, or neither"
)


def with_basis(verdict: str, basis: VerdictBasis) -> str:
    """`memory-bound (dram) · SOL`: a verdict and what it rests on, worded once for every sink."""
    return f"{verdict} · {BASIS_WORDS[basis]}"


class TrafficDefinition(StrEnum):
    """Which traffic a memory tier is judged by (the shared tier always keeps its own); either
    way, only against the peak of the very counter it was counted with."""

    NSIGHT = "nsight"  # exactly what the Nsight Compute version that wrote the report draws
    COUNTED = "counted"  # all traffic through the tier, each counter with its own peak


class GroupBy(StrEnum):
    """Which launches fold into one row of the summary (`analysis.groups`)."""

    KERNEL = "kernel"  # name + launch shape + device
    NVTX = "nvtx"  # NVTX range + device
    NONE = "none"  # every launch on its own


class SortBy(StrEnum):
    """How the summary orders its rows (fix first: by the time each would save)."""

    TIME = "time"  # total duration, largest first
    HEADROOM = "headroom"  # time it would save at its roof, largest first


class MatchBy(StrEnum):
    """What two launches must share to be compared: name and launch shape, name, or nothing (order)."""

    NAME_SHAPE = "name+shape"
    NAME = "name"
    ORDER = "order"


@dataclass(frozen=True)
class Roofs:
    """Peaks per precision (FLOP/s) and bandwidth per tier (byte/s); tier names are free."""

    compute_flop_per_s: Mapping[str, float]
    bandwidth_byte_per_s: Mapping[str, float]
    source: str
    sources: Mapping[str, str] = field(default_factory=dict)
    name: str | None = None


@dataclass(frozen=True)
class RoofChoice:
    """Roofs as asked: automatic (None, None), a built-in key or a file's; the traffic tiers are judged by."""

    gpu_key: str | None = None
    user: Roofs | None = None
    traffic: TrafficDefinition = TrafficDefinition.NSIGHT
