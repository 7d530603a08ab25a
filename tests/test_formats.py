"""The format registry, -o suffix inference, CLI conventions (help, -h, --quiet/--verbose)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import analyzed, document_text
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.frame import FrameRows, kernel_of, numbers, struct, text_lists
from ncu_roof.analysis.notes import COLLECTION_FAILED
from ncu_roof.base.text import plural
from ncu_roof.cli import main
from ncu_roof.pipeline import example_path
from ncu_roof.render.formats import (
    FORMATS,
    OutputFormat,
    RenderOptions,
    choose,
    from_suffix,
    render,
)
from ncu_roof.render.unplaced import _agreeing, _missing_reason, missing_reason

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the console entry point in-process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    code = done.value.code
    return (code if isinstance(code, int) else 0), out, err


@pytest.fixture
def example() -> object:
    """The example's analysis, once per session (shared: read only)."""
    return analyzed(Path(example_path()))


MAGIC = {
    OutputFormat.JSON: b'{\n  "schema": "ncu-roof/analysis/v1"',
    OutputFormat.CSV: b"id,name,input,device",
    OutputFormat.MARKDOWN: b"<!-- ncu-roof -->",
    OutputFormat.HTML: b"<!doctype html>",
    OutputFormat.SVG: b"<?xml",
    OutputFormat.PNG: b"\x89PNG",
    OutputFormat.PDF: b"%PDF-",
    OutputFormat.TABLE: b"device 0: NVIDIA H100 PCIe",
    OutputFormat.PARQUET: b"PAR1",
}


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_is_registered_and_renders_the_example(fmt: OutputFormat, example: object) -> None:
    entry = FORMATS[fmt]
    assert entry.suffixes and all(s.startswith(".") and s == s.lower() for s in entry.suffixes)
    assert from_suffix(f"out{entry.suffixes[0]}") is fmt or fmt is OutputFormat.TABLE
    data = document_text(render(example, fmt, RenderOptions()))  # type: ignore[arg-type]
    payload = data.encode("utf-8") if isinstance(data, str) else data
    assert isinstance(data, bytes) is entry.binary or fmt is OutputFormat.SVG
    assert payload.startswith(MAGIC[fmt]), payload[:40]


def test_suffixes_are_unique_and_the_magic_table_covers_every_format() -> None:
    suffixes = [s for entry in FORMATS.values() for s in entry.suffixes]
    assert len(suffixes) == len(set(suffixes))
    assert set(MAGIC) == set(OutputFormat)


def test_format_comes_from_the_suffix_and_a_contradiction_is_refused() -> None:
    from ncu_roof.errors import UsageError

    assert choose(None, "report.HTML") is OutputFormat.HTML
    assert choose(None, "out/r.md") is OutputFormat.MARKDOWN
    assert choose(None, "report.out") is OutputFormat.TABLE
    assert choose(None, None) is OutputFormat.TABLE
    assert choose(OutputFormat.JSON, "r.json") is OutputFormat.JSON
    assert choose(OutputFormat.JSON, "r.data") is OutputFormat.JSON
    with pytest.raises(UsageError) as caught:
        choose(OutputFormat.JSON, "report.html")
    assert "contradicts" in caught.value.message and ".json" in caught.value.hint


def test_o_report_html_writes_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "report.html"
    code, out, _ = cli(capsys, "analyze", "--example", "-o", str(target))
    assert code == 0 and out == ""
    assert target.read_text(encoding="utf-8").startswith("<!doctype html>")
    pdf = tmp_path / "roof.pdf"
    assert cli(capsys, "analyze", "--example", "-o", str(pdf))[0] == 0
    assert pdf.read_bytes().startswith(b"%PDF-")
    code, _, err = cli(capsys, "analyze", "--example", "-F", "json", "-o", str(tmp_path / "r.md"))
    assert code == 2 and "error: --format json contradicts -o" in err and not (tmp_path / "r.md").exists()


def test_bare_command_and_h_print_readable_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys)
    assert code == 0 and err == ""
    assert out.startswith("Usage: ncu-roof [OPTIONS] COMMAND [ARGS]...")
    assert "\n  analyze " in out and "-q, --quiet" in out
    code, short, _ = cli(capsys, "-h")
    assert code == 0 and short == out
    code, sub, _ = cli(capsys, "analyze", "-h")
    assert code == 0 and "--sort time|headroom" in sub and "[FILE...]" in sub
    for unreadable in ("<list[str]>", "<int range>", "<str>", "<float>"):
        assert unreadable not in sub


def test_quiet_and_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, normal = cli(capsys, "analyze", "--example", "-F", "json")
    assert code == 0 and normal.startswith("read ") and "--verbose for an ncu command" in normal
    assert "ncu --metrics" not in normal
    code, _, quiet = cli(capsys, "analyze", "--example", "-F", "json", "--quiet")
    assert code == 0 and quiet == ""  # errors only: there are none
    code, _, verbose = cli(capsys, "-v", "analyze", "--example", "-F", "json")
    assert code == 0 and "\n  ncu --metrics " in verbose
    assert cli(capsys, "-q", "-v", "gpus")[0] == 2


def test_json_groups_fix_first_and_headroom(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "analyze", "--example", "-F", "json", "-q")
    assert code == 0
    data = json.loads(out)
    silu = data["groups"][0]
    assert silu["name"].startswith("silu_kernel_vector") and silu["launches"] == 3
    assert silu["kernels"] == [0, 1, 2] and silu["device"] == 0
    # gpu__time_duration.sum of the three launches: 284,704 + 284,576 + 284,320 ns
    assert silu["total_duration_s"] == pytest.approx(853.6e-6)
    assert silu["min_duration_s"] == pytest.approx(284.32e-6)
    assert silu["max_duration_s"] == pytest.approx(284.704e-6)
    assert silu["verdicts"] == ["memory-bound (dram) · roofline"]
    for k in data["kernels"]:  # duration × (1 − % of roof)
        assert k["headroom_s"] == pytest.approx(k["duration_s"] * (1 - k["pct_of_roof"] / 100))
    assert silu["headroom_s"] == pytest.approx(sum(data["kernels"][i]["headroom_s"] for i in range(3)))
    first = {f["device"]: f for f in data["fix_first"]}
    assert data["groups"][first[1]["group"]]["name"].startswith("void one_blocktiling")
    assert first[1]["headroom_s"] == pytest.approx(
        350.5e-6, rel=1e-3
    )  # 431.648 µs x (1 - 0.188, its FMA pipe)


@pytest.mark.corpus
def test_stderr_names_why_launches_are_not_on_a_roofline(capsys: pytest.CaptureFixture[str]) -> None:
    path = CORPUS / "a100_details-kerneltime-rules_hier-roofline_bert-attn.csv"
    if not path.exists():
        pytest.skip("corpus absent")
    code, out, err = cli(capsys, "analyze", str(path))
    assert code == 0
    assert "not on a roofline: 26 launches have no roofs (the input names no GPU): pass --gpu KEY" in err
    assert "26 launches: no compute roofs for this device" in out


def test_table_at_80_columns_keeps_every_verdict_whole(capsys: pytest.CaptureFixture[str]) -> None:
    from ncu_roof.render.summary import summarize
    from ncu_roof.render.terminal import render_terminal

    text = render_terminal(summarize(analyzed(Path(example_path()))), color=False, width=80)
    lines = text.splitlines()
    table = [line for line in lines if "│" in line]
    assert all(len(line) <= 80 for line in table)
    assert sum("memory-bound (dram)" in line for line in table) == 1
    assert sum("compute-bound (fp32)" in line for line in table) == 4
    assert sum("latency-bound" in line for line in table) == 0
    assert any(line.startswith("not shown at this width: ") for line in lines)


def test_each_legend_explains_only_the_columns_its_output_shows() -> None:
    """The terminal has no AI, Binding or Bandwidth column (Markdown's and HTML's figures table
    has): its legend does not explain them; Markdown's and HTML's do."""
    from ncu_roof.render.html import render_html
    from ncu_roof.render.markdown import render_markdown
    from ncu_roof.render.summary import summarize
    from ncu_roof.render.terminal import render_terminal

    analysis = analyzed(Path(example_path()))
    terminal = render_terminal(summarize(analysis), color=False, width=400)
    assert "[n] = note n below" in terminal and "AI = " not in terminal and "Binding = " not in terminal
    for text in (render_markdown(analysis), render_html(analysis, plot_svg="")):
        assert "AI = arithmetic intensity" in text and "Bandwidth = achieved" in text


_LAUNCH_FACTS = st.tuples(st.integers(0, 2), st.booleans(), st.booleans(), st.booleans(), st.booleans())


@given(st.lists(_LAUNCH_FACTS, max_size=30))
def test_missing_reasons_are_counted_most_common_first_then_as_launches_first_have_them(
    facts: list[tuple[int, bool, bool, bool, bool]],
) -> None:
    """Each launch not on a roofline counts once for its reason (its device — the example's two,
    and one the analysis lacks — whether its collection failed, it has a duration, FLOPs): the
    reasons by count, a tie in the order the launches first have them."""
    base = analyzed(Path(example_path()))
    n = len(facts)
    launches = base.launches.gather(np.zeros(n, dtype="int64")) if n else base.launches.clear()
    table = np.array(facts, dtype="int64").reshape(n, 5)
    device, placed, no_duration, failed, no_flop = table.T
    flop = launches.get_column("flop")
    fields = {f.name: flop.struct.field(f.name) for f in flop.dtype.fields}  # type: ignore[attr-defined]
    made = launches.with_columns(
        pl.Series("device", device, dtype=pl.Int64),
        numbers(np.where(placed == 1, 50.0, np.nan)).alias("pct_of_roof"),
        numbers(np.where(no_duration == 1, np.nan, 1e-3)).alias("duration_s"),
        text_lists([(COLLECTION_FAILED,) if f else () for f in failed.tolist()]).alias("notes"),
        struct({**fields, "total": numbers(np.where(no_flop == 1, np.nan, 1.0))}, n).alias("flop"),
    )
    analysis = replace(base, kernels=FrameRows(made, kernel_of))
    reasons: Counter[str] = Counter()
    devices = dict(enumerate(analysis.devices))  # (a device the analysis lacks: none)
    for d, p, nd, f, nf in facts:
        if not p:
            reasons[_missing_reason(devices.get(d), "the notes", nd, nd and f, nf)] += 1
    ordered = sorted(reasons.items(), key=lambda item: -item[1])
    expected = "; ".join(f"{plural(k, 'launch')} {_agreeing(why, k)}" for why, k in ordered) or None
    assert missing_reason(analysis) == expected
