"""Built-in workload models against the seeds' hand counts."""

from __future__ import annotations

import pytest

from ncu_roof.analysis.workloads import build, gemm
from ncu_roof.errors import UsageError


def test_seed_000_vector_add_n_1e7_fp32() -> None:
    w = build("vector-add", {"n": 10_000_000, "dtype": "fp32"})
    assert w.flop == 1e7
    assert w.bytes_by_tier == {"dram": 1.2e8}
    assert w.flop / w.bytes_by_tier["dram"] == pytest.approx(0.0833, abs=5e-5)
    assert w.precision == "fp32"


def test_seed_000_rmsnorm_unfused_d_4096_per_token() -> None:
    w = build("rmsnorm", {"d": 4096, "tokens": 1, "dtype": "fp32", "unfused": True})
    assert (w.flop, w.bytes_by_tier["dram"]) == (16384.0, 81920.0)
    assert w.flop / w.bytes_by_tier["dram"] == pytest.approx(0.20)


def test_rmsnorm_fused_reads_and_writes_once_and_scales_with_tokens() -> None:
    w = build("rmsnorm", {"d": 4096, "tokens": 8192, "dtype": "fp32"})
    assert w.bytes_by_tier["dram"] == 2 * 4096 * 4 * 8192
    assert w.flop == 4 * 4096 * 8192


def test_seed_000_gemm_4096_cubed_fp32_ideal_reuse() -> None:
    w = gemm(4096, 4096, 4096, "fp32")
    assert w.flop == 2 * 4096**3  # 137.4 GFLOP
    assert w.bytes_by_tier["dram"] == 3 * 4096**2 * 4  # 201.3 MB
    # exact value 2*4096/12 = 682.67; the seed prints it truncated as 682.6
    assert w.flop / w.bytes_by_tier["dram"] == pytest.approx(682.6, abs=0.1)


def test_gemm_fp16_runs_on_tensor_cores() -> None:
    assert gemm(64, 64, 64, "bf16").precision == "tensor:bf16"  # its own data path's peak
    assert gemm(64, 64, 64, "tf32").precision == "tensor:tf32"
    # fp8: A and B 1 B per value, C bf16 (2 B)
    assert gemm(64, 64, 64, "fp8").bytes_by_tier["dram"] == 2 * 64**2 * 1 + 64**2 * 2


@pytest.mark.parametrize(("name", "given"), [("softmax", {"d": 4096}), ("vector-add", {"n": 1000})])
def test_bf16_outside_gemm_runs_at_the_fp32_roof_and_says_so(name: str, given: dict[str, int]) -> None:
    # the A100's packed bf16 is 39 TFLOP/s against FP16's 78: the FP16 roof would promise 2x
    bf16, fp16 = (build(name, {**given, "dtype": d}) for d in ("bf16", "fp16"))
    assert (bf16.precision, fp16.precision) == ("fp32", "fp16")
    assert bf16.bytes_by_tier == fp16.bytes_by_tier  # 2 B a value either way
    assert bf16.assumptions[-1].startswith("bf16 values widened to fp32")
    assert not any("bf16" in a for a in fp16.assumptions)


def test_gemm_tiled_reads_a_and_b_once_per_tile_strip() -> None:
    # N = 512, T = 64: A read 512/64 = 8 times, B 8 times, C written once (fp32)
    w = gemm(512, 512, 512, "fp32", tile=64)
    assert w.flop == 268_435_456  # seed 004's tiled GEMM, 2 x 512^3
    assert w.bytes_by_tier["dram"] == (8 * 512**2 + 8 * 512**2 + 512**2) * 4


def test_seed_004_dot_fp32_is_0_25_flop_per_byte() -> None:
    w = build("dot", {"n": 1000, "dtype": "fp32"})
    assert (w.flop, w.bytes_by_tier["dram"]) == (2000.0, 8000.0)


def test_seed_004_stencil7_fp64_13_flop_16_bytes_per_point() -> None:
    w = build("stencil7", {"n": 1000})
    assert w.flop / 1000 == 13
    assert w.bytes_by_tier["dram"] / 1000 == 16
    assert w.flop / w.bytes_by_tier["dram"] == 0.8125


def test_saxpy_layernorm_softmax_counts() -> None:
    assert (
        build("saxpy", {"n": 10, "dtype": "fp32"}).bytes_by_tier["dram"] == 120
        and build("saxpy", {"n": 10}).flop == 20
    )
    assert (
        build("layernorm", {"d": 100, "dtype": "fp16", "unfused": True}).bytes_by_tier["dram"] == 7 * 100 * 2
    )
    assert build("layernorm", {"d": 100}).flop == 700
    assert build("softmax", {"d": 100, "tokens": 2}).bytes_by_tier["dram"] == 2 * 100 * 4 * 2
    assert build("softmax", {"d": 100, "unfused": True}).bytes_by_tier["dram"] == 6 * 100 * 4


def test_build_validates_parameters() -> None:
    assert build("dot", {"n": 4, "dtype": None, "unfused": False}).flop == 8
    with pytest.raises(UsageError, match="needs k"):
        build("gemm", {"m": 1, "n": 1})
    with pytest.raises(UsageError, match="does not take tile"):
        build("dot", {"n": 4, "tile": 2})
    with pytest.raises(UsageError, match="unknown workload"):
        build("conv", {})
    with pytest.raises(UsageError, match="unknown dtype"):
        build("dot", {"n": 4, "dtype": "fp4"})
    with pytest.raises(UsageError, match="dtype fp8 is for gemm only"):
        build("dot", {"n": 4, "dtype": "fp8"})
    with pytest.raises(UsageError, match="positive integer"):
        build("dot", {"n": 0})
