"""diff: matching, exact percentages, one-sided kernels, GPU mismatch, the regression gate."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import conftest
import numpy as np
import pytest
from conftest import CliResult
from hypothesis import example, given
from hypothesis import strategies as st
from test_layout import CUTLASS

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.model import finite_or_none
from ncu_roof.analysis.records import device_name
from ncu_roof.base.text import shorten
from ncu_roof.compare.comparison import MismatchError, diff, gate
from ncu_roof.compare.pairs import Change, Status
from ncu_roof.errors import GateError
from ncu_roof.render.diffout import (
    HEADERS,
    KERNEL_MIN,
    NAME_MIN,
    _sums,
    diff_json_pieces,
    pair_order,
    render_diff_markdown,
    render_diff_table,
)
from ncu_roof.render.output import joined

ROOT = Path(__file__).resolve().parents[1]
IDENTITY = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]
METRICS = [
    ("gpu__time_duration.sum", "nsecond"),
    ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst"),
    ("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst"),
    ("dram__bytes.sum", "byte"),
    ("device__attribute_display_name", ""),
]
HOSTILE = "void k<a|b, `c`>(T*) $x$"
Row = tuple[str, str, float, float, float]  # name, grid, duration ns, ffma inst, dram bytes


def raw_csv(rows: list[Row], device: str = "NVIDIA A10G") -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)
    writer.writerow(IDENTITY + [m for m, _ in METRICS])
    writer.writerow([""] * len(IDENTITY) + [u for _, u in METRICS])
    for i, (name, grid, ns, ffma, dram) in enumerate(rows):
        writer.writerow(
            [i, 1, "app", "host", name, 1, 7, "(256, 1, 1)", grid, 0, "8.6", ns, 0, 0, ffma, dram, device]
        )
    return out.getvalue()


BASE: list[Row] = [
    (HOSTILE, "(8, 1, 1)", 1000, 1e6, 4e6),
    (HOSTILE, "(8, 1, 1)", 2000, 1e6, 4e6),
    ("gone", "(1, 1, 1)", 500, 0, 1e3),
]
HEAD: list[Row] = [
    (HOSTILE, "(8, 1, 1)", 1100, 1e6, 4e6),
    (HOSTILE, "(8, 1, 1)", 1000, 1e6, 2e6),
    ("new", "(1, 1, 1)", 400, 0, 1e3),
]


def write(name: str, rows: list[Row], device: str = "NVIDIA A10G") -> str:
    """The raw CSV of `rows` as a file `name`, written once per session (`conftest.input_file`)."""
    return str(conftest.input_file(name, raw_csv(rows, device)))


def load(path: str) -> Analysis:
    """`analyze([read_input(path)])`, once per session for each path (`conftest.analyzed`)."""
    return conftest.analyzed(Path(path))


@pytest.fixture
def pair() -> tuple[str, str]:
    return write("base.csv", BASE), write("head.csv", HEAD)


def test_matches_by_order_among_equals_with_exact_changes(pair: tuple[str, str]) -> None:
    result = diff(load(pair[0]), load(pair[1]))
    first, second = result.kernels[0], result.kernels[1]
    assert (first.occurrence, second.occurrence) == (0, 1)
    assert first.duration_s.delta_pct == pytest.approx(10.0)
    assert first.status is Status.REGRESSED
    assert first.flop_per_s.delta_pct == pytest.approx(100.0 * (1 / 1.1 - 1))
    assert second.duration_s.delta_pct == pytest.approx(-50.0)
    assert second.bytes["dram"].delta_pct == pytest.approx(-50.0)
    assert second.intensity_flop_per_byte["dram"].delta_pct == pytest.approx(100.0)
    assert second.flop_per_s.delta_pct == pytest.approx(100.0)
    assert second.status is Status.IMPROVED
    # the total sums the matched pairs (1 + 2 µs → 1.1 + 1 µs); `new` and `gone` apart
    assert result.total_duration_s.base == pytest.approx(3e-6)
    assert result.total_duration_s.delta_pct == pytest.approx(-30.0)
    assert result.new_s == pytest.approx(4e-7) and result.removed_s == pytest.approx(5e-7)
    assert result.total_status is Status.IMPROVED


def test_one_sided_kernels_are_listed(pair: tuple[str, str]) -> None:
    result = diff(load(pair[0]), load(pair[1]))
    only_head = [k for k in result.kernels if k.status is Status.ONLY_HEAD]
    assert [k.name for k in only_head] == ["new"]
    assert [k.name for k in result.kernels if k.status is Status.ONLY_BASE] == ["gone"]
    assert only_head[0].duration_s.base is None
    assert only_head[0].duration_s.delta_pct is None


def test_threshold_is_exclusive(pair: tuple[str, str]) -> None:
    result = diff(load(pair[0]), load(pair[1]), threshold_pct=10.0)
    assert result.kernels[0].status is Status.UNCHANGED  # +10.0 % is not beyond 10 %


def test_refuses_different_gpus_unless_allowed() -> None:
    base = load(write("a.csv", BASE))
    other = load(write("h.csv", BASE, device="NVIDIA H100 PCIe"))
    with pytest.raises(MismatchError, match=r"A10G.*H100"):
        diff(base, other)
    allowed = diff(base, other, allow_mismatch=True)
    assert allowed.mismatch is not None
    assert all(k.duration_s.delta_pct == 0.0 for k in allowed.kernels)


def test_a_side_that_names_no_gpu_is_compared_and_said() -> None:
    """A head that names no GPU (an export without the device's name) is an unknown GPU, not
    another one: compared, with a note (it was refused: `base ran on NVIDIA A10G, head on ?`)."""
    base, head = load(write("a.csv", BASE)), load(write("unnamed.csv", BASE, device=""))
    assert not head.devices[0].name
    result = diff(base, head)
    assert result.mismatch is None
    assert result.notes[0].startswith("GPUs not compared: a device of the head names none")
    named = device_name(head.devices[0])
    assert f"GPU: base `NVIDIA A10G`, head `{named}`" in render_diff_markdown(result)
    assert "GPU: `NVIDIA A10G`\n" in render_diff_markdown(diff(base, base))


def test_the_named_gpus_of_a_side_with_an_unnamed_one_are_still_compared() -> None:

    from ncu_roof.compare.comparison import mismatch_reason

    base = load(write("a.csv", BASE))
    a10g = base.devices[0]
    head = replace(base, devices=(replace(a10g, name="NVIDIA H100 PCIe"), replace(a10g, index=1, name=None)))
    reason, _ = mismatch_reason(base, head)  # one unnamed device turned the check off
    assert reason is not None and reason.startswith("base ran on NVIDIA A10G, head on ") and "H100" in reason
    same = replace(base, devices=(a10g, replace(a10g, index=1, name=None)))
    reason, note = mismatch_reason(base, same)
    assert reason is None and note is not None and note.startswith("GPUs not compared: a device of the head")


@pytest.fixture
def slower_pair() -> tuple[str, str]:
    """One kernel, one launch: 1 µs → 1.1 µs (+10 %)."""
    return write("one-base.csv", [BASE[0]]), write("one-head.csv", [HEAD[0]])


def test_gate_trips_on_kernel_regression_only_beyond_pct(slower_pair: tuple[str, str]) -> None:
    base, head = map(load, slower_pair)
    gate(diff(base, head, threshold_pct=10.0))  # +10.0 % is not more than 10 %
    with pytest.raises(GateError, match=r"\+10\.0%"):
        gate(diff(base, head, threshold_pct=9.0))


def test_renderers_escape_hostile_names(pair: tuple[str, str]) -> None:
    result = diff(load(pair[0]), load(pair[1]))
    markdown = render_diff_markdown(result)
    assert markdown.startswith("<!-- ncu-roof:diff -->\n")
    table_rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    for line in table_rows:  # every row keeps its 8 columns: no raw `|` from names
        assert line.replace("\\|", "").count("|") == len(HEADERS) + 1 == 9
    assert "<a|b" not in markdown
    document = json.loads(joined(diff_json_pieces(result)))
    assert document["schema"] == "ncu-roof/diff/v1"
    assert document["kernels"][0]["name"] == HOSTILE
    assert document["kernels"][0]["duration_s"]["delta_pct"] == pytest.approx(10.0)
    assert "+10.0%" in render_diff_table(result)


@pytest.mark.parametrize("pretty_max", [500, 0])
def test_the_json_pairs_are_the_kernel_diffs(
    pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch, pretty_max: int
) -> None:
    """Each pair's JSON object (Polars' line, indented or, past PRETTY_MAX_KERNELS, as written)
    holds what its `KernelDiff` holds: the same keys in the same order, ints as ints, floats
    exactly, None and NaN as null."""
    from ncu_roof.compare.pairs import KernelDiff
    from ncu_roof.render import jsonout

    result = diff(load(pair[0]), load(pair[1]))
    monkeypatch.setattr(jsonout, "PRETTY_MAX_KERNELS", pretty_max)
    text = joined(diff_json_pieces(result))
    assert ("\n  " in text) is bool(pretty_max) and text.endswith("}\n")

    def change(c: Change) -> dict[str, float | None]:
        return {"base": c.base, "head": c.head, "delta_pct": c.delta_pct}

    def expected(k: KernelDiff) -> dict[str, object]:
        return {
            "name": k.name,
            "base_name": k.base_name,
            "grid": k.grid,
            "block": k.block,
            "nvtx": k.nvtx,
            "occurrence": k.occurrence,
            "base_id": k.base_id,
            "head_id": k.head_id,
            "base_run": k.base_run,
            "head_run": k.head_run,
            "base_device": k.base_device,
            "head_device": k.head_device,
            "status": k.status.value,
            "duration_s": change(k.duration_s),
            "achieved_flop_per_s": change(k.flop_per_s),
            "bytes": {t: change(c) for t, c in k.bytes.items()},
            "intensity_flop_per_byte": {t: change(c) for t, c in k.intensity_flop_per_byte.items()},
            "verdict": {"base": k.verdict_base, "head": k.verdict_head},
        }

    kernels = json.loads(text)["kernels"]
    assert json.dumps(kernels) == json.dumps([expected(k) for k in result.kernels])
    assert [k["status"] for k in kernels] == ["regressed", "improved", "only-head", "only-base"]
    assert kernels[2]["base_id"] is None and kernels[3]["head_run"] is None


def test_markdown_folds_the_launches_of_one_kernel(pair: tuple[str, str]) -> None:
    """BASE's two launches of HOSTILE (1 + 2 µs) became 1.1 + 1 µs: one row, 3 µs → 2.1 µs, faster
    in total, with the launch that got 10% slower on its own said (the gate reads the kernel)."""
    markdown = render_diff_markdown(diff(load(pair[0]), load(pair[1])))
    changed = markdown.split("### Changed kernels")[1].split("<details>")[0]
    rows = [line for line in changed.splitlines() if line.startswith("| `")]
    assert len(rows) == 3  # HOSTILE's two launches are one row; `gone` and `new`
    cells = [c.strip() for c in rows[0].replace("\\|", "¦").split("|")[1:-1]]
    assert cells[0].endswith("`8×256` ×2")
    # 2e6 FLOP and 4e6 → 4e6, 2e6 DRAM bytes per launch: FLOP/s 4e6 / 3 µs → / 2.1 µs, bytes 8e6 → 6e6
    assert cells[1:6] == ["3 µs → 2.1 µs", "-30.0%", "+42.9%", "DRAM -25.0%", "DRAM +33.3%"]
    assert cells[7] == "⚡ faster (1 of 2 launches slower)"
    assert "**ncu-roof diff: no kernel slower by more than 5%**" in markdown
    assert "<summary>All 3 kernels (4 launches)</summary>" in markdown  # HOSTILE ×2, gone, new


@pytest.mark.parametrize("columns", [80, 120])
def test_kernels_whose_names_shorten_alike_read_apart_in_the_table_and_the_markdown(columns: int) -> None:
    """Two CUTLASS kernels of one launch shape that differ only in a tile size: each table row
    says which it is (`[K1]`, `[K2]`), and the lines under the table resolve the index."""
    base: list[Row] = [(CUTLASS.format(n), "(8, 1, 1)", 1000, 1e6, 4e6) for n in (64, 128)]
    head: list[Row] = [base[0], (CUTLASS.format(128), "(8, 1, 1)", 2000, 1e6, 4e6)]
    result = diff(load(write("alike-base.csv", base)), load(write("alike-head.csv", head)))
    table = render_diff_table(result, width=columns)
    assert max(len(line) for line in table.splitlines()) <= columns
    rows = [line.split("│")[1].strip() for line in table.splitlines() if line.startswith("│ cutlass")]
    assert [r.startswith("cutlass::Ker") for r in rows] == [True, True]  # clipped to the column
    assert [r[r.index("… [K") + 2 :] for r in rows] == ["[K1] 8×256", "[K2] 8×256"]  # K1: the slower
    said = " ".join(line for line in table.splitlines() if not line.startswith(("│", "┃")))
    assert re.search(r"\[K1\] cutlass::Kernel<…>\(T1::Params\), whose name .*\(int\)128>", said)
    assert re.search(r"\[K2\] cutlass::Kernel<…>\(T1::Params\), whose name .*\(int\)64,", said)
    markdown = render_diff_markdown(result)
    changed = markdown.split("### Changed kernels")[1].split("<details>")[0]
    assert "| `cutlass::Kernel<…>(T1::Params) [K1]` `8×256` |" in changed
    keys = [line for line in changed.splitlines() if line.startswith("`[K")]
    assert len(keys) == 2 and "(int)128>" in keys[0] and "(int)64," in keys[1]
    every = markdown.split("<details>")[1]
    assert "`cutlass::Kernel<…>(T1::Params) [K2]` `8×256`" in every


def run_cli(*args: str, env: dict[str, str] | None = None) -> CliResult:
    """`ncu-roof ARGS…` in this process, through `main` (exit codes as the console script's)."""
    return conftest.run_cli(*args, cwd=ROOT, env=env)


def test_cli_fail_on_regression_exits_1_and_writes_outputs(
    slower_pair: tuple[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "diff.json"
    summary = tmp_path / "summary.md"

    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    done = run_cli(
        "diff", *slower_pair, "-F", "json", "-o", str(out), "--fail-on-regression", "5%", "--summary", env=env
    )
    assert done.returncode == 1, done.stderr
    assert "slower by more than 5%" in done.stderr
    assert json.loads(out.read_text())["total"]["status"] == "regressed"
    assert summary.read_text().startswith("<!-- ncu-roof:diff -->")
    assert run_cli("diff", *slower_pair, "--fail-on-regression", "15").returncode == 0


def test_cli_mismatch_is_a_usage_error() -> None:
    base = write("a.csv", BASE)
    other = write("h.csv", BASE, device="NVIDIA H100 PCIe")
    done = run_cli("diff", base, other)
    assert done.returncode == 2
    assert "--allow-mismatch" in done.stderr
    assert run_cli("diff", base, other, "--allow-mismatch").returncode == 0


def test_cli_rejects_bad_percentages(pair: tuple[str, str]) -> None:
    assert run_cli("diff", *pair, "--threshold", "five").returncode == 2


LONG = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1>>(int, T2, T3)"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def long_pair() -> tuple[str, str]:
    base = [(LONG, "(8, 1, 1)", 1000.0, 1e6, 4e6), *BASE]
    head = [(LONG, "(8, 1, 1)", 1200.0, 1e6, 4e6), *HEAD]
    return write("base.csv", base), write("head.csv", head)


def kernel_cells(table: str) -> list[str]:
    """The first cell of every body row of a rich table."""
    return [line.split("│")[1].strip() for line in table.splitlines() if line.startswith("│")]


def test_table_shows_the_kernel_names_and_whole_numbers_when_wide(
    long_pair: tuple[str, str],
) -> None:
    # the bug: at width 200 the Kernel column shrank to nothing and cells read `+20.…`
    table = render_diff_table(diff(load(long_pair[0]), load(long_pair[1])), width=240)
    assert kernel_cells(table)[0] == shorten(LONG, 60) + " 8×256"  # the launch shape ends the cell
    assert "+20.0%" in table and "-16.7%" in table and "DRAM +100.0%" in table
    assert "Δ intensity" in table and "not shown" not in table
    assert all(len(line) <= 240 for line in table.splitlines())


@pytest.mark.parametrize("width", [60, 80, 100, 120, 160, 200])
def test_narrow_tables_drop_columns_but_never_cut_numbers_or_hide_names(
    long_pair: tuple[str, str], width: int
) -> None:
    table = render_diff_table(diff(load(long_pair[0]), load(long_pair[1])), width=width)
    from rich.cells import cell_len

    assert all(cell_len(line) <= width for line in table.splitlines()), table
    names = kernel_cells(table)
    name, shape = names[0].rsplit(" ", 1)
    assert shape == "8×256" and len(names[0]) >= KERNEL_MIN  # the launch shape whole
    assert len(name) >= NAME_MIN and name == shorten(LONG, len(name))
    assert "k<…>(T*) $x$ 8×256" in names
    for number in ("+20.0%", "+10.0%", "-50.0%"):  # Δ time is never dropped nor cut
        assert number in table
    body = "\n".join(line.split("│", 2)[-1] for line in table.splitlines() if line.startswith("│"))
    assert "…" not in body.replace("<…>", "")  # only a kernel name may be shortened
    if "Δ intensity" not in table:
        assert "not shown at this width:" in table and "Δ intensity" in table.replace("\n", " ")


def test_table_is_coloured_only_when_asked(long_pair: tuple[str, str]) -> None:
    result = diff(load(long_pair[0]), load(long_pair[1]))
    assert not ANSI.search(render_diff_table(result))
    coloured = render_diff_table(result, color=True)
    assert "\x1b[31m" in coloured  # a regression in red
    assert ANSI.sub("", coloured).splitlines()[2:] == render_diff_table(result).splitlines()[2:]


def test_cli_table_to_a_pipe_is_120_wide_plain_and_honours_columns(
    long_pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_cli("diff", *long_pair)
    assert done.returncode == 0, done.stderr
    assert not ANSI.search(done.stdout)
    assert all(len(line) <= 120 for line in done.stdout.splitlines())
    monkeypatch.setenv("COLUMNS", "240")  # a CI job that sets its width
    done = run_cli("diff", *long_pair)
    assert kernel_cells(done.stdout)[0] == shorten(LONG, 60) + " 8×256"
    assert all(len(line) <= 240 for line in done.stdout.splitlines())
    assert max(len(line) for line in done.stdout.splitlines()) > 120


def test_the_table_shows_the_top_kernels_and_says_how_many_more(long_pair: tuple[str, str]) -> None:
    result = diff(load(long_pair[0]), load(long_pair[1]))
    assert len(result.kernels) == 5
    every, two = render_diff_table(result, width=240), render_diff_table(result, width=240, top=2)
    assert "more launch" not in every
    assert kernel_cells(two)[0] == kernel_cells(every)[0] == shorten(LONG, 60) + " 8×256"  # +20%: first
    assert "3 more launches not shown: --top 0 shows all, --format json has every launch" in two
    assert "2 more launches not shown" in run_cli("diff", *long_pair, "--top", "3").stdout
    assert "more launch" not in run_cli("diff", *long_pair, "--top", "0").stdout


def run_cli_on_a_tty(args: list[str], env: dict[str, str]) -> str:
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ncu_roof", *args], stdout=slave, stderr=subprocess.PIPE, cwd=ROOT, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def run_in_process_on_a_tty(args: list[str], env: dict[str, str]) -> str:
    """`run_cli` with stdout a real pseudo-terminal (what the terminal got, as `run_cli_on_a_tty`)."""
    import pty
    import threading

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal was closed
                break
            if not chunk:
                break
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    with open(slave, "w", encoding="utf-8") as terminal:
        done = conftest.run_cli(*args, cwd=ROOT, env=env, stdout=terminal)
    reader.join(timeout=60)
    os.close(master)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_cli_table_on_a_terminal_fits_its_width_in_colour(long_pair: tuple[str, str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    out = run_cli_on_a_tty(["diff", *long_pair], {**env, "COLUMNS": "90"})  # the console script
    assert ANSI.search(out)
    plain = ANSI.sub("", out)
    from rich.cells import cell_len

    assert all(cell_len(line) <= 90 for line in plain.splitlines()), plain
    first = kernel_cells(plain)[0]  # the width left to the name, then the launch shape whole
    assert first.startswith("at::native::vectorized_elem") and first.endswith("… 8×256")
    # the same terminal, in process: the colour follows NO_COLOR, not the terminal alone
    coloured = run_in_process_on_a_tty(["diff", *long_pair], {**env, "COLUMNS": "90"})
    assert ANSI.sub("", coloured) == plain and ANSI.search(coloured)
    no_color = run_in_process_on_a_tty(["diff", *long_pair], {**env, "COLUMNS": "90", "NO_COLOR": "1"})
    assert not ANSI.search(no_color)


# --- output safety: everything checked before any work, files before stdout ---------------------


def test_cli_bad_plot_path_leaves_no_output_behind(pair: tuple[str, str], tmp_path: Path) -> None:
    out = tmp_path / "d.md"
    done = run_cli(
        "diff", *pair, "-F", "markdown", "-o", str(out), "--plot", str(tmp_path / "missing" / "x.svg")
    )
    assert done.returncode == 1, done.stderr
    assert "does not exist" in done.stderr
    assert not out.exists()
    assert "read " not in done.stderr  # failed before reading the inputs


def test_cli_bad_plot_type_prints_nothing(pair: tuple[str, str], tmp_path: Path) -> None:
    done = run_cli("diff", *pair, "-F", "markdown", "--plot", str(tmp_path / "x.gif"))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "unknown image type" in done.stderr


def test_cli_unwritable_summary_is_refused_before_any_work(pair: tuple[str, str], tmp_path: Path) -> None:
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "missing" / "summary.md")}
    done = run_cli("diff", *pair, "--summary", env=env)
    assert done.returncode == 1, done.stderr
    assert done.stdout == "" and "GITHUB_STEP_SUMMARY" in done.stderr
    assert "read " not in done.stderr


def test_files_are_written_before_stdout(
    pair: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ncu_roof.cli import main
    from ncu_roof.render import output

    written: list[str | None] = []
    real_replace = os.replace  # the module `output` renames with

    def renamed(tmp: Path, target: Path) -> None:  # a file lands when its temp file is renamed
        written.append(str(target))
        real_replace(tmp, target)

    monkeypatch.setattr(os, "replace", renamed)
    monkeypatch.setattr(output, "_write_stdout", lambda _data: written.append(None))
    plot = str(tmp_path / "d.svg")
    with pytest.raises(SystemExit) as done:
        main(["-q", "diff", *pair, "--plot", plot])
    assert done.value.code == 0
    assert written == [plot, None]


def test_plot_command_checks_its_output_before_reading(pair: tuple[str, str], tmp_path: Path) -> None:
    done = run_cli("plot", pair[0], "-o", str(tmp_path / "missing" / "x.svg"))
    assert done.returncode == 1 and "does not exist" in done.stderr
    assert "read " not in done.stderr
    assert run_cli("plot", pair[0], "-o", str(tmp_path / "x.gif")).returncode == 2


# --- clocks ---------------------------------------------------------------------------------------


def with_clock(text: str, clock_hz: float, ffma_peak: float = 64.0) -> str:
    """A raw CSV with the measured SM clock and the FFMA peak per cycle: report roofs."""
    rows = list(csv.reader(io.StringIO(text)))
    extra = [
        ("sm__cycles_elapsed.avg.per_second", "cycle/second", clock_hz),
        ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "inst/cycle", ffma_peak),
    ]
    rows[0] += [name for name, _, _ in extra]
    rows[1] += [unit for _, unit, _ in extra]
    for row in rows[2:]:
        row += [str(value) for _, _, value in extra]
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL).writerows(rows)
    return out.getvalue()


@pytest.fixture
def clocks() -> tuple[str, str]:
    """The same kernels on the same GPU, at 1.5 GHz and at 1.2 GHz."""
    base = conftest.input_file("fast.csv", with_clock(raw_csv(BASE), 1.5e9))
    head = conftest.input_file("slow.csv", with_clock(raw_csv(BASE), 1.2e9))
    return str(base), str(head)


def test_different_clocks_are_refused_with_report_roofs(clocks: tuple[str, str]) -> None:
    base, head = load(clocks[0]), load(clocks[1])
    assert base.devices[0].roofs.source == "report"
    with pytest.raises(MismatchError, match=r"SM clock differs by -20\.0%"):
        diff(base, head)
    assert diff(base, base).notes == ()  # compared, and equal


def test_measured_clocks_are_compared_whatever_the_roofs(clocks: tuple[str, str]) -> None:
    # the bug: with --gpu (or --roofs) the clocks were not compared, and nothing said so
    from ncu_roof.base.vocabulary import RoofChoice

    base, head = (conftest.analyzed(Path(p), RoofChoice(gpu_key="a10")) for p in clocks)
    assert base.devices[0].sm_clock_hz == pytest.approx(1.5e9)
    with pytest.raises(MismatchError, match=r"SM clock differs by -20\.0% \(1\.5 GHz → 1\.2 GHz\)"):
        diff(base, head)
    same = diff(base, base)
    assert same.mismatch is None and same.notes == ()


def test_a_run_without_clocks_says_so(clocks: tuple[str, str]) -> None:

    from ncu_roof.base.vocabulary import RoofChoice

    builtin = conftest.analyzed(Path(clocks[0]), RoofChoice(gpu_key="a10"))
    unclocked = replace(builtin, devices=tuple(replace(d, sm_clock_hz=None) for d in builtin.devices))
    result = diff(unclocked, unclocked)
    assert result.notes and result.notes[0].startswith("clocks not compared")
    assert "builtin:a10" in result.notes[0]
    assert "note: clocks not compared" in render_diff_table(result)
    assert "> [!NOTE]" in render_diff_markdown(result)
    assert json.loads(joined(diff_json_pieces(result)))["notes"] == list(result.notes)


def test_the_room_shortened_names_leave_goes_to_the_verdict() -> None:
    """At the pipe's 120 columns the Kernel column is as wide as its widest shortened name, and
    the verdict, given the rest, stays on one line (it took two while the column kept 4 blank)."""
    run = conftest.analyzed(conftest.FIXTURES / "h200" / "h200_full_raw.csv")
    lines = render_diff_table(diff(run, run)).splitlines()
    # the headline above the table, at the pipe's width (a title folded at the table's)
    assert lines[0].startswith("total time ") and lines[0].endswith("0 new, 0 removed")
    rows = [line for line in lines if line.startswith("│")]
    kernel_cells = [row.split("│")[1] for row in rows]
    assert min(len(cell) - len(cell.rstrip()) for cell in kernel_cells) == 1  # the widest fills it
    assert "│ memory-bound (l1) · roofline " in rows[0]
    assert rows[1].startswith("│ wmma_gemm_s8(…) 16384×128 ")  # the first verdict took one line


def test_clocks_of_different_counters_are_not_compared_but_said() -> None:
    """A details page's "SM Frequency" is the GPC clock, a raw page's SM clock its own counter (on the
    T4 of the corpus 8 % apart in one run): never weighed against each other, said instead."""
    raw, details = (
        conftest.analyzed(conftest.FIXTURES / "h200" / f)
        for f in ("h200_full_raw.csv", "h200_full_details.csv")
    )
    recipes = [a.devices[0].sm_clock_recipe for a in (raw, details)]
    assert recipes == [
        "counter:sm__cycles_elapsed.avg.per_second",
        "counter:gpc__cycles_elapsed.avg.per_second",
    ]
    clock_hz = details.devices[0].sm_clock_hz
    assert clock_hz is not None
    shifted = replace(details, devices=(replace(details.devices[0], sm_clock_hz=clock_hz * 1.08),))
    result = diff(raw, shifted)  # 8 % apart: no mismatch refused
    assert result.mismatch is None
    assert any(
        "SM clocks measured by sm__cycles_elapsed.avg.per_second vs gpc__cycles_elapsed.avg.per_second" in n
        for n in result.notes
    )
    assert diff(raw, raw).notes == ()  # one counter: compared, as before


def test_without_clocks_the_roofs_measured_in_the_reports_are_compared() -> None:
    """No SM clock on either side: the compute roofs each report measured (its peak per cycle at
    its own clock) stand in, each precision's compared within the clock tolerance (2 %)."""
    run = conftest.analyzed(conftest.FIXTURES / "h200" / "h200_full_raw.csv")
    device = replace(run.devices[0], sm_clock_hz=None)
    assert device.roofs.source == "report"
    base = replace(run, devices=(device,))
    fp32_flop_per_s = device.roofs.compute_flop_per_s["fp32"]
    assert fp32_flop_per_s == pytest.approx(66.732e12)

    def with_fp32(scale: float) -> Analysis:
        peaks = {**device.roofs.compute_flop_per_s, "fp32": fp32_flop_per_s * scale}
        return replace(run, devices=(replace(device, roofs=replace(device.roofs, compute_flop_per_s=peaks)),))

    with pytest.raises(MismatchError, match=r"the fp32 roof measured in the reports differs by \+5\.0% "):
        diff(base, with_fp32(1.05))
    result = diff(base, with_fp32(1.01))  # within the tolerance: comparable, nothing said
    assert result.mismatch is None and result.notes == ()


# --- arrows in multi-run files --------------------------------------------------------------------


def test_arrows_pair_kernels_of_the_same_run(tmp_path: Path) -> None:
    # the bug: arrows looked kernels up by ID alone; IDs restart in each run of a file
    from ncu_roof.cli.report import diff_arrows

    first: list[Row] = [("a", "(1, 1, 1)", 1000, 1e6, 4e6), ("b", "(1, 1, 1)", 1000, 1e6, 4e6)]
    second: list[Row] = [("c", "(1, 1, 1)", 1000, 1e6, 4e6), ("d", "(1, 1, 1)", 1000, 1e6, 4e6)]
    base_path, head_path = tmp_path / "base.csv", tmp_path / "head.csv"
    base_path.write_text(raw_csv(first) + raw_csv(second), encoding="utf-8")
    head_path.write_text(raw_csv(second) + raw_csv(first), encoding="utf-8")
    base, head = load(str(base_path)), load(str(head_path))
    assert sorted(k.id for k in base.kernels) == [0, 0, 1, 1]
    arrows = diff_arrows(diff(base, head), base, head)
    assert sorted((b.name, h.name) for b, h in arrows) == [("a", "a"), ("b", "b"), ("c", "c"), ("d", "d")]
    document = json.loads(joined(diff_json_pieces(diff(base, head))))
    runs = {k["name"]: (k["base_run"], k["head_run"]) for k in document["kernels"]}
    assert runs == {"a": (0, 1), "b": (0, 1), "c": (1, 0), "d": (1, 0)}


# --- matching modes, the gate's words, percentages --------------------------------------------------


def test_match_by_order_pairs_renamed_kernels_and_by_name_reshaped_ones() -> None:
    from ncu_roof.base.vocabulary import MatchBy

    base = load(write("b.csv", [("old_name", "(8, 1, 1)", 1000, 1e6, 4e6)]))
    renamed = load(write("r.csv", [("new_name", "(8, 1, 1)", 1200, 1e6, 4e6)]))
    reshaped = load(write("s.csv", [("old_name", "(16, 1, 1)", 900, 1e6, 4e6)]))
    assert [k.status for k in diff(base, renamed).kernels] == [Status.ONLY_HEAD, Status.ONLY_BASE]
    (by_order,) = diff(base, renamed, match=MatchBy.ORDER).kernels
    assert by_order.duration_s.delta_pct == pytest.approx(20.0) and by_order.status is Status.REGRESSED
    assert len(diff(base, reshaped).kernels) == 2
    (by_name,) = diff(base, reshaped, match=MatchBy.NAME).kernels
    assert by_name.duration_s.delta_pct == pytest.approx(-10.0) and by_name.status is Status.IMPROVED


def test_a_report_and_its_ncu_2022_re_export_pair_every_kernel(corpus: Path) -> None:
    # the bug: ncu 2022.3's raw page has no Grid Size / Block Size columns, its shapes were read
    # as unknown and no kernel of the report matched its own re-export by (name, grid, block)
    stem = "a40_rep_2022.4.0_indexspaces"
    report = str(corpus / f"{stem}.ncu-rep")
    reexport = str(corpus / "reexport" / f"{stem}.ncu2022.3-raw-auto.csv")
    result = diff(load(report), load(reexport))
    assert len(result.kernels) == 5
    assert all(k.status is Status.UNCHANGED for k in result.kernels), [k.status for k in result.kernels]
    done = run_cli("diff", report, reexport)
    assert done.returncode == 0, done.stderr
    assert "kernels: 0 slower, 0 faster, 5 within ±5%, 0 without a time, 0 new, 0 removed" in done.stdout


def test_gate_counts_kernels_as_the_headline_does(slower_pair: tuple[str, str]) -> None:
    from ncu_roof.render.diffout import headline

    result = diff(load(slower_pair[0]), load(slower_pair[1]), threshold_pct=15.0)
    assert "kernels: 0 slower" in headline(result)
    gate(result)
    result = diff(load(slower_pair[0]), load(slower_pair[1]))
    assert "kernels: 1 slower" in headline(result)
    with pytest.raises(GateError) as caught:
        gate(result)
    assert caught.value.message.startswith("1 kernel slower by more than 5% (worst ")
    assert caught.value.message.endswith("+10.0%); the total time is +10.0%")


def test_a_fraction_for_a_percentage_is_refused_with_both_spellings() -> None:
    from ncu_roof.cli.report import parse_pct
    from ncu_roof.errors import UsageError

    with pytest.raises(UsageError) as caught:
        parse_pct("0.05", "--fail-on-regression")
    hint = caught.value.hint
    assert "--fail-on-regression 5%" in hint and "--fail-on-regression 0.05%" in hint
    assert parse_pct("0.05%", "--threshold") == pytest.approx(0.05)
    assert parse_pct("5", "--threshold") == 5.0 and parse_pct("0", "--threshold") == 0.0


def test_no_minus_zero_percent() -> None:
    from ncu_roof.render.diffout import signed_pct

    assert signed_pct(-0.04) == "0.0%" and signed_pct(0.0) == "0.0%" and signed_pct(-1.25) == "-1.2%"


def test_diff_format_follows_the_o_suffix(pair: tuple[str, str], tmp_path: Path) -> None:
    from functools import partial

    from ncu_roof.errors import UsageError
    from ncu_roof.render.formats import OutputFormat, format_of

    diff_format = partial(
        format_of, "diff", writes=(OutputFormat.TABLE, OutputFormat.MARKDOWN, OutputFormat.JSON)
    )
    assert diff_format(None, str(tmp_path / "d.md")) is OutputFormat.MARKDOWN
    assert diff_format(None, "d.json") is OutputFormat.JSON
    assert diff_format(None, None) is OutputFormat.TABLE
    with pytest.raises(UsageError):
        diff_format(None, "d.html")
    with pytest.raises(UsageError):
        diff_format("json", "d.md")
    assert run_cli("diff", *pair, "-o", str(tmp_path / "d.html")).returncode == 2  # what the CLI passes
    target = tmp_path / "d.md"
    assert run_cli("diff", *pair, "-o", str(target)).returncode == 0
    assert target.read_text(encoding="utf-8").startswith("<!-- ncu-roof:diff -->")


def test_the_table_has_the_markdowns_eight_columns_and_every_verdict_its_basis(
    pair: tuple[str, str],
) -> None:
    from ncu_roof.render.diffout import HEADERS

    result = diff(load(pair[0]), load(pair[1]))
    wide = render_diff_table(result, width=240)
    header = next(line for line in wide.splitlines() if line.startswith("┃"))
    assert [h.strip() for h in header.strip("┃").split("┃")] == HEADERS
    assert "memory-bound (dram) · roofline" in wide  # whole where it fits
    narrow = render_diff_table(result, width=120)  # the verdict wraps before its basis
    verdicts = [line.split("│")[6].strip() for line in narrow.splitlines() if line.startswith("│")]
    assert verdicts[:2] == ["memory-bound (dram)", "· roofline"]
    assert all(len(line) <= 120 for line in narrow.splitlines())
    for table in (wide, narrow):  # every number whole
        assert "+10.0%" in table and "-50.0%" in table and "+100.0%" in table


def test_a_usage_error_comes_before_a_missing_input_as_in_analyze(tmp_path: Path) -> None:
    """`--gpu bogus` with a pattern that matches no file is a usage error (2) in diff as in
    analyze, not bad input (3)."""
    missing = str(tmp_path / "nothing*.csv")
    for command in (["diff", missing, missing], ["analyze", missing]):
        done = run_cli(*command, "--gpu", "bogus")
        assert done.returncode == 2, done.stderr
        assert "bogus" in done.stderr


def test_a_folded_rows_sums_are_each_sides_known_values_correctly_rounded() -> None:
    # the base's known values sum to 1 exactly (numpy's sum gives 0.0); the head has none known
    figure = np.array([[1e16, 1.0, np.nan, -1e16], [np.nan] * 4])
    assert _sums(figure) == Change(1.0, None)


_DURATIONS = st.one_of(
    st.none(),
    st.sampled_from([0.0, -0.0, 1e-6, 2e-6, math.inf, math.nan, 1e308, -1e308]),
    st.floats(min_value=1e-9, max_value=1.0),
)


@given(st.lists(st.tuples(st.sampled_from(list(Status)), _DURATIONS, _DURATIONS), max_size=40))
@example([(Status.REGRESSED, 0.0, 1e-6), (Status.REGRESSED, 1e-6, 2e-6)])  # no change from a zero base
@example([(Status.REGRESSED, 1e-308, 1.0), (Status.REGRESSED, 1e-6, 3e-6)])  # an infinite change: worst
def test_the_tables_order_is_the_rule_as_a_sort_key(
    pairs: list[tuple[Status, float | None, float | None]],
) -> None:
    """`pair_order` (numpy, over every pair) orders as the rule does written as Python's stable
    sort key over `Change`s: regressions worst first, improvements best first, new, removed, the
    rest by the head's time (else the base's; a missing or zero time: 0)."""
    rank = [
        Status.REGRESSED,
        Status.IMPROVED,
        Status.ONLY_HEAD,
        Status.ONLY_BASE,
        Status.UNCHANGED,
        Status.UNKNOWN,
    ]

    def key(i: int) -> tuple[int, float]:
        status, base, head = pairs[i]
        change = Change(finite_or_none(base), finite_or_none(head))
        if status in (Status.REGRESSED, Status.IMPROVED) and change.delta_pct is not None:
            return rank.index(status), -abs(change.delta_pct)
        return rank.index(status), -(change.head or change.base or 0.0)

    # each pair's durations as the pair frame holds them: base, head, and the change (null: none)
    changes = [Change(finite_or_none(b), finite_or_none(h)).delta_pct for _, b, h in pairs]
    duration_s = np.array([(b, h, c) for (_, b, h), c in zip(pairs, changes, strict=True)], dtype=float)
    order = pair_order([p[0] for p in pairs], duration_s.reshape(-1, 3))
    assert order.tolist() == sorted(range(len(pairs)), key=key)


def test_a_diff_and_a_plot_point_to_the_notes_analyze_shows(tmp_path: Path) -> None:
    """Their analyses make no notes but a failed launch's (neither shows any): the missing counters'
    line sends the reader to `analyze`'s notes, where `analyze` itself says "see the notes"; a
    diff's lines name their side."""
    raw = str(conftest.ROOT / "fixtures" / "raw_base.csv")
    lacking = "2 launches lack counters (l1, shared, sol); see {}, or --verbose for an ncu command"
    elsewhere = lacking.format("the notes of `ncu-roof analyze`")
    for args, said in (
        (("diff", raw, raw), [f"base: {elsewhere}", f"head: {elsewhere}"]),
        (("plot", raw, "-o", str(tmp_path / "r.svg")), [elsewhere]),
        (("analyze", raw), [lacking.format("the notes")]),
    ):
        done = conftest.run_cli(*args)
        lines = [line for line in conftest.unfolded(done.stderr).splitlines() if "lack counters" in line]
        assert done.returncode == 0 and len(lines) == len(said), done.stderr
        assert [line[: len(s)] for line, s in zip(lines, said, strict=True)] == said, done.stderr
