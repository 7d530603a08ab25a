"""`ncu-roof predict`: the seeds' worked examples through model.roofline(), library and CLI."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import CliResult, run_cli
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.model import work_time_arrays
from ncu_roof.analysis.prediction import (
    builtin_peaks,
    custom_roofs,
    predict,
    predict_workload,
)
from ncu_roof.analysis.workloads import build
from ncu_roof.base.vocabulary import Roofs
from ncu_roof.errors import UsageError
from ncu_roof.gpus.lookup import builtin_gpus, gpu_by_key
from ncu_roof.gpus.roofs import builtin_roofs
from ncu_roof.render.predictout import render_text, to_dict

SEED_004_PLATFORM = ["--peak", "100GFLOP/s", "--bandwidth", "dram=20GB/s"]


def run_json(*args: str) -> dict[str, object]:
    result = run_cli("predict", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def error_and_hint(result: CliResult) -> tuple[str, str]:
    """The only two stderr lines, `error: …` and `hint: …`, without their prefixes."""
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("hint: "), lines
    return lines[0].removeprefix("error: "), lines[1].removeprefix("hint: ")


def test_seed_000_vector_add_on_a100_sxm4() -> None:
    doc = run_json("vector-add", "--n", "1e7", "--dtype", "fp32", "--gpu", "a100-sxm4")
    assert doc["schema"] == "ncu-roof/prediction/v1"
    assert doc["intensity_flop_per_byte"] == {"dram": pytest.approx(0.0833, abs=5e-5)}
    # exact: 2039e9 / 12 = 169.92 GFLOP/s; the seed multiplied the rounded 0.0833 and printed
    # 169.8, so the check is within 0.1 % of the seed's figure
    assert doc["attainable_flop_per_s"] == pytest.approx(169.8e9, rel=1e-3)
    assert doc["binding"] == "dram" and doc["bound"] == "memory"
    assert doc["time_at_roof_s"] == pytest.approx(1.2e8 / 2039e9)
    assert doc["workload"] == {
        "name": "vector-add",
        "params": {"n": 10_000_000, "dtype": "fp32"},
        "flop": 1e7,
        "bytes": {"dram": 1.2e8},
    }


def test_seed_000_vector_add_from_flops_and_bytes_matches_workload() -> None:
    doc = run_json("--gpu", "a100-sxm4", "--flops", "1e7", "--bytes", "1.2e8")
    assert doc["attainable_flop_per_s"] == pytest.approx(2039e9 / 12)
    assert doc["ridge_flop_per_byte"] == {"dram": pytest.approx(19.5e12 / 2039e9)}
    assert doc["cap_flop_per_s"] == {"dram": pytest.approx(2039e9 / 12), "compute": 19.5e12}


def test_seed_000_rmsnorm_unfused_on_h100_is_memory_bound_at_0_2() -> None:
    doc = run_json("rmsnorm", "--d", "4096", "--tokens", "8192", "--unfused", "--gpu", "h100-sxm5")
    assert doc["intensity_flop_per_byte"] == {"dram": pytest.approx(0.20)}
    assert doc["attainable_flop_per_s"] == pytest.approx(0.2 * 3350e9)
    assert doc["bound"] == "memory"


def test_seed_000_gemm_4096_cubed_is_compute_bound_on_a100() -> None:
    doc = run_json(
        "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "fp32", "--gpu", "a100-sxm4"
    )
    assert doc["intensity_flop_per_byte"] == {"dram": pytest.approx(682.6, abs=0.1)}
    assert doc["binding"] == "compute" and doc["attainable_flop_per_s"] == 19.5e12
    assert doc["time_at_roof_s"] == pytest.approx(2 * 4096**3 / 19.5e12)


def test_seed_004_dot_product_cap_5_gflops() -> None:
    doc = run_json(*SEED_004_PLATFORM, "--intensity", "dram=0.25")
    assert doc["attainable_flop_per_s"] == pytest.approx(5e9)
    assert doc["binding"] == "dram" and doc["time_at_roof_s"] is None
    assert doc["workload"] == {"name": None, "params": {}, "flop": None, "bytes": {}}


def test_seed_004_dot_workload_gives_the_same_cap() -> None:
    doc = run_json("dot", "--n", "1M", *SEED_004_PLATFORM)
    assert doc["intensity_flop_per_byte"] == {"dram": 0.25}
    assert doc["attainable_flop_per_s"] == pytest.approx(5e9)


def test_seed_004_stencil7_cap_16_25_gflops() -> None:
    doc = run_json("stencil7", "--n", "1e6", *SEED_004_PLATFORM)
    assert doc["intensity_flop_per_byte"] == {"dram": 0.8125}
    assert doc["attainable_flop_per_s"] == pytest.approx(16.25e9)


def test_seed_004_tiled_gemm_22_4_mb_is_compute_bound_at_100() -> None:
    doc = run_json(*SEED_004_PLATFORM, "--flops", "268435456", "--bytes", "22.4MB")
    assert doc["intensity_flop_per_byte"] == {"dram": pytest.approx(11.98, abs=0.005)}
    assert doc["attainable_flop_per_s"] == pytest.approx(100e9)
    assert doc["binding"] == "compute" and doc["bound"] == "compute"


def test_seed_004_three_levels_bind_at_dram_at_10_gflops() -> None:
    doc = run_json(
        "--peak",
        "100GFLOP/s",
        "--bandwidth",
        "l1=1000GB/s",
        "--bandwidth",
        "llc=200GB/s",
        "--bandwidth",
        "dram=20GB/s",
        "--intensity",
        "l1=2",
        "--intensity",
        "llc=1",
        "--intensity",
        "dram=0.5",
    )
    assert doc["cap_flop_per_s"] == {
        "l1": pytest.approx(100e9),
        "llc": pytest.approx(100e9),
        "dram": pytest.approx(10e9),
        "compute": 100e9,
    }
    assert doc["binding"] == "dram" and doc["attainable_flop_per_s"] == pytest.approx(10e9)


@pytest.mark.parametrize(
    ("ai", "cap_gflop_per_s"),
    [(0.5, 10.0), (5.0, 100.0), (20.0, 100.0), (0.25, 5.0), (0.8125, 16.25), (12.0, 100.0)],
)
def test_seed_004_systemverilog_testbench_caps(ai: float, cap_gflop_per_s: float) -> None:
    roofs = custom_roofs(["100GFLOP/s"], ["dram=20GB/s"])
    p = predict(roofs, None, {}, {"dram": ai})
    assert p.point.attainable_flop_per_s == pytest.approx(cap_gflop_per_s * 1e9, abs=1e-6 * 1e9)


def test_peak_per_precision_and_dtype_choose_the_roof() -> None:
    roofs = custom_roofs(["fp32=19.5TFLOP/s", "tensor=312TFLOP/s"], ["dram=2039GB/s"])
    p = predict(roofs, 2 * 4096.0**3, {"dram": 3 * 4096**2 * 2}, {}, "tensor")
    assert p.point.cap_flop_per_s["compute"] == 312e12
    with pytest.raises(UsageError, match="no fp64 peak"):
        predict(roofs, 1.0, {"dram": 1.0}, {}, "fp64")


def test_table_shows_verdict_and_assumptions() -> None:
    p = predict_workload(
        builtin_roofs(gpu_by_key("h100-sxm5")), build("rmsnorm", {"d": 4096, "unfused": True})
    )
    text = render_text(p)
    assert "memory-bound at dram" in text and "0.2" in text
    assert "3 intermediates written and re-read" in text
    assert to_dict(p)["bound"] == "memory"


def test_table_format_and_output_file(tmp_path: Path) -> None:
    out = tmp_path / "p.txt"
    result = run_cli("predict", "vector-add", "--n", "1e7", "--gpu", "a100-sxm4", "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "169.9 GFLOP/s" in text and "0.08333" in text and "\x1b[" not in text


def test_roofs_file_platform(tmp_path: Path) -> None:
    roofs = tmp_path / "lab.toml"
    roofs.write_text('name = "lab"\n[peak]\nfp32 = "100GFLOP/s"\n[bandwidth]\ndram = "20GB/s"\n')
    doc = run_json("--roofs", str(roofs), "--intensity", "dram=0.25")
    assert doc["platform"] == {
        "name": "lab",
        "peak_flop_per_s": {"fp32": 100e9},
        "bandwidth_byte_per_s": {"dram": 20e9},
    }
    assert doc["attainable_flop_per_s"] == pytest.approx(5e9)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--peak", "100GB/s", "--bandwidth", "dram=20GB/s", "--flops", "1"], "is not a flop per s"),
        (["--gpu", "a100-sxm4", "--flops", "1e7", "--bytes", "1.2e8GFLOP"], "is not a byte"),
        (["--gpu", "a100-sxm4", "--flops", "1", "--bytes", "llc=1"], "tier llc has no bandwidth"),
        (["--flops", "1", "--bytes", "1"], "exactly one platform"),
        (
            ["--gpu", "a100-sxm4", "--peak", "1GFLOP/s", "--flops", "1", "--bytes", "1"],
            "exactly one platform",
        ),
        (["--gpu", "nope", "--flops", "1", "--bytes", "1"], "unknown GPU"),
        (["--gpu", "a100-sxm4", "--flops", "1"], "nothing to place"),
        (["--gpu", "a100-sxm4", "--intensity", "dram=0"], "must be positive"),
        (["--gpu", "a100-sxm4", "--bytes", "dram=1", "--intensity", "dram=1"], "both"),
        (["gemm", "--m", "4", "--gpu", "a100-sxm4"], "needs n, k"),
        (["vector-add", "--n", "1.5", "--gpu", "a100-sxm4"], "whole number"),
        (["--n", "4", "--gpu", "a100-sxm4", "--bytes", "1"], "needs a workload"),
        (["dot", "--n", "4", "--flops", "1", "--gpu", "a100-sxm4"], "not both"),
    ],
)
def test_usage_errors_are_ncu_roof_errors(args: list[str], message: str) -> None:
    result = run_cli("predict", *args)
    assert result.returncode == 2, result.stderr  # UsageError's exit code, through main()
    error, _hint = error_and_hint(result)
    assert message in error


def test_main_prints_error_and_exit_code_2_without_traceback() -> None:
    done = run_cli("predict", "--gpu", "a100-sxm4", "--flops", "1e7", "--bytes", "12 parsecs")
    assert done.returncode == 2
    assert done.stderr.startswith("error:") and "Traceback" not in done.stderr


def test_json_is_strict_with_non_finite_values_as_null() -> None:
    from dataclasses import replace

    from ncu_roof.base.vocabulary import Roofs
    from ncu_roof.render.predictout import render_json

    roofs = Roofs({"fp32": 1e11}, {"dram": 2e10, "l2": float("inf")}, source="user", sources={})
    p = predict(roofs, 1e9, {"dram": 1e8, "l2": 0.0}, {})
    p = replace(p, point=replace(p.point, time_at_roof_s=float("nan")))
    text = render_json(p)
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert doc["platform"]["bandwidth_byte_per_s"] == {"dram": 2e10, "l2": None}
    assert doc["time_at_roof_s"] is None
    assert doc["attainable_flop_per_s"] == pytest.approx(1e11)


@pytest.mark.parametrize("value", ["0", "-1", "-0.5", "1e400"])
def test_intensity_zero_or_negative_says_must_be_positive_with_a_plain_example(value: str) -> None:
    result = run_cli("predict", "--gpu", "a100-sxm4", "--intensity", f"dram={value}")
    assert result.returncode == 2, result.stderr  # UsageError's exit code, through main()
    error, hint = error_and_hint(result)
    if value != "1e400":
        assert "must be positive" in error
        assert hint == "e.g. dram=0.25"
    assert "non-negative" not in error


def test_library_intensity_not_positive_and_finite_is_refused() -> None:
    roofs = custom_roofs(["100GFLOP/s"], ["dram=20GB/s"])
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UsageError, match="must be positive"):
            predict(roofs, None, {}, {"dram": bad})


def test_an_intensity_whose_bandwidth_roof_overflows_is_compute_bound_without_a_warning() -> None:
    # 20 GB/s x 1e305 FLOP/B is inf in float64 (numpy's RuntimeWarning on stderr before)
    roofs = custom_roofs(["100GFLOP/s"], ["dram=20GB/s"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doc = to_dict(predict(roofs, None, {}, {"dram": 1e305}))
    assert doc["attainable_flop_per_s"] == pytest.approx(1e11)
    assert doc["bound"] == "compute"


def test_int8_gemm_runs_against_the_int8_tensor_ceiling() -> None:
    # A100 (cc 8.0): 4096 dense INT8 tensor ops/clk/SM = 2 x its 2048 FP16 tensor FLOP/clk/SM, at
    # the clock of its tensor paths: 2 x 312 TFLOP/s = 624 TOPS (A100 datasheet: INT8 624 dense);
    # 2 x 4096^3 = 137.4 G integer ops, no FLOPs; A and B int8, C int32: 2 x 4096^2 + 4 x 4096^2 B
    doc = run_json(
        "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "int8", "--gpu", "a100-sxm4"
    )
    peak = 624e12
    ops = doc["ops"]
    assert isinstance(ops, dict)
    assert ops["count"] == 2 * 4096**3 and ops["ceiling"] == "int8"
    assert ops["peak_per_s"] == pytest.approx(peak)
    assert "unverified" in ops["peak_source"]
    assert doc["workload"]["flop"] == 0.0  # type: ignore[index]
    assert doc["workload"]["bytes"] == {"dram": 6.0 * 4096**2}  # type: ignore[index]
    assert doc["binding"] == "compute" and doc["compute_ceiling"] == "int8"
    assert doc["time_at_roof_s"] == pytest.approx(2 * 4096**3 / peak)


def test_exp_is_not_modelled_in_fp64() -> None:
    # no special-function instruction takes a double: an fp64 exp is a DFMA polynomial, not "one
    # multiply and one MUFU.EX2" (on an A10, 1/64-rate FP64, that model called it memory-bound)
    error, hint = error_and_hint(run_cli("predict", "exp", "--n", "1e8", "--dtype", "fp64", "--gpu", "a10"))
    assert error == "workload exp is modelled for fp32, fp16, bf16, not fp64"
    assert "--flops" in hint
    assert build("exp", {"n": 10, "dtype": "fp16"}).ops == 10
    # nor does a gemm-only dtype's hint offer it
    _, hint = error_and_hint(run_cli("predict", "exp", "--n", "1e8", "--dtype", "tf32", "--gpu", "a10"))
    assert hint == "use fp32, fp16, bf16"


def test_exp_has_an_xu_ceiling_and_is_memory_bound_on_a100() -> None:
    # XU: 16 results/clk/SM x 108 x 1.41 GHz = 2.44 T/s -> 1e8 exp take 41 us; DRAM 8e8 B /
    # 2039 GB/s = 392 us binds
    doc = run_json("exp", "--n", "1e8", "--gpu", "a100-sxm4")
    ops = doc["ops"]
    assert isinstance(ops, dict)
    assert ops["ceiling"] == "xu" and ops["peak_per_s"] == pytest.approx(16 * 108 * 1.41e9)
    assert ops["time_s"] == pytest.approx(1e8 / (16 * 108 * 1.41e9))
    assert doc["binding"] == "dram"
    assert doc["time_at_roof_s"] == pytest.approx(8e8 / 2039e9)


def test_ops_from_the_command_line_with_a_user_ceiling() -> None:
    doc = run_json(
        "--dtype",
        "int8",
        "--ops",
        "4e10",
        "--bytes",
        "2e7",
        "--peak",
        "int8=1e15",
        "--bandwidth",
        "dram=1e12",
    )
    assert doc["binding"] == "compute" and doc["compute_ceiling"] == "int8"
    assert doc["time_at_roof_s"] == pytest.approx(40e-6)  # 4e10 / 1e15 > 2e7 / 1e12 = 20 us


def test_int8_operations_add_their_time_to_the_flops_as_analyze_adds_them() -> None:
    # FP32 1e12 FLOP at 1e14 FLOP/s = 10 ms, then INT8 4e12 ops at 1e15 ops/s = 4 ms: 14 ms
    # (the longer alone, 10 ms, was predict's rule; analyze adds each kind of work at its peak)
    args = ("--flops", "1e12", "--dtype", "int8", "--ops", "4e12", "--bytes", "1e6")
    platform = ("--peak", "fp32=1e14", "--peak", "int8=1e15", "--bandwidth", "dram=1e12")
    doc = run_json(*args, *platform)
    assert doc["binding"] == "compute" and doc["compute_ceiling"] == "fp32"  # the FLOPs' 10 ms > 4 ms
    assert doc["time_at_roof_s"] == pytest.approx(14e-3, rel=1e-12)
    assert doc["attainable_flop_per_s"] == pytest.approx(1e12 / 14e-3, rel=1e-12)
    work = {"fp32": np.array([1e12]), "tensor:int8": np.array([4e12])}
    analyzed, longest = work_time_arrays(work, {"fp32": 1e14, "tensor:int8": 1e15})
    assert doc["time_at_roof_s"] == pytest.approx(analyzed[0], rel=1e-12) and longest[0] == "fp32"
    # FLOPs on a platform with no peak for them were placed as if free (int8: 4 ms at compute; alone:
    # memory-bound at 1e18 FLOP/s); analyze's time is unknown there: refused, as a --dtype without a peak is
    for extra in (("--dtype", "int8", "--ops", "4e12"), ()):
        refused = run_cli(
            "predict", "--flops", "1e12", *extra, "--bytes", "1e6", *platform[2:], "--format", "json"
        )
        assert refused.returncode == 2 and "has no peak for the FLOPs (it has int8)" in refused.stderr
    # special-function results run on their own pipe: the longer of the two, as analyze's busiest pipe
    xu = run_json("exp", "--n", "1e8", "--peak", "fp32=1e14", "--peak", "xu=1e9", "--bandwidth", "dram=1e15")
    assert xu["time_at_roof_s"] == pytest.approx(1e8 / 1e9, rel=1e-12)


def test_flops_without_a_dtype_run_at_the_default_precision_and_say_which_and_from_where() -> None:
    # A10G: 80 SMs x 1.71 GHz x 256 FLOP/clk = 35.0 TFLOP/s FP32, the peak as the table gives it
    # (the compute ceiling and its source were null, though the FLOPs ran against FP32's roof)
    doc = run_json("--flops", "1e12", "--bytes", "1e6", "--gpu", "a10g")
    assert doc["compute_ceiling"] == "fp32" and doc["attainable_flop_per_s"] == 35e12
    assert str(doc["compute_peak_source"]).startswith("builtin:a10g (derived: 80 SMs and 1.71 GHz")
    fp64_only = run_json(
        "--flops", "1e12", "--bytes", "1e6", "--peak", "fp64=1e13", "--bandwidth", "dram=1e12"
    )
    assert fp64_only["compute_ceiling"] == "fp64" and fp64_only["compute_peak_source"] == "user: command line"
    one_roof = run_json(*SEED_004_PLATFORM, "--flops", "1e9", "--bytes", "1e8")  # `--peak 100GFLOP/s`
    assert one_roof["compute_ceiling"] is None


def test_ops_without_int8_or_without_a_ceiling_is_a_usage_error() -> None:
    result = run_cli("predict", "--ops", "4e10", "--bytes", "2e7", "--gpu", "a100-sxm4")
    assert result.returncode == 2 and "--dtype int8" in result.stderr
    result = run_cli("predict", "--dtype", "int8", "--ops", "4e10", "--bytes", "2e7", *SEED_004_PLATFORM)
    assert result.returncode == 2 and "no int8 ceiling" in result.stderr


GEMM_4096 = ("gemm", "--m", "4096", "--n", "4096", "--k", "4096")


@pytest.mark.parametrize(
    ("dtype", "gpu", "datasheet_flop_per_s", "datasheet"),
    [
        ("tf32", "a100-sxm4", 156e12, "A100 datasheet"),  # TF32 156 TFLOPS dense
        ("bf16", "a100-sxm4", 312e12, "A100 datasheet"),  # BF16 312 TFLOPS dense
        ("fp16", "a100-sxm4", 312e12, "A100 datasheet"),  # FP16 312 TFLOPS dense
        ("fp8", "h100-sxm5", 1979e12, "H100 datasheet"),  # SXM5: FP8 1979 TFLOPS dense
        ("tf32", "h100-sxm5", 494.7e12, "H100 datasheet"),  # SXM5: TF32 494.7 TFLOPS dense
    ],
)
def test_gemm_runs_against_its_tensor_path_dense_peak(
    dtype: str, gpu: str, datasheet_flop_per_s: float, datasheet: str
) -> None:
    doc = run_json(*GEMM_4096, "--dtype", dtype, "--gpu", gpu)
    assert doc["compute_ceiling"] == f"tensor:{dtype}" and doc["binding"] == "compute"
    assert doc["attainable_flop_per_s"] == pytest.approx(datasheet_flop_per_s, rel=1e-3)
    assert doc["time_at_roof_s"] == pytest.approx(2 * 4096**3 / datasheet_flop_per_s, rel=1e-3)
    source = doc["compute_peak_source"]
    assert isinstance(source, str) and datasheet in source and "unverified" not in source


def test_fp8_gemm_bytes_and_flops_path_on_the_command_line() -> None:
    # fp8: A and B 1 B each, C bf16 2 B
    doc = run_json(*GEMM_4096, "--dtype", "fp8", "--gpu", "h100-sxm5")
    assert doc["workload"]["bytes"] == {"dram": 2 * 4096**2 * 1 + 4096**2 * 2}  # type: ignore[index]
    # --flops with a tensor path: 1e12 FLOP of bf16 at 312 TFLOP/s (A100 datasheet) = 3.2 ms
    doc = run_json("--flops", "1e12", "--bytes", "1e6", "--dtype", "bf16", "--gpu", "a100-sxm4")
    assert doc["compute_ceiling"] == "tensor:bf16"
    assert doc["time_at_roof_s"] == pytest.approx(1e12 / 312e12)


def test_b200_tensor_paths_are_marked_unverified() -> None:
    doc = run_json("--flops", "1e12", "--bytes", "1e6", "--dtype", "fp8", "--gpu", "b200")
    assert doc["attainable_flop_per_s"] == pytest.approx(4.5e15)  # B200 datasheet FP8 4.5 PFLOPS dense
    assert "unverified" in str(doc["compute_peak_source"])


def test_a_tensor_path_the_platform_lacks_is_a_usage_error() -> None:
    error, hint = error_and_hint(run_cli("predict", *GEMM_4096, "--dtype", "fp8", "--gpu", "a100-sxm4"))
    assert error == "this platform has no fp8 tensor peak (it has fp64, fp32, fp16, tensor)"
    assert "--peak tensor:fp8=" in hint
    # a custom platform's `tensor` roof (FP16 in) serves fp16 and bf16; its own tf32 peak serves tf32
    doc = run_json(*GEMM_4096, "--dtype", "tf32", "--peak", "tf32=100TFLOP/s", "--bandwidth", "dram=1TB/s")
    assert doc["attainable_flop_per_s"] == pytest.approx(100e12)
    doc = run_json(*GEMM_4096, "--dtype", "bf16", "--peak", "tensor=200TFLOP/s", "--bandwidth", "dram=1TB/s")
    assert doc["attainable_flop_per_s"] == pytest.approx(200e12)


def test_volta_and_turing_have_no_bf16_tensor_path() -> None:
    # BF16 tensor cores came with Ampere: a V100 or T4 "bf16 GEMM" took the FP16 tensor roof, cited
    # to the V100 datasheet (which has no BF16); an RTX 5090 (its arch lists no paths) still does
    for gpu in ("v100-pcie", "t4"):
        error, _ = error_and_hint(run_cli("predict", *GEMM_4096, "--dtype", "bf16", "--gpu", gpu))
        assert error == "this platform has no bf16 tensor peak (it has fp64, fp32, fp16, tensor)"
    doc = run_json(*GEMM_4096, "--dtype", "bf16", "--gpu", "rtx5090")
    assert doc["attainable_flop_per_s"] == pytest.approx(419e12)


def test_tf32_is_for_matrix_work_only() -> None:
    error, _ = error_and_hint(
        run_cli("predict", "vector-add", "--n", "1e6", "--dtype", "tf32", "--gpu", "a100-sxm4")
    )
    assert error == "dtype tf32 is for gemm only"


def test_the_table_names_the_tensor_path_peak_source() -> None:
    result = run_cli("predict", *GEMM_4096, "--dtype", "tf32", "--gpu", "a100-sxm4")
    assert result.returncode == 0, result.stderr
    assert "tensor:tf32 peak: Ampere GA100 (cc 8.0): NVIDIA A100 datasheet: TF32 156" in result.stdout


# --- a tie at the ridge point is compute-bound, however the point is given ---------------------


@pytest.mark.parametrize(
    "point",
    [
        ["--intensity", "dram=5"],  # 100 GFLOP/s / 20 GB/s = 5 FLOP/B: the ridge point
        ["--flops", "1e9", "--bytes", "2e8"],
        ["--flops", "1e9", "--intensity", "dram=5"],
    ],
)
def test_a_point_at_the_ridge_is_compute_bound(point: list[str]) -> None:
    doc = run_json(*SEED_004_PLATFORM, *point)
    assert doc["binding"] == "compute" and doc["bound"] == "compute"
    assert doc["intensity_flop_per_byte"] == {"dram": 5.0}
    assert doc["ridge_flop_per_byte"] == {"dram": 5.0}
    assert doc["cap_flop_per_s"] == {"dram": 100e9, "compute": 100e9}
    assert doc["attainable_flop_per_s"] == 100e9
    if "--flops" in point:
        assert doc["time_at_roof_s"] == pytest.approx(1e9 / 100e9)
        assert doc["workload"]["bytes"] == {"dram": 2e8}  # type: ignore[index]


def test_the_table_marks_compute_at_the_ridge() -> None:
    result = run_cli("predict", *SEED_004_PLATFORM, "--intensity", "dram=5")
    assert result.returncode == 0, result.stderr
    assert "verdict: compute-bound" in result.stdout and "dram ◀" not in result.stdout


def test_a_tier_at_its_ridge_cannot_bind_but_a_lower_cap_still_does() -> None:
    # l2 exactly at its ridge (cannot bind), dram below its ridge: dram binds at 20 GB/s x 1
    roofs = custom_roofs(["100GFLOP/s"], ["dram=20GB/s", "l2=40GB/s"])
    p = predict(roofs, 1e9, {}, {"l2": 2.5, "dram": 1.0})
    assert p.binding == "dram" and p.attainable_flop_per_s == pytest.approx(20e9)
    assert p.point.cap_flop_per_s["l2"] == 100e9
    assert p.point.intensity_flop_per_byte == {"l2": 2.5, "dram": 1.0}
    assert p.bytes_by_tier == {"l2": 1e9 / 2.5, "dram": 1e9}


_RATE = st.floats(min_value=1e3, max_value=1e18, allow_nan=False, allow_infinity=False)
_FLOP = st.one_of(st.none(), st.floats(min_value=1.0, max_value=1e18, allow_nan=False))


@given(peak=_RATE, bandwidth=_RATE, flop=_FLOP)
def test_an_intensity_equal_to_peak_over_bandwidth_is_compute_bound(
    peak: float, bandwidth: float, flop: float | None
) -> None:
    roofs = Roofs({"any": peak}, {"dram": bandwidth}, source="user", sources={})
    ridge = peak / bandwidth
    p = predict(roofs, flop, {}, {"dram": ridge})
    assert p.binding == "compute" and p.bound == "compute"
    assert p.attainable_flop_per_s == peak
    assert p.point.cap_flop_per_s == {"dram": peak, "compute": peak}
    assert p.point.intensity_flop_per_byte == {"dram": ridge}
    if flop is not None:
        assert p.point.time_at_roof_s == flop / peak
    # clearly below the ridge, the tier binds
    below = predict(roofs, flop, {}, {"dram": ridge * (1 - 1e-9)})
    assert below.binding == "dram" and below.bound == "memory"


_WHOLE = st.integers(min_value=1, max_value=2**20)


@given(ratio=_WHOLE, nbytes=_WHOLE, bandwidth=_WHOLE)
def test_flops_and_bytes_at_the_ridge_are_compute_bound(ratio: int, nbytes: int, bandwidth: int) -> None:
    # peak = ratio x bandwidth and FLOPs = ratio x bytes: FLOP / peak and bytes / bandwidth are one
    # real number (bytes / bandwidth), so the two correctly rounded times are one float
    roofs = Roofs({"any": float(ratio * bandwidth)}, {"dram": float(bandwidth)}, source="user", sources={})
    p = predict(roofs, float(ratio * nbytes), {"dram": float(nbytes)}, {})
    assert p.binding == "compute" and p.attainable_flop_per_s == ratio * bandwidth


# --- the output format follows the -o suffix; a contradicting --format is refused -------------


def test_output_suffix_json_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    result = run_cli("predict", *SEED_004_PLATFORM, "--intensity", "dram=0.25", "-o", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "ncu-roof/prediction/v1" and doc["binding"] == "dram"
    assert result.stdout == ""


def test_json_format_into_a_txt_or_unknown_suffix_is_json(tmp_path: Path) -> None:
    for name in ("p.txt", "p.out"):
        out = tmp_path / name
        result = run_cli(
            "predict", *SEED_004_PLATFORM, "--intensity", "dram=0.25", "-F", "json", "-o", str(out)
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(out.read_text())["attainable_flop_per_s"] == pytest.approx(5e9)


def test_an_unknown_or_txt_suffix_is_the_table(tmp_path: Path) -> None:
    out = tmp_path / "p.out"
    result = run_cli("predict", *SEED_004_PLATFORM, "--intensity", "dram=0.25", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "verdict: memory-bound at dram" in out.read_text()


@pytest.mark.parametrize(
    ("args", "name", "error", "hint"),
    [
        (
            ["--format", "json"],
            "p2.md",
            "predict cannot write -o {out} (its suffix says markdown)",
            "name a .txt or .json file (table, json)",
        ),
        (
            [],
            "p.html",
            "predict cannot write -o {out} (its suffix says html)",
            "name a .txt or .json file (table, json)",
        ),
        (
            ["--format", "table"],
            "p.json",
            "--format table contradicts -o {out} (its suffix says json)",
            "drop --format, or name the file ….txt",
        ),
        (["--format", "csv"], "p.csv", "predict has no --format 'csv'", "use --format table or json"),
    ],
)
def test_a_format_the_suffix_contradicts_is_refused(
    tmp_path: Path, args: list[str], name: str, error: str, hint: str
) -> None:
    out = tmp_path / name
    result = run_cli("predict", *SEED_004_PLATFORM, "--intensity", "dram=0.25", *args, "-o", str(out))
    assert result.returncode == 2
    assert error_and_hint(result) == (error.format(out=out), hint)
    assert not out.exists() and result.stdout == ""


def test_gpus_follows_the_output_suffix_too(tmp_path: Path) -> None:
    out = tmp_path / "gpus.json"
    result = run_cli("gpus", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["schema"] == "ncu-roof/gpus/v1"
    refused = run_cli("gpus", "--format", "json", "-o", str(tmp_path / "gpus.md"))
    assert refused.returncode == 2
    error, _hint = error_and_hint(refused)
    assert error.startswith("gpus cannot write -o")


# --- every tensor path of one GPU at one clock: INT8 dense = FP8 dense where both exist --------


@pytest.mark.parametrize(
    ("gpu", "int8_op_per_s"),
    [
        # H100 SXM5: 2 x 989 TFLOP/s dense FP16 tensor (the table's figure); datasheet INT8 1979
        # TOPS dense, = its FP8; not 8192 ops/clk/SM x 132 SMs x 1.98 GHz boost = 2.141 POP/s
        ("h100-sxm5", 1978e12),
        ("h200", 1978e12),  # H200 datasheet: INT8 3958 TOPS sparse, 1979 dense
        ("h100-pcie", 1512e12),  # 2 x 756; datasheet INT8 3026 sparse, 1513 dense
        ("a100-sxm4", 624e12),  # 2 x 312; datasheet INT8 624 dense
        ("l4", 242e12),  # 2 x 121; datasheet INT8 485 sparse, 242.5 dense
        # 2 x 362.05 (its dense FP16 tensor figure); the datasheet's INT8 733 dense is 2 x 366.5
        ("l40s", 724.1e12),
        ("t4", 130e12),  # 2 x 65; datasheet INT8 130
    ],
)
def test_int8_ceiling_is_at_the_clock_of_the_tensor_paths(gpu: str, int8_op_per_s: float) -> None:
    int8, source = builtin_peaks(gpu)[1]["int8"]
    assert int8 == pytest.approx(int8_op_per_s, rel=1e-12)
    fp8 = builtin_peaks(gpu)[0].get("fp8")
    if fp8 is not None:
        assert int8 == fp8[0]
    assert "datasheet, dense FP16 tensor" in source


def test_h100_int8_gemm_matches_fp8_on_the_command_line() -> None:
    args = ("gemm", "--m", "8192", "--n", "8192", "--k", "8192", "--gpu", "h100-sxm5")
    int8 = run_json(*args, "--dtype", "int8")
    fp8 = run_json(*args, "--dtype", "fp8")
    ops = int8["ops"]
    assert isinstance(ops, dict)
    assert ops["peak_per_s"] == fp8["attainable_flop_per_s"] == pytest.approx(1979e12, rel=1e-3)
    assert int8["time_at_roof_s"] == pytest.approx(2 * 8192**3 / 1978e12)


def test_every_int8_ceiling_equals_fp8_and_the_datasheet_the_table_cites() -> None:
    cited = 0
    for gpu in builtin_gpus().values():
        paths, ops = builtin_peaks(gpu.key)
        if "int8" not in ops:
            continue
        int8 = ops["int8"][0]
        assert int8 == pytest.approx(2 * gpu.tensor_tflop_per_s * 1e12, rel=1e-12), gpu.key
        fp8 = paths.get("fp8")
        assert fp8 is None or fp8[0] == int8, gpu.key
        found = re.search(r"INT8 tensor ([\d.]+) TOPS(?: sparse, ([\d.]+) dense)?", gpu.source)
        if found is None or gpu.key == "l40s":  # L40S: its datasheet's INT8 is 2 x 366.5, not 2 x FP16
            continue
        cited += 1
        datasheet = float(found.group(2) or found.group(1)) * 1e12
        assert int8 == pytest.approx(datasheet, rel=2.5e-3), gpu.key
    assert cited >= 10


def test_integer_work_alone_is_shown_in_operations_never_as_zero_flops() -> None:
    # 2·4096³ INT8 ops = 137.4 GOP; A and B 16 MiB each (1 B), C 64 MiB (4 B): 100.7 MB from DRAM
    text = run_cli("predict", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "int8",
                   "--gpu", "a100-sxm4").stdout  # fmt: skip
    table = text.split("verdict:")[0]  # (the int8 ceiling's source cites the FP16 tensor peak)
    assert "FLOP/s" not in table and "0 FLOP" not in text
    dram = next(line for line in text.splitlines() if line.startswith("│ dram"))
    cells = [c.strip() for c in dram.split("│")[1:-1]]
    # 137.4 GOP / 100.7 MB = 1365 op/B; ridge 624 TOP/s / 2.039 TB/s = 306; cap 2.039 TB/s x 1365
    assert cells == ["dram", "101 MB", "2.04 TB/s", "1365", "306", "2.784 POP/s"]
    assert "┃ AI op/B ┃ ridge op/B ┃" in text


def test_a_time_under_a_nanosecond_has_its_prefix() -> None:
    """1 kFLOP and 1 kB at A100 SXM4's 2,039 GB/s take 490 ps at the roof: said with an SI prefix
    as every other time is, not `4.904e-10 s`."""
    result = run_cli("predict", "--gpu", "a100-sxm4", "--flops", "1e3", "--bytes", "1e3")
    assert result.returncode == 0, result.stderr
    assert "time at the roof 490.4 ps" in " ".join(result.stdout.split())
