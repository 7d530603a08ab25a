"""The metric lists are the formulas' own: every name the recipe reads is wanted, every wanted name
is read (or is the launch's identity), and what `profile` collects for a part is read by that
part's formulas and enough for its numbers."""

from __future__ import annotations

import csv
import warnings
from itertools import islice
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import normalize
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.core import analyze
from ncu_roof.base import metrics
from ncu_roof.base.metrics import (
    COLLECT,
    FLOP_FORMS,
    FLOP_OPS,
    FORMULA_METRICS,
    FORMULA_PATTERNS,
    IDENTITY_METRICS,
    PACKED_OPS,
    WANTED,
    is_wanted,
    op_metric,
)
from ncu_roof.ingest import read_input
from ncu_roof.recipe import flop_weights
from ncu_roof.recipe.frame import (
    MetricFrame,
    codes_of,
    is_missing,
    join_gaps,
    max_present,
    prefixed,
    sum_present,
)

TENSOR = "sm__ops_path_tensor_src_fp16_dst_fp32.sum"
# names of the families the recipe finds by pattern: a tensor partition (count, rate, peak), pipes
FAMILY = (
    TENSOR,
    f"{TENSOR}.per_cycle_elapsed",
    f"{TENSOR}.peak_sustained",
    "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
)
# per part: the parts whose collected metrics it needs too (the report's shared roof is the data
# pipe's peak at the L1 clock, which the l1 part collects), and the normalized columns they give
NEEDS = {"shared": ("l1",)}
PART_COLUMNS = {
    "duration": ("duration_s", "sm_clock_hz"),
    "flop": ("flop_fp64", "flop_fp32", "flop_fp16", "peak_fp32_flop_per_s", "peak_fp16_flop_per_s"),
    "tensor": ("flop_tensor", "peak_tensor_flop_per_s"),
    "dram": ("dram_bytes", "bw_dram_byte_per_s"),
    "l2": ("l2_bytes", "bw_l2_byte_per_s"),
    "l1": ("l1_bytes", "bw_l1_byte_per_s"),
    "shared": ("shared_bytes", "bw_shared_byte_per_s"),
    "pipes": (
        "pipe_alu_pct",
        "pipe_fma_pct",
        "pipe_xu_pct",
        "pipe_lsu_pct",
        "pipe_fp64_pct",
        "tensor_pipe_pct",
    ),
    "instructions": ("warp_inst", "schedulers_per_sm", "sm_count"),
    "sol": ("sol_sm_pct", "sol_memory_pct", "sol_dram_pct", "sol_l2_pct", "sol_l1_pct", "waves_per_sm"),
}


def _frame(names: set[str]) -> pd.DataFrame:
    """Two launches of an A100 (cc 8.0) holding `names`, every value 2."""
    frame = pd.DataFrame({name: [2.0, 2.0] for name in sorted(names - {"device__attribute_display_name"})})
    for name, value in (
        ("device__attribute_compute_capability_major", 8.0),
        ("device__attribute_compute_capability_minor", 0.0),
    ):
        if name in frame.columns:
            frame[name] = value
    return frame


def _read_by_the_recipe(frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    read: set[str] = set()
    call = MetricFrame.__call__

    def recorded(self: MetricFrame, name: str) -> np.ndarray:
        read.add(name)
        return call(self, name)

    monkeypatch.setattr(MetricFrame, "__call__", recorded)
    normalize(frame)
    return read


def test_every_name_the_recipe_reads_is_wanted_and_every_wanted_name_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read = _read_by_the_recipe(_frame(set(WANTED) | set(FAMILY)), monkeypatch)
    assert {name for name in read if not is_wanted(name)} == set()
    assert WANTED - read == set(IDENTITY_METRICS)  # the identity is the readers', not a formula's
    assert set(FAMILY) <= read


def test_a_formula_cannot_read_an_undeclared_name() -> None:
    frame = MetricFrame(_frame({"dram__bytes.sum"}))
    assert frame("dram__bytes.sum").tolist() == [2.0, 2.0]
    assert np.isnan(frame("dram__bytes.sum.per_second")).all()  # declared, not in this report: n/a
    with pytest.raises(KeyError, match=r"not in metrics\.FORMULA_METRICS"):
        frame("dram__bytes_read_twice.sum")


def test_the_metric_frame_converts_a_column_once_and_its_arrays_refuse_writes() -> None:
    frame = MetricFrame(pd.DataFrame({"dram__bytes.sum": [1.0, 2.0], "lts__t_bytes.sum": ["3", "n/a"]}))
    counted = frame("dram__bytes.sum")
    assert frame("dram__bytes.sum") is counted
    assert frame("lts__t_bytes.sum")[0] == 3.0 and np.isnan(frame("lts__t_bytes.sum")[1])  # text: coerced
    for shared in (counted, frame("dram__bytes.sum.per_second")):  # a column, the one all-NaN array
        with pytest.raises(ValueError, match="read-only"):
            shared[0] = 0.0
    assert counted.tolist() == [1.0, 2.0]


def test_the_callers_arrays_stay_writable() -> None:
    """The metric frame's arrays refuse writes; the reader's columns they view do not."""
    given = np.array([1.0, 2.0])
    frame = MetricFrame({"dram__bytes.sum": given})
    with pytest.raises(ValueError, match="read-only"):
        frame("dram__bytes.sum")[0] = 0.0
    given[0] = 5.0
    assert given.flags.writeable and frame("dram__bytes.sum").tolist() == [5.0, 2.0]


def test_the_row_wise_helpers_skip_what_was_not_measured() -> None:
    nan = np.nan
    first, second = np.array([1.0, nan, nan, 4.0]), np.array([2.0, 3.0, nan, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no all-NaN or 0/0 warning reaches the user
        np.testing.assert_array_equal(sum_present([first, second], 4), [3.0, 3.0, nan, 3.0])
        np.testing.assert_array_equal(max_present([first, second], 4), [2.0, 3.0, nan, 4.0])
        assert np.isnan(sum_present([], 2)).all() and np.isnan(max_present([], 2)).all()
    gaps = np.array([None, "a", None, "a", nan], dtype=object)
    more = np.array([None, None, "b", "b", None], dtype=object)
    assert is_missing(gaps).tolist() == [True, False, True, False, True]
    assert join_gaps(gaps, more).tolist() == [None, "a", "b", "a,b", None]
    labels = prefixed("report:", np.array(["x", None, nan, "x"], dtype=object)).tolist()
    assert labels[0] == labels[3] == "report:x" and all(np.isnan(v) for v in labels[1:3])  # None too


@given(st.lists(st.sampled_from(["a", "b", "", None, np.nan, float("nan")]), max_size=30))
def test_codes_of_codes_labels_as_pandas_factorize(values: list[object]) -> None:
    """First seen first, -1 for None and NaN (every NaN object alike)."""
    labels = np.empty(len(values), dtype=object)
    labels[:] = values
    codes, distinct = codes_of(labels)
    expected, uniques = pd.factorize(labels, use_na_sentinel=True)
    assert codes.tolist() == expected.tolist()
    assert distinct == list(uniques)


def test_the_readers_keep_the_wanted_names_and_the_families_only() -> None:
    assert all(is_wanted(name) for name in (*WANTED, *FAMILY))
    assert not is_wanted("sm__sass_thread_inst_executed_op_fadd_pred_on.sum.peak_sustained")  # read by none
    assert not is_wanted("smsp__warps_launched.sum")


def test_each_part_collects_only_what_its_formulas_read() -> None:
    assert set(COLLECT) == set(FORMULA_METRICS) - {"device"}
    for part, names in COLLECT.items():
        for name in names:
            pattern = name.removeprefix("regex:")
            if pattern != name:  # ncu expands it: the partitions the tensor formulas find by name
                assert (
                    part == "tensor"
                    and metrics.TENSOR_COUNT.match(TENSOR)
                    and pattern == "sm__ops_path_tensor_.*"
                )
                continue
            by_name = any(p.match(name) for p in FORMULA_PATTERNS)
            assert name in FORMULA_METRICS[part] or by_name, (part, name)


@pytest.mark.parametrize("part", list(COLLECT))
def test_what_a_part_collects_is_enough_for_its_numbers(part: str) -> None:
    parts = ("duration", part, *NEEDS.get(part, ()))
    names = {n for p in parts for n in COLLECT[p] if not n.startswith("regex:")}
    if part == "tensor":  # the regex's expansion on an Ampere GPU
        names |= {TENSOR, f"{TENSOR}.peak_sustained"}
    norm = normalize(_frame(names))
    for column in PART_COLUMNS[part]:
        assert norm[column].notna().all(), (part, column)
    assert norm["duration_s"].tolist() == [2.0, 2.0]  # gpu__time_duration.sum itself


# A B200 (cc 10.0) launch of 200 us at 1.92 GHz = 384,000 cycles; FP32 thread instructions per
# cycle over the GPU's sub-partitions, scalar and Blackwell's packed FP32x2 (FADD2, FMUL2 = 2 FLOPs,
# FFMA2 = 4): the lanes busy, 256 + 128 + 2,048 + 2 x (64 + 32 + 1,024) = 4,672 of 148 SMs x 128.
B200_CLOCK_HZ, B200_DURATION_S, B200_CYCLES = 1.92e9, 200e-6, 384_000
B200_FP32_PER_CYCLE = {"fadd": 256, "fmul": 128, "ffma": 2048, "fadd2": 64, "fmul2": 32, "ffma2": 1024}
# by hand: (256 + 128 + 2 x 2,048) + (2 x 64 + 2 x 32 + 4 x 1,024) = 4,480 + 4,288 = 8,768 FLOP/cycle
B200_FP32_FLOP = 8_768 * B200_CYCLES  # 3,366,912,000
B200_SCALAR_FLOP = 4_480 * B200_CYCLES  # 1,720,320,000: the packed terms dropped
SCALAR = "fadd+fmul+2*ffma"
WITH_PACKED = "fadd+fmul+2*ffma+2*fadd2+2*fmul2+4*ffma2"


def _b200(form: str, ops: tuple[str, ...] = tuple(B200_FP32_PER_CYCLE)) -> pd.DataFrame:
    """The B200 launch's FP32 instructions as counters per SM or sub-partition, or as rates."""
    if form == "rate":
        frame: dict[str, float] = {
            op_metric("smsp", op, ".sum.per_cycle_elapsed"): B200_FP32_PER_CYCLE[op] for op in ops
        }
        frame |= {metrics.CLOCKS["smsp"]: B200_CLOCK_HZ, metrics.DURATION: B200_DURATION_S}
    else:
        frame = {op_metric(form, op): B200_FP32_PER_CYCLE[op] * B200_CYCLES for op in ops}
    return pd.DataFrame({name: [float(value)] for name, value in frame.items()})


@pytest.mark.parametrize(("form", "source"), [("sm", "counter"), ("smsp", "counter"), ("rate", "rate*time")])
def test_packed_fp32_counts_the_same_by_counter_and_by_rate(form: str, source: str) -> None:
    out = normalize(_b200(form)).iloc[0]
    assert out["flop_fp32"] == pytest.approx(B200_FP32_FLOP, rel=1e-12)
    assert out["flop_fp32_recipe"] == f"{source}:{WITH_PACKED}"
    assert out["flop_fp32_not_collected"] is None


@pytest.mark.parametrize(("form", "source"), [("sm", "counter"), ("rate", "rate*time")])
def test_a_report_without_packed_counters_has_no_gap(form: str, source: str) -> None:
    # every report before Blackwell: the scalar formula, its label, nothing "not collected"
    out = normalize(_b200(form, FLOP_OPS["fp32"])).iloc[0]
    assert out["flop_fp32"] == pytest.approx(B200_SCALAR_FLOP, rel=1e-12)
    assert out["flop_fp32_recipe"] == f"{source}:{SCALAR}"
    assert out["flop_fp32_not_collected"] is None


@pytest.mark.parametrize(
    ("ops", "flop_per_cycle", "gaps"),
    [
        (("fadd", "fmul", "ffma", "ffma2"), 4_480 + 4 * 1_024, "fadd2,fmul2"),
        (PACKED_OPS["fp32"], 4_288, "fadd,fmul,ffma"),
    ],
)
def test_a_term_not_collected_is_named(ops: tuple[str, ...], flop_per_cycle: int, gaps: str) -> None:
    out = normalize(_b200("rate", ops)).iloc[0]
    assert out["flop_fp32"] == pytest.approx(flop_per_cycle * B200_CYCLES, rel=1e-12)
    assert out["flop_fp32_not_collected"] == gaps
    assert out["flop_fp32_recipe"] == f"rate*time:{WITH_PACKED} (not collected: {gaps})"


def test_the_one_weight_table_is_nsights() -> None:
    # FLOPs per thread instruction: FMA 2, FP16 all packed (x 2), FP32x2 two lanes (FFMA2 = 4)
    assert flop_weights("fp32") == (
        {"fadd": 1, "fmul": 1, "ffma": 2},
        {"fadd2": 2, "fmul2": 2, "ffma2": 4},
    )
    assert flop_weights("fp16") == ({"hadd": 2, "hmul": 2, "hfma": 4}, {})
    assert flop_weights("fp64") == ({"dadd": 1, "dmul": 1, "dfma": 2}, {})


def test_the_packed_ops_are_declared_in_every_form_of_the_scalar_ops() -> None:
    for precision, ops in FLOP_OPS.items():
        for op in (*ops, *PACKED_OPS.get(precision, ())):
            for kind, rollup in FLOP_FORMS:
                assert op_metric(kind, op, rollup) in FORMULA_METRICS["flop"], (op, kind, rollup)


def test_a_b200_raw_csv_keeps_the_packed_rates(tmp_path: Path, fixtures: Path) -> None:
    # the raw page as ncu writes it (header, units, one launch): a fixture's identity columns, then
    # the B200's device name, FP32 rates, clock and duration in base units
    with (fixtures / "raw_base.csv").open(newline="") as source:
        header, units, launch = (row[:11] for row in islice(csv.reader(source), 3))
    rates = {op_metric("smsp", op, ".sum.per_cycle_elapsed"): v for op, v in B200_FP32_PER_CYCLE.items()}
    header += ["device__attribute_display_name", *rates, metrics.CLOCKS["smsp"], metrics.DURATION]
    units += ["", *("inst/cycle" for _ in rates), "cycle/second", "nsecond"]
    launch += ["NVIDIA B200", *(str(v) for v in rates.values()), "1920000000", "200000"]
    path = tmp_path / "b200_raw.csv"
    with path.open("w", newline="") as out:
        csv.writer(out, quoting=csv.QUOTE_ALL).writerows([header, units, launch])
    kernel = analyze([read_input(str(path))]).kernels[0]
    assert kernel.flop["fp32"] == pytest.approx(B200_FP32_FLOP, rel=1e-12)
