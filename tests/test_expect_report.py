"""`analyze --expect` in the reports people attach to pull requests: the Markdown (and so the
`--summary` step summary) and the HTML list what each matched launch was expected and measured to
be and its status, contradicted first; hostile names and patterns stay inert text."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape
from pathlib import Path
from typing import Any

from conftest import run_cli
from test_html import STUB_SVG, Page
from test_markdown import HOSTILE, Tags, github_html, synthetic

from ncu_roof.analysis.core import Analysis
from ncu_roof.base.text import shorten
from ncu_roof.compare.expect import check, parse_expectations
from ncu_roof.render.html import render_html
from ncu_roof.render.markdown import render_markdown

EXPECT = (
    '[[expect]]\nkernel = "silu_kernel_vector"\nbound = "memory"\nbinding = "dram"\n\n'
    '[[expect]]\nkernel = "^void warptiling"\nbound = "memory"\n\n'
    '[[expect]]\nkernel = "no_such_kernel"\nbound = "memory"\n'
)
SILU = ["silu_kernel_vector(float *, float *, int)", "memory-bound at dram"]
SILU_MEASURED = "memory-bound at dram (89% of its roof)"
EXAMPLE_ROWS = [  # the contradicted launch first, then the three confirmed in launch order
    ["ID", "Kernel", "Expected", "Measured", "Status", "Why"],
    [
        "3",
        "warptiling<…>(int, int, int, float *, float *, float *)",
        "memory-bound",
        "compute-bound (37% of its roof)",
        "contradicted",
        "it does more arithmetic per byte than predicted: data is reused better than assumed",
    ],  # why, not what the columns before it say again
    *([str(i), *SILU, SILU_MEASURED, "confirmed", "as expected"] for i in range(3)),
]
LEAD = [
    "3 confirmed, 1 contradicted, 0 unknown, 1 unmatched pattern(s).",
    "No kernel matches no_such_kernel.",
]


def section(html: str, start: str, end: str) -> tuple[list[str], list[list[str]]]:
    """The texts of the paragraphs and the cells of the table rows from `start` to the next `end`."""
    at = html.index(start)
    part = html[at : html.index(end, at + len(start))]

    def text(fragment: str) -> str:
        return unescape(re.sub(r"<[^>]+>", "", fragment)).strip()

    paragraphs = [text(p) for p in re.findall(r"<p[^>]*>(.*?)</p>", part, flags=re.S)]
    rows = re.findall(r"<tr>(.*?)</tr>", part, flags=re.S)
    return paragraphs, [[text(cell) for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r)] for r in rows]


def expecting(analysis: Analysis, *tables: dict[str, Any]) -> Analysis:
    """The analysis with its expectations checked, as `analyze --expect` hands it to the renderers."""
    report = check(analysis, parse_expectations({"expect": list(tables)}))
    return replace(analysis, extra={**analysis.extra, "expectations": report.to_json()})


def test_markdown_summary_and_html_list_expected_measured_and_status(tmp_path: Path) -> None:
    expect, summary = tmp_path / "expect.toml", tmp_path / "summary.md"
    expect.write_text(EXPECT)
    args = ("analyze", "--example", "--expect", str(expect))
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    markdown = run_cli(*args, "-F", "markdown", "--summary", env=env)
    assert markdown.returncode == 0, markdown.stderr
    assert summary.read_text(encoding="utf-8") == markdown.stdout  # the step summary carries it too
    assert section(github_html(markdown.stdout), "<h3>Expectations</h3>", "<h3>") == (LEAD, EXAMPLE_ROWS)
    html = run_cli(*args, "-F", "html").stdout
    assert section(html, '<h2 id="expectations">', "<h2") == (LEAD, EXAMPLE_ROWS)
    # without --expect, no section (tests/golden holds those outputs unchanged)
    assert "Expectations" not in run_cli("analyze", "--example", "-F", "markdown").stdout


def test_hostile_names_and_patterns_are_inert_in_markdown_and_html() -> None:
    unmatched = "<img src=x onerror=alert(1)>\\|`zz`"  # a regex of a literal `|`: matches no name
    tables = ({"kernel": "|<script>", "bound": "memory"}, {"kernel": unmatched, "bound": "memory"})
    hostile = expecting(synthetic(HOSTILE), *tables)
    benign = expecting(synthetic([f"kernel_{i}" for i in range(len(HOSTILE))]), *tables)
    parsed = github_html(render_markdown(hostile))
    assert Tags(parsed).tags == Tags(github_html(render_markdown(benign))).tags
    assert len(section(parsed, "<h3>Expectations</h3>", "<h3>")[1]) == 1 + len(HOSTILE)
    codes = Tags(parsed).codes
    assert unmatched in codes and all(shorten(n, 60) in codes for n in HOSTILE if n.strip())
    assert "<img" not in parsed and "<script" not in parsed
    page = Page(render_html(hostile, plot_svg=STUB_SVG))
    assert [t for t, _ in page.starts] == [t for t, _ in Page(render_html(benign, plot_svg=STUB_SVG)).starts]
    assert page.tags("img") == [] and len(page.tags("script")) == 2  # the data and our own script


def test_the_first_20_launches_are_listed_contradicted_first() -> None:
    # 25 kernels, their bounds memory, compute, latency in turn: 9 confirmed, 16 contradicted
    analysis = expecting(synthetic([f"k{i}" for i in range(25)]), {"kernel": "^k", "bound": "memory"})
    lead, rows = section(github_html(render_markdown(analysis)), "<h3>Expectations</h3>", "<h3>")
    assert lead == [
        "9 confirmed, 16 contradicted, 0 unknown, 0 unmatched pattern(s). "
        "The first 20 of 25 launches; the JSON lists every check."
    ]
    assert [r[4] for r in rows[1:]] == ["contradicted"] * 16 + ["confirmed"] * 4
    assert section(render_html(analysis, plot_svg=STUB_SVG), '<h2 id="expectations">', "<h2")[1] == rows


def test_patterns_that_match_no_kernel_give_no_empty_table() -> None:
    analysis = expecting(synthetic(["k0", "k1"]), {"kernel": "nope", "bound": "memory"})
    lead = ["0 confirmed, 0 contradicted, 0 unknown, 1 unmatched pattern(s).", "No kernel matches nope."]
    assert section(github_html(render_markdown(analysis)), "<h3>Expectations</h3>", "<h3>") == (lead, [])
    assert section(render_html(analysis, plot_svg=STUB_SVG), '<h2 id="expectations">', "<h2") == (lead, [])
