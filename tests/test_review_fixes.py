"""Regressions found in review: a zero tensor-instruction count is no FLOP total, and a launch
that measured nothing does not move its device's roofs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import input_file, run_cli

HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
)


def _details(metrics: list[tuple[str, str, str]]) -> str:
    kernel = '"0","1","a.out","127.0.0.1","sgemm(float *)","1","7","(256, 1, 1)","(64, 1, 1)","0","8.6"'
    rows = [f'{kernel},"Command line profiler metrics","{n}","{u}","{v}"\n' for n, u, v in metrics]
    return HEADER + "".join(rows)


def test_no_tensor_instruction_alone_is_no_flop_total() -> None:
    # DRAM bytes, a duration and sm__inst_executed_pipe_tensor.sum = 0, but no FADD/FMUL/FFMA
    # count: the kernel's FLOPs are unknown, so no roof can be said to bind. It was called
    # memory-bound (dram) · roofline on a total of 0 FLOP (an SGEMM, whose FFMAs were not collected)
    text = _details(
        [
            ("dram__bytes.sum", "byte", "32,746,880"),
            ("gpu__time_duration.sum", "nsecond", "10,776,576"),
            ("sm__inst_executed_pipe_tensor.sum", "inst", "0"),
        ]
    )
    done = run_cli("analyze", str(input_file("tensor0.csv", text)), "--gpu", "a10g", "-F", "json")
    assert done.returncode == 0, done.stderr
    k = json.loads(done.stdout)["kernels"][0]
    assert k["flop"]["total"] is None
    assert k["verdict_basis"] != "roofline" and k["bound"] != "memory"


def test_a_failed_launch_does_not_move_the_device_roofs(corpus: Path) -> None:
    # gtx1660s: 2 launches measured at 1.37 and 1.09 GHz, a third failed (every counter n/a). The
    # failed one took the roofs at the boost clock (1.83 GHz) into the median: every roof 11 % high,
    # and the header said "at boost clock" where the plot said "measured"
    report = corpus / "gtx1660s_rep_2021.1_raytracer.ncu-rep"
    if not report.exists():
        pytest.skip("corpus not present")
    whole = run_cli("analyze", str(report), "-F", "json")
    assert whole.returncode == 0, whole.stderr
    device = json.loads(whole.stdout)["devices"][0]
    fp32 = device["roofs"]["compute_flop_per_s"]["fp32"]
    # 128 FLOP/SM/clk x 22 SMs x the median clock of the two launches that measured
    assert fp32 == pytest.approx(128 * 22 * device["sm_clock_hz"], rel=1e-6)
    table = run_cli("analyze", str(report))
    assert "(measured)" in table.stdout.splitlines()[0]
    assert "boost clock" not in table.stdout
