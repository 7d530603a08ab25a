"""diff: launches pair within their device and NVTX range, a kernel is judged once (its time over
the pairs timed on both sides) by the headline, the tables and the gate; the total too."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import conftest
import pytest
from test_diff import HOSTILE, run_cli

from ncu_roof.base.vocabulary import MatchBy
from ncu_roof.compare.comparison import Diff, diff, gate
from ncu_roof.compare.pairs import Status
from ncu_roof.errors import GateError
from ncu_roof.render.diffout import diff_json_pieces, headline, render_diff_markdown, render_diff_table
from ncu_roof.render.output import joined

PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
HEADER = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream"]
HEADER += ["Block Size", "Grid Size", "Device", "CC", "device__attribute_display_name"]
HEADER += ["gpu__time_duration.sum", "dram__bytes.sum"]
Launch = tuple[str, float, int, str | None]  # name[@GRID], duration ns, device, NVTX range (None: none)


def raw_csv(name: str, launches: list[Launch]) -> str:
    """A raw page of `launches` on an A100, with a push/pop range column where one has a range."""
    ranges = any(r is not None for *_, r in launches)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)
    writer.writerow([*HEADER, *([PUSH_POP] if ranges else [])])
    writer.writerow([""] * 12 + ["nsecond", "byte"] + [""] * ranges)
    for i, (named, ns, device, nvtx) in enumerate(launches):
        where = f'1  "<default domain>:{nvtx}:none:none:RGB:0xff00ff00:ASCII:{nvtx}" ' if nvtx else ""
        kernel, _, grid = named.partition("@")
        ident = [i, 1, "app", "host", kernel, 1, 7, "(256, 1, 1)", f"({grid or 4096}, 1, 1)", device, "8.0"]
        writer.writerow([*ident, "NVIDIA A100-SXM4-40GB", ns, 1e6, *([where] if ranges else [])])
    return str(conftest.input_file(name, out.getvalue()))


def compared(base: list[Launch], head: list[Launch], **options: object) -> Diff:
    paths = raw_csv("base.csv", base), raw_csv("head.csv", head)
    return diff(*(conftest.analyzed(Path(p)) for p in paths), **options)  # type: ignore[arg-type]


def changes(result: Diff) -> list[tuple[str, float | None, str]]:
    """Each pair's name, time change (rounded) and status."""
    rounded = (None if p is None else round(p, 1) for p in (k.duration_s.delta_pct for k in result.kernels))
    return [(k.name, pct, k.status.value) for k, pct in zip(result.kernels, rounded, strict=True)]


def test_launches_pair_within_their_device_when_both_runs_used_several() -> None:
    # kA: 10 µs on device 0 and 20 µs on device 1 in both runs, the head listing device 1 first
    result = compared(
        [("kA", 10_000, 0, None), ("kA", 20_000, 1, None)], [("kA", 20_000, 1, None), ("kA", 10_000, 0, None)]
    )
    assert changes(result) == [("kA", 0.0, "unchanged"), ("kA", 0.0, "unchanged")]
    assert result.paired_on == ("name", "grid", "block", "ordinal")
    pairs = json.loads(joined(diff_json_pieces(result)))["kernels"]
    assert [(k["base_device"], k["head_device"]) for k in pairs] == [(1, 1), (0, 0)]
    assert "kA 4096×256 on device 1" in render_diff_table(result, width=200)
    # a run on one GPU and a run whose only GPU is device 1: paired, not all new and removed
    alone = compared([("kA", 10_000, 0, None)], [("kA", 11_000, 1, None)])
    assert changes(alone) == [("kA", 10.0, "regressed")] and "ordinal" not in alone.paired_on


def test_launches_pair_within_their_nvtx_range_when_both_runs_carry_ranges() -> None:
    base: list[Launch] = [("kA", 10_000, 0, "fwd"), ("kA", 30_000, 0, HOSTILE)]
    head: list[Launch] = [("kA", 10_000, 0, "warmup"), *base]  # one launch added in a range of its own
    result = compared(base, head)
    assert changes(result) == [("kA", None, "only-head"), ("kA", 0.0, "unchanged"), ("kA", 0.0, "unchanged")]
    assert [k.nvtx for k in result.kernels] == ["warmup", "fwd", HOSTILE]
    assert "kA 4096×256 in fwd" in render_diff_table(result, width=200)
    markdown = render_diff_markdown(result)
    rows = [line for line in markdown.splitlines() if line.startswith("| `kA`")]
    assert rows and all(line.replace("\\|", "").count("|") == 9 for line in rows)
    assert "<a|b" not in markdown and "in void k<a\\|b" in markdown
    # a base without ranges pairs with the head's launches whatever their ranges
    plain = compared([("kA", 10_000, 0, None), ("kA", 30_000, 0, None)], head)
    assert [k.status for k in plain.kernels] == [Status.UNCHANGED, Status.IMPROVED, Status.ONLY_HEAD]


def test_the_total_and_a_folded_row_are_over_the_matched_pairs() -> None:
    # kA 2 × 10 µs → 3 × 10 µs: the added launch is new time, not a 50 % slowdown
    result = compared([("kA", 10_000, 0, None)] * 2, [("kA", 10_000, 0, None)] * 3)
    assert result.total_duration_s.delta_pct == 0.0 and result.new_s == pytest.approx(1e-5)
    assert result.total_status is Status.UNCHANGED
    assert headline(result).startswith("total time 20 µs → 20 µs (0.0%), 10 µs new; kernels: 0 slower")
    (row,) = [line for line in render_diff_markdown(result).splitlines() if line.startswith("| `kA`")][:1]
    assert row.startswith("| `kA` `4096×256` ×2 → 3 | 20 µs → 20 µs | 0.0% |") and "✅ same" in row
    gate(result)


def test_a_head_with_extra_kernels_is_no_regression(corpus: Path) -> None:
    # the head re-profiles the report's 4 kernels (each within 1 %) and 5 launches more
    base = str(corpus / "a10g_rep_2023.1.1_roofline-set.ncu-rep")
    head = str(corpus / "a10g_details_base-units-nsecond_sgemm-flops-dram.csv")
    done = run_cli("diff", base, head, "--fail-on-regression", "5%")
    assert done.returncode == 0, done.stderr
    assert (
        "total time 1.21 ms → 1.21 ms (+0.1%), 13.5 ms new; kernels: 0 slower, 0 faster, 4 within"
        in done.stdout
    )


def test_a_kernel_whose_every_sixth_launch_doubled_fails_the_gate() -> None:
    # 30 launches of 9.9, 10, 10.1 µs; in the head every 6th (a 10.1 µs one) takes 20 µs:
    # 300 µs → 300 + 5 × 9.9 = 349.5 µs, +16.5 %, while the typical launch did not move
    base: list[Launch] = [("kA", 9_900 + 100 * (i % 3), 0, None) for i in range(30)]
    head: list[Launch] = [(n, 20_000 if i % 6 == 5 else ns, d, r) for i, (n, ns, d, r) in enumerate(base)]
    result = compared(base, head)
    (kernel,) = result.changes
    assert kernel.duration_s.delta_pct == pytest.approx(16.5)
    assert kernel.shift is not None and kernel.shift.high_pct is not None and kernel.shift.high_pct < 5
    assert kernel.status is Status.REGRESSED and "kernels: 1 slower" in headline(result)
    with pytest.raises(
        GateError, match=r"^1 kernel slower by more than 5% \(worst kA \+16\.5% \[.*the sum above"
    ):
        gate(result)


def test_the_gate_names_the_shift_that_made_a_kernel_slower() -> None:
    # 40 launches of 9.8-10.2 µs each 6 % slower, and one 200 µs launch unchanged: the kernel's time
    # is +4 % (under the limit), its launches' shift +6 % with its interval: the shift says why it
    # failed, not the +4 % (which lies outside the interval the message shows)
    base: list[Launch] = [("kA", 9_800 + 10 * (i % 41), 0, None) for i in range(40)]
    base.append(("kA", 200_000, 0, None))
    head: list[Launch] = [(n, ns * 1.06 if ns < 100_000 else ns, d, r) for n, ns, d, r in base]
    (kernel,) = (result := compared(base, head)).changes
    assert kernel.duration_s.delta_pct == pytest.approx(4.0, abs=0.1) and kernel.status is Status.REGRESSED
    assert kernel.shift is not None and kernel.shift.low_pct is not None and kernel.shift.low_pct > 5
    with pytest.raises(
        GateError, match=r"\(worst kA \+6\.0% \[\+5\.\d%, \+6\.\d%\] at 99%: real, reaching 5%\)"
    ):
        gate(result)


def test_noise_of_single_launches_is_no_slower_kernel() -> None:
    # ±8 % noise around 10 µs on each side: launches beyond 5 % both ways, the kernel within it
    base: list[Launch] = [("kA", round(10_000 * (1 + 0.08 * math.sin(i))), 0, None) for i in range(30)]
    head: list[Launch] = [("kA", round(10_000 * (1 + 0.08 * math.cos(i))), 0, None) for i in range(30)]
    result = compared(base, head)
    assert result.count(Status.REGRESSED) == 0 and abs(result.changes[0].duration_s.delta_pct or 99) < 5
    assert any(k.status is Status.REGRESSED for k in result.kernels)  # a launch's own mark
    assert "kernels: 0 slower, 0 faster, 1 within ±5%" in headline(result)
    assert "**ncu-roof diff: no kernel slower by more than 5%**" in render_diff_markdown(result)
    gate(result)


def test_the_comment_says_the_gates_percent_and_count(tmp_path: Path) -> None:
    # kA 10 → 10.3 µs (+3 %), kB 20 µs unchanged: slower by more than 2 %, not by more than 5 %
    base = raw_csv("b1.csv", [("kA", 10_000, 0, None), ("kB", 20_000, 0, None)])
    head = raw_csv("h3.csv", [("kA", 10_300, 0, None), ("kB", 20_000, 0, None)])
    done = run_cli("diff", base, head, "-F", "markdown", "--fail-on-regression", "2%")
    assert done.returncode == 1
    assert "**ncu-roof diff: 1 kernel slower by more than 2%**" in done.stdout
    assert "kernels: 1 slower, 0 faster, 1 within ±2%" in done.stdout
    assert done.stderr.splitlines()[-2] == "error: 1 kernel slower by more than 2% (worst kA +3.0%)"
    both = run_cli("diff", base, head, "--threshold", "5%", "--fail-on-regression", "2%")
    assert both.returncode == 2 and "--threshold 5% and --fail-on-regression 2% differ" in both.stderr


def test_a_diff_that_compared_nothing_fails_the_gate(corpus: Path) -> None:
    # a details page without durations, against itself: every pair is without a time
    path = str(corpus / "a100_details-rules-no-speedup_pooling-240k.csv")
    done = run_cli("diff", path, path, "--fail-on-regression", "5%")
    assert done.returncode == 1
    assert "kernels: 0 slower, 0 faster, 0 within ±5%, 28 without a time, 0 new, 0 removed" in done.stdout
    said = [line for line in done.stderr.splitlines() if line.startswith(("error:", "hint:"))]
    assert said == [
        "error: nothing compared: none of the 28 kernels has a time on both sides",
        "hint: profile both runs with gpu__time_duration.sum",
    ]
    assert run_cli("diff", path, path).returncode == 0  # no gate: shown, not failed


def test_match_by_order_shows_the_base_name_where_it_differs() -> None:
    base: list[Launch] = [("init", 1_000, 0, None), (HOSTILE, 50_000, 0, None), ("relu", 2_000, 0, None)]
    head: list[Launch] = [("init", 1_000, 0, None), ("prep", 5_000, 0, None), ("gemm_v2", 40_000, 0, None)]
    result = compared(base, head, match=MatchBy.ORDER)
    assert [(k.base_name, k.name) for k in result.kernels] == [
        (None, "init"),
        (HOSTILE, "prep"),
        ("relu", "gemm_v2"),
    ]
    assert "relu → gemm_v2 4096×256" in render_diff_table(result, width=200)
    pairs = json.loads(joined(diff_json_pieces(result)))["kernels"]
    assert [k["base_name"] for k in pairs] == [None, HOSTILE, "relu"]
    markdown = render_diff_markdown(result)
    assert "| `relu → gemm_v2` `4096×256` |" in markdown and "<a|b" not in markdown


def test_match_by_order_judges_each_base_kernel_apart_across_devices_and_ranges() -> None:
    # base A 10 µs, B 50 µs; head C 5 µs, C 55 µs, on other devices and in another range: B → C is
    # +10 %, a kernel of its own (one row `A → C` of 60 µs → 60 µs hid it), the n-th launches paired
    base: list[Launch] = [("A", 10_000, 0, "fwd"), ("B", 50_000, 1, "fwd")]
    head: list[Launch] = [("C", 5_000, 2, "forward"), ("C", 55_000, 3, "forward")]
    result = compared(base, head, match=MatchBy.ORDER, threshold_pct=5.0)
    assert result.paired_on == ()
    judged = [(c.name, round(c.duration_s.delta_pct or 0.0, 1), c.status.value) for c in result.changes]
    assert judged == [("C", -50.0, "improved"), ("C", 10.0, "regressed")]
    with pytest.raises(GateError, match=r"1 kernel slower by more than 5% \(worst C \+10\.0%"):
        gate(result)


def test_runs_on_other_devices_say_how_to_pair_them() -> None:
    # both ran on two GPUs, the head's numbered 2 and 3: nothing pairs within its device
    base: list[Launch] = [("kA", 10_000, 0, None), ("kA", 20_000, 1, None)]
    head: list[Launch] = [("kA", 10_000, 2, None), ("kA", 20_000, 3, None)]
    with pytest.raises(GateError) as stopped:
        gate(compared(base, head))
    assert stopped.value.hint == (
        "launches pair within their device; --match order pairs the n-th launches whatever their names, "
        "devices and ranges"
    )
    gate(compared(base, head, match=MatchBy.ORDER))  # paired by order: the same times, no error


def test_the_total_is_judged_as_its_kernels_are() -> None:
    # one kernel, 6 launches a side, ±15 % jitter: +7.1 % summed, within its interval: noise, and
    # so is the total of the same launches (the gate failed on it, the comment said "no kernel")
    base_ns = [8474, 8969, 8893, 10408, 9633, 10191]
    head_ns = [11347, 11373, 10738, 9346, 8929, 8849]
    result = compared([("N", t, 0, None) for t in base_ns], [("N", t, 0, None) for t in head_ns])
    assert round(result.total_duration_s.delta_pct or 0.0, 1) == 7.1
    assert [c.status for c in result.changes] == [Status.UNCHANGED]
    assert result.total_status is Status.UNCHANGED
    gate(result)  # passes: nothing beyond noise
    # the JSON says how each kernel was judged; the table that its rows are launch pairs
    (judged,) = json.loads(joined(diff_json_pieces(result)))["judged"]
    assert (judged["name"], judged["pairs"], judged["status"]) == ("N", [0, 1, 2, 3, 4, 5], "unchanged")
    assert judged["duration_s"]["delta_pct"] == pytest.approx(7.096, abs=1e-3)
    low, high = judged["interval_pct"]
    assert low < 0 < judged["shift_pct"] < 7.1 < high
    assert "rows are launch pairs, each marked by its own change" in render_diff_table(result)
    # measured once each (no interval), the same +7.1 % is a change of the total
    once = compared([("N", sum(base_ns), 0, None)], [("N", sum(head_ns), 0, None)])
    assert once.total_status is Status.REGRESSED


def test_match_by_order_judges_each_base_shape_apart() -> None:
    # base kX on 1,024 blocks (10 µs) and on 4,096 (100 µs), alternating; head kY on 4,096 at 10 and
    # 110 µs: kX(4096) → kY is +10 %, hidden in one kernel of +9.1 % "within noise" before
    base: list[Launch] = [(n, t, 0, None) for _ in range(10) for n, t in (("kX@1024", 1e4), ("kX", 1e5))]
    head: list[Launch] = [("kY", t, 0, None) for _ in range(10) for t in (1e4, 1.1e5)]
    result = compared(base, head, match=MatchBy.ORDER)
    judged = [(c.name, round(c.duration_s.delta_pct or 0.0, 1), c.status.value) for c in result.changes]
    assert judged == [("kY", 0.0, "unchanged"), ("kY", 10.0, "regressed")]


def test_a_total_whose_only_kernel_moved_for_real_moved_too() -> None:
    # 20 launches 100 µs → 115 µs (±0.5 %): the kernel's interval lies above 0, so does the total's
    base: list[Launch] = [("kA", 1e5 * (1 + 0.005 * ((i % 5) - 2) / 2), 0, None) for i in range(20)]
    slower = compared(base, [(n, t * 1.15, d, r) for n, t, d, r in base])
    faster = compared(base, [(n, t * 0.85, d, r) for n, t, d, r in base])
    assert [c.status for c in slower.changes] == [
        Status.REGRESSED
    ] and slower.total_status is Status.REGRESSED
    assert [c.status for c in faster.changes] == [Status.IMPROVED] and faster.total_status is Status.IMPROVED


def test_nothing_compared_is_said_alike_by_the_comment_and_the_gate() -> None:
    # kA paired without a time (its duration n/a on both sides), kB and kC paired with nothing
    base: list[Launch] = [("kA", math.nan, 0, None), ("kB", 10_000, 0, None)]
    head: list[Launch] = [("kA", math.nan, 0, None), ("kC", 12_000, 0, None)]
    result = compared(base, head)
    assert "**ncu-roof diff: nothing compared: no kernel has a time on both sides**" in render_diff_markdown(
        result
    )
    with pytest.raises(GateError) as stopped:
        gate(result)
    assert stopped.value.hint == (
        "profile both runs with gpu__time_duration.sum; "
        "--match order pairs the n-th launches whatever their names, devices and ranges"
    )


def test_short_names_leave_their_room_to_the_other_columns_at_80() -> None:
    # "K 4096×256 #20" needs 14 cells: the Kernel column's minimum of 24 cost the Verdict at 80 columns
    result = compared([("K", 10_000, 0, None)] * 20, [("K", 11_000, 0, None)] * 20)
    header = next(line for line in render_diff_table(result, width=80).splitlines() if line.startswith("┃"))
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == [
        "Kernel",
        "Time base → head",
        "Δ time",
        "Δ FLOP/s",
        "Verdict",
        "Status",
    ]
