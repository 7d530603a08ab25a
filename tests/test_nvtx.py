"""NVTX ranges: read from every ncu output that holds them, carried per launch, grouped by."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from conftest import read_once, run_cli

from ncu_roof.analysis.core import analyze
from ncu_roof.analysis.groups import NO_NVTX, group_kernels
from ncu_roof.base.vocabulary import GroupBy
from ncu_roof.ingest import read_input
from ncu_roof.ingest.nvtx import nvtx_of_cells, nvtx_text
from ncu_roof.ingest.rep import ncu_report_installed

PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START_STOP = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
# The NVIDIA training sample (manual_nvtx): each kernel in push/pop range run_test/<its step>,
# durations as the raw page prints them (usecond): 84.48, 249.216, 88.512.
SAMPLE = "rtx3070_rep_2022.3_nvtx-ranges"
SAMPLE_RANGES = ["run_test/init_data", "run_test/daxpy", "run_test/check_results"]
SAMPLE_S = [84.48e-6, 249.216e-6, 88.512e-6]


def entry(domain: str, name: str) -> str:
    return f'"{domain}:{name}:none:none:RGB:0xff00ff00:ASCII:{name}"'


def test_text_is_the_stack_outermost_first_with_other_domains_named() -> None:
    assert nvtx_text([("<default domain>", ("run_test", "daxpy"), ())]) == "run_test/daxpy"
    assert nvtx_text([("MyLib", ("decode",), ("frame 7",))]) == "MyLib@decode, MyLib@frame 7"
    assert nvtx_text([("<default domain>", (), ())]) is None
    assert nvtx_text([]) is None


def test_csv_cells_parse_by_their_header_fields() -> None:
    cell = f"129325  {entry('<default domain>', 'run_test')}  {entry('<default domain>', 'a:b')} "
    assert nvtx_of_cells({PUSH_POP: cell, START_STOP: ""}) == "run_test/a:b"  # a name may hold `:`
    start = f"1:{entry('Dom', 'load')[1:-1]}"  # `Id:Domain:…`: the id comes first
    assert nvtx_of_cells({PUSH_POP: "", START_STOP: f'"{start}"'}) == "Dom@load"
    assert nvtx_of_cells({PUSH_POP: "", START_STOP: ""}) is None


@pytest.mark.parametrize(
    "name",
    [
        "reexport/" + SAMPLE + ".ncu2022.3-raw-auto.csv",
        "reexport/" + SAMPLE + ".ncu2024.1-raw-base.csv",
        "reexport/" + SAMPLE + ".ncu2024.1-details.csv",
        SAMPLE + ".ncu-rep",
    ],
)
def test_every_reader_carries_the_sample_reports_ranges(corpus: Path, name: str) -> None:
    if name.endswith(".ncu-rep") and not ncu_report_installed():
        pytest.skip("ncu_report not installed")
    frame = read_once(corpus / name).frame
    assert frame["nvtx"].tolist() == SAMPLE_RANGES
    # the details page prints 5 significant digits (249.22 us, 88.51 us)
    assert frame["gpu__time_duration.sum"].tolist() == pytest.approx(SAMPLE_S, rel=3e-5)


def test_reports_without_nvtx_read_none(fixtures: Path) -> None:
    analysis = analyze([read_input(str(fixtures / "raw_base.csv"))])
    assert [k.nvtx for k in analysis.kernels] == [None, None]


def test_group_by_nvtx_folds_one_range_whatever_its_kernels(fixtures: Path) -> None:
    # raw_nvtx.csv: scale + reduce in step/forward, scale in domain MyLib's decode, reduce in none
    analysis = analyze([read_input(str(fixtures / "raw_nvtx.csv"))])
    assert [k.nvtx for k in analysis.kernels] == ["step/forward", "step/forward", "MyLib@decode", None]
    groups = group_kernels(analysis, GroupBy.NVTX)
    assert [(g.name, g.device, g.count) for g in groups] == [
        ("step/forward", 0, 2),
        ("MyLib@decode", 0, 1),
        (NO_NVTX, 0, 1),
    ]
    times = [g.total_duration_s for g in groups]
    assert times == pytest.approx([12_345e-9 + 2e-3, 20e-6, 3e-3])
    assert groups[0].max_duration_s == pytest.approx(2e-3)
    assert groups[0].min_duration_s == pytest.approx(12_345e-9)
    assert groups[0].time_share == pytest.approx((12_345e-9 + 2e-3) / (12_345e-9 + 2e-3 + 20e-6 + 3e-3))
    # grouped by kernel, the two scale launches (one shape) are one group across ranges
    assert [g.count for g in group_kernels(analysis, GroupBy.KERNEL)] == [2, 2]


def test_sample_report_by_nvtx_in_table_markdown_json_and_csv(corpus: Path) -> None:
    path = str(corpus / "reexport" / (SAMPLE + ".ncu2024.1-raw-base.csv"))
    table = run_cli("analyze", path, "--group-by", "nvtx")
    assert table.returncode == 0, table.stderr
    rows = [[c.strip() for c in line.split("│")] for line in table.stdout.splitlines() if "│" in line]
    assert [r[1] for r in rows] == ["run_test/daxpy", "run_test/check_results", "run_test/init_data"]
    assert "NVTX range" in table.stdout and "grid×block" not in table.stdout
    markdown = run_cli("analyze", path, "--group-by", "nvtx", "--format", "markdown").stdout
    assert "| # | NVTX range | Launches |" in markdown and "| 1 | `run_test/daxpy` | 1 |" in markdown
    assert "### Top 3 NVTX ranges by time" in markdown  # its rows are ranges, not kernels
    document = json.loads(run_cli("analyze", path, "--format", "json").stdout)
    assert [k["nvtx"] for k in document["kernels"]] == SAMPLE_RANGES
    flat = list(csv.DictReader(io.StringIO(run_cli("analyze", path, "--format", "csv").stdout)))
    assert [r["nvtx"] for r in flat] == SAMPLE_RANGES


def test_nvtx_text_is_guarded_in_every_sink(fixtures: Path, tmp_path: Path) -> None:
    hostile = tmp_path / "hostile.csv"
    hostile.write_text((fixtures / "raw_nvtx.csv").read_text().replace(":decode", ":de|code\x1b[31m"))
    markdown = run_cli("analyze", str(hostile), "--group-by", "nvtx", "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert "\x1b" not in markdown.stdout and r"MyLib@de\|code" in markdown.stdout
    table = run_cli("analyze", str(hostile), "--group-by", "nvtx").stdout
    assert "\x1b" not in table and "MyLib@de|code" in table
    flat = list(csv.DictReader(io.StringIO(run_cli("analyze", str(hostile), "--format", "csv").stdout)))
    assert "\x1b" not in flat[2]["nvtx"] and flat[3]["nvtx"] == ""


def test_markdown_names_the_longest_launch_of_each_range(fixtures: Path) -> None:
    path = str(fixtures / "raw_nvtx.csv")
    markdown = run_cli("analyze", path, "--group-by", "nvtx", "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert "| # | Longest launch | Mean / min / max |" in markdown.stdout
    # step/forward: reduce_kernel (2 ms) outlasts scale (12.3 us)
    text = markdown.stdout.replace("\u00a0", " ")
    assert "| 2 | `reduce_kernel 80×128` | 1.01 ms / 12.3 µs / 2 ms |" in text


def test_json_nvtx_groups_sit_beside_the_kernel_groups(fixtures: Path) -> None:
    document = json.loads(run_cli("analyze", str(fixtures / "raw_nvtx.csv"), "--format", "json").stdout)
    by_range = [(g["name"], g["launches"], g["kernels"], g["grid"]) for g in document["nvtx_groups"]]
    assert by_range == [
        (NO_NVTX, 1, [3], None),  # 3 ms
        ("step/forward", 2, [0, 1], None),  # 2.012 ms
        ("MyLib@decode", 1, [2], None),  # 20 us
    ]
    assert document["nvtx_groups"][1]["total_duration_s"] == pytest.approx(12_345e-9 + 2e-3)
    assert [g["launches"] for g in document["groups"]] == [2, 2]  # kernel groups unchanged
    plain = json.loads(run_cli("analyze", str(fixtures / "raw_base.csv"), "--format", "json").stdout)
    assert plain["nvtx_groups"] == []


def test_report_read_through_ncu_import_keeps_its_ranges(corpus: Path) -> None:
    from ncu_roof.base.ncu import find_ncu, import_raw_csv
    from ncu_roof.errors import MissingToolError
    from ncu_roof.ingest.rep import read_with_cli

    try:
        tool = find_ncu()
    except MissingToolError:
        pytest.skip("ncu not installed")
    path = corpus / (SAMPLE + ".ncu-rep")
    table = read_with_cli(str(path), path.read_bytes(), import_raw_csv(tool, path))
    assert table.frame["nvtx"].tolist() == SAMPLE_RANGES
