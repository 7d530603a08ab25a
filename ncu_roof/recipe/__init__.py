"""The metric recipe: which ncu metrics give FLOPs, bytes per tier, peaks and SOL.

Input: a wide metric frame (one row per profiled launch, one column per ncu metric, SI values).
Output: the normalized table (see `NORMALIZED_COLUMNS`), where every derived number has a sibling
`<name>_recipe` column saying which formula produced it.

Each quantity has candidate formulas in order of preference; per row, the first one whose inputs
are all present wins. Factors that the metric recipe (shared notes, §3) marks **[verify]** live in
`Factors` below and nowhere else.
"""

from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np
import pandas as pd

from ncu_roof.metrics import (
    CLOCKS,
    COLLECT,
    DEVICE_ATTRIBUTES,
    DURATION,
    FLOP_FORMS,
    FLOP_OPS,
    GPC_CYCLES,
    PACKED_OPS,
    PIPE_CYCLES,
    PIPE_INST,
    SCHEDULERS_METRIC,
    SM_COUNT_METRICS,
    SM_CYCLES,
    SOL_METRICS,
    TENSOR_PIPE_PCT,
    WARP_INST_METRICS,
    WAVES,
    collect_command,
    fma_peak,
    op_metric,
)
from ncu_roof.recipe.frame import (
    FACTORS,
    Factors,
    Formula,
    MetricFrame,
    first_available,
    join_gaps,
    prefixed,
    present_sum,
)
from ncu_roof.recipe.tensor import (
    IDLE_TENSOR_PIPE,
    TENSOR_PATH_PREFIX,
    is_integer_path,
    tensor_variants,
    tensor_work,
)
from ncu_roof.recipe.tiers import nsight_era, pick_tier, tier_candidates
from ncu_roof.traffic import TrafficDefinition
from ncu_roof.vocabulary import PRECISIONS

__all__ = [
    "COLLECT",
    "FACTORS",
    "FLOP_OPS",
    "PIPE_PREFIX",
    "TENSOR_PATH_PREFIX",
    "Factors",
    "collect_command",
    "flop_weights",
    "is_integer_path",
    "normalize",
    "tensor_variants",
]

PIPE_PREFIX = "pipe_"  # normalized columns pipe_<name>_pct


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
    columns = _normalize(metrics, factors, ncu_version, traffic)
    return pd.DataFrame(columns, index=metrics.index, copy=False)  # an array a column, none stacked


def _normalize(
    metrics: pd.DataFrame, factors: Factors, ncu_version: str | None, traffic: TrafficDefinition
) -> dict[str, pd.Series]:
    m = MetricFrame(metrics)
    out: dict[str, pd.Series] = {}
    duration, out["duration_s_recipe"] = first_available(_duration(m), metrics.index)
    out["duration_s"] = duration
    out["sm_clock_hz"] = m.any_of(CLOCKS["sm"], CLOCKS["gpc"])
    out["dram_clock_hz"] = m(CLOCKS["dram"])
    out["l1_clock_hz"] = m(CLOCKS["l1tex"]).fillna(out["sm_clock_hz"])
    out["l2_clock_hz"] = m(CLOCKS["lts"])
    out["waves_per_sm"] = m(WAVES)

    for precision in ("fp64", "fp32", "fp16"):
        flop, label, missing = _cuda_core_flop(m, precision, duration, factors)
        out[f"flop_{precision}"], out[f"flop_{precision}_recipe"] = flop, label
        out[f"flop_{precision}_not_collected"] = missing
        peak, peak_label = first_available(_cuda_core_peak(m, precision, factors), metrics.index)
        out[f"peak_{precision}_flop_per_s"] = peak
        out[f"peak_{precision}_flop_per_s_recipe"] = peak_label
    tensor = tensor_work(m, duration, factors)
    out["flop_tensor"], out["flop_tensor_recipe"] = tensor.flop, tensor.label
    out["flop_tensor_not_collected"] = tensor.not_collected
    out["peak_tensor_flop_per_s"], out["peak_tensor_flop_per_s_recipe"] = tensor.peak, tensor.peak_label
    for path, (count, path_peak) in tensor.paths.items():
        out[f"{TENSOR_PATH_PREFIX}{path}"] = count
        out[f"peak_{TENSOR_PATH_PREFIX}{path}_per_s"] = path_peak
    out["ops_total"] = tensor.int_ops
    # an idle tensor pipe says "no tensor FLOPs", not how many FLOPs there were: alone it is no total
    inferred = out["flop_tensor_recipe"].eq(IDLE_TENSOR_PIPE)
    cuda_core = pd.DataFrame({p: out[f"flop_{p}"] for p in ("fp64", "fp32", "fp16")}).notna().any(axis=1)
    out["flop_tensor"] = out["flop_tensor"].where(~inferred | cuda_core)
    out["flop_tensor_recipe"] = out["flop_tensor_recipe"].where(~inferred | cuda_core, None)
    flops = pd.DataFrame({p: out[f"flop_{p}"] for p in PRECISIONS})
    out["flop_total"] = flops.sum(axis=1, min_count=1)
    gaps = pd.DataFrame({p: out[f"flop_{p}_not_collected"] for p in PRECISIONS})
    partial = gaps.notna().any(axis=1)
    out["flop_total_is_lower_bound"] = out["flop_total"].notna() & (flops.isna().any(axis=1) | partial)
    out["tensor_pipe_pct"] = m.any_of(*TENSOR_PIPE_PCT)
    for pipe, pct in _pipes(m).items():
        out[f"{PIPE_PREFIX}{pipe}_pct"] = pct
    warp_inst, out["warp_inst_recipe"] = first_available(_warp_inst(m, duration), metrics.index)
    out["warp_inst"] = warp_inst
    out["sm_count"] = m.any_of(*SM_COUNT_METRICS)
    out["schedulers_per_sm"] = m(SCHEDULERS_METRIC)

    era = nsight_era(ncu_version)
    for tier, (asked, definitions) in tier_candidates(m, duration, factors, era, traffic).items():
        picked = pick_tier(asked, definitions, metrics.index, era)
        out[f"{tier}_bytes"], out[f"{tier}_bytes_recipe"] = picked.bytes, picked.label
        out[f"{tier}_traffic"] = picked.definition
        out[f"bw_{tier}_byte_per_s"] = picked.bandwidth_byte_per_s
        out[f"bw_{tier}_byte_per_s_recipe"] = prefixed("report:", picked.roof_label)
        out[f"bw_{tier}_builtin"] = picked.builtin
    for column, metric, scale in DEVICE_ATTRIBUTES:
        out[column] = m(metric) * scale

    for key, names in SOL_METRICS.items():
        out[f"sol_{key}_pct"] = m.any_of(*names)
    return out


def _duration(m: MetricFrame) -> list[Formula]:
    return [
        (f"counter:{DURATION}", m(DURATION)),
        *(
            (f"cycles/clock:{cycles}/{clock}", m(cycles) / m(clock))
            for cycles, clock in ((SM_CYCLES, CLOCKS["sm"]), (GPC_CYCLES, CLOCKS["gpc"]))
        ),
    ]


def flop_weights(precision: str, f: Factors) -> tuple[dict[str, float], dict[str, float]]:
    """FLOPs per thread instruction of each op a precision's FLOPs are counted from: the scalar
    ops, and the packed ones (`metrics.PACKED_OPS`: Blackwell's FADD2/FMUL2 = 2, FFMA2 = 4).

    The one table the counter path, the rate × time path, the labels and the peak all read."""
    lanes = f.fp16_lanes if precision == "fp16" else 1.0
    return _weights(FLOP_OPS[precision], lanes, f), _weights(PACKED_OPS.get(precision), f.fp32x2_lanes, f)


def _weights(ops: tuple[str, ...] | None, lanes: float, f: Factors) -> dict[str, float]:
    if ops is None:
        return {}
    add, mul, fma = ops
    return {add: lanes, mul: lanes, fma: lanes * f.fma_flop}


class _Flop(NamedTuple):
    flop: pd.Series
    missing: pd.Series  # the terms not collected (None when complete)
    packed: pd.Series  # True where packed instructions were counted


def _flop_sum(term: Callable[[str], pd.Series], scalar: dict[str, float], packed: dict[str, float]) -> _Flop:
    """The weighted sum of one source's terms (counters or rates); a packed op counts where the
    report holds any, and is no gap where it holds none (every report before Blackwell)."""
    flop, missing = present_sum({op: term(op) for op in scalar}, scalar)
    if not packed:
        return _Flop(flop, missing, pd.Series(False, index=flop.index))
    extra, extra_missing = present_sum({op: term(op) for op in packed}, packed)
    missing = missing.where(flop.notna() | extra.isna(), ",".join(scalar))  # packed only: all scalar lack
    return _Flop(flop.add(extra, fill_value=0.0), join_gaps(missing, extra_missing), extra.notna())


def _cuda_core_flop(
    m: MetricFrame, precision: str, duration: pd.Series, f: Factors
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """FLOPs of one precision: complete counters, else complete rates, else whichever terms were
    collected (`--set full` on 2025.1 stores hfma but not hadd/hmul); returns flop, recipe label
    and the terms not collected (None when complete)."""
    scalar, packed = flop_weights(precision, f)

    def held(ops: Iterable[str]) -> bool:
        return any(op_metric(k, op, r) in m.df.columns for op in ops for k, r in FLOP_FORMS)

    if not held([*scalar, *packed]):  # a precision the report has no counter of
        nothing = pd.Series(np.full(len(m.df.index), None, dtype=object), index=m.df.index, dtype="object")
        return m.nan, nothing, nothing
    if not held(packed):  # a report before Blackwell: the scalar sum alone
        packed = {}

    def count(op: str) -> pd.Series:
        return m.any_of(op_metric("sm", op), op_metric("smsp", op))

    def rate(op: str) -> pd.Series:
        per_cycle = m(op_metric("smsp", op, ".sum.per_cycle_elapsed"))
        return per_cycle * m(CLOCKS["smsp"]) * duration

    counted, rated = _flop_sum(count, scalar, packed), _flop_sum(rate, scalar, packed)
    complete_count = counted.flop.notna() & counted.missing.isna()
    complete_rate = rated.flop.notna() & rated.missing.isna()
    use_counted = complete_count | (~complete_rate & counted.flop.notna())
    flop = counted.flop.where(use_counted, rated.flop)
    missing = counted.missing.where(use_counted, rated.missing)
    with_packed = counted.packed.where(use_counted, rated.packed).to_numpy(dtype=bool)
    return flop, _flop_label(precision, scalar, packed, use_counted, with_packed, flop, missing), missing


def _flop_label(
    precision: str,
    scalar: dict[str, float],
    packed: dict[str, float],
    use_counted: pd.Series,
    with_packed: np.ndarray,
    flop: pd.Series,
    missing: pd.Series,
) -> pd.Series:
    """The recipe labels as codes into a few texts: (counter | rate*time) × (with the packed terms
    or not) × (the terms not collected, if any)."""
    add, mul, fma = FLOP_OPS[precision]
    lanes = scalar[add]
    name = f"{add}+{mul}+2*{fma}" if lanes == 1.0 else f"{lanes:g}*({add}+{mul}+2*{fma})"
    names = (name, name + "".join(f"+{weight:g}*{op}" for op, weight in packed.items()))
    gap_codes, gaps = pd.factorize(missing)
    suffixes = [*(f" (not collected: {gap})" for gap in gaps), ""]
    texts = [
        f"{source}:{formula}{suffix}"
        for source in ("counter", "rate*time")
        for formula in names
        for suffix in suffixes
    ]
    gap = np.where(gap_codes < 0, len(suffixes) - 1, gap_codes)
    formula = np.where(use_counted.to_numpy(), 0, 2) + with_packed  # the index into (source, formula)
    codes = formula * len(suffixes) + gap
    codes = np.where(flop.notna().to_numpy(), codes, len(texts))
    return pd.Series(np.array([*texts, None], dtype=object)[codes], index=flop.index, dtype="object")


def _cuda_core_peak(m: MetricFrame, precision: str, f: Factors) -> list[Formula]:
    fma = FLOP_OPS[precision][2]
    factor = flop_weights(precision, f)[0][fma]
    peak = m(fma_peak(precision)) * factor * m(CLOCKS["sm"])
    return [(f"report:{fma}.peak_sustained*{factor:g}*sm_clock", peak)]


def _pipes(m: MetricFrame) -> dict[str, pd.Series]:
    """Per pipe: the larger of its instruction-issue and active-cycle utilisation (percent of peak
    over the elapsed cycles; over the active cycles where the report has only that)."""
    found: dict[str, dict[str, list[str]]] = {}
    for name in m.names():
        for kind, pattern in (("inst", PIPE_INST), ("cycles", PIPE_CYCLES)):
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


def _warp_inst(m: MetricFrame, duration: pd.Series) -> list[Formula]:
    clock = m(CLOCKS["sm"])
    sms = m.any_of(*SM_COUNT_METRICS)
    smsp_count, sm_count, sum_rate, avg_rate = WARP_INST_METRICS
    return [
        (f"counter:{smsp_count}", m(smsp_count)),
        (f"counter:{sm_count}", m(sm_count)),
        (f"rate*time:{sum_rate}*sm_clock", m(sum_rate) * clock * duration),
        (f"rate*time:{avg_rate}*SMs*sm_clock", m(avg_rate) * sms * clock * duration),
    ]
