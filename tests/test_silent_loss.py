"""No kernel lost or changed without a word: the cases of issue 27, each on a small fixture.

Each is a correct read (application lines and colour codes inside ncu's text, the fr_FR and
de_CH number styles), or damage: exit 3 naming the file and line, or with `--skip-bad-rows` a
warning counting what was left out. A cell that reads as no number is an `input:` note.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import input_file, read_once, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from ncu_roof.errors import BadInputError
from ncu_roof.ingest import read_input
from ncu_roof.ingest.csvblocks import Damage, check_ids

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CONSOLE = "console_details_2024.txt"
SUMMARY_TEXT = "console_summary_per_kernel.txt"


def _text(name: str) -> list[str]:
    return (FIXTURES / name).read_text(encoding="utf-8").split("\n")


def _values(name_or_path: str | Path) -> dict[str, list[float | None]]:
    """Every metric column of an input, NaN as None (comparable with ==)."""
    path = FIXTURES / name_or_path if isinstance(name_or_path, str) else name_or_path
    table = read_input(str(path))
    return {
        metric: [None if math.isnan(v) else v for v in table.launches.get_column(metric).to_list()]
        for metric in table.metric_columns
    }


def _with_line(name: str, at: int, line: str) -> Path:
    lines = _text(name)
    return input_file(name, "\n".join([*lines[:at], line, *lines[at:]]))


def _without_line(name: str, at: int) -> Path:
    lines = _text(name)
    return input_file(name, "\n".join([*lines[:at], *lines[at + 1 :]]))


# --- console text ------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["loss=0.123", "    step 3: loss=0.123", "-------", ""])
@pytest.mark.parametrize("name", [CONSOLE, SUMMARY_TEXT, "console_details_2022_old.txt"])
def test_an_application_line_anywhere_changes_nothing(name: str, line: str) -> None:
    """Inside a section table too: above its title row, between its rules, between its rows."""
    intact = _values(name)
    for at in range(len(_text(name))):
        assert _values(_with_line(name, at, line)) == intact, (at, line)


@pytest.mark.parametrize(
    "line", ["\x1b[32mINFO step 3 done\x1b[0m", "\x1b[1;31mERROR\x1b[0m retrying", "\x1b]0;title\x07done"]
)
def test_a_coloured_log_line_is_read_without_its_colour_codes(line: str) -> None:
    intact = _values(CONSOLE)
    for at in range(len(_text(CONSOLE))):
        assert _values(_with_line(CONSOLE, at, line)) == intact, at


def test_ncu_tables_printed_in_colour_read_as_plain_ones() -> None:
    coloured = "\n".join(f"\x1b[36m{line}\x1b[0m" if line.strip() else line for line in _text(CONSOLE))
    assert _values(input_file(CONSOLE, coloured)) == _values(CONSOLE)


def test_a_summary_cut_inside_a_block_at_a_line_end_is_damage() -> None:
    lines = _text(SUMMARY_TEXT)
    row = lines.index(next(x for x in lines if x.strip().startswith("Elapsed Cycles")))  # heat_3d's 3rd row
    path = input_file(SUMMARY_TEXT, "\n".join(lines[: row + 1]) + "\n")
    with pytest.raises(
        BadInputError, match=r"line 23: kernel 'heat_3d\(float \*, float \*\)': its table is cut"
    ):
        read_input(str(path))
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["name"].tolist() == ["add_heat(float *, int)"]
    assert "1 kernel left out" in kept.warnings[0]


def test_a_lost_kernel_line_merges_no_two_kernels() -> None:
    lines = _text(SUMMARY_TEXT)
    at = next(i for i, x in enumerate(lines) if x.strip().startswith("heat_3d("))
    path = _without_line(SUMMARY_TEXT, at)
    with pytest.raises(
        BadInputError, match=r"line 23: section 'GPU Speed Of Light Throughput' again under kernel"
    ):
        read_input(str(path))
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["name"].tolist() == ["add_heat(float *, int)"]
    assert "1 kernel left out" in kept.warnings[0]


# --- CSV pages ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["details_fr_FR.csv", "details_de_CH.csv"])
def test_fr_and_de_ch_number_styles_read_as_en_us(name: str) -> None:
    """U+202F groups with a decimal comma (fr_FR), U+2019 groups with a decimal point (de_CH)."""
    assert _values(name) == _values("details_metrics_15col.csv")
    assert read_once(FIXTURES / name).launches.item(0, "dram__bytes.sum") == 1_572_864.0


@pytest.mark.parametrize(
    ("name", "metric", "line"),
    [
        ("details_metrics_15col.csv", "dram__bytes.sum", 4),
        ("details_metrics_15col.csv", "sm__cycles_elapsed.avg", 4),  # the kernel's first row
        ("summary_per_kernel.csv", "gpu__time_duration.sum", 2),
    ],
)
def test_a_deleted_metric_row_of_a_kernel_is_damage(name: str, metric: str, line: int) -> None:
    lines = _text(name)
    at = next(i for i, x in enumerate(lines) if f'"{metric}"' in x)
    path = _without_line(name, at)
    done = run_cli("analyze", str(path))
    assert done.returncode == 3
    assert f"{path}: line {line}: " in done.stderr and f"'{metric}' not among them" in done.stderr
    skipped = run_cli("analyze", str(path), "--skip-bad-rows", "--format", "json")
    assert skipped.returncode == 0 and "1 kernel left out" in skipped.stderr


def test_a_repeated_metric_row_loses_no_kernel() -> None:
    """A row printed twice (a duplicated line): the other kernels lack none of its rows."""
    path = _with_line("details_metrics_15col.csv", 5, _text("details_metrics_15col.csv")[4])
    assert _values(path) == _values("details_metrics_15col.csv")


def test_a_metric_row_repeated_with_another_value_is_damage() -> None:
    """The same row twice with two values (pasted exports): which is true is unknown, so the kernel
    is damaged, named with the line of the second value, never read with the first silently."""
    line = _text("details_metrics_15col.csv")[4]
    path = _with_line("details_metrics_15col.csv", 5, line.replace('"4,194,304"', '"99,194,304"'))
    message = r"line 6: kernel ID 0 of process 5150 has 'lts__t_bytes.sum' twice, with two values"
    with pytest.raises(BadInputError, match=message):
        read_input(str(path))
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [1] and "1 kernel left out" in kept.warnings[0]


def test_a_summary_metric_repeated_with_another_average_is_damage() -> None:
    lines = _text("summary_per_kernel.csv")
    at = next(i for i, text in enumerate(lines) if "gpu__time_duration.sum" in text)
    changed = lines[at].rsplit(",", 1)[0] + ',"1"'
    with pytest.raises(BadInputError, match=rf"line {at + 2}: kernel #0 .* twice, with two values"):
        read_input(str(_with_line("summary_per_kernel.csv", at + 1, changed)))


@pytest.mark.parametrize("count", ["1,000", "1.500"])
def test_a_summary_count_that_is_none_in_the_files_style_is_damage(count: str) -> None:
    """The summary's numbers are plain (C style): `1,000` and `1.500` are no count there; read as 1
    they lost a kernel's launches without a word."""
    text = "\n".join(_text("summary_per_kernel.csv")).replace('"0","3"', f'"0","{count}"')
    path = input_file("summary_per_kernel.csv", text)
    with pytest.raises(BadInputError, match=rf"line 2: Invocations '{count}' is no count of launches"):
        read_input(str(path))
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.rows == 1 and "1 kernel left out" in kept.warnings[0]


def test_a_summary_kernel_whose_rows_are_all_damaged_is_counted_as_left_out() -> None:
    text = "\n".join(_text("summary_per_kernel.csv")).replace('"0","3"', '"0","0"')
    kept = read_input(str(input_file("summary_per_kernel.csv", text)), skip_bad_rows=True)
    assert kept.rows == 1 and "skipped 4 damaged rows" in kept.warnings[0]
    assert "1 kernel left out" in kept.warnings[0]


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("summary_per_kernel.csv", '"0","3"', '"0","99999999999999999999999"'),
        ("console_summary_per_kernel.txt", "Invocations 1\n", "Invocations 99999999999999999999\n"),
    ],
)
def test_a_count_beyond_any_integer_is_refused_not_wrapped(name: str, old: str, new: str) -> None:
    path = input_file(name, "\n".join(_text(name)).replace(old, new))
    with pytest.raises(BadInputError, match=r"invocations in all, more than the 1,000,000 launches"):
        read_input(str(path))


def test_a_deleted_raw_page_row_is_a_gap_in_the_ids() -> None:
    path = _without_line("raw_base.csv", 2)  # ID 0 of 0, 1
    with pytest.raises(BadInputError, match=r"line 3: ID 0 is missing before this row"):
        read_input(str(path))
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [1]
    assert "1 kernel left out" in kept.warnings[0]


def test_every_id_of_a_gap_is_counted() -> None:
    header, units, first, second, *_ = _text("raw_base.csv")
    text = "\n".join([header, units, first, second.replace('"1",', '"3",', 1)]) + "\n"  # IDs 0, 3
    path = input_file("gap.csv", text)
    with pytest.raises(
        BadInputError,
        match=r"line 4: IDs 1 to 2 are missing before this row: lost rows \(or an export filtered with -k\)$",
    ):
        read_input(str(path))
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [0, 3]
    assert "2 kernels left out" in kept.warnings[0]


def test_a_raw_page_without_its_units_row_is_damage() -> None:
    path = _without_line("raw_base.csv", 1)
    with pytest.raises(
        BadInputError, match=r"raw_base\.csv: line 2: no units row under the raw page's header"
    ):
        read_input(str(path))


@pytest.mark.parametrize(
    ("name", "cell", "bad"),
    [
        ("details_metrics_15col.csv", '"1,572,864"', '"abc"'),
        ("details_metrics_15col.csv", '"1,572,864"', '"1,2,3"'),
        ("raw_base.csv", '"1048576"', '"abc"'),
        (CONSOLE, "      1.41", "       abc"),
    ],
)
def test_a_cell_that_is_no_number_is_an_input_note(name: str, cell: str, bad: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    if cell not in text:  # the console fixture's SM Frequency
        cell, bad = "817.42", "abcdef"
    path = input_file(name, text.replace(cell, bad, 1))
    table = read_input(str(path))
    notes = [n for row in table.launches.get_column("input_notes").to_list() for n in (row or ())]
    shown = bad.strip().strip('"')
    assert any(f"reads {shown!r}, which is not a number" in note for note in notes), notes


def test_an_infinite_duration_is_noted_not_rederived() -> None:
    text = (FIXTURES / "raw_base.csv").read_text(encoding="utf-8").replace('"12345"', '"inf"', 1)
    table = read_input(str(input_file("raw_base.csv", text)))
    assert np.isnan(table.launches.item(0, "gpu__time_duration.sum"))
    assert table.launches.item(0, "input_notes").to_list() == [
        "input: gpu__time_duration.sum = inf is not finite; excluded"
    ]
    assert "1 value excluded as impossible" in table.warnings[0]


def test_a_details_page_kernel_gone_whole_is_a_gap_in_the_ids() -> None:
    lines = _text("details_metrics_15col.csv")
    path = input_file("details.csv", "\n".join(x for x in lines if not x.startswith('"0",')))
    with pytest.raises(BadInputError, match=r"details\.csv: line 4: ID 0 is missing before this row"):
        read_input(str(path))
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [1]
    assert "1 kernel left out" in kept.warnings[0]


def _raw_page(ids: list[int], edit: dict[int, str] | None = None) -> Path:
    """raw_base.csv's second kernel once per ID; `edit`: row index → the row's text instead."""
    header, units, _, second, *_ = _text("raw_base.csv")
    rows = [second.replace('"1",', f'"{i}",', 1) for i in ids]
    rows = [(edit or {}).get(i, row) for i, row in enumerate(rows)]
    return input_file("page.csv", "\n".join([header, units, *rows]) + "\n")


def _short(ident: int) -> str:
    """A row of 8 cells (the header has 27): damaged, its ID still readable."""
    second = _text("raw_base.csv")[3].replace('"1",', f'"{ident}",', 1)
    return ",".join(second.split(",")[:10])


def test_an_id_beyond_any_capture_is_one_damaged_row() -> None:
    """Not 999,999,998 lost launches, each a string in memory (a MemoryError before)."""
    path = _raw_page([0, 1, 999_999_999, 3])
    done = run_cli("analyze", str(path))
    assert done.returncode == 3
    assert done.stderr.splitlines()[0] == (
        f"error: {path}: line 5: ID '999999999' is beyond any capture's launches (a damaged ID?)"
    )
    assert done.stderr.splitlines()[1].startswith("hint: repair or re-export the file;")
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [0, 1, 3]
    assert "skipped 1 damaged row (line 5: ID '999999999' is beyond" in kept.warnings[0]
    assert kept.warnings[0].endswith("; 1 kernel left out")


def test_leading_zeros_are_no_digits_of_an_id() -> None:
    """`000000002` is launch 2, not an ID beyond any capture (its nine characters are no value)."""
    path = _raw_page([0, 1, 2])
    path.write_text(path.read_text(encoding="utf-8").replace('\n"2",', '\n"000000002",'), encoding="utf-8")
    done = read_input(str(path))
    assert done.frame["id"].tolist() == [0, 1, 2]
    assert done.warnings == ()


def test_a_details_page_id_beyond_any_capture_is_damage() -> None:
    text = (FIXTURES / "details_metrics_15col.csv").read_text(encoding="utf-8")
    path = input_file("details.csv", text.replace('\n"1",', '\n"999999999",'))
    with pytest.raises(BadInputError, match=r"line 12: ID '999999999' is beyond any capture's launches"):
        read_input(str(path))


def test_a_gap_of_a_hundred_million_ids_is_counted_not_listed() -> None:
    path = _raw_page([0, 1, 99_999_999])  # 8 digits: still a launch ID
    kept = read_input(str(path), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [0, 1, 99_999_999]
    assert kept.warnings[0].endswith(
        "(line 5: IDs 2 to 99999998 are missing before this row: lost rows "
        "(or an export filtered with -k)); 99999997 kernels left out"
    )


@pytest.mark.parametrize(
    ("ids", "edit", "warning"),
    [
        # a short row is one damaged row, its ID no second one missing at the next line
        ([0, 1, 2, 3], {2: _short(2)}, "skipped 1 damaged row (line 5: 8 cells where the header has 27)"),
        ([0, 1, 2, 3], {0: _short(0)}, "skipped 1 damaged row (line 3: 8 cells where the header has 27)"),
        ([0, 1, 2, 3, 4], {2: _short(2), 3: _short(3)}, "skipped 2 damaged rows (lines 5, 6: 8 cells"),
        # and a gap elsewhere is still lost rows
        ([0, 1, 2, 3, 4, 6], {2: _short(2)}, "skipped 2 damaged rows (lines 5, 8: 8 cells"),
        # a gap wider than the damaged rows in it: the rest are lost
        ([0, 1, 2, 5], {2: _short(2)}, "skipped 2 damaged rows (lines 5, 6: 8 cells"),
    ],
)
def test_a_damaged_row_is_counted_once(ids: list[int], edit: dict[int, str], warning: str) -> None:
    lost = len(edit) + (max(ids) + 1 - len(ids))
    kept = read_input(str(_raw_page(ids, edit)), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [i for n, i in enumerate(ids) if n not in edit]
    assert warning in kept.warnings[0]
    assert kept.warnings[0].endswith(f"; {lost} kernel{'s' if lost != 1 else ''} left out")


def test_a_gap_beside_a_damaged_row_says_how_many_are_lost_besides() -> None:
    path = _raw_page([0, 1, 2, 5], {2: _short(2)})
    with pytest.raises(BadInputError, match=r"\(1 more damaged row\)$"):
        read_input(str(path))
    assert read_input(str(path), skip_bad_rows=True).warnings[0].endswith("; 3 kernels left out")
    damage = Damage("page.csv", skip=True, rows=[(5, "8 cells where the header has 27")])
    check_ids([0, 1, 5], [3, 4, 6].__getitem__, damage, dropped=[2])
    assert damage.rows[1] == (
        6,
        "IDs 2 to 4 are missing before this row: 1 damaged above, 2 lost rows "
        "(or an export filtered with -k)",
    )
    assert damage.damaged_rows() == 3


def test_a_row_left_out_for_its_device_is_no_gap_too() -> None:
    second = _text("raw_base.csv")[3]
    bad_device = second.replace('"1",', '"2",', 1).replace('"0","8.0"', '"x","8.0"', 1)
    kept = read_input(str(_raw_page([0, 1, 2, 3, 5], {2: bad_device})), skip_bad_rows=True)
    assert kept.frame["id"].tolist() == [0, 1, 3, 5]
    assert kept.warnings[0].endswith("(lines 5, 7: Device 'x' is not an integer index); 2 kernels left out")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=40))
def test_every_missing_id_is_counted_once_at_the_row_after_its_gap(ids: list[int]) -> None:
    """IDs in any order, repeated or not: each gap named at the first row listed after it."""
    damage = Damage("page.csv", skip=True)
    check_ids(ids, lambda row: 100 + row, damage)
    present = sorted(set(ids))
    gaps = [(a + 1, b - 1) for a, b in zip([-1, *present], present, strict=False) if b - a > 1]
    rows = [100 + next(i for i, x in enumerate(ids) if x > first) for first, _ in gaps]
    assert [line for line, _ in damage.rows] == rows
    assert damage.damaged_rows() == max(ids) + 1 - len(present)


def test_rows_under_a_damaged_first_header_that_holds_the_intact_ones_start_are_damage() -> None:
    # "xx" glued before the first header: its first 64 bytes still appear inside that line, so the
    # rows under it were passed over in silence as lines before the first intact header
    lines = _text("raw_base.csv")
    path = input_file("damaged_first_header.csv", "\n".join(["xx" + lines[0], *lines[1:3], *lines]) + "\n")
    result = run_cli("analyze", str(path))
    assert result.returncode == 3
    assert "line 1: a CSV row (or header) before the first intact header" in result.stderr
    skipped = run_cli("analyze", str(path), "--skip-bad-rows", "-F", "json")
    assert skipped.returncode == 0 and "warning: " in skipped.stderr


def test_skip_bad_rows_leaves_out_a_capture_whose_every_launch_failed_and_names_it(tmp_path: Path) -> None:
    for name in ("raw_base.csv", "raw_every_launch_failed.csv", "raw_nvtx.csv"):  # a folder of captures
        (tmp_path / name).write_bytes((FIXTURES / name).read_bytes())
    path = tmp_path / "raw_every_launch_failed.csv"
    failed = f"{path}: collection failed for every launch (2 launches): ncu measured nothing"
    refused = run_cli("analyze", str(tmp_path), "-F", "json")  # without it: one error, one hint, exit 3
    error, hint = refused.stderr.splitlines()[-2:]
    assert (refused.returncode, refused.stdout, error, hint[:5]) == (3, "", f"error: {failed}", "hint:")
    skipped = run_cli("analyze", str(tmp_path), "--skip-bad-rows", "-F", "json")
    assert skipped.returncode == 0, skipped.stderr
    assert f"warning: {failed}; left out (--skip-bad-rows)" in " ".join(skipped.stderr.split())
    others = run_cli("analyze", str(tmp_path / "raw_base.csv"), str(tmp_path / "raw_nvtx.csv"), "-F", "json")
    assert skipped.stdout == others.stdout  # the other captures, as if analyzed alone
    assert run_cli("analyze", str(path), "--skip-bad-rows").returncode == 3  # nothing else measured: refused
