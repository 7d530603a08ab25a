"""HTML report: escaping (parsed with html.parser), embedded data, and a real headless chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
from dataclasses import replace
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import analyzed, run_cli
from test_markdown import HOSTILE, corpus_analysis, synthetic, with_intensities

from ncu_roof import api
from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.records import Kernel
from ncu_roof.base.text import one_line
from ncu_roof.render.html import render_html, script_json
from ncu_roof.render.markdown import render_markdown
from ncu_roof.render.summary import Summary, summarize

CHROMIUM = Path("/usr/bin/chromium")
STUB_SVG = '<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd"><svg/>'


class Page(HTMLParser):
    """Start tags with their attributes, the text of each element id'd or classed, script bodies."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.starts: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.fullnames: list[str] = []
        self._in: str | None = None
        self._text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts.append((tag, dict(attrs)))
        if tag == "script" or (tag == "p" and dict(attrs).get("class") == "fullname"):
            self._in, self._text = tag, []

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in == "script":
            self.scripts.append((self.starts[-1][1], "".join(self._text)))
        elif tag == self._in == "p":
            self.fullnames.append("".join(self._text))
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self._text.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.starts if tag == name]


def test_hostile_names_are_escaped_text_everywhere() -> None:
    analysis = synthetic(HOSTILE)
    page = Page(render_html(analysis, plot_svg=STUB_SVG))
    assert page.fullnames == [one_line(k.name) for k in by_time(analysis)]
    assert len(page.tags("script")) == 2  # the JSON data and our own script, nothing from names
    assert [a["href"] for a in page.tags("a")] == ["#k1"]  # fix first; table rows come from the script
    benign = Page(render_html(synthetic([f"k{i}" for i in range(len(HOSTILE))]), plot_svg=STUB_SVG))
    assert [tag for tag, _ in page.starts] == [tag for tag, _ in benign.starts]
    assert len(json.loads(page.scripts[0][1])["rows"]) == len(HOSTILE)


def test_embedded_data_round_trips_the_names_and_cannot_close_the_script() -> None:
    analysis = synthetic(HOSTILE)
    html = render_html(analysis, plot_svg=STUB_SVG)
    page = Page(html)
    (attrs, payload), _ = page.scripts
    assert attrs == {"type": "application/json", "id": "ncu-roof-data"}
    assert not re.search("[<>&]", payload)
    data = json.loads(payload)
    assert [data["names"][r["name"]] for r in data["rows"]] == [k.name for k in by_time(analysis)]
    keys = [c["key"] for c in data["columns"]]
    assert data["rows"][0]["sort"][keys.index("duration")] == pytest.approx(1e-3)
    assert data["rows"][0]["cells"][keys.index("duration")] == "1 ms"
    assert data["rows"][0]["cells"][keys.index("headroom")] == "500 µs"  # 1 ms at 50% of its roof
    assert script_json({"x": "</script><b>&"}) == '{"x":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}'


def test_could_save_marks_a_lower_bound_as_the_terminal_and_markdown_do() -> None:
    # two launches of one kernel, the second off every roof: 500 µs is what the first alone saves
    analysis = synthetic(["same", "same"])
    first, second = analysis.kernels
    analysis = replace(analysis, kernels=(first, Kernel(**{**second.__dict__, "pct_of_roof": None})))
    data = json.loads(Page(render_html(analysis, plot_svg=STUB_SVG)).scripts[0][1])
    keys = [c["key"] for c in data["columns"]]
    assert data["rows"][0]["cells"][keys.index("headroom")] == "500 µs+"
    assert data["rows"][0]["sort"][keys.index("headroom")] == pytest.approx(5e-4)
    # and the headline, shared by every sink, says the fix-first saving is a lower bound too
    assert "could save at least <b>500 µs</b>" in render_html(analysis, plot_svg=STUB_SVG)
    assert "could save at least **500 µs**" in render_markdown(analysis)
    assert "could save at least 500 µs at its dram roof" in repr(api.Analysis.of(analysis))


def test_repeated_launches_are_one_row_and_the_table_is_paged() -> None:
    from ncu_roof.render.html_table import PAGE_ROWS

    names = ["same"] * 3 + [f"k{i}" for i in range(2 * PAGE_ROWS)]
    data = json.loads(Page(render_html(synthetic(names), plot_svg=STUB_SVG)).scripts[0][1])
    keys = [c["key"] for c in data["columns"]]
    assert len(data["rows"]) == 1 + 2 * PAGE_ROWS and data["page"] == PAGE_ROWS
    first = data["rows"][0]
    assert data["names"][first["name"]] == "same" and first["cells"][keys.index("launches")] == "3"


def test_content_security_policy_allows_only_our_script() -> None:
    html = render_html(synthetic(["k"]), plot_svg=STUB_SVG)
    page = Page(html)
    (policy,) = [a["content"] for a in page.tags("meta") if a.get("http-equiv")]
    script = page.scripts[1][1]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert policy is not None and f"script-src 'sha256-{digest}'" in policy
    assert "default-src 'none'" in policy


def test_plot_is_inlined_without_its_xml_prolog() -> None:
    html = render_html(synthetic(["k"]), plot_svg=STUB_SVG)
    assert "<figure><svg/></figure>" in html and "<?xml" not in html and "DOCTYPE svg" not in html


def test_every_number_has_its_recipe() -> None:
    html = render_html(synthetic(["k"]), plot_svg=STUB_SVG)
    assert (
        "<tr><th class=text>duration</th><td>1 ms</td>"
        '<td class="recipe"><code>counter:gpu__time_duration.sum</code></td></tr>'
    ) in html
    assert "<th class=text>intensity dram</th><td>10 FLOP/B</td>" in html
    assert "<li>a note with &lt;b&gt;markup&lt;/b&gt; &amp; `ticks`</li>" in html


def test_small_intensities_have_no_si_prefix() -> None:
    analysis = with_intensities(synthetic(["k"]), {"dram": 0.0948, "l2": 2.7341, "l1": 104.2})
    html = render_html(analysis, plot_svg=STUB_SVG)
    data = json.loads(Page(html).scripts[0][1])
    keys = [c["key"] for c in data["columns"]]
    cells = data["rows"][0]["cells"]
    assert [cells[keys.index(f"ai_{t}")] for t in ("dram", "l2", "l1")] == ["0.0948", "2.73", "104"]
    assert "<th class=text>intensity dram</th><td>0.0948 FLOP/B</td>" in html  # the details
    assert "94.8 m" not in html


@pytest.mark.corpus
def test_default_plot_comes_from_the_plot_renderer() -> None:
    html = render_html(corpus_analysis("rtx4090_rep_2023.1.0_reduce.ncu-rep"))
    assert '<h2 id="plot">' in html and "<svg" in html and "<?xml" not in html


def chromium(page: Path, tmp_path: Path, *args: str, query: str = "") -> tuple[str, str]:
    """Run headless chromium on a file; returns (stdout, stderr)."""
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed")
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
        "--v=0", "--virtual-time-budget=3000", *args, page.as_uri() + query,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout, done.stderr


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def write(analysis: Analysis | Summary, tmp_path: Path, plot_svg: str | None = None) -> Path:
    path = tmp_path / "report.html"
    path.write_text(render_html(analysis, plot_svg=plot_svg), encoding="utf-8")
    return path


def dom_order(dom: str) -> list[int]:
    return [int(k) for k in re.findall(r'<tr data-k="(\d+)"', dom)]


@pytest.mark.browser
def test_hostile_page_loads_clean_in_chromium(tmp_path: Path) -> None:
    dom, stderr = chromium(write(synthetic(HOSTILE), tmp_path, STUB_SVG), tmp_path, "--dump-dom")
    assert console_lines(stderr) == []
    assert dom_order(dom) == list(range(len(HOSTILE)))  # every row, in rank order (the default)
    assert 'data-sorted="rank:asc"' in dom  # the script ran to the end
    assert f"{len(HOSTILE)} of {len(HOSTILE)} launches shown" in dom


@pytest.mark.browser
@pytest.mark.corpus
def test_real_report_shows_every_kernel_and_sorts(tmp_path: Path) -> None:
    # the default order (rank) is checked on the hostile page above: one chromium run fewer
    analysis = corpus_analysis("a10_rep_2023.2.0_105-kernels-llm.ncu-rep")
    page = write(summarize(analysis, launches=True), tmp_path)
    dom, stderr = chromium(page, tmp_path, "--dump-dom", query="?sort=duration&dir=asc")
    assert console_lines(stderr) == []
    assert 'data-sorted="duration:asc"' in dom
    assert "105 of 105 launches shown; page 1 of 2" in dom
    durations = [by_time(analysis)[k].duration_s or 0.0 for k in dom_order(dom)]
    shortest = sorted(k.duration_s or 0.0 for k in analysis.kernels)[:100]
    assert durations == shortest  # the first page: sorted before it is cut
    dom, _ = chromium(page, tmp_path, "--dump-dom", query="?q=__cuda_linear&bound=compute")
    assert "0 of 105 launches shown" in dom


@pytest.mark.browser
@pytest.mark.corpus
def test_screenshot_of_a_real_report(tmp_path: Path) -> None:
    page = write(corpus_analysis("a10g_rep_2023.1.1_roofline-set.ncu-rep"), tmp_path)
    shot = tmp_path / "report.png"
    _, stderr = chromium(page, tmp_path, "--window-size=1400,1800", f"--screenshot={shot}")
    assert console_lines(stderr) == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a page, not a blank


def by_time(analysis: Analysis) -> list[Kernel]:
    """The launches, longest first (unknown durations last; ties in launch order)."""
    return sorted(analysis.kernels, key=lambda k: -(k.duration_s if k.duration_s is not None else -1.0))


def table_overflow_px(page: Path, tmp_path: Path, width: int) -> tuple[int, int]:
    """How far the kernel table reaches past its box in a `width`-px window (0: it fits), and how
    far once the probe has made the page's body 900 px wide (the table cannot fit there: more
    than 0 says the probe measures). The page is measured as written, plus one probe script (the
    copy drops the policy that forbids it)."""
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(encoding="utf-8"))
    probe = (
        "<script>addEventListener('load', function () { var s = document.querySelector('.scroll');"
        " var data = document.documentElement.dataset; data.overflow = s.scrollWidth - s.clientWidth;"
        " document.body.style.width = '900px'; data.narrow = s.scrollWidth - s.clientWidth; });</script>"
    )
    probed = tmp_path / "probed.html"
    probed.write_text(html.replace("</body>", probe + "</body>"), encoding="utf-8")
    dom, _ = chromium(probed, tmp_path, f"--window-size={width},900", "--dump-dom")
    found = [re.search(rf'data-{key}="(-?\d+)"', dom) for key in ("overflow", "narrow")]
    assert found[0] is not None and found[1] is not None, "the probe did not run"
    return int(found[0].group(1)), int(found[1].group(1))


@pytest.mark.browser
def test_the_example_table_fits_1280_px_with_could_save_before_the_verdict(tmp_path: Path) -> None:
    from ncu_roof.pipeline import example_path
    from ncu_roof.render.html_table import table_columns

    summary = summarize(analyzed(Path(example_path())))
    keys = [key for key, _, _ in table_columns(summary)]
    assert keys.index("headroom") < keys.index("verdict")  # what matters most comes first
    fits, narrow = table_overflow_px(write(summary, tmp_path), tmp_path, 1280)
    assert fits == 0 and narrow > 0  # (in a 900-px body it cannot fit: the probe measures)


@pytest.mark.browser
@pytest.mark.corpus
def test_a_wide_real_table_fits_1280_px(tmp_path: Path) -> None:
    """16 grouped kernels, four intensity tiers, up to seven notes a row (`1, 2, …` wraps)."""
    analysis = corpus_analysis("a100_details-kerneltime-rules_hier-roofline_bert-attn.csv")
    assert max(len(row.notes) for row in summarize(analysis).rows) == 7
    fits, narrow = table_overflow_px(write(analysis, tmp_path, STUB_SVG), tmp_path, 1280)
    assert fits == 0 and narrow > 0


@pytest.mark.parametrize("name", ["--example", "a100_details-kerneltime_nsecond_dropout-162k.csv"])
def test_the_headline_says_each_verdicts_basis(name: str, request: pytest.FixtureRequest) -> None:
    # as the terminal says it: the HTML said `69% memory-bound 31% latency-bound` where the
    # terminal and the Markdown said `69% memory-bound · SOL, 31% latency-bound · SOL`
    source = [name if name.startswith("-") else str(request.getfixturevalue("corpus") / name)]
    terminal = run_cli("analyze", *source, env={"COLUMNS": "400"}).stdout
    said = re.findall(r"^(?:time|device \d+): [^:]+ in \d+ launch(?:es)?: (.*)$", terminal, re.MULTILINE)
    html = run_cli("analyze", *source, "-F", "html").stdout
    shares = re.findall(r'<p class="lead">Share of time: <span class="key \w+"></span>(.*)</p>', html)
    words = [re.split(r' <span class="key \w+"></span>', s) for s in shares]  # each verdict's share
    assert [", ".join(unescape(re.sub("<[^>]+>", "", w)) for w in each) for each in words] == said
    assert all("· " in words for words in said)


def test_a_costliest_group_no_row_names_keeps_its_name(corpus: Path) -> None:
    # with --group-by nvtx --launches the rows are launches and the costliest group an NVTX range:
    # named as the table names its rows where it is one of them, else shortened
    path = corpus / "a100_details-kerneltime-rules_hier-roofline_bert-attn.csv"
    done = run_cli("analyze", str(path), "--group-by", "nvtx", "--launches", "-F", "html")
    assert done.returncode == 0, done.stderr
    assert "Costliest: <code>(no NVTX range)</code> ×26" in done.stdout
