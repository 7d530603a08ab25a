"""A kernel whose work is integer tensor operations alone (no FLOPs) shows its operations per
second where the tables show a rate, never `0 FLOP/s` (which reads as nothing done): the H200's
IMMA GEMM (`fixtures/h200/`, hand count 2·4096³ = 137,438,953,472 INT8 operations) and the INT8
fixture, in the terminal, Markdown and HTML; FLOP work and integer work without tensor operations
keep FLOP/s."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from conftest import FIXTURES, analyzed, run_cli

from ncu_roof.analysis.frame import frame_of
from ncu_roof.analysis.groups import combined_figures, figure_numbers
from ncu_roof.render.headline import achieved_words, attainable_words, integer_ops_rate

RAW = FIXTURES / "h200" / "h200_full_raw.csv"
IMMA_OPS = 2 * 4096**3


def test_the_imma_gemm_shows_its_int8_operations_per_second() -> None:
    k = next(k for k in analyzed(RAW).kernels if k.name.startswith("wmma_gemm_s8"))
    assert k.ops["int8"] == IMMA_OPS and k.flop["total"] == 0.0
    assert k.duration_s is not None and k.pct_of_roof is not None
    rate, paths = integer_ops_rate(k, k.duration_s) or (0.0, "")
    assert rate == pytest.approx(IMMA_OPS / 3.48608e-3) and paths == "int8"  # 39.4 TOP/s
    assert achieved_words(k) == "39.4 TOP/s (int8)"
    # at its roof it would take pct_of_roof of its time: 22.08 % → 179 TOP/s
    assert attainable_words(k) == "179 TOP/s (int8)"


def test_flop_work_and_integer_work_without_tensor_ops_keep_flop_per_s() -> None:
    kernels = {k.name.split("(")[0]: k for k in analyzed(RAW).kernels}
    assert achieved_words(kernels["wmma_gemm_f16"]) == "27.7 TFLOP/s"
    reduce = kernels["reduce_sum_i32"]  # integer adds, no tensor operations: 0 FLOP is measured
    assert integer_ops_rate(reduce, reduce.duration_s) is None
    assert achieved_words(reduce) == "0 FLOP/s"


def test_a_group_sums_its_launches_operations() -> None:
    k = next(k for k in analyzed(RAW).kernels if k.name.startswith("wmma_gemm_s8"))
    twice = [k, replace(k, id=k.id + 1000)]
    figures = combined_figures(k, figure_numbers(frame_of(twice)), np.array([0, 1]))
    assert figures.ops["int8"] == 2 * IMMA_OPS and figures.ops["total"] == 2 * IMMA_OPS
    # twice the work in twice the time (the figures keep the lead launch's duration)
    assert k.duration_s is not None
    assert achieved_words(figures, 2 * k.duration_s) == "39.4 TOP/s (int8)"


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_no_table_shows_zero_flop_per_s_for_int8_work(fmt: str) -> None:
    done = run_cli("analyze", str(FIXTURES / "verdict_int8_gemm.csv"), "-F", fmt)
    assert done.returncode == 0, done.stderr
    # 4e10 INT8 operations in 50 µs
    assert "800 TOP/s (int8)" in done.stdout
    assert not re.search(r"(?<![\d.])0 FLOP/s", done.stdout)
