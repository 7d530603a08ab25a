"""Ceilings named by what set them: a pipe ceiling by its pipe (not a precision its FLOPs do not
explain), the integer MMA pipe as integer work, pipe percentages over the elapsed cycles, no
tensor roof on a GPU without tensor cores, a lone DRAM read or write counter as DRAM traffic (a
lower bound), the SOL labels of older details pages, and zero-FLOP launches without FLOP/s caps."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import analyzed

from ncu_roof.analysis.frame import frame_of
from ncu_roof.analysis.verdict_phrases import verdict_words
from ncu_roof.base.vocabulary import Bound, VerdictBasis

# fixtures/ceiling_pipes.csv: an H100 PCIe at 1 GHz, every launch 100 us (100,000 SM cycles),
# FP32 roof 2 x 16384 FFMA/cycle = 32.768 TFLOP/s, DRAM 1000 B/cycle x 2 GHz = 2 TB/s.
PIPES = "ceiling_pipes.csv"


def test_an_fma_pipe_busy_with_integer_math_is_named_by_its_pipe_not_fp32(fixtures: Path) -> None:
    k = analyzed(fixtures / PIPES).kernels[0]
    # 1e6 FADD at 32.768 TFLOP/s = 0.03 us (0.03 % of 100 us) cannot explain fmaheavy 47.7 %
    # busy: IMADs are (as the A40 julia kernel of the corpus has them)
    assert k.flop["fp32"] == 1e6
    assert k.compute_ceiling == "pipe:fmaheavy" and k.compute_ceiling_pct == pytest.approx(47.7)
    assert k.binding == "compute" and verdict_words(frame_of([k]))[0] == "compute-bound (fmaheavy pipe 48%)"


def test_the_integer_mma_pipe_is_not_floating_point(fixtures: Path) -> None:
    k = analyzed(fixtures / PIPES).kernels[1]
    # tensor_op_imma 80 % busy: INT8 MMA operations, not the 1e6 FP32 FLOPs
    assert k.compute_ceiling == "pipe:tensor_op_imma" and k.compute_ceiling_pct == pytest.approx(80.0)
    assert verdict_words(frame_of([k]))[0] == "compute-bound (tensor_op_imma pipe 80%)"


def test_a_pipe_figure_of_active_cycles_is_scaled_to_the_elapsed_ones(fixtures: Path) -> None:
    k = analyzed(fixtures / PIPES).kernels[2]
    # one block: ALU 90 % of its SM's active cycles, the average SM active 1,000 of 100,000
    # elapsed cycles: 0.9 % of the elapsed cycles; DRAM 2 MB / 2 TB/s = 1 us (1 %) binds
    assert k.pipe_pct == pytest.approx({"alu": 0.9})
    assert k.binding == "dram" and k.pct_of_roof == pytest.approx(1.0)
    assert k.bound is Bound.MEMORY  # not "compute-bound, 90 % of roof"
    # without sm__cycles_active the figure cannot be put over the elapsed cycles: it is left out
    alone = analyzed(fixtures / PIPES).kernels[3]
    assert alone.pipe_pct == {} and alone.binding == "dram"


def test_a_gtx_16_gets_no_tensor_roof(fixtures: Path) -> None:
    # TU116 shares CC 7.5 with the T4's TU104, but has no tensor cores
    (device,) = analyzed(fixtures / "gtx1660_no_tensor_cores.csv").devices
    assert "tensor" not in device.roofs.compute_flop_per_s
    # FP32 128 FLOP/SM/clk x 22 SMs x the measured 1.71 GHz = 4.815 TFLOP/s
    assert device.roofs.compute_flop_per_s["fp32"] == pytest.approx(128 * 22 * 1.71e9, rel=1e-12)


def test_a_lone_dram_read_counter_is_dram_traffic_and_a_lower_bound(fixtures: Path) -> None:
    (k,) = analyzed(fixtures / "details_old_sol_labels.csv").kernels
    assert k.bytes["dram"] == 160e6
    assert k.recipe["dram_bytes"] == "counter:dram__bytes_read.sum (write not collected: a lower bound)"
    assert (
        "DRAM bytes from counter:dram__bytes_read.sum alone (write not collected: a lower bound)" in k.notes
    )


def test_the_sol_labels_of_an_old_details_page_are_read(fixtures: Path) -> None:
    (k,) = analyzed(fixtures / "details_old_sol_labels.csv").kernels
    # "SM [%]" 62.5 and "Memory [%]" 31.2: 31.3 points apart, SM over 60 % → compute (Nsight's rule)
    assert k.sol_pct["sm"] == 62.5 and k.sol_pct["memory"] == 31.2
    assert k.verdict_basis is VerdictBasis.SOL and k.bound is Bound.COMPUTE


def test_a_zero_flop_launch_has_no_flop_caps_and_a_binding_by_time(fixtures: Path) -> None:
    k = analyzed(fixtures / "verdict_int_reduction.csv").kernels[0]
    # no FLOPs: every FLOP/s cap is undefined (not 0 at the tiers and the peak at compute);
    # the ALU pipe's 76 us of 100 us binds, over DRAM's 24 MB / 2 TB/s = 12 us
    assert k.flop["total"] == 0.0
    assert k.cap_flop_per_s == {} and k.attainable_flop_per_s is None
    assert k.binding == "compute" and k.pct_of_roof == pytest.approx(76.0)


@pytest.mark.corpus
def test_the_corpus_a40_fma_pipe_is_named_by_its_pipe(corpus: Path) -> None:
    k = analyzed(corpus / "a40_rep_2022.4.0_indexspaces.ncu-rep").kernels[4]
    # julia_frb: 6.18 MFLOP fp32 in 4.28 ms is 0.007 % of the fp32 roof; fmaheavy is 47.7 % busy
    assert k.compute_ceiling == "pipe:fmaheavy" and k.compute_ceiling_pct == pytest.approx(47.72, abs=0.01)


@pytest.mark.corpus
def test_the_corpus_gtx_1660_super_has_no_tensor_roof(corpus: Path) -> None:
    (device,) = analyzed(corpus / "gtx1660s_rep_2021.1_raytracer.ncu-rep").devices
    assert "tensor" not in device.roofs.compute_flop_per_s and "fp32" in device.roofs.compute_flop_per_s
