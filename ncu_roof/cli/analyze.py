"""`ncu-roof analyze FILE…`: read, analyze, render, write. Nothing else happens here."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ncu_roof import pipeline
from ncu_roof.cli import app
from ncu_roof.errors import UsageError
from ncu_roof.pipeline import example_path
from ncu_roof.pipeline import roof_choice as roof_choice  # profile checks the roofs early
from ncu_roof.render.output import append_summary, check_summary, check_writable, write_all
from ncu_roof.render.text import one_line
from ncu_roof.traffic import TrafficDefinition

if TYPE_CHECKING:  # pandas, pyarrow and friends load only when a command needs them
    from ncu_roof.analysis import Analysis
    from ncu_roof.ingest import RunTable


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"
    HTML = "html"
    PARQUET = "parquet"


class Locale(StrEnum):
    AUTO = "auto"
    C = "C"
    EN = "en"
    DE = "de"


@dataclass(frozen=True)
class AnalyzeOptions:
    format: Format = Format.TABLE
    output: str | None = None
    gpu: str | None = None
    roofs: str | None = None
    number_locale: Locale = Locale.AUTO
    plot: str | None = None
    summary: bool = False
    expect: str | None = None
    fail_on_mismatch: bool = False
    top: int = 30
    traffic: TrafficDefinition = TrafficDefinition.NSIGHT
    skip_bad_rows: bool = False


def request_of(options: AnalyzeOptions) -> pipeline.Request:
    from ncu_roof.units import NumberStyle

    style = None if options.number_locale is Locale.AUTO else NumberStyle(options.number_locale.value)
    return pipeline.Request(
        gpu=options.gpu,
        roofs=options.roofs,
        number_style=style,
        traffic=options.traffic,
        skip_bad_rows=options.skip_bad_rows,
    )


def build_analysis(inputs: Sequence[str | RunTable], options: AnalyzeOptions) -> Analysis:
    """Input paths (or tables already read) + options → Analysis, one line per input on stderr."""
    return pipeline.run(inputs, request_of(options), log=diag)


def diag(message: str) -> None:
    sys.stderr.write(one_line(message) + "\n")


def render(analysis: Analysis, options: AnalyzeOptions) -> str | bytes:
    if options.format is Format.JSON:
        from ncu_roof.render.jsonout import render_json

        return render_json(analysis)
    if options.format is Format.PARQUET:
        from ncu_roof.render.parquet import render_parquet

        return render_parquet(analysis)
    if options.format is Format.CSV:
        from ncu_roof.render.csvout import render_csv

        return render_csv(analysis)
    if options.format is Format.MARKDOWN:
        from ncu_roof.render.markdown import render_markdown

        return render_markdown(analysis, plot_note=f"roofline plot: {options.plot}" if options.plot else None)
    if options.format is Format.HTML:
        from ncu_roof.render.html import render_html

        return render_html(analysis)
    from ncu_roof.render.terminal import render_terminal

    to_tty = options.output in (None, "-") and sys.stdout.isatty()
    color = to_tty and "NO_COLOR" not in os.environ
    width = shutil.get_terminal_size((160, 40)).columns if to_tty else 240
    return render_terminal(analysis, color=color, width=width, top=options.top)


def plot_format(path: str, option: str = "--plot") -> str:
    """`roofline.svg` → svg; anything but .svg/.png is a usage error."""
    fmt = Path(path).suffix.lstrip(".").lower()
    if fmt not in ("svg", "png"):
        raise UsageError(f"{option} {path}: unknown image type", hint="use a .svg or .png file name")
    return fmt


def emit(inputs: Sequence[str | RunTable], options: AnalyzeOptions) -> Analysis:
    """Analyze the inputs (paths, or tables already read) and write every output the options ask
    for; returns the analysis.

    Options and output paths are checked before any work, and every output is rendered before
    the first is written: a run that fails leaves no output behind and nothing on stdout.
    """
    check_writable(options.output)
    if options.format is Format.PARQUET and options.output in (None, "-") and sys.stdout.isatty():
        raise UsageError("--format parquet is binary: not written to a terminal", hint="add -o runs.parquet")
    if options.summary:
        check_summary()
    if options.plot:
        plot_format(options.plot)
        check_writable(options.plot)
    expectations = None
    if options.expect:
        from ncu_roof import expect

        expectations = expect.load_expectations(options.expect)  # a bad file fails before any read
    analysis = build_analysis(inputs, options)
    report = None
    if expectations is not None:
        analysis, report = pipeline.with_expectations(analysis, expectations)
    outputs: list[tuple[str | bytes, str | None]] = [(render(analysis, options), options.output)]
    if options.plot:
        from ncu_roof.render.plot import render_plot

        outputs.append((render_plot(analysis, fmt=plot_format(options.plot)), options.plot))
    summary = None
    if options.summary:
        from ncu_roof.render.markdown import render_markdown

        summary = render_markdown(analysis)
    write_all(outputs)
    if summary is not None and not append_summary(summary):
        diag("--summary: GITHUB_STEP_SUMMARY is not set; nothing appended")
    if report is not None:
        from ncu_roof import expect

        sys.stderr.write(expect.render_expectations(report))
        if options.fail_on_mismatch:
            expect.gate(report)
    return analysis


TRAFFIC_HELP = (
    "Memory-tier traffic: nsight = what the Nsight Compute version that wrote the report draws; "
    "counted = all traffic through each tier. Each against its own counter's peak."
)


@app.command("analyze")
def analyze_command(
    files: list[str] = typer.Argument(
        None,
        help="ncu outputs: .ncu-rep, CSV (raw, details, summary) or console text; `-` for stdin, "
        "a directory, or a glob.",
    ),
    example: bool = typer.Option(
        False, "--example", help="Analyze the example report shipped with ncu-roof."
    ),
    gpu: str = typer.Option(None, "--gpu", help="Use the built-in roofs of this GPU (see `ncu-roof gpus`)."),
    roofs: str = typer.Option(None, "--roofs", help="Use the roofs of this TOML platform file."),
    traffic: TrafficDefinition = typer.Option(TrafficDefinition.NSIGHT, "--traffic", help=TRAFFIC_HELP),
    fmt: Format = typer.Option(Format.TABLE, "--format", "-f", help="Output format."),
    output: str = typer.Option(None, "--output", "-o", help="Write here (atomically) instead of stdout."),
    plot: str = typer.Option(None, "--plot", help="Also draw the roofline to this .svg or .png file."),
    number_locale: Locale = typer.Option(Locale.AUTO, "--number-locale", help="Number style of CSV input."),
    expect_file: str = typer.Option(
        None, "--expect", help="Expectations TOML: kernel regex → expected bound/tier (predict vs measure)."
    ),
    fail_on_mismatch: bool = typer.Option(
        False, "--fail-on-mismatch", help="Exit 1 when a kernel contradicts its expectation."
    ),
    top: int = typer.Option(30, "--top", min=0, help="Table: the N costliest kernels (0 = all)."),
    summary: bool = typer.Option(
        False, "--summary", help="Append the Markdown report to $GITHUB_STEP_SUMMARY."
    ),
    skip_bad_rows: bool = typer.Option(
        False,
        "--skip-bad-rows",
        help="Leave out kernels with damaged CSV rows (with a warning) instead of failing.",
    ),
) -> None:
    """Give every kernel its FLOPs, bytes per tier, intensity, roofs and verdict."""
    paths = list(files or [])
    if example:
        paths.append(example_path())
    if not paths:
        raise UsageError("no input files", hint="ncu-roof analyze report.ncu-rep  (or --example)")
    if fail_on_mismatch and not expect_file:
        raise UsageError(
            "--fail-on-mismatch needs --expect FILE",
            hint="ncu-roof analyze R --expect e.toml --fail-on-mismatch",
        )
    options = AnalyzeOptions(
        format=fmt,
        output=output,
        gpu=gpu,
        roofs=roofs,
        number_locale=number_locale,
        plot=plot,
        summary=summary,
        expect=expect_file,
        fail_on_mismatch=fail_on_mismatch,
        top=top,
        traffic=traffic,
        skip_bad_rows=skip_bad_rows,
    )
    emit(paths, options)
