"""The verdict ladder (roofline → Speed of Light → unknown), partial counters, tensor data paths,
integer and special-function ceilings: hand-checked fixtures and hypothesis properties."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import analyzed, examples, input_file, normalize, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.frame import frame_of
from ncu_roof.analysis.notes import NoteInputs
from ncu_roof.analysis.records import Kernel
from ncu_roof.analysis.sol import sol_arrays, verdict_arrays
from ncu_roof.analysis.verdict_phrases import verdict_words
from ncu_roof.analysis.verdicts import unfailed
from ncu_roof.base.vocabulary import Bound, VerdictBasis
from ncu_roof.render.jsonout import render_json

# Every fixture runs at sm__cycles_elapsed.avg.per_second = 1 GHz, with a DRAM roof of
# dram__bytes.sum.peak_sustained 1000 B/cycle x dram__cycles_elapsed.avg.per_second 2 GHz = 2 TB/s.
DRAM_BYTE_PER_S = 2e12


def describe(kernel: Kernel) -> str:
    """The launch's verdict in words, as every renderer words it."""
    phrase: str = verdict_words(frame_of([kernel]))[0]
    return phrase


def _analysis(fixtures: Path, name: str) -> Analysis:
    return analyzed(fixtures / name)


def _kernel(fixtures: Path, name: str, index: int = 0) -> Kernel:
    return _analysis(fixtures, name).kernels[index]


def test_one_na_variant_does_not_erase_the_tensor_flops(fixtures: Path) -> None:
    # src_bf16_dst_fp32 = 1.25e10, src_bf16_dst_bf16 = n/a; bf16 dense peak 524288 /cycle x 1 GHz.
    k = _kernel(fixtures, "verdict_tensor_gemm_na_variant.csv")
    assert k.flop["tensor"] == 1.25e10
    assert k.flop["fp32"] == 2e6  # ffma 1e6 x 2
    assert k.flop["total"] == pytest.approx(1.25e10 + 2e6)
    assert k.tensor_paths["bf16"].count == 1.25e10
    assert k.tensor_paths["bf16"].peak_per_s == 524288e9
    assert k.not_collected["tensor"] == ("src_bf16_dst_bf16",)
    assert k.flop_total_is_lower_bound  # fp64 and fp16 were not collected
    # tensor time 1.25e10 / 5.24288e14 = 23.84 us plus fp32 2e6 / 3.2768e13 = 0.061 us, over 30 us
    assert k.bound is Bound.COMPUTE and k.verdict_basis is VerdictBasis.ROOFLINE
    assert k.compute_ceiling == "tensor:bf16"
    assert k.compute_precision == "tensor"
    assert k.pct_of_roof == pytest.approx(100 * (1.25e10 / 524288e9 + 2e6 / 32768e9) / 30e-6)
    assert describe(k) == "compute-bound (tensor bf16)"
    assert any("src_bf16_dst_bf16 read n/a" in n for n in k.notes)


def test_an_integer_reduction_is_compute_bound_not_memory_bound(fixtures: Path) -> None:
    with_pipes, sol_only = _analysis(fixtures, "verdict_int_reduction.csv").kernels
    # zero FLOPs, DRAM 24 MB / 2 TB/s = 12 us of 100 us; ALU pipe busy 76 % of the elapsed cycles
    assert with_pipes.flop["fp32"] == 0.0
    assert with_pipes.pipe_pct["alu"] == 76.0  # the larger of inst_executed (75, active) and cycles (76)
    assert with_pipes.bound is Bound.COMPUTE and with_pipes.verdict_basis is VerdictBasis.ROOFLINE
    assert with_pipes.compute_ceiling == "pipe:alu"
    assert with_pipes.pct_of_roof == pytest.approx(76.0)
    assert describe(with_pipes) == "compute-bound (alu pipe 76%)"
    # no pipe figures: the roofline cannot see integer work, so SOL decides (SM 77 %, memory 12 %)
    assert sol_only.bound is Bound.COMPUTE and sol_only.verdict_basis is VerdictBasis.SOL
    assert sol_only.pct_of_roof is None
    assert describe(sol_only) == "compute-bound (SM 77%)"
    assert any("cannot see this kernel's (integer) work" in n for n in sol_only.notes)


def test_an_int8_gemm_counts_operations_never_flops(fixtures: Path) -> None:
    k = _kernel(fixtures, "verdict_int8_gemm.csv")
    assert k.ops == {"int8": 4e10, "total": 4e10}
    assert k.flop["tensor"] is None  # no floating tensor path was collected: not 0
    assert k.tensor_paths["int8"].unit == "OP"
    assert k.tensor_paths["int8"].peak_per_s == 1048576e9
    # 4e10 ops / 1.048576e15 ops/s = 38.15 us of 50 us; DRAM 20 MB / 2 TB/s = 10 us
    assert k.bound is Bound.COMPUTE and k.compute_ceiling == "tensor:int8"
    assert k.pct_of_roof == pytest.approx(100 * 4e10 / 1048576e9 / 50e-6)
    assert describe(k) == "compute-bound (tensor int8)"
    assert not any("tensor FLOPs not counted" in n for n in k.notes)


def test_fp16_from_hfma_alone_is_a_flagged_lower_bound(fixtures: Path) -> None:
    k = _kernel(fixtures, "verdict_hfma_only_fp16.csv")
    assert k.flop["fp16"] == 2 * 2 * 1e8  # 2 lanes (HFMA2) x 2 FLOP per FMA x 1e8 instructions
    assert k.not_collected == {"fp16": ("hadd", "hmul")}
    assert k.flop_total_is_lower_bound
    assert "fp16 FLOPs from hfma alone (hadd, hmul not collected): a lower bound" in k.notes
    # DRAM 400 MB / 2 TB/s = 200 us of 250 us
    assert k.bound is Bound.MEMORY and k.binding == "dram"
    assert k.pct_of_roof == pytest.approx(100 * 4e8 / DRAM_BYTE_PER_S / 250e-6)


def test_a_default_set_report_of_an_unknown_gpu_gets_sol_verdicts(fixtures: Path) -> None:
    analysis = _analysis(fixtures, "verdict_sol_unknown_gpu.csv")
    assert not analysis.devices[0].roofs.compute_flop_per_s
    words = {k.name: describe(k) for k in analysis.kernels}
    assert words == {
        "busy_math": "compute-bound (SM 85%)",  # SM 85 >= 80: high throughput, SM the busier
        "stream_copy": "memory-bound (dram)",  # memory 88, breakdown dram 88 > l2 40 > l1 30
        "pointer_chase": "latency-bound",  # SM 30, memory 45: both under 60
        "stencil_mixed": "balanced",  # 70 and 65: under 80, 5 points apart
        "tiny_launch": "latency-bound (small grid)",  # 0.5 waves per SM
        "l2_resident": "memory-bound (l2)",  # memory 75, 55 points above SM; l2 75 > dram 30
    }
    assert all(k.verdict_basis is VerdictBasis.SOL for k in analysis.kernels)
    doc = json.loads(render_json(analysis))
    assert {k["verdict_basis"] for k in doc["kernels"]} == {"sol"}
    stream = next(k for k in doc["kernels"] if k["name"] == "stream_copy")
    assert stream["sol_verdict"] == {"bound": "memory", "unit": "dram", "small_grid": False}
    assert stream["flop"]["total"] is None  # nothing measured: null, never 0


def test_a_transcendental_kernel_is_bound_by_the_special_function_unit(fixtures: Path) -> None:
    k = _kernel(fixtures, "verdict_xu_transcendental.csv")
    # FP32 3e8 FLOP / 32.8 TFLOP/s = 9.2 us, DRAM 10 us, XU pipe 85 % of 100 us; LSU (5 %) is
    # not a compute pipe
    assert k.pipe_pct == {"xu": 85.0, "fma": 20.0, "lsu": 5.0}
    assert k.bound is Bound.COMPUTE and k.compute_ceiling == "pipe:xu"
    assert describe(k) == "compute-bound (xu pipe 85%)"
    doc = json.loads(render_json(_analysis(fixtures, "verdict_xu_transcendental.csv")))
    assert doc["kernels"][0]["pipe_pct"]["xu"] == 85.0
    assert doc["kernels"][0]["compute_ceiling"] == "pipe:xu"


def test_an_all_nan_launch_says_collection_failed(corpus: Path) -> None:
    k = analyzed(corpus / "a100pcie_rep_2022.4.0_all-nan-failed.ncu-rep").kernels[0]
    assert k.notes == ("collection failed: every counter of this launch reads n/a; ncu measured nothing",)
    assert k.bound is Bound.UNKNOWN and k.verdict_basis is VerdictBasis.NONE
    assert not k.missing


def test_h100_silu_fp16_from_hfma_and_the_instruction_roofline(corpus: Path) -> None:
    # reexport raw-base, kernel 0: hfma 857.13 inst/cycle per SMSP x smsp clock x duration, hadd
    # and hmul "no data"; smsp__inst_executed.sum = 53,477,446 warp instructions; 114 SMs x 4
    # schedulers x 1.100 GHz = 501.6 G warp instructions/s.
    path = corpus / "reexport" / "h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv"
    k = analyzed(path).kernels[0]
    assert k.not_collected == {"fp16": ("hadd", "hmul")}
    assert k.flop["fp16"] is not None and k.flop["fp16"] > 0
    assert k.flop_total_is_lower_bound
    assert k.pipe_pct["xu"] == pytest.approx(35.24, abs=0.01)
    roof = k.instructions
    assert roof is not None
    assert roof.warp_inst == 53477446
    assert roof.issue_peak_warp_inst_per_s == pytest.approx(114 * 4 * 1100023859.81, rel=1e-6)
    dram_transactions = (268463104 + 248602624) / 32
    assert roof.intensity_warp_inst_per_transaction["dram"] == pytest.approx(53477446 / dram_transactions)


# --- properties -------------------------------------------------------------------------------

_COUNT = st.one_of(st.none(), st.floats(min_value=0.0, max_value=1e15, allow_nan=False))
_PCT = st.one_of(st.none(), st.floats(min_value=0.0, max_value=100.0, allow_nan=False))


def _frame(values: dict[str, float | None]) -> pd.DataFrame:
    return pd.DataFrame({k: [np.nan if v is None else v] for k, v in values.items()})


@settings(deadline=None, max_examples=examples(ci=15, thorough=200))  # normalize() per example
@given(hadd=_COUNT, hmul=_COUNT, hfma=_COUNT, extra=st.floats(min_value=0.0, max_value=1e12))
def test_adding_a_present_term_never_lowers_a_total(
    hadd: float | None, hmul: float | None, hfma: float | None, extra: float
) -> None:
    def fp16(add: float | None) -> float:
        frame = _frame(
            {
                "sm__sass_thread_inst_executed_op_hadd_pred_on.sum": add,
                "sm__sass_thread_inst_executed_op_hmul_pred_on.sum": hmul,
                "sm__sass_thread_inst_executed_op_hfma_pred_on.sum": hfma,
            }
        )
        return float(normalize(frame)["flop_fp16"].iloc[0])

    before = fp16(hadd)
    after = fp16((hadd or 0.0) + extra)
    assert not np.isnan(after)  # a present term always gives a total
    assert np.isnan(before) or after >= before


@settings(deadline=None, max_examples=examples(ci=15, thorough=200))
@given(measured=_COUNT, other=_COUNT)
def test_na_never_becomes_zero(measured: float | None, other: float | None) -> None:
    frame = _frame(
        {
            "sm__ops_path_tensor_src_bf16_dst_fp32.sum": measured,
            "sm__ops_path_tensor_src_fp16_dst_fp32.sum": other,
        }
    )
    out = normalize(frame).iloc[0]
    present = [v for v in (measured, other) if v is not None]
    if not present:
        assert np.isnan(out["flop_tensor"])  # nothing measured: missing, not 0
    else:
        assert out["flop_tensor"] == pytest.approx(sum(present))
        assert (out["flop_tensor_not_collected"] is None) == (len(present) == 2)


@given(sm=_PCT, mem=_PCT, waves=st.floats(min_value=0.0, max_value=100.0), has_roofline=st.booleans())
def test_the_verdict_basis_is_always_stated(
    sm: float | None, mem: float | None, waves: float, has_roofline: bool
) -> None:
    def arr(v: float | None) -> np.ndarray:
        return np.array([np.nan if v is None else v])

    sol = sol_arrays(arr(sm), arr(mem), {"dram": arr(mem)}, np.array([waves]))
    binding = np.array(["dram" if has_roofline else None], dtype=object)
    verdict = verdict_arrays(binding, np.array([has_roofline]), sol)
    basis, bound = verdict.basis[0], verdict.bound[0]
    assert isinstance(basis, VerdictBasis) and isinstance(bound, Bound)
    assert (basis is VerdictBasis.NONE) == (bound is Bound.UNKNOWN)
    if sm is not None and mem is not None:
        assert bound is not Bound.UNKNOWN  # SOL percentages always give a verdict
    if basis is VerdictBasis.SOL:
        assert bound is sol.bound[0]
    # the roofline decides wherever its data supports a verdict; SOL's rule is the cross-check
    assert (basis is VerdictBasis.ROOFLINE) == has_roofline
    if has_roofline:
        assert bound is Bound.MEMORY
        assert verdict.disagrees[0] == (sol.bound[0] in (Bound.COMPUTE, Bound.LATENCY))


def test_the_instruction_roofline_plot(corpus: Path, fixtures: Path) -> None:
    from ncu_roof.errors import UsageError
    from ncu_roof.render.plot import render_plot

    analysis = analyzed(corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep")
    svg = render_plot(analysis, kind="instruction", fmt="svg")
    assert svg == render_plot(analysis, kind="instruction", fmt="svg")  # same input, same bytes
    text = svg.decode()
    assert "NVIDIA H100 PCIe (device 0): 3 launches, 854 µs" in text  # the FLOP roofline's title
    assert "Issue 502 Ginst/s" in text  # 114 SMs x 4 schedulers x 1.10 GHz, SI-prefixed as TFLOP/s
    with pytest.raises(UsageError, match="warp-instruction counts"):
        render_plot(_analysis(fixtures, "verdict_xu_transcendental.csv"), kind="instruction")


def test_per_architecture_figures() -> None:
    from ncu_roof.analysis.prediction import builtin_peaks
    from ncu_roof.gpus.arch import arch_for_cc
    from ncu_roof.gpus.lookup import gpu_by_key

    assert arch_for_cc("8.0") is arch_for_cc("80") is arch_for_cc(gpu_by_key("a100-sxm4").cc)
    assert arch_for_cc("9.9") is None and arch_for_cc(None) is None
    t4 = builtin_peaks("t4")[1]  # CC 7.5, 40 SMs, 1.59 GHz boost
    assert t4["xu"][0] == pytest.approx(16 * 40 * 1.59e9)  # 1.02 T special-function results/s
    assert t4["int8"][0] == pytest.approx(130e12)  # 2 x 65 dense FP16 tensor (T4 datasheet: 130 TOPS)
    assert "unverified" in t4["int8"][1] and "unverified" not in t4["xu"][1]
    assert "int8" not in builtin_peaks("v100-sxm2")[1]  # Volta has no INT8 tensor path


def test_sol_verdict_where_the_report_has_no_bytes(corpus: Path) -> None:
    # rtx3070 nvtx-ranges (ncu 2022.3): pipe and SOL figures but no FLOP or byte counters. daxpy:
    # SM 12.04 %, memory 90.72 % (breakdown dram 90.72 > l2 38.26 > l1 15.18) -> memory-bound at
    # DRAM by SOL; an idle tensor pipe alone is no FLOP total.
    kernels = analyzed(corpus / "rtx3070_rep_2022.3_nvtx-ranges.ncu-rep").kernels
    daxpy = next(k for k in kernels if k.name.startswith("daxpy_kernel"))
    assert daxpy.verdict_basis is VerdictBasis.SOL
    assert describe(daxpy) == "memory-bound (dram)"
    assert daxpy.flop["total"] is None and daxpy.flop["tensor"] is None
    assert daxpy.pipe_pct["fp64"] == pytest.approx(12.04, abs=0.01)


def test_int8_work_without_its_peak_falls_back_to_the_tensor_pipe(fixtures: Path) -> None:
    from ncu_roof.base.vocabulary import RoofChoice

    # --gpu roofs have no INT8 peak; the tensor pipe (76 % busy) still bounds compute
    k = analyzed(fixtures / "verdict_int8_gemm.csv", RoofChoice(gpu_key="a100-sxm4")).kernels[0]
    assert k.bound is Bound.COMPUTE and k.compute_ceiling == "pipe:tensor"
    assert k.pct_of_roof == pytest.approx(76.0)


def test_a_failed_collection_has_no_total_and_says_why(corpus: Path) -> None:
    # every counter of the one launch reads n/a: its time is unknown (null, never 0 s), and the
    # main reason on stderr is the failed collection, not a missing --set or --gpu
    # main reason is the failed collection, not a missing --set or --gpu; the CLI refuses such a
    # capture (exit 3: it measured nothing), the library still says what it holds
    from ncu_roof.render.jsonout import render_json
    from ncu_roof.render.summary import summarize
    from ncu_roof.render.terminal import render_terminal
    from ncu_roof.render.unplaced import missing_reason

    for name in (
        "a100pcie_rep_2022.4.0_all-nan-failed.ncu-rep",
        "reexport/a100pcie_rep_2022.4.0_all-nan-failed.ncu2024.1-details.csv",
    ):
        analysis = analyzed(corpus / name)
        document = json.loads(render_json(analysis))
        assert document["total_duration_s"] is None, name
        assert document["groups"][0]["total_duration_s"] is None
        reason = missing_reason(analysis) or ""
        assert reason.startswith("1 launch failed to collect (ncu measured nothing"), name
        done = run_cli("analyze", str(corpus / name), "--format", "json")
        assert done.returncode == 3 and "collection failed for every launch (1 launch)" in done.stderr
    analysis = analyzed(corpus / "a100pcie_rep_2022.4.0_all-nan-failed.ncu-rep")
    table = render_terminal(summarize(analysis), color=False, width=120)
    assert "time: – in 1 launch" in table and "0 s" not in table


def test_no_work_over_no_bytes_is_no_intensity(corpus: Path) -> None:
    # julia__5_11155 (a40): 0 FLOP and 0 bytes of shared memory; 0 / 0 is no intensity (the
    # JSON's null, the table's –), while 0 FLOP over 43.3 MB of DRAM is an intensity of 0
    analysis = analyzed(corpus / "a40_rep_2022.4.0_indexspaces.ncu-rep")
    kernel = next(k for k in analysis.kernels if k.id == 0)
    assert (
        kernel.flop["total"] == 0.0 and kernel.bytes["shared"] == 0.0 and kernel.bytes["dram"] == 43319936.0
    )
    assert kernel.intensity_flop_per_byte["dram"] == 0.0 and kernel.intensity_flop_per_byte["l2"] == 0.0
    assert kernel.intensity_flop_per_byte["shared"] is None
    table = run_cli("analyze", str(corpus / "a40_rep_2022.4.0_indexspaces.ncu-rep"), env={"COLUMNS": "240"})
    assert "∞" not in table.stdout


def _latency_inputs(rows: list[tuple[float, float, float, float, str | None, bool]]) -> NoteInputs:
    """What the latency notes read of these launches: (SM %, memory %, % of the roof, waves per
    SM, the roof that binds, whether the roofline could be placed)."""
    from ncu_roof.analysis.notes import NoteInputs
    from ncu_roof.analysis.verdicts import Verdicts

    n = len(rows)
    sm, memory, pct, waves, binding, supported = (np.array(c) for c in zip(*rows, strict=True))
    nothing, nowhere = np.zeros(n, dtype=bool), np.empty(n, dtype=object)
    lacking = pl.Series([[]] * n, dtype=pl.List(pl.String))
    # the latency note reads of the verdicts only the roof that binds and whether it was placed
    roofline = SimpleNamespace(binding=binding.astype(object))
    v = SimpleNamespace(arrays=roofline, supported=supported.astype(bool))
    return NoteInputs(
        v=cast(Verdicts, v), missing=lacking, no_compute_roofs=False, recipe={}, not_collected={}, flop={},
        flop_total_is_lower_bound=nothing, tensor_pipe_pct=np.full(n, np.nan), integer_tensor_ops=nothing,
        pct=pct.astype(float), waves=waves.astype(float),
        busiest_tier=nowhere, busiest_tier_pct=np.full(n, np.nan), tensor_by_pipe=nothing,
        sol_pct={"sm": sm.astype(float), "memory": memory.astype(float)},
        pct_of_bandwidth={}, ceiling=nowhere,
        shared_wavefronts_per_request=np.full(n, np.nan), shared_bank_conflict_pct=np.full(n, np.nan),
        input_notes=nowhere,
    )  # fmt: skip


def _latency_notes(x: NoteInputs, launches: np.ndarray) -> tuple[list[str], list[str]]:
    """The latency notes of these launches, made once per distinct kind and made row by row."""
    from ncu_roof.analysis.notes_verdict import _latency, _latency_texts

    small_grid = np.where(x.waves[launches] < 1, x.waves[launches], np.nan)
    placed = x.v.arrays.binding[launches].copy()
    placed[~x.v.supported[launches]] = None
    return _latency(x, launches).to_list(), _latency_texts(x, launches, small_grid, placed).to_list()


def test_a_latency_note_made_once_per_kind_is_each_launch_s_own() -> None:
    """Launches alike share one latency note: it is made once per distinct combination of what it
    shows, and that must be every launch's own text. Every combination of values on and around
    the roundings' edges (half to even, -0, NaN, a small grid's 2-digit waves): a rounding, a sign
    or a field left out of the key gives some launch another's note. 8,400 launches: the texts
    made row by row take `fixed`'s path for many values, the distinct ones its path for few."""
    sol = [12.5, 13.0, 13.5, -0.4, 0.0]
    nan = float("nan")
    rows = list(
        itertools.product(
            sol,  # SM % of peak
            sol,  # memory % of peak
            [nan, -0.4, -0.0, 0.0, 0.4, 12.5, 13.0, 13.5],  # % of the roof
            [nan, 0.25, 0.254, 0.256, 0.999, 1.0, 3.0],  # waves per SM
            [None, "dram", "compute"],  # the roof that binds
            [False, True],  # the roofline could be placed
        )
    )
    x = _latency_inputs(rows)
    for launches in (np.arange(len(rows)), np.arange(len(rows))[::7]):
        once, each = _latency_notes(x, launches)
        assert once == each


def test_a_latency_note_never_rounds_up_to_the_threshold_it_says_both_are_under() -> None:
    """59.55% of peak is under 60%: it read "memory 2–60% of peak, both under 60%" (dropout-162k)."""
    nan = float("nan")
    x = _latency_inputs([(24.0, 59.55, nan, 3.0, None, False), (59.96, 0.4, nan, 3.0, None, False)])
    once, each = _latency_notes(x, np.arange(2))
    assert once == each
    assert [n.split(" of peak")[0] for n in once] == [
        "latency-bound: SM 24% and memory 59%",
        "latency-bound: SM 59% and memory 0%",
    ]


@given(st.lists(st.tuples(st.floats(allow_nan=True), st.booleans()), max_size=30))
def test_a_failed_launch_measured_nothing(rows: list[tuple[float, bool]]) -> None:
    """NaN for each launch whose collection failed, its value for every other; where none failed,
    the column itself, which cannot be written through (launches' columns are shared, not copied)."""
    values = np.array([v for v, _ in rows], dtype="float64")
    failed = np.array([f for _, f in rows], dtype=bool)
    out = unfailed(values, failed)
    expected = np.where(failed, np.nan, values)
    assert np.array_equal(out, expected, equal_nan=True)
    if not failed.any():
        assert np.shares_memory(out, values) or not len(values)
        with pytest.raises(ValueError):
            out[...] = 0.0


_DETAILS_HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
)


def _details(metrics: list[tuple[str, str, str]]) -> str:
    kernel = '"0","1","a.out","127.0.0.1","sgemm(float *)","1","7","(256, 1, 1)","(64, 1, 1)","0","8.6"'
    rows = [f'{kernel},"Command line profiler metrics","{n}","{u}","{v}"\n' for n, u, v in metrics]
    return _DETAILS_HEADER + "".join(rows)


def test_no_tensor_instruction_alone_is_no_flop_total() -> None:
    # DRAM bytes, a duration and sm__inst_executed_pipe_tensor.sum = 0, but no FADD/FMUL/FFMA
    # count: the kernel's FLOPs are unknown, so no roof can be said to bind. It was called
    # memory-bound (dram) · roofline on a total of 0 FLOP (an SGEMM, whose FFMAs were not collected)
    text = _details(
        [
            ("dram__bytes.sum", "byte", "32,746,880"),
            ("gpu__time_duration.sum", "nsecond", "10,776,576"),
            ("sm__inst_executed_pipe_tensor.sum", "inst", "0"),
        ]
    )
    done = run_cli("analyze", str(input_file("tensor0.csv", text)), "--gpu", "a10g", "-F", "json")
    assert done.returncode == 0, done.stderr
    k = json.loads(done.stdout)["kernels"][0]
    assert k["flop"]["total"] is None
    assert k["verdict_basis"] != "roofline" and k["bound"] != "memory"
