"""What an analysis says of each launch and device: the record types every renderer reads
(`Kernel`: one launch's verdict as plain Python values, made from the launch frame on demand)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ncu_roof.analysis.model import busiest_pipe
from ncu_roof.base.text import one_line
from ncu_roof.base.vocabulary import Bound, Roofs, VerdictBasis

VERDICT_WORDS = {b: b.value if b in (Bound.BALANCED, Bound.UNKNOWN) else f"{b.value}-bound" for b in Bound}


@dataclass(frozen=True)
class InputInfo:
    path: str
    format: str
    ncu_version: str | None
    kernels: int
    averaged: tuple[str, ...] = ()  # metrics a `--print-summary` input gives as averages


@dataclass(frozen=True)
class Device:
    index: int
    input: int
    name: str | None
    cc: str | None
    roofs: Roofs
    sm_clock_hz: float | None = None  # median measured SM clock of its launches (None: not in input)
    sm_count: float | None = None  # SMs: median of its launches, else the built-in GPU of its name
    ordinal: int = 0  # its index in its ncu run (the input's `Device` column)
    sm_clock_recipe: str | None = None  # the counter its SM clock was measured by (`counter:NAME`)


_ALSO_MATCHES = re.compile(r"; also matches [^)]*\)")


def device_name(device: Device) -> str:
    """A device's one name in every header, table and title: the input's; else the GPU of its roofs, and
    whence (inferred from the input, `--gpu`, `--roofs`); else `unknown GPU`. One line (names are data)."""
    if device.name:
        return one_line(device.name)
    if not (name := device.roofs.name):
        return "unknown GPU"
    if "(inferred from" in name:  # the other products it may be: in the roofs' source, not here
        return one_line(_ALSO_MATCHES.sub(")", name))
    return one_line(f"{name} (from {'--gpu' if device.roofs.source.startswith('builtin') else '--roofs'})")


@dataclass(frozen=True)
class TensorPath:
    """One tensor data path of a kernel: floating paths count FLOPs, integer paths operations."""

    unit: str  # "FLOP" or "OP"
    count: float | None
    peak_per_s: float | None


@dataclass(frozen=True)
class InstructionRoofline:
    """Ding & Williams' instruction roofline of one kernel (warp instructions, transactions)."""

    warp_inst: float | None
    warp_inst_per_s: float | None
    issue_peak_warp_inst_per_s: float | None
    issue_peak_source: str | None
    intensity_warp_inst_per_transaction: Mapping[str, float]
    transaction_peak_per_s: Mapping[str, float]
    recipe: str | None


@dataclass(frozen=True)
class Kernel:
    """What the analysis says of one launch. Its mappings and records are read-only: launches
    alike share one (their recipe, traffic, tensor paths, operations, instruction roofline)."""

    id: int
    name: str
    input: int
    device: int
    grid: str | None
    block: str | None
    duration_s: float | None
    flop: Mapping[str, float | None]
    bytes: Mapping[str, float | None]
    intensity_flop_per_byte: Mapping[str, float | None]
    achieved_flop_per_s: float | None
    achieved_byte_per_s: Mapping[str, float | None]
    attainable_flop_per_s: float | None
    cap_flop_per_s: Mapping[str, float]
    binding: str | None
    bound: Bound
    roofline_binding: str | None
    compute_precision: str | None
    pct_of_roof: float | None
    sol_pct: Mapping[str, float | None]
    recipe: Mapping[str, str]
    notes: tuple[str, ...]
    time_share: float | None = None
    missing: tuple[str, ...] = ()
    run: int = 0  # which CSV block (ncu run) of the input; ncu's IDs restart in each
    # per tier with traffic: its traffic definition, the formula of its bytes, and of its roof
    traffic: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    verdict_basis: VerdictBasis = VerdictBasis.NONE
    sol_bound: Bound = Bound.UNKNOWN  # Nsight's SOLBottleneck rule alone
    sol_unit: str | None = None  # busiest memory unit (dram, l2, l1) when SOL says memory-bound
    small_grid: bool = False  # latency-bound with under one wave per SM
    flop_total_is_lower_bound: bool = False
    ops: Mapping[str, float | None] = field(default_factory=dict)  # integer tensor paths + "total"
    ops_total_is_lower_bound: bool = False
    tensor_paths: Mapping[str, TensorPath] = field(default_factory=dict)
    not_collected: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # quantity → terms n/a
    pipe_pct: Mapping[str, float] = field(default_factory=dict)
    compute_ceiling: str | None = None  # "fp32", "tensor:bf16", "tensor:int8", "pipe:alu"
    compute_ceiling_pct: float | None = None  # its share of the duration at its peak, in percent
    instructions: InstructionRoofline | None = None
    nvtx: str | None = None  # the NVTX ranges it ran in, `outer/inner` (ingest/nvtx.py); None: none
    # per tier: achieved bytes/s as a percentage of that tier's roof (beside `sol_pct`, the unit's
    # own throughput %, which counts wavefronts and cycles, not bytes)
    pct_of_bandwidth: Mapping[str, float | None] = field(default_factory=dict)
    sol_busiest_unit: str | None = None  # the Speed-of-Light unit with the highest throughput %
    # the saving its busiest unit still allows: duration x (1 - that unit's % / 100)
    headroom_sol_s: float | None = None


def ceiling_words(ceiling: str | None, pct: float | None) -> str:
    """`pipe:alu`, 82 → `alu pipe 82%`; `tensor:int8` → `tensor int8`; `fp32` → `fp32`."""
    if ceiling is None:
        return "compute"
    kind, _, name = ceiling.partition(":")
    if kind == "pipe":
        return f"{name} pipe {pct:.0f}%" if pct is not None else f"{name} pipe"
    return f"{kind} {name}" if name else kind


def verdict_phrase(
    bound: Bound,
    *,
    where: str | None,
    sol_compute: str,
    ceiling: str | None,
    ceiling_pct: float | None,
    small_grid: bool,
) -> str:
    """A verdict's phrase (`memory-bound (dram)`, `compute-bound (alu pipe 82%)`, `balanced`): `where`, the
    binding tier (SOL: busiest memory unit); `sol_compute`, a SOL compute verdict's (roofline: "")."""
    words = VERDICT_WORDS[bound]
    if bound is Bound.MEMORY:
        return f"{words} ({where or 'memory'})"
    if bound is Bound.COMPUTE:
        return f"{words} ({sol_compute or ceiling_words(ceiling, ceiling_pct)})"
    return f"{words} (small grid)" if bound is Bound.LATENCY and small_grid else words


def bound_at(bound: Bound, tier: str | None) -> str:
    """`memory-bound at dram` (a memory bound and its tier), else the verdict's words."""
    return f"{VERDICT_WORDS[bound]} at {tier}" if bound is Bound.MEMORY and tier else VERDICT_WORDS[bound]


def sol_compute_words(pipe_pct: Mapping[str, float], sm_pct: float | None) -> str:
    """What a SOL compute verdict names: its busiest arithmetic pipe, else the SM percentage."""
    pipe = busiest_pipe(
        {p: np.array([v], dtype="float64") for p, v in pipe_pct.items()}, np.zeros(1, np.intp)
    )[0]
    return "SM " + ("–" if sm_pct is None else f"{sm_pct:.0f}%") if pipe is None else str(pipe)
