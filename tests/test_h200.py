"""The H200 fixtures (`fixtures/h200/`, its README): kernels whose work is known by construction
(`scripts/h200/roofkern.cu`), profiled by ncu 2025.3.1 on an H200 and read here in every format ncu
wrote them in, one reader at a time: what ncu-roof reads and derives, against hand counts.

Where ncu-roof is wrong today the test states the right behaviour and is marked
`xfail(strict=True)` with the defect: it turns into a required pass once the defect is fixed.
"""

from __future__ import annotations

import functools
import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, run_cli

import ncu_roof

H200 = FIXTURES / "h200"
RAW = H200 / "h200_full_raw.csv"
DETAILS = H200 / "h200_full_details.csv"
CONSOLE = H200 / "h200_full_console_details.txt"
SUMMARY_TEXT = H200 / "h200_full_console_summary.txt"
SUMMARY_CSV = H200 / "h200_full_summary.csv"
REPORT = H200 / "h200_profile_vector_add_small.ncu-rep"
PEAKS = H200 / "h200_peaks_raw.csv"

SMS = 132  # device__attribute_multiprocessor_count (timing.txt: sms=132)
SCHEDULERS_PER_SM = 4  # device__attribute_num_schedulers_per_multiprocessor on CC 9.0
L2_CAPACITY_BYTES = 62_914_560  # timing.txt: l2_bytes=62914560 (60 MiB)

VADD = "vector_add_f32(const float *, const float *, float *, long)"
NAMES = (
    VADD,
    VADD,
    VADD,
    VADD,
    "daxpy_f64(double, const double *, double *, long)",
    "rmsnorm_f32(const float *, const float *, float *, int, float)",
    "sgemm_naive_f32(const float *, const float *, float *, int)",
    "void sgemm_tiled_f32<32>(const float *, const float *, float *, int)",
    "wmma_gemm_f16(const __half *, const __half *, float *, int)",
    "wmma_gemm_s8(const signed char *, const signed char *, int *, int)",
    "reduce_sum_i32(const int *, unsigned long long *, long)",
    "void expf_loop_f32<256>(float *, long)",
    "void l2_resident_read<32>(const float4 *, float *, long)",
    "void l1_resident_read<256>(const float4 *, float *)",
    "void shared_stride<1>(float *, int)",
    "void shared_stride<32>(float *, int)",
)
# launch index in the report (README: vector_add_f32 x3 at n = 2^26, once at 2^20, then each kernel)
(VADD_SMALL, DAXPY, RMSNORM, NAIVE, TILED, HMMA, IMMA, REDUCE, EXPF, L2_READ, L1_READ, SH1, SH32) = range(
    3, 16
)

# the launch shapes of roofkern.cu's LAUNCH lines
GRIDS = (
    *["(262144, 1, 1)"] * 3,  # (2^26 + 255) / 256
    "(4096, 1, 1)",  # 2^20 / 256
    "(131072, 1, 1)",  # 2^25 / 256
    "(8192, 1, 1)",  # one block per row, T = 8192
    "(128, 128, 1)",  # N / 16 = 2048 / 16
    "(64, 64, 1)",  # N / 32
    "(16384, 1, 1)",  # (4096 / 16)^2 tiles / 4 warps per block
    "(16384, 1, 1)",
    "(1056, 1, 1)",  # 132 x 8
    "(16384, 1, 1)",  # 2^22 / 256
    "(528, 1, 1)",  # 132 x 4
    "(1056, 1, 1)",  # 132 x 8
    "(264, 1, 1)",  # 132 x 2
    "(264, 1, 1)",
)
BLOCKS = (
    *["(256, 1, 1)"] * 6,
    "(16, 16, 1)",
    "(32, 32, 1)",
    "(128, 1, 1)",
    "(128, 1, 1)",
    *["(256, 1, 1)"] * 6,
)
# gpu__time_duration.sum of each launch, as the raw page prints it (msecond, 6 decimals), in ns
DURATIONS_NS = (
    229_472,
    229_888,
    229_408,
    5_152,
    183_200,
    102_880,
    3_127_264,
    1_857_248,
    4_968_992,
    3_486_080,
    68_288,
    271_872,
    93_728,
    198_304,
    55_424,
    1_063_424,
)
# sm__cycles_elapsed.avg.per_second of each launch (raw page, Ghz): clocks were left alone
SM_CLOCK_GHZ = (
    1.975600,
    1.965282,
    1.960014,
    2.037167,
    1.978737,
    1.943634,
    1.985732,
    1.979643,
    1.803059,
    1.801081,
    1.952731,
    1.978274,
    1.979831,
    1.973975,
    1.963097,
    1.979258,
)

N_VADD = 2**26
T_RMS, D_RMS = 8192, 4096
N_SGEMM = 2048
N_WMMA = 4096
N_EXP = 2**22

# FP32 FLOPs by construction (FADD/FMUL 1, FFMA 2), per launch that does FP32 work
FP32_FLOP = {
    0: N_VADD,  # one FADD per element
    1: N_VADD,
    2: N_VADD,
    VADD_SMALL: 2**20,
    # FFMA x*x (2) + 2 FMUL (x * inv * w) per element = 4 T D = 134,217,728; plus each row's
    # reduction: 256 threads x 5 shuffle FADDs + 32 x 5 = 1,440 FADD x 8192 rows = 11,796,480
    RMSNORM: 4 * T_RMS * D_RMS + T_RMS * (256 * 5 + 32 * 5),
    NAIVE: 2 * N_SGEMM**3,  # one FFMA per (row, column, k): 2 N^3 = 17,179,869,184
    TILED: 2 * N_SGEMM**3,
    EXPF: 3 * 256 * N_EXP,  # 256 x (FMUL by log2 e + FFMA) per thread = 3,221,225,472
    # 4 FADD per float4 x 2^20 float4 x 32 passes = 134,217,728; + 3 FADD (s.x+s.y+s.z+s.w) x
    # 528 x 256 threads = 405,504
    L2_READ: 4 * 2**20 * 32 + 3 * 528 * 256,
    # 4 FADD x 1024 float4 x 256 passes x 1056 blocks = 1,107,296,256; + 3 x 1056 x 256 = 811,008
    L1_READ: 4 * 1024 * 256 * 1056 + 3 * 1056 * 256,
    SH1: 4096 * 256 * 264,  # one FADD per shared load: 4096 iterations x 256 threads x 264 blocks
    SH32: 4096 * 256 * 264,
}

# DRAM bytes by construction: (fewest bytes read, fewest bytes written)
DRAM_READ_WRITE_BYTES = {
    0: (2 * 4 * N_VADD, 4 * N_VADD),  # a, b read; c written: 12 B per element
    1: (2 * 4 * N_VADD, 4 * N_VADD),
    2: (2 * 4 * N_VADD, 4 * N_VADD),
    VADD_SMALL: (2 * 4 * 2**20, 4 * 2**20),
    DAXPY: (2 * 8 * 2**25, 8 * 2**25),  # x, y read, y written: 24 B per element
    RMSNORM: (4 * T_RMS * D_RMS + 4 * D_RMS, 4 * T_RMS * D_RMS),  # x once (its row stays in L2), w; y
    NAIVE: (2 * 4 * N_SGEMM**2, 4 * N_SGEMM**2),  # A, B; C: 3 N^2 x 4 B = 50,331,648
    TILED: (2 * 4 * N_SGEMM**2, 4 * N_SGEMM**2),
    HMMA: (2 * 2 * N_WMMA**2, 4 * N_WMMA**2),  # A, B in fp16; C in fp32: 134,217,728
    IMMA: (2 * N_WMMA**2, 4 * N_WMMA**2),  # A, B in int8; C in int32: 100,663,296
    REDUCE: (4 * 2**26, 8),  # x read; one 8-byte counter
    EXPF: (0, 4 * N_EXP),  # y written
    L2_READ: (16 * 2**20, 0),  # the 16 MiB buffer, once from DRAM
    L1_READ: (1056 * 16384, 0),  # each block's 16 KiB slice, once from DRAM: 17,301,504
    SH1: (0, 0),
    SH32: (0, 0),
}
# DRAM traffic over the fewest bytes that the access pattern explains: wmma_gemm_f16 loads its
# operands straight from global memory, tile by tile, and its 64 MiB of A and B do not stay in
# the 60 MiB L2 (measured: 398.8 MB, 2.97x); every other kernel streams or fits the L2
DRAM_FACTOR = {HMMA: 4.0}


@functools.cache
def document(path: Path, *options: str) -> dict[str, Any]:
    """`ncu-roof analyze PATH --format json` in process, once per session."""
    done = run_cli("analyze", str(path), "--format", "json", *options)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def kernels(path: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = document(path)["kernels"]
    return found


# --- the raw page: every counter ncu-roof's recipe reads -----------------------------------------


def test_raw_page_holds_the_16_launches_with_their_names_and_shapes() -> None:
    doc = document(RAW)
    assert doc["inputs"][0]["format"] == "raw-csv" and doc["inputs"][0]["kernels"] == 16
    found = doc["kernels"]
    assert [k["id"] for k in found] == list(range(16))
    assert tuple(k["name"] for k in found) == NAMES
    assert tuple(k["grid"] for k in found) == GRIDS
    assert tuple(k["block"] for k in found) == BLOCKS
    assert [d["name"] for d in doc["devices"]] == ["NVIDIA H200"] and doc["devices"][0]["cc"] == "9.0"


def test_raw_page_durations_are_gpu_time_duration_to_the_nanosecond() -> None:
    found = kernels(RAW)
    assert [k["duration_s"] for k in found] == pytest.approx([ns * 1e-9 for ns in DURATIONS_NS], abs=1e-13)
    # 16,170,624 ns in all
    assert document(RAW)["total_duration_s"] == pytest.approx(sum(DURATIONS_NS) * 1e-9, abs=1e-12)


@pytest.mark.parametrize("index", sorted(FP32_FLOP))
def test_raw_page_fp32_flops_are_the_hand_count_within_1_pct(index: int) -> None:
    flop = kernels(RAW)[index]["flop"]
    assert flop["fp32"] == pytest.approx(FP32_FLOP[index], rel=0.01)
    assert flop["fp64"] == 0.0 and flop["tensor"] == 0.0


def test_raw_page_fp64_flops_of_daxpy_are_two_per_element() -> None:
    # one DFMA (2 FLOP) per element, n = 2^25: 67,108,864; no other precision
    flop = kernels(RAW)[DAXPY]["flop"]
    assert flop["fp64"] == pytest.approx(2 * 2**25, rel=0.01)
    assert flop["fp32"] == 0.0 and flop["fp16"] == 0.0 and flop["tensor"] == 0.0


def test_raw_page_tensor_flops_of_the_f16_wmma_gemm_are_exactly_2_n_cubed() -> None:
    # 16x16x16 wmma tiles over N = 4096: 2 N^3 = 137,438,953,472 FLOP on the fp16 tensor path
    # (HMMA.16816.F32), a counter (sm__ops_path_tensor_*), not a rate: exact
    k = kernels(RAW)[HMMA]
    assert k["flop"]["tensor"] == 2 * N_WMMA**3
    assert k["tensor_paths"]["fp16"]["count"] == 2 * N_WMMA**3
    assert k["flop"]["fp32"] == 0.0 and k["flop"]["total"] == 2 * N_WMMA**3


def test_raw_page_int8_wmma_gemm_counts_2_n_cubed_integer_ops_and_no_flops() -> None:
    # IMMA.16816.S8.S8 over N = 4096: 2 N^3 = 137,438,953,472 integer tensor operations
    k = kernels(RAW)[IMMA]
    assert k["ops"]["int8"] == 2 * N_WMMA**3 and k["ops"]["total"] == 2 * N_WMMA**3
    assert k["tensor_paths"]["int8"]["unit"] == "OP"
    assert k["flop"]["total"] == 0.0  # integer work is not floating point


def test_raw_page_the_expf_loop_is_bound_by_the_special_function_pipe() -> None:
    # 256 MUFU.EX2 per thread x 2^22 threads = 1,073,741,824 results = 33,554,432 warp instructions;
    # the XU pipe issues 0.5 warp instruction per SM per cycle (sm__inst_executed_pipe_xu
    # .sum.peak_sustained = 66): 33,554,432 / (66 x 1.978274 GHz x 271.872 us) = 94.5 % busy
    k = kernels(RAW)[EXPF]
    xu_pct = 100 * (256 * N_EXP / 32) / (66 * SM_CLOCK_GHZ[EXPF] * 1e9 * DURATIONS_NS[EXPF] * 1e-9)
    assert k["pipe_pct"]["xu"] == pytest.approx(xu_pct, rel=0.01)
    assert k["bound"] == "compute" and k["compute_ceiling"] == "pipe:xu"


@pytest.mark.parametrize("index", sorted(DRAM_READ_WRITE_BYTES))
def test_raw_page_dram_bytes_are_at_least_what_the_kernel_must_move(index: int) -> None:
    # ncu flushes the caches before each launch (--cache-control all), so every byte read comes
    # from DRAM; a byte written may still sit dirty in the write-back L2 when the kernel ends
    # (vector_add_f32 writes 268 MB and DRAM sees 256 MB of it): at least the reads, and at least
    # reads + writes - the L2's 60 MiB
    reads, writes = DRAM_READ_WRITE_BYTES[index]
    dram = kernels(RAW)[index]["bytes"]["dram"]
    assert dram >= max(reads, reads + writes - L2_CAPACITY_BYTES)
    # and not far above it: 1 MB of slack for the near-empty kernels (shared_stride: 3,840 B)
    assert dram <= DRAM_FACTOR.get(index, 1.1) * (reads + writes) + 1e6


def test_raw_page_l2_bytes_of_the_l2_resident_read_are_32_passes_over_16_mib() -> None:
    # __ldcg of a 16 MiB buffer, 32 passes: 32 x 16,777,216 = 536,870,912 B from L2 to the SMs
    # (Nsight's L2 measure on 2025.x: lts__lts2xbar_cycles_active x 32 B)
    assert kernels(RAW)[L2_READ]["bytes"]["l2"] == pytest.approx(32 * 16 * 2**20, rel=0.005)
    # vector_add_f32 reads a and b through the L2 once: 2 x 4 B x 2^26 = 536,870,912 B
    assert kernels(RAW)[0]["bytes"]["l2"] == pytest.approx(2 * 4 * N_VADD, rel=0.005)


def test_raw_page_l1_bytes_of_the_l1_resident_read_are_256_passes_over_16_kib_per_block() -> None:
    # 1056 blocks x 16 KiB x 256 passes = 4,429,185,024 B (l1tex__lsu_writeback_active x 128 B)
    assert kernels(RAW)[L1_READ]["bytes"]["l1"] == pytest.approx(1056 * 16384 * 256, rel=0.005)
    # vector_add_f32: 3 accesses x 4 B x 2^26 = 805,306,368 B, exactly (a counter)
    assert kernels(RAW)[0]["bytes"]["l1"] == 3 * 4 * N_VADD


def test_raw_page_shared_wavefronts_with_32_way_bank_conflicts_are_32_times_as_many() -> None:
    # 128 B per wavefront. Filling buf: 8192 floats / 256 threads = 32 stores per thread, one
    # wavefront per warp store: 32 x 8 warps x 264 blocks x 128 B = 8,650,752 B. Loads: 4096 per
    # thread: 4096 x 8 x 264 wavefronts x 128 B = 1,107,296,256 B conflict-free, x 32 at stride 32
    stores = 32 * 8 * 264 * 128
    loads = 4096 * 8 * 264 * 128
    one, conflicted = kernels(RAW)[SH1]["bytes"]["shared"], kernels(RAW)[SH32]["bytes"]["shared"]
    assert one == stores + loads  # 1,115,947,008
    assert conflicted == stores + 32 * loads  # 35,442,130,944
    assert (conflicted - stores) / (one - stores) == 32
    assert kernels(RAW)[SH32]["bound"] == "memory" and kernels(RAW)[SH32]["binding"] == "shared"


BANK_CONFLICTS = "shared-memory bank conflicts: "


def test_raw_page_32_way_bank_conflicts_are_noted_with_their_fix() -> None:
    # shared_stride<32>: requests (smsp__sass_inst_executed_op_shared_ld + _st) 8,650,752 loads
    # (4096 x 8 warps x 264 blocks) + 67,584 stores = 8,718,336; wavefronts 276,824,064 + 67,584 =
    # 276,891,648: 31.76 per request; conflicts (l1tex__data_bank_conflicts_..._op_ld) 268,173,312
    # = 31 x 8,650,752, 96.85 % of the wavefronts. It sits at 99.7 % of the shared roof: replays
    sh32 = kernels(RAW)[SH32]
    assert sh32["binding"] == "shared" and sh32["pct_of_roof"] > 99
    (note,) = [n for n in sh32["notes"] if n.startswith(BANK_CONFLICTS)]
    assert f"{276_891_648 / 8_718_336:.1f}" == "31.8" and f"{100 * 268_173_312 / 276_891_648:.0f}" == "97"
    assert note.startswith(f"{BANK_CONFLICTS}31.8 wavefronts per shared load or store request, 97% of them")
    assert "fix: pad the shared array (float tile[32][33], not [32][32]) or swizzle its index" in note
    # conflict-free: shared_stride<1> (1.0 per request, 0 conflicts); sgemm_tiled_f32 (0.52 %:
    # 174,641 + 2,033,383 conflicts of 402,827,825 + 18,810,599 wavefronts), under Nsight's 10 %
    for index in (SH1, TILED):
        assert not any(n.startswith(BANK_CONFLICTS) for n in kernels(RAW)[index]["notes"])


def test_without_the_conflict_counters_no_bank_conflict_note_is_guessed() -> None:
    # the details page and the peaks page lack the request or conflict counters: nothing said
    for path in (DETAILS, PEAKS):
        assert not any(n.startswith(BANK_CONFLICTS) for k in kernels(path) for n in k["notes"])


def test_raw_page_each_launch_is_judged_at_the_clock_it_ran_at() -> None:
    # the instruction roofline's issue peak is SMs x schedulers x this launch's SM clock, and the
    # fp16 tensor path's peak 4096 FLOP/clk/SM (dense) x SMs x the same clock
    for k, ghz in zip(kernels(RAW), SM_CLOCK_GHZ, strict=True):
        clock_hz = ghz * 1e9
        issue = k["instruction_roofline"]["issue_peak_warp_inst_per_s"]
        assert issue == pytest.approx(SMS * SCHEDULERS_PER_SM * clock_hz, rel=1e-9)
        assert k["tensor_paths"]["fp16"]["peak_per_s"] == pytest.approx(SMS * 4096 * clock_hz, rel=1e-9)
    # the device's roofs are at the median clock: (1.973975 + 1.975600) / 2 GHz
    device = document(RAW)["devices"][0]
    median_hz = statistics.median(SM_CLOCK_GHZ) * 1e9
    assert device["sm_clock_hz"] == pytest.approx(1.9747875e9, rel=1e-9) == median_hz
    # FP32: 128 FFMA x 2 FLOP per SM per clock: 132 x 256 x 1.9747875 GHz = 66.73 TFLOP/s
    assert device["roofs"]["compute_flop_per_s"]["fp32"] == pytest.approx(SMS * 256 * median_hz, rel=1e-9)
    # L1: one 128 B writeback per SM per clock: 132 x 128 x 1.9747875 GHz = 33.37 TB/s
    assert device["roofs"]["bandwidth_byte_per_s"]["l1"] == pytest.approx(SMS * 128 * median_hz, rel=1e-9)


def test_raw_page_dram_roof_of_a_launch_is_1504_bytes_per_dram_cycle_at_its_dram_clock() -> None:
    # dram__bytes.sum.peak_sustained = 1504 B/cycle (README) x dram__cycles_elapsed.avg.per_second
    # of launch 0 (3.199135 GHz) = 4.811 TB/s; its cap is that x its DRAM intensity
    k = kernels(RAW)[0]
    intensity = k["flop"]["total"] / k["bytes"]["dram"]
    assert k["cap_flop_per_s"]["dram"] == pytest.approx(intensity * 1504 * 3.199135e9, rel=1e-6)
    assert k["binding"] == "dram" and k["bound"] == "memory"


def test_raw_page_to_pandas_carries_what_the_json_carries() -> None:
    frame = ncu_roof.analyze(RAW).to_pandas()
    found = kernels(RAW)
    assert list(frame["name"]) == list(NAMES)
    assert list(frame["duration_s"]) == [k["duration_s"] for k in found]
    assert list(frame["flop_total"]) == [k["flop"]["total"] for k in found]
    for tier in ("dram", "l2", "l1", "shared"):
        assert list(frame[f"{tier}_bytes"]) == [k["bytes"][tier] for k in found]


def test_raw_page_with_the_built_in_h200_keeps_the_reports_l2_roof_and_scales_to_its_clocks() -> None:
    # the built-in h200 has no L2 figure: the report's own, 188 x 32 B x 1.709 GHz (median L2 clock)
    roofs = document(RAW, "--gpu", "h200")["devices"][0]["roofs"]
    assert (
        roofs["bandwidth_byte_per_s"]["l2"]
        == document(RAW)["devices"][0]["roofs"]["bandwidth_byte_per_s"]["l2"]
    )
    assert roofs["bandwidth_byte_per_s"]["l2"] == pytest.approx(188 * 32 * 1.709e9, rel=0.001)
    # FP32: 256 FLOP/SM/clk x 132 SMs at the measured 1.9747875 GHz, not the 1.98 GHz boost
    assert roofs["compute_flop_per_s"]["fp32"] == pytest.approx(SMS * 256 * 1.9747875e9, rel=1e-9)


def test_the_built_in_h200_dram_roof_is_the_devices() -> None:
    # 1504 B per DRAM cycle x the median DRAM clock 3.199 GHz = 4.811 TB/s
    dram = document(RAW, "--gpu", "h200")["devices"][0]["roofs"]["bandwidth_byte_per_s"]["dram"]
    assert dram == pytest.approx(1504 * 3.199e9, rel=0.005)


def test_the_built_in_h200_l2_roof_is_at_its_l2_clock_not_the_sm_clock() -> None:
    # the raw page's L2 clock (lts__cycles_elapsed.avg.per_second) runs 1.675-1.710 GHz, median
    # 1.709, while the SM ran 1.80-2.04 GHz: the built-in L2 roof is 94 slices (6016-bit HBM / 64)
    # x 2 lts2xbar cycles x 32 B = 6016 B per L2 clock x 1.709 GHz = 10,281,344,000,000 B/s, not
    # x the 1.98 GHz SM boost (11,911,680,000,000: 15.9 % high)
    done = run_cli("gpus", "--format", "json")
    assert done.returncode == 0, done.stderr
    h200 = next(g for g in json.loads(done.stdout)["gpus"] if g["key"] == "h200")
    assert h200["bandwidth_byte_per_s"]["l2"] == 94 * 2 * 32 * 1.709e9 == 10_281_344_000_000
    assert "x 1.709 GHz L2 clock (lts__cycles_elapsed.avg.per_second" in h200["sources"]["l2"]
    # the details page has no L2 clock: each launch's built-in L2 roof at that clock, said so
    device = document(DETAILS, "--gpu", "h200")["devices"][0]
    assert device["roofs"]["bandwidth_byte_per_s"]["l2"] == 10_281_344_000_000
    assert "; at the built-in L2 clock 1.709 GHz (" in device["roof_sources"]["l2"]
    assert "the report has no L2 clock at boost 1.709 GHz" in device["roof_sources"]["l2"]
    # within 0.011 % of the report's own roof on the raw page: 188 x 32 B x 1.70918 GHz
    raw = document(RAW)["devices"][0]["roofs"]["bandwidth_byte_per_s"]["l2"]
    assert raw == pytest.approx(188 * 32 * 1.70918e9, rel=1e-9)
    assert raw == pytest.approx(10_281_344_000_000, rel=1.1e-4)


# --- the details page and the console text: the Speed of Light, durations, DRAM throughput --------


@pytest.mark.parametrize("path", [DETAILS, CONSOLE], ids=["details-csv", "console-text"])
def test_details_page_agrees_with_the_raw_page_where_both_carry_a_quantity(path: Path) -> None:
    doc, raw = document(path), kernels(RAW)
    assert doc["inputs"][0]["kernels"] == 16 and doc["devices"][0]["cc"] == "9.0"
    found = doc["kernels"]
    assert tuple(k["name"] for k in found) == NAMES
    assert tuple(k["grid"] for k in found) == GRIDS and tuple(k["block"] for k in found) == BLOCKS
    for k, r in zip(found, raw, strict=True):
        # "Duration" to 3-5 significant digits (229.47 us, 1.06 ms: 0.3 %)
        assert k["duration_s"] == pytest.approx(r["duration_s"], rel=0.005)
        # "Memory Throughput" (3 significant digits) x "Duration": DRAM bytes within 0.5 %
        assert k["bytes"]["dram"] == pytest.approx(r["bytes"]["dram"], rel=0.005, abs=20)
        # the Speed-of-Light percentages, printed to 2 decimals
        for unit in ("sm", "memory", "dram", "l2", "l1"):
            assert k["sol_pct"][unit] == pytest.approx(r["sol_pct"][unit], abs=0.006)
        # no FLOP counters on the details page: unknown, never 0
        assert k["flop"]["total"] is None and k["bytes"]["l1"] is None


def test_details_csv_and_console_text_of_one_report_read_alike() -> None:
    for csv, text in zip(kernels(DETAILS), kernels(CONSOLE), strict=True):
        for key in ("name", "grid", "block", "duration_s", "bytes", "sol_pct", "bound", "binding"):
            assert csv[key] == text[key]


def test_details_page_sm_frequency_is_read_to_its_two_decimals() -> None:
    # "SM Frequency" of the 16 launches, to 2 decimals: the median is 1.97 GHz
    assert document(DETAILS)["devices"][0]["sm_clock_hz"] == pytest.approx(1.97e9)


# --- the --print-summary exports: one row per kernel and launch shape, averaged ------------------


@pytest.mark.parametrize("path", [SUMMARY_TEXT, SUMMARY_CSV], ids=["text", "csv"])
def test_summary_rows_are_the_14_kernels_with_their_averages(path: Path) -> None:
    doc = document(path)
    found = {(k["name"], k["grid"]): k for k in doc["kernels"]}
    assert len(found) == 14  # vector_add_f32 at 2^26 three times: one row, "Invocations 3"
    assert set(found) == {(name, grid) for name, grid in zip(NAMES, GRIDS, strict=True)}
    vadd = found[VADD, GRIDS[0]]
    # "Duration" Average: (229.472 + 229.888 + 229.408) / 3 = 229.589 us, printed 229.59 us
    assert vadd["duration_s"] == pytest.approx(229.59e-6, abs=1e-11)
    assert any("averages over 3 invocations" in note for note in vadd["notes"])
    hmma = found[NAMES[HMMA], GRIDS[HMMA]]
    assert hmma["duration_s"] == pytest.approx(DURATIONS_NS[HMMA] * 1e-9, rel=0.005)  # "4.97 ms"
    assert hmma["sol_pct"]["memory"] == pytest.approx(96.70)


def test_summary_text_and_csv_read_alike() -> None:
    text = {(k["name"], k["grid"]): k for k in kernels(SUMMARY_TEXT)}
    for k in kernels(SUMMARY_CSV):
        twin = text[k["name"], k["grid"]]
        for key in ("block", "duration_s", "bytes", "sol_pct", "bound"):
            assert k[key] == twin[key]


@pytest.mark.parametrize("path", [SUMMARY_TEXT, SUMMARY_CSV], ids=["text", "csv"])
def test_summary_time_counts_every_invocation(path: Path) -> None:
    doc = document(path)
    # 16,170,624 ns in all (the raw page), to the summary's rounding
    assert doc["total_duration_s"] == pytest.approx(sum(DURATIONS_NS) * 1e-9, rel=0.002)
    vadd = [g for g in doc["groups"] if g["name"] == VADD and g["grid"] == GRIDS[0]]
    assert [g["launches"] for g in vadd] == [3]


@pytest.mark.parametrize("path", [SUMMARY_TEXT, SUMMARY_CSV], ids=["text", "csv"])
def test_summary_rows_are_as_many_launches_as_their_invocations(path: Path) -> None:
    doc = document(path)
    # 13 rows of "Invocations 1" and vector_add_f32 at 2^26 of "Invocations 3": 16 launches
    assert doc["inputs"][0]["kernels"] == 16 and len(doc["kernels"]) == 16
    # the printed averages x invocations, in us: 183.20 + 68.29 + 102.88 + 3130 + 5.15
    # + 3 x 229.59 + 271.87 + 198.30 + 93.73 + 1860 + 55.42 + 1060 + 4970 + 3490 = 16,177.61 us
    # (one launch of vector_add_f32 alone: 15,718.43 us, the defect's 15.72 ms)
    assert doc["total_duration_s"] == pytest.approx(16_177.61e-6, abs=1e-11)
    vadd = [k for k in doc["kernels"] if k["name"] == VADD and k["grid"] == GRIDS[0]]
    assert [k["duration_s"] for k in vadd] == pytest.approx([229.59e-6] * 3, abs=1e-12)
    assert all("averages over 3 invocations" in " ".join(k["notes"]) for k in vadd)


def test_summary_csv_reads_the_compute_capability() -> None:
    assert document(SUMMARY_CSV)["devices"][0]["cc"] == "9.0"


# --- the .ncu-rep that `ncu-roof profile` wrote: vector_add_f32 at n = 2^20, base clocks ----------


def test_report_holds_the_small_vector_add_with_the_raw_pages_work() -> None:
    pytest.importorskip("ncu_report")
    doc = document(REPORT)
    assert doc["inputs"][0]["format"] == "ncu-rep" and doc["inputs"][0]["ncu_version"] == "2025.3.1.0"
    (k,) = doc["kernels"]
    raw = kernels(RAW)[VADD_SMALL]
    assert (k["name"], k["grid"], k["block"]) == (VADD, "(4096, 1, 1)", "(256, 1, 1)")
    # the same work as the raw page's launch 3, from another run: 2^20 FADD; 2 reads + 1 write of
    # 4 B per element through L1 (12,582,912 B); the 8 MiB read from DRAM, the 4 MiB written
    # left in the L2
    assert k["flop"]["fp32"] == pytest.approx(2**20, rel=1e-9)
    assert k["flop"]["fp32"] == pytest.approx(raw["flop"]["fp32"], rel=1e-6)
    assert k["bytes"]["l1"] == raw["bytes"]["l1"] == 12 * 2**20
    assert k["bytes"]["dram"] == raw["bytes"]["dram"] == 8_391_680
    assert k["bytes"]["dram"] >= 8 * 2**20
    # ncu's default clock control (base): the SM ran at 1.469 GHz here, 2.037 GHz in the raw page
    device = doc["devices"][0]
    assert device["name"] == "NVIDIA H200"
    assert device["sm_clock_hz"] == pytest.approx(1.4689e9, rel=1e-4)
    assert device["roofs"]["compute_flop_per_s"]["fp32"] == pytest.approx(SMS * 256 * device["sm_clock_hz"])
    assert k["duration_s"] == pytest.approx(5.888e-6, abs=1e-12)  # slower than 5.152 us at 2.04 GHz


# --- the peaks run: a raw page of `--metrics` (.sum, .peak_sustained, .per_second, …), base units ----


def test_peaks_page_with_per_cycle_units_of_plain_counts_is_read() -> None:
    doc = document(PEAKS)
    assert doc["inputs"][0]["kernels"] == 16
    assert tuple(k["name"] for k in doc["kernels"]) == NAMES


def test_peaks_page_tensor_flops_are_never_a_volta_factor_on_hopper() -> None:
    found = document(PEAKS)["kernels"]
    # the f16 GEMM: 2 N^3 or unknown; the int8 GEMM and the expf loop: no tensor FLOPs
    assert found[HMMA]["flop"]["tensor"] in (None, 2 * N_WMMA**3)
    assert found[IMMA]["flop"]["tensor"] in (None, 0.0)
    assert found[EXPF]["flop"]["tensor"] in (None, 0.0)


def test_peaks_page_tensor_flops_on_hopper_are_unknown_and_say_why() -> None:
    found = document(PEAKS)["kernels"]
    # the page's sm__inst_executed_pipe_tensor.sum: 33,554,432 for the f16 GEMM, whose 2 N^3 =
    # 137,438,953,472 FLOP make 4096 per instruction (HMMA.16816), 8x the V100's 512; no factor
    # fits every CC 9.0 kernel, so none: unknown, with the reason, never 17,179,869,184
    for index in (HMMA, IMMA, EXPF):
        k = found[index]
        assert k["flop"]["tensor"] is None and k["flop"]["total"] is None
        assert any(
            n.startswith(
                "tensor FLOPs unknown: sm__inst_executed_pipe_tensor x FLOPs per instruction, "
                "not known on CC 9.0"
            )
            and "sm__ops_path_tensor_*" in n
            for n in k["notes"]
        )
    # no tensor-pipe instruction and no CUDA-core FLOP count (vector_add_f32 on this page): as an
    # idle tensor pipe, it is no FLOP total (never 0 FLOP, on which bytes alone would bind)
    assert found[0]["flop"]["tensor"] is None and found[0]["flop"]["total"] is None
    assert "flop_tensor" not in found[0]["recipe"]
    # nor a tensor roof of 264 instructions x 512 per clock: the built-in H200's dense FP16
    # tensor, 4096 FLOP/SM/clk x 132 SMs x the median SM clock
    device = document(PEAKS)["devices"][0]
    tensor_roof = device["roofs"]["compute_flop_per_s"]["tensor"]
    assert tensor_roof == pytest.approx(4096 * SMS * device["sm_clock_hz"], rel=1e-9)


# --- what is wrong today (issue 28), stated as the right behaviour -------------------------------


@pytest.mark.parametrize("index", [IMMA, REDUCE], ids=["wmma_gemm_s8", "reduce_sum_i32"])
def test_a_kernel_without_flops_has_no_zero_flop_roofline(index: int) -> None:
    k = kernels(RAW)[index]
    # undefined (null) or a real ceiling; 0 FLOP/s says the kernel can do no work at all
    assert k["attainable_flop_per_s"] != 0.0
    assert all(cap != 0.0 for cap in k["cap_flop_per_s"].values())


def test_the_int8_gemm_compute_cap_is_the_int8_tensor_peak_or_undefined() -> None:
    k = kernels(RAW)[IMMA]
    assert k["cap_flop_per_s"].get("compute") in (None, k["tensor_paths"]["int8"]["peak_per_s"])


@pytest.mark.parametrize("index", [HMMA, IMMA, NAIVE], ids=["wmma_gemm_f16", "wmma_gemm_s8", "sgemm_naive"])
def test_headroom_at_the_current_access_pattern_is_what_the_busiest_unit_leaves(index: int) -> None:
    # wmma_gemm_f16: 4.969 ms x (1 - 96.70 / 100) = 0.164 ms at most (L1 99.89 %: 5.5 us)
    k = kernels(RAW)[index]
    limit_s = k["duration_s"] * (1 - k["sol_pct"]["memory"] / 100)
    headroom_sol_s = k.get("headroom_sol_s")
    assert headroom_sol_s is not None
    assert headroom_sol_s <= limit_s * (1 + 1e-9)


@pytest.mark.parametrize("index", [L2_READ, HMMA], ids=["l2_resident_read", "wmma_gemm_f16"])
def test_a_compute_ceiling_is_named_by_what_set_it(index: int) -> None:
    doc = document(RAW)
    k = doc["kernels"][index]
    ceiling, pct = k["compute_ceiling"], k["compute_ceiling_pct"]
    if ceiling == "fp32":  # a precision: its share is the FLOP rate over that roof at this clock
        fp32_roof = SMS * 256 * SM_CLOCK_GHZ[index] * 1e9
        assert pct == pytest.approx(100 * k["flop"]["fp32"] / k["duration_s"] / fp32_roof, abs=1.0)
    elif ceiling.startswith("tensor"):  # a tensor path: never busier than the tensor pipe
        assert pct <= k["pipe_pct"]["tensor"] + 0.5
    else:
        assert ceiling.startswith("pipe:")


def test_the_markdown_report_tells_every_kernel_apart() -> None:
    done = run_cli("analyze", str(RAW), "--format", "markdown")
    assert done.returncode == 0, done.stderr
    # the kernel table's rows: 14 kernel groups, of 13 distinct names (vector_add_f32 at two sizes,
    # its two rows told apart by their launch shapes: the table has no launch shape column)
    cells = re.findall(r"^\| \d+ \| `([^`]*)` \|", done.stdout, flags=re.MULTILINE)[:14]
    assert len(cells) == len(set(cells)) == 14 and len(set(NAMES)) == 13
    assert [c for c in cells if c.startswith("vector_add")] == [f"{VADD} 262144×256", f"{VADD} 4096×256"]
