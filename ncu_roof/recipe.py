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
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ncu_roof.model import PRECISIONS


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
_FLOP_OPS = {
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
    }
    for axis in "xyz":
        names |= {f"launch__grid_dim_{axis}", f"launch__block_dim_{axis}"}
    for unit in ("sm", "smsp", "gpc", "lts", "l1tex", "dram"):
        names.add(f"{unit}__cycles_elapsed.avg.per_second")
    for ops in _FLOP_OPS.values():
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
    names |= {f"{SHARED_WAVEFRONTS}_op_{op}.sum" for op in ("ld", "st", "atom")}
    for scope in ("lg", "lgds"):
        base = f"l1tex__lsu_writeback_active_mem_{scope}.sum"
        names |= {base, f"{base}.peak_sustained"}
        derived = f"derived__l1tex__lsu_writeback_bytes_mem_{scope}.sum"
        names |= {f"{derived}.per_second", f"{derived}.peak_sustained"}
    return frozenset(names)


WANTED = wanted_metrics()


def is_wanted(name: str) -> bool:
    """True for metrics the recipe reads, including the per-architecture tensor variants."""
    return (
        name in WANTED
        or _TENSOR_COUNT.match(name) is not None
        or _TENSOR_RATE.match(name) is not None
        or _TENSOR_PEAK.match(name) is not None
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


def normalize(metrics: pd.DataFrame, factors: Factors = FACTORS) -> pd.DataFrame:
    """Metric frame (SI) → normalized per-launch table (SI), with a recipe label per quantity."""
    m = _Frame(metrics)
    out = pd.DataFrame(index=metrics.index)
    duration, out["duration_s_recipe"] = first_available(_duration(m), metrics.index)
    out["duration_s"] = duration
    out["sm_clock_hz"] = m.any_of("sm__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second")
    out["dram_clock_hz"] = m("dram__cycles_elapsed.avg.per_second")
    out["waves_per_sm"] = m("launch__waves_per_multiprocessor")

    for precision in ("fp64", "fp32", "fp16"):
        flop, label = first_available(_cuda_core_flop(m, precision, duration, factors), metrics.index)
        out[f"flop_{precision}"], out[f"flop_{precision}_recipe"] = flop, label
        peak, peak_label = first_available(_cuda_core_peak(m, precision, factors), metrics.index)
        out[f"peak_{precision}_flop_per_s"] = peak
        out[f"peak_{precision}_flop_per_s_recipe"] = peak_label
    tensor, tensor_label, tensor_peak, tensor_peak_label = _tensor(m, duration, factors)
    out["flop_tensor"], out["flop_tensor_recipe"] = tensor, tensor_label
    out["peak_tensor_flop_per_s"], out["peak_tensor_flop_per_s_recipe"] = tensor_peak, tensor_peak_label
    flops = out[[f"flop_{p}" for p in PRECISIONS]]
    out["flop_total"] = flops.sum(axis=1, min_count=1)

    for tier, definitions in _tiers(m, duration, factors).items():
        byte_count, label, bandwidth, bandwidth_label = _pick_tier(definitions, metrics.index)
        out[f"{tier}_bytes"], out[f"{tier}_bytes_recipe"] = byte_count, label
        out[f"bw_{tier}_byte_per_s"], out[f"bw_{tier}_byte_per_s_recipe"] = bandwidth, bandwidth_label

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


def _cuda_core_flop(m: _Frame, precision: str, duration: pd.Series, f: Factors) -> list[Formula]:
    add, mul, fma = _FLOP_OPS[precision]
    lanes = f.fp16_lanes if precision == "fp16" else 1.0

    def count(op: str) -> pd.Series:
        return m.any_of(_op("sm", op), _op("smsp", op))

    def rate(op: str) -> pd.Series:
        per_cycle = m(_op("smsp", op, ".sum.per_cycle_elapsed"))
        return per_cycle * m("smsp__cycles_elapsed.avg.per_second") * duration

    name = f"{add}+{mul}+2*{fma}" if lanes == 1.0 else f"{lanes:g}*({add}+{mul}+2*{fma})"
    counted = lanes * (count(add) + count(mul) + f.fma_flop * count(fma))
    rated = lanes * (rate(add) + rate(mul) + f.fma_flop * rate(fma))
    if precision == "fp32":
        packed = f.fp32x2_lanes * (count("fadd2") + count("fmul2") + f.fma_flop * count("ffma2"))
        counted = counted + packed.fillna(0.0)
    return [(f"counter:{name}", counted), (f"rate*time:{name}", rated)]


def _cuda_core_peak(m: _Frame, precision: str, f: Factors) -> list[Formula]:
    fma = _FLOP_OPS[precision][2]
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


def _tensor(m: _Frame, duration: pd.Series, f: Factors) -> tuple[pd.Series, pd.Series, pd.Series, pd.Series]:
    index = m.df.index
    names = list(m.names())
    clock = m("sm__cycles_elapsed.avg.per_second")
    count_variants = tensor_variants(names, _TENSOR_COUNT)
    rate_variants = tensor_variants(names, _TENSOR_RATE)
    candidates: list[Formula] = []
    if count_variants:
        counts = [m(f"sm__ops_path_tensor_{v}.sum") for v in count_variants]
        candidates.append(("counter:sum(sm__ops_path_tensor_*)", _sum_all(counts, index)))
    if rate_variants:
        rates = [
            m(f"sm__ops_path_tensor_{v}.sum.per_cycle_elapsed") * clock * duration for v in rate_variants
        ]
        candidates.append(("rate*time:sum(sm__ops_path_tensor_*)", _sum_all(rates, index)))
    k = f.tensor_flop_per_pipe_inst
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
    flop, label = first_available(candidates, index)

    peak_variants = sorted({mt["v"] for n in names if (mt := _TENSOR_PEAK.match(n)) is not None})
    peaks: list[Formula] = []
    if peak_variants:
        per_variant = pd.DataFrame(
            {v: m(f"sm__ops_path_tensor_{v}.sum.peak_sustained") for v in peak_variants}, index=index
        )
        work = count_variants or rate_variants
        ops = pd.DataFrame(
            {
                v: m.any_of(f"sm__ops_path_tensor_{v}.sum", f"sm__ops_path_tensor_{v}.sum.per_cycle_elapsed")
                for v in work
            },
            index=index,
        )
        peaks.append(
            (
                "report:dense sm__ops_path_tensor_<busiest source>.peak_sustained*sm_clock",
                _busiest_peak(per_variant, ops) * clock,
            )
        )
    peaks.append(
        (
            f"report:sm__inst_executed_pipe_tensor.peak_sustained*{k:g}*sm_clock",
            m("sm__inst_executed_pipe_tensor.sum.peak_sustained") * k * clock,
        )
    )
    peak, peak_label = first_available(peaks, index)
    return flop, label, peak, peak_label


_SOURCE = re.compile(r"src_(.+?)(?:_dst|_sparsity|$)")  # fp16, bf16, tf32, fp4_fp6_fp8, …


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


def _sum_all(parts: list[pd.Series], index: pd.Index) -> pd.Series:
    if not parts:
        return pd.Series(np.nan, index=index, dtype="float64")
    return pd.concat(parts, axis=1).sum(axis=1, min_count=len(parts))


@dataclass(frozen=True)
class TierDefinition:
    """One definition of a tier's traffic, with the roof measured the same way."""

    label: str
    bytes: pd.Series
    bandwidth_byte_per_s: pd.Series


def _tiers(m: _Frame, duration: pd.Series, f: Factors) -> dict[str, list[TierDefinition]]:
    lts_clk = m("lts__cycles_elapsed.avg.per_second")
    l1_clk = m("l1tex__cycles_elapsed.avg.per_second")
    dram_peak = m("dram__bytes.sum.peak_sustained") * m("dram__cycles_elapsed.avg.per_second")
    sector = f.sector_bytes
    xbar = f.l2_xbar_bytes_per_cycle
    wb = f.l1_writeback_bytes_per_cycle
    dram = [
        TierDefinition("counter:dram__bytes.sum", m("dram__bytes.sum"), dram_peak),
        TierDefinition(
            "counter:dram__bytes_read.sum+dram__bytes_write.sum",
            m("dram__bytes_read.sum") + m("dram__bytes_write.sum"),
            dram_peak,
        ),
        TierDefinition(
            f"counter:(dram__sectors_read.sum+dram__sectors_write.sum)*{sector:g}",
            (m("dram__sectors_read.sum") + m("dram__sectors_write.sum")) * sector,
            dram_peak,
        ),
        TierDefinition(
            "rate*time:dram__bytes.sum.per_second", m("dram__bytes.sum.per_second") * duration, dram_peak
        ),
        TierDefinition(
            "rate*time:dram__bytes_read.sum.per_second+dram__bytes_write.sum.per_second",
            (m("dram__bytes_read.sum.per_second") + m("dram__bytes_write.sum.per_second")) * duration,
            dram_peak,
        ),
    ]
    l2 = [
        TierDefinition(
            "counter:lts__t_bytes.sum",
            m("lts__t_bytes.sum"),
            m("lts__t_bytes.sum.peak_sustained") * lts_clk,
        ),
        TierDefinition(
            f"counter:lts__t_sectors.sum*{sector:g}",
            m("lts__t_sectors.sum") * sector,
            m("lts__t_sectors.sum.peak_sustained") * sector * lts_clk,
        ),
        TierDefinition(
            f"rate*time:lts__t_sectors.sum.per_second*{sector:g}",
            m("lts__t_sectors.sum.per_second") * sector * duration,
            m("lts__t_sectors.sum.peak_sustained") * sector * lts_clk,
        ),
        TierDefinition(
            f"nsight:lts__lts2xbar_cycles_active.sum*{xbar:g}",
            m("lts__lts2xbar_cycles_active.sum") * xbar,
            m("lts__lts2xbar_cycles_active.sum.peak_sustained") * xbar * lts_clk,
        ),
        TierDefinition(
            "nsight:rate*time:derived__lts__lts2xbar_bytes.sum.per_second",
            m("derived__lts__lts2xbar_bytes.sum.per_second") * duration,
            m("derived__lts__lts2xbar_bytes.sum.peak_sustained") * lts_clk,
        ),
    ]
    l1 = [
        TierDefinition(
            "counter:l1tex__t_bytes.sum",
            m("l1tex__t_bytes.sum"),
            m("l1tex__t_bytes.sum.peak_sustained") * l1_clk,
        ),
        TierDefinition(
            f"counter:l1tex__t_sectors.sum*{sector:g}",
            m("l1tex__t_sectors.sum") * sector,
            m("l1tex__t_sectors.sum.peak_sustained") * sector * l1_clk,
        ),
    ]
    global_ld, global_st, local_ld, local_st = (m(name) for name in L1_SECTOR_METRICS)
    l1.append(
        TierDefinition(
            f"counter:l1tex__t_sectors_pipe_lsu_mem_{{global,local}}_op_{{ld,st}}.sum*{sector:g}",
            (global_ld + global_st + local_ld.fillna(0.0) + local_st.fillna(0.0)) * sector,
            m.nan,
        )
    )
    for scope in ("lgds", "lg"):
        base = f"l1tex__lsu_writeback_active_mem_{scope}.sum"
        derived = f"derived__l1tex__lsu_writeback_bytes_mem_{scope}.sum"
        l1 += [
            TierDefinition(
                f"nsight:{base}*{wb:g}",
                m(base) * wb,
                m(f"{base}.peak_sustained") * wb * l1_clk,
            ),
            TierDefinition(
                f"nsight:rate*time:{derived}.per_second",
                m(f"{derived}.per_second") * duration,
                m(f"{derived}.peak_sustained") * l1_clk,
            ),
        ]
    wavefront = f.shared_wavefront_bytes
    shared_peak = m("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained") * wavefront * l1_clk
    shared = [
        TierDefinition(
            "counter:sm__sass_data_bytes_mem_shared.sum",
            m("sm__sass_data_bytes_mem_shared.sum"),
            shared_peak,
        ),
        TierDefinition(
            f"counter:l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{{ld,st,atom}}.sum*{wavefront:g}",
            # the parent metric also counts wavefronts that are not shared-memory instructions
            # (it is non-zero for kernels without any): use the per-instruction children
            (
                m(f"{SHARED_WAVEFRONTS}_op_ld.sum")
                + m(f"{SHARED_WAVEFRONTS}_op_st.sum")
                + m(f"{SHARED_WAVEFRONTS}_op_atom.sum").fillna(0.0)
            )
            * wavefront,
            shared_peak,
        ),
    ]
    return {"dram": dram, "l2": l2, "l1": l1, "shared": shared}


def _pick_tier(
    definitions: list[TierDefinition], index: pd.Index
) -> tuple[pd.Series, pd.Series, pd.Series, pd.Series]:
    """Per row: bytes from the first definition that has them (counted traffic before Nsight's
    cycles × width proxies), with that definition's own roof, else the roof of the first
    definition that has one (its label says so). Returns bytes, label, roof, roof label."""
    nbytes = pd.Series(np.nan, index=index, dtype="float64")
    label = pd.Series(None, index=index, dtype="object")
    roof = pd.Series(np.nan, index=index, dtype="float64")
    roof_label = pd.Series(None, index=index, dtype="object")
    for d in definitions:
        take = nbytes.isna() & d.bytes.notna()
        nbytes = nbytes.where(~take, d.bytes)
        label = label.where(~take, d.label)
        own = take & d.bandwidth_byte_per_s.notna()
        roof = roof.where(~own, d.bandwidth_byte_per_s)
        roof_label = roof_label.where(~own, d.label)
    for d in definitions:
        borrow = nbytes.notna() & roof.isna() & d.bandwidth_byte_per_s.notna()
        roof = roof.where(~borrow, d.bandwidth_byte_per_s)
        roof_label = roof_label.where(~borrow, "roof of " + d.label)
    return nbytes, label, roof, roof_label


# Metrics to collect for each part of the analysis: what `profile --fast` asks ncu for, and
# what a note prints when a report lacks them (metric recipe §3.8).
COLLECT: dict[str, tuple[str, ...]] = {
    "duration": ("gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"),
    "flop": tuple(_op("sm", op) for ops in _FLOP_OPS.values() for op in ops)
    + tuple(_op("sm", ops[2], ".sum.peak_sustained") for ops in _FLOP_OPS.values()),
    "tensor": (
        # the per-architecture tensor partitions (§3.3); [verify] that ncu expands the regex to
        # every sm__ops_path_tensor_* of the chip at hand, with .sum and .peak_sustained
        "regex:sm__ops_path_tensor_.*",
        "sm__inst_executed_pipe_tensor.sum",
        "sm__inst_executed_pipe_tensor.sum.peak_sustained",
    ),
    "dram": ("dram__bytes.sum", "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second"),
    "l2": ("lts__t_bytes.sum", "lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"),
    "l1": ("l1tex__t_bytes.sum", "l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second"),
    "shared": (
        "sm__sass_data_bytes_mem_shared.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained",
    ),
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
