"""The classic hierarchical-roofline CSVs (the NERSC method: `dram__bytes`, `lts__t_bytes`,
`l1tex__t_bytes`, FLOP and tensor-pipe counters; details pages that name no GPU) are judged on the
roofline with the verdicts a hand computation gives. Every number below is a cell of the corpus
file; the roofs are the built-in figures of the GPU inferred from the file's CC column."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import analyzed

from ncu_roof.analysis.records import Kernel
from ncu_roof.base.vocabulary import Bound, VerdictBasis

pytestmark = pytest.mark.corpus


def _kernels(corpus: Path, name: str) -> dict[int, Kernel]:
    return {k.id: k for k in analyzed(corpus / name).kernels}


def test_v100_cutlass_gemms(corpus: Path) -> None:
    # v100_details_nersc-roofline_cutlass-gemm_app-stdout.csv: CC 7.0 and no device name: the
    # V100 PCIe (V100 SXM2 has the same 80 SMs and 4096-bit bus). No DRAM clock in the file: DRAM
    # at boost, 1024 B/clk (4096 / 4) x 0.879 GHz = 900 GB/s; everything else at the launch's SM
    # clock (sm__cycles_elapsed.avg.per_second; no L2 clock either: L2 at the SM clock).
    kernels = _kernels(corpus, "v100_details_nersc-roofline_cutlass-gemm_app-stdout.csv")
    dram_bw = 900e9

    # kernel 10, cutlass_70_tensorop_s884gemm: 224,198,002.15 cycles / 1,236,080,147.79 cycle/s
    clock = 1236080147.79
    duration = 224198002.15 / clock  # 0.18138 s
    tensor = 33554432000 * 512  # sm__inst_executed_pipe_tensor.sum x 512 (V100 HMMA) = 1.718e13
    fp32 = 419430400  # fmul
    compute_s = tensor / (80 * 1024 * clock) + fp32 / (80 * 128 * clock)  # 0.16969 s at 101 TFLOP/s
    dram_s = 25174959968 / dram_bw  # 0.02797 s
    l2_s = 267257596064 / (64 * 32 * clock)  # 64 slices x 1 sector x 32 B: 2.53 TB/s -> 0.10557 s
    l1_s = 265518525824 / (80 * 128 * clock)  # 80 SMs x 4 sectors x 32 B: 12.7 TB/s -> 0.02098 s
    assert compute_s > max(dram_s, l2_s, l1_s)  # compute-bound (tensor), 93.6 % of its roof
    k10 = kernels[10]
    # the app's GEMM: 20480 x 20480 matrices (InitializeMatrix's grid 1280 x 16), 2 x 20480^3 FLOP
    assert k10.flop["tensor"] == tensor == 2 * 20480**3
    assert k10.verdict_basis is VerdictBasis.ROOFLINE
    assert k10.bound is Bound.COMPUTE and k10.compute_precision == "tensor"
    assert k10.duration_s == pytest.approx(duration, rel=1e-9)
    assert k10.pct_of_roof == pytest.approx(100 * compute_s / duration, rel=1e-6)
    assert round(100 * compute_s / duration, 1) == 93.6

    # kernel 4, cutlass::gemm::kernel::Gemm (the same GEMM, another tile): 582,304,151.08 cycles
    # at 1,233,398,550.71 cycle/s = 0.47211 s
    clock = 1233398550.71
    duration = 582304151.08 / clock
    compute_s = tensor / (80 * 1024 * clock) + (2126643200 + 419430400) / (80 * 128 * clock)  # 0.17023 s
    dram_s = 205394417472 / dram_bw  # 0.22822 s
    l2_s = 261302488576 / (64 * 32 * clock)  # 0.10344 s
    l1_s = 264690975936 / (80 * 128 * clock)  # 0.02096 s
    assert dram_s > max(compute_s, l2_s, l1_s)  # memory-bound at DRAM, 48.3 % of its roof
    for j in range(4, 10):  # the six launches of that GEMM
        k = kernels[j]
        assert k.verdict_basis is VerdictBasis.ROOFLINE
        assert k.bound is Bound.MEMORY and k.binding == "dram"
    assert kernels[4].pct_of_roof == pytest.approx(100 * dram_s / duration, rel=1e-6)
    assert round(100 * dram_s / duration, 1) == 48.3

    # kernels 0-3, InitializeMatrix: no FLOPs, 0.84 GB (half) and 1.68 GB (float) of DRAM
    # writes in 3,530,235.80 / 1,235,108,248.43 = 2.858 ms: memory-bound at DRAM
    duration = 3530235.80 / 1235108248.43
    assert kernels[0].binding == "dram"
    assert kernels[0].pct_of_roof == pytest.approx(100 * 837859712 / dram_bw / duration, rel=1e-6)


def test_a100_cutlass_gemms_without_flop_counters(corpus: Path) -> None:
    # a100_details_nersc-roofline-partial_cutlass-gemm.csv: CC 8.0, no device name: the A100 PCIe
    # 40GB (first of the four 108-SM, 5120-bit A100s). Only 6 of the NERSC metrics: no FP32/FP64/
    # FP16 counters and no sm__ops_path_tensor_*: the tensor pipe's instructions alone. Both GEMMs
    # multiply the same 20480 x 20480 matrices (InitializeMatrix's grid 1280 x 16), 2 x 20480^3 =
    # 17,179,869,184,000 FLOP, in 8,388,608,000 instructions (kernel 4, CUTLASS: 2048 each,
    # HMMA.1688) and 4,194,304,000 (kernel 10, cuBLAS ampere_s16816gemm: 4096 each, HMMA.16816):
    # no one factor on CC 8.0, so the tensor FLOPs are unknown (x 512 would be 4x and 8x low),
    # said, and no roof binds. The SM clock was 765 MHz; DRAM at boost: 1280 B/clk x 1.215 GHz.
    kernels = _kernels(corpus, "a100_details_nersc-roofline-partial_cutlass-gemm.csv")
    assert 2 * 20480**3 == 8388608000 * 2048 == 4194304000 * 4096
    dram_bw = 1555e9
    for j in (4, 10):
        k = kernels[j]
        assert k.flop["tensor"] is None and k.flop["total"] is None
        assert k.verdict_basis is VerdictBasis.NONE
        assert any(n.startswith("tensor FLOPs unknown: ") and "not known on CC 8.0" in n for n in k.notes)

    # kernel 4: 100,747,804.11 cycles / 764,999,418.90 cycle/s = 0.13170 s; its busiest tier is
    # DRAM at 147,469,918,080 B / 0.13170 s / 1555 GB/s = 72.0 % of its bandwidth
    duration = 100747804.11 / 764999418.90
    dram_pct = 100 * 147469918080 / duration / dram_bw
    assert round(dram_pct, 1) == 72.0
    assert f"its busiest tier, dram, ran at {dram_pct:.0f}% of its bandwidth" in " ".join(kernels[4].notes)

    # kernel 10: 81,835,957.76 cycles / 764,999,572.23 = 0.10698 s; L2 at 250,820,640,576 B over
    # 80 slices x 3 sectors x 32 B x 765 MHz (5.88 TB/s): 39.9 %
    clock = 764999572.23
    duration = 81835957.76 / clock
    l2_pct = 100 * 250820640576 / duration / (80 * 3 * 32 * clock)
    assert round(l2_pct, 1) == 39.9
    assert f"its busiest tier, l2, ran at {l2_pct:.0f}% of its bandwidth" in " ".join(kernels[10].notes)
