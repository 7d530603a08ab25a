"""`ncu-roof analyze FILE…`: read, analyze, render, write. Nothing else happens here."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from ncu_roof import pipeline
from ncu_roof.base.text import one_line
from ncu_roof.base.units import NumberStyle
from ncu_roof.base.vocabulary import GroupBy, SortBy, TrafficDefinition
from ncu_roof.cli import ReadableHelp, Verbosity, app, folded, named_alike, verbosity
from ncu_roof.cli.options import (
    Dpi,
    GpuKey,
    HeightIn,
    PlotCaption,
    RoofsFile,
    SkipBadRows,
    Top,
    Traffic,
    WidthIn,
)
from ncu_roof.errors import UsageError
from ncu_roof.render.console import screen, to_terminal
from ncu_roof.render.formats import (
    FORMATS,
    Caption,
    OutputFormat,
    RenderOptions,
    choose,
    image_format,
    render,
)
from ncu_roof.render.output import (
    Document,
    append_summary,
    check_summary,
    check_writable,
    refuse_inputs,
    same_target,
    write_all,
)

if TYPE_CHECKING:  # pandas, pyarrow and friends load only when a command needs them
    from ncu_roof.analysis.core import Analysis
    from ncu_roof.analysis.records import InputInfo
    from ncu_roof.ingest import RunTable


@dataclass(frozen=True)
class AnalyzeOptions:
    format: OutputFormat | None = None  # None: from the -o suffix, else the table
    output: str | None = None
    request: pipeline.Request = field(default_factory=pipeline.Request)  # what to read, which roofs
    plot: str | None = None
    summary: bool = False
    expect: str | None = None
    fail_on_mismatch: bool = False
    # the table's rows, the plot's size and caption (the screen's width and colour: `emit`)
    rendering: RenderOptions = field(default_factory=RenderOptions)


def checked(analysis: Analysis, notes: str = "the notes", side: str = "") -> Analysis:
    """The analysis, unless an input measured nothing (`pipeline.refuse_failed_captures`); one
    stderr line on why verdicts are missing, one on missing counters (--verbose: the command);
    `notes`: where the launches' notes are read (a diff and a plot show none); `side`: a diff's."""
    from ncu_roof.render.summary import lack_counters
    from ncu_roof.render.unplaced import missing_reason

    pipeline.refuse_failed_captures(analysis)
    if reason := missing_reason(analysis, notes):
        diag(f"{side}not on a roofline: {reason}")
    if analysis.collect_hint:
        what = analysis.launches.get_column("missing").explode().drop_nulls().unique().sort().to_list()
        gap = f"{lack_counters(analysis)} ({', '.join(what)})"
        if verbosity[0] is Verbosity.VERBOSE:
            diag(f"{side}{gap}; a run that collects them:")
            diag(f"  {analysis.collect_hint}", command=True)
        else:
            diag(f"{side}{gap}; see {notes}, or --verbose for an ncu command that collects them")
    return analysis


def diag(message: str, *, command: bool = False) -> None:
    """Progress (`read …`, `wrote …`) and what the reader should know of the results, folded to
    stderr's width (a `command` one line, to be copied whole); silent with --quiet (errors only)."""
    if verbosity[0] is not Verbosity.QUIET:
        sys.stderr.write(one_line(message) + "\n" if command else folded(message))


def plot_reference(plot: str | None, report: str | None) -> str | None:
    """The plot's path as a report beside it would link it: relative to the report's folder."""
    if not plot:  # none drawn (`--plot ""` too)
        return None
    if report in (None, "-"):
        return Path(plot).name if not Path(plot).is_absolute() else plot
    try:
        return os.path.relpath(Path(plot).resolve(), Path(report).resolve().parent)
    except ValueError:  # another drive (Windows)
        return plot


def emit(inputs: Sequence[str | RunTable], options: AnalyzeOptions) -> None:
    """Analyze the inputs (paths, or tables already read) and write every output the options ask
    for. Options and output paths are checked before any work, and every output is rendered before
    the first is written: a run that fails leaves no output behind and nothing on stdout."""
    fmt, plot_fmt = check_options(options, [i for i in inputs if isinstance(i, str)])
    expectations = None
    if options.expect:
        from ncu_roof.compare import expect

        expectations = expect.load_expectations(options.expect)  # a bad file fails before any read
    analysis = checked(pipeline.run(inputs, options.request, log=diag))
    report = None
    if expectations is not None:  # the report also goes into the JSON's `expectations`
        report = expect.check(analysis, expectations)
        analysis = replace(analysis, extra={**analysis.extra, "expectations": report.to_json()})
    shown = screen(options.output)
    settings = replace(
        options.rendering,
        color=fmt is OutputFormat.TABLE and shown.color,
        width=shown.width,
        plot_ref=plot_reference(options.plot, options.output),
    )
    outputs: list[tuple[Document, str | None]] = [(render(analysis, fmt, settings), options.output)]
    if plot_fmt is not None:
        outputs.append((render(analysis, plot_fmt, settings), options.plot))
    summary = None
    if options.summary:
        summary = str(render(analysis, OutputFormat.MARKDOWN, replace(settings, plot_ref=None)))
    write_outputs(outputs, analysis.inputs, summary)
    if report is not None:
        sys.stderr.write("".join(map(folded, expect.render_expectations(report).splitlines())))
        if options.fail_on_mismatch:
            expect.gate(report)


def refuse_binary_to_terminal(fmt: OutputFormat, output: str | None, example: str) -> None:
    """Binary data (Parquet, images) never goes to a terminal; `example` starts the hint's path."""
    if FORMATS[fmt].binary and to_terminal(output):
        hint = f"write it to a file: {example}{FORMATS[fmt].suffixes[0]}"
        raise UsageError(f"--format {fmt.value} writes binary data, not for a terminal", hint=hint)


def check_options(
    options: AnalyzeOptions, inputs: Sequence[str], output_option: str = "-o"
) -> tuple[OutputFormat, OutputFormat | None]:
    """The output's format and the plot's, once the options and output paths (none of them one of
    the `inputs`) are checked: before any work (`profile`: before ncu runs, `--analysis-output`)."""
    fmt = choose(options.format, options.output, output_option)
    refuse_binary_to_terminal(fmt, options.output, f"{output_option} out")
    check_writable(options.output)
    refuse_inputs([options.output, options.plot], inputs)  # and once read
    if options.summary:
        check_summary()
    if not options.plot:  # `--plot ""` too: no plot, as before
        return fmt, None
    plot_fmt = image_format(options.plot, "--plot")
    check_writable(options.plot)
    if options.output and same_target(options.output, options.plot):
        raise UsageError(
            f"{output_option} and --plot both name {options.plot}: one output would replace the other",
            hint="name two files",
        )
    return fmt, plot_fmt


def write_outputs(
    outputs: list[tuple[Document, str | None]], read: Iterable[InputInfo], summary: str | None
) -> None:
    refuse_inputs([path for _, path in outputs], [i.path for i in read])
    write_all(outputs)
    if summary is not None and not append_summary(summary):
        diag("--summary: GITHUB_STEP_SUMMARY is not set; nothing appended")


def picture_options(
    width_in: float | None, height_in: float | None, dpi: float | None, caption: Caption, device: int | None
) -> RenderOptions:
    for option, value in (("--width", width_in), ("--height", height_in), ("--dpi", dpi)):
        if value is not None and not 0 < value < 1000:
            raise UsageError(
                f"{option} {value:g} is out of range", hint=f"e.g. {option} 7 (inches; --dpi 300)"
            )
    return RenderOptions(width_in=width_in, height_in=height_in, dpi=dpi, caption=caption, device=device)


@app.command("analyze", cls=ReadableHelp)
def analyze_command(
    files: list[str] = typer.Argument(
        None,
        metavar="FILE...",
        help="ncu outputs: .ncu-rep, CSV (raw, details, summary) or console text; `-` for stdin, "
        "a directory, or a glob.",
    ),
    example: bool = typer.Option(
        False, "--example", help="Analyze the example report shipped with ncu-roof."
    ),
    gpu: GpuKey = None,
    roofs: RoofsFile = None,
    traffic: Traffic = TrafficDefinition.NSIGHT,
    format: OutputFormat = typer.Option(
        None,
        "--format",
        "-F",
        metavar="FORMAT",
        help=f"{'|'.join(f.value for f in OutputFormat)} (default: from the -o suffix, else table).",
        show_default=False,
    ),
    output: str = typer.Option(
        None, "--output", "-o", metavar="PATH", help="Write here (atomically) instead of stdout."
    ),
    plot: str = typer.Option(
        None, "--plot", metavar="PATH", help="Also draw the roofline to this .svg, .png or .pdf file."
    ),
    number_locale: Literal["auto", "C", "en", "de"] = typer.Option(
        "auto", "--number-locale", metavar="auto|C|en|de", help="Number style of CSV input."
    ),
    expect: str = typer.Option(
        None,
        "--expect",
        metavar="FILE",
        help="Expectations TOML: kernel regex → expected bound/tier (predict vs measure).",
    ),
    fail_on_mismatch: bool = typer.Option(
        False, "--fail-on-mismatch", help="Exit 1 when a kernel contradicts its expectation."
    ),
    top: Top = 30,
    sort: SortBy = typer.Option(
        SortBy.TIME,
        "--sort",
        metavar="time|headroom",
        help="Rows by total time, or by the time they could save at their roof.",
    ),
    launches: bool = typer.Option(
        False, "--launches", help="One row per launch (default: repeated kernels folded into one row)."
    ),
    group_by: GroupBy = typer.Option(
        GroupBy.KERNEL,
        "--group-by",
        metavar="kernel|nvtx|none",
        help="Fold launches of one kernel name, launch shape and device "
        "(nvtx: of one NVTX range and device; none: never).",
    ),
    width_in: WidthIn = None,
    height_in: HeightIn = None,
    dpi: Dpi = None,
    caption: PlotCaption = Caption.SHORT,
    summary: bool = typer.Option(
        False, "--summary", help="Append the Markdown report to $GITHUB_STEP_SUMMARY."
    ),
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Give every kernel its FLOPs, bytes per tier, intensity, roofs, verdict and headroom."""
    if not (paths := [*(files or []), *([pipeline.example_path()] if example else [])]):
        raise UsageError("no input files", hint="ncu-roof analyze report.ncu-rep  (or --example)")
    if fail_on_mismatch and not expect:
        raise UsageError(
            "--fail-on-mismatch needs --expect FILE",
            hint="ncu-roof analyze R --expect e.toml --fail-on-mismatch",
        )
    style = None if number_locale == "auto" else NumberStyle(number_locale)
    request = pipeline.Request(gpu, roofs, style, traffic, skip_bad_rows=skip_bad_rows)
    picture = picture_options(width_in, height_in, dpi, caption, None)
    rendering = replace(picture, top=top, launches=launches, group_by=group_by, sort=sort)
    emit(paths, named_alike(AnalyzeOptions, locals(), rendering=rendering, request=request))
