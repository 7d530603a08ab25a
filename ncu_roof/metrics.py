"""ncu metric names: what the readers load, what `profile` collects, what a note asks for.

The one home of the metric lists. The recipe's formulas (`ncu_roof.recipe`) read exactly these
names; the readers (`ncu_roof.ingest`) keep only the columns `is_wanted` accepts, so this module
sits below both and imports nothing of the project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TENSOR_COUNT = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum$")
TENSOR_RATE = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum\.per_cycle_elapsed$")
TENSOR_PEAK = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum\.peak_sustained$")
_PCT = r"\.avg\.pct_of_peak_sustained_(?:elapsed|active)$"
PIPE_INST = re.compile(r"^sm__inst_executed_pipe_(?P<p>[a-z0-9_]+)" + _PCT)
PIPE_CYCLES = re.compile(r"^sm__pipe_(?P<p>[a-z0-9_]+)_cycles_active" + _PCT)
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


def op_metric(kind: str, op: str, rollup: str = ".sum") -> str:
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
            names |= {op_metric("sm", op), op_metric("smsp", op)}
            names.add(op_metric("smsp", op, ".sum.per_cycle_elapsed"))
            names.add(op_metric("sm", op, ".sum.peak_sustained"))
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
        or TENSOR_COUNT.match(name) is not None
        or TENSOR_RATE.match(name) is not None
        or TENSOR_PEAK.match(name) is not None
        or PIPE_INST.match(name) is not None
        or PIPE_CYCLES.match(name) is not None
    )



# Metrics to collect for each part of the analysis: what `profile --fast` asks ncu for, and
# what a note prints when a report lacks them (metric recipe §3.8).
COLLECT: dict[str, tuple[str, ...]] = {
    "duration": ("gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"),
    "flop": tuple(op_metric("sm", op) for ops in FLOP_OPS.values() for op in ops)
    + tuple(op_metric("sm", ops[2], ".sum.peak_sustained") for ops in FLOP_OPS.values()),
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
