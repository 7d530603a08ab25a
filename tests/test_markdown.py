"""Markdown report: rendered with GitHub's own renderer (cmark-gfm), hostile names, limits."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from conftest import analyzed

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.records import Device, InputInfo, Kernel
from ncu_roof.base.text import intensity, one_line, shorten
from ncu_roof.base.vocabulary import Bound, Roofs, VerdictBasis
from ncu_roof.errors import UsageError
from ncu_roof.render.markdown import render_markdown
from ncu_roof.render.summary import summarize
from ncu_roof.render.text import code_span, table_cell

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"

CUTLASS = (
    "void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8"
    "<" + ", ".join(f"cutlass::gemm::GemmShape<{i}, 128, 32>" for i in range(80)) + ">>(Params)"
)
HOSTILE = [
    "void k<T*, a|b>(int*) ",
    "operator|(unsigned a|b, mask)",
    "a\\|b backslash before pipe",
    "k`tick` and ``double`` and ```triple```",
    "`starts and ends with backticks`",
    " spaces around ",
    "*emph* _under_ **bold** ~~strike~~",
    "<script>alert(1)</script>",
    "[x](javascript:alert(1)) ![img](http://example.com/a.png)",
    "esc\x1b[31mred\x1b[0m\nsecond line\r\tand a tab",
    "@octocat #123 &amp; &lt;b&gt; <!-- c -->",
    "",
    CUTLASS,
]


def kernel(name: str, rank: int, duration_s: float, bound: Bound = Bound.MEMORY) -> Kernel:
    """A synthetic kernel: FLOPs and bytes chosen so intensities and rates are easy to check."""
    flop = 1e9 * rank
    nbytes = {"dram": 1e8, "l2": 2e8, "l1": 4e8, "shared": None}
    return Kernel(
        id=rank,
        name=name,
        input=0,
        device=0,
        grid="(1, 1, 1)",
        block="(32, 1, 1)",
        duration_s=duration_s,
        flop={"fp64": 0.0, "fp32": flop, "fp16": None, "tensor": None, "total": flop},
        bytes=nbytes,
        intensity_flop_per_byte={t: (flop / b if b else None) for t, b in nbytes.items()},
        achieved_flop_per_s=flop / duration_s,
        achieved_byte_per_s={t: (b / duration_s if b else None) for t, b in nbytes.items()},
        attainable_flop_per_s=2e12,
        cap_flop_per_s={"compute": 1e13, "dram": 2e12},
        binding="dram" if bound is Bound.MEMORY else "compute",
        bound=bound,
        roofline_binding="dram" if bound is Bound.MEMORY else "compute",
        compute_precision="fp32",
        pct_of_roof=50.0,
        sol_pct={"sm": 40.0, "memory": 70.0, "dram": 70.0, "l2": None, "l1": None},
        recipe={"duration_s": "counter:gpu__time_duration.sum", "flop_fp32": "fadd+fmul+2*ffma"},
        notes=("a note with <b>markup</b> & `ticks`",),
        verdict_basis=VerdictBasis.SOL if bound is Bound.LATENCY else VerdictBasis.ROOFLINE,
    )


def synthetic(names: list[str], device_name: str = "NVIDIA <b>A100</b> | `x`") -> Analysis:
    """One device, one kernel per name; durations fall with the index (name 0 is the slowest)."""
    durations = [1e-3 / (i + 1) for i in range(len(names))]
    total = sum(durations)
    bounds = [Bound.MEMORY, Bound.COMPUTE, Bound.LATENCY]
    kernels = tuple(
        Kernel(**{**kernel(n, i + 1, d, bounds[i % 3]).__dict__, "time_share": d / total})
        for i, (n, d) in enumerate(zip(names, durations, strict=True))
    )
    roofs = Roofs(
        compute_flop_per_s={"fp32": 1e13},
        bandwidth_byte_per_s={"dram": 2e12, "l2": 5e12},
        source="user:roofs|<i>file</i>.json",
        sources={"fp32": "datasheet `fp32` | *peak*"},
    )
    return Analysis(
        inputs=(InputInfo("/tmp/run <x>|y.ncu-rep", "ncu-rep", "2025.1", len(names)),),
        devices=(Device(0, 0, device_name, "8.0", roofs),),
        kernels=kernels,
        collect_hint="ncu --metrics `dram__bytes.sum` -o report ./app",
    )


def github_html(markdown: str) -> str:
    """What GitHub renders (raw HTML allowed through, as GitHub's sanitizer keeps <details>)."""
    return str(cmarkgfm.github_flavored_markdown_to_html(markdown, options=cmarkgfm.Options.CMARK_OPT_UNSAFE))


class Tags(HTMLParser):
    """Collects the tag sequence, the cells of every table row, and the text of every <code>."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self.codes: list[str] = []
        self._code: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append(tag)
        elif tag == "code":
            self._code = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._code is not None:
            self.codes.append("".join(self._code))
            self._code = None

    def handle_data(self, data: str) -> None:
        if self._code is not None:
            self._code.append(data)


def test_code_span_renders_exactly_whatever_the_backticks() -> None:
    for text in ["plain", "a`b", "``x``", "`edge`", "a ``` b", " both ", "`", "|"]:
        html = github_html(code_span(text))
        assert Tags(html).codes == [text], (text, html)


def test_table_cell_escapes_pipes_and_line_breaks() -> None:
    assert table_cell("a|b\nc") == "a\\|b c"
    html = github_html("| h |\n|---|\n| " + table_cell(code_span("x|y")) + " |\n")
    assert Tags(html).codes == ["x|y"]


def test_hostile_names_keep_the_table_and_turn_into_no_markup() -> None:
    hostile = render_markdown(synthetic(HOSTILE), top=4)
    benign = render_markdown(synthetic([f"kernel_{i}" for i in range(len(HOSTILE))]), top=4)
    parsed = Tags(github_html(hostile))
    # The names change nothing in the structure: same tags in the same order as benign names.
    assert parsed.tags == Tags(github_html(benign)).tags
    # top 4 + their more-columns rows + the other 9 + 3 roofs
    assert sum(1 for row in parsed.rows if row and row[0] == "td") == len(HOSTILE) + 4 + 3
    for name in HOSTILE:
        assert shorten(name, 60) in parsed.codes or one_line(name).strip() == ""
    assert "<script" not in github_html(hostile) and "<em>" not in github_html(hostile)
    assert "<b>" not in github_html(hostile)  # not even from the device name


def test_hostile_names_are_code_spans_in_the_markdown_itself() -> None:
    text = render_markdown(synthetic(HOSTILE))
    assert "\x1b" not in text and "<script>" not in text.replace("`<script>", "")
    assert "NVIDIA <b>A100</b> \\| `x`" not in text  # device name: a code span, never raw
    assert "**`` NVIDIA <b>A100</b> | `x` ``** (CC 8\\.0, device 0)" in text
    for summary in re.findall(r"<summary>(.*?)</summary>", text):
        assert "`" not in summary and "<" not in summary  # raw HTML to GitHub: our words only


def test_every_table_row_has_the_header_columns_and_the_main_table_at_most_8() -> None:
    html = github_html(render_markdown(synthetic(HOSTILE), top=5))
    tables = re.findall(r"<table>.*?</table>", html, flags=re.S)
    assert len(tables) == 4  # top kernels, their other columns, the rest, roofs
    for table in tables:
        rows = Tags(table).rows
        assert all(len(row) == len(rows[0]) for row in rows), rows
    assert len(Tags(tables[0]).rows[0]) <= 8


def test_plot_is_a_relative_link() -> None:
    text = render_markdown(synthetic(["k"]), plot_ref="plots/roof line.svg")
    assert "Plot: [`plots/roof line.svg`](<plots/roof%20line.svg>)" in text
    assert '<a href="plots/roof%20line.svg"><code>plots/roof line.svg</code></a>' in github_html(text)


def test_headline_numbers_of_a_synthetic_analysis() -> None:
    text = render_markdown(synthetic(["first", "second", "third"]))
    # durations 1, 1/2, 1/3 ms → shares 6/11, 3/11, 2/11; bounds memory, compute, latency
    assert "## Roofline: 3 launches, 1.83 ms" in text
    assert (
        "**55% of time memory-bound (dram 55%) · roofline**, 27% of time compute-bound · roofline, "
        "18% of time latency-bound · SOL."
    ) in text
    # each at 50% of its roof: `first` could save 0.5 ms of 1.83 ms (27%)
    fix = "**Fix first:** `first` could save **500 µs** (27% of the time) if it reached its dram roof"
    assert fix + " (ranked by this); no Speed-of-Light figures say what it needs;" in text
    row = (
        "| 1 | `first` | 1\u00a0ms | 55% | memory\\-bound \\(dram\\) · roofline \\[1\\] | 50% | 500\u00a0µs |"
    )
    assert row in text
    assert "| 1 | `1×32` | dram | 10 | 5 | 2.5 | 1 TFLOP/s | 100 GB/s (dram) |" in text
    assert "1. 3 launches: a note with \\<b\\>markup\\</b\\> \\& \\`ticks\\`" in text


def test_repeated_launches_are_one_row_with_their_count() -> None:
    analysis = synthetic(["same", "same", "other"])
    text = render_markdown(analysis)
    assert "## Roofline: 3 launches of 2 kernels, 1.83 ms" in text
    assert "| # | Kernel | Launches | Time | Share | Verdict [notes] | % of roof | Could save |" in text
    # 1 ms + 0.5 ms; the verdicts of its launches differ (memory, compute): the one of most time
    # in the main table, each with its share of the kernel's time in a cell of the folded table
    verdict = "memory\\-bound \\(dram\\) · roofline \\[1\\]"
    assert f"| 1 | `same` | 2 | 1.5\u00a0ms | 82% | {verdict} |" in text
    assert "more" not in text.split("### Top")[1].split("<sub>")[0]
    assert "| Verdicts by time |" in text
    by_time = "67% memory\\-bound \\(dram\\) · roofline; 33% compute\\-bound \\(compute\\) · roofline |"
    assert by_time in text
    assert "| 1 | `1×32` | 750 µs / 500 µs / 1 ms |" in text  # mean / min / max


def with_intensities(analysis: Analysis, values: dict[str, float | None]) -> Analysis:
    """The analysis with its first kernel's intensities replaced by `values`."""
    first, *rest = analysis.kernels
    changed = Kernel(**{**first.__dict__, "intensity_flop_per_byte": values})
    return replace(analysis, kernels=(changed, *rest))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0948, "0.0948"),
        (2.7341, "2.73"),
        (104.2, "104"),
        (1234.0, "1.23e+03"),
        (0.0, "0"),
        (None, "–"),
        (float("nan"), "–"),
        (float("inf"), "∞"),
    ],
)
def test_intensity_is_a_plain_number_with_three_digits(value: float | None, text: str) -> None:
    assert intensity(value) == text


def test_small_intensities_have_no_si_prefix_in_the_table() -> None:
    # 0.0948 FLOP/B printed as `94.8 m` reads as 94.8 million
    analysis = with_intensities(synthetic(["first"]), {"dram": 0.0948, "l2": 2.7341, "l1": 104.2})
    text = render_markdown(analysis)
    assert "| dram | 0.0948 | 2.73 | 104 |" in text
    assert "94.8 m" not in text


def test_an_empty_analysis_says_so() -> None:
    empty = Analysis(inputs=(), devices=(), kernels=())
    expected = "<!-- ncu-roof -->\n\n## Roofline: 0 launches, 0 s\n\nNo kernel has a duration.\n"
    assert render_markdown(empty) == expected


def test_too_small_a_limit_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        render_markdown(synthetic(["k"]), limit_chars=100)


def corpus_analysis(name: str) -> Analysis:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return analyzed(path)


@pytest.mark.corpus
def test_headline_matches_the_analysis_of_a_real_report() -> None:
    analysis = corpus_analysis("a10g_rep_2023.1.1_roofline-set.ncu-rep")
    text = render_markdown(analysis)
    # every launch is on the roofline: the three Speed of Light calls latency-bound are
    # compute-bound there (their notes say both)
    assert all(k.bound is Bound.COMPUTE for k in analysis.kernels)
    assert "## Roofline: 4 launches, 1.21 ms" in text
    assert "**100% of time compute-bound · roofline**" in text
    # 431.648 µs with its FMA pipe busy 18.8% of the time (the busier compute ceiling): 350 µs to gain
    assert "**Fix first:** `one_blocktiling<…>(…)` could save **350 µs** (29% of the time)" in text
    assert "| 1 | `one_blocktiling<…>(…)` | 432\u00a0µs | 36% | compute\\-bound \\(fp32\\)" in text
    assert "| fp32 | 26.9 TFLOP/s |" in text
    assert "The other" not in text  # 4 kernels: all in the top table


@pytest.mark.corpus
def test_105_launches_fold_into_one_row_or_fit_and_truncate_with_a_note() -> None:
    analysis = corpus_analysis("a10_rep_2023.2.0_105-kernels-llm.ncu-rep")
    folded = render_markdown(analysis)  # one kernel launched 105 times
    assert "## Roofline: 105 launches of 1 kernel, 1.83 ms" in folded
    row = r"^\| 1 \| `__cuda_linear_fp32_fp16_kernel<…>\(…\)` \| 105 \| 1.83\u00a0ms \|"
    assert re.search(row, folded, re.M)
    launches = summarize(analysis, launches=True)
    full = render_markdown(launches)
    assert len(full) <= 65536 and "[!NOTE]" not in full
    assert "<summary>The other 90 launches</summary>" in full
    cut = render_markdown(launches, limit_chars=8000)
    assert len(cut) <= 8000
    note = re.search(r"> (\d+) of 105 launches \(the last by time\) are left out", cut)
    assert note is not None
    ranks = [int(r) for r in re.findall(r"^\| (\d+) \| `__cuda", cut, flags=re.M)]
    assert ranks == list(range(1, 106 - int(note.group(1))))  # the slowest launches, in order
    assert len(render_markdown(launches, limit_chars=len(cut) + 400)) > len(cut)  # fills the limit
