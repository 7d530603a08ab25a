"""The metric recipe: which ncu metrics (one column each, one row per launch, SI) give FLOPs,
bytes per tier, peaks and SOL. Each quantity has candidate formulas in order of preference; per
row, the first one whose inputs are all present wins, and a sibling `<name>_recipe` column says
which. Factors the metric recipe (shared notes, §3) marks **[verify]** live in `frame.Factors` only."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import product

import numpy as np

from ncu_roof.base.metrics import (
    CLOCKS,
    DEVICE_ATTRIBUTES,
    DURATION,
    FLOP_FORMS,
    FLOP_OPS,
    GPC_CYCLES,
    PACKED_OPS,
    PIPE_CYCLES,
    PIPE_INST,
    SCHEDULERS_METRIC,
    SM_ACTIVE_CYCLES,
    SM_COUNT_METRICS,
    SM_CYCLES,
    SOL_METRICS,
    TENSOR_PIPE_PCT,
    WARP_INST_METRICS,
    WAVES,
    fma_peak,
    op_metric,
)
from ncu_roof.base.vocabulary import CUDA_CORE_PRECISIONS, PRECISIONS, TrafficDefinition
from ncu_roof.recipe.frame import (
    FACTORS,
    Flags,
    MetricFrame,
    Metrics,
    Numbers,
    Texts,
    codes_of,
    fillna,
    first_available,
    is_missing,
    join_gaps,
    max_present,
    prefixed,
    present_sum,
    sum_present,
)
from ncu_roof.recipe.tensor import (
    IDLE_TENSOR_PIPE,
    NO_TENSOR_INST,
    TENSOR_PATH_PREFIX,
    is_integer_path,
    tensor_work,
)
from ncu_roof.recipe.tiers import measured_era, nsight_era, pick_tier, shared_bank_conflicts, tier_candidates

__all__ = ["PIPE_PREFIX", "TENSOR_PATH_PREFIX", "flop_weights", "is_integer_path", "normalize_columns"]

PIPE_PREFIX = "pipe_"  # normalized columns pipe_<name>_pct


@np.errstate(all="ignore")  # as pandas: 0/0 is NaN and x/0 inf, without a warning
def normalize_columns(
    metrics: Metrics,
    *,
    ncu_version: str | None = None,
    traffic: TrafficDefinition = TrafficDefinition.NSIGHT,
    rows: int | None = None,
    cc: Texts | None = None,
) -> dict[str, np.ndarray]:
    """Metrics (SI; a reader's launches, any DataFrame, or arrays with `rows` launches) → normalized
    per-launch columns (SI; Numbers, Texts, Flags), a recipe label per quantity; columns share only read-only
    arrays (passed-through metrics, the all-NaN one). `ncu_version` (the collector's) picks the tier measures
    its Nsight draws; `traffic` the tiers' definition; `cc` each launch's CC (else device attributes')."""
    m = MetricFrame(metrics, rows)
    out: dict[str, np.ndarray] = {}
    cycles_per_clock = ((SM_CYCLES, CLOCKS["sm"]), (GPC_CYCLES, CLOCKS["gpc"]))
    duration, out["duration_s_recipe"] = first_available(
        [
            (f"counter:{DURATION}", m(DURATION)),
            *((f"cycles/clock:{cycles}/{clock}", m(cycles) / m(clock)) for cycles, clock in cycles_per_clock),
        ]
    )
    out["duration_s"] = duration
    # the SM clock Nsight's roofs take, else the GPC clock a details page's "SM Frequency" is
    out["sm_clock_hz"], out["sm_clock_hz_recipe"] = first_available(
        [(f"counter:{CLOCKS[k]}", m(CLOCKS[k])) for k in ("sm", "gpc")]
    )
    out["dram_clock_hz"] = m(CLOCKS["dram"])
    out["l1_clock_hz"] = fillna(m(CLOCKS["l1tex"]), out["sm_clock_hz"])
    out["l2_clock_hz"] = m(CLOCKS["lts"])
    out["waves_per_sm"] = m(WAVES)

    for precision in CUDA_CORE_PRECISIONS:
        f = f"flop_{precision}"
        out[f], out[f"{f}_recipe"], out[f"{f}_not_collected"] = _cuda_core_flop(m, precision, duration)
        fma = FLOP_OPS[precision][2]
        factor = flop_weights(precision)[0][fma]
        peak = m(fma_peak(precision)) * factor * m(CLOCKS["sm"])
        out[f"peak_{precision}_flop_per_s"], out[f"peak_{precision}_flop_per_s_recipe"] = first_available(
            [(f"report:{fma}.peak_sustained*{factor:g}*sm_clock", peak)]
        )
    out.update(tensor_work(m, duration, cc))
    out.update(_flop_total(out, m.rows))
    out["tensor_pipe_pct"] = m.any_of(*TENSOR_PIPE_PCT)
    out.update({f"{PIPE_PREFIX}{pipe}_pct": pct for pipe, pct in _pipes(m, duration).items()})
    clock, sms = m(CLOCKS["sm"]), m.any_of(*SM_COUNT_METRICS)
    smsp_count, sm_count, sum_rate, avg_rate = WARP_INST_METRICS
    out["warp_inst"], out["warp_inst_recipe"] = first_available(
        [
            (f"counter:{smsp_count}", m(smsp_count)),
            (f"counter:{sm_count}", m(sm_count)),
            (f"rate*time:{sum_rate}*sm_clock", m(sum_rate) * clock * duration),
            (f"rate*time:{avg_rate}*SMs*sm_clock", m(avg_rate) * sms * clock * duration),
        ]
    )
    out["sm_count"] = sms
    out["schedulers_per_sm"] = m(SCHEDULERS_METRIC)

    era = nsight_era(ncu_version)
    measures = era if ncu_version else measured_era(m)
    for tier, (asked, definitions, drawn) in tier_candidates(m, duration, measures, traffic).items():
        picked, out[f"{tier}_traffic"] = pick_tier(m, asked, definitions, drawn, era)
        out[f"{tier}_bytes"], out[f"{tier}_bytes_recipe"] = picked.bytes, picked.label
        out[f"bw_{tier}_byte_per_s"] = picked.bandwidth_byte_per_s
        out[f"bw_{tier}_byte_per_s_recipe"] = prefixed("report:", picked.roof_label)
        out[f"bw_{tier}_counter"] = picked.counter
    out["shared_wavefronts_per_request"], out["shared_bank_conflict_pct"] = shared_bank_conflicts(m)
    out.update({column: m(metric) * scale for column, metric, scale in DEVICE_ATTRIBUTES})
    out.update({f"sol_{key}_pct": m.any_of(*names) for key, names in SOL_METRICS.items()})
    return out


def _flop_total(out: dict[str, np.ndarray], rows: int) -> dict[str, np.ndarray]:
    """The FLOPs of every precision summed, and whether that is a lower bound; the tensor FLOPs
    of an idle tensor pipe dropped where no CUDA-core FLOPs were counted."""
    # an idle tensor pipe, or no tensor-pipe instruction, says "no tensor FLOPs", not how many FLOPs
    # there were: alone it is no total (a 0 would let memory traffic alone decide a roofline verdict)
    inferred = np.isin(out["flop_tensor_recipe"], [IDLE_TENSOR_PIPE, NO_TENSOR_INST])
    cuda_core = ~np.isnan(np.vstack([out[f"flop_{p}"] for p in CUDA_CORE_PRECISIONS])).all(axis=0)
    keep = ~inferred | cuda_core
    tensor_recipe = out["flop_tensor_recipe"].copy()
    tensor_recipe[~keep] = None
    tensor = np.where(keep, out["flop_tensor"], np.nan)
    flops = [tensor if p == "tensor" else out[f"flop_{p}"] for p in PRECISIONS]
    total = sum_present(flops, rows)
    gaps = np.vstack([~is_missing(out[f"flop_{p}_not_collected"]) for p in PRECISIONS]).any(axis=0)
    some_absent = np.isnan(np.vstack(flops)).any(axis=0)
    return {
        "flop_tensor": tensor,
        "flop_tensor_recipe": tensor_recipe,
        "flop_total": total,
        "flop_total_is_lower_bound": ~np.isnan(total) & (some_absent | gaps),
    }


def flop_weights(precision: str) -> tuple[dict[str, float], dict[str, float]]:
    """FLOPs per thread instruction of each op (add, mul, fma) of a precision, scalar and packed
    (`metrics.PACKED_OPS`: Blackwell's FADD2/FMUL2 = 2, FFMA2 = 4): the one table every path reads."""

    def weights(ops: tuple[str, ...], lanes: float) -> dict[str, float]:
        return dict(zip(ops, (lanes, lanes, lanes * FACTORS.fma_flop), strict=False))  # no ops: {}

    lanes = FACTORS.fp16_lanes if precision == "fp16" else 1.0
    return weights(FLOP_OPS[precision], lanes), weights(PACKED_OPS.get(precision, ()), FACTORS.fp32x2_lanes)


def _flop_sum(
    term: Callable[[str], Numbers], scalar: dict[str, float], packed: dict[str, float]
) -> tuple[Numbers, Texts, Flags]:
    """The weighted sum of one source's terms (counters or rates), the terms not collected (None
    when complete) and where packed instructions were counted; a packed op counts where the
    report holds any, and is no gap where it holds none (every report before Blackwell)."""
    flop, missing = present_sum({op: term(op) for op in scalar}, scalar)
    if not packed:
        return flop, missing, np.zeros(len(flop), dtype=bool)
    extra, extra_missing = present_sum({op: term(op) for op in packed}, packed)
    all_scalar = np.isnan(flop) & ~np.isnan(extra)  # packed only: every scalar term lacks
    missing = np.where(all_scalar, ",".join(scalar), missing)
    return sum_present([flop, extra], len(flop)), join_gaps(missing, extra_missing), ~np.isnan(extra)


def _cuda_core_flop(m: MetricFrame, precision: str, duration: Numbers) -> tuple[Numbers, Texts, Texts]:
    """FLOPs, recipe label and the terms not collected (None: complete) of one precision: complete
    counters, else complete rates, else the terms collected (2025.1's `--set full`: hfma only)."""
    scalar, packed = flop_weights(precision)

    def held(ops: Iterable[str]) -> bool:
        return any(m.has(op_metric(k, op, r)) for op in ops for k, r in FLOP_FORMS)

    if not held([*scalar, *packed]):  # a precision the report has no counter of
        return m.nan, np.full(m.rows, None, dtype=object), np.full(m.rows, None, dtype=object)
    if not held(packed):  # a report before Blackwell: the scalar sum alone
        packed = {}

    def count(op: str) -> Numbers:
        return m.any_of(op_metric("sm", op), op_metric("smsp", op))

    def rate(op: str) -> Numbers:
        return m(op_metric("smsp", op, ".sum.per_cycle_elapsed")) * m(CLOCKS["smsp"]) * duration

    counted, rated = _flop_sum(count, scalar, packed), _flop_sum(rate, scalar, packed)
    complete_count, complete_rate = (~np.isnan(flop) & is_missing(gaps) for flop, gaps, _ in (counted, rated))
    use_counted = complete_count | (~complete_rate & ~np.isnan(counted[0]))
    flop, missing, with_packed = (np.where(use_counted, c, r) for c, r in zip(counted, rated, strict=True))
    # the recipe labels as codes into a few texts: (counter | rate*time) × (with the packed terms
    # or not) × (the terms not collected, if any)
    add, mul, fma = FLOP_OPS[precision]
    lanes = scalar[add]
    name = f"{add}+{mul}+2*{fma}" if lanes == 1.0 else f"{lanes:g}*({add}+{mul}+2*{fma})"
    names = (name, name + "".join(f"+{weight:g}*{op}" for op, weight in packed.items()))
    gap_codes, gaps = codes_of(missing)
    suffixes = ["", *(f" (not collected: {gap})" for gap in gaps)]  # code -1 (complete) takes ""
    texts = [f"{kind}:{f}{suffix}" for kind, f, suffix in product(("counter", "rate*time"), names, suffixes)]
    formula = np.where(use_counted, 0, 2) + with_packed  # the index into (source, formula)
    codes = np.where(np.isnan(flop), len(texts), formula * len(suffixes) + gap_codes + 1)
    labels: Texts = np.array([*texts, None], dtype=object)[codes]
    return flop, labels, missing


def _pipes(m: MetricFrame, duration: Numbers) -> dict[str, Numbers]:
    """Per pipe: the larger of its instruction-issue and active-cycle utilisation, in percent of peak over the
    elapsed cycles. A figure a report has only over the SMs' active cycles is scaled by the average SM's
    active share (`sm__cycles_active.avg` / `sm__cycles_elapsed.avg`): a one-block kernel's ALU busy on its
    one SM is not busy over the GPU's time. Without that share such a figure is left out."""
    found: dict[str, dict[str, list[str]]] = {}
    for name in m.names:
        for kind, pattern in (("inst", PIPE_INST), ("cycles", PIPE_CYCLES)):
            if (match := pattern.match(name)) is not None:
                pipe = match["p"].removesuffix("_pred_on_any")
                found.setdefault(pipe, {}).setdefault(kind, []).append(name)
    elapsed_cycles = fillna(m(SM_CYCLES), m(CLOCKS["sm"]) * duration)  # (x/0: `normalize_columns`' errstate)
    active_share = np.where(elapsed_cycles > 0, m(SM_ACTIVE_CYCLES) / elapsed_cycles, np.nan)
    out: dict[str, Numbers] = {}
    for pipe, kinds in sorted(found.items()):
        figures = []
        for names in kinds.values():
            elapsed = m.any_of(*(n for n in names if n.endswith("elapsed")))
            active = m.any_of(*(n for n in names if n.endswith("active"))) * np.minimum(active_share, 1.0)
            figures.append(fillna(elapsed, active))
        out[pipe] = max_present(figures, m.rows)
    return out
