"""The roofline math (ncu_roof.analysis.model), hand-computed and as hypothesis properties."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import ncu_roof
from ncu_roof.analysis.model import (
    bit_codes,
    bound_of,
    compute_roof_arrays,
    fixed,
    is_set,
    roofline,
    roofline_arrays,
    row_max,
)
from ncu_roof.analysis.sol import sol_arrays
from ncu_roof.base.vocabulary import COMPUTE, Bound

G = 1e9
PEAK = 100 * G  # seed 004 platform: 100 GFLOP/s ...
DRAM = {"dram": 20 * G}  # ... and 20 GB/s


@pytest.mark.parametrize(
    ("intensity", "cap_gflops", "binding"),
    [
        (0.5, 10.0, "dram"),
        (5.0, 100.0, COMPUTE),  # ridge point: 100/20 = 5 FLOP/B; a tie is compute-bound
        (20.0, 100.0, COMPUTE),
        (0.25, 5.0, "dram"),
        (0.8125, 16.25, "dram"),
        (12.0, 100.0, COMPUTE),
    ],
)
def test_seed_004_single_tier(intensity: float, cap_gflops: float, binding: str) -> None:
    nbytes = 1e9
    point = roofline(intensity * nbytes, {"dram": nbytes}, PEAK, DRAM)
    assert point.intensity_flop_per_byte["dram"] == pytest.approx(intensity)
    assert point.ridge_flop_per_byte["dram"] == pytest.approx(5.0)
    assert point.attainable_flop_per_s == pytest.approx(cap_gflops * G)
    assert point.cap_flop_per_s["dram"] == pytest.approx(cap_gflops * G)
    assert point.binding == binding
    # time at the binding roof = max(FLOP/peak, bytes/bandwidth)
    assert point.time_at_roof_s == pytest.approx(max(intensity * nbytes / PEAK, nbytes / DRAM["dram"]))


def test_three_levels_dram_binds() -> None:
    # 1e9 FLOP; L1 1000 GB/s at AI 2 (5e8 B), LLC 200 GB/s at AI 1 (1e9 B), DRAM 20 GB/s at AI 0.5
    # (2e9 B). Caps: L1 2000→100 (peak), LLC 200→100 (peak), DRAM 0.5*20 = 10 GFLOP/s.
    bw = {"l1": 1000 * G, "l2": 200 * G, "dram": 20 * G}
    point = roofline(1e9, {"l1": 5e8, "l2": 1e9, "dram": 2e9}, PEAK, bw)
    assert point.intensity_flop_per_byte == pytest.approx({"l1": 2.0, "l2": 1.0, "dram": 0.5})
    assert point.cap_flop_per_s == pytest.approx(
        {"l1": 100 * G, "l2": 100 * G, "dram": 10 * G, COMPUTE: 100 * G}
    )
    assert point.binding == "dram"
    assert point.attainable_flop_per_s == pytest.approx(10 * G)
    assert point.time_at_roof_s == pytest.approx(0.1)  # 2e9 B / 20 GB/s
    assert bound_of(point.binding) is Bound.MEMORY


def test_zero_flops_is_memory_traffic_at_the_slowest_tier() -> None:
    # bytes/bandwidth: l1 1e9/1000G = 1 ms, l2 1e9/200G = 5 ms, dram 5e7/20G = 2.5 ms → l2 binds.
    bw = {"l1": 1000 * G, "l2": 200 * G, "dram": 20 * G}
    point = roofline(0.0, {"l1": 1e9, "l2": 1e9, "dram": 5e7}, PEAK, bw)
    assert point.binding == "l2"
    assert point.time_at_roof_s == pytest.approx(5e-3)
    assert point.intensity_flop_per_byte == {"l1": 0.0, "l2": 0.0, "dram": 0.0}
    # no FLOPs: a FLOP/s cap is undefined (each tier's would be 0, the compute one the peak), so
    # caps and attainable are null; the binding roof and the time at it are not
    assert point.attainable_flop_per_s is None and point.cap_flop_per_s == {}
    assert bound_of(point.binding) is Bound.MEMORY


def test_zero_bytes_gives_infinite_intensity_not_an_error() -> None:
    point = roofline(1e9, {"dram": 0.0}, PEAK, DRAM)
    assert point.intensity_flop_per_byte["dram"] == math.inf
    assert point.binding == COMPUTE
    assert point.attainable_flop_per_s == pytest.approx(PEAK)


def test_nothing_known_gives_none() -> None:
    point = roofline(None, {"dram": None}, None, DRAM)
    assert point.binding is None
    assert point.attainable_flop_per_s is None
    assert bound_of(point.binding) is Bound.UNKNOWN
    empty = roofline(0.0, {"dram": 0.0}, PEAK, DRAM)  # an empty kernel: no time anywhere
    assert empty.binding is None


def test_no_traffic_measured_on_any_tier_leaves_the_verdict_unknown() -> None:
    # FLOPs at their peak, or a busy pipe, say nothing without a memory tier to weigh them against:
    # unmeasured bytes are unknown, not zero
    for nbytes in ({"dram": None}, {}):
        point = roofline(1e9, nbytes, PEAK, DRAM)
        assert point.binding is None and point.attainable_flop_per_s is None
        assert point.time_at_roof_s is None
        busy = roofline(None, nbytes, PEAK, DRAM, compute_time_s=1e-3)
        assert busy.binding is None and busy.time_at_roof_s is None
    measured = roofline(None, {"dram": 1e6}, PEAK, DRAM, compute_time_s=1e-3)  # 50 µs of DRAM
    assert measured.binding == COMPUTE and measured.time_at_roof_s == pytest.approx(1e-3)


def test_tier_with_traffic_and_no_bandwidth_leaves_the_verdict_unknown() -> None:
    # shared moved 1 TB but has no roof: it may be what binds, so nothing can be said
    point = roofline(1e9, {"dram": 2e9, "shared": 1e12}, PEAK, DRAM)
    assert set(point.intensity_flop_per_byte) == {"dram"}
    assert point.binding is None
    assert point.attainable_flop_per_s is None and point.time_at_roof_s is None


def test_tier_without_traffic_or_bandwidth_is_ignored() -> None:
    for shared in (0.0, None):
        point = roofline(1e9, {"dram": 2e9, "shared": shared}, PEAK, DRAM)
        assert point.binding == "dram"


def compute_roof(flop: dict[str, float | None], peaks: dict[str, float]) -> tuple[float | None, str | None]:
    """`compute_roof_arrays` of one kernel."""
    roof, dominant = compute_roof_arrays(
        {p: np.array([np.nan if f is None else f]) for p, f in flop.items()}, peaks
    )
    return (None if np.isnan(roof[0]) else float(roof[0])), dominant[0]


def test_compute_roof_of_one_precision_is_its_peak() -> None:
    peaks = {"fp64": 10 * G, "fp32": 100 * G, "fp16": 200 * G}
    assert compute_roof({"fp32": 5e9, "fp64": 0.0, "fp16": None}, peaks) == (100 * G, "fp32")
    assert compute_roof({"fp64": 1.0}, peaks) == (10 * G, "fp64")


def test_compute_roof_mixes_precisions_by_time() -> None:
    # 1e9 FP64 at 10 G = 0.1 s, 9e9 FP32 at 100 G = 0.09 s → 1e10 FLOP / 0.19 s
    peaks = {"fp64": 10 * G, "fp32": 100 * G}
    roof, dominant = compute_roof({"fp64": 1e9, "fp32": 9e9}, peaks)
    assert roof == pytest.approx(1e10 / 0.19)
    assert dominant == "fp32"


def test_compute_roof_without_the_precisions_peak_is_none() -> None:
    assert compute_roof({"tensor": 1e9}, {"fp32": 100 * G}) == (None, "tensor")


def test_latency_rule() -> None:
    """Nsight's rule, through the one implementation: neither SM nor memory reaches 60 %."""
    sm, memory = np.array([59.9, 60.0, np.nan]), np.array([10.0, 10.0, 10.0])
    bound = sol_arrays(sm, memory, {}, np.full(3, 2.0)).bound.tolist()
    assert bound[0] is Bound.LATENCY
    assert bound[1] is not Bound.LATENCY
    assert bound[2] is Bound.UNKNOWN  # no SM figure: nothing is said


_pos = st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False)
_tiers = st.dictionaries(st.sampled_from(["dram", "l2", "l1", "shared"]), st.tuples(_pos, _pos), min_size=1)


@given(flop=_pos, tiers=_tiers, peak=_pos)
def test_attainable_never_above_any_roof(
    flop: float, tiers: dict[str, tuple[float, float]], peak: float
) -> None:
    nbytes = {t: b for t, (b, _) in tiers.items()}
    bw = {t: w for t, (_, w) in tiers.items()}
    point = roofline(flop, nbytes, peak, bw)
    attainable = point.attainable_flop_per_s
    assert attainable is not None
    assert attainable <= peak * (1 + 1e-12)
    for tier in tiers:
        assert attainable <= bw[tier] * (flop / nbytes[tier]) * (1 + 1e-12)
    # and it is one of the roofs: the binding one
    assert point.binding is not None
    assert attainable == pytest.approx(point.cap_flop_per_s[point.binding], rel=1e-9)


@given(flop=_pos, tiers=_tiers, peak=_pos, other_s=st.one_of(st.none(), _pos))
def test_attainable_is_the_flops_over_the_time_at_the_binding_roof(
    flop: float, tiers: dict[str, tuple[float, float]], peak: float, other_s: float | None
) -> None:
    # with another compute ceiling (a busy pipe, integer work) slower than the FLOPs at their
    # peak, the compute cap is the FLOPs over that time: attainable, binding, the caps and the
    # time at the roof tell one story (achieved / attainable = time at roof / duration)
    nbytes = {t: b for t, (b, _) in tiers.items()}
    bw = {t: w for t, (_, w) in tiers.items()}
    point = roofline(flop, nbytes, peak, bw, compute_time_s=other_s)
    assert point.binding is not None and point.time_at_roof_s is not None
    assert point.attainable_flop_per_s == pytest.approx(flop / point.time_at_roof_s, rel=1e-9)
    assert point.attainable_flop_per_s == pytest.approx(min(point.cap_flop_per_s.values()), rel=1e-9)
    compute_s = max(flop / peak, other_s or 0.0)
    assert point.cap_flop_per_s[COMPUTE] == pytest.approx(flop / compute_s, rel=1e-9)


def test_a_busy_pipe_lowers_the_compute_cap() -> None:
    # 1e9 FLOP at 100 GFLOP/s is 10 ms, but a pipe busy for 40 ms sets the compute time: the
    # compute cap is 1e9 / 40 ms = 25 GFLOP/s, under DRAM's 20 GB/s x 2 FLOP/B = 40 GFLOP/s
    point = roofline(1e9, {"dram": 5e8}, PEAK, DRAM, compute_time_s=40e-3)
    assert point.binding == COMPUTE
    assert point.cap_flop_per_s == pytest.approx({"dram": 25 * G, COMPUTE: 25 * G})
    assert point.attainable_flop_per_s == pytest.approx(25 * G)
    assert point.time_at_roof_s == pytest.approx(40e-3)


@given(
    flop=_pos,
    tiers=_tiers,
    peak=_pos,
    k=st.floats(min_value=1e-3, max_value=1e3, allow_nan=False),
)
def test_scaling_flops_and_bytes_together_changes_nothing(
    flop: float, tiers: dict[str, tuple[float, float]], peak: float, k: float
) -> None:
    nbytes = {t: b for t, (b, _) in tiers.items()}
    bw = {t: w for t, (_, w) in tiers.items()}
    a = roofline(flop, nbytes, peak, bw)
    b = roofline(flop * k, {t: v * k for t, v in nbytes.items()}, peak, bw)
    times = {t: v / bw[t] for t, v in nbytes.items()} | {COMPUTE: flop / peak}
    ordered = sorted(times.values())
    # a binding decided by a near-tie may flip with rounding; skip those draws
    assume(len(ordered) < 2 or ordered[-1] > ordered[-2] * (1 + 1e-9))
    assert b.binding == a.binding
    assert b.intensity_flop_per_byte == pytest.approx(a.intensity_flop_per_byte, rel=1e-9)
    assert b.cap_flop_per_s == pytest.approx(a.cap_flop_per_s, rel=1e-9)
    assert b.attainable_flop_per_s == pytest.approx(a.attainable_flop_per_s, rel=1e-9)


def test_fixed_formats_as_format_does() -> None:
    edges = [np.nan, np.inf, -np.inf, -0.0, 0.0, -0.4, 0.5, 1.5, 2.5, -2.5, -0.5, 1e300, -1e300]
    edges += [2.4999999999999996, 0.49999999999999994, -0.49999999999999994, 99.5, 100.5]
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.uniform(-3, 103, 20_000), rng.normal(0, 1e6, 2_000), edges])
    rng.shuffle(values)
    for digits in (0, 2):
        for column in (values, values[:100]):  # many rows (formatted per distinct value) and few
            assert fixed(column, digits).tolist() == [f"{v:.{digits}f}" for v in column.tolist()]


class _Unequal:
    """Compares unequal to everything, None included (`!=` would call it set; `is not` asks)."""

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        raise AssertionError("compared")

    __hash__ = object.__hash__


_OBJECTS = [None, 0, "", "a", math.nan, (), _Unequal()]


@given(st.lists(st.sampled_from(_OBJECTS), max_size=40), st.integers(1, 3))
def test_is_set_is_is_not_none(values: list[object], step: int) -> None:
    """Row by row `is not None`, for any objects, through a strided view too."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    assert is_set(column).tolist() == [v is not None for v in values]
    assert is_set(column[::step]).tolist() == [v is not None for v in values[::step]]


_ENTRIES = st.sampled_from([math.nan, -math.inf, math.inf, -1.0, 0.0, -0.0, 1.0, 2.5, 1e300])


@given(st.integers(1, 5).flatmap(lambda k: st.lists(st.lists(_ENTRIES, min_size=k, max_size=k), max_size=20)))
def test_row_max_is_max_and_argmax_of_the_columns_side_by_side(rows: list[list[float]]) -> None:
    """The largest value and the first column holding it, NaN the largest (as numpy has them)."""
    k = len(rows[0]) if rows else 2
    matrix = np.array(rows, dtype="float64").reshape(len(rows), k)
    most, at = row_max(list(matrix.T))
    assert at.tolist() == np.argmax(matrix, axis=1).tolist()
    assert np.array_equal(most, matrix.max(axis=1), equal_nan=True)


_FLAG_ROWS = st.integers(1, 62).flatmap(
    lambda k: st.lists(st.lists(st.booleans(), min_size=k, max_size=k), max_size=20)
)


@given(_FLAG_ROWS)
def test_bit_codes_are_the_flags_as_bits(rows: list[list[bool]]) -> None:
    """Bit i of a row's code is its flag i: the boolean matrix times the powers of two."""
    k = len(rows[0]) if rows else 1
    matrix = np.array(rows, dtype=bool).reshape(len(rows), k)
    codes = bit_codes(list(matrix.T))
    assert codes.tolist() == [sum(1 << i for i, flag in enumerate(row) if flag) for row in rows]


def test_a_compute_time_that_is_not_finite_is_no_ceiling() -> None:
    """`compute_time_s` counts only where finite: an infinite one (work over a zero peak) is no
    time at the roof; the FLOPs and bytes still place the kernel (1 GFLOP at 1 TFLOP/s: 1 ms)."""
    for other in (math.inf, math.nan):
        arrays = roofline_arrays(
            np.array([1e9]), {"dram": np.array([1e6])}, np.array([1e12]), {"dram": 1e12}, np.array([other])
        )
        assert arrays.time_at_roof_s.tolist() == [1e-3] and arrays.binding.tolist() == [COMPUTE]


def test_an_overflow_is_infinite_without_a_numpy_warning(tmp_path: Path) -> None:
    # ~1e-300 bytes: a tier's bandwidth x intensity overflows to inf (a RuntimeWarning on stderr before)
    lines = (Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv").read_text().splitlines()
    cells = lines[2].split('","')
    cells[13:17] = ["1e-300"] * 4  # DRAM read and write, L2 and L1 bytes
    path = tmp_path / "overflow.csv"
    path.write_text("\n".join([lines[0], lines[1], '","'.join(cells)]) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel = ncu_roof.analyze(str(path)).kernels[0]
    assert kernel.intensity_flop_per_byte["l1"] == pytest.approx(205_692.5e300)  # test_readers: its FLOP
    assert kernel.cap_flop_per_s["l1"] == kernel.cap_flop_per_s["compute"]  # its bandwidth x intensity: inf
