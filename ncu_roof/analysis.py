"""The analysis: normalized launches + roofs → a verdict per kernel. Renderers read only this."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ncu_roof.gpus import gpu_by_key
from ncu_roof.ingest import IDENTITY_COLUMNS, RunTable
from ncu_roof.model import (
    COMPUTE,
    LATENCY_SOL_PCT,
    PRECISIONS,
    SOL_KEYS,
    TIERS,
    Bound,
    Roof,
    RooflinePoint,
    Roofs,
    bound_of,
    compute_roof_arrays,
    is_latency_bound,
    point_at,
    roofline_arrays,
)
from ncu_roof.recipe import collect_command, normalize
from ncu_roof.roofs import builtin_roofs, combine, report_roofs

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
    """How the user asked for roofs: automatic (None, None), a built-in key, or a file's roofs."""

    gpu_key: str | None = None
    user: Roofs | None = None


def analyze(tables: Sequence[RunTable], choice: RoofChoice = RoofChoice()) -> Analysis:
    normalized = [normalize(t.frame[t.metric_columns]).reset_index(drop=True) for t in tables]
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
            roofs = _roofs_for(norm[rows], name, choice)
            clock = _num(norm.loc[rows, "sm_clock_hz"].median())
            cc = str(ccs.iloc[0]) if len(ccs) else None
            device = Device(len(devices), i, name, cc, roofs, sm_clock_hz=clock)
            devices.append(device)
            automatic = choice.user is None and choice.gpu_key is None
            kernels += _device_kernels(ident[rows], norm[rows], device, i, total_s, automatic)
    missing = sorted({m for k in kernels for m in k.missing})
    hint = collect_command(missing) if missing else None
    return Analysis(tuple(inputs), tuple(devices), tuple(kernels), collect_hint=hint)


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


def _device_kernels(
    ident: pd.DataFrame,
    group: pd.DataFrame,
    device: Device,
    input_index: int,
    total_s: float,
    automatic: bool,
) -> list[Kernel]:
    """The roofline of every launch on one device at once, then one `Kernel` per launch."""
    roofs = device.roofs
    compute: Mapping[str, Roof] = roofs.compute_flop_per_s
    bandwidth: Mapping[str, Roof] = roofs.bandwidth_byte_per_s
    if automatic:
        compute, bandwidth = launch_roofs(group, roofs)
    peaks, precisions = compute_roof_arrays({p: group[f"flop_{p}"].to_numpy() for p in PRECISIONS}, compute)
    failed = (group["duration_s"] <= 0).to_numpy()  # ncu 2022.3 writes a failed collection as 0

    def measured(column: str) -> np.ndarray:
        return np.where(failed, np.nan, group[column].to_numpy(dtype="float64"))

    arrays = roofline_arrays(
        measured("flop_total"), {t: measured(f"{t}_bytes") for t in TIERS}, peaks, bandwidth
    )
    who = _rows(ident)
    rows = _rows(group[[c for c in KERNEL_COLUMNS if c in group.columns]])
    out = []
    for j, (names, row) in enumerate(zip(who, rows, strict=True)):
        point = point_at(arrays, j, _num(row["flop_total"]), _num(peaks[j]), precisions[j])
        out.append(_kernel(names, row, point, input_index, device, total_s))
    return out


_RECIPE_KEYS = ("duration_s", *(f"flop_{p}" for p in PRECISIONS), *(f"{t}_bytes" for t in TIERS))
KERNEL_COLUMNS = (
    "duration_s",
    "flop_total",
    "waves_per_sm",
    *(f"flop_{p}" for p in PRECISIONS),
    *(f"{t}_bytes" for t in TIERS),
    *(f"sol_{k}_pct" for k in SOL_KEYS),
    *(f"{key}_recipe" for key in _RECIPE_KEYS),
)


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain dicts, column by column (much cheaper than `DataFrame.to_dict`)."""
    columns = {str(c): frame[c].to_numpy(dtype=object) for c in frame.columns}
    return [{c: values[j] for c, values in columns.items()} for j in range(len(frame))]


def _roofs_for(norm: pd.DataFrame, device_name: str | None, choice: RoofChoice) -> Roofs:
    if choice.user is not None:
        return choice.user
    if choice.gpu_key is not None:
        return builtin_roofs(gpu_by_key(choice.gpu_key))
    return combine(report_roofs(norm), device_name)


def _num(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _kernel(
    ident: Mapping[str, Any],
    row: Mapping[str, Any],
    point: RooflinePoint,
    input_index: int,
    device: Device,
    total_s: float,
) -> Kernel:
    raw_duration = _num(row["duration_s"])
    failed = raw_duration is not None and raw_duration <= 0  # ncu 2022.3 writes failures as 0

    def measured(column: str) -> float | None:
        return None if failed else _num(row[column])

    duration = measured("duration_s")
    flop = {p: measured(f"flop_{p}") for p in PRECISIONS}
    flop_total = measured("flop_total")
    nbytes = {t: measured(f"{t}_bytes") for t in TIERS}
    sol = {k: measured(f"sol_{k}_pct") for k in SOL_KEYS}
    recipe = {key: str(row[f"{key}_recipe"]) for key in _RECIPE_KEYS if isinstance(row[f"{key}_recipe"], str)}
    achieved_bw = {t: (b / duration if b is not None and duration else None) for t, b in nbytes.items()}
    pct = 100.0 * point.time_at_roof_s / duration if point.time_at_roof_s is not None and duration else None
    missing = [] if failed else _missing(duration, flop_total, nbytes, sol)
    latency = not failed and is_latency_bound(sol["sm"], sol["memory"])
    bound = Bound.LATENCY if latency else bound_of(point.binding)
    notes = _notes(
        failed=failed,
        missing=missing,
        roofs=device.roofs,
        point=point,
        pct=pct,
        sol=sol,
        bound=bound,
        utilization=_busiest_tier(achieved_bw, device.roofs) if flop_total is None else None,
        tensor_by_pipe=recipe.get("flop_tensor", "").endswith("*512") and (flop["tensor"] or 0) > 0,
        waves=_num(row["waves_per_sm"]),
    )
    return Kernel(
        id=int(ident["id"]),
        run=int(ident["run"]) if ident["run"] is not None else 0,
        name=str(ident["name"]) if ident["name"] is not None else "",
        input=input_index,
        device=device.index,
        grid=_text(ident["grid"]),
        block=_text(ident["block"]),
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
    )


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
    missing: list[str],
    roofs: Roofs,
    point: RooflinePoint,
    pct: float | None,
    sol: Mapping[str, float | None],
    bound: Bound,
    utilization: tuple[str, float] | None,
    tensor_by_pipe: bool,
    waves: float | None,
) -> list[str]:
    """What a kernel engineer needs to know to trust, or distrust, one verdict."""
    if failed:
        return ["duration is 0: this launch's collection failed; its counters are not measurements"]
    notes = []
    if missing:
        notes.append("missing counters: " + ", ".join(missing))
    if not roofs.compute_flop_per_s and not roofs.bandwidth_byte_per_s:
        notes.append("no roofs for this device (the input names no GPU): pass --gpu KEY or --roofs FILE")
    if utilization is not None:
        tier, used = utilization
        notes.append(
            f"no FLOP counters, so no roof can be said to bind; its busiest tier, {tier}, ran at "
            f"{used:.0f}% of its bandwidth"
        )
    if bound is Bound.LATENCY:
        notes.append(
            f"latency-bound: SM {sol['sm']:.0f}% and memory {sol['memory']:.0f}% of peak, both under "
            f"{LATENCY_SOL_PCT:.0f}%; the roofline alone says {_verdict_words(point.binding, pct)}"
        )
    elif bound is not Bound.UNKNOWN and (sol["sm"] is None or sol["memory"] is None):
        notes.append(
            "no SOL percentages (sm__throughput, gpu__compute_memory_throughput): "
            "the latency-bound check (Nsight's 60% rule) was not made"
        )
    if pct is not None and pct > 100.0:
        notes.append(
            f"above its roof ({pct:.0f}% of the {point.binding} cap): inconsistent data — "
            "roofs and counters disagree (clock, replay or recipe); check the roofs' source"
        )
    if tensor_by_pipe:
        notes.append("tensor FLOPs = tensor-pipe instructions x 512 (V100 HMMA shape): approximate here")
    if waves is not None and waves < 1:
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


def describe(kernel: Kernel) -> str:
    """One phrase for a verdict: `memory-bound (dram)`, `compute-bound (fp32)`, `latency-bound`."""
    if kernel.bound is Bound.MEMORY:
        return f"memory-bound ({kernel.binding})"
    if kernel.bound is Bound.COMPUTE:
        return f"compute-bound ({kernel.compute_precision or 'compute'})"
    if kernel.bound is Bound.LATENCY:
        return "latency-bound"
    return "unknown"
