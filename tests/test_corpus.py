"""Conformance over ../shared/ncu-corpus (40 real ncu outputs + reexport/): skipped when absent."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ncu_roof.analysis import analyze
from ncu_roof.errors import NcuRoofError
from ncu_roof.ingest import read_input
from ncu_roof.model import PRECISIONS, TIERS, Bound
from ncu_roof.recipe import normalize

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


def _id(path: Path) -> str:
    return str(path.relative_to(_CORPUS))


def test_corpus_is_there(corpus: Path) -> None:
    assert len(_REPORTS) == 17
    assert len(_FILES) >= 80


@pytest.mark.parametrize("path", _FILES, ids=_id)
def test_every_file_loads_or_fails_clearly(corpus: Path, path: Path) -> None:
    try:
        table = read_input(str(path))
    except NcuRoofError as err:
        assert err.message.strip()
        assert err.hint and err.hint.strip()
        return
    assert len(table.frame) > 0
    analysis = analyze([table])
    assert len(analysis.kernels) == len(table.frame)
    for kernel in analysis.kernels:
        # a verdict, or a precise reason why not
        assert kernel.bound is not Bound.UNKNOWN or kernel.notes, kernel.name


def test_known_loadable_and_failing_files(corpus: Path) -> None:
    failing = set()
    for path in _FILES:
        try:
            read_input(str(path))
        except NcuRoofError:
            failing.add(path.name)
    # the 3 edge-case CSVs that hold no CSV: everything else loads (console text included)
    assert failing == {
        "b200_edge_error-code-only.csv",
        "b200_edge_prof-lines-only-no-csv.csv",
        "unknown_edge_received-signal-no-kernels.csv",
    }


def _normalized(path: Path) -> pd.DataFrame:
    table = read_input(str(path))
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
        # L2 = counted traffic (reads and writes): lts__t_sectors.sum = 25,623,330 sectors x 32 B.
        # Its roof is borrowed from Nsight's lts2xbar definition, as lts__t_sectors has no
        # peak_sustained in this report.
        assert k0["l2_bytes"] == pytest.approx(25623330 * 32, rel=1e-9)
        assert k0["l2_bytes_recipe"] == "counter:lts__t_sectors.sum*32"
        assert k0["bw_l2_byte_per_s_recipe"].startswith("roof of nsight:")
        # L1 = global/local load and store sectors x 32: 8,388,608 ld + 33,551,588 st (stores are
        # 16 sectors per request: uncoalesced), more than DRAM, as traffic through L1 must be.
        assert k0["l1_bytes"] == pytest.approx((8388608 + 33551588) * 32, rel=1e-9)
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
    table = read_input(str(corpus / "h100pcie_rep_2025.1_full_silu.ncu-rep"))
    kernels = analyze([table]).kernels
    assert all(k.binding is not None and not math.isnan(k.duration_s or math.nan) for k in kernels)
