"""Generated damage to ncu's text and CSV, read by the readers: no silent loss.

Generators: application lines interleaved anywhere (inside section tables too), terminal colour
codes, the text cut at every line end and inside lines, numbers in other locales, CSV rows
deleted. Every case asserts: no exception but `BadInputError` (no traceback), and either the
same kernels with the same values, or the damage said (an error, or a warning), or, where no
reader could tell (a text cut exactly after a kernel's last table), only kernels and values the
intact input has. A details page's kernel is checked against the other kernels' rows, so the
row deletions use pages whose kernels share one row set (a kernel with rows of its own has
nothing to be checked against).
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest
from conftest import examples, input_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncu_roof.errors import BadInputError
from ncu_roof.ingest import RunTable, read_input

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TEXTS = (
    "console_details_2024.txt",
    "console_details_2022_old.txt",
    "console_summary_per_kernel.txt",
    "console_summary_per_gpu_2022.txt",
)
CSVS = (
    "raw_base.csv",
    "raw_two_runs_with_app_output.csv",
    "details_metrics_15col.csv",
    "summary_per_kernel.csv",
)
Kernels = list[dict[str, float]]
# the `ci` profile's 100 examples (each ~8 ms: one read of a page), 3000 in `thorough`; examples are
# random, so successive runs explore further
FAST = settings(max_examples=examples(100, 3000), suppress_health_check=[HealthCheck.too_slow])


def _lines(name: str) -> list[str]:
    return (FIXTURES / name).read_text(encoding="utf-8").split("\n")


def _kernels(table: RunTable) -> Kernels:
    """Each launch's metric values (missing ones left out), in order; a --print-summary kernel
    once (its N invocations are N launches of the same values, one after another)."""
    rows: Kernels = [{} for _ in range(table.rows)]
    for metric in table.metric_columns:
        for row, value in zip(rows, table.launches.get_column(metric).to_list(), strict=True):
            if not math.isnan(value):
                row[metric] = value
    if table.averaged:
        return [row for i, row in enumerate(rows) if i == 0 or row != rows[i - 1]]
    return rows


INTACT = {name: _kernels(read_input(str(FIXTURES / name))) for name in (*TEXTS, *CSVS)}


def _read(name: str, text: str) -> tuple[Kernels, tuple[str, ...]] | None:
    """The kernels and warnings of `text` read as `name`; None when it is refused as damaged."""
    try:
        table = read_input(str(input_file(name, text)))
    except BadInputError:
        return None
    return _kernels(table), table.warnings


# --- application output, colour codes ---------------------------------------------------------

APP_LINES = st.one_of(
    st.sampled_from(
        [
            "",
            "loss=0.123",
            "epoch 3/10 done",
            "-------",
            "=== step 4 ===",
            "Traceback (most recent call last):",
        ]
    ),
    st.builds(
        lambda indent, words: " " * indent + words,
        st.integers(0, 8),
        st.text(alphabet="abcxyz=:.,%/0123456789 ", max_size=40).filter(
            lambda t: not t.strip().startswith("Metric")
        ),
    ),
)
COLOURS = st.sampled_from(["\x1b[32m", "\x1b[1;31m", "\x1b[0m", "\x1b[38;5;208m", "\x1b]0;title\x07"])


@FAST
@given(st.sampled_from(TEXTS), st.lists(st.tuples(st.integers(0, 200), APP_LINES), min_size=1, max_size=4))
def test_application_lines_anywhere_change_no_kernel(name: str, inserts: list[tuple[int, str]]) -> None:
    lines = _lines(name)
    for at, line in inserts:
        lines.insert(at % len(lines), line)  # never after the text's last line break
    assert _read(name, "\n".join(lines)) == (INTACT[name], ())


@FAST
@given(st.sampled_from(TEXTS), st.data())
def test_colour_codes_around_any_lines_change_no_kernel(name: str, data: st.DataObject) -> None:
    lines = _lines(name)
    coloured = [
        f"{data.draw(COLOURS)}{line}\x1b[0m" if line.strip() and data.draw(st.booleans()) else line
        for line in lines
    ]
    assert _read(name, "\n".join(coloured)) == (INTACT[name], ())


# --- truncation ------------------------------------------------------------------------------


def _no_silent_loss(name: str, text: str, at_line_end: bool) -> None:
    intact = INTACT[name]
    read = _read(name, text)
    if read is None:
        return  # refused as damaged: said
    kernels, warnings = read
    assert len(kernels) <= len(intact)
    if warnings:
        return  # the loss is said
    if not at_line_end:
        assert kernels == intact, "a cut inside a line went unsaid"
        return
    # a cut exactly at a line end after a table: every kernel as it was, the last one's tables
    # the first few of its own; and a console capture whose ==PROF== lines count launches says so
    assert kernels[:-1] == intact[: len(kernels) - 1]
    if kernels:
        last = kernels[-1]
        assert last == {m: v for m, v in intact[len(kernels) - 1].items() if m in last}
    announced = len(set(re.findall(r'^==PROF== Profiling ".*" - (\d+)', text, re.MULTILINE)))
    if name.endswith(".txt") and len(kernels) < len(intact):  # console text counts the launches
        assert announced <= len(kernels), "a loss the ==PROF== lines show went unsaid"


@pytest.mark.parametrize("name", [*TEXTS, *CSVS])
def test_a_cut_at_every_line_end_loses_nothing_silently(name: str) -> None:
    lines = _lines(name)
    for end in range(len(lines)):
        _no_silent_loss(name, "\n".join(lines[:end]) + "\n", at_line_end=True)


@FAST
@given(st.sampled_from([*TEXTS, *CSVS]), st.floats(0, 1))
def test_a_cut_inside_a_line_loses_nothing_silently(name: str, where: float) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    at = int(where * (len(text) - 1))
    if text[at - 1 : at] == "\n" or not text[:at].strip():
        return  # a line end (the test above), or nothing left
    _no_silent_loss(name, text[:at], at_line_end=False)


# --- number locales ----------------------------------------------------------------------------

LOCALES = {"fr_FR": ("\u202f", ","), "de_CH": ("\u2019", "."), "de_DE": (".", ",")}
_EN_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)(?![\w.,])")


def _in_locale(line: str, group: str, decimal: str) -> str:
    def convert(match: re.Match[str]) -> str:
        return match[0].replace(",", "\0").replace(".", decimal).replace("\0", group)

    return _EN_NUMBER.sub(convert, line)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("name", [*TEXTS, "details_metrics_15col.csv", "summary_per_kernel.csv"])
def test_numbers_in_other_locales_read_as_in_en_us(name: str, locale: str) -> None:
    group, decimal = LOCALES[locale]
    if name.endswith(".csv"):  # the value cells only (a CSV's separator is a comma)
        cells = re.compile(r'"([\d,]+(?:\.\d+)?)"(?=,?$)')
        lines = [cells.sub(lambda m: '"' + _in_locale(m[1], group, decimal) + '"', x) for x in _lines(name)]
    else:  # the rows of a section table: below a rule, never a kernel line (`CC 8.6`)
        lines = [
            _in_locale(x, group, decimal) if x.startswith("    ") and "Section:" not in x else x
            for x in _lines(name)
        ]
        lines = [x.replace(f"CC 8{decimal}", "CC 8.") for x in lines]
    assert _read(name, "\n".join(lines)) == (INTACT[name], ())


# --- CSV rows deleted -------------------------------------------------------------------------


@pytest.mark.parametrize("name", CSVS)
def test_each_deleted_csv_row_is_damage_or_changes_nothing(name: str) -> None:
    lines = _lines(name)
    rows = [
        i
        for i, line in enumerate(lines)
        if line.startswith('"') and not line.startswith(('"ID"', '"Process ID"'))
    ]
    for i in rows:
        text = "\n".join(lines[:i] + lines[i + 1 :])
        read = _read(name, text)
        if read is None or read[1]:
            continue  # refused, or said
        kernels, _ = read
        last_row = i == rows[-1] or not any(r > i and lines[r].startswith('"') for r in rows if r != i)
        if kernels == INTACT[name]:
            continue  # a row the recipe does not read (a units cell it had no column for, …)
        # only the page's last row can go unsaid: a page cut there reads as a shorter one
        assert last_row and kernels == INTACT[name][: len(kernels)], (name, i + 1)


def _kernel_of(lines: list[str]) -> dict[int, tuple[str, ...]]:
    """Each metric row's kernel (the cells before `Section Name`) on a details or summary page."""
    header = next(csv.reader([next(x for x in lines if x.startswith(('"ID"', '"Process ID"')))]))
    if "Section Name" not in header:
        return {}
    cut = header.index("Section Name")
    rows = {i: next(csv.reader([x])) for i, x in enumerate(lines) if x.startswith('"') and x != lines[0]}
    return {i: tuple(cells[:cut]) for i, cells in rows.items() if len(cells) > cut and cells[cut + 1 :]}


@FAST
@given(st.sampled_from(CSVS), st.lists(st.integers(0, 1000), min_size=2, max_size=4, unique=True))
def test_several_deleted_rows_are_damage_or_said(name: str, picks: list[int]) -> None:
    """Rows of a raw page, or of one kernel of a per-metric page: a kernel is checked against the
    others' rows, so rows of every kernel gone at once (none left whole) are past telling."""
    lines = _lines(name)
    rows = [
        i
        for i, line in enumerate(lines)
        if line.startswith('"') and not line.startswith(('"ID"', '"Process ID"'))
    ]
    kernel = _kernel_of(lines)
    if kernel:
        first = kernel.get(rows[picks[0] % len(rows)])
        rows = [i for i in rows if kernel.get(i) == first]
    gone = {rows[p % len(rows)] for p in picks}
    read = _read(name, "\n".join(x for i, x in enumerate(lines) if i not in gone))
    if read is None or read[1]:
        return
    kernels, _ = read
    if kernels == INTACT[name] or (rows[-1] in gone and kernels == INTACT[name][: len(kernels)]):
        return
    if kernel and set(rows) <= gone and name.startswith("summary"):
        # a summary names no launch IDs: a kernel gone whole reads as one never profiled
        assert any(kernels == INTACT[name][:k] + INTACT[name][k + 1 :] for k in range(len(INTACT[name])))
        return
    # the same metric's row gone from every kernel: no kernel to tell it by (it reads as a metric
    # not collected, which the notes call a missing counter)
    assert len(kernels) == len(INTACT[name]), sorted(gone)
    lost = set().union(*(set(whole) - set(read) for whole, read in zip(INTACT[name], kernels, strict=True)))
    for values, whole in zip(kernels, INTACT[name], strict=True):
        assert values == {m: v for m, v in whole.items() if m not in lost}, sorted(gone)
