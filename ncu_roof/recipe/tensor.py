"""Tensor-core work: the `sm__ops_path_tensor_*` partitions, their data paths and peaks.

Without the partition, tensor FLOPs are tensor-pipe instructions x FLOPs per instruction only on
a compute capability where that factor is known (`Factors.tensor_flop_per_pipe_inst`); elsewhere
they are unknown (NaN, labelled `TENSOR_FLOP_UNKNOWN` + why) unless no tensor instruction ran (0)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np

from ncu_roof.base.metrics import (
    CC_MAJOR,
    CC_MINOR,
    CLOCKS,
    TENSOR_COUNT,
    TENSOR_INST,
    TENSOR_INST_PEAK,
    TENSOR_INST_RATE,
    TENSOR_PEAK,
    TENSOR_PIPE_PCT,
    TENSOR_RATE,
)
from ncu_roof.base.units import missing_cell
from ncu_roof.recipe.frame import (
    FACTORS,
    Flags,
    Formula,
    MetricFrame,
    Numbers,
    Texts,
    fillna,
    first_available,
    is_missing,
    max_present,
    present_sum,
    sum_present,
)


def tensor_variants(names: Iterable[str], pattern: re.Pattern[str] = TENSOR_COUNT) -> list[str]:
    """One partition of the `sm__ops_path_tensor_*` variants, no metric with its children: a variant whose
    name extends another present one (`src_fp16_dst_fp32` under `src_fp16`, `..._sparsity_on` under its plain
    form) is dropped, and the `op_*` (per-opcode) family is used only without an aggregate `src_*` family."""
    found = sorted({match["v"] for n in names if (match := pattern.match(n)) is not None})
    src = [v for v in found if v.startswith("src_")]
    family = src if src else [v for v in found if v.startswith("op_")]
    present = set(family)
    # a parent is a prefix ending just before a `_`: look those up (linear), never pair all variants
    return [v for v in family if not any(v[:i] in present for i, c in enumerate(v) if c == "_")]


IDLE_TENSOR_PIPE = "counter:sm__pipe_tensor_cycles_active = 0 (idle tensor pipe)"
NO_TENSOR_INST = "counter:sm__inst_executed_pipe_tensor = 0 (no tensor-pipe instruction)"
TENSOR_FLOP_UNKNOWN = "unknown:"  # the label of tensor FLOPs that cannot be known, then why
TENSOR_PATH_PREFIX = "tensor_path_"  # normalized columns tensor_path_<path> (+ peak_tensor_path_<path>_per_s)
INTEGER_SOURCES = ("int8", "int4", "int1")  # tensor paths whose work is integer operations, not FLOPs
_SOURCE = re.compile(r"src_(.+?)(?:_dst|_sparsity|$)")  # fp16, bf16, tf32, fp4_fp6_fp8, int8, …


def tensor_path(variant: str) -> str:
    """The data path of a tensor variant: its source type, `_sparse` when sparsity is on."""
    match = _SOURCE.search(variant)
    return (match.group(1) if match else "other") + ("_sparse" if "sparsity_on" in variant else "")


def is_integer_path(path: str) -> bool:
    return path.removesuffix("_sparse") in INTEGER_SOURCES


def tensor_work(m: MetricFrame, duration: Numbers, cc: Texts | None = None) -> dict[str, np.ndarray]:
    """Every launch's tensor-core work, as normalized columns: floating paths as FLOPs (`flop_tensor`),
    integer paths as operations (`ops_total`; each the sum of the paths measured, NaN if none), each path's
    work and own peak per second, the variants read n/a (None: none), the busiest floating source's dense peak
    (FLOP/s). `cc`: each launch's compute capability ("9.0"; None: unknown), else device attributes'."""
    rows, clock = m.rows, m(CLOCKS["sm"])
    work_by_variant, source = _variant_work(m, clock, duration)
    per_variant_peak = {mt["v"]: m(n) for n in sorted(m.names) if (mt := TENSOR_PEAK.match(n)) is not None}
    paths = {  # path → its variants' work summed
        path: sum_present([w for v, w in work_by_variant.items() if tensor_path(v) == path], rows)
        for path in sorted({tensor_path(v) for v in work_by_variant})
    }
    floating = [p for p in paths if not is_integer_path(p)]
    integer = [p for p in paths if is_integer_path(p)]
    flop_paths = sum_present([paths[p] for p in floating], rows)
    not_collected = np.full(rows, np.nan, dtype=object)  # NaN: no partition in the report
    if work_by_variant:
        _, not_collected = present_sum(work_by_variant, dict.fromkeys(work_by_variant, 1.0))
    factors, capability = _flop_per_inst(m, cc)
    inst = m(TENSOR_INST)
    inst_rated = m(TENSOR_INST_RATE) * m(CLOCKS["smsp"]) * duration
    candidates: list[Formula] = [(f"{source}:sum(sm__ops_path_tensor_* floating paths)", flop_paths)]
    if not integer:  # an instruction count cannot tell integer from floating tensor work
        for k, held in factors.items():
            for kind, n in (("counter:sm", inst), ("rate*time:smsp", inst_rated)):
                candidates.append((f"{kind}__inst_executed_pipe_tensor*{k:g}", np.where(held, n * k, np.nan)))
    idle = m.any_of(*TENSOR_PIPE_PCT)
    candidates.append((IDLE_TENSOR_PIPE, np.where(idle == 0, idle, np.nan)))
    no_inst = fillna(np.where(inst == 0, inst, np.nan), np.where(inst_rated == 0, inst_rated, np.nan))
    candidates.append((NO_TENSOR_INST, no_inst))
    flop, label = first_available(candidates)  # the paths (first) decide wherever one was measured
    # tensor-pipe instructions ran, but their FLOPs per instruction are not known here: say why
    unknown = np.isnan(flop) & (~np.isnan(inst) | ~np.isnan(inst_rated)) & is_missing(label)
    label[unknown] = [_unknown_label(c) for c in capability[unknown].tolist()]  # (its own array)
    out = {"flop_tensor": flop, "flop_tensor_recipe": label, "flop_tensor_not_collected": not_collected}
    floating_work = {v: w for v, w in work_by_variant.items() if tensor_path(v) in floating}
    peak = _tensor_peak(m, per_variant_peak, floating_work, clock, factors)
    out["peak_tensor_flop_per_s"], out["peak_tensor_flop_per_s_recipe"] = peak
    for path, work in paths.items():
        out[f"{TENSOR_PATH_PREFIX}{path}"] = work
        out[f"peak_{TENSOR_PATH_PREFIX}{path}_per_s"] = _path_peak(per_variant_peak, path, rows) * clock
    out["ops_total"] = sum_present([paths[p] for p in integer], rows)
    return out


def _unknown_label(cc: object) -> str:
    where = f"on CC {cc}" if isinstance(cc, str) and cc.strip() else "without the input's compute capability"
    return (
        f"{TENSOR_FLOP_UNKNOWN}sm__inst_executed_pipe_tensor x FLOPs per instruction, not known {where}: "
        "the MMA shape decides (HMMA.16816 4096, HMMA.1688 2048)"
    )


def _flop_per_inst(m: MetricFrame, cc: Texts | None) -> tuple[dict[float, Flags], Texts]:
    """Each known FLOPs-per-tensor-instruction factor and its launches; each launch's CC (None: unknown)."""
    if cc is None:  # a bare metric frame: the device attributes, where it has them
        number = 10 * m(CC_MAJOR) + m(CC_MINOR)
        capability = np.full(m.rows, None, dtype=object)
        known = ~np.isnan(number)
        capability[known] = [f"{int(n) // 10}.{int(n) % 10}" for n in number[known].tolist()]
    else:
        capability = np.asarray(cc, dtype=object)
    table, values = dict(FACTORS.tensor_flop_per_pipe_inst), capability.tolist()
    factor = {
        c: np.nan if missing_cell(c) else table.get(str(c).strip(), np.nan) for c in dict.fromkeys(values)
    }
    per_row = np.fromiter(map(factor.__getitem__, values), dtype=np.float64, count=len(values))
    return {k: per_row == k for k in sorted(set(table.values()))}, capability


def _variant_work(m: MetricFrame, clock: Numbers, duration: Numbers) -> tuple[dict[str, Numbers], str]:
    """The work of each variant of the partition, and where it came from ("counter", "rate*time")."""
    count_variants, rate_variants = (tensor_variants(m.names, p) for p in (TENSOR_COUNT, TENSOR_RATE))

    def rated(v: str) -> Numbers:
        return m(f"sm__ops_path_tensor_{v}.sum.per_cycle_elapsed") * clock * duration

    if not count_variants and rate_variants:
        return {v: rated(v) for v in rate_variants}, "rate*time"
    work = {v: m(f"sm__ops_path_tensor_{v}.sum") for v in count_variants}
    for v in set(count_variants) & set(rate_variants):  # a count that reads n/a falls back to its rate
        work[v] = fillna(work[v], rated(v))
    return work, "counter"


def _tensor_peak(
    m: MetricFrame,
    peaks: Mapping[str, Numbers],
    floating_work: Mapping[str, Numbers],
    clock: Numbers,
    factors: Mapping[float, Flags],
) -> tuple[Numbers, Texts]:
    """The busiest floating source's dense peak, else instruction peak × known FLOPs/instruction (or none)."""
    floating_peaks = {v: p for v, p in peaks.items() if not is_integer_path(tensor_path(v))}
    candidates: list[Formula] = []
    if floating_peaks:
        busiest = _busiest_peak(floating_peaks, floating_work, m.rows) * clock
        candidates.append(
            ("report:dense sm__ops_path_tensor_<busiest source>.peak_sustained*sm_clock", busiest)
        )
    candidates += [
        (
            f"report:sm__inst_executed_pipe_tensor.peak_sustained*{k:g}*sm_clock",
            np.where(rows, m(TENSOR_INST_PEAK) * k * clock, np.nan),
        )
        for k, rows in factors.items()
    ]
    return (m.nan, m.no_labels) if not candidates else first_available(candidates)


def _dense_peak(peaks: Mapping[str, Numbers], source: str, rows: int) -> Numbers:
    """Max dense peak of the variants reading `source` (sparse peaks count 2:4 ops twice)."""
    dense = [v for v in peaks if "sparsity_on" not in v]
    explicit = [v for v in dense if "sparsity_off" in v]
    pool = [v for v in (explicit or dense) if f"src_{source}" in v] or explicit or dense
    return max_present([peaks[v] for v in pool], rows)


def _busiest_peak(peaks: Mapping[str, Numbers], ops: Mapping[str, Numbers], rows: int) -> Numbers:
    """Dense peak for the source type that did the most tensor work; FP16 (datasheet) if none."""
    default = _dense_peak(peaks, "fp16", rows)
    if not ops:
        return default
    busy = np.vstack([fillna(work, 0.0) for work in ops.values()])
    sources = [match.group(1) if (match := _SOURCE.search(v)) else None for v in ops]
    by_source = {s: _dense_peak(peaks, s, rows) for s in dict.fromkeys(sources) if s is not None}
    own = np.vstack([by_source.get(s, default) for s in sources])  # each variant's source's peak
    busiest = busy.argmax(axis=0)  # the first variant of the most work, as pandas' `idxmax`
    return np.where(busy.max(axis=0) > 0, own[busiest, np.arange(rows)], default)


def _path_peak(peaks: Mapping[str, Numbers], path: str, rows: int) -> Numbers:
    """A data path's own peak (per cycle): dense peaks for a dense path, sparse for a sparse one."""
    pool = [v for v in peaks if tensor_path(v) == path]
    if not path.endswith("_sparse"):
        pool = [v for v in pool if "sparsity_off" in v] or pool
    return max_present([peaks[v] for v in pool], rows)
