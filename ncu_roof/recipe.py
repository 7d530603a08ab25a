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
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ncu_roof.model import PRECISIONS
from ncu_roof.ncu import version_tuple
from ncu_roof.traffic import TrafficDefinition


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
    return [v for v in family if not any(v != o and v.startswith(o + "_") for o in family)]


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
