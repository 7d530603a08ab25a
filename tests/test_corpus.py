"""Conformance over ../shared/ncu-corpus (40 real ncu outputs + reexport/): skipped when absent."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import analyzed, normalize, read_once, read_result

from ncu_roof.base.vocabulary import PRECISIONS, TIERS, Bound, TrafficDefinition, VerdictBasis
from ncu_roof.errors import NcuRoofError
from ncu_roof.ingest import read_input

pytestmark = pytest.mark.corpus

_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
_FILES = (
    sorted(p for p in _CORPUS.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    if _CORPUS.is_dir()
    else []
)
_REPORTS = sorted(_CORPUS.glob("*.ncu-rep")) if _CORPUS.is_dir() else []
_FORMS = ("ncu2024.1-raw-base", "ncu2022.3-raw-auto", "ncu2024.1-details")
_QUANTITIES = ["duration_s", *(f"flop_{p}" for p in PRECISIONS), *(f"{t}_bytes" for t in TIERS)]
# Every form of one run must agree within 0.5 %. The details page prints 3-4 significant digits
# (e.g. "284.70 usecond", "1.82 Tbyte/second"): a printed value is off by at most half a unit of
# its last digit, 0.5/100 = 0.5 % for three digits, so 0.5 % is also what the printed precision
# allows; every comparison in the corpus passes at it.
_REL = 0.005


# what an unknown verdict must say (one of these notes): a reason, not just any note
_NO_VERDICT_REASONS = (
    "missing counters",
    "no compute roofs for this device",
    "duration is 0",
    "collection failed",
    "no roofline verdict",
)


def _id(path: Path) -> str:
    return str(path.relative_to(_CORPUS))


def test_corpus_is_there(corpus: Path) -> None:
    assert len(_REPORTS) == 17
    assert len(_FILES) >= 80


@pytest.mark.parametrize("path", _FILES, ids=_id)
def test_every_file_loads_or_fails_clearly(corpus: Path, path: Path) -> None:
    table = read_result(path)
    if isinstance(table, NcuRoofError):
        assert table.message.strip()
        assert table.hint and table.hint.strip()
        return
    assert len(table.frame) > 0
    analysis = analyzed(path)
    assert len(analysis.kernels) == len(table.frame)
    for kernel in analysis.kernels:
        # a verdict, or a precise reason why not
        reasons = [note for note in kernel.notes if note.startswith(_NO_VERDICT_REASONS)]
        assert kernel.bound is not Bound.UNKNOWN or reasons, (kernel.name, kernel.notes)


def test_known_loadable_and_failing_files(corpus: Path) -> None:
    failing = {path.name for path in _FILES if isinstance(read_result(path), NcuRoofError)}
    # the 3 edge-case CSVs that hold no CSV: everything else loads (console text included)
    assert failing == {
        "b200_edge_error-code-only.csv",
        "b200_edge_prof-lines-only-no-csv.csv",
        "unknown_edge_received-signal-no-kernels.csv",
    }


@functools.cache  # shared by the tests below: read it, never modify it
def _normalized(path: Path) -> pd.DataFrame:
    table = read_once(path)
    return normalize(table.frame[table.metric_columns])


@pytest.mark.parametrize("report", _REPORTS, ids=_id)
def test_forms_of_one_run_agree(corpus: Path, report: Path) -> None:
    stem = report.name.removesuffix(".ncu-rep")
    base = _normalized(report)
    others = {
        form: corpus / "reexport" / f"{stem}.{form}.csv"
        for form in _FORMS
        if (corpus / "reexport" / f"{stem}.{form}.csv").exists()
    }
    assert "ncu2024.1-raw-base" in others and "ncu2024.1-details" in others
    compared = 0
    for form, path in others.items():
        other = _normalized(path)
        assert len(other) == len(base), form
        for quantity in _QUANTITIES:
            a = base[quantity].to_numpy(dtype=float)
            b = other[quantity].to_numpy(dtype=float)
            both = ~np.isnan(a) & ~np.isnan(b)
            compared += int(both.sum())
            np.testing.assert_allclose(b[both], a[both], rtol=_REL, err_msg=f"{form} {quantity}")
    if stem != "a100pcie_rep_2022.4.0_all-nan-failed":  # every counter of that run is n/a
        assert compared >= 2 * len(base), "no value was compared"


def _launch_identity(path: Path) -> list[tuple[object, ...]]:
    return list(read_once(path).launches.select("id", "name", "grid", "block", "cc").iter_rows())


@pytest.mark.parametrize("report", _REPORTS, ids=_id)
def test_forms_of_one_run_agree_on_launch_shapes(corpus: Path, report: Path) -> None:
    # grid, block and cc of each kernel: the same text from the report and from every re-export
    # (ncu 2022.3's raw page has no Grid Size / Block Size / CC columns, only launch__* and
    # device__attribute_* metrics)
    stem = report.name.removesuffix(".ncu-rep")
    forms = sorted((corpus / "reexport").glob(f"{stem}.*.csv"))
    assert forms, stem
    base = _launch_identity(report)
    for path in forms:
        assert _launch_identity(path) == base, path.name
    # only launches whose collection failed have no shape (ncu 2024.1 writes "(0, 0, 0)" for them)
    unknown = [ident for ident, _, grid, block, _ in base if grid is None or block is None]
    assert unknown == _NO_LAUNCH_CONFIGURATION.get(stem, []), unknown
    assert all(cc for *_, cc in base)


_NO_LAUNCH_CONFIGURATION = {"a100pcie_rep_2022.4.0_all-nan-failed": [0], "gtx1660s_rep_2021.1_raytracer": [2]}


def test_launch_shapes_of_hand_checked_runs(corpus: Path) -> None:
    # reexport/a40_rep_2022.4.0_indexspaces.ncu2022.3-raw-auto.csv: launch__grid_dim_x/y/z of
    # kernels 0-4 are 39312/1/1, 5397/1/1, 6308/1/1, 5418/1/1, 84/1/1; launch__block_dim_x/y/z
    # 256.000000/1.000000/1.000000, kernel 4's 32/24/1; compute_capability_major/minor 8/6
    a40 = _launch_identity(corpus / "reexport" / "a40_rep_2022.4.0_indexspaces.ncu2022.3-raw-auto.csv")
    grids = ["(39312, 1, 1)", "(5397, 1, 1)", "(6308, 1, 1)", "(5418, 1, 1)", "(84, 1, 1)"]
    assert [(grid, block) for _, _, grid, block, _ in a40] == [
        *((grid, "(256, 1, 1)") for grid in grids[:4]),
        (grids[4], "(32, 24, 1)"),
    ]
    assert {cc for *_, cc in a40} == {"8.6"}
    # v100 (an ncu 2019 report): launch__grid_size 4096, launch__block_size 256 and no per-axis
    # dims; ncu 2024.1 writes Grid Size "(1048576, 1, 1)" (the thread count) for it: every form
    # gives the totals
    v100 = _launch_identity(corpus / "reexport" / "v100_rep_basic_vectorops.ncu2024.1-raw-base.csv")
    assert [(grid, block, cc) for *_, grid, block, cc in v100] == [("4096", "256", "7.0")]
    # a collection that failed: ncu 2024.1 writes "(0, 0, 0)", the report holds nothing
    failed = _launch_identity(
        corpus / "reexport" / "a100pcie_rep_2022.4.0_all-nan-failed.ncu2024.1-raw-base.csv"
    )
    assert [(grid, block, cc) for *_, grid, block, cc in failed] == [(None, None, "8.0")]


def test_the_forms_compare_many_values(corpus: Path) -> None:
    # Guard against a vacuous comparison: the raw-base and report forms share durations for all
    # kernels and FLOP/byte counts for the --set full / roofline runs.
    stem = "h100pcie_rep_2025.1_full_silu"
    rep = _normalized(corpus / f"{stem}.ncu-rep")
    raw = _normalized(corpus / "reexport" / f"{stem}.ncu2024.1-raw-base.csv")
    for quantity in ("duration_s", "flop_fp32", "dram_bytes", "l2_bytes"):
        assert rep[quantity].notna().all() and raw[quantity].notna().all(), quantity


def test_hand_checked_h100_silu(corpus: Path) -> None:
    # Cells of kernel 0 in reexport/h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv:
    #   gpu__time_duration.sum = 284704 nsecond
    #   dram__bytes_read.sum = 268463104 byte, dram__bytes_write.sum = 248602624 byte
    #   smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma}_pred_on.sum.per_cycle_elapsed
    #     = 214.28, 0, 2142.81 inst/cycle; smsp__cycles_elapsed.avg.per_second = 1100023859.81
    duration = 284704e-9
    fp32 = (214.28 + 0 + 2 * 2142.81) * 1100023859.81 * duration  # FMA counts 2
    for path in (
        corpus / "reexport" / "h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv",
        corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep",
    ):
        k0 = _normalized(path).iloc[0]
        assert k0["duration_s"] == pytest.approx(duration, rel=1e-9)
        assert k0["dram_bytes"] == pytest.approx(268463104 + 248602624, rel=1e-9)
        assert k0["flop_fp32"] == pytest.approx(fp32, rel=1e-4)  # the CSV prints 2 decimals
        assert k0["flop_fp32"] == pytest.approx(1.40930e9, rel=1e-4)
        # L2 under the default (nsight) definition = what Nsight >= 2024.1 draws: 32 B x
        # lts__lts2xbar_cycles_active.sum.per_second = 29,549,107,142.857 /s x duration, judged
        # against the same counter's peak (160 cycles/clk x 32 B x the L2 clock).
        assert k0["l2_bytes"] == pytest.approx(32 * 29549107142.857143 * duration, rel=1e-6)
        assert k0["l2_bytes_recipe"] == "rate*time:lts__lts2xbar_cycles_active.sum.per_second*32"
        assert k0["bw_l2_byte_per_s_recipe"].startswith("report:lts__lts2xbar_cycles_active.sum*32")
        assert k0["bw_l2_byte_per_s"] == pytest.approx(160 * 32 * 1093774586.9394178, rel=1e-6)
        # L1 = Nsight's writeback on CC 9.0: l1tex__lsu_writeback_active_mem_lgds.sum = 2,621,440
        # cycles x 128 B; its roof is 114 cycles/clk (one per SM) x 128 B x the L1 clock.
        assert k0["l1_bytes"] == pytest.approx(2621440 * 128, rel=1e-9)
        assert k0["bw_l1_byte_per_s"] == pytest.approx(114 * 128 * 1100023859.8068736, rel=1e-6)
        # counted: every L2 lookup (lts__t_sectors.sum = 25,623,330 x 32 B, fabric lookups
        # included), judged against its own peak from its pct_of_peak_sustained_elapsed (34.28 %)
        table = read_once(path)
        counted = normalize(table.frame[table.metric_columns], traffic=TrafficDefinition.COUNTED).iloc[0]
        assert counted["l2_bytes"] == pytest.approx(25623330 * 32, rel=1e-9)
        assert counted["l2_bytes"] / duration / counted["bw_l2_byte_per_s"] == pytest.approx(0.3428, abs=1e-4)
        assert k0["flop_fp64"] == 0.0


def test_hand_checked_a10g_roofline_set(corpus: Path) -> None:
    # Kernel 0 of reexport/a10g_rep_2023.1.1_roofline-set.ncu2024.1-raw-base.csv (--set roofline:
    # rates only): duration 431648 nsecond; dram__bytes.sum.per_second = 47911631699.90 byte/second
    # → DRAM bytes = rate x time; FP32 = 2 x ffma 1891.55 inst/cycle (fadd, fmul 0) x
    # smsp__cycles_elapsed.avg.per_second 1315081269.92 x duration.
    duration = 431648e-9
    k0 = _normalized(corpus / "reexport" / "a10g_rep_2023.1.1_roofline-set.ncu2024.1-raw-base.csv").iloc[0]
    assert k0["duration_s"] == pytest.approx(duration, rel=1e-9)
    assert k0["dram_bytes"] == pytest.approx(47911631699.90 * duration, rel=1e-9)
    assert k0["dram_bytes_recipe"] == "rate*time:dram__bytes.sum.per_second"
    assert k0["flop_fp32"] == pytest.approx(2 * 1891.55 * 1315081269.92 * duration, rel=1e-9)
    assert k0["flop_fp32_recipe"].startswith("rate*time:")


def test_empty_unit_duration_of_a_newer_report(corpus: Path) -> None:
    # ncu 2024.1 printed gpu__time_duration.sum of this 2025.2.1 report with an empty unit
    # ("", 60896): that is nanoseconds (the base unit), not 60896 seconds.
    stem = "rtx5060ti_rep_2025.2.1_occupancy"
    for path in (
        corpus / "reexport" / f"{stem}.ncu2024.1-raw-base.csv",
        corpus / "reexport" / f"{stem}.ncu2024.1-details.csv",
    ):
        assert _normalized(path).loc[0, "duration_s"] == pytest.approx(60896e-9, rel=1e-9)


def test_no_csv_files_quote_ncu(corpus: Path) -> None:
    with pytest.raises(NcuRoofError, match="No kernels were profiled"):
        read_input(str(corpus / "unknown_edge_received-signal-no-kernels.csv"))
    with pytest.raises(NcuRoofError, match=r"error code \(1\)"):
        read_input(str(corpus / "b200_edge_error-code-only.csv"))


def test_corpus_verdicts_are_not_all_unknown(corpus: Path) -> None:
    kernels = analyzed(corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep").kernels
    assert all(k.binding is not None and not math.isnan(k.duration_s or math.nan) for k in kernels)


def test_every_kernel_with_sol_percentages_has_a_verdict(corpus: Path) -> None:
    # Nsight's SOLBottleneck rule needs only the SM and memory throughput percentages: a kernel
    # that has both gets a verdict with its basis, even without counters or roofs.
    with_sol = 0
    unjudged = []
    for path in _FILES:
        if isinstance(read_result(path), NcuRoofError):
            continue
        for kernel in analyzed(path).kernels:
            if kernel.sol_pct["sm"] is None or kernel.sol_pct["memory"] is None:
                continue
            with_sol += 1
            if kernel.bound is Bound.UNKNOWN or kernel.verdict_basis is VerdictBasis.NONE:
                unjudged.append(f"{_id(path)}: {kernel.name}")
    print(f"{with_sol} kernels with SOL percentages, {len(unjudged)} without a verdict")
    # every file and re-export in the corpus, counted once each (console captures included; a
    # --print-summary kernel once per invocation: the esmm summary's 3 kernels x 10, heat3d's 4 + 10 + 20)
    assert with_sol == 928 - 6 + 30 + 34 == 986
    assert unjudged == []
