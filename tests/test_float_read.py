"""A raw page's metrics read as numbers by pyarrow's reader (`ingest.csvraw._parse_block`) give what
their text read and parse give: the same values, notes, warnings and errors, on every mix of cells
ncu writes or a hand leaves (numbers in each style, ncu's words for missing, infinities, damaged
cells) and of hostile layouts (a line break in a kernel name, a blank line, CRLF)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncu_roof.base.units import NumberStyle
from ncu_roof.errors import NcuRoofError
from ncu_roof.ingest import csvraw, read_input

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LINES = (FIXTURES / "raw_base.csv").read_text(encoding="utf-8").splitlines()
IDENTITY = 12  # the identity cells and the device's name; the metrics follow
CELLS = [
    *("12345", "1.5", "0.25", "1.234", "1e3", "1E+05", "-0", "+2", " 7 ", "007", ".5", "5.", "1000000"),
    *("n/a", "N/A", "", "-", "--", "(!) nan", "nan", "NaN", "-nan", "+nan", "inf", "-Infinity"),
    *("1,234", "1,234.5", "1.234,5", "1.234.567", "12abc", "0x10"),
]


@contextmanager
def text_read_only() -> Iterator[None]:
    """The float read refused, as if a cell were no number: every metric read as text."""
    read = csvraw._arrow_read

    def as_text(block: Any, chosen: list[str], has_units: bool, numbers: list[str]) -> Any:
        return None if numbers else read(block, chosen, has_units, numbers)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(csvraw, "_arrow_read", as_text)
        yield


def outcome(path: Path, style: NumberStyle | None, skip: bool = True) -> tuple[str, Any]:
    try:
        table = read_input(str(path), number_style=style, skip_bad_rows=skip)
    except NcuRoofError as err:
        return "error", (str(err), err.hint)
    return "table", (table.frame, table.warnings)


def page(
    rows: list[list[str]], name: str, blank: bool, newline: str, units: bool = True, bad: int = -1
) -> str:
    cells = LINES[2].split('","')
    lines = [LINES[0], LINES[1]] if units else [LINES[0]]
    for number, metrics in enumerate(rows):
        ident = "x" if number == bad else str(number)
        identity = [ident, *cells[1:4], name if number == 0 else "k", *cells[5:IDENTITY]]
        lines.append(",".join(f'"{c}"' for c in [*identity, *metrics]))
        if blank and number == 0:
            lines.append("")
    return newline.join(lines) + newline


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.lists(st.sampled_from(CELLS), min_size=15, max_size=15), min_size=1, max_size=5),
    plain=st.booleans(),
    name=st.sampled_from(["scale", "two\nlines", 'a "quoted" name']),
    blank=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
    style=st.sampled_from([None, NumberStyle.C, NumberStyle.EN, NumberStyle.DE]),
    units=st.booleans(),
    bad=st.integers(-1, 4),
    skip=st.booleans(),
)
def test_the_float_read_gives_what_the_text_read_gives(
    tmp_path: Path,
    rows: list[list[str]],
    plain: bool,
    name: str,
    blank: bool,
    newline: str,
    style: NumberStyle | None,
    units: bool,
    bad: int,
    skip: bool,
) -> None:
    if plain:  # the common case: every cell a plain number (the float read takes it)
        rows = [[str(1000 + 7 * i + j) + ".5" for j in range(len(r))] for i, r in enumerate(rows)]
    path = tmp_path / "page.csv"
    path.write_bytes(page(rows, name.replace('"', '""'), blank, newline, units, bad).encode("utf-8"))
    same(path, style, skip)


def same(path: Path, style: NumberStyle | None, skip: bool) -> None:
    got = outcome(path, style, skip)
    with text_read_only():
        want = outcome(path, style, skip)
    assert got[0] == want[0]
    if got[0] == "error":
        assert got[1] == want[1]
    else:
        pd.testing.assert_frame_equal(got[1][0], want[1][0], check_exact=True)
        assert got[1][1] == want[1][1]


def test_a_plain_single_block_page_is_read_as_numbers_and_a_forced_de_one_as_text(tmp_path: Path) -> None:
    read = csvraw._arrow_read
    floats: list[bool] = []

    def spy(block: Any, chosen: list[str], has_units: bool, numbers: list[str]) -> Any:
        table = read(block, chosen, has_units, numbers)
        floats.append(table is not None and str(table["gpu__time_duration.sum"].type) == "double")
        return table

    path = tmp_path / "plain.csv"
    path.write_text(page([["1"] * 15, ["2.5"] * 15], "k", blank=False, newline="\n"), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(csvraw, "_arrow_read", spy)
        assert read_input(str(path)).frame["gpu__time_duration.sum"].tolist() == [1e-9, 2.5e-9]
        assert floats == [True]
        floats.clear()
        path.write_text(page([["1"] * 15], "k", blank=False, newline="\n"), encoding="utf-8")
        forced = read_input(str(path), number_style=NumberStyle.DE)
        assert forced.frame["gpu__time_duration.sum"].tolist() == [1e-9]
        assert floats == [False]  # forced `de`: `1.234` would be 1234, so read as text


def test_the_sample_of_a_long_page_read_as_numbers_is_the_text_reads(tmp_path: Path) -> None:
    # 700 rows, row 5's ID damaged: the locale detection samples 512 of the 699 rows kept. Only
    # the rows it does not sample hold a `1.5` (a decimal point for sure), so the sampled `1.234`s
    # alone are ambiguous: a sample taken off by the row left out would see a `1.5`
    sampled = {row + (row >= 5) for row in csvraw._sample_rows(699)}
    rows = [["1.234" if i in sampled else "1.5"] * 15 for i in range(700)]
    path = tmp_path / "long.csv"
    path.write_text(page(rows, "k", blank=False, newline="\n", bad=5), encoding="utf-8")
    assert outcome(path, None)[1][0].endswith(
        "cannot tell whether ',' or '.' is the decimal mark in this file"
    )
    same(path, None, skip=True)
