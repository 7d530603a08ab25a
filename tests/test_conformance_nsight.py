"""Conformance with Nsight Compute's own roofline, report by report (skipped without the corpus).

Nsight's side is computed here, independently of `ncu_roof.recipe`, from each `.ncu-rep`'s
metrics by the formulas of Nsight's section files (`SpeedOfLight_Hierarchical*RooflineChart.section`
of 2022.3, 2024.1 and 2025.x; the version that collected a report decides which):

- work: per-cycle instruction rates × `smsp__cycles_elapsed.avg.per_second`; roofs: the FMA
  instruction's `.peak_sustained` × 2 (FP16 from 2025.1: HFMA2 packed, × 4; older versions drew
  × 2, which ncu-roof does not follow: its FP16 is twice theirs) × `sm__cycles_elapsed.avg.per_second`;
- tensor (≤ 2024.x): 512 × the tensor-pipe instruction rate, and 512 × its peak: the V100's
  FLOPs per instruction, which ncu-roof takes on CC 7.0 alone (elsewhere the MMA shape decides:
  its tensor FLOPs are unknown, 0 where no tensor instruction ran, and its roof the built-in one);
- traffic: a tier's `…per_second`; its roof: that very counter's `.peak_sustained` × its unit's clock.

Every quantity both give must agree within 1 %, for every kernel of every report.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import analyzed, normalized, read_once

from ncu_roof.gpus.roofs import device_hardware, fill_builtin

pytestmark = pytest.mark.corpus
ncu_report = pytest.importorskip("ncu_report")

_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
_REPORTS = sorted(_CORPUS.glob("*.ncu-rep")) if _CORPUS.is_dir() else []
_VERSION = re.compile(rb"(20\d\d)\.(\d+)\.\d+(?:\.\d+)? \(build")
_REL = 0.01

Value = Callable[[str], float | None]


def _version(path: Path) -> tuple[int, int] | None:
    match = _VERSION.search(path.read_bytes())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _values(action: Any) -> Value:
    def value(name: str) -> float | None:
        metric = action.metric_by_name(name)
        raw = metric.value() if metric is not None else None
        if isinstance(raw, (int, float)) and math.isfinite(raw):
            return float(raw)
        return None

    return value


def _product(*factors: float | None) -> float | None:
    out = 1.0
    for factor in factors:
        if factor is None:
            return None
        out *= factor
    return out


def _sum(*terms: float | None) -> float | None:
    return None if any(t is None for t in terms) else sum(t for t in terms if t is not None)


def nsight_figures(v: Value, version: tuple[int, int] | None) -> dict[str, float | None]:
    """What Nsight's roofline chart shows for one kernel (FLOP/s, byte/s, roofs)."""
    era = version or (9999, 0)
    sm, smsp = v("sm__cycles_elapsed.avg.per_second"), v("smsp__cycles_elapsed.avg.per_second")
    lts, l1tex = v("lts__cycles_elapsed.avg.per_second"), v("l1tex__cycles_elapsed.avg.per_second")
    dram = v("dram__cycles_elapsed.avg.per_second")
    out: dict[str, float | None] = {}
    for precision, (add, mul, fma) in {
        "fp64": ("dadd", "dmul", "dfma"),
        "fp32": ("fadd", "fmul", "ffma"),
        "fp16": ("hadd", "hmul", "hfma"),
    }.items():
        lanes = 2.0 if precision == "fp16" and era >= (2025, 1) else 1.0

        def rate(op: str) -> float | None:
            return v(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")

        per_cycle = _sum(rate(add), rate(mul), _product(2.0, rate(fma)))
        out[f"flop/s {precision}"] = _product(lanes, per_cycle, smsp)
        peak = v(f"sm__sass_thread_inst_executed_op_{fma}_pred_on.sum.peak_sustained")
        out[f"roof {precision}"] = _product(2.0 * lanes, peak, sm)
    cc = _sum(
        _product(10.0, v("device__attribute_compute_capability_major")),
        v("device__attribute_compute_capability_minor"),
    )
    if era < (2025, 1):
        tensor_rate = v("smsp__inst_executed_pipe_tensor.sum.per_cycle_elapsed")
        if cc == 70 or tensor_rate == 0:
            out["flop/s tensor"] = _product(512.0, tensor_rate, smsp)
        if cc == 70:
            out["roof tensor"] = _product(512.0, v("sm__inst_executed_pipe_tensor.sum.peak_sustained"), sm)

    def tier(name: str, counter: str, scale: float, clock: float | None) -> None:
        out[f"byte/s {name}"] = _product(scale, v(f"{counter}.per_second"))
        out[f"roof {name}"] = _product(scale, v(f"{counter}.peak_sustained"), clock)

    tier("dram", "dram__bytes.sum", 1.0, dram)
    if era < (2023, 0):
        tier("l2", "lts__t_bytes.sum", 1.0, lts)
        tier("l1", "l1tex__t_bytes.sum", 1.0, l1tex)
    else:
        if era < (2024, 1):
            tier("l2", "l1tex__m_xbar2l1tex_read_bytes.sum", 1.0, lts)
        else:
            tier("l2", "lts__lts2xbar_cycles_active.sum", 32.0, lts)
        if cc is not None:
            scope = "" if cc <= 72 else "_mem_lg" if cc <= 89 else "_mem_lgds"
            tier("l1", f"l1tex__lsu_writeback_active{scope}.sum", 128.0, l1tex)
    return out


def ncu_roof_figures(path: Path) -> list[dict[str, float | None]]:
    """The same quantities from ncu-roof's default analysis, one dict per kernel in report order."""
    table = read_once(path)
    analysis = analyzed(path)
    norm = normalized(path)
    name = next((str(n) for n in table.frame["device_name"] if isinstance(n, str)), None)
    columns = {str(c): norm[c].to_numpy() for c in norm.columns}
    roofs = fill_builtin(columns, device_hardware(columns, name))
    out = []
    for i, kernel in enumerate(sorted(analysis.kernels, key=lambda k: k.id)):
        figures: dict[str, float | None] = {}
        duration = kernel.duration_s
        for precision in ("fp64", "fp32", "fp16", "tensor"):
            flop = kernel.flop.get(precision)
            figures[f"flop/s {precision}"] = flop / duration if flop is not None and duration else None
            figures[f"roof {precision}"] = _finite(roofs[f"peak_{precision}_flop_per_s"][i])
        for name_ in ("dram", "l2", "l1"):
            figures[f"byte/s {name_}"] = kernel.achieved_byte_per_s.get(name_)
            figures[f"roof {name_}"] = _finite(roofs[f"bw_{name_}_byte_per_s"][i])
            traffic = kernel.traffic.get(name_, {})
            if traffic and traffic["definition"] != "nsight":  # the closest available, not Nsight's
                figures[f"byte/s {name_}"] = figures[f"roof {name_}"] = None
        out.append(figures)
    return out


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


@functools.cache  # each report compared once per session: the test below and the count share it
def compare(path: Path) -> tuple[tuple[str, ...], int]:
    """Mismatches (text) and how many quantities both gave, for one report."""
    version = _version(path)
    context = ncu_report.load_report(str(path))
    actions = [
        context.range_by_idx(r).action_by_idx(a)
        for r in range(context.num_ranges())
        for a in range(context.range_by_idx(r).num_actions())
    ]
    ours = ncu_roof_figures(path)
    assert len(ours) == len(actions)
    mismatches, compared = [], 0
    for i, (action, mine) in enumerate(zip(actions, ours, strict=True)):
        theirs = nsight_figures(_values(action), version)
        for quantity, expected in theirs.items():
            got = mine.get(quantity)
            if expected is None or got is None:
                continue
            if "fp16" in quantity and version is not None and version < (2025, 1):
                expected *= 2.0  # older Nsight counted an HFMA2 as 2 FLOPs; ncu-roof, as ≥ 2025.1, as 4
            compared += 1
            if got != pytest.approx(expected, rel=_REL, abs=1.0):
                mismatches.append(f"kernel {i} {quantity}: ncu-roof {got:.6g}, Nsight {expected:.6g}")
    return tuple(mismatches), compared


@pytest.mark.parametrize("path", _REPORTS, ids=lambda p: p.name)
def test_every_quantity_equals_nsight_within_1_pct(corpus: Path, path: Path) -> None:
    mismatches, _ = compare(path)
    assert not mismatches, "\n".join(mismatches)


def test_the_comparison_is_not_vacuous(corpus: Path) -> None:
    # the full-set and roofline-set reports give FLOP/s, traffic and roofs for several tiers:
    # H100 3 kernels x (FP64/FP32 FLOP/s, 3 compute roofs, DRAM/L2/L1 traffic and roofs) = 33;
    # A10G (2023.1, --set roofline) 4 kernels x 13, with FP16, tensor FLOP/s (no tensor
    # instruction: 0) and the 2023.x L2 measure; not the x 512 tensor roof (CC 8.6)
    counts = {p.name: compare(p)[1] for p in _REPORTS}
    assert counts["h100pcie_rep_2025.1_full_silu.ncu-rep"] == 33
    assert counts["a10g_rep_2023.1.1_roofline-set.ncu-rep"] == 52
    assert sum(counts.values()) >= 200
