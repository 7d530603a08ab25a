"""Hypothesis mutation suite over the project's own fixtures: damaged input never crashes,
hangs or loses a kernel without a word.

Every example runs `analyze` in process and asserts: exit 0 or 3, never 1; no traceback and
no internal error; on failure no output file; on success as many kernels as the intact input
has, or a `warning:` on stderr saying why. (A file cut exactly between two rows cannot be told
from a shorter one: there only "no more kernels than the intact input" is asserted.)
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import tempfile
from pathlib import Path

import pytest
from conftest import examples, read_once
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncu_roof.cli import main
from ncu_roof.ingest import read_input

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NAMES = (
    "raw_base.csv",
    "raw_base_de_DE.csv",
    "raw_two_runs_with_app_output.csv",
    "details_metrics_15col.csv",
    "details_rules_20col.csv",
    "console_details_2024.txt",
    "console_details_2022_old.txt",
    "console_summary_per_kernel.txt",
    "console_summary_per_gpu_2022.txt",
    "summary_per_kernel.csv",
)
SOURCES = {name: (FIXTURES / name).read_bytes() for name in NAMES}


def intact_kernels(name: str) -> int:
    """Launches in the intact fixture `name` (read once per session, when first needed)."""
    return len(read_once(FIXTURES / name).frame)


HOSTILE = (
    "=cmd|' /C calc'!A0",
    "+1+1",
    "@SUM(A1)",
    "-2",
    "\x1b[31mred\x1b[0m",
    "line\nbreak",
    "cr\rlf\r\n",
    "nel\x85lsep\u2028psep\u2029",
    "rtl\u202eoverride\u2066",
    'quote"inside',
    "|pipe|`tick`<b>&amp;",
    "nul\x00byte",
    "",
    "x" * 3000,
)
UNITS = (
    b"nsecond",
    b"usecond",
    b"msecond",
    b"ns",
    b"us",
    b"Ghz",
    b"GHz",
    b"cycle/nsecond",
    b"byte",
    b"Mbyte",
    b"furlong",
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes, bool]:
    """(fixture name, mutated bytes, cut exactly at a line end)."""
    name = draw(st.sampled_from(NAMES))
    data = SOURCES[name]
    kind = draw(
        st.sampled_from(
            (
                "truncate",
                "flip",
                "drop_cell",
                "dup_cell",
                "drop_column",
                "dup_column",
                "quote",
                "unit",
                "number",
                "hostile",
            )
        )
    )
    lines = data.split(b"\n")
    pos = draw(st.integers(0, max(len(data) - 1, 0)))
    if kind == "truncate":
        # between two lines: what is left of the cut line is blank, or the line was whole
        partial = data[:pos].rsplit(b"\n", 1)[-1]
        at_line_end = not partial.strip() or data[pos : pos + 1] in (b"\n", b"\r")
        return name, data[:pos], at_line_end or not data[pos:].strip()
    if kind == "flip":
        byte = data[pos] ^ draw(st.integers(1, 255))
        return name, data[:pos] + bytes([byte]) + data[pos + 1 :], False
    if kind == "quote":
        if draw(st.booleans()) and b'"' in data:
            quotes = [m.start() for m in re.finditer(rb'"', data)]
            at = draw(st.sampled_from(quotes))
            return name, data[:at] + data[at + 1 :], False
        return name, data[:pos] + b'"' + data[pos:], False
    if kind in ("drop_cell", "dup_cell"):
        row = draw(st.integers(0, len(lines) - 1))
        cells = lines[row].split(b",")
        at = draw(st.integers(0, len(cells) - 1))
        cells[at : at + 1] = [] if kind == "drop_cell" else [cells[at], cells[at]]
        lines[row] = b",".join(cells)
        return name, b"\n".join(lines), False
    if kind in ("drop_column", "dup_column"):
        column = draw(st.integers(0, 20))
        out = []
        for line in lines:
            cells = line.split(b",")
            if column < len(cells):
                cells[column : column + 1] = [] if kind == "drop_column" else [cells[column]] * 2
            out.append(b",".join(cells))
        return name, b"\n".join(out), False
    if kind == "unit":
        old, new = draw(st.sampled_from(UNITS)), draw(st.sampled_from(UNITS))
        return name, data.replace(old, new), False
    if kind == "number":
        style = draw(
            st.sampled_from(
                ((rb"(\d)\.(\d)", rb"\1,\2"), (rb"(\d),(\d)", rb"\1.\2"), (rb"(\d)(\d{3})\b", rb"\1,\2"))
            )
        )
        if draw(st.booleans()):
            return name, re.sub(style[0], style[1], data), False
        row = draw(st.integers(0, len(lines) - 1))
        lines[row] = re.sub(style[0], style[1], lines[row])
        return name, b"\n".join(lines), False
    text = draw(st.sampled_from(HOSTILE)).encode("utf-8")
    targets = [
        b"reduce_kernel",
        b"fill_kernel",
        b"stencil",
        b"layer_norm",
        b"heat_3d",
        b"saxpy",
        b"warp_reduce",
        b"(256, 1, 1)",
        b"(4096, 1, 1)",
        b"NVIDIA A100-SXM4-40GB",
        b"bench",
    ]
    target = draw(st.sampled_from([t for t in targets if t in data] or [b"ID"]))
    quoted = text.replace(b'"', b'""')
    return name, data.replace(target, quoted), False


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
    return code, out.getvalue(), err.getvalue()


def _analyze(name: str, data: bytes, fmt: str, *extra: str) -> tuple[int, str, str, int | None]:
    """`analyze` on `data` saved as `name`: exit code, stdout, stderr and kernels written (or None)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / name
        source.write_bytes(data)
        target = Path(folder) / f"out.{fmt}"
        argv = ["analyze", str(source), "-F", fmt, "-o", str(target), "--gpu", "a100-sxm4-40gb", *extra]
        code, out, err = _run(argv)
        err = err.replace(str(source), name)
        assert code in (0, 3), err
        assert "Traceback" not in err and "internal error" not in err, err
        if code != 0:
            assert not target.exists()
            assert err.startswith("error: ") or "\nerror: " in err, err
            return code, out, err, None
        assert f"read {name}: " in err
        text = target.read_text(encoding="utf-8")
        if fmt == "json":
            return code, out, err, len(json.loads(text)["kernels"])
        rows = list(csv.DictReader(io.StringIO(text)))
        for row in rows:
            for column in ("name", "grid", "block", "notes"):
                assert not row[column].startswith(("=", "+", "-", "@")), row[column]
        return code, out, err, len(rows)


@settings(
    max_examples=examples(ci=30, thorough=500),  # each example is a whole `analyze` run
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated(), st.sampled_from(("json", "csv")))
def test_mutated_inputs_fail_cleanly_or_lose_nothing_silently(
    case: tuple[str, bytes, bool], fmt: str
) -> None:
    name, data, at_line_end = case
    _, _, err, count = _analyze(name, data, fmt)
    if count is None:
        return
    expected = intact_kernels(name)
    if count != expected and "warning:" not in err:
        assert at_line_end and count < expected, (name, count, expected, err)


# Falsifying examples the suite found, kept as explicit cases (not only in Hypothesis's database).


@pytest.mark.parametrize(
    ("end", "line"),
    [
        (b'"16384"\nr', 7),  # the falsifying example: one byte into the application output
        (b'\n"ID","Process ID","Pro', 9),  # inside the second run's header line
    ],
)
def test_a_file_cut_inside_a_line_that_is_no_row_says_so(end: bytes, line: int) -> None:
    """Cut between the two runs: the second run is gone, and the reader saw no cut data row (that
    was an error already), only a last line without its line break."""
    name = "raw_two_runs_with_app_output.csv"
    data = SOURCES[name]
    data = data[: data.rindex(end) + len(end)]
    for fmt in ("json", "csv"):
        code, _, err, count = _analyze(name, data, fmt)
        assert (code, count) == (0, 1) == (0, intact_kernels(name) - 1)
        assert (
            f"warning: {name}: the text ends in the middle of line {line}: the capture may be cut short "
            "(ncu ends its output with a line break)\n"
        ) in err


def test_a_last_row_that_reads_whole_without_its_line_break_says_so() -> None:
    """Found next: a details page cut at a cell boundary of a rule row; what is left has as many
    cells as a metric row, so it reads whole, and the second kernel's rows are gone."""
    name = "details_rules_20col.csv"
    end = b'"SpeedOfLight","","","","SOLBottleneck"'
    data = SOURCES[name][: SOURCES[name].index(end) + len(end)]
    code, _, err, count = _analyze(name, data, "json")
    assert (code, count) == (0, 1) == (0, intact_kernels(name) - 1)
    assert f"warning: {name}: the text ends in the middle of line 8: the capture may be cut short" in err


@pytest.mark.parametrize(
    ("old", "new", "line", "begins"),
    [
        # the falsifying example: the first of the two repeated lines above Device 0's sections
        (b"\n    saxpy(int", b"\n !  saxpy(int", 13, "Launch Statistics"),
        # the same damage on the repeat: its one section splits off as well
        (b"\n\n    saxpy(int", b"\n\n    saxpz(int", 13, "Launch Statistics"),
    ],
)
def test_a_damaged_copy_of_a_repeated_summary_line_is_no_extra_kernel(
    old: bytes, new: bytes, line: int, begins: str
) -> None:
    name = "console_summary_per_gpu_2022.txt"
    data = SOURCES[name].replace(old, new, 1)
    assert data != SOURCES[name]
    code, _, err, _ = _analyze(name, data, "json")
    assert code == 3
    reason = (
        f"its sections begin at {begins!r}, not at 'GPU Speed Of Light Throughput': "
        "they continue the kernel on line 3 (a damaged copy of its line?)"
    )
    assert err.startswith(f"error: {name}: line {line}: kernel "), err
    assert reason in err and "\nhint: " in err
    code, _, err, count = _analyze(name, data, "json", "--skip-bad-rows")
    # every launch kept: saxpy's "3 invocations" on device 0 and its one on device 1
    assert (code, count) == (0, 4) == (0, intact_kernels(name))
    assert f"warning: {name}: skipped 1 damaged row (line {line}: kernel " in err
    assert reason in err and "; 1 kernel left out\n" in err


@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_reads_whole_without_warnings(name: str) -> None:
    table = read_input(str(FIXTURES / name))
    assert len(table.frame) == intact_kernels(name) > 0
    assert table.warnings == ()
