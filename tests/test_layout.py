"""What a CI log, a PR and a terminal show at any width: the answer (verdict with its basis, % of
roof, could save) always, names that never read alike, notes whose numbers vary as ranges."""

from __future__ import annotations

import json
import re
import unicodedata
from os.path import commonprefix
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from ncu_roof.base.text import _told_apart, distinct_names, one_line, shorten
from ncu_roof.render.terminal import wrapped

INIT = "void InitializeMatrix_kernel<{}, (bool)1>(T1 *, int, int, int)"
CUTLASS = "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<Shape<(int){}, (int)128>, Epilogue>>(T1::Params)"


def header_and_rows(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()
    header = [c.strip() for c in next(line for line in lines if "┃" in line).split("┃")]
    return header, [[c.strip() for c in line.split("│")] for line in lines if "│" in line]


def test_names_that_differ_in_a_template_argument_show_it() -> None:
    names = [INIT.format("__half"), INIT.format("float"), INIT.format("float"), "plain(int)"]
    labels, keys = distinct_names(names, 48)
    assert labels == [
        "InitializeMatrix_kernel<__half, …>(…)",
        "InitializeMatrix_kernel<float, …>(…)",
        "InitializeMatrix_kernel<float, …>(…)",
        "plain(int)",
    ]
    assert keys == []


def test_names_that_differ_deeper_get_an_index_the_notes_resolve() -> None:
    names = [CUTLASS.format(n) for n in (64, 128, 256, 32)]  # four CUTLASS kernels, one short form
    labels, keys = distinct_names(names, 40)
    assert len(set(labels)) == 4 and all(len(label) <= 40 for label in labels)
    assert labels[0] == "cutlass::Kernel<…>(T1::Params) [K1]"
    assert [k.split()[0] for k in keys] == ["[K1]", "[K2]", "[K3]", "[K4]"]
    assert "Shape<(int)64, (int)128>" in keys[0] and "Shape<(int)128, (int)128>" in keys[1]


@pytest.mark.parametrize("columns", ["", "80", "100"])
def test_the_answer_stays_at_every_width_and_what_is_hidden_is_listed(
    columns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if columns:
        monkeypatch.setenv("COLUMNS", columns)
    text = run_cli("analyze", "--example").stdout
    width = int(columns or 120)
    assert max(cell_len(line) for line in text.splitlines()) <= width
    header, rows = header_and_rows(text)
    for kept in ("kernel", "time", "% roof", "could save", "verdict"):
        assert kept in header, (kept, header)
    saving = [r[header.index("could save")] for r in rows if r[0]]
    assert saving == ["92.5 µs", "350 µs", "212 µs", "180 µs", "141 µs"]  # never cut
    roof = [r[header.index("% roof")] for r in rows if r[0]]
    assert roof == ["89%", "19%", "29%", "31%", "37%"]
    verdicts = " ".join(r[header.index("verdict")] for r in rows)
    # the roofline decides wherever it can (issue 28): Speed of Light is the cross-check in a note
    assert verdicts.count("· roofline") == 5 and verdicts.count("· SOL") == 0
    assert "not shown at this width:" in text


def test_at_80_columns_the_verdict_wraps_between_its_phrases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    header, rows = header_and_rows(run_cli("analyze", "--example").stdout)
    cells = [r[header.index("verdict")] for r in rows]
    # the notes column gave way: each row's note numbers follow its verdict
    assert cells[:2] == ["memory-bound (dram)", "· roofline [2,3]"]
    assert cells.count("compute-bound (fp32)") == 4
    assert cells[3::2] == [
        "· roofline [1,4,6]",
        "· roofline [1,4,5]",
        "· roofline [1,4,5]",
        "· roofline [1,5]",
    ]


def test_a_note_whose_numbers_vary_gives_their_ranges() -> None:
    text = " ".join(run_cli("analyze", "--example").stdout.split())
    assert "3 launches (numbers vary): Speed of Light says latency-bound: SM 33–40%, memory 32–46%" in text
    assert "too few blocks to fill the GPU (0.40–0.80 waves per SM)" in text


def test_the_headline_says_when_its_kernel_barely_uses_the_roof_it_is_ranked_by(corpus: Path) -> None:
    # naive SGEMMs on an A10G at 1% of the FP32 roof, no SOL counters: the saving is a distance
    path = corpus / "a10g_details_base-units-nsecond_sgemm-flops-dram.csv"
    text = " ".join(run_cli("analyze", str(path), "--gpu", "a10g").stdout.split())
    assert "fix first: basic(…) — could save 10.7 ms (73% of the time)" in text
    assert "compute-bound (fp32) · roofline, 1% of roof — far below that roof" in text
    assert "(without SOL counters, the latency check was not made)" in text
    assert "device 0: NVIDIA A10G (from --gpu) (cc 8.6) — roofs [builtin:a10g] at boost clock" in text


def test_the_roofs_line_says_the_clock_they_are_scaled_to() -> None:
    text = run_cli("analyze", "--example").stdout
    assert "device 1: NVIDIA A10G (cc 8.6) — roofs [report] at 1.31 GHz (measured): " in text


def test_a_group_whose_launches_disagree_shows_each_verdict_with_its_share(corpus: Path) -> None:
    # 198 launches of one upsample kernel: 38% of its time latency-bound, 35% balanced, and
    # compute-bound at SM 60-75% (17 wordings, one verdict) for 26%, all by Speed of Light
    path = str(corpus / "a100_details-kerneltime_two-runs-traceback-warning.csv")
    text = run_cli("analyze", path).stdout
    header, rows = header_and_rows(text)
    assert rows[0][header.index("verdict")] == "latency-bound · SOL"
    assert rows[0][header.index("of its time")] == "38%"
    assert "more)" not in text
    markdown = run_cli("analyze", path, "-F", "markdown").stdout
    by_time = "38% latency\\-bound · SOL; 35% balanced · SOL; 26% compute\\-bound \\(SM 60–75%\\) · SOL"
    assert by_time in markdown


def test_plot_draws_the_example_as_analyze_reads_it(tmp_path: Path) -> None:
    out = tmp_path / "roofline.svg"
    done = run_cli("plot", "--example", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().lstrip().startswith(b"<?xml") and b"<svg" in out.read_bytes()
    missing = run_cli("plot", "-o", str(tmp_path / "none.svg"))
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[-2:] == [
        "error: no input files",
        "hint: ncu-roof plot report.ncu-rep -o roofline.svg  (or --example)",
    ]


def test_below_the_answers_width_the_table_grows_rather_than_cut_a_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    text = run_cli("analyze", "--example").stdout
    header, rows = header_and_rows(text)
    assert [r[header.index("time")] for r in rows if r[0]] == [
        "854 µs",
        "432 µs",
        "297 µs",
        "261 µs",
        "222 µs",
    ]
    assert [r[header.index("could save")] for r in rows if r[0]][:2] == ["92.5 µs", "350 µs"]
    assert "compute-bound" in [r[header.index("verdict")] for r in rows]  # whole, on its own line
    prose = [line for line in text.splitlines() if "│" not in line and "┃" not in line and "━" not in line]
    assert max(cell_len(line) for line in prose) <= 60  # the sentences still wrap at 60


@given(st.lists(st.text(alphabet="ab<>\n\x1b ?\\", max_size=60), min_size=2, max_size=12, unique=True))
def test_every_name_reads_apart_at_places_where_it_differs(group: list[str]) -> None:
    """No two lines read alike (in the names themselves: two that read alike once control
    characters are shown as `?` still differ), and each place a line names is where its name first
    differs from another; the last such place always (its longest common prefix with any other)."""
    lines = _told_apart(group)
    assert list(lines) == group  # in the group's order
    assert len(set(lines.values())) == len(group)
    for name, line in lines.items():
        firsts = {len(commonprefix([name, o])) for o in group if o != name}  # noqa: RUF071
        places = [int(n) - 1 for n in re.findall(r"at character (\d+)", line)]
        assert places and set(places) <= firsts
        assert any(p <= max(firsts) < p + 40 for p in places)  # the last, or a window that holds it


def test_names_alike_in_two_far_apart_places_read_apart_in_both() -> None:
    """Each line shows every place where its name's kernels split (those close together in one
    window): a line that showed only the last would read alike for A…1 and B…1."""
    names = [f"void k<X{p}{'b' * 50}{q}>(int)" for p in "AB" for q in "12"]
    _, keys = distinct_names(names, 12)
    assert keys[0] == (
        f"[K1] k<…>(int), whose name reads void k<XA{'b' * 31}… at character 9 and "
        f"…{'b' * 19}1>(int) at character 60"
    )
    assert len(set(keys)) == 4
    grid = [f"void k<{a}{'b' * 50}{b}{'c' * 50}{c}>(int)" for a in "AB" for b in "12" for c in "xy"]
    _, keys = distinct_names(grid, 12)
    assert len(set(keys)) == 8  # three far-apart places: a line shows all three where needed
    assert keys[0].endswith(f"…{'c' * 20}x>(int) at character 110")
    assert all(key.count(" at character ") == 3 for key in keys)
    _, close = distinct_names([f"void k<X{p}bb{q}>(int)" for p in "AB" for q in "12"], 8)
    assert close[0] == "[K1] k<…>(int), whose name reads void k<XAbb1>(int) at character 12"  # one window


# two groups alike each, whose template arguments alone would read alike across them (review)
ALIKE = [
    f"void f<{t}, {u}>({p})"
    for t, u, p in [("int", "X", "int"), ("float", "X", "int"), ("int", "Y", "float"), ("char", "Y", "float")]
]


@given(
    st.lists(
        st.tuples(
            st.sampled_from([*ALIKE, *(CUTLASS.format(n) for n in (1, 2, 64)), "k<int>(float)"]),
            st.integers(12, 60),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_rows_of_their_own_widths_read_apart_and_the_rest_as_before(rows: list[tuple[str, int]]) -> None:
    """`distinct_names` (a diff's rows: a name beside its launch shape): rows of different names
    never read alike; a name whose rows `shorten` apart from every other name's reads as `shorten`
    has it (as before); a name told apart reads the same in each of its rows; each index has its
    line."""
    names, widths = [n for n, _ in rows], [w for _, w in rows]
    labels, keys = distinct_names(names, widths)
    short = [shorten(n, w) for n, w in rows]
    pairs = [(i, j) for i in range(len(rows)) for j in range(len(rows)) if names[i] != names[j]]
    assert all(labels[i] != labels[j] for i, j in pairs)
    assert all(len(label) <= width for label, width in zip(labels, widths, strict=True))
    clash = {names[i] for i, j in pairs if short[i] == short[j]}
    assert [lb for lb, n in zip(labels, names, strict=True) if n not in clash] == [
        text for text, n in zip(short, names, strict=True) if n not in clash
    ]
    told = {n for n, lb, text in zip(names, labels, short, strict=True) if lb != text}  # (as few as need)
    assert told <= clash
    assert len({lb for lb, n in zip(labels, names, strict=True) if n in told}) == len(told)  # one each
    assert len(keys) == len({lb for lb in labels if "[K" in lb})


def test_template_arguments_are_shown_only_where_they_read_apart_from_every_other_name() -> None:
    """Two groups that each shorten alike, whose differing template arguments alone would read
    alike across the groups (review), or as another name itself reads: indexes instead."""
    labels, keys = distinct_names(ALIKE, 60)
    assert labels == ["f<int, …>(…)", "f<float, …>(…)", "f<…>(float) [K1]", "f<…>(float) [K2]"]
    assert len(keys) == 2
    hostile = ["void f<…, X>(int)", "void f<int, X>(int)", f"void f<q>({'a' * 60})"]  # the first: f<…>(…)
    labels, keys = distinct_names(hostile, 60)
    assert labels == ["f<…>(int) [K1]", "f<…>(int) [K2]", "f<…>(…)"]


def test_names_that_differ_only_in_a_control_character_read_apart() -> None:
    """`?` in the label, as everywhere a name is shown; escaped where the index line says how
    the names differ (as `?` both lines would read the same)."""
    marks = ("\x01", "\x02", "\u202e\n", "\\x01", "\u2060")  # a backslash is escaped too: `\\x01` is no \x01
    names = [CUTLASS.format(64).replace("Epilogue", f"Epilogue{c}") for c in marks]
    labels, keys = distinct_names(names, 40)
    assert labels == [f"cutlass::Kernel<…>(T1::Params) [K{i}]" for i in (1, 2, 3, 4, 5)]
    assert [k.split(", whose name reads ")[1] for k in keys] == [
        f"… (int)128>, Epilogue{shown}>>(T1::Params) at character 84"
        for shown in ("\\x01", "\\x02", "\\u202e\\n", "\\\\x01", "\\u2060")
    ]
    assert all(one_line(k) == k for k in keys)


def test_an_index_line_shows_where_the_names_differ_with_an_ellipsis_for_what_it_leaves_out() -> None:
    _, keys = distinct_names([CUTLASS.format(64), CUTLASS.format(65)], 40)
    assert keys[0].endswith("whose name reads …l::Gemm<Shape<(int)64, (int)128>, Epilog… at character 62")


@given(st.text())
def test_a_line_shows_no_control_format_or_separator_character(text: str) -> None:
    """Of Unicode's Cc, Cf, Zl and Zp (what can hide, reorder or break the text around it)."""
    assert not [c for c in one_line(text) if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]
    assert len(one_line(text)) == len(text)  # one character for one: `at character N` holds


def _name_cells(table: str) -> list[str]:
    """The terminal table's kernel cells, a cell of several lines (a row's continuation: no `#`) as one."""
    lines = [[c.strip() for c in line.split("│")] for line in table.splitlines() if "│" in line]
    cells: list[str] = []
    for rank, name, *_ in lines:
        if rank:
            cells.append(name)
        elif name:
            cells[-1] += f" {name}"
    return cells


@pytest.mark.parametrize("columns", ["120", "80"])
def test_rows_of_one_kernel_at_two_launch_shapes_read_apart(
    columns: str, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bert-attn: 16 groups; one kernel name at 2×128 and 20×128 (both `at::native::vector… [K5]`),
    # another at 768×256, 256×256 and 1×256. The grid×block column gives way at 120 columns, and
    # their rows read alike: each now shows its launch shape below its name (Markdown and HTML,
    # which have no launch shape column, beside it)
    path = str(corpus / "a100_details-kerneltime-rules_hier-roofline_bert-attn.csv")
    monkeypatch.setenv("COLUMNS", columns)
    text = run_cli("analyze", path).stdout
    assert "not shown at this width: launches, grid×block" in text
    cells = _name_cells(text)
    assert len(cells) == len(set(cells)) == 16
    assert sum(cell.endswith(("×128", "×256")) for cell in cells) == 7  # those of a shared name only
    markdown = run_cli("analyze", path, "-F", "markdown").stdout
    rows = re.findall(r"^\| \d+ \| `([^`]*)` \| \d+ \|", markdown, flags=re.MULTILINE)  # and its launches
    assert len(rows) == len(set(rows)) == 16
    assert "`at::native::vectorized_elementwise_kernel<…>(…) [K3] 20×128`" in markdown
    html = run_cli("analyze", path, "-F", "html").stdout  # the names of the Markdown, the `[K1] …` lines too
    data = json.loads(re.findall(r'id="ncu-roof-data">(.*?)</script>', html, re.S)[0])
    assert len({r["cells"][1] for r in data["rows"]}) == 16
    assert "<br>[K3] at::native::vectorized_elementwise_kern…, whose name reads" in html


def test_rows_of_distinct_shapes_show_them_only_where_no_column_does(monkeypatch: pytest.MonkeyPatch) -> None:
    # h200: vector_add_f32 at 262144×256 (3 launches) and 4096×256; every other name once
    path = str(FIXTURES / "h200" / "h200_full_raw.csv")
    cells = _name_cells(run_cli("analyze", path).stdout)
    assert [c for c in cells if c.startswith("vector_add")] == [
        "vector_add_f32(…) 262144×256",
        "vector_add_f32(…) 4096×256",
    ]
    assert sum("×" in c for c in cells) == 2
    monkeypatch.setenv("COLUMNS", "250")  # the grid×block column shown: names as before
    wide = run_cli("analyze", path).stdout
    assert "grid×block" in wide and "×" not in "".join(_name_cells(wide))


def test_a_verdict_wraps_between_its_phrases_and_its_notes_list_after_a_comma() -> None:
    # at 60 columns a 13-cell verdict column cut the notes of bert-attn's rows: `[1,2,3,4,5,6…`
    text = wrapped("latency-bound (small grid) · SOL [1,2,3,4,5,6,7]", 13)
    assert text.split("\n") == ["latency-bound", "(small grid)", "· SOL [1,2,3,", "4,5,6,7]"]
    assert wrapped("memory-bound (dram) · roofline", 13).split("\n") == [
        "memory-bound",
        "(dram)",
        "· roofline",
    ]
