"""The metric recipe: which ncu metrics give FLOPs, bytes per tier, peaks and SOL.

Input: a wide metric frame (one row per profiled launch, one column per ncu metric, SI values).
Output: the normalized table (see `NORMALIZED_COLUMNS`), where every derived number has a sibling
`<name>_recipe` column saying which formula produced it.

Each quantity has candidate formulas in order of preference; per row, the first one whose inputs
are all present wins. Factors that the metric recipe (shared notes, §3) marks **[verify]** live in
`Factors` below and nowhere else.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ncu_roof.ncu import version_tuple
from ncu_roof.traffic import TrafficDefinition
from ncu_roof.vocabulary import PRECISIONS


@dataclass(frozen=True)
class Factors:
    """Every conversion factor of the recipe in one place. [verify] = not yet measured on a GPU."""

    fma_flop: float = 2.0  # one FMA thread instruction = 2 FLOPs
    fp16_lanes: float = 2.0  # [verify] Nsight 2025.3 assumes every H-instruction is packed (HFMA2)
    fp32x2_lanes: float = 2.0  # [verify] Blackwell FADD2/FMUL2/FFMA2 packed FP32
    tensor_flop_per_pipe_inst: float = 512.0  # [verify] V100 HMMA shape; wrong on later archs
    sector_bytes: float = 32.0  # L1/L2/DRAM sector
    l2_xbar_bytes_per_cycle: float = 32.0  # Nsight 2025.3: lts__lts2xbar_cycles_active × 32 B
    l1_writeback_bytes_per_cycle: float = 128.0  # Nsight: l1tex__lsu_writeback_active × 128 B
    shared_wavefront_bytes: float = 128.0  # [verify] 32 banks × 4 B per shared-memory wavefront


FACTORS = Factors()

_TENSOR_COUNT = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum$")
_TENSOR_RATE = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum\.per_cycle_elapsed$")
_TENSOR_PEAK = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum\.peak_sustained$")
_PCT = r"\.avg\.pct_of_peak_sustained_(?:elapsed|active)$"
_PIPE_INST = re.compile(r"^sm__inst_executed_pipe_(?P<p>[a-z0-9_]+)" + _PCT)
_PIPE_CYCLES = re.compile(r"^sm__pipe_(?P<p>[a-z0-9_]+)_cycles_active" + _PCT)
# warp instructions executed (the instruction roofline's work) and what sizes the issue peak
WARP_INST_METRICS = (
    "smsp__inst_executed.sum",
    "sm__inst_executed.sum",
    "sm__inst_executed.sum.per_cycle_elapsed",
    "sm__inst_executed.avg.per_cycle_elapsed",
)
SM_COUNT_METRICS = ("device__attribute_multiprocessor_count", "launch__sm_count")
SCHEDULERS_METRIC = "device__attribute_num_schedulers_per_multiprocessor"
TENSOR_PIPE_PCT = tuple(
    f"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_{w}" for w in ("elapsed", "active")
)
FLOP_OPS = {
    "fp64": ("dadd", "dmul", "dfma"),
    "fp32": ("fadd", "fmul", "ffma"),
    "fp16": ("hadd", "hmul", "hfma"),
}


def _op(kind: str, op: str, rollup: str = ".sum") -> str:
    return f"{kind}__sass_thread_inst_executed_op_{op}_pred_on{rollup}"


SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared"

# L1 traffic that `--set full` reports do hold: global and local load/store sectors.
L1_SECTOR_METRICS = tuple(
    f"l1tex__t_sectors_pipe_lsu_mem_{space}_op_{op}.sum"
    for space in ("global", "local")
    for op in ("ld", "st")
)


# The device attributes built-in roofs are computed from (ncu writes clocks in kHz, no unit).
DEVICE_ATTRIBUTES = (
    ("device_sm_count", "device__attribute_multiprocessor_count", 1.0),
    ("device_clock_hz", "device__attribute_clock_rate", 1e3),
    ("device_memory_clock_hz", "device__attribute_memory_clock_rate", 1e3),
    ("device_memory_bus_bits", "device__attribute_global_memory_bus_width", 1.0),
    ("device_cc_major", "device__attribute_compute_capability_major", 1.0),
    ("device_cc_minor", "device__attribute_compute_capability_minor", 1.0),
)

# Tier counters: each with the forms a report may hold it in (count, rate, peak, pct of peak).
TIER_COUNTERS = (
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "lts__t_sectors.sum",
    "lts__lts2xbar_cycles_active.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    "l1tex__t_bytes.sum",
    "l1tex__t_sectors.sum",
    "l1tex__lsu_writeback_active.sum",
    "l1tex__lsu_writeback_active_mem_lg.sum",
    "l1tex__lsu_writeback_active_mem_lgds.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
)
_COUNTER_FORMS = ("", ".per_second", ".peak_sustained", ".pct_of_peak_sustained_elapsed")


def wanted_metrics() -> frozenset[str]:
    """Every exact metric name any formula below may read (readers load only these)."""
    names: set[str] = {
        "gpu__time_duration.sum",
        "sm__cycles_elapsed.avg",
        "gpc__cycles_elapsed.max",
        "launch__waves_per_multiprocessor",
        "launch__grid_size",
        "launch__block_size",
        "device__attribute_display_name",
        "device__attribute_compute_capability_major",
        "device__attribute_compute_capability_minor",
        *WARP_INST_METRICS,
        *SM_COUNT_METRICS,
        SCHEDULERS_METRIC,
    }
    for axis in "xyz":
        names |= {f"launch__grid_dim_{axis}", f"launch__block_dim_{axis}"}
    for unit in ("sm", "smsp", "gpc", "lts", "l1tex", "dram"):
        names.add(f"{unit}__cycles_elapsed.avg.per_second")
    for ops in FLOP_OPS.values():
        for op in (*ops, "fadd2", "fmul2", "ffma2"):
            names |= {_op("sm", op), _op("smsp", op), _op("smsp", op, ".sum.per_cycle_elapsed")}
            names.add(_op("sm", op, ".sum.peak_sustained"))
    names |= {
        "sm__inst_executed_pipe_tensor.sum",
        "sm__inst_executed_pipe_tensor.sum.peak_sustained",
        "smsp__inst_executed_pipe_tensor.sum.per_cycle_elapsed",
        "dram__bytes.sum",
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
        "dram__sectors_read.sum",
        "dram__sectors_write.sum",
        "dram__bytes.sum.per_second",
        "dram__bytes_read.sum.per_second",
        "dram__bytes_write.sum.per_second",
        "dram__bytes.sum.peak_sustained",
        "lts__t_bytes.sum",
        "lts__t_bytes.sum.peak_sustained",
        "lts__t_sectors.sum",
        "lts__t_sectors.sum.per_second",
        "lts__t_sectors.sum.peak_sustained",
        "lts__lts2xbar_cycles_active.sum",
        "lts__lts2xbar_cycles_active.sum.peak_sustained",
        "derived__lts__lts2xbar_bytes.sum.per_second",
        "derived__lts__lts2xbar_bytes.sum.peak_sustained",
        "l1tex__t_bytes.sum",
        "l1tex__t_bytes.sum.peak_sustained",
        "l1tex__t_sectors.sum",
        "l1tex__t_sectors.sum.peak_sustained",
        "sm__sass_data_bytes_mem_shared.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
    }
    names |= set(L1_SECTOR_METRICS)
    names |= {metric for _, metric, _ in DEVICE_ATTRIBUTES}
    names |= {counter + form for counter in TIER_COUNTERS for form in _COUNTER_FORMS}
    for scope in ("", "_mem_lg", "_mem_lgds"):
        derived = f"derived__l1tex__lsu_writeback_bytes{scope}.sum"
        names |= {f"{derived}.per_second", f"{derived}.peak_sustained"}
    names |= {f"{SHARED_WAVEFRONTS}_op_{op}.sum" for op in ("ld", "st", "atom")}
    for scope in ("lg", "lgds"):
        base = f"l1tex__lsu_writeback_active_mem_{scope}.sum"
        names |= {base, f"{base}.peak_sustained"}
        derived = f"derived__l1tex__lsu_writeback_bytes_mem_{scope}.sum"
        names |= {f"{derived}.per_second", f"{derived}.peak_sustained"}
    return frozenset(names)


WANTED = wanted_metrics()


def is_wanted(name: str) -> bool:
    """True for metrics the recipe reads, including the per-architecture tensor variants and pipes."""
    return (
        name in WANTED
        or _TENSOR_COUNT.match(name) is not None
        or _TENSOR_RATE.match(name) is not None
        or _TENSOR_PEAK.match(name) is not None
        or _PIPE_INST.match(name) is not None
        or _PIPE_CYCLES.match(name) is not None
    )


Formula = tuple[str, pd.Series]


class _Frame:
    """Column access on the metric frame where an absent metric reads as NaN."""

    def __init__(self, metrics: pd.DataFrame) -> None:
        self.df = metrics
        self.nan = pd.Series(np.nan, index=metrics.index, dtype="float64")

    def __call__(self, name: str) -> pd.Series:
        if name in self.df.columns:
            return pd.to_numeric(self.df[name], errors="coerce").astype("float64")
        return self.nan

    def any_of(self, *names: str) -> pd.Series:
        out = self.nan
        for name in names:
            out = out.fillna(self(name))
        return out

    def names(self) -> Iterable[str]:
        return (str(c) for c in self.df.columns)


def first_available(candidates: list[Formula], index: pd.Index) -> tuple[pd.Series, pd.Series]:
    """Per row, the first candidate with a value; returns (values, recipe label or None)."""
    values = pd.Series(np.nan, index=index, dtype="float64")
    labels = pd.Series(None, index=index, dtype="object")
    for label, series in candidates:
        take = values.isna() & series.notna()
        values = values.where(~take, series)
        labels = labels.where(~take, label)
    return values, labels


def normalize(
    metrics: pd.DataFrame,
    factors: Factors = FACTORS,
    *,
    ncu_version: str | None = None,
    traffic: TrafficDefinition = TrafficDefinition.NSIGHT,
) -> pd.DataFrame:
    """Metric frame (SI) → normalized per-launch table (SI), with a recipe label per quantity.

    `ncu_version` (of the ncu that collected the report) picks the tier measures that version of
    Nsight draws; `traffic` picks the traffic definition of the memory tiers.
    """
    with warnings.catch_warnings():  # ~150 columns added one by one: pandas' fragmentation warning
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        return _normalize(metrics, factors, ncu_version, traffic).copy()  # copy: one defragmented block


def _normalize(
    metrics: pd.DataFrame, factors: Factors, ncu_version: str | None, traffic: TrafficDefinition
) -> pd.DataFrame:
    m = _Frame(metrics)
    out = pd.DataFrame(index=metrics.index)
    duration, out["duration_s_recipe"] = first_available(_duration(m), metrics.index)
    out["duration_s"] = duration
    out["sm_clock_hz"] = m.any_of("sm__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second")
    out["dram_clock_hz"] = m("dram__cycles_elapsed.avg.per_second")
    out["l1_clock_hz"] = m("l1tex__cycles_elapsed.avg.per_second").fillna(out["sm_clock_hz"])
    out["l2_clock_hz"] = m("lts__cycles_elapsed.avg.per_second")
    out["waves_per_sm"] = m("launch__waves_per_multiprocessor")

    for precision in ("fp64", "fp32", "fp16"):
        flop, label, missing = _cuda_core_flop(m, precision, duration, factors)
        out[f"flop_{precision}"], out[f"flop_{precision}_recipe"] = flop, label
        out[f"flop_{precision}_not_collected"] = missing
        peak, peak_label = first_available(_cuda_core_peak(m, precision, factors), metrics.index)
        out[f"peak_{precision}_flop_per_s"] = peak
        out[f"peak_{precision}_flop_per_s_recipe"] = peak_label
    tensor = _tensor(m, duration, factors)
    out["flop_tensor"], out["flop_tensor_recipe"] = tensor.flop, tensor.label
    out["flop_tensor_not_collected"] = tensor.not_collected
    out["peak_tensor_flop_per_s"], out["peak_tensor_flop_per_s_recipe"] = tensor.peak, tensor.peak_label
    for path, (count, path_peak) in tensor.paths.items():
        out[f"{TENSOR_PATH_PREFIX}{path}"] = count
        out[f"peak_{TENSOR_PATH_PREFIX}{path}_per_s"] = path_peak
    out["ops_total"] = tensor.int_ops
    # an idle tensor pipe says "no tensor FLOPs", not how many FLOPs there were: alone it is no total
    inferred = out["flop_tensor_recipe"].eq(IDLE_TENSOR_PIPE)
    cuda_core = out[[f"flop_{p}" for p in ("fp64", "fp32", "fp16")]].notna().any(axis=1)
    out["flop_tensor"] = out["flop_tensor"].where(~inferred | cuda_core)
    out["flop_tensor_recipe"] = out["flop_tensor_recipe"].where(~inferred | cuda_core, None)
    flops = out[[f"flop_{p}" for p in PRECISIONS]]
    out["flop_total"] = flops.sum(axis=1, min_count=1)
    partial = out[[f"flop_{p}_not_collected" for p in PRECISIONS]].notna().any(axis=1)
    out["flop_total_is_lower_bound"] = out["flop_total"].notna() & (flops.isna().any(axis=1) | partial)
    out["tensor_pipe_pct"] = m.any_of(*TENSOR_PIPE_PCT)
    for pipe, pct in _pipes(m).items():
        out[f"{PIPE_PREFIX}{pipe}_pct"] = pct
    warp_inst, out["warp_inst_recipe"] = first_available(_warp_inst(m, duration), metrics.index)
    out["warp_inst"] = warp_inst
    out["sm_count"] = m.any_of(*SM_COUNT_METRICS)
    out["schedulers_per_sm"] = m(SCHEDULERS_METRIC)

    era = nsight_era(ncu_version)
    for tier, (asked, definitions) in _tiers(m, duration, factors, era, traffic).items():
        picked = _pick_tier(asked, definitions, metrics.index, era)
        out[f"{tier}_bytes"], out[f"{tier}_bytes_recipe"] = picked.bytes, picked.label
        out[f"{tier}_traffic"] = picked.definition
        out[f"bw_{tier}_byte_per_s"] = picked.bandwidth_byte_per_s
        out[f"bw_{tier}_byte_per_s_recipe"] = ("report:" + picked.roof_label).where(picked.roof_label.notna())
        out[f"bw_{tier}_builtin"] = picked.builtin
    for column, metric, scale in DEVICE_ATTRIBUTES:
        out[column] = m(metric) * scale

    sol = {
        "sm": m("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "memory": m("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        "dram": m.any_of(
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        "l2": m("lts__throughput.avg.pct_of_peak_sustained_elapsed"),
        "l1": m("l1tex__throughput.avg.pct_of_peak_sustained_active"),
    }
    for key, series in sol.items():
        out[f"sol_{key}_pct"] = series
    return out


def _duration(m: _Frame) -> list[Formula]:
    return [
        ("counter:gpu__time_duration.sum", m("gpu__time_duration.sum")),
        (
            "cycles/clock:sm__cycles_elapsed.avg/sm__cycles_elapsed.avg.per_second",
            m("sm__cycles_elapsed.avg") / m("sm__cycles_elapsed.avg.per_second"),
        ),
        (
            "cycles/clock:gpc__cycles_elapsed.max/gpc__cycles_elapsed.avg.per_second",
            m("gpc__cycles_elapsed.max") / m("gpc__cycles_elapsed.avg.per_second"),
        ),
    ]


def _present_sum(terms: Mapping[str, pd.Series], weights: Mapping[str, float]) -> tuple[pd.Series, pd.Series]:
    """Per row: the weighted sum of the terms that were collected (NaN when none was), and the
    names of those that were not (None when all were): an n/a term is absent, never 0."""
    names = list(terms)
    index = next(iter(terms.values())).index
    values = np.column_stack([terms[n].to_numpy(dtype="float64") * weights[n] for n in names])
    absent = np.isnan(values)
    total = np.where(absent.all(axis=1), np.nan, np.where(absent, 0.0, values).sum(axis=1))
    missing = np.full(len(index), None, dtype=object)
    partial = absent.any(axis=1) & ~absent.all(axis=1)
    for row in np.flatnonzero(partial):  # only rows with a gap: rare, and a few terms each
        missing[row] = ",".join(n for n, gap in zip(names, absent[row], strict=True) if gap)
    return pd.Series(total, index=index), pd.Series(missing, index=index, dtype="object")


def _cuda_core_flop(
    m: _Frame, precision: str, duration: pd.Series, f: Factors
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """FLOPs of one precision: complete counters, else complete rates, else whichever terms were
    collected (`--set full` on 2025.1 stores hfma but not hadd/hmul); returns flop, recipe label
    and the terms not collected (None when complete)."""
    add, mul, fma = FLOP_OPS[precision]
    lanes = f.fp16_lanes if precision == "fp16" else 1.0
    weights = {add: lanes, mul: lanes, fma: lanes * f.fma_flop}
    name = f"{add}+{mul}+2*{fma}" if lanes == 1.0 else f"{lanes:g}*({add}+{mul}+2*{fma})"

    def rate(op: str) -> pd.Series:
        per_cycle = m(_op("smsp", op, ".sum.per_cycle_elapsed"))
        return per_cycle * m("smsp__cycles_elapsed.avg.per_second") * duration

    counted, counted_missing = _present_sum(
        {op: m.any_of(_op("sm", op), _op("smsp", op)) for op in weights}, weights
    )
    if precision == "fp32":
        packed = f.fp32x2_lanes * (
            m.any_of(_op("sm", "fadd2"), _op("smsp", "fadd2"))
            + m.any_of(_op("sm", "fmul2"), _op("smsp", "fmul2"))
            + f.fma_flop * m.any_of(_op("sm", "ffma2"), _op("smsp", "ffma2"))
        )
        counted = counted + packed.fillna(0.0)
    rated, rated_missing = _present_sum({op: rate(op) for op in weights}, weights)
    complete_count = counted.notna() & counted_missing.isna()
    complete_rate = rated.notna() & rated_missing.isna()
    use_counted = complete_count | (~complete_rate & counted.notna())
    flop = counted.where(use_counted, rated)
    missing = counted_missing.where(use_counted, rated_missing)
    source = np.where(use_counted, "counter", "rate*time")
    label = pd.Series(source, index=counted.index, dtype="object") + f":{name}"
    label = label + np.where(missing.notna(), " (not collected: " + missing.fillna("") + ")", "")
    return flop, label.where(flop.notna(), None), missing


def _cuda_core_peak(m: _Frame, precision: str, f: Factors) -> list[Formula]:
    fma = FLOP_OPS[precision][2]
    lanes = f.fp16_lanes if precision == "fp16" else 1.0
    factor = f.fma_flop * lanes
    peak = m(_op("sm", fma, ".sum.peak_sustained")) * factor * m("sm__cycles_elapsed.avg.per_second")
    return [(f"report:{fma}.peak_sustained*{factor:g}*sm_clock", peak)]


def tensor_variants(names: Iterable[str], pattern: re.Pattern[str] = _TENSOR_COUNT) -> list[str]:
    """One partition of the `sm__ops_path_tensor_*` variants: never a metric with its children.

    A variant whose name extends another present variant (`src_fp16_dst_fp32` under `src_fp16`,
    `..._sparsity_on` under its plain form) is dropped, and the `op_*` (per-opcode) family is used
    only when no aggregate `src_*` family is present.
    """
    found = sorted({match["v"] for n in names if (match := pattern.match(n)) is not None})
    src = [v for v in found if v.startswith("src_")]
    family = src if src else [v for v in found if v.startswith("op_")]
    present = set(family)
    # a parent is a prefix ending just before a `_`: look those up (linear), never pair all variants
    return [v for v in family if not any(v[:i] in present for i, c in enumerate(v) if c == "_")]


IDLE_TENSOR_PIPE = "counter:sm__pipe_tensor_cycles_active = 0 (idle tensor pipe)"
TENSOR_PATH_PREFIX = "tensor_path_"  # normalized columns tensor_path_<path> (+ peak_tensor_path_<path>_per_s)
PIPE_PREFIX = "pipe_"  # normalized columns pipe_<name>_pct
INTEGER_SOURCES = ("int8", "int4", "int1")  # tensor paths whose work is integer operations, not FLOPs
_SOURCE = re.compile(r"src_(.+?)(?:_dst|_sparsity|$)")  # fp16, bf16, tf32, fp4_fp6_fp8, int8, …


def tensor_path(variant: str) -> str:
    """The data path of a tensor variant: its source type, `_sparse` when sparsity is on."""
    match = _SOURCE.search(variant)
    source = match.group(1) if match else "other"
    return source + ("_sparse" if "sparsity_on" in variant else "")


def is_integer_path(path: str) -> bool:
    return path.removesuffix("_sparse") in INTEGER_SOURCES


@dataclass(frozen=True)
class TensorWork:
    """Tensor-core work of every launch: floating paths as FLOPs, integer paths as operations."""

    flop: pd.Series  # sum of the floating paths measured (NaN when none was)
    label: pd.Series
    not_collected: pd.Series  # variants of the partition that read n/a (None when none did)
    peak: pd.Series  # dense peak of the busiest floating source (FLOP/s)
    peak_label: pd.Series
    paths: Mapping[str, tuple[pd.Series, pd.Series]]  # path → (ops or FLOPs, its own peak per second)
    int_ops: pd.Series  # sum of the integer paths measured (NaN when none was)


def _tensor(m: _Frame, duration: pd.Series, f: Factors) -> TensorWork:
    index = m.df.index
    names = list(m.names())
    clock = m("sm__cycles_elapsed.avg.per_second")
    count_variants = tensor_variants(names, _TENSOR_COUNT)
    rate_variants = tensor_variants(names, _TENSOR_RATE)
    work_by_variant = {
        v: m(f"sm__ops_path_tensor_{v}.sum") for v in count_variants
    }
    label_by_path = "counter"
    if not count_variants and rate_variants:
        label_by_path = "rate*time"
        work_by_variant = {
            v: m(f"sm__ops_path_tensor_{v}.sum.per_cycle_elapsed") * clock * duration for v in rate_variants
        }
    elif count_variants and rate_variants:  # a count that reads n/a falls back to its rate
        for v in set(count_variants) & set(rate_variants):
            rated = m(f"sm__ops_path_tensor_{v}.sum.per_cycle_elapsed") * clock * duration
            work_by_variant[v] = work_by_variant[v].fillna(rated)
    peak_variants = sorted({mt["v"] for n in names if (mt := _TENSOR_PEAK.match(n)) is not None})
    per_variant_peak = pd.DataFrame(
        {v: m(f"sm__ops_path_tensor_{v}.sum.peak_sustained") for v in peak_variants}, index=index
    )
    by_path: dict[str, list[str]] = {}
    for v in work_by_variant:
        by_path.setdefault(tensor_path(v), []).append(v)
    paths: dict[str, tuple[pd.Series, pd.Series]] = {}
    for path, variants in sorted(by_path.items()):
        count = pd.concat([work_by_variant[v] for v in variants], axis=1).sum(axis=1, min_count=1)
        paths[path] = (count, _path_peak(per_variant_peak, path) * clock)
    floating = [p for p in paths if not is_integer_path(p)]
    integer = [p for p in paths if is_integer_path(p)]
    flop_paths = _sum_present([paths[p][0] for p in floating], index)
    not_collected = pd.Series(None, index=index, dtype="object")
    if work_by_variant:
        _, not_collected = _present_sum(work_by_variant, dict.fromkeys(work_by_variant, 1.0))
    k = f.tensor_flop_per_pipe_inst
    candidates: list[Formula] = [(f"{label_by_path}:sum(sm__ops_path_tensor_* floating paths)", flop_paths)]
    if not integer:  # an instruction count cannot tell integer from floating tensor work
        candidates += [
            (f"counter:sm__inst_executed_pipe_tensor*{k:g}", m("sm__inst_executed_pipe_tensor.sum") * k),
            (
                f"rate*time:smsp__inst_executed_pipe_tensor*{k:g}",
                m("smsp__inst_executed_pipe_tensor.sum.per_cycle_elapsed")
                * m("smsp__cycles_elapsed.avg.per_second")
                * duration
                * k,
            ),
        ]
    idle = m.any_of(*TENSOR_PIPE_PCT)
    candidates.append((IDLE_TENSOR_PIPE, idle.where(idle == 0)))
    flop, label = first_available(candidates, index)
    if floating:
        flop = flop.where(flop_paths.isna(), flop_paths)  # the paths decide wherever one was measured

    peaks: list[Formula] = []
    floating_peaks = per_variant_peak[[v for v in peak_variants if not is_integer_path(tensor_path(v))]]
    if not floating_peaks.columns.empty:
        floating_work = {v: w for v, w in work_by_variant.items() if tensor_path(v) in floating}
        ops = pd.DataFrame(floating_work, index=index)
        peaks.append(
            (
                "report:dense sm__ops_path_tensor_<busiest source>.peak_sustained*sm_clock",
                _busiest_peak(floating_peaks, ops) * clock,
            )
        )
    peaks.append(
        (
            f"report:sm__inst_executed_pipe_tensor.peak_sustained*{k:g}*sm_clock",
            m("sm__inst_executed_pipe_tensor.sum.peak_sustained") * k * clock,
        )
    )
    peak, peak_label = first_available(peaks, index)
    int_ops = _sum_present([paths[p][0] for p in integer], index)
    return TensorWork(flop, label, not_collected, peak, peak_label, paths, int_ops)


def _dense_peak(peaks: pd.DataFrame, source: str) -> pd.Series:
    """Max dense peak of the variants reading `source` (sparse peaks count 2:4 ops twice)."""
    dense = [v for v in peaks.columns if "sparsity_on" not in v]
    explicit = [v for v in dense if "sparsity_off" in v]
    pool = [v for v in (explicit or dense) if f"src_{source}" in v] or explicit or dense
    return peaks[pool].max(axis=1)


def _busiest_peak(peaks: pd.DataFrame, ops: pd.DataFrame) -> pd.Series:
    """Dense peak for the source type that did the most tensor work; FP16 (datasheet) if none."""
    default = _dense_peak(peaks, "fp16")
    busy = ops.fillna(0.0)
    if busy.empty or not (busy.max(axis=1) > 0).any():
        return default
    source = busy.idxmax(axis=1).astype(str).str.extract(_SOURCE, expand=False)
    source = source.where(busy.max(axis=1) > 0)
    out = default.copy()
    for name in source.dropna().unique():  # one step per source type, not per launch
        rows = source == name
        out[rows] = _dense_peak(peaks[rows], str(name))
    return out


def _path_peak(peaks: pd.DataFrame, path: str) -> pd.Series:
    """A data path's own peak (per cycle): dense peaks for a dense path, sparse for a sparse one."""
    source = path.removesuffix("_sparse")
    sparse = path.endswith("_sparse")
    mine = [v for v in peaks.columns if tensor_path(v).removesuffix("_sparse") == source]
    pool = [v for v in mine if ("sparsity_on" in v) == sparse]
    if not sparse:
        pool = [v for v in pool if "sparsity_off" in v] or pool
    if not pool:
        return pd.Series(np.nan, index=peaks.index, dtype="float64")
    return peaks[pool].max(axis=1)


def _sum_present(parts: list[pd.Series], index: pd.Index) -> pd.Series:
    """Sum of the parts that were measured; NaN only when none was (an n/a never erases a sum)."""
    if not parts:
        return pd.Series(np.nan, index=index, dtype="float64")
    return pd.concat(parts, axis=1).sum(axis=1, min_count=1)


def _pipes(m: _Frame) -> dict[str, pd.Series]:
    """Per pipe: the larger of its instruction-issue and active-cycle utilisation (percent of peak
    over the elapsed cycles; over the active cycles where the report has only that)."""
    found: dict[str, dict[str, list[str]]] = {}
    for name in m.names():
        for kind, pattern in (("inst", _PIPE_INST), ("cycles", _PIPE_CYCLES)):
            match = pattern.match(name)
            if match is not None:
                pipe = match["p"].removesuffix("_pred_on_any")
                found.setdefault(pipe, {}).setdefault(kind, []).append(name)
    out: dict[str, pd.Series] = {}
    for pipe, kinds in sorted(found.items()):
        elapsed_first = [sorted(names, key=lambda n: not n.endswith("elapsed")) for names in kinds.values()]
        values = [m.any_of(*names) for names in elapsed_first]
        out[pipe] = pd.concat(values, axis=1).max(axis=1)
    return out


def _warp_inst(m: _Frame, duration: pd.Series) -> list[Formula]:
    clock = m("sm__cycles_elapsed.avg.per_second")
    sms = m.any_of(*SM_COUNT_METRICS)
    return [
        ("counter:smsp__inst_executed.sum", m("smsp__inst_executed.sum")),
        ("counter:sm__inst_executed.sum", m("sm__inst_executed.sum")),
        (
            "rate*time:sm__inst_executed.sum.per_cycle_elapsed*sm_clock",
            m("sm__inst_executed.sum.per_cycle_elapsed") * clock * duration,
        ),
        (
            "rate*time:sm__inst_executed.avg.per_cycle_elapsed*SMs*sm_clock",
            m("sm__inst_executed.avg.per_cycle_elapsed") * sms * clock * duration,
        ),
    ]


@dataclass(frozen=True)
class _Measure:
    """One counter of a tier's traffic: `base` (a `.sum`) × `scale` bytes, its peak at `clock`.

    `derived` names the same quantity already in bytes (`derived__…`), as some reports store it.
    """

    base: str
    scale: float
    clock: str
    derived: str | None = None

    def name(self) -> str:
        return self.base if self.scale == 1 else f"{self.base}*{self.scale:g}"


@dataclass(frozen=True)
class TierDefinition:
    """One definition of a tier's traffic, with the roof of the very same counter."""

    kind: str  # "nsight", "counted" or "shared"
    label: pd.Series  # per row: the formula of the bytes
    bytes: pd.Series
    bandwidth_byte_per_s: pd.Series
    roof_label: pd.Series  # per row: how the roof was had (peak_sustained or pct of peak)
    builtin: bool  # the built-in per-architecture figure models this counter's peak


def _measured(
    m: _Frame, duration: pd.Series, measure: _Measure, kind: str, builtin: bool, rated: bool = True
) -> TierDefinition:
    """Bytes (count, else rate × time unless `rated` is False) and the counter's own peak rate:
    `.peak_sustained` × its clock, else achieved rate ÷ (`.pct_of_peak_sustained_elapsed` / 100)."""
    index = m.df.index
    s = measure.scale
    base, derived, clock = measure.base, measure.derived, m(measure.clock)
    count = m(base) * s
    rates: list[Formula] = [(f"{base}.per_second*{s:g}", m(f"{base}.per_second") * s)]
    peaks: list[Formula] = [(f"{measure.name()}.peak_sustained", m(f"{base}.peak_sustained") * s)]
    if derived is not None:
        rates.append((f"{derived}.per_second", m(f"{derived}.per_second")))
        peaks.append((f"{derived}.peak_sustained", m(f"{derived}.peak_sustained")))
    rate, rate_label = first_available(rates, index)
    peak, peak_label = first_available(peaks, index)
    nbytes, label = first_available(
        [(f"counter:{measure.name()}", count), ("rate*time:", rate * duration if rated else m.nan)], index
    )
    label = label.where(label != "rate*time:", "rate*time:" + rate_label)
    label = label.str.replace(r"\*1$", "", regex=True)
    pct = m(f"{base}.pct_of_peak_sustained_elapsed")
    achieved = rate.fillna(count / duration)
    by_pct = (achieved / (pct / 100.0)).where(pct > 0)
    roof, roof_label = first_available(
        [
            ("peak", peak * clock),
            (f"{measure.name()} rate / pct_of_peak_sustained_elapsed", by_pct),
        ],
        index,
    )
    roof_label = roof_label.where(roof_label != "peak", peak_label + f" x {measure.clock}")
    return TierDefinition(kind, label, nbytes, roof, roof_label, builtin)


def _fixed(label: str, nbytes: pd.Series, roof_of: TierDefinition, kind: str) -> TierDefinition:
    """Another formula for the same counter as `roof_of` (DRAM read + write = dram__bytes)."""
    labels = pd.Series(label, index=nbytes.index, dtype="object").where(nbytes.notna())
    roof = roof_of.bandwidth_byte_per_s
    return TierDefinition(kind, labels, nbytes, roof, roof_of.roof_label, roof_of.builtin)


def nsight_era(ncu_version: str | None) -> str | None:
    """Which Nsight roofline a report's tiers follow: "2022" (≤ 2022.x), "2023" or "2024" (≥ 2024.1)."""
    if not ncu_version:
        return None
    version = version_tuple(ncu_version)
    if version < (2023,):
        return "2022"
    return "2023" if version < (2024, 1) else "2024"


def _writeback(cc: pd.Series, scope: str) -> pd.Series:
    """Rows whose compute capability draws the L1 writeback of `scope` ("", "_mem_lg", "_mem_lgds")."""
    return {"": cc <= 72, "_mem_lg": (cc >= 75) & (cc <= 89), "_mem_lgds": cc >= 90}[scope]


def _tiers(
    m: _Frame, duration: pd.Series, f: Factors, era: str | None, traffic: TrafficDefinition
) -> dict[str, tuple[str, list[TierDefinition]]]:
    """Per tier: the definition asked for, and its candidates in order of preference."""
    lts, l1, dram_clk = (f"{u}__cycles_elapsed.avg.per_second" for u in ("lts", "l1tex", "dram"))
    sector, xbar, wb = f.sector_bytes, f.l2_xbar_bytes_per_cycle, f.l1_writeback_bytes_per_cycle

    def measure(
        kind: str,
        base: str,
        scale: float,
        clock: str,
        derived: str | None = None,
        builtin: bool = False,
        rated: bool = True,
    ) -> TierDefinition:
        return _measured(m, duration, _Measure(base, scale, clock, derived), kind, builtin, rated)

    asked = traffic.value
    # DRAM: both definitions count dram__bytes (= read + write), with its own peak
    dram_bytes = measure(asked, "dram__bytes.sum", 1.0, dram_clk, builtin=True, rated=False)
    dram = [
        dram_bytes,
        _fixed(
            "counter:dram__bytes_read.sum+dram__bytes_write.sum",
            m("dram__bytes_read.sum") + m("dram__bytes_write.sum"),
            dram_bytes,
            asked,
        ),
        _fixed(
            f"counter:(dram__sectors_read.sum+dram__sectors_write.sum)*{sector:g}",
            (m("dram__sectors_read.sum") + m("dram__sectors_write.sum")) * sector,
            dram_bytes,
            asked,
        ),
        measure(asked, "dram__bytes.sum", 1.0, dram_clk, builtin=True),
        _fixed(
            "rate*time:dram__bytes_read.sum.per_second+dram__bytes_write.sum.per_second",
            (m("dram__bytes_read.sum.per_second") + m("dram__bytes_write.sum.per_second")) * duration,
            dram_bytes,
            asked,
        ),
    ]

    l2_nsight = {
        "2024": measure(
            "nsight", "lts__lts2xbar_cycles_active.sum", xbar, lts, "derived__lts__lts2xbar_bytes.sum"
        ),
        "2023": measure("nsight", "l1tex__m_xbar2l1tex_read_bytes.sum", 1.0, lts),
        "2022": measure("nsight", "lts__t_bytes.sum", 1.0, lts),
    }
    l2_counted = [
        measure("counted", "lts__t_sectors.sum", sector, lts),
        measure("counted", "lts__t_bytes.sum", 1.0, lts),
    ]

    cc = 10 * m("device__attribute_compute_capability_major") + m(
        "device__attribute_compute_capability_minor"
    )
    writebacks = []
    for scope in ("_mem_lgds", "_mem_lg", ""):
        d = measure(
            "nsight",
            f"l1tex__lsu_writeback_active{scope}.sum",
            wb,
            l1,
            f"derived__l1tex__lsu_writeback_bytes{scope}.sum",
            builtin=True,
        )
        # the scope Nsight draws on this compute capability; any scope where the CC is unknown
        keep = _writeback(cc, scope) | cc.isna()
        writebacks.append(
            TierDefinition(
                d.kind,
                d.label.where(keep),
                d.bytes.where(keep),
                d.bandwidth_byte_per_s.where(keep),
                d.roof_label.where(keep),
                d.builtin,
            )
        )
    l1_writeback = _first_of(writebacks)
    l1_nsight = {
        "2024": l1_writeback,
        "2023": l1_writeback,
        "2022": measure("nsight", "l1tex__t_bytes.sum", 1.0, l1),
    }
    # the built-in 128 B/SM/clk is the writeback's and the shared data pipe's peak (confirmed by
    # the reports); the tag stage's sector peak is not confirmed, so it gets no built-in roof
    t_sectors = measure("counted", "l1tex__t_sectors.sum", sector, l1)
    global_ld, global_st, local_ld, local_st = (m(name) for name in L1_SECTOR_METRICS)
    l1_counted = [
        measure("counted", "l1tex__t_bytes.sum", 1.0, l1),
        t_sectors,
        _fixed(
            f"counter:l1tex__t_sectors_pipe_lsu_mem_{{global,local}}_op_{{ld,st}}.sum*{sector:g}",
            (global_ld + global_st + local_ld.fillna(0.0) + local_st.fillna(0.0)) * sector,
            t_sectors,
            "counted",
        ),
    ]

    wavefront = f.shared_wavefront_bytes
    pipe = measure("shared", f"{SHARED_WAVEFRONTS}.sum", wavefront, l1, builtin=True)
    shared = [
        # the parent metric also counts wavefronts that are not shared-memory instructions (it is
        # non-zero for kernels without any): the bytes come from the per-instruction children,
        # the roof from the parent (the same data pipe)
        _fixed(
            f"counter:{SHARED_WAVEFRONTS}_op_{{ld,st,atom}}.sum*{wavefront:g}",
            (
                m(f"{SHARED_WAVEFRONTS}_op_ld.sum")
                + m(f"{SHARED_WAVEFRONTS}_op_st.sum")
                + m(f"{SHARED_WAVEFRONTS}_op_atom.sum").fillna(0.0)
            )
            * wavefront,
            pipe,
            "shared",
        ),
        _fixed(
            "counter:sm__sass_data_bytes_mem_shared.sum",
            m("sm__sass_data_bytes_mem_shared.sum"),
            TierDefinition("shared", m.nan, m.nan, m.nan, m.nan.astype("object"), False),
            "shared",
        ),
    ]

    def ordered(by_era: dict[str, TierDefinition], counted: list[TierDefinition]) -> list[TierDefinition]:
        """The report's own Nsight measure (any, newest first, when the version is unknown),
        then another version's, then counted traffic; counted first under `counted`."""
        own: list[TierDefinition] = []
        for e in [era] if era else ["2024", "2023", "2022"]:
            if all(by_era[e] is not d for d in own):
                own.append(by_era[e])
        others = [replace(d, kind=OTHER_NSIGHT) for d in by_era.values() if all(d is not o for o in own)]
        if traffic is TrafficDefinition.COUNTED:
            return [*counted, *own, *others]
        return [*own, *others, *counted]

    return {
        "dram": (asked, dram),
        "l2": (asked, ordered(l2_nsight, l2_counted)),
        "l1": (asked, ordered(l1_nsight, l1_counted)),
        "shared": ("shared", shared),
    }


def _first_of(definitions: list[TierDefinition]) -> TierDefinition:
    """Row-wise merge of alternatives of one definition (the first with bytes wins per row)."""
    first = definitions[0]
    label, nbytes, roof, roof_label = first.label, first.bytes, first.bandwidth_byte_per_s, first.roof_label
    for d in definitions[1:]:
        take = nbytes.isna() & d.bytes.notna()
        label, nbytes = label.where(~take, d.label), nbytes.where(~take, d.bytes)
        roof, roof_label = roof.where(~take, d.bandwidth_byte_per_s), roof_label.where(~take, d.roof_label)
    return TierDefinition(first.kind, label, nbytes, roof, roof_label, first.builtin)


OTHER_NSIGHT = "nsight-other"
_KIND_WORDS = {
    "nsight": "the measure Nsight draws",
    OTHER_NSIGHT: "the measure another Nsight version draws",
    "counted": "counted traffic",
}


@dataclass(frozen=True)
class PickedTier:
    """One tier's traffic per row: bytes, roof of the same counter, and where each came from."""

    bytes: pd.Series
    label: pd.Series
    bandwidth_byte_per_s: pd.Series
    roof_label: pd.Series
    definition: pd.Series  # "nsight", "counted", "shared"; "closest to nsight: counted", …
    builtin: pd.Series  # bool: the built-in per-architecture roof models the chosen counter


def _pick_tier(asked: str, definitions: list[TierDefinition], index: pd.Index, era: str | None) -> PickedTier:
    """Per row: the first definition with bytes and a roof of its own, else the first with bytes
    (its roof then stays missing: a tier's traffic is never judged against another's peak)."""
    nbytes = pd.Series(np.nan, index=index, dtype="float64")
    label = pd.Series(None, index=index, dtype="object")
    roof = pd.Series(np.nan, index=index, dtype="float64")
    roof_label = pd.Series(None, index=index, dtype="object")
    kind = pd.Series(None, index=index, dtype="object")
    builtin = pd.Series(False, index=index, dtype="bool")
    for need_roof in (True, False):
        for d in definitions:
            take = nbytes.isna() & d.bytes.notna()
            if need_roof:
                take &= d.bandwidth_byte_per_s.notna()
            nbytes = nbytes.where(~take, d.bytes)
            label = label.where(~take, d.label)
            roof = roof.where(~take, d.bandwidth_byte_per_s)
            roof_label = roof_label.where(~take, d.roof_label)
            kind = kind.where(~take, d.kind)
            builtin = builtin.where(~take, d.builtin)
    exact = kind == asked
    if asked == TrafficDefinition.NSIGHT.value and era is None:
        words = "nsight (ncu version unknown: chosen by the metrics present)"
    else:
        words = asked
    closest = "closest to " + asked + ": " + kind.map(_KIND_WORDS).fillna(kind.astype(str))
    definition = closest.where(~exact, words)
    return PickedTier(nbytes, label, roof, roof_label, definition.where(nbytes.notna()), builtin.astype(bool))


# Metrics to collect for each part of the analysis: what `profile --fast` asks ncu for, and
# what a note prints when a report lacks them (metric recipe §3.8).
COLLECT: dict[str, tuple[str, ...]] = {
    "duration": ("gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"),
    "flop": tuple(_op("sm", op) for ops in FLOP_OPS.values() for op in ops)
    + tuple(_op("sm", ops[2], ".sum.peak_sustained") for ops in FLOP_OPS.values()),
    "tensor": (
        # the per-architecture tensor partitions (§3.3); [verify] that ncu expands the regex to
        # every sm__ops_path_tensor_* of the chip at hand, with .sum and .peak_sustained
        "regex:sm__ops_path_tensor_.*",
        "sm__inst_executed_pipe_tensor.sum",
        "sm__inst_executed_pipe_tensor.sum.peak_sustained",
    ),
    "dram": ("dram__bytes.sum", "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second"),
    "l2": (
        # Nsight >= 2024.1's L2 measure (the default traffic definition), and every L2 lookup
        "lts__lts2xbar_cycles_active.sum",
        "lts__lts2xbar_cycles_active.sum.peak_sustained",
        "lts__t_bytes.sum",
        "lts__t_bytes.sum.peak_sustained",
        "lts__cycles_elapsed.avg.per_second",
    ),
    "l1": ("l1tex__t_bytes.sum", "l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second"),
    "shared": (
        "sm__sass_data_bytes_mem_shared.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained",
    ),
    # per-pipe utilisation (integer and special-function ceilings) and warp instructions (the
    # instruction roofline); unverified that every name exists on every architecture before Volta
    "pipes": (
        *(f"sm__inst_executed_pipe_{p}.avg.pct_of_peak_sustained_active" for p in ("alu", "fma", "xu")),
        "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
        "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    ),
    "instructions": ("smsp__inst_executed.sum", SCHEDULERS_METRIC, "device__attribute_multiprocessor_count"),
    "sol": (
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
        "launch__waves_per_multiprocessor",
    ),
}


def collect_command(parts: Iterable[str], app: str = "./your_app") -> str:
    """The exact ncu command line that collects the metrics of the given parts."""
    names = sorted({name for part in parts for name in COLLECT[part]})
    return f"ncu --metrics {','.join(names)} -o report {app}"
