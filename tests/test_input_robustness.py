"""Damaged, hostile and unusual inputs: a clean refusal naming file and line, or every kernel read.

Each case below was an internal error, a hang or a silent loss before; the CLI runs in process.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Literal

import pytest
from conftest import normalize, read_once

from ncu_roof import ingest as ingest_inputs
from ncu_roof.base.text import launch_shape
from ncu_roof.cli import main
from ncu_roof.errors import BadInputError
from ncu_roof.ingest import InputFormat, read_input
from ncu_roof.recipe.tensor import tensor_variants
from ncu_roof.render.text import csv_cell


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
    except SystemExit as done:
        code = int(done.code or 0)
    else:
        code = 0
    out, err = capsys.readouterr()
    return code, out, err


def rows_of(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def write_rows(path: Path, rows: list[list[str]], quoting: Literal[0, 1, 2, 3] = csv.QUOTE_ALL) -> Path:
    out = io.StringIO()
    csv.writer(out, quoting=quoting, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


RAW = "raw_base.csv"
DETAILS = "details_rules_20col.csv"


# ------------------------------------------------------------------ nothing lost without a word


def test_row_with_a_missing_cell_is_an_error_naming_the_line(tmp_path: Path, fixtures: Path) -> None:
    rows = rows_of(fixtures / RAW)
    rows[3] = rows[3][:-1]  # the second kernel row loses its last cell
    path = write_rows(tmp_path / "bad.csv", rows)
    with pytest.raises(BadInputError, match=r"bad\.csv: line 4: 26 cells where the header has 27"):
        read_input(str(path))


def test_a_row_whose_first_cells_ran_together_is_an_error_not_application_output(
    tmp_path: Path, fixtures: Path
) -> None:
    # `"0"-"4343","app",…` (a comma lost between the ID and the process ID): no ID-like first cell,
    # so it read as a line of the program's output and its launch was lost without a word
    text = (fixtures / RAW).read_text(encoding="utf-8").splitlines()
    text[3] = text[3].replace('","', '"-"', 1)
    path = tmp_path / "ran-together.csv"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"ran-together\.csv: line 4: "):
        read_input(str(path))


def test_skip_bad_rows_keeps_the_intact_kernels_and_says_so(
    tmp_path: Path, fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = rows_of(fixtures / RAW)
    rows[3] = rows[3][:-1]
    path = write_rows(tmp_path / "bad.csv", rows)
    code, out, err = run(["analyze", str(path), "--skip-bad-rows", "-F", "json"], capsys)
    assert code == 0
    assert [k["name"] for k in json.loads(out)["kernels"]] == [
        "void scale<float, 4>(float *, const float *, int)"
    ]
    assert ": 1 launch (raw-csv)" in err
    assert "skipped 1 damaged row (line 4: 26 cells where the header has 27)" in err


def test_a_control_character_in_console_text_is_a_damaged_line(
    tmp_path: Path, fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A vertical tab for the line break after `Device 0` (found by the mutation suite) joined
    two lines and gave a third launch without a word; now the line is damaged, and said so."""
    text = (fixtures / "console_summary_per_gpu_2022.txt").read_text(encoding="utf-8")
    path = tmp_path / "vt.txt"
    path.write_text(text.replace("  Device 0\n", "  Device 0\x0b", 1), encoding="utf-8")
    with pytest.raises(BadInputError, match=r"vt\.txt: line 2: a control character inside the line"):
        read_input(str(path))
    code, _, err = run(["analyze", str(path), "--skip-bad-rows", "-F", "json"], capsys)
    assert code == 0
    assert "skipped 2 damaged rows (lines 2, 3" in err


def test_unbalanced_quote_and_truncated_last_row(tmp_path: Path, fixtures: Path) -> None:
    raw = (fixtures / RAW).read_bytes()
    lines = raw.split(b"\n")
    lines[2] = lines[2][:30] + b'"' + lines[2][30:]
    (tmp_path / "quote.csv").write_bytes(b"\n".join(lines))
    with pytest.raises(BadInputError, match="line 3: unbalanced quote"):
        read_input(str(tmp_path / "quote.csv"))
    (tmp_path / "cut.csv").write_bytes(raw[:-40])
    with pytest.raises(BadInputError, match="line 4: the last row is cut off"):
        read_input(str(tmp_path / "cut.csv"))


def test_details_page_cut_between_rows_is_not_a_shorter_kernel(tmp_path: Path, fixtures: Path) -> None:
    # ncu prints the same metric rows for every kernel of a run: kernel 1 is kernel 0's rows
    # again, and the file ends after its first three
    lines = (fixtures / DETAILS).read_text(encoding="utf-8").splitlines(keepends=True)
    first = [line for line in lines if line.startswith('"0",')]
    again = [line.replace('"0",', '"1",', 1) for line in first[:3]]
    path = tmp_path / "cut.csv"
    path.write_text("".join([lines[0], *first, *again]), encoding="utf-8")
    with pytest.raises(
        BadInputError, match="kernel ID 1 of process 6001 has 3 of the 14 metric rows other kernels have"
    ):
        read_input(str(path))
    table = read_input(str(path), skip_bad_rows=True)
    assert table.frame["id"].tolist() == [0]
    assert "1 kernel left out" in table.warnings[0]


def test_non_integer_id_and_huge_device(tmp_path: Path, fixtures: Path) -> None:
    rows = rows_of(fixtures / RAW)
    rows[2][0] = "x1"
    with pytest.raises(BadInputError, match=r"line 3: ID 'x1' is not an integer index"):
        read_input(str(write_rows(tmp_path / "id.csv", rows)))
    rows = rows_of(fixtures / RAW)
    rows[3][rows[0].index("Device")] = "9" * 23
    with pytest.raises(BadInputError, match=r"line 4: Device '9{23}' is not an integer index"):
        read_input(str(write_rows(tmp_path / "dev.csv", rows)))


def test_a_huge_console_device_and_unicode_digits_are_damage(tmp_path: Path, fixtures: Path) -> None:
    text = (fixtures / "console_details_2024.txt").read_text(encoding="utf-8")
    huge = tmp_path / "device.txt"
    huge.write_text(text.replace("Device 0, CC", "Device " + "9" * 20 + ", CC", 1), encoding="utf-8")
    with pytest.raises(BadInputError, match=r"line 7: kernel 'stencil.*': Device 9{20} is not a device"):
        read_input(str(huge))
    table = read_input(str(huge), skip_bad_rows=True)
    assert table.rows == 1 and table.launches.get_column("device").to_list() == [0]
    assert "1 kernel left out" in table.warnings[0]
    rows = rows_of(fixtures / RAW)
    rows[2][0] = "\u0661"  # ARABIC-INDIC DIGIT ONE: no launch ID
    with pytest.raises(BadInputError, match=r"line 3: ID '\u0661' is not an integer index"):
        read_input(str(write_rows(tmp_path / "id.csv", rows)))
    rows = rows_of(fixtures / DETAILS)
    rows[1][0] = "\u0661"  # the details reader checks its IDs with the same pattern
    with pytest.raises(BadInputError, match=r"line 2: .*\u0661"):
        read_input(str(write_rows(tmp_path / "details.csv", rows)))


def test_a_table_built_by_hand_needs_whole_ids_and_indices(fixtures: Path) -> None:
    """The library takes a `RunTable` a user built: an ID that is missing, or a run or device
    index that is no whole number, is refused in words (a missing run or device index is 0)."""
    from dataclasses import replace

    import numpy as np
    import polars as pl

    from ncu_roof.analysis.core import analyze
    from ncu_roof.ingest import RunTable

    table = read_input(str(fixtures / RAW))

    def given(column: str, values: list[object]) -> RunTable:
        return replace(table, launches=table.launches.with_columns(pl.Series(column, values, strict=False)))

    with pytest.raises(BadInputError, match=r"a launch's id is missing, not a whole number"):
        analyze([given("id", [0, None, *range(2, table.rows)])])
    with pytest.raises(BadInputError, match=r"a launch's id is nan, not a whole number"):
        analyze([given("id", [0.0, np.nan, *range(2, table.rows)])])
    with pytest.raises(BadInputError, match=r"a launch's run is 'first', not a whole number"):
        analyze([given("run", ["first"] * table.rows)])
    unknown = given("device", [None] * table.rows)
    assert [k.device for k in analyze([unknown]).kernels] == [0] * table.rows
    no_runs = replace(table, launches=table.launches.with_columns(pl.lit(None, pl.String).alias("run")))
    assert [k.run for k in analyze([no_runs]).kernels] == [0] * table.rows


def test_header_problems(tmp_path: Path, fixtures: Path) -> None:
    raw = (fixtures / RAW).read_bytes()
    (tmp_path / "cut.csv").write_bytes(raw[:300])
    with pytest.raises(BadInputError, match="no kernel rows follow"):
        read_input(str(tmp_path / "cut.csv"))
    rows = rows_of(fixtures / RAW)
    rows[0][14] = rows[0][13]
    with pytest.raises(BadInputError, match=r"'dram__bytes_read\.sum' appears more than once"):
        read_input(str(write_rows(tmp_path / "dup.csv", rows)))
    rows = rows_of(fixtures / DETAILS)
    gone = rows[0].index("Metric Name")
    with pytest.raises(BadInputError, match="details-page header without 'Metric Name'"):
        read_input(str(write_rows(tmp_path / "nometric.csv", [r[:gone] + r[gone + 1 :] for r in rows])))


# ------------------------------------------------------------------ valid variants


@pytest.mark.parametrize("name", [RAW, DETAILS])
def test_bom_crlf_and_minimal_quoting_read_alike(tmp_path: Path, fixtures: Path, name: str) -> None:
    plain = read_input(str(fixtures / name))
    raw = (fixtures / name).read_bytes()
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n"))
    minimal = write_rows(tmp_path / "minimal.csv", rows_of(fixtures / name), quoting=csv.QUOTE_MINIMAL)
    for variant in (tmp_path / "bom.csv", minimal):
        table = read_input(str(variant))
        assert table.frame["name"].tolist() == plain.frame["name"].tolist()
        a = normalize(table.frame[table.metric_columns])["duration_s"].tolist()
        assert a == normalize(plain.frame[plain.metric_columns])["duration_s"].tolist()


def test_a_damaged_row_among_many_is_named_by_its_line(tmp_path: Path, fixtures: Path) -> None:
    rows = rows_of(fixtures / RAW)
    rows = [*rows[:2], *(list(r) for r in rows[2:] * 5)]
    for i, row in enumerate(rows[2:]):
        row[0] = str(i)
    rows[10] = rows[10][:-1]
    path = write_rows(tmp_path / "bad.csv", rows)
    with pytest.raises(BadInputError, match=r"bad\.csv: line 11: 26 cells where the header has 27"):
        read_input(str(path))
    rows = rows_of(path)
    rows[10] = [*rows[9][:-1], "1"]
    rows[10][0] = "x"
    with pytest.raises(BadInputError, match=r"line 11: ID 'x' is not an integer index"):
        read_input(str(write_rows(tmp_path / "id.csv", rows)))


@pytest.mark.parametrize("separator", ["\n", "\r\n", "\x85", "\u2028"])
def test_line_breaks_inside_names_are_kept(tmp_path: Path, fixtures: Path, separator: str) -> None:
    rows = rows_of(fixtures / DETAILS)
    rows = [[c.replace("kernel<", f"ker{separator}nel<") for c in r] for r in rows]
    table = read_input(str(write_rows(tmp_path / "names.csv", rows)))
    assert (
        table.frame["name"].tolist()[0]
        == f"enable_if<!T7, void>::type ker{separator}nel<int, int, float>(T13)"
    )
    assert table.frame["id"].tolist() == [0, 1]


def test_invalid_utf8_is_replaced_and_noted(tmp_path: Path, fixtures: Path) -> None:
    raw = (fixtures / RAW).read_bytes().replace(b"reduce_kernel", b"reduce_\xff\xfekernel")
    (tmp_path / "latin.csv").write_bytes(raw)
    table = read_input(str(tmp_path / "latin.csv"))
    assert table.frame["name"].tolist()[1] == "reduce_\ufffd\ufffdkernel"
    assert table.warnings == (
        f"{tmp_path / 'latin.csv'}: 2 invalid UTF-8 sequences replaced by U+FFFD (first on line 4)",
    )


# ------------------------------------------------------------------ nonsense flagged


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        ("-5", "= -5e-09 is negative"),
        ("1e400", "= inf is not finite"),
        ("1e14", "implausible (a kernel duration"),
    ],
)
def test_impossible_values_are_excluded_with_a_note(
    tmp_path: Path, fixtures: Path, cell: str, words: str
) -> None:
    rows = rows_of(fixtures / RAW)
    rows[2][rows[0].index("gpu__time_duration.sum")] = cell
    table = read_input(str(write_rows(tmp_path / "nonsense.csv", rows)))
    assert table.frame["gpu__time_duration.sum"].isna().tolist() == [True, False]
    notes: tuple[str, ...] = table.frame["input_notes"].iloc[0]
    (note,) = notes
    assert note.startswith("input: gpu__time_duration.sum") and words in note
    assert "1 value excluded as impossible" in table.warnings[0]


# ------------------------------------------------------------------ clean refusals


def test_fifo_device_and_directory_are_refused_without_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(BadInputError, match="is a FIFO, not a regular file"):
        read_input(str(fifo))  # would block forever if it were opened
    with pytest.raises(BadInputError, match="is a device or socket"):
        read_input("/dev/zero")
    with pytest.raises(BadInputError, match="is a directory"):
        read_input(str(tmp_path))


def test_oversized_text_and_unreadable_files(
    tmp_path: Path, fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_inputs, "MAX_TEXT_BYTES", 1000)
    with pytest.raises(BadInputError, match="over 0 MiB of text; refused rather than read whole"):
        read_input(str(fixtures / RAW))
    monkeypatch.undo()

    def denied(*_args: object, **_kwargs: object) -> os.stat_result:
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as patch:  # as os.stat does in a directory without x permission
        patch.setattr(os, "stat", denied)
        with pytest.raises(BadInputError, match=r"cannot read \(Permission denied\)"):
            read_input(str(fixtures / RAW))
    locked = tmp_path / "locked.csv"
    locked.write_bytes((fixtures / RAW).read_bytes())
    locked.chmod(0)
    if os.access(locked, os.R_OK):
        pytest.skip("running as root: file permissions are not enforced")
    with pytest.raises(BadInputError, match=r"cannot read \(Permission denied\)"):
        read_input(str(locked))


def test_closed_stdout_exits_quietly_and_full_disk_is_one_error(
    fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Closed(io.StringIO):
        def __init__(self, err: OSError) -> None:
            super().__init__()
            self.err = err

        def write(self, _text: str) -> int:
            raise self.err

        def fileno(self) -> int:
            raise ValueError("no descriptor")

    monkeypatch.setattr(sys, "stdout", Closed(BrokenPipeError(32, "Broken pipe")))
    with pytest.raises(SystemExit) as done:
        main(["analyze", str(fixtures / RAW), "-F", "csv"])
    assert done.value.code == 141
    assert "error" not in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdout", Closed(OSError(28, "No space left on device")))
    with pytest.raises(SystemExit) as done:
        main(["analyze", str(fixtures / RAW), "-F", "csv"])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert "error: cannot write to stdout: No space left on device\n" in err
    assert "internal error" not in err


# ------------------------------------------------------------------ inputs as people pass them


def test_stdin_directory_and_glob(
    tmp_path: Path, fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((fixtures / RAW).read_bytes())))
    code, out, err = run(["analyze", "-", "-F", "json"], capsys)
    assert code == 0 and "read -: 2 launches (raw-csv)" in err
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("b.csv", "a.csv"):
        (folder / name).write_bytes((fixtures / RAW).read_bytes())
    (folder / "notes.md").write_text("hello")
    code, out, err = run(["analyze", str(folder), "-F", "json"], capsys)
    assert code == 0
    assert [i["path"] for i in json.loads(out)["inputs"]] == [str(folder / "a.csv"), str(folder / "b.csv")]
    assert f"note: {folder / 'notes.md'}: skipped (not a report, CSV or text file)" in err
    code, out, _ = run(["analyze", str(folder / "*.csv"), "-F", "json"], capsys)
    assert code == 0 and len(json.loads(out)["inputs"]) == 2
    code, _, err = run(["analyze", str(folder / "*.rep"), "-F", "json"], capsys)
    assert code == 3 and "no file matches this pattern" in err


@pytest.mark.parametrize(
    "command", [["analyze", "-", "-"], ["analyze", "-", "a.csv", "-"], ["diff", "-", "-"]]
)
def test_stdin_named_twice_is_refused_before_it_is_read(
    command: list[str], fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # (it was read once, then the second `-` read nothing: "-: file is empty")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((fixtures / RAW).read_bytes())))
    code, out, err = run(command, capsys)
    assert (code, out) == (3, "")
    assert err == "error: `-` (stdin) is named twice\nhint: stdin can be read only once\n"


def test_a_damaged_report_on_stdin_is_named_as_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report piped in is read from a temporary copy; the error names `-`, never that copy."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"NVR\x00" + b"garbage" * 10)))
    code, _, err = run(["analyze", "-"], capsys)
    assert (
        code == 3
        and err.startswith("error: -: the report holds no profiled kernel")
        and "ncu-roof-" not in err
    )


# ------------------------------------------------------------------ console text and summaries


def test_console_details_2024_layout(fixtures: Path) -> None:
    table = read_input(str(fixtures / "console_details_2024.txt"))
    assert table.format is InputFormat.CONSOLE_TEXT
    frame = table.frame
    assert frame["name"].tolist() == ["stencil(float *, const float *, int)"] * 2
    assert frame["grid"].tolist() == ["(64, 64, 1)", "(0, 0, 0)"]
    assert frame["block"].tolist() == ["(16, 16, 1)", "(0, 0, 0)"]
    assert frame["cc"].tolist() == ["8.6", "8.6"] and frame["device"].tolist() == [0, 0]
    assert frame["process_id"].tolist() == ["4242", "4242"]
    k0 = frame.iloc[0]
    assert k0["gpu__time_duration.sum"] == pytest.approx(95.90e-6, rel=1e-12)  # "Duration us 95.90"
    assert k0["gpc__cycles_elapsed.avg.per_second"] == pytest.approx(817.42e6, rel=1e-12)  # Mhz
    assert k0["dram__cycles_elapsed.avg.per_second"] == pytest.approx(5.99e9, rel=1e-12)  # Ghz
    assert k0["gpc__cycles_elapsed.max"] == 78_396  # "78,396"
    assert k0["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == 82.17
    assert k0["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] == 53.31
    assert k0["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"] == 44.77
    assert k0["launch__grid_size"] == 4096 and k0["launch__waves_per_multiprocessor"] == 22.76
    assert (
        frame.iloc[1][["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"]]
        .isna()
        .all()
    )
    assert table.averaged == ()


def test_console_old_layout_labels_and_verdict(fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = read_input(str(fixtures / "console_details_2022_old.txt"))
    frame = table.frame
    assert frame["id"].tolist() == [0, 1]  # identical kernel lines, two launches
    assert frame["grid"].isna().all()
    assert frame["gpu__time_duration.sum"].tolist() == pytest.approx([23.68e-6, 0.02e-3], rel=1e-12)
    assert frame["gpc__cycles_elapsed.avg.per_second"].tolist() == pytest.approx([1.05e9, 1.06e9], rel=1e-12)
    assert frame["sm__throughput.avg.pct_of_peak_sustained_elapsed"].tolist() == [
        55.40,
        54.79,
    ]  # "Compute (SM) [%]", "SM [%]"
    assert frame["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"].tolist() == [
        18.11,
        17.92,
    ]  # "SOL DRAM"
    assert frame["lts__throughput.avg.pct_of_peak_sustained_elapsed"].tolist() == [35.47, 34.75]
    code, out, _ = run(["analyze", str(fixtures / "console_details_2022_old.txt"), "-F", "json"], capsys)
    assert code == 0
    # SM 55% and memory 38% of peak, both under Nsight's 60%: latency-bound
    assert [k["bound"] for k in json.loads(out)["kernels"]] == ["latency", "latency"]


def test_console_summary_per_kernel_reads_the_averages(
    fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = read_input(str(fixtures / "console_summary_per_kernel.txt"))
    frame = table.frame
    # "Invocations 1" and "Invocations 2": three launches, heat_3d's twice with its averages
    assert frame["name"].tolist() == ["add_heat(float *, int)", *["heat_3d(float *, float *)"] * 2]
    assert frame["id"].tolist() == [0, 1, 2]
    assert frame["gpu__time_duration.sum"].tolist() == pytest.approx([2.07e-6, 3.22e-3, 3.22e-3], rel=1e-12)
    assert frame["gpc__cycles_elapsed.max"].tolist()[1:] == [7_300, 7_300]
    assert frame["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"].tolist() == [11.0, 87.25, 87.25]
    assert frame.loc[2, "input_notes"] == (
        "input: a --print-summary line: values are averages over 2 invocations",
    )
    assert "gpu__time_duration.sum" in table.averaged
    code, out, _ = run(["analyze", str(fixtures / "console_summary_per_kernel.txt"), "-F", "json"], capsys)
    assert code == 0 and "gpu__time_duration.sum" in json.loads(out)["inputs"][0]["averaged"]


def test_console_summary_per_gpu_2022_layout(fixtures: Path) -> None:
    # ncu 2022's layout: a `Device N` line, the kernel line repeated above each section,
    # "Block Size N, Grid Size N, N invocations", metric names in the rows
    table = read_input(str(fixtures / "console_summary_per_gpu_2022.txt"))
    frame = table.frame
    # device 0: "3 invocations" (its kernel line twice, one kernel); device 1: "1 invocations"
    assert frame["device"].tolist() == [0, 0, 0, 1]
    assert frame["grid"].tolist() == ["4096"] * 4 and frame["block"].tolist() == ["256"] * 4
    assert frame["gpu__time_duration.sum"].tolist() == pytest.approx([12.35e-6] * 3 + [20e-6], rel=1e-12)
    assert frame["gpc__cycles_elapsed.avg.per_second"].tolist() == pytest.approx(
        [1.41e9] * 3 + [1.2e9], rel=1e-12
    )
    assert frame["gpc__cycles_elapsed.max"].tolist() == [17_405] * 3 + [24_000]
    assert frame["sm__throughput.avg.pct_of_peak_sustained_elapsed"].tolist() == [20.5] * 3 + [10.0]
    assert frame.loc[0, "launch__waves_per_multiprocessor"] == pytest.approx(9.481481)
    assert frame.loc[0, "input_notes"] == (
        "input: a --print-summary line: values are averages over 3 invocations",
    )
    assert table.warnings == ()


def test_summary_csv_export(fixtures: Path) -> None:
    table = read_input(str(fixtures / "summary_per_kernel.csv"))
    assert table.format is InputFormat.SUMMARY_CSV
    frame = table.frame
    # "Invocations 3" and "1": four launches, tiled's three with its averages
    assert frame["name"].tolist() == [
        *["void tiled<(int)64, (int)8>(int, const float *, float *)"] * 3,
        "warp_reduce(int, float *)",
    ]
    assert frame["grid"].tolist() == ["256"] * 3 + ["64"] and frame["block"].tolist() == ["512"] * 3 + ["128"]
    assert frame["gpu__time_duration.sum"].tolist() == pytest.approx([431.5e-6] * 3 + [222.464e-6], rel=1e-12)
    assert frame["gpc__cycles_elapsed.avg.per_second"].tolist()[0] == pytest.approx(1.315e9, rel=1e-12)
    assert frame["sm__throughput.avg.pct_of_peak_sustained_elapsed"].tolist() == [21.0] * 3 + [39.5]
    assert frame.loc[0, "input_notes"] == (
        "input: a --print-summary row: values are averages over 3 invocations",
    )


def test_every_corpus_console_capture_gives_durations_and_sol(corpus: Path) -> None:
    expected = {
        "a100_console_old-kerneltime-header_layernorm.txt": 31,
        "a10g_console_details_app-stdout_esmm.txt": 1,
        "a10g_console_summary-per-kernel_esmm.txt": 30,  # 3 kernels of "Invocations 10"
        "gh200_console_details_pytorch-silu.txt": 10,
        "rtx30xx_console_details_heat2d-10k.txt": 10,
        "rtx30xx_console_summary_heat3d.txt": 34,  # "Invocations" 4 + 10 + 20
    }
    for name, count in expected.items():
        table = read_once(corpus / name)
        norm = normalize(table.frame[table.metric_columns])
        assert len(table.frame) == count, name
        assert norm["duration_s"].notna().all(), name
        assert norm["sol_sm_pct"].notna().all() and norm["sol_memory_pct"].notna().all(), name
    gh200 = read_once(corpus / "gh200_console_details_pytorch-silu.txt").frame
    assert gh200.loc[0, "gpu__time_duration.sum"] == pytest.approx(777.95e-6, rel=1e-12)
    assert gh200.loc[0, "cc"] == "9.0" and gh200.loc[0, "grid"] == "(1056, 1, 1)"


# ------------------------------------------------------------------ sinks and speed


def test_grid_and_block_are_guarded_in_every_sink(
    tmp_path: Path, fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launch_shape("(=cmd|x\x1b[31m)", "(1)") == "=cmd|x?[31m×1"
    assert csv_cell("=cmd|x") == "'=cmd|x"
    rows = rows_of(fixtures / RAW)
    rows[2][rows[0].index("Grid Size")] = "=cmd|' /C calc'!A0\x1b[31m"
    path = write_rows(tmp_path / "hostile.csv", rows)
    code, out, _ = run(["analyze", str(path), "-F", "csv"], capsys)
    assert code == 0
    grid = next(csv.DictReader(io.StringIO(out)))["grid"]
    assert grid == "'=cmd|' /C calc'!A0?[31m"
    code, out, _ = run(["analyze", str(path)], capsys)
    assert code == 0 and "\x1b[31m" not in out


def test_tensor_variants_is_near_linear() -> None:
    names = [f"sm__ops_path_tensor_src_fp{i}_dst_x{j}.sum" for i in range(200) for j in range(100)]
    names += ["sm__ops_path_tensor_src_fp1.sum"]  # the parent of src_fp1_dst_x*
    start = time.perf_counter()
    kept = tensor_variants(names)
    assert time.perf_counter() - start < 2.0  # was 69 s for 20,000 columns
    assert "src_fp1" in kept and "src_fp1_dst_x0" not in kept and "src_fp10_dst_x0" in kept
    assert len(kept) == 20_000 - 100 + 1


def test_a_file_its_file_system_cannot_map_is_read(fixtures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # sysfs, FUSE with direct_io: mmap fails with ENODEV; the file was refused as unreadable
    mapped = read_input(str(fixtures / RAW))

    def unmappable(*args: object, **kwargs: object) -> None:
        raise OSError(19, "No such device")

    monkeypatch.setattr("mmap.mmap", unmappable)
    table = read_input(str(fixtures / RAW))
    assert table.rows == mapped.rows == 2 and table.launches.equals(mapped.launches)
