"""The verdict ladder for every launch of one device at once, columns in, arrays out (no per-launch
loop): the roofline (each launch against its own roofs at its measured clocks, Nsight's method) →
Nsight's SOLBottleneck rule → nothing; the compute ceiling (precision, tensor data path or busiest
pipe); the instruction roofline."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ncu_roof.analysis.model import (
    NON_COMPUTE_PIPES,
    InstructionArrays,
    Roof,
    RooflineArrays,
    busiest,
    compute_roof_arrays,
    instruction_arrays,
    is_set,
    objects,
    per_kernel,
    roofline_arrays,
    work_time_arrays,
)
from ncu_roof.analysis.records import Device
from ncu_roof.analysis.sol import SolArrays, VerdictArrays, sol_arrays, verdict_arrays
from ncu_roof.base.arrays import equals, object_array
from ncu_roof.base.vocabulary import (
    CUDA_CORE_PRECISIONS,
    PRECISIONS,
    SOL_KEYS,
    SOL_MEMORY_UNITS,
    TIERS,
    Bound,
)
from ncu_roof.gpus.arch import arch_for_cc
from ncu_roof.gpus.roofs import launch_count
from ncu_roof.recipe import PIPE_PREFIX, TENSOR_PATH_PREFIX, is_integer_path
from ncu_roof.recipe.frame import read_only

FLOATING_PIPES = ("fma", "fp64", "fp16", "tensor", "shared")
INTEGER_PIPES = ("tensor_op_imma", "tensor_op_bmma")  # integer MMA: operations, not FLOPs
# the FLOPs at their peak explain a floating-point pipe's busy time when they take this share of it
# (then the precision names the ceiling, else the pipe: IMADs keep an FMA pipe busy with no FLOP)
EXPLAINED_PIPE_SHARE = 0.95


@dataclass(frozen=True)
class Verdicts:
    """Every per-launch decision of one device, as arrays (row j = launch j)."""

    precisions: np.ndarray
    arrays: RooflineArrays
    verdict: VerdictArrays  # bound, basis, where SOL disagrees
    supported: np.ndarray
    sol: SolArrays
    ceiling: np.ndarray
    ceiling_pct: np.ndarray
    failed: np.ndarray
    collection_failed: np.ndarray
    instructions: InstructionArrays
    issue_source: np.ndarray
    bandwidth: Mapping[str, Roof]  # per tier, the roof each launch was judged against
    pipe_pct: Mapping[str, np.ndarray]  # per pipe (`alu`), each launch's % busy


def unfailed(values: np.ndarray, failed: np.ndarray) -> np.ndarray:
    """A launch column with NaN for the launches whose collection failed (they measured nothing);
    where none failed, the column itself, read-only (not a copy of 100,000 values per column)."""
    values = np.asarray(values, dtype="float64")
    return np.where(failed, np.nan, values) if failed.any() else read_only(values.view())


def verdicts(group: Mapping[str, np.ndarray], device: Device, automatic: bool) -> Verdicts:
    n = launch_count(group)
    duration = np.asarray(group["duration_s"], dtype="float64")
    quantities = [c for c in ("duration_s", "flop_total", "ops_total", "warp_inst") if c in group]
    quantities += ["sm_clock_hz", *(f"{t}_bytes" for t in TIERS)] + [f"sol_{k}_pct" for k in SOL_KEYS]
    # every counter reads n/a, the SM clock too (a roofline chart page measured clocks, none of the rest)
    collection_failed = np.logical_and.reduce([np.isnan(group[c]) for c in quantities])
    failed = (duration <= 0) | collection_failed  # ncu 2022.3 writes a failed collection as 0

    def measured(column: str) -> np.ndarray:
        return unfailed(group[column], failed)

    def own(column: str, fallback: Roof | None) -> Roof:
        values = per_kernel(group.get(column) if automatic else None, n)
        return np.where(np.isnan(values), np.nan if fallback is None else fallback, values)

    compute: Mapping[str, Roof] = device.roofs.compute_flop_per_s
    bandwidth: Mapping[str, Roof] = device.roofs.bandwidth_byte_per_s
    if automatic:
        # each launch's own report roofs (its measured clocks: Nsight's method), else the device's:
        # short launches run at other clocks than long ones; judging each against the median roof
        # would call consistent data inconsistent
        compute = {**compute, **{p: own(f"peak_{p}_flop_per_s", compute.get(p)) for p in PRECISIONS}}
        # never the device's bandwidth: its roof may be another counter's than this launch's bytes
        bandwidth = {**bandwidth, **{t: own(f"bw_{t}_byte_per_s", None) for t in TIERS}}

    paths = {c.removeprefix(TENSOR_PATH_PREFIX): c for c in group if c.startswith(TENSOR_PATH_PREFIX)}
    kinds = {f"tensor:{p}": c for p, c in paths.items()}  # tensor:PATH → its column
    int_work = {f"tensor:{p}": c for p, c in paths.items() if is_integer_path(p)}
    # each floating path against its own peak, else the device's tensor roof (no such column as
    # `peak_flop_tensor_per_s`: all tensor FLOPs of a report without paths run at that roof)
    tensor_work = {k: c for k, c in kinds.items() if k not in int_work} or {"tensor": "flop_tensor"}
    columns = {p: f"flop_{p}" for p in CUDA_CORE_PRECISIONS} | tensor_work
    flop_work = {k: measured(c) for k, c in columns.items()}
    flop_peaks: dict[str, Roof] = {p: compute[p] for p in CUDA_CORE_PRECISIONS if p in compute}
    flop_peaks |= {k: own(f"peak_{c}_per_s", compute.get("tensor")) for k, c in tensor_work.items()}
    peaks, precisions = compute_roof_arrays(flop_work, flop_peaks)
    precisions = np.where(np.isin(precisions, list(tensor_work)), objects("tensor", n), precisions)
    work = flop_work | {k: measured(c) for k, c in int_work.items()}
    work_peaks = flop_peaks | {k: own(f"peak_{c}_per_s", None) for k, c in int_work.items()}
    work_s, longest = work_time_arrays(work, work_peaks)
    pipes = {
        c.removeprefix(PIPE_PREFIX).removesuffix("_pct"): measured(c)
        for c in group
        if c.startswith(PIPE_PREFIX) and c.endswith("_pct")
    }
    # on a tie the named pipe wins over Volta/Turing's "shared" (FP16 + tensor) pipe
    named = sorted(pipes, key=lambda p: (p == "shared", f"{p}_pct"))
    arithmetic = {f"pipe:{p}": pipes[p] for p in named if not p.startswith(NON_COMPUTE_PIPES)}
    pipe_pct, pipe_name = busiest(arithmetic, n)
    fp = [f"pipe:{p}" for p in named if p.startswith(FLOATING_PIPES) and not p.startswith(INTEGER_PIPES)]
    fp_pipe = np.logical_or.reduce([equals(pipe_name, p) for p in fp], initial=False)
    pipe_s = pipe_pct / 100.0 * np.where(duration > 0, duration, np.nan)
    compute_s = np.fmax(work_s, pipe_s)
    # the busier pipe sets the compute time; it names the ceiling unless it is a floating-point
    # pipe whose busy time the measured FLOPs explain (the precision then says more than "fma pipe")
    explained = fp_pipe & (work_s >= EXPLAINED_PIPE_SHARE * pipe_s)
    pipe_wins = np.isfinite(pipe_s) & ~(work_s >= pipe_s) & ~explained
    ceiling = np.where(pipe_wins, pipe_name, longest)
    with np.errstate(divide="ignore", invalid="ignore"):
        ceiling_pct = 100.0 * compute_s / duration
    ceiling_pct = np.where(is_set(ceiling), ceiling_pct, np.nan)
    flop_total = measured("flop_total")
    nbytes = {t: measured(f"{t}_bytes") for t in TIERS}
    # FLOPs of a precision the device's roofs lack (a roofs file without it): their time is unknown
    # and may be what binds, never none; a pipe figure still times the compute (a device with no
    # compute roofs at all has its own note)
    no_peak = {
        p: (np.nan_to_num(flop_work[p]) > 0) & np.isnan(per_kernel(flop_peaks.get(p), n)) & np.isnan(pipe_s)
        for p in (flop_work if device.roofs.compute_flop_per_s else ())
    }
    no_peak = {p: u for p, u in no_peak.items() if u.any()}
    arrays = roofline_arrays(flop_total, nbytes, peaks, bandwidth, compute_s, no_peak)
    ops_total = measured("ops_total") if "ops_total" in group else np.full(n, np.nan)
    has_work = (np.nan_to_num(flop_total) > 0) | (np.nan_to_num(ops_total) > 0)
    units = {u: measured(f"sol_{u}_pct") for u in SOL_MEMORY_UNITS}
    sol = sol_arrays(measured("sol_sm_pct"), measured("sol_memory_pct"), units, measured("waves_per_sm"))
    sol_known = ~equals(sol.bound, Bound.UNKNOWN)
    # (a binding roof implies memory traffic to compare with) with zero floating-point and tensor
    # work and no pipe figures a roofline cannot see integer work either; nor integer operations
    # without their peak (under --gpu roofs) and no pipe figure: compute unknown
    unpeaked = [(np.nan_to_num(work[k]) > 0) & np.isnan(per_kernel(work_peaks[k], n)) for k in int_work]
    compute_unknown = np.logical_or.reduce(unpeaked, initial=False) & ~np.isfinite(pipe_s)
    supported = ~compute_unknown & (has_work | np.isfinite(pipe_pct) | ~sol_known)
    issue_peak, issue_source = _issue_peak(n, device, measured)
    instructions = instruction_arrays(
        measured("warp_inst"), measured("duration_s"), issue_peak, nbytes, bandwidth
    )
    return Verdicts(
        precisions=precisions,
        arrays=arrays,
        verdict=verdict_arrays(arrays.binding, supported, sol),
        supported=supported & is_set(arrays.binding),
        sol=sol,
        ceiling=ceiling,
        ceiling_pct=ceiling_pct,
        failed=failed,
        collection_failed=collection_failed,
        instructions=instructions,
        issue_source=issue_source,
        bandwidth=bandwidth,
        pipe_pct=pipes,
    )


def _issue_peak(
    n: int, device: Device, measured: Callable[[str], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Warp-instruction issue peak of n launches: SMs x schedulers x SM clock (one instruction per
    scheduler per clock); schedulers from the report, else from the architecture's figures."""
    schedulers, arch = measured("schedulers_per_sm"), arch_for_cc(device.cc)
    sources = ["report: SMs x device__attribute_num_schedulers_per_multiprocessor x sm_clock"]
    which = np.zeros(n, dtype=np.int64)  # each launch's source, by index (launches share its text)
    if arch is not None:
        fallback, missing = arch.schedulers_per_sm, np.isnan(schedulers)
        schedulers = np.where(missing, fallback.per_sm_per_clock, schedulers)
        sources.append(f"SMs x {fallback.per_sm_per_clock:g} schedulers ({fallback.describe()}) x sm_clock")
        which[missing] = 1
    peak = measured("sm_count") * schedulers * measured("sm_clock_hz")
    which[~np.isfinite(peak)] = len(sources)
    return peak, object_array([*sources, None])[which]
