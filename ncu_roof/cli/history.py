"""`ncu-roof history add|show|check|rebuild`: a team's kernel performance across commits and GPUs
(docs/history.md). Options parsed here; the work is `ncu_roof.history`'s, the text `render`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import typer

from ncu_roof.cli import ReadableHelp, app, named_alike
from ncu_roof.cli.analyze import refuse_binary_to_terminal
from ncu_roof.cli.options import GpuKey
from ncu_roof.errors import GateError, UsageError
from ncu_roof.history import BASELINE, CONFIDENCE, THRESHOLD_PCT
from ncu_roof.render.console import screen
from ncu_roof.render.formats import FORMATS, OutputFormat, format_of
from ncu_roof.render.output import check_writable, write_output

if TYPE_CHECKING:
    from ncu_roof.history.check import CheckResult

history_app = typer.Typer(
    help="A Parquet history of runs across commits and GPUs, its trends, and a noise-aware gate.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(history_app, name="history")


SHOWS = (
    *(OutputFormat.TABLE, OutputFormat.JSON, OutputFormat.CSV, OutputFormat.MARKDOWN),
    *(OutputFormat.HTML, OutputFormat.PNG, OutputFormat.SVG),
)
CHECKS = SHOWS[:4]  # table, json, csv, markdown
Dataset = typer.Argument(..., metavar="DATASET", help="A folder, or a URI pyarrow reaches (s3://…).")


def chosen_format(
    command: str, fmt: str | None, output: str | None, writes: tuple[OutputFormat, ...]
) -> OutputFormat:
    """`--format`, else what the -o suffix says, as every command reads it (`format_of`): a suffix
    of a format this command does not write (`trend.pdf`) is refused, never written as the table;
    binary data never goes to a terminal."""
    chosen = format_of(f"history {command}", fmt, output, writes)
    refuse_binary_to_terminal(chosen, output, "-o trend")
    return chosen


@history_app.command("add", cls=ReadableHelp)
def add_command(
    dataset: str = Dataset,
    inputs: list[str] = typer.Argument(..., metavar="INPUT...", help="ncu outputs of one run of one commit."),
    commit: str = typer.Option(..., "--commit", metavar="SHA", help="The commit these runs measured."),
    time: str = typer.Option(None, "--time", metavar="ISO-8601", help="The commit's time (default: now)."),
    branch: str = typer.Option(None, "--branch", metavar="NAME", help="The branch."),
    label: list[str] = typer.Option([], "--label", metavar="KEY=VALUE", help="Any label (repeatable)."),
    clock_control: str = typer.Option(
        None, "--clock-control", metavar="base|none", help="How ncu held the clocks (its --clock-control)."
    ),
    driver: str = typer.Option(None, "--driver", metavar="VERSION", help="The GPU driver's version."),
    host: str = typer.Option(
        None, "--host", metavar="NAME", help="The host that profiled (default: this one)."
    ),
    gpu: GpuKey = None,
    replace: bool = typer.Option(
        False, "--replace", help="Store the run again as this add says, when it is stored otherwise."
    ),
) -> None:
    """Add one run (every GPU in it) to the dataset; the same run twice changes nothing (stated
    otherwise, e.g. another --time or --gpu, it is refused without --replace)."""
    from ncu_roof.cli.analyze import diag
    from ncu_roof.history.add import add_run
    from ncu_roof.history.record import CLOCK_CONTROLS, Provenance, parse_labels, parse_time

    if clock_control is not None and clock_control not in CLOCK_CONTROLS:
        raise UsageError(f"--clock-control {clock_control!r}", hint="base (locked) or none (free), as ncu's")
    provenance = named_alike(Provenance, locals(), time=parse_time(time), labels=parse_labels(label))
    added = add_run(dataset, inputs, provenance, replace)
    what = f"{added.launches} launches on {', '.join(added.gpus)}"
    if added.new:
        diag(f"{'replaced' if added.replaced else 'added'} run {added.run_id} of {commit}: {what}")
    else:
        diag(f"run {added.run_id} of {commit} is in {dataset} already ({what}): nothing written")


@history_app.command("show", cls=ReadableHelp)
def show_command(
    dataset: str = Dataset,
    kernel: str = typer.Option(None, "--kernel", metavar="REGEX", help="Kernels whose name matches (RE2)."),
    gpu: str = typer.Option(
        None, "--gpu", metavar="KEY", help="One GPU's partition (e.g. nvidia-h100-pcie-cc90-114sm)."
    ),
    last: int = typer.Option(None, "--last", metavar="N", help="Only the last N commits of each GPU."),
    fmt: Literal["table", "json", "csv", "markdown", "html", "png", "svg"] = typer.Option(
        None,
        "--format",
        "-F",
        metavar="FORMAT",
        help="table, json, csv, markdown, html, png or svg (default: from the -o suffix, else table).",
        show_default=False,
    ),
    output: str = typer.Option(None, "--output", "-o", metavar="PATH", help="Write here instead of stdout."),
) -> None:
    """Each kernel group's duration and verdict over commits, in commit-time order."""
    from ncu_roof.history.query import History, points
    from ncu_roof.history.store import open_dataset
    from ncu_roof.render import historyout

    chosen = chosen_format("show", fmt, output, SHOWS)
    check_writable(output)
    table = points(History(open_dataset(dataset)), kernel, gpu, last)
    if FORMATS[chosen].image:
        from ncu_roof.render.historyplot import render_history_plot

        write_output(render_history_plot(table, chosen.value), output)
        return
    text = {
        OutputFormat.JSON: historyout.show_json,
        OutputFormat.CSV: historyout.show_csv,
        OutputFormat.MARKDOWN: historyout.show_markdown,
        OutputFormat.HTML: historyout.show_html,
    }.get(chosen)
    write_output(text(table) if text else historyout.show_table(table, screen(output).width), output)


def render_check(result: CheckResult, fmt: OutputFormat, output: str | None) -> str:
    from ncu_roof.render import historyout

    text = {
        OutputFormat.JSON: historyout.check_json,
        OutputFormat.MARKDOWN: historyout.check_markdown,
        OutputFormat.CSV: historyout.check_csv,
    }.get(fmt)
    return text(result) if text else historyout.check_table(result, screen(output).width)


@history_app.command("check", cls=ReadableHelp)
def check_command(
    dataset: str = Dataset,
    head: str = typer.Option(..., "--head", metavar="SHA", help="The commit to check."),
    baseline: int = typer.Option(
        BASELINE, "--baseline", metavar="N", help="Commits before the head to compare with."
    ),
    threshold: str = typer.Option(
        f"{THRESHOLD_PCT:g}%",
        "--threshold",
        metavar="PCT",
        help="The smallest slowdown the gate must catch (docs/history.md: the rule).",
    ),
    confidence: float = typer.Option(
        CONFIDENCE, "--confidence", metavar="P", help="The interval's confidence level."
    ),
    fmt: Literal["table", "json", "csv", "markdown"] = typer.Option(
        None, "--format", "-F", metavar="table|json|csv|markdown", help="Output format.", show_default=False
    ),
    output: str = typer.Option(None, "--output", "-o", metavar="PATH", help="Write here instead of stdout."),
) -> None:
    """Classify each kernel group's movement at the head: regression, improvement, noise, method
    change, hardware change, new, missing at head. Exit 1 on a regression: a slowdown real at the
    confidence, not confidently under the threshold, estimated at 0.65 of it or more."""
    from ncu_roof.cli.analyze import diag
    from ncu_roof.cli.report import parse_pct
    from ncu_roof.history.check import Kind, check
    from ncu_roof.render.historyout import verdict_line

    chosen = chosen_format("check", fmt, output, CHECKS)
    check_writable(output)
    result = check(dataset, head, baseline, parse_pct(threshold, "--threshold"), confidence)
    write_output(render_check(result, chosen, output), output)
    for empty in (b.gpu for b in result.baselines if not b.commits and result.other_gpus):
        diag(
            f"warning: {empty} has no commit before {head}, so nothing was compared; the dataset's other"
            f" GPU keys: {', '.join(result.other_gpus)} (the same GPU read from another ncu output, or"
            " added by an earlier ncu-roof, is filed under the device name, CC and SM count it recorded)"
        )
    if bad := result.of_kind(Kind.REGRESSION):
        worst = bad[0]
        assert worst.shift is not None
        raise GateError(
            f"{verdict_line(result)} (worst {worst.name} on {worst.gpu} {worst.shift.shift_pct:+.1f}%)",
            hint=f"culprit window: {worst.last_good}..{worst.first_bad}; see the report",
        )


@history_app.command("rebuild", cls=ReadableHelp)
def rebuild_command(dataset: str = Dataset) -> None:
    """Derive every stored run's quantities again from its stored counters (this version's recipe)."""
    from ncu_roof.cli.analyze import diag
    from ncu_roof.history.rebuild import rebuild

    done = rebuild(dataset)
    diag(f"rebuilt {done.runs} runs ({done.launches} launches) in {dataset}")
