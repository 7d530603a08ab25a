"""Headroom a reviewer can trust: the saving at the roof (`headroom_s`) beside the saving the
busiest Speed-of-Light unit still allows (`headroom_sol_s`), each tier's bytes-based % of its
roof beside the unit's throughput %, the notes where the two differ a lot, and a fix-first
headline that says which saving it ranks by and what the fix is."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import analyzed, run_cli
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.groups import group_kernels
from ncu_roof.analysis.sol import BUSIEST_UNIT_ORDER, busiest_unit_arrays, headroom_array
from ncu_roof.api import Analysis
from ncu_roof.base.vocabulary import SOL_KEYS
from ncu_roof.render.csvout import render_csv

# fixtures/headroom_sol_busy_units.csv: an H100 PCIe at 1 GHz (SM and L1) and 2 GHz (DRAM), both
# launches 100 us. Roofs: FP32 2 x 16384 FFMA/cycle = 32.768 TFLOP/s; DRAM 1000 B/cycle = 2 TB/s;
# L1 (l1tex__t_bytes) 16384 B/cycle = 16.384 TB/s.
BUSY = "headroom_sol_busy_units.csv"
DURATION_S = 100e-6


def test_an_l1_bound_launch_could_save_90_percent_at_its_roof_but_3_percent_as_it_runs(
    fixtures: Path,
) -> None:
    k = analyzed(fixtures / BUSY).kernels[0]
    # L1 163.84 MB / 16.384 TB/s = 10 us (10% of its byte peak); DRAM 10 MB / 2 TB/s = 5 us;
    # FP32 2e8 FLOP / 32.768 TFLOP/s = 6.1 us: L1 binds at 10% of roof
    assert k.binding == "l1" and k.pct_of_roof == pytest.approx(10.0)
    assert k.pct_of_bandwidth == pytest.approx({"dram": 5.0, "l2": None, "l1": 10.0, "shared": None})
    # l1tex__throughput 97 % is the busiest SOL unit: 100 us x (1 - 0.97) = 3 us, not 90 us
    assert k.sol_busiest_unit == "l1"
    assert k.headroom_sol_s == pytest.approx(3e-6)
    assert (
        "L1 is 97% busy moving 10% of its byte peak: about 10x more wavefronts per byte than ideal — "
        "uncoalesced access or bank conflicts (shared-memory accesses count in its throughput too)"
    ) in k.notes


def test_an_issue_bound_sgemm_is_told_that_its_instruction_mix_binds(fixtures: Path) -> None:
    k = analyzed(fixtures / BUSY).kernels[1]
    # FFMA 311.296 M x 2 = 622.592 MFLOP / 32.768 TFLOP/s = 19 us of 100 us: compute at 19% of roof
    assert k.binding == "compute" and k.compute_ceiling == "fp32"
    assert k.pct_of_roof == pytest.approx(19.0)
    assert k.sol_busiest_unit == "sm" and k.headroom_sol_s == pytest.approx(30e-6)  # SM 70 %
    assert (
        "SM 70% busy (busiest pipe: lsu pipe 70%) at 19% of the fp32 roof: the instruction mix, not "
        "the FMA units, binds"
    ) in k.notes


def test_the_headline_says_which_saving_it_ranks_by_and_what_the_fix_is(fixtures: Path) -> None:
    done = run_cli("analyze", str(fixtures / BUSY))
    assert done.returncode == 0, done.stderr
    line = " ".join(done.stdout.split())  # the headline wraps at the terminal's width
    assert (
        "fix first: l1_busy_uncoalesced — could save 90 µs (45% of the time) if it reached its l1 roof "
        "(ranked by this); as it runs, L1 is 97% busy, which allows 3 µs: the fix is fewer L1 "
        "wavefronts per byte (coalesced access, no shared-memory bank conflicts); now memory-bound "
        "(l1) · roofline, 10% of roof"
    ) in line


def test_json_csv_and_the_launch_table_carry_both_savings(fixtures: Path) -> None:
    done = run_cli("analyze", str(fixtures / BUSY), "--format", "json")
    document = json.loads(done.stdout)
    first, second = document["kernels"]
    assert (first["headroom_s"], first["headroom_sol_s"]) == pytest.approx((90e-6, 3e-6))
    assert (second["headroom_s"], second["headroom_sol_s"]) == pytest.approx((81e-6, 30e-6))
    assert first["pct_of_bandwidth"]["l1"] == pytest.approx(10.0) and first["sol_pct"]["l1"] == 97.0
    (fix,) = document["fix_first"]
    assert fix["ranked_by"] == "headroom_s" and fix["sol_busiest_unit"] == "l1"
    assert fix["headroom_sol_s"] == pytest.approx(3e-6)
    assert [g["headroom_sol_s"] for g in document["groups"]] == pytest.approx([3e-6, 30e-6])
    analysis = analyzed(fixtures / BUSY)
    table = Analysis.of(analysis).to_arrow().to_pydict()
    assert table["headroom_sol_s"] == pytest.approx([3e-6, 30e-6])
    assert table["headroom_s"] == pytest.approx([90e-6, 81e-6])
    assert table["sol_busiest_unit"] == ["l1", "sm"]
    cells = list(csv.DictReader(io.StringIO(render_csv(analysis))))
    assert [float(c["headroom_sol_s"]) for c in cells] == pytest.approx([3e-6, 30e-6])
    assert [float(c["l1_bandwidth_pct"]) for c in cells] == pytest.approx([10.0, 1.0])


def test_a_launch_without_sol_has_no_sol_headroom(fixtures: Path) -> None:
    (k,) = analyzed(fixtures / "naive_sgemm_l1_without_roof.csv").kernels
    assert k.sol_busiest_unit is None and k.headroom_sol_s is None


def _pct() -> st.SearchStrategy[float]:
    return st.one_of(st.just(math.nan), st.floats(0.0, 120.0))


@given(
    st.lists(
        st.tuples(st.one_of(st.just(math.nan), st.floats(1e-9, 10.0)), *[_pct() for _ in SOL_KEYS]),
        min_size=1,
        max_size=20,
    )
)
def test_the_sol_headroom_never_exceeds_what_the_busiest_unit_allows(rows: list[tuple[float, ...]]) -> None:
    duration = np.array([r[0] for r in rows])
    sol = {key: np.array([r[1 + i] for r in rows]) for i, key in enumerate(SOL_KEYS)}
    busiest, unit = busiest_unit_arrays(sol, len(rows))
    headroom = headroom_array(duration, busiest)
    for j in range(len(rows)):
        known = {key: float(v[j]) for key, v in sol.items() if not math.isnan(v[j])}
        if not known:
            assert unit[j] is None and math.isnan(headroom[j])
            continue
        top = max(known.values())
        assert known[unit[j]] == top  # the busiest unit, the memory units first on a tie
        assert unit[j] == next(u for u in BUSIEST_UNIT_ORDER if known.get(u) == top)
        if math.isnan(duration[j]) or top > 100.0:
            assert math.isnan(headroom[j])  # no duration, or a unit above its peak: no saving said
            continue
        assert 0.0 <= headroom[j] <= duration[j] * (1.0 - top / 100.0) * (1 + 1e-12)
        for pct in known.values():  # and so within what every unit allows
            assert headroom[j] <= duration[j] * (1.0 - pct / 100.0) * (1 + 1e-12) + 1e-300


@pytest.mark.corpus
def test_no_corpus_launch_is_promised_more_than_its_busiest_unit_allows(corpus: Path) -> None:
    for path in sorted(corpus.glob("*.ncu-rep")):
        analysis = analyzed(path)
        for k in analysis.kernels:
            known = [v for v in k.sol_pct.values() if v is not None]
            if k.headroom_sol_s is None:
                assert not known or k.duration_s is None or max(known) > 100.0, path.name
                continue
            assert k.duration_s is not None
            assert k.headroom_sol_s <= k.duration_s * (1 - max(known) / 100) * (1 + 1e-12), path.name
        for group in group_kernels(analysis):
            rooms = [analysis.kernels[j].headroom_sol_s for j in group.rows]
            assert group.headroom_sol_s == pytest.approx(sum(r for r in rooms if r is not None) or None)
