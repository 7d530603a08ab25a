"""Roofs at the clock the kernel ran, from the report, the built-in table or the device attributes."""

from __future__ import annotations

import json
import math
import re
import statistics
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import analyzed, normalized, read_once, run_cli
from hypothesis import example, given
from hypothesis import strategies as st

from ncu_roof.analysis.core import Analysis, analyze
from ncu_roof.base.vocabulary import Bound, RoofChoice, TrafficDefinition
from ncu_roof.errors import UsageError
from ncu_roof.gpus.arch import arch_for, archs
from ncu_roof.gpus.lookup import builtin_gpus, gpu_by_key, match_gpu, normalize_name
from ncu_roof.gpus.roofs import device_hardware, fill_builtin, ghz_text, median
from ncu_roof.recipe import normalize_columns


def _analyze(path: Path, choice: RoofChoice = RoofChoice()) -> Analysis:
    """The analysis of one input (with the default roofs: the session's shared one)."""
    return analyzed(path) if choice == RoofChoice() else analyze([read_once(path)], choice)


# --- hand-checked against real reports --------------------------------------------------------


def test_t4_at_its_locked_clock_keeps_the_hardware_fp16_to_fp32_ratio(corpus: Path) -> None:
    # t4_rep_full-2024.2.1_mlp.ncu-rep ran at sm__cycles_elapsed.avg.per_second = 0.5405 GHz:
    # fp32 = 2 x ffma peak_sustained 2560 x 0.5405 GHz = 2.77 TFLOP/s (the report's own roof).
    # The report has no hfma peak: the built-in T4 figure, 256 FLOP/SM/clk x 40 SMs, is taken at
    # the same measured clock (5.54 TFLOP/s), not the datasheet's 16.2 TFLOP/s at 1.59 GHz boost.
    clock = 540543213.633597
    device = _analyze(corpus / "t4_rep_full-2024.2.1_mlp.ncu-rep").devices[0]
    peaks = device.roofs.compute_flop_per_s
    assert peaks["fp32"] == pytest.approx(2 * 2560 * clock, rel=1e-9)
    assert peaks["fp16"] == pytest.approx(256 * 40 * clock, rel=1e-9)
    assert peaks["fp16"] / peaks["fp32"] == pytest.approx(16.2 / 8.1, rel=1e-3)  # the T4 datasheet's 2:1
    assert peaks["tensor"] == pytest.approx(1024 * 40 * clock, rel=1e-9)
    assert device.roofs.sources["fp16"].startswith("builtin:t4 (256 FLOP/SM/clk x 40 SMs")
    assert "at measured 0.541 GHz" in device.roofs.sources["fp16"]
    assert device.roofs.sources["fp32"].startswith("report:")
    assert "at measured 0.541 GHz" in device.roofs.sources["fp32"]


def test_h100_shared_and_l1_are_one_sram_at_one_clock(corpus: Path) -> None:
    # h100pcie_rep_2025.1_full_silu.ncu-rep at 1.100 GHz: L1 = l1tex__lsu_writeback_active_mem_lgds
    # peak 114 cycles/clk x 128 B x l1tex clock; shared = its data pipe's peak, from
    # l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed: both 16.05 TB/s.
    clock = 1100023859.8068736
    path = corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep"
    bands = _analyze(path).devices[0].roofs.bandwidth_byte_per_s
    assert bands["l1"] == pytest.approx(114 * 128 * clock, rel=1e-6)
    assert bands["shared"] == pytest.approx(bands["l1"], rel=1e-6)
    # --gpu h100-pcie: its built-in figures at the same measured clocks, not 25.6 TB/s at boost
    builtin = _analyze(path, RoofChoice(gpu_key="h100-pcie")).devices[0].roofs
    assert builtin.source == "builtin:h100-pcie"
    assert builtin.bandwidth_byte_per_s["shared"] == pytest.approx(114 * 128 * clock, rel=1e-6)
    assert builtin.compute_flop_per_s["fp32"] == pytest.approx(256 * 114 * clock, rel=1e-6)
    assert "at measured 1.10 GHz" in builtin.sources["shared"]


def test_h100_silu_l2_and_l1_are_what_nsight_draws(corpus: Path) -> None:
    # the figures: L2 used 17 % of its lts2xbar roof (Nsight), not 51 %; L1 intensity 4.2
    kernel = _analyze(corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep").kernels[0]
    device = _analyze(corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep").devices[0]
    l2_rate = kernel.achieved_byte_per_s["l2"]
    assert l2_rate is not None
    assert 100 * l2_rate / device.roofs.bandwidth_byte_per_s["l2"] == pytest.approx(16.88, abs=0.05)
    # Nsight's single-precision chart plots fp32 FLOPs over L1 traffic: 4.2 FLOP/B; the kernel's
    # intensity counts its fp16 (HFMA) FLOPs too: 5.0 FLOP/B
    fp32, l1 = kernel.flop["fp32"], kernel.bytes["l1"]
    assert fp32 is not None and l1 is not None
    assert fp32 / l1 == pytest.approx(4.2, rel=1e-3)
    assert kernel.intensity_flop_per_byte["l1"] == pytest.approx(5.0, rel=1e-3)
    assert kernel.traffic["l2"]["definition"] == "nsight"
    assert kernel.traffic["l2"]["recipe"] == "rate*time:lts__lts2xbar_cycles_active.sum.per_second*32"
    # counted: all L2 lookups at 34 % of lts__t_sectors' own peak (its pct_of_peak_sustained_elapsed)
    counted = _analyze(
        corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep", RoofChoice(traffic=TrafficDefinition.COUNTED)
    )
    rate = counted.kernels[0].achieved_byte_per_s["l2"]
    assert rate is not None
    assert 100 * rate / counted.devices[0].roofs.bandwidth_byte_per_s["l2"] == pytest.approx(34.28, abs=0.05)
    assert counted.kernels[0].traffic["l2"]["definition"] == "counted"
    assert counted.extra["traffic_definition"] == "counted"


def test_filling_builtin_roofs_leaves_the_given_columns_as_they_were(corpus: Path) -> None:
    # the T4 report lacks an FP16 roof: it is filled (256 FLOP/SM/clk x 40 SMs at the measured
    # clock) into new arrays; the columns given (read-only, as shared ones may be) stay as they were
    clock = 540543213.633597
    frame = normalized(corpus / "t4_rep_full-2024.2.1_mlp.ncu-rep")
    given = {str(c): frame[c].to_numpy(copy=True) for c in frame.columns}
    for values in given.values():
        values.setflags(write=False)
    before = {c: a.copy() for c, a in given.items()}
    filled = fill_builtin(given, device_hardware(given, "Tesla T4"))
    assert np.isnan(given["peak_fp16_flop_per_s"]).all()
    assert filled["peak_fp16_flop_per_s"] == pytest.approx([256 * 40 * clock] * len(frame), rel=1e-9)
    assert filled["peak_fp16_flop_per_s_recipe"][0].startswith("builtin:t4 (256 FLOP/SM/clk x 40 SMs")
    assert filled["peak_fp16_flop_per_s_at_boost"].tolist() == [False] * len(frame)
    assert "peak_fp16_flop_per_s_clock_hz" in filled and "peak_fp16_flop_per_s_clock_hz" not in given
    assert set(given) == set(before)
    for column, values in before.items():
        if values.dtype.kind == "f":
            assert np.array_equal(given[column], values, equal_nan=True), column
        else:  # labels and flags: the very objects (a NaN label equals itself)
            assert given[column].tolist() == values.tolist(), column


# --- hand-written fixtures ---------------------------------------------------------------------


def test_gpus_outside_the_table_get_roofs_from_their_device_attributes(fixtures: Path) -> None:
    # device 0: NVIDIA A30 (CC 8.0, 56 SMs, 3072-bit bus), measured 1.2 GHz SM and DRAM clocks;
    # device 1: GeForce RTX 3080 (CC 8.6, 68 SMs, 1.71 GHz, 320-bit at 9.501 GHz), no clocks
    analysis = _analyze(fixtures / "device_attributes_a30_rtx3080.csv")
    a30, rtx3080 = (d.roofs for d in analysis.devices)
    assert match_gpu("NVIDIA A30") is None and match_gpu("NVIDIA GeForce RTX 3080") is None
    assert a30.source == rtx3080.source == "device attributes"
    assert a30.compute_flop_per_s["fp32"] == pytest.approx(128 * 56 * 1.2e9)
    assert a30.compute_flop_per_s["fp64"] == pytest.approx(64 * 56 * 1.2e9)
    assert a30.bandwidth_byte_per_s["dram"] == pytest.approx(3072 / 4 * 1.2e9)
    assert "at measured 1.20 GHz" in a30.sources["dram"]
    # at boost they are the datasheets' figures: RTX 3080 29.8 TFLOP/s FP32, 760 GB/s
    assert rtx3080.compute_flop_per_s["fp32"] == pytest.approx(29.77e12, rel=1e-3)
    assert rtx3080.bandwidth_byte_per_s["dram"] == pytest.approx(760.08e9, rel=1e-6)
    assert "at boost 9.501 GHz" in rtx3080.sources["dram"]
    # 2 GFLOP and 0.5 GB in 1 ms on the A30: DRAM binds, 0.5 GB / 921.6 GB/s = 54 % of the time
    kernel = analysis.kernels[0]
    assert kernel.bound is Bound.MEMORY and kernel.binding == "dram"
    assert kernel.pct_of_roof == pytest.approx(100 * 0.5e9 / 921.6e9 / 1e-3)


def test_l1_traffic_without_an_l1_roof_in_the_report_gets_its_counters_builtin_roof(fixtures: Path) -> None:
    # naive SGEMM on an A10G: 2.15 GFLOP, 5.37 GB through L1 (0.4 FLOP/B) in 10.78 ms, no L1 peak
    # in the report. The roof of l1tex__t_bytes from the table: 80 SMs x 4 sectors x 32 B x the
    # 1.71 GHz SM clock = 17.51 TB/s (unverified) -> 5.37 GB take 0.307 ms; FP32 2.15 GFLOP at
    # 80 x 256 x 1.71 GHz = 35.0 TFLOP/s take 0.061 ms; DRAM 32.7 MB at 600 GB/s 0.055 ms: L1 binds.
    kernel = _analyze(fixtures / "naive_sgemm_l1_without_roof.csv").kernels[0]
    assert kernel.intensity_flop_per_byte["l1"] == pytest.approx(0.4, rel=1e-3)
    assert kernel.bound is Bound.MEMORY and kernel.binding == "l1"
    assert kernel.traffic["l1"]["roof"].startswith("builtin:a10g (l1tex__t_bytes.sum: 4/SM/clk")
    assert "(unverified)" in kernel.traffic["l1"]["roof"]
    l1_s = 5370806272 / (80 * 128 * 1.71e9)
    assert kernel.pct_of_roof == pytest.approx(100 * l1_s / 10776576e-9, rel=1e-3)


# --- the table ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("display_name", "key"),
    [
        ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"),
        ("A100-SXM4-40GB", "a100-sxm4-40gb"),  # drivers before 450 wrote no "NVIDIA "
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("Tesla V100-SXM2-16GB", "v100-sxm2"),
        ("Tesla V100-PCIE-32GB", "v100-pcie"),
        ("Tesla T4", "t4"),
        ("NVIDIA A10", "a10"),
        ("NVIDIA A10G", "a10g"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm5"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA H800", "h800"),
        ("NVIDIA H200", "h200"),
        ("NVIDIA GH200 480GB", "gh200"),
        ("NVIDIA GH200 120GB", "gh200"),
        ("NVIDIA GeForce RTX 4090", "rtx4090"),
        ("GeForce RTX 3070", "rtx3070"),
    ],
)
def test_device_names_across_driver_eras(display_name: str, key: str) -> None:
    gpu = match_gpu(display_name)
    assert gpu is not None and gpu.key == key
    assert gpu_by_key(display_name) is gpu  # --gpu accepts ncu's own names


@pytest.mark.parametrize(
    "display_name",
    ["NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA GeForce RTX 4070 Ti SUPER", "NVIDIA A30", "NVIDIA GH100"],
)
def test_other_products_never_take_a_neighbours_row(display_name: str) -> None:
    assert match_gpu(display_name) is None


def test_keys_are_case_insensitive_and_typos_get_suggestions() -> None:
    assert gpu_by_key("A100-SXM4").key == "a100-sxm4"
    with pytest.raises(UsageError) as err:
        gpu_by_key("h100-pcei")
    assert err.value.hint is not None and "did you mean h100-pcie" in err.value.hint


def test_names_normalize_to_one_spelling() -> None:
    assert normalize_name("NVIDIA  Tesla V100-SXM2-16GB") == "v100 sxm2 16gb"
    assert all(normalize_name(n) == n for g in builtin_gpus().values() for n in g.names)


def test_per_clock_figures_reproduce_the_datasheets_at_boost() -> None:
    # arch FLOP/SM/clk x SMs x boost = the datasheet peak within 2 % for every product whose
    # architecture figures are confirmed (Hopper's tensor figures are quoted at a lower clock than
    # boost: 989 TFLOP/s = 4096 x 132 x 1.83 GHz)
    for gpu in builtin_gpus().values():
        hardware = gpu.hardware()
        arch = hardware.arch
        assert arch is not None, gpu.key
        for precision, datasheet in gpu.compute_flop_per_s.items():
            if precision in (*arch.unverified, *gpu.overrides) or (
                arch.cc == "9.0" and precision == "tensor"
            ):
                continue
            per_clock, how = hardware.per_clock()[precision]
            assert how.startswith(
                f"{per_clock / gpu.sm_count:g} FLOP/SM/clk x {gpu.sm_count} SMs, CC {arch.cc}"
            )
            boost = hardware.boost_clock_hz
            assert boost is not None
            assert per_clock * boost == pytest.approx(datasheet, rel=0.02), (gpu.key, precision)
        dram = hardware.counter_per_clock("dram__bytes.sum")
        assert dram is not None and dram[1] == "dram"
        assert dram[0] * (hardware.dram_boost_clock_hz or 0) == pytest.approx(
            gpu.bandwidth_byte_per_s["dram"]
        )


def test_every_compute_capability_since_volta_has_figures() -> None:
    for cc in ("7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"):
        arch = arch_for(cc)
        assert arch is not None and "fp32" in arch.flop_per_sm_per_clk, cc
    assert arch_for("10.3") is not None and "fp32" in arch_for("10.3").unverified  # type: ignore[union-attr]
    assert {a.cc for a in archs().values()} >= {"7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"}
    # one table: every architecture also has its issue slots and XU rate; an assumed revision
    # marks them unverified as well
    assert {a.schedulers_per_sm.per_sm_per_clock for a in archs().values()} == {4}
    assert {a.xu_ops.per_sm_per_clock for a in archs().values()} == {16}
    assumed = arch_for("9.9")
    assert assumed is not None and assumed.cc == "9.9" and not assumed.xu_ops.verified
    assert assumed.int8_tensor_ops is not None and assumed.int8_tensor_ops.per_sm_per_clock == 8192
    assert not assumed.int8_tensor_ops.verified and not assumed.tensor_paths["fp8"].verified


def test_clock_text() -> None:
    assert (ghz_text(1.1e9), ghz_text(1.755e9), ghz_text(540543213.6)) == ("1.10", "1.755", "0.541")


def test_gpu_other_than_the_reports_device_warns_on_stderr() -> None:
    # the example holds an H100 PCIe run and an A10G run: --gpu h100-pcie names only the first
    done = run_cli("analyze", "--example", "--gpu", "H100-PCIE", "--format", "json")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: --gpu")]
    assert warnings == [
        "warning: --gpu H100-PCIE (H100 PCIe) is not the report's device 'NVIDIA A10G'; "
        "its built-in figures are used at the measured clocks"
    ]


def test_traffic_option_reaches_the_json() -> None:
    done = run_cli("analyze", "--example", "--traffic", "counted", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["traffic_definition"] == "counted"
    traffic = data["kernels"][0]["traffic"]
    assert traffic["dram"]["definition"] == "counted"
    # the example keeps every L2 lookup (lts__t_sectors), judged against its own peak
    assert traffic["l2"]["definition"] == "counted"
    assert traffic["l2"]["recipe"].startswith("counter:lts__t_sectors.sum*32")
    assert run_cli("analyze", "--example", "--traffic", "nvprof").returncode == 2


_FAMILY = [  # (pattern in a bytes or roof formula, the counter it is)
    (r"dram__(bytes|sectors)", "dram__bytes"),
    (r"lts__lts2xbar_cycles_active|derived__lts__lts2xbar_bytes", "lts2xbar"),
    (r"lts__t_(bytes|sectors)\.", "lts__t"),
    (r"l1tex__m_xbar2l1tex_read_bytes", "xbar2l1tex"),
    (
        r"l1tex__lsu_writeback_active(_mem_lgds|_mem_lg)?\.|derived__l1tex__lsu_writeback_bytes(_mem_lgds|_mem_lg)?\.",
        "wb",
    ),
    (r"l1tex__t_(bytes|sectors)", "l1tex__t"),
    (r"l1tex__data_pipe_lsu_wavefronts_mem_shared", "shared pipe"),
    (r"sm__sass_data_bytes_mem_shared", "shared data"),
]


def _family(formula: str) -> str:
    for pattern, family in _FAMILY:
        match = re.search(pattern, formula)
        if match:
            scope = (
                next((g for g in match.groups() if g and g.startswith("_mem")), "") if family == "wb" else ""
            )
            return family + scope
    raise AssertionError(f"no counter family for {formula!r}")


@pytest.mark.parametrize("traffic", list(TrafficDefinition))
def test_no_tier_is_judged_against_another_counters_peak(corpus: Path, traffic: TrafficDefinition) -> None:
    paths = [*corpus.glob("*.ncu-rep"), *(corpus / "reexport").glob("*raw-base.csv")]
    paired = 0
    for path in paths:
        norm = normalized(path, traffic)
        for tier in ("dram", "l2", "l1", "shared"):
            for formula, roof, counter in zip(
                norm[f"{tier}_bytes_recipe"],
                norm[f"bw_{tier}_byte_per_s_recipe"],
                norm[f"bw_{tier}_counter"],
                strict=True,
            ):
                if not isinstance(formula, str):
                    continue
                # the counter whose built-in peak a missing roof is taken from is the formula's
                assert isinstance(counter, str) and _family(counter) == _family(formula), (path.name, tier)
                if isinstance(roof, str):  # and the report's own roof is that counter's
                    assert _family(roof) == _family(formula), (path.name, tier, formula, roof)
                paired += 1
    assert paired >= 150


def test_every_devices_sm_side_roofs_refer_to_one_clock(corpus: Path) -> None:
    # compute, L1 and shared roofs of one device, whether the report's or built-in, all at the
    # same measured SM clock (the L1 runs on it), so their ratios are the hardware's
    checked = 0
    for path in sorted(corpus.glob("*.ncu-rep")):
        for device in _analyze(path).devices:
            keys = [
                k for k in ("fp64", "fp32", "fp16", "tensor", "l1", "shared") if k in device.roofs.sources
            ]
            clocks = {re.search(r" at (measured|boost) [\d.]+ GHz", device.roofs.sources[k]) for k in keys}
            texts = {m.group(0) if m else None for m in clocks}
            assert len(texts) <= 1, (path.name, {k: device.roofs.sources[k] for k in keys})
            checked += bool(keys)
    assert checked >= 12


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40))
@example([1.7e308, 1.7e308])  # the mean of the two middle ones overflowed to inf (np.median's too)
@example([-math.inf, math.inf])  # NaN, without numpy's warning
@example([5e-324])  # the halves of the one middle value, each rounded to 0 (a subnormal), made 0
@example([5e-324, 1e-323])  # as np.median rounds their mean, where the sum does not overflow
def test_median_is_the_middle_of_the_numbers(values: list[float]) -> None:
    column = np.array(values, dtype="float64")
    numbers = [v for v in values if not math.isnan(v)]
    with np.errstate(over="ignore", invalid="ignore"):
        expected = float(np.median(np.array(numbers))) if numbers else math.nan
    if math.isinf(expected) and all(map(math.isfinite, numbers)):  # the sum overflowed, not the values
        expected = statistics.median_low(numbers) / 2 + statistics.median_high(numbers) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = median(column)
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_a_failed_launch_does_not_move_the_device_roofs(corpus: Path) -> None:
    # gtx1660s: 2 launches measured at 1.37 and 1.09 GHz, a third failed (every counter n/a). The
    # failed one took the roofs at the boost clock (1.83 GHz) into the median: every roof 11 % high,
    # and the header said "at boost clock" where the plot said "measured"
    report = corpus / "gtx1660s_rep_2021.1_raytracer.ncu-rep"
    whole = run_cli("analyze", str(report), "-F", "json")
    assert whole.returncode == 0, whole.stderr
    device = json.loads(whole.stdout)["devices"][0]
    fp32 = device["roofs"]["compute_flop_per_s"]["fp32"]
    # 128 FLOP/SM/clk x 22 SMs x the median clock of the two launches that measured
    assert fp32 == pytest.approx(128 * 22 * device["sm_clock_hz"], rel=1e-6)
    table = run_cli("analyze", str(report))
    assert "(measured)" in table.stdout.splitlines()[0]
    assert "boost clock" not in table.stdout


# A tier's roof is never derived from a percentage printed too coarsely to give it: a CSV prints
# `.pct_of_peak_sustained_elapsed` to hundredths, and under 1 % that is under 3 significant digits
# (0.08 % is 0.075–0.085 %: a roof ±6 %). Such a roof comes from the next source, as where the
# percentage is absent; the same capture then gets the same roofs from its report and its CSV.
WRITEBACK = "l1tex__lsu_writeback_active_mem_lg.sum"
RAYTRACER = "gtx1660s_rep_2021.1_raytracer"


def _l1_roof(pct: float) -> float:
    """The report roof of one launch's L1 writeback (675 cycles in 29.344 µs) from its percentage."""
    metrics = {
        "gpu__time_duration.sum": np.array([29.344e-6]),
        WRITEBACK: np.array([675.0]),
        f"{WRITEBACK}.pct_of_peak_sustained_elapsed": np.array([pct]),
    }
    return float(normalize_columns(metrics)["bw_l1_byte_per_s"][0])


def test_a_percentage_printed_to_hundredths_under_1_gives_no_roof() -> None:
    rate = 675 * 128 / 29.344e-6
    assert np.isnan(_l1_roof(0.08)) and np.isnan(_l1_roof(0.5)) and np.isnan(_l1_roof(0.01))
    # a report's own value (full precision), or 3 significant digits and more (1.10 %: ±0.5 %)
    assert _l1_roof(0.0812345) == pytest.approx(rate / 0.000812345, rel=1e-12)
    assert _l1_roof(1.1) == pytest.approx(rate / 0.011, rel=1e-12)
    assert _l1_roof(23.45) == pytest.approx(rate / 0.2345, rel=1e-12)


def test_a_report_and_its_raw_csv_get_the_same_l1_roof(corpus: Path) -> None:
    # the CSV prints the writeback's 0.0812…% and 0.0504…% as 0.08 and 0.05: their roofs were 3.68
    # and 3.29 TB/s; now the built-in per-clock peak at the measured clock, as the report's 3.47 TB/s
    report = analyzed(corpus / f"{RAYTRACER}.ncu-rep").devices[0].roofs
    csv = analyzed(corpus / "reexport" / f"{RAYTRACER}.ncu2024.1-raw-base.csv").devices[0].roofs
    assert csv.bandwidth_byte_per_s["l1"] == pytest.approx(report.bandwidth_byte_per_s["l1"], rel=0.005)
    for tier in ("l1", "l2"):
        assert "pct_of_peak" in report.sources[tier]  # the report's percentages are exact
        assert csv.sources[tier].startswith("device attributes ("), csv.sources[tier]
    # the L2 peak by the device's own 12 L2 slices (TU116), at the SM clock (the CSV has no L2 clock)
    assert "x 12 L2 slices (device__attribute_l2s_count)" in csv.sources["l2"]
    assert "at the SM clock: the report has no L2 clock" in csv.sources["l2"]
    assert csv.bandwidth_byte_per_s["l2"] == pytest.approx(12 * 32 * 1231492077.045, rel=1e-6)
