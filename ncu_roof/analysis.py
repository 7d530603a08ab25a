"""The analysis: normalized launches + roofs → a verdict per kernel. Renderers read only this."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ncu_roof.arch import arch_for_cc
from ncu_roof.gpus import gpu_by_key, match_gpu
from ncu_roof.ingest import IDENTITY_COLUMNS, RunTable
from ncu_roof.model import (
    InstructionArrays,
    Roof,
    RooflineArrays,
    RooflinePoint,
    compute_roof_arrays,
    instruction_arrays,
    is_set,
    objects,
    per_kernel,
    point_at,
    roofline_arrays,
    work_time_arrays,
)
from ncu_roof.recipe import (
    FLOP_OPS,
    PIPE_PREFIX,
    TENSOR_PATH_PREFIX,
    collect_command,
    is_integer_path,
    normalize,
)
from ncu_roof.roofs import device_hardware, fill_builtin, report_roofs
from ncu_roof.sol import LATENCY_SOL_PCT, SolArrays, sol_arrays, verdict_arrays
from ncu_roof.traffic import TrafficDefinition
from ncu_roof.vocabulary import (
    COMPUTE,
    PRECISIONS,
    SOL_KEYS,
    SOL_MEMORY_UNITS,
    TIERS,
    Bound,
    Roofs,
    VerdictBasis,
)

SCHEMA = "ncu-roof/analysis/v1"


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

    @property
    def above_roof(self) -> bool:
        return self.pct_of_roof is not None and self.pct_of_roof > 100.0


@dataclass(frozen=True)
class Analysis:
    inputs: tuple[InputInfo, ...]
    devices: tuple[Device, ...]
    kernels: tuple[Kernel, ...]
    collect_hint: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def total_duration_s(self) -> float:
        return sum(k.duration_s for k in self.kernels if k.duration_s is not None)

    def by_time(self) -> list[Kernel]:
        """Kernels sorted by share of total time, largest first (unknown durations last)."""
        return sorted(self.kernels, key=lambda k: -(k.duration_s or -1.0))


@dataclass(frozen=True)
class RoofChoice:
    """How the user asked for roofs: automatic (None, None), a built-in key, or a file's roofs;
    and which traffic the memory tiers are judged by."""

    gpu_key: str | None = None
    user: Roofs | None = None
    traffic: TrafficDefinition = TrafficDefinition.NSIGHT


def analyze(tables: Sequence[RunTable], choice: RoofChoice = RoofChoice()) -> Analysis:
    normalized = [
        normalize(t.frame[t.metric_columns], ncu_version=t.ncu_version, traffic=choice.traffic)
        for t in tables
    ]
    normalized = [n.reset_index(drop=True) for n in normalized]
    durations = pd.concat([n["duration_s"] for n in normalized]) if normalized else pd.Series([])
    total_s = float(durations[durations > 0].sum())
    inputs: list[InputInfo] = []
    devices: list[Device] = []
    kernels: list[Kernel] = []
    for i, (table, norm) in enumerate(zip(tables, normalized, strict=True)):
        ident = table.frame.reindex(columns=list(IDENTITY_COLUMNS)).reset_index(drop=True)
        inputs.append(
            InputInfo(table.path, table.format.value, table.ncu_version, len(ident), table.averaged)
        )
        device_index = ident["device"].fillna(0).astype(int)
        device_keys = ident["run"].astype(str) + "/" + device_index.astype(str)
        for key in device_keys.unique():
            rows = (device_keys == key).to_numpy()
            names = ident.loc[rows, "device_name"].dropna()
            ccs = ident.loc[rows, "cc"].dropna()
            name = str(names.iloc[0]) if len(names) else None
            group, roofs = _device_roofs(norm[rows], name, choice)
            clock = _num(group["sm_clock_hz"].median())
            cc = str(ccs.iloc[0]) if len(ccs) else None
            sms = _sm_count(group, name)
            device = Device(len(devices), i, name, cc, roofs, sm_clock_hz=clock, sm_count=sms)
            devices.append(device)
            automatic = choice.user is None  # report and built-in roofs: each launch at its clocks
            kernels += _device_kernels(ident[rows], group, device, i, total_s, automatic)
    missing = sorted({m for k in kernels for m in k.missing})
    hint = collect_command(missing) if missing else None
    extra = {"traffic_definition": choice.traffic.value}
    return Analysis(tuple(inputs), tuple(devices), tuple(kernels), collect_hint=hint, extra=extra)


def _sm_count(group: pd.DataFrame, name: str | None) -> float | None:
    """The device's SM count: the launches' median from the report, else the built-in GPU's."""
    measured = _num(group["sm_count"].median()) if "sm_count" in group else None
    if measured is not None:
        return measured
    gpu = match_gpu(name)
    return float(gpu.sm_count) if gpu is not None and gpu.sm_count else None


def launch_roofs(group: pd.DataFrame, roofs: Roofs) -> tuple[dict[str, Roof], dict[str, Roof]]:
    """Each launch's own report roofs (its measured clocks: Nsight's method), else the device's.

    Short launches run at other clocks than long ones; judging each against the median roof would
    call consistent data inconsistent.
    """

    def own(column: str, fallback: float | None) -> Roof:
        values = group[column].to_numpy(dtype="float64")
        return np.where(np.isfinite(values) & (values > 0), values, np.nan if fallback is None else fallback)

    compute: dict[str, Roof] = dict(roofs.compute_flop_per_s)
    for p in PRECISIONS:
        compute[p] = own(f"peak_{p}_flop_per_s", roofs.compute_flop_per_s.get(p))
    bandwidth: dict[str, Roof] = dict(roofs.bandwidth_byte_per_s)
    for t in TIERS:
        bandwidth[t] = own(f"bw_{t}_byte_per_s", roofs.bandwidth_byte_per_s.get(t))
    return compute, bandwidth


# Pipes that execute arithmetic: the busiest is a compute ceiling. Load/store, texture, address and
# branch pipes move or steer data; their traffic is judged by the memory tiers.
NON_COMPUTE_PIPES = ("lsu", "tex", "adu", "ipa", "cbu", "tma")
FLOATING_PIPES = tuple(f"pipe:{p}" for p in ("fma", "fp64", "fp16", "tensor", "shared"))
_FLOP_KINDS = ("fp64", "fp32", "fp16")


@dataclass(frozen=True)
class _Verdicts:
    """Every per-launch decision of one device, as arrays (row j = launch j)."""

    point_flop: np.ndarray
    peaks: np.ndarray
    precisions: np.ndarray
    arrays: RooflineArrays
    bound: np.ndarray
    basis: np.ndarray
    disagrees: np.ndarray
    supported: np.ndarray
    sol: SolArrays
    ceiling: np.ndarray
    ceiling_pct: np.ndarray
    failed: np.ndarray
    collection_failed: np.ndarray
    instructions: InstructionArrays
    issue_source: np.ndarray


def _compute_pipes(group: pd.DataFrame) -> list[str]:
    pipes = [
        c
        for c in group.columns
        if c.startswith(PIPE_PREFIX)
        and c.endswith("_pct")
        and not c.removeprefix(PIPE_PREFIX).removesuffix("_pct").startswith(NON_COMPUTE_PIPES)
    ]
    # on a tie the named pipe wins over Volta/Turing's "shared" (FP16 + tensor) pipe
    return sorted(pipes, key=lambda c: (c == f"{PIPE_PREFIX}shared_pct", c))


def _verdicts(group: pd.DataFrame, device: Device, automatic: bool) -> _Verdicts:
    """The verdict ladder for every launch of one device at once (columns, no per-launch loop)."""
    roofs = device.roofs
    compute: Mapping[str, Roof] = roofs.compute_flop_per_s
    bandwidth: Mapping[str, Roof] = roofs.bandwidth_byte_per_s
    if automatic:
        compute, bandwidth = launch_roofs(group, roofs)
    duration = group["duration_s"].to_numpy(dtype="float64")
    quantities = [c for c in ("duration_s", "flop_total", "ops_total", "warp_inst") if c in group.columns]
    quantities += [f"{t}_bytes" for t in TIERS] + [f"sol_{k}_pct" for k in SOL_KEYS]
    collection_failed = group[quantities].isna().all(axis=1).to_numpy()  # every counter reads n/a
    failed = (duration <= 0) | collection_failed  # ncu 2022.3 writes a failed collection as 0

    def measured(column: str) -> np.ndarray:
        return np.where(failed, np.nan, group[column].to_numpy(dtype="float64"))

    def own(column: str, fallback: Roof | None) -> Roof:
        values = (
            group[column].to_numpy(dtype="float64")
            if column in group.columns
            else np.full(len(group), np.nan)
        )
        default = np.nan if fallback is None else fallback
        ok = np.isfinite(values) & (values > 0) & automatic
        return np.where(ok, values, default)

    paths = {
        c.removeprefix(TENSOR_PATH_PREFIX): c
        for c in group.columns
        if c.startswith(TENSOR_PATH_PREFIX) and not c.startswith("peak_")
    }
    float_paths = [p for p in paths if not is_integer_path(p)]
    int_paths = [p for p in paths if is_integer_path(p)]
    flop_work = {p: measured(f"flop_{p}") for p in _FLOP_KINDS}
    flop_peaks: dict[str, Roof] = {p: compute[p] for p in _FLOP_KINDS if p in compute}
    if float_paths:  # each floating path against its own peak (the device's tensor roof if none)
        for p in float_paths:
            flop_work[f"tensor:{p}"] = measured(paths[p])
            flop_peaks[f"tensor:{p}"] = own(f"peak_{paths[p]}_per_s", compute.get("tensor"))
    else:
        flop_work["tensor"] = measured("flop_tensor")
        if "tensor" in compute:
            flop_peaks["tensor"] = compute["tensor"]
    peaks, precisions = compute_roof_arrays(flop_work, flop_peaks)
    dominant = pd.Series(precisions, dtype="object")
    precisions = dominant.mask(dominant.str.startswith("tensor", na=False), "tensor").to_numpy(dtype=object)
    work = dict(flop_work)
    work_peaks = dict(flop_peaks)
    for p in int_paths:
        work[f"tensor:{p}"] = measured(paths[p])
        work_peaks[f"tensor:{p}"] = own(f"peak_{paths[p]}_per_s", None)
    work_s, longest = work_time_arrays(work, work_peaks)
    pipes = _compute_pipes(group)
    n = len(group)
    if pipes:
        pct = np.column_stack([measured(c) for c in pipes])
        any_pipe = ~np.isnan(pct).all(axis=1)
        busiest = np.nan_to_num(pct, nan=-1.0)
        pipe_pct = np.where(any_pipe, busiest.max(axis=1), np.nan)
        names = np.array([f"pipe:{c.removeprefix(PIPE_PREFIX).removesuffix('_pct')}" for c in pipes], object)
        pipe_name = names[np.argmax(busiest, axis=1)]
    else:
        pipe_pct = np.full(n, np.nan)
        pipe_name = np.full(n, None, dtype=object)
    pipe_s = pipe_pct / 100.0 * np.where(duration > 0, duration, np.nan)
    compute_s = np.fmax(work_s, pipe_s)
    # the busier pipe sets the compute time; it names the ceiling unless it is the floating-point
    # pipe of the measured FLOPs (the precision then says more than "fma pipe")
    fp_pipe = pd.Series(pipe_name, dtype="object").str.startswith(FLOATING_PIPES, na=False).to_numpy()
    pipe_wins = np.isfinite(pipe_s) & ~(work_s >= pipe_s) & ~(fp_pipe & (work_s > 0))
    ceiling = np.where(pipe_wins, pipe_name, longest)
    with np.errstate(divide="ignore", invalid="ignore"):
        ceiling_pct = 100.0 * compute_s / duration
    ceiling_pct = np.where(is_set(ceiling), ceiling_pct, np.nan)
    flop_total = measured("flop_total")
    arrays = roofline_arrays(
        flop_total, {t: measured(f"{t}_bytes") for t in TIERS}, peaks, bandwidth, compute_time_s=compute_s
    )
    ops_total = measured("ops_total") if "ops_total" in group.columns else np.full(n, np.nan)
    has_work = (np.nan_to_num(flop_total) > 0) | (np.nan_to_num(ops_total) > 0)
    sol = sol_arrays(
        measured("sol_sm_pct"),
        measured("sol_memory_pct"),
        {u: measured(f"sol_{u}_pct") for u in SOL_MEMORY_UNITS},
        measured("waves_per_sm"),
    )
    sol_known = sol.bound != Bound.UNKNOWN
    traffic = np.column_stack(
        [np.isfinite(measured(f"{t}_bytes")) & np.isfinite(per_kernel(bandwidth.get(t), n)) for t in TIERS]
    ).any(axis=1)
    # a roofline needs memory traffic to compare with; with zero floating-point and tensor work and
    # no pipe figures it cannot see integer work either
    # integer operations without their peak (under --gpu roofs) and no pipe figure: compute unknown
    unpeaked = np.zeros(n, dtype=bool)
    for p in int_paths:
        kind = f"tensor:{p}"
        unpeaked |= (np.nan_to_num(work[kind]) > 0) & np.isnan(per_kernel(work_peaks[kind], n))
    compute_unknown = unpeaked & ~np.isfinite(pipe_s)
    supported = traffic & ~compute_unknown & (has_work | np.isfinite(pipe_pct) | ~sol_known)
    verdict = verdict_arrays(arrays.binding, supported, sol)
    issue_peak, issue_source = _issue_peak(group, device, measured)
    instructions = instruction_arrays(
        measured("warp_inst"),
        measured("duration_s"),
        issue_peak,
        {t: measured(f"{t}_bytes") for t in TIERS},
        bandwidth,
    )
    return _Verdicts(
        point_flop=flop_total,
        peaks=peaks,
        precisions=precisions,
        arrays=arrays,
        bound=verdict.bound,
        basis=verdict.basis,
        disagrees=verdict.disagrees,
        supported=supported & is_set(arrays.binding),
        sol=sol,
        ceiling=ceiling,
        ceiling_pct=ceiling_pct,
        failed=failed,
        collection_failed=collection_failed,
        instructions=instructions,
        issue_source=issue_source,
    )


def _issue_peak(
    group: pd.DataFrame, device: Device, measured: Callable[[str], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Warp-instruction issue peak: SMs x schedulers x SM clock (one instruction per scheduler
    per clock); schedulers from the report, else from the architecture's figures."""
    n = len(group)
    schedulers = measured("schedulers_per_sm")
    arch = arch_for_cc(device.cc)
    source = np.full(
        n, "report: SMs x device__attribute_num_schedulers_per_multiprocessor x sm_clock", object
    )
    if arch is not None:
        fallback = arch.schedulers_per_sm
        missing = np.isnan(schedulers)
        schedulers = np.where(missing, fallback.per_sm_per_clock, schedulers)
        source = np.where(
            missing,
            f"SMs x {fallback.per_sm_per_clock:g} schedulers ({fallback.describe()}) x sm_clock",
            source,
        )
    peak = measured("sm_count") * schedulers * measured("sm_clock_hz")
    return peak, np.where(np.isfinite(peak), source, objects(None, n))


def _device_kernels(
    ident: pd.DataFrame,
    group: pd.DataFrame,
    device: Device,
    input_index: int,
    total_s: float,
    automatic: bool,
) -> list[Kernel]:
    """The verdicts of every launch on one device at once, then one `Kernel` per launch."""
    v = _verdicts(group, device, automatic)
    who = _rows(ident)
    columns = [c for c in group.columns if c in KERNEL_COLUMNS or c.startswith(_EXTRA_PREFIXES)]
    rows = _rows(group[columns])
    out = []
    for j, (names, row) in enumerate(zip(who, rows, strict=True)):
        point = point_at(v.arrays, j, _num(v.point_flop[j]), _num(v.peaks[j]), v.precisions[j])
        out.append(_kernel(names, row, point, v, j, input_index, device, total_s))
    return out


_RECIPE_KEYS = (
    "duration_s",
    *(f"flop_{p}" for p in PRECISIONS),
    *(f"{t}_bytes" for t in TIERS),
    "warp_inst",
)
KERNEL_COLUMNS = (
    "duration_s",
    "flop_total",
    "flop_total_is_lower_bound",
    "ops_total",
    "warp_inst",
    "waves_per_sm",
    "tensor_pipe_pct",
    *(f"flop_{p}" for p in PRECISIONS),
    *(f"flop_{p}_not_collected" for p in PRECISIONS),
    *(f"{t}_bytes" for t in TIERS),
    *(f"sol_{k}_pct" for k in SOL_KEYS),
    *(f"{key}_recipe" for key in _RECIPE_KEYS),
    *(f"{t}_traffic" for t in TIERS),
    *(f"bw_{t}_byte_per_s_recipe" for t in TIERS),
)
_EXTRA_PREFIXES = (PIPE_PREFIX, TENSOR_PATH_PREFIX, f"peak_{TENSOR_PATH_PREFIX}")


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain dicts, column by column (much cheaper than `DataFrame.to_dict`)."""
    columns = {str(c): frame[c].to_numpy(dtype=object) for c in frame.columns}
    return [{c: values[j] for c, values in columns.items()} for j in range(len(frame))]


def _device_roofs(
    norm: pd.DataFrame, device_name: str | None, choice: RoofChoice
) -> tuple[pd.DataFrame, Roofs]:
    """One device's launches with every roof filled in, and the device's (median) roofs.

    Automatic: the report's own roofs, what it lacks from the built-in figures at the measured
    clocks. `--gpu KEY`: that GPU's built-in figures at the measured clocks replace the report's
    (tiers it has no figure for keep the report's). `--roofs FILE`: the file's, as they are.
    """
    if choice.user is not None:
        return _without_report_path_peaks(norm), choice.user
    gpu = gpu_by_key(choice.gpu_key) if choice.gpu_key is not None else None
    hardware = gpu.hardware() if gpu is not None else device_hardware(norm, device_name)
    filled = fill_builtin(norm, hardware, replace=gpu is not None)
    if gpu is not None:
        filled = _without_report_path_peaks(filled)
        return filled, report_roofs(filled, name=gpu.name, source=f"builtin:{gpu.key}")
    return filled, report_roofs(filled, name=device_name)


def _without_report_path_peaks(norm: pd.DataFrame) -> pd.DataFrame:
    """Roofs named by the user replace the report's: its per-path tensor peaks are not theirs."""
    columns = [c for c in norm.columns if str(c).startswith(f"peak_{TENSOR_PATH_PREFIX}")]
    if not columns:
        return norm
    out = norm.copy()
    out[columns] = np.nan
    return out


def _num(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _kernel(
    ident: Mapping[str, Any],
    row: Mapping[str, Any],
    point: RooflinePoint,
    v: _Verdicts,
    j: int,
    input_index: int,
    device: Device,
    total_s: float,
) -> Kernel:
    failed = bool(v.failed[j])

    def measured(column: str) -> float | None:
        return None if failed or column not in row else _num(row[column])

    duration = measured("duration_s")
    flop = {p: measured(f"flop_{p}") for p in PRECISIONS}
    flop_total = measured("flop_total")
    nbytes = {t: measured(f"{t}_bytes") for t in TIERS}
    sol = {k: measured(f"sol_{k}_pct") for k in SOL_KEYS}
    recipe = {
        key: str(row[f"{key}_recipe"])
        for key in _RECIPE_KEYS
        if f"{key}_recipe" in row and isinstance(row[f"{key}_recipe"], str)
    }
    achieved_bw = {t: (b / duration if b is not None and duration else None) for t, b in nbytes.items()}
    supported = bool(v.supported[j])
    pct = (
        100.0 * point.time_at_roof_s / duration
        if supported and point.time_at_roof_s is not None and duration
        else None
    )
    tensor_paths = {} if failed else _tensor_paths(row)
    ops = {p: t.count for p, t in tensor_paths.items() if t.unit == "OP"}
    ops_total = measured("ops_total")
    not_collected = {} if failed else _not_collected(row)
    pipe_pct = {} if failed else _pipe_pct(row)
    bound: Bound = v.bound[j]
    basis: VerdictBasis = v.basis[j]
    sol_bound: Bound = v.sol.bound[j]
    missing = [] if failed else _missing(duration, flop_total, nbytes, sol)
    ceiling = v.ceiling[j] if supported else None
    notes = _notes(
        failed=failed,
        collection_failed=bool(v.collection_failed[j]),
        missing=missing,
        roofs=device.roofs,
        point=point,
        pct=pct,
        sol=sol,
        bound=bound,
        basis=basis,
        sol_bound=sol_bound,
        sol_unit=v.sol.unit[j],
        disagrees=bool(v.disagrees[j]),
        supported=supported,
        utilization=_busiest_tier(achieved_bw, device.roofs) if flop_total is None else None,
        tensor_by_pipe=recipe.get("flop_tensor", "").endswith("*512") and (flop["tensor"] or 0) > 0,
        waves=_num(row["waves_per_sm"]),
        unroofed={t: recipe.get(f"{t}_bytes", "") for t in point.unroofed},
        not_collected=not_collected,
        flop=flop,
        flop_total_is_lower_bound=bool(row["flop_total_is_lower_bound"]) and flop_total is not None,
        tensor_pipe_pct=measured("tensor_pipe_pct"),
        busiest_pipe=_busiest_compute_pipe(pipe_pct),
        integer_tensor_ops=bool(ops_total),
    )
    instructions = (
        None if failed else _instruction_roofline(v, j, measured("warp_inst"), recipe.get("warp_inst"))
    )
    return Kernel(
        id=int(ident["id"]),
        run=int(ident["run"]) if ident["run"] is not None else 0,
        name=str(ident["name"]) if ident["name"] is not None else "",
        input=input_index,
        device=device.index,
        grid=_text(ident["grid"]),
        block=_text(ident["block"]),
        nvtx=_text(ident["nvtx"]),
        duration_s=duration,
        flop={**flop, "total": flop_total},
        bytes=nbytes,
        intensity_flop_per_byte={t: _intensity(flop_total, b) for t, b in nbytes.items()},
        achieved_flop_per_s=flop_total / duration if flop_total is not None and duration else None,
        achieved_byte_per_s=achieved_bw,
        attainable_flop_per_s=point.attainable_flop_per_s,
        cap_flop_per_s=dict(point.cap_flop_per_s),
        binding=point.binding,
        bound=bound,
        roofline_binding=point.binding,
        compute_precision=point.compute_precision,
        pct_of_roof=pct,
        sol_pct=sol,
        recipe=recipe,
        notes=(*(ident["input_notes"] or ()), *notes),
        missing=tuple(missing),
        time_share=duration / total_s if duration is not None and total_s > 0 else None,
        traffic=_traffic(row, nbytes),
        verdict_basis=basis,
        sol_bound=sol_bound,
        sol_unit=v.sol.unit[j],
        small_grid=bool(v.sol.small_grid[j]),
        flop_total_is_lower_bound=bool(row["flop_total_is_lower_bound"]) and flop_total is not None,
        ops={**ops, "total": ops_total} if ops else {},
        ops_total_is_lower_bound=ops_total is not None and any(c is None for c in ops.values()),
        tensor_paths=tensor_paths,
        not_collected=not_collected,
        pipe_pct=pipe_pct,
        compute_ceiling=ceiling,
        compute_ceiling_pct=_num(v.ceiling_pct[j]) if ceiling is not None else None,
        instructions=instructions,
    )


def _tensor_paths(row: Mapping[str, Any]) -> dict[str, TensorPath]:
    out = {}
    for column in row:
        if column.startswith(TENSOR_PATH_PREFIX):
            path = column.removeprefix(TENSOR_PATH_PREFIX)
            unit = "OP" if is_integer_path(path) else "FLOP"
            out[path] = TensorPath(unit, _num(row[column]), _num(row.get(f"peak_{column}_per_s")))
    return out


def _not_collected(row: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    out = {}
    for p in PRECISIONS:
        terms = row.get(f"flop_{p}_not_collected")
        if isinstance(terms, str) and terms:
            out[p] = tuple(terms.split(","))
    return out


def _pipe_pct(row: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for column, value in row.items():
        if column.startswith(PIPE_PREFIX) and column.endswith("_pct"):
            number = _num(value)
            if number is not None:
                out[column.removeprefix(PIPE_PREFIX).removesuffix("_pct")] = number
    return out


def _instruction_roofline(
    v: _Verdicts, j: int, warp_inst: float | None, recipe: str | None
) -> InstructionRoofline | None:
    arrays = v.instructions

    def present(values: Mapping[str, np.ndarray]) -> dict[str, float]:
        return {k: float(a[j]) for k, a in values.items() if np.isfinite(a[j])}

    if warp_inst is None:
        return None
    return InstructionRoofline(
        warp_inst=warp_inst,
        warp_inst_per_s=_num(arrays.warp_inst_per_s[j]),
        issue_peak_warp_inst_per_s=_num(arrays.issue_peak_warp_inst_per_s[j]),
        issue_peak_source=v.issue_source[j],
        intensity_warp_inst_per_transaction=present(arrays.intensity_warp_inst_per_transaction),
        transaction_peak_per_s=present(arrays.transaction_peak_per_s),
        recipe=recipe,
    )


def _traffic(row: Mapping[str, Any], nbytes: Mapping[str, float | None]) -> dict[str, dict[str, str]]:
    """Per tier with bytes: which traffic definition, bytes formula and roof formula it used."""
    out: dict[str, dict[str, str]] = {}
    for tier, value in nbytes.items():
        definition = row.get(f"{tier}_traffic")
        if value is None or not isinstance(definition, str):
            continue
        entry = {"definition": definition, "recipe": str(row.get(f"{tier}_bytes_recipe"))}
        roof = row.get(f"bw_{tier}_byte_per_s_recipe")
        if isinstance(roof, str):
            entry["roof"] = roof
        out[tier] = entry
    return out


def _busiest_tier(achieved_bw: Mapping[str, float | None], roofs: Roofs) -> tuple[str, float] | None:
    """The tier whose bandwidth the launch used most, as (tier, percent of its roof)."""
    used = {
        t: 100.0 * b / roofs.bandwidth_byte_per_s[t]
        for t, b in achieved_bw.items()
        if b is not None and roofs.bandwidth_byte_per_s.get(t, 0) > 0
    }
    if not used:
        return None
    tier = max(used, key=lambda t: used[t])
    return tier, used[tier]


def _notes(
    *,
    failed: bool,
    collection_failed: bool,
    missing: list[str],
    roofs: Roofs,
    point: RooflinePoint,
    pct: float | None,
    sol: Mapping[str, float | None],
    bound: Bound,
    basis: VerdictBasis,
    sol_bound: Bound,
    sol_unit: str | None,
    disagrees: bool,
    supported: bool,
    utilization: tuple[str, float] | None,
    tensor_by_pipe: bool,
    waves: float | None,
    unroofed: Mapping[str, str],
    not_collected: Mapping[str, tuple[str, ...]],
    flop: Mapping[str, float | None],
    flop_total_is_lower_bound: bool,
    tensor_pipe_pct: float | None,
    busiest_pipe: str | None,
    integer_tensor_ops: bool,
) -> list[str]:
    """What a kernel engineer needs to know to trust, or distrust, one verdict."""
    if collection_failed:
        return ["collection failed: every counter of this launch reads n/a; ncu measured nothing"]
    if failed:
        return ["duration is 0: this launch's collection failed; its counters are not measurements"]
    notes = []
    if missing:
        notes.append("missing counters: " + ", ".join(missing))
    if not roofs.compute_flop_per_s:
        notes.append(
            "no compute roofs for this device (the input names no GPU): pass --gpu KEY or --roofs FILE"
        )
    for tier, how in unroofed.items():
        notes.append(
            f"no roofline verdict: {tier} has traffic ({how}) but no roof of that counter, and may be "
            f"what binds; give its bandwidth with --roofs FILE ([bandwidth] {tier} = ...)"
        )
    for precision, terms in not_collected.items():
        if precision == "tensor":
            notes.append(
                f"tensor: {', '.join(terms)} read n/a; the tensor FLOPs are the sum of the paths measured"
            )
        else:
            collected = [t for t in FLOP_OPS[precision] if t not in terms]
            notes.append(
                f"{precision} FLOPs from {'+'.join(collected)} alone ({', '.join(terms)} not collected): "
                "a lower bound"
            )
    if flop_total_is_lower_bound:
        absent = [f"{p} not collected" for p, f in flop.items() if f is None]
        absent += [f"{p} partial" for p in not_collected]
        notes.append(f"FLOP total is a lower bound ({', '.join(absent)})")
    if flop.get("tensor") is None and tensor_pipe_pct and not integer_tensor_ops:
        notes.append(
            f"tensor pipe {tensor_pipe_pct:.0f}% busy; tensor FLOPs not counted — collect "
            "sm__ops_path_tensor_* (ncu --metrics regex:sm__ops_path_tensor_.*)"
        )
    if basis is VerdictBasis.NONE and busiest_pipe is not None:
        notes.append(
            f"busiest pipe: {busiest_pipe}; without memory traffic or SOL percentages no verdict can be made"
        )
    if utilization is not None and basis is VerdictBasis.NONE:
        tier, used = utilization
        notes.append(
            f"no FLOP counters, so no roof can be said to bind; its busiest tier, {tier}, ran at "
            f"{used:.0f}% of its bandwidth"
        )
    if bound is Bound.LATENCY:
        grid = f"; small grid ({waves:.2f} waves per SM)" if waves is not None and waves < 1 else ""
        notes.append(
            f"latency-bound: SM {sol['sm']:.0f}% and memory {sol['memory']:.0f}% of peak, both under "
            f"{LATENCY_SOL_PCT:.0f}%{grid}; the roofline alone says "
            f"{_verdict_words(point.binding if supported else None, pct)}"
        )
    elif basis is VerdictBasis.SOL:
        why = (
            "no floating-point or tensor work was counted and no pipe utilisation was collected, so "
            "the roofline cannot see this kernel's (integer) work"
            if point.binding is not None
            else "the roofline needs FLOP and byte counters with roofs"
        )
        unit = f", busiest memory unit {sol_unit}" if sol_unit else ""
        notes.append(
            f"verdict from Speed of Light (Nsight's rule): SM {sol['sm']:.0f}%, memory {sol['memory']:.0f}%"
            f"{unit}; {why}"
        )
    elif bound is not Bound.UNKNOWN and (sol["sm"] is None or sol["memory"] is None):
        notes.append(
            "no SOL percentages (sm__throughput, gpu__compute_memory_throughput): "
            "the latency-bound check (Nsight's 60% rule) was not made"
        )
    if disagrees and bound is not Bound.LATENCY:
        unit = f" at {sol_unit}" if sol_unit else ""
        notes.append(
            f"Speed of Light disagrees: SM {sol['sm']:.0f}%, memory {sol['memory']:.0f}% says "
            f"{sol_bound.value}-bound{unit}; the roofline says {_verdict_words(point.binding, pct)}"
        )
    if pct is not None and pct > 100.0:
        notes.append(
            f"above its roof ({pct:.0f}% of the {point.binding} cap): inconsistent data — "
            "roofs and counters disagree (clock, replay or recipe); check the roofs' source"
        )
    if tensor_by_pipe:
        notes.append("tensor FLOPs = tensor-pipe instructions x 512 (V100 HMMA shape): approximate here")
    if waves is not None and waves < 1 and bound is not Bound.LATENCY:
        notes.append(f"less than one wave ({waves:.2f} per SM): counters of small launches are noisy")
    return notes


def _intensity(flop: float | None, nbytes: float | None) -> float | None:
    if flop is None or nbytes is None:
        return None
    return flop / nbytes if nbytes > 0 else math.inf


def _text(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _missing(
    duration: float | None,
    flop_total: float | None,
    nbytes: Mapping[str, float | None],
    sol: Mapping[str, float | None],
) -> list[str]:
    missing = []
    if duration is None:
        missing.append("duration")
    if flop_total is None:
        missing.append("flop")
    missing += [t for t, b in nbytes.items() if b is None]
    if sol["sm"] is None or sol["memory"] is None:
        missing.append("sol")
    return missing


def _verdict_words(binding: str | None, pct: float | None) -> str:
    if binding is None:
        return "nothing (no roofs or counters)"
    where = "compute-bound" if binding == COMPUTE else f"memory-bound at {binding}"
    return where if pct is None else f"{where} ({pct:.0f}% of roof)"


def ceiling_words(ceiling: str | None, pct: float | None) -> str:
    """`pipe:alu`, 82 → `alu pipe 82%`; `tensor:int8` → `tensor int8`; `fp32` → `fp32`."""
    if ceiling is None:
        return "compute"
    kind, _, name = ceiling.partition(":")
    if kind == "pipe":
        return f"{name} pipe {pct:.0f}%" if pct is not None else f"{name} pipe"
    return f"{kind} {name}" if name else kind


def describe(kernel: Kernel) -> str:
    """One phrase for a verdict: `memory-bound (dram)`, `compute-bound (alu pipe 82%)`,
    `latency-bound (small grid)`, `balanced`."""
    if kernel.bound is Bound.MEMORY:
        where = kernel.sol_unit if kernel.verdict_basis is VerdictBasis.SOL else kernel.binding
        return f"memory-bound ({where or 'memory'})"
    if kernel.bound is Bound.COMPUTE:
        if kernel.verdict_basis is VerdictBasis.SOL:
            busiest = _busiest_compute_pipe(kernel.pipe_pct)
            return f"compute-bound ({busiest or 'SM ' + _pct_text(kernel.sol_pct.get('sm'))})"
        return f"compute-bound ({ceiling_words(kernel.compute_ceiling, kernel.compute_ceiling_pct)})"
    if kernel.bound is Bound.LATENCY:
        return "latency-bound (small grid)" if kernel.small_grid else "latency-bound"
    if kernel.bound is Bound.BALANCED:
        return "balanced"
    return "unknown"


def _pct_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}%"


def _busiest_compute_pipe(pipe_pct: Mapping[str, float]) -> str | None:
    compute = {p: v for p, v in pipe_pct.items() if not p.startswith(NON_COMPUTE_PIPES)}
    if not compute:
        return None
    pipe = max(compute, key=lambda p: compute[p])
    return f"{pipe} pipe {compute[pipe]:.0f}%"
