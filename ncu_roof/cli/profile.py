"""`ncu-roof profile [options] -- ./app args…`: run ncu for the user, then show the analysis."""

from __future__ import annotations

import shlex
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from ncu_roof.base.ncu import find_ncu
from ncu_roof.base.stop import exit_status, interruption
from ncu_roof.cli import Verbosity, app, fail, named_alike, verbosity
from ncu_roof.cli.analyze import AnalyzeOptions, diag, emit
from ncu_roof.cli.options import GpuKey, RoofsFile
from ncu_roof.errors import UsageError
from ncu_roof.pipeline import roof_choice
from ncu_roof.render.formats import OutputFormat
from ncu_roof.render.output import check_writable, write_output

if TYPE_CHECKING:  # the profiler and the metric recipe load only when `profile` runs
    from ncu_roof.profile.argv import ProfileOptions
    from ncu_roof.profile.run import ProfileResult


def interrupted(report: Path | None) -> NoReturn:
    """Ctrl-C (or SIGTERM, SIGHUP): one `error:` and one `hint:` line, exit 128 + the signal.

    Not left to `main()`: typer turns a KeyboardInterrupt inside a command into `Exit(130)`, which
    `standalone_mode=False` hands back as a return value that `main()` ignores (exit 0, silent).
    A `SystemExit` passes through typer untouched.
    """
    if report is None:
        hint = "ncu and the program were stopped; no report was written (an earlier one is kept)"
    else:
        hint = f"{report} was written before the interrupt: `ncu-roof analyze {report}`"
    fail(interruption(), hint, exit_status())


def summary_lines(result: ProfileResult) -> list[str]:
    """What the run did, for stderr: report, kernel count, time, the program's exit code."""
    kernels = "1 kernel" if result.kernels == 1 else f"{result.kernels} kernels"
    took = f"{kernels} profiled in {result.elapsed_s:.1f} s"
    lines = [f"wrote {result.report}: {took}"]
    if result.app_exit_code is not None:
        lines.append(
            f"the program exited with code {result.app_exit_code}; "
            "analyzing the kernels profiled before it ended"
        )
    return lines


def split_ncu_args(text: str | None) -> tuple[str, ...]:
    """`--ncu-args` as a shell would split it: `--metrics "a,b" --print-summary per-kernel`."""
    try:
        return tuple(shlex.split(text or ""))
    except ValueError as err:  # an unclosed quote
        raise UsageError(
            f"--ncu-args {text!r}: {err}", hint="close the quotes, e.g. --ncu-args '--nvtx-include \"a b\"'"
        ) from None


@app.command(
    "profile",
    context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
)
def profile_command(
    program: list[str] = typer.Argument(..., help="The program and its arguments."),
    output: str = typer.Option("report", "-o", "--output", help="Report name (its folder is created)."),
    force: bool = typer.Option(False, "-f", "--force", help="Replace an existing report."),
    fast: bool = typer.Option(False, "--fast", help="Only the roofline metrics."),
    kernel_name: str | None = typer.Option(
        None, "--kernel-name", "-k", help="Kernel filter, e.g. regex:gemm."
    ),
    launch_count: int | None = typer.Option(None, "--launch-count", "-c", help="Profile at most N launches."),
    launch_skip: int | None = typer.Option(None, "--launch-skip", "-s", help="Skip the first N launches."),
    nvtx: bool = typer.Option(False, "--nvtx", help="Collect NVTX ranges."),
    nvtx_include: list[str] | None = typer.Option(
        None, "--nvtx-include", help="Only launches inside this NVTX range."
    ),
    target_processes: str = typer.Option("all", "--target-processes", help="all | application-only."),
    replay_mode: str | None = typer.Option(None, "--replay-mode", help="kernel | application | range."),
    clock_control: str | None = typer.Option(None, "--clock-control", help="base (ncu default) | none."),
    cache_control: str | None = typer.Option(
        None, "--cache-control", help="all (flush, ncu default) | none."
    ),
    ncu_args: str | None = typer.Option(None, "--ncu-args", help="More ncu arguments."),
    csv: bool = typer.Option(False, "--csv", help="Also write <output>.csv (raw page)."),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds before kill."),
    ncu: str | None = typer.Option(None, "--ncu", help="The ncu executable."),
    fmt: OutputFormat | None = typer.Option(
        None, "--format", "-F", help="Analysis format (default: from the suffix)."
    ),
    analysis_output: str | None = typer.Option(
        None, "--analysis-output", help="Write the analysis to this file."
    ),
    gpu: GpuKey = None,
    roofs: RoofsFile = None,
) -> None:
    """Profile a program with ncu (safely, with progress), keep the report, then analyze it."""
    from ncu_roof.profile.argv import ProfileOptions

    # the analysis options are checked before ncu runs: a profile is too slow to throw away
    roof_choice(gpu, roofs)
    check_writable(analysis_output)
    options = named_alike(
        ProfileOptions,
        locals(),
        program=tuple(program),
        nvtx_include=tuple(nvtx_include or ()),
        ncu_args=split_ncu_args(ncu_args),
        timeout_s=timeout,
    )
    profile_and_analyze(
        options, ncu, AnalyzeOptions(format=fmt, output=analysis_output, gpu=gpu, roofs=roofs)
    )


def profile_and_analyze(options: ProfileOptions, ncu: str | None, analysis: AnalyzeOptions) -> None:
    """Find ncu, profile, write the raw CSV if asked, then analyze the published report."""
    from ncu_roof.cli.progress import progress_sink
    from ncu_roof.profile.argv import check_version, csv_path
    from ncu_roof.profile.run import run_profile

    published: Path | None = None
    try:
        tool = find_ncu(ncu)
        diag(f"using {tool.path} (Nsight Compute {tool.version or 'version unknown'})")
        check_version(tool.version, options)
        verbose = verbosity[0] is Verbosity.VERBOSE
        log = partial(diag, command=True) if verbose else None  # `running: ncu …`, one line
        result = run_profile(tool, options, progress_sink(), log=log)
        published = result.report
        for line in summary_lines(result):
            diag(line)
        if result.csv is not None:
            write_output(result.csv, str(csv_path(result.report)))
            diag(f"wrote {csv_path(result.report)}")
        emit([result.table or str(result.report)], analysis)
    except KeyboardInterrupt:
        interrupted(published)
