"""The one home of the ncu metric names. `FORMULA_METRICS`: per part of the analysis, every counter
its formulas read (the recipe takes its names from the constants here; its metric frame refuses
a name not wanted); `WANTED`, what the readers load, is that table plus the launch's identity;
`COLLECT` picks from it what `profile` collects and a note asks for. Below both, it imports
nothing of the project."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain

# the families the recipe finds by name: tensor partitions (count, rate, peak) and pipes
TENSOR_COUNT = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum$")
TENSOR_RATE = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum\.per_cycle_elapsed$")
TENSOR_PEAK = re.compile(r"^sm__ops_path_tensor_(?P<v>.+)\.sum\.peak_sustained$")
_PCT = r"\.avg\.pct_of_peak_sustained_(?:elapsed|active)$"
PIPE_INST = re.compile(r"^sm__inst_executed_pipe_(?P<p>[a-z0-9_]+)" + _PCT)
PIPE_CYCLES = re.compile(r"^sm__pipe_(?P<p>[a-z0-9_]+)_cycles_active" + _PCT)
FORMULA_PATTERNS = (TENSOR_COUNT, TENSOR_RATE, TENSOR_PEAK, PIPE_INST, PIPE_CYCLES)

# clocks (cycles per second) of the units the recipe scales by
CLOCKS = {
    unit: f"{unit}__cycles_elapsed.avg.per_second" for unit in ("sm", "smsp", "gpc", "lts", "l1tex", "dram")
}

# duration: the counter, else cycles / clock
DURATION = "gpu__time_duration.sum"
SM_CYCLES = "sm__cycles_elapsed.avg"
SM_ACTIVE_CYCLES = "sm__cycles_active.avg"  # turns a pipe's % of active cycles into % of elapsed
GPC_CYCLES = "gpc__cycles_elapsed.max"

# CUDA-core FLOPs: thread instructions per op, counted per SM or sub-partition, or as a rate
FLOP_OPS = {
    "fp64": ("dadd", "dmul", "dfma"),
    "fp32": ("fadd", "fmul", "ffma"),
    "fp16": ("hadd", "hmul", "hfma"),
}
# the packed (two-lane) forms of a precision's ops, counted where a report holds them: Blackwell's
# FP32x2 (cc 10.x, 12.x), read in the same forms as the scalar ops
PACKED_OPS = {"fp32": ("fadd2", "fmul2", "ffma2")}
FLOP_FORMS = (("sm", ".sum"), ("smsp", ".sum"), ("smsp", ".sum.per_cycle_elapsed"))


def op_metric(kind: str, op: str, rollup: str = ".sum") -> str:
    return f"{kind}__sass_thread_inst_executed_op_{op}_pred_on{rollup}"


def fma_peak(precision: str) -> str:
    """The per-SM peak a precision's compute roof is read from: its FMA's `.peak_sustained`."""
    return op_metric("sm", FLOP_OPS[precision][2], ".sum.peak_sustained")


# tensor pipe: instructions (when no partition was collected), their peak, its utilisation
TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
TENSOR_INST_PEAK = "sm__inst_executed_pipe_tensor.sum.peak_sustained"
TENSOR_INST_RATE = "smsp__inst_executed_pipe_tensor.sum.per_cycle_elapsed"
TENSOR_PIPE_PCT = tuple(
    f"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_{w}" for w in ("elapsed", "active")
)

# warp instructions executed (the instruction roofline's work) and what sizes the issue peak
WARP_INST_METRICS = (
    "smsp__inst_executed.sum",
    "sm__inst_executed.sum",
    "sm__inst_executed.sum.per_cycle_elapsed",
    "sm__inst_executed.avg.per_cycle_elapsed",
)
SM_COUNT_METRICS = ("device__attribute_multiprocessor_count", "launch__sm_count")
SCHEDULERS_METRIC = "device__attribute_num_schedulers_per_multiprocessor"

# The device attributes built-in roofs are computed from (ncu writes clocks in kHz, no unit).
CC_MAJOR = "device__attribute_compute_capability_major"
CC_MINOR = "device__attribute_compute_capability_minor"
DEVICE_ATTRIBUTES = (
    ("device_sm_count", "device__attribute_multiprocessor_count", 1.0),
    ("device_clock_hz", "device__attribute_clock_rate", 1e3),
    ("device_memory_clock_hz", "device__attribute_memory_clock_rate", 1e3),
    ("device_memory_bus_bits", "device__attribute_global_memory_bus_width", 1.0),
    ("device_l2_slices", "device__attribute_l2s_count", 1.0),
    ("device_cc_major", CC_MAJOR, 1.0),
    ("device_cc_minor", CC_MINOR, 1.0),
)

# Memory tiers. Each counter a tier's traffic is measured by (a `.sum`), with the `derived__…`
# metric some reports hold the same bytes in (None where there is none); read in every form
# (count, rate, peak, pct of peak), see `counter_forms`.
TIER_MEASURES: dict[str, dict[str, str | None]] = {
    "dram": {"dram__bytes.sum": None},
    "l2": {
        "lts__lts2xbar_cycles_active.sum": "derived__lts__lts2xbar_bytes.sum",
        "l1tex__m_xbar2l1tex_read_bytes.sum": None,
        "lts__t_bytes.sum": None,
        "lts__t_sectors.sum": None,
    },
    "l1": {
        **{
            f"l1tex__lsu_writeback_active{scope}.sum": f"derived__l1tex__lsu_writeback_bytes{scope}.sum"
            for scope in ("_mem_lgds", "_mem_lg", "")
        },
        "l1tex__t_bytes.sum": None,
        "l1tex__t_sectors.sum": None,
    },
    "shared": {"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": None},
}
MEASURE_DERIVED = {base: derived for measures in TIER_MEASURES.values() for base, derived in measures.items()}


def counter_forms(base: str) -> tuple[str, ...]:
    """Every name a tier counter is read in: count, rate, peak, pct of peak (of the `.sum`, or of
    the `.avg`, which is the same percentage), derived rate and peak."""
    forms = [base + form for form in ("", ".per_second", ".peak_sustained", ".pct_of_peak_sustained_elapsed")]
    forms.append(base.removesuffix(".sum") + ".avg.pct_of_peak_sustained_elapsed")
    if (derived := MEASURE_DERIVED[base]) is not None:
        forms += [f"{derived}.per_second", f"{derived}.peak_sustained"]
    return tuple(forms)


# DRAM bytes as read + write (bytes, sectors or rates)
DRAM_READ_WRITE = ("dram__bytes_read.sum", "dram__bytes_write.sum")
DRAM_SECTORS = ("dram__sectors_read.sum", "dram__sectors_write.sum")
DRAM_RATES = ("dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second")
# L1 traffic that `--set full` reports do hold: global and local load/store sectors.
L1_SECTOR_METRICS = tuple(
    f"l1tex__t_sectors_pipe_lsu_mem_{space}_op_{op}.sum"
    for space in ("global", "local")
    for op in ("ld", "st")
)
SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared"
SHARED_OPS = tuple(f"{SHARED_WAVEFRONTS}_op_{op}.sum" for op in ("ld", "st", "atom"))
SHARED_SASS_BYTES = "sm__sass_data_bytes_mem_shared.sum"
# bank conflicts, as Nsight's SharedMemoryConflicts rule reads them: shared load and store
# requests (warp instructions; ldmatrix loads too), and the wavefronts of each that are conflicts
SHARED_REQUESTS = (
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__inst_executed_op_ldsm.sum",
)
SHARED_CONFLICTS = tuple(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum" for op in ("ld", "st"))

# Nsight's Speed-of-Light percentages (first name present wins) and the waves per SM
SOL_METRICS = {
    "sm": ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
    "memory": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",),
    "dram": (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "l2": ("lts__throughput.avg.pct_of_peak_sustained_elapsed",),
    "l1": ("l1tex__throughput.avg.pct_of_peak_sustained_active",),
}
WAVES = "launch__waves_per_multiprocessor"


# a device attribute ncu reports from 2023.1 on: tells a CSV of an older report (`recipe.tiers`)
VERSION_MARKER = "device__attribute_cluster_launch"


def _tier(tier: str, *more: str) -> tuple[str, ...]:
    return (*chain.from_iterable(counter_forms(base) for base in TIER_MEASURES[tier]), *more)


# Per part of the analysis: every counter its formulas read (besides `FORMULA_PATTERNS`).
FORMULA_METRICS: dict[str, tuple[str, ...]] = {
    "duration": (DURATION, SM_CYCLES, CLOCKS["sm"], GPC_CYCLES, CLOCKS["gpc"]),
    "flop": (
        *(
            op_metric(k, op, r)
            for ops in (*FLOP_OPS.values(), *PACKED_OPS.values())
            for op in ops
            for k, r in FLOP_FORMS
        ),
        *(fma_peak(p) for p in FLOP_OPS),
        CLOCKS["smsp"],
        CLOCKS["sm"],
    ),
    "tensor": (
        TENSOR_INST,
        TENSOR_INST_PEAK,
        TENSOR_INST_RATE,
        *TENSOR_PIPE_PCT,
        CLOCKS["smsp"],
        CLOCKS["sm"],
    ),
    "dram": _tier("dram", *DRAM_READ_WRITE, *DRAM_SECTORS, *DRAM_RATES, CLOCKS["dram"]),
    "l2": _tier("l2", CLOCKS["lts"], VERSION_MARKER),
    "l1": _tier("l1", *L1_SECTOR_METRICS, CC_MAJOR, CC_MINOR, CLOCKS["l1tex"]),
    "shared": _tier(
        "shared", *SHARED_OPS, SHARED_SASS_BYTES, *SHARED_REQUESTS, *SHARED_CONFLICTS, CLOCKS["l1tex"]
    ),
    "pipes": (SM_ACTIVE_CYCLES, SM_CYCLES, CLOCKS["sm"]),  # the pipes found by name (`PIPE_INST`, …)
    "instructions": (*WARP_INST_METRICS, *SM_COUNT_METRICS, SCHEDULERS_METRIC, CLOCKS["sm"]),
    "sol": (*chain.from_iterable(SOL_METRICS.values()), WAVES),
    "device": tuple(metric for _, metric, _ in DEVICE_ATTRIBUTES),
}
# what the readers keep besides: the launch's identity as ncu names it (device, grid, block)
IDENTITY_METRICS = (
    "device__attribute_display_name",
    *(f"launch__{kind}_dim_{axis}" for kind in ("grid", "block") for axis in "xyz"),
    "launch__grid_size",
    "launch__block_size",
)
WANTED = frozenset(IDENTITY_METRICS).union(*FORMULA_METRICS.values())
# the families as one pattern (one match per name: readers ask for every column and details row)
_FAMILIES = re.compile("|".join(re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for p in FORMULA_PATTERNS))


def is_wanted(name: str) -> bool:
    """True for metrics the recipe reads, including the per-architecture tensor variants and pipes."""
    return name in WANTED or _FAMILIES.match(name) is not None


# Metrics to collect for each part of the analysis, each read by that part's formulas: what
# `profile --fast` asks ncu for, and what a note prints when a report lacks them (recipe §3.8).
COLLECT: dict[str, tuple[str, ...]] = {
    "duration": (DURATION, SM_CYCLES, CLOCKS["sm"]),
    "flop": (
        # not PACKED_OPS: only Blackwell has them, and ncu refuses a metric the GPU lacks [verify]
        *(op_metric("sm", op) for ops in FLOP_OPS.values() for op in ops),
        *(fma_peak(p) for p in FLOP_OPS),
    ),
    "tensor": (
        # the per-architecture tensor partitions (§3.3); [verify] that ncu expands the regex to
        # every sm__ops_path_tensor_* of the chip at hand, with .sum and .peak_sustained
        "regex:sm__ops_path_tensor_.*",
        TENSOR_INST,
        TENSOR_INST_PEAK,
    ),
    "dram": ("dram__bytes.sum", "dram__bytes.sum.peak_sustained", CLOCKS["dram"]),
    "l2": (
        # Nsight >= 2024.1's L2 measure (the default traffic definition), and every L2 lookup
        "lts__lts2xbar_cycles_active.sum",
        "lts__lts2xbar_cycles_active.sum.peak_sustained",
        "lts__t_bytes.sum",
        "lts__t_bytes.sum.peak_sustained",
        CLOCKS["lts"],
    ),
    "l1": ("l1tex__t_bytes.sum", "l1tex__t_bytes.sum.peak_sustained", CLOCKS["l1tex"]),
    "shared": (SHARED_SASS_BYTES, *SHARED_OPS[:2], f"{SHARED_WAVEFRONTS}.sum.peak_sustained"),
    # per-pipe utilisation (integer and special-function ceilings) and warp instructions (the
    # instruction roofline); unverified that every name exists on every architecture before Volta
    "pipes": (
        *(f"sm__inst_executed_pipe_{p}.avg.pct_of_peak_sustained_active" for p in ("alu", "fma", "xu")),
        "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
        "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        SM_ACTIVE_CYCLES,
    ),
    "instructions": (WARP_INST_METRICS[0], SCHEDULERS_METRIC, SM_COUNT_METRICS[0]),
    "sol": (*(names[0] for names in SOL_METRICS.values()), WAVES),
}


def collect_command(parts: Iterable[str]) -> str:
    names = sorted({name for part in parts for name in COLLECT[part]})
    return f"ncu --metrics {','.join(names)} -o report ./your_app"
