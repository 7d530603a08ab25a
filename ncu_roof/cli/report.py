"""`ncu-roof plot FILE…` and `ncu-roof diff BASE HEAD`: read, analyze, render, write, gate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import typer

from ncu_roof import pipeline
from ncu_roof.base.vocabulary import MatchBy, TrafficDefinition
from ncu_roof.cli import ReadableHelp, app
from ncu_roof.cli.analyze import AnalyzeOptions, check_options, checked, diag, picture_options, write_outputs
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
from ncu_roof.render.console import screen
from ncu_roof.render.formats import Caption, OutputFormat, RenderOptions, format_of, image_format
from ncu_roof.render.output import Document, check_writable

if TYPE_CHECKING:  # the analysis stack (pandas, matplotlib) loads only when a command runs
    from ncu_roof.analysis.core import Analysis
    from ncu_roof.compare.comparison import Diff
    from ncu_roof.render.plot_panel import Arrow

ELSEWHERE = "the notes of `ncu-roof analyze`"  # a diff and a plot show none (their analyses make few)


def parse_pct(text: str, option: str) -> float:
    """`5`, `5%` or `2.5 %` → 5.0 / 2.5; anything else is a usage error. A bare number between 0
    and 1 (`0.05`) reads like a fraction: refused, naming both spellings (`5%`, `0.05%`)."""
    stripped = text.strip()
    try:
        value = float(stripped.removesuffix("%").strip())
    except ValueError:
        raise UsageError(f"{option} {text!r} is not a percentage", hint=f"e.g. {option} 5%") from None
    if not value >= 0 or value == float("inf"):
        raise UsageError(
            f"{option} {text!r} must be a finite, non-negative percentage", hint=f"e.g. {option} 5%"
        )
    if 0 < value < 1 and not stripped.endswith("%"):
        raise UsageError(
            f"{option} {text} looks like a fraction, but it is a percentage",
            hint=f"for {100 * value:g} percent write {option} {100 * value:g}%; "
            f"for {value:g} percent write {option} {value:g}%",
        )
    return value


def diff_arrows(result: Diff, base: Analysis, head: Analysis) -> list[Arrow]:
    """Before → after pairs of the matched kernels, for the roofline of the head (by row: in a file
    of several ncu runs the IDs restart per run)."""
    rows = result.pairs.drop_nulls(["base_row", "head_row"]).select("base_row", "head_row").iter_rows()
    return [(base.kernels[b], head.kernels[h]) for b, h in rows]


@app.command("plot", cls=ReadableHelp)
def plot_command(
    files: list[str] = typer.Argument(
        None, metavar="FILE...", help="ncu outputs: .ncu-rep, raw-page or details CSV.", show_default=False
    ),
    output: str = typer.Option(
        ..., "--output", "-o", metavar="PATH", help="The .svg, .png or .pdf file to write."
    ),
    example: bool = typer.Option(False, "--example", help="Plot the example report shipped with ncu-roof."),
    gpu: GpuKey = None,
    roofs: RoofsFile = None,
    device: int = typer.Option(
        None, "--device", metavar="N", help="Only this device (default: one panel per device)."
    ),
    width_in: WidthIn = None,
    height_in: HeightIn = None,
    dpi: Dpi = None,
    caption: PlotCaption = Caption.SHORT,
    traffic: Traffic = TrafficDefinition.NSIGHT,
    kind: str = typer.Option(
        "roofline", "--kind", metavar="roofline|instruction", help="FLOP or warp-instruction roofline."
    ),
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Draw the hierarchical roofline, one panel per device, as SVG, PNG or PDF (or, with
    --kind instruction, the instruction roofline)."""
    from ncu_roof.render.plot import render_plot

    if kind not in ("roofline", "instruction"):
        raise UsageError(f"unknown plot kind {kind!r}", hint="--kind roofline or --kind instruction")
    if not (files := [*(files or []), *([pipeline.example_path()] if example else [])]):
        raise UsageError(
            "no input files", hint="ncu-roof plot report.ncu-rep -o roofline.svg  (or --example)"
        )
    fmt = image_format(output, "-o")
    picture = picture_options(width_in, height_in, dpi, caption, device)
    check_writable(output)
    request = pipeline.Request(gpu, roofs, traffic=traffic, skip_bad_rows=skip_bad_rows, notes=False)
    analysis = checked(pipeline.run(files, request, log=diag), ELSEWHERE)
    image = render_plot(analysis, kind=kind, fmt=fmt.value, options=picture)
    write_outputs([(image, output)], analysis.inputs, None)


@app.command("diff", cls=ReadableHelp)
def diff_command(
    base: str = typer.Argument(..., metavar="BASE", help="The baseline run (report or CSV)."),
    head: str = typer.Argument(..., metavar="HEAD", help="The run to compare (report or CSV)."),
    format: Literal["table", "markdown", "json"] = typer.Option(
        None,
        "--format",
        "-F",
        metavar="table|markdown|json",
        help="Output format (default: from the -o suffix, else table).",
        show_default=False,
    ),
    output: str = typer.Option(None, "--output", "-o", metavar="PATH", help="Write here instead of stdout."),
    threshold: str = typer.Option(
        None, "--threshold", metavar="PCT", help="Flag changes beyond this (default 5%).", show_default=False
    ),
    fail_on_regression: str = typer.Option(
        None,
        "--fail-on-regression",
        metavar="PCT",
        help="Exit 1 when a kernel or the total is slower by this, e.g. 5%; the threshold too "
        "(docs/ci.md: the rule).",
    ),
    match: MatchBy = typer.Option(
        MatchBy.NAME_SHAPE,
        "--match",
        metavar="name+shape|name|order",
        help="Pair kernels by name and launch shape, by name only, or by launch order (renamed kernels).",
    ),
    allow_mismatch: bool = typer.Option(
        False, "--allow-mismatch", help="Compare runs from different GPUs or clocks anyway."
    ),
    gpu: GpuKey = None,
    roofs: RoofsFile = None,
    traffic: Traffic = TrafficDefinition.NSIGHT,
    plot: str = typer.Option(
        None, "--plot", metavar="PATH", help="Draw before → after arrows to this .svg, .png or .pdf."
    ),
    summary: bool = typer.Option(
        False, "--summary", help="Append the Markdown diff to $GITHUB_STEP_SUMMARY."
    ),
    skip_bad_rows: SkipBadRows = False,
    top: Top = 30,
) -> None:
    """Compare two runs kernel by kernel: time, FLOP/s, bytes, intensity, verdict."""
    # all checked and rendered before the first output is written, as `emit` does; the gate last
    fmt = format_of("diff", format, output, (OutputFormat.TABLE, OutputFormat.MARKDOWN, OutputFormat.JSON))
    gate_pct = None if fail_on_regression is None else parse_pct(fail_on_regression, "--fail-on-regression")
    default = 5.0 if gate_pct is None else gate_pct
    threshold_pct = default if threshold is None else parse_pct(threshold, "--threshold")
    if gate_pct is not None and gate_pct != threshold_pct:
        raise UsageError(
            f"--threshold {threshold} and --fail-on-regression {fail_on_regression} differ",
            hint="the diff flags and gates on one percent: pass --fail-on-regression alone",
        )
    _, plot_fmt = check_options(AnalyzeOptions(fmt, output, plot=plot, summary=summary), [base, head])
    from ncu_roof.compare.comparison import diff, gate
    from ncu_roof.render import diffout

    request = pipeline.Request(gpu, roofs, traffic=traffic, skip_bad_rows=skip_bad_rows, notes=False)
    runs = pipeline.run_each([base, head], request, log=diag)
    for run in runs:  # both refused before either says what it lacks
        pipeline.refuse_failed_captures(run)
    before, after = (
        checked(run, ELSEWHERE, f"{side}: ") for run, side in zip(runs, ("base", "head"), strict=True)
    )
    result = diff(before, after, threshold_pct=threshold_pct, allow_mismatch=allow_mismatch, match=match)
    if fmt is OutputFormat.JSON:
        document: Document = diffout.diff_json_pieces(result)
    elif fmt is OutputFormat.MARKDOWN:
        document = diffout.render_diff_markdown(result)
    else:
        shown = screen(output)
        document = diffout.render_diff_table(result, width=shown.width, color=shown.color, top=top)
    outputs: list[tuple[Document, str | None]] = [(document, output)]
    if plot_fmt is not None:
        from ncu_roof.render.plot import render_plot  # matplotlib: only for a plot

        arrows = RenderOptions(arrows=tuple(diff_arrows(result, before, after)))
        outputs.append((render_plot(after, fmt=plot_fmt.value, options=arrows), plot))
    write_outputs(
        outputs, (*before.inputs, *after.inputs), diffout.render_diff_markdown(result) if summary else None
    )
    if gate_pct is not None:
        gate(result)
