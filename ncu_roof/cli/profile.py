"""`ncu-roof profile [options] -- ./app args…`: run ncu for the user, with its progress on stderr
(a live rich line on a terminal, plain lines otherwise), then show the analysis."""

from __future__ import annotations

import math
import os
import shlex
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ncu_roof.base.ncu import find_ncu
from ncu_roof.base.text import one_line
from ncu_roof.cli import Verbosity, app, interrupted, named_alike, verbosity
from ncu_roof.cli.analyze import AnalyzeOptions, check_options, diag, emit
from ncu_roof.cli.options import GpuKey, RoofsFile
from ncu_roof.errors import UsageError
from ncu_roof.pipeline import Request, roof_choice
from ncu_roof.render.formats import OutputFormat
from ncu_roof.render.output import same_target, write_output

if TYPE_CHECKING:  # the profiler and the metric recipe load only when `profile` runs
    from ncu_roof.profile.progress import KernelProgress, ProgressSink


@app.command("profile", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
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
    nvtx_include: list[str] = typer.Option(
        [], "--nvtx-include", help="Only launches inside this NVTX range."
    ),
    target_processes: str = typer.Option("all", "--target-processes", help="all | application-only."),
    replay_mode: str | None = typer.Option(None, "--replay-mode", help="kernel | application | range."),
    clock_control: str | None = typer.Option(None, "--clock-control", help="base (ncu default) | none."),
    cache_control: str | None = typer.Option(
        None, "--cache-control", help="all (flush, ncu default) | none."
    ),
    ncu_args: str | None = typer.Option(None, "--ncu-args", help="More ncu arguments."),
    csv: bool = typer.Option(False, "--csv", help="Also write <output>.csv (raw page)."),
    timeout_s: float | None = typer.Option(None, "--timeout", help="Seconds before kill."),
    kill_after_s: float = typer.Option(
        5.0, "--kill-after", min=0.0, help="Seconds to exit after SIGTERM (Ctrl-C, --timeout), then SIGKILL."
    ),
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
    from ncu_roof.profile.progress import ProfileOptions, check_version, csv_path, report_path
    from ncu_roof.profile.run import run_profile

    for option, seconds in (("--timeout", timeout_s), ("--kill-after", kill_after_s)):
        if seconds is not None and not 0 <= seconds < math.inf:  # inf: a Ctrl-C that never kills
            raise UsageError(f"{option} {seconds}: not a number of seconds", hint=f"e.g. {option} 30")
    # the analysis options are checked before ncu runs: a profile is too slow to throw away
    analysis = AnalyzeOptions(fmt, analysis_output, Request(gpu, roofs))
    roof_choice(analysis.request)
    check_options(analysis, [], "--analysis-output")
    ours = {"report": report_path(output), **({"raw page": csv_path(report_path(output))} if csv else {})}
    for what, path in ours.items():
        if analysis_output not in (None, "-") and same_target(analysis_output, path):
            raise UsageError(
                f"--analysis-output {analysis_output} is where profile writes its {what}",
                hint="name another file for the analysis",
            )
    try:  # `--ncu-args` as a shell would split it: `--metrics "a,b" --print-summary per-kernel`
        more = tuple(shlex.split(ncu_args or ""))
    except ValueError as err:  # an unclosed quote
        raise UsageError(
            f"--ncu-args {ncu_args!r}: {err}",
            hint="close the quotes, e.g. --ncu-args '--nvtx-include \"a b\"'",
        ) from None
    options = named_alike(ProfileOptions, locals(), ncu_args=more)
    published: Path | None = None
    try:
        tool = find_ncu(ncu)
        diag(f"using {tool.path} (Nsight Compute {tool.version or 'version unknown'})")
        check_version(tool.version, options)
        log = partial(diag, command=True) if verbosity[0] is Verbosity.VERBOSE else None
        result = run_profile(tool, options, progress_sink(), log=log)
        published = result.report
        kernels = "1 kernel" if result.kernels == 1 else f"{result.kernels} kernels"
        diag(f"wrote {published}: {kernels} profiled in {result.outcome.elapsed_s:.1f} s")
        if result.outcome.app_exit_code is not None:
            diag(
                f"the program exited with code {result.outcome.app_exit_code}; "
                "analyzing the kernels profiled before it ended"
            )
        if result.csv is not None:
            write_output(result.csv, str(csv_path(published)))
            diag(f"wrote {csv_path(published)}")
        emit([result.table or str(published)], analysis)
    except KeyboardInterrupt:  # here, not in `main()`: the hint names the report, if written
        if published is None:
            interrupted("ncu and the program were stopped; no report was written (an earlier one is kept)")
        interrupted(f"{published} was written before the interrupt: `ncu-roof analyze {published}`")


def describe(progress: KernelProgress) -> str:
    """`name (37 passes)`, on one line whatever the kernel name holds."""
    return f"{one_line(progress.name)} ({progress.passes} {'pass' if progress.passes == 1 else 'passes'})"


class PlainProgress:
    """One line per profiled kernel, for logs and pipes (stderr is not a TTY, or NO_COLOR)."""

    def __init__(self) -> None:
        self.count = 0

    def kernel(self, progress: KernelProgress) -> None:
        """A finished kernel gets its line; a growing one is not shown."""
        if not progress.done:
            return
        self.count += 1
        print(f"ncu-roof: kernel {self.count} profiled: {describe(progress)}", file=sys.stderr, flush=True)

    def passthrough(self, text: str) -> None:
        """The program's own output (and ncu's warnings), as they came."""
        print(text, end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        sys.stderr.flush()


class RichProgress:
    """A live status line on stderr: the kernel being replayed, its percentage, kernels done."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True, highlight=False, markup=False, emoji=False)  # text as it came
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.task = self.progress.add_task("starting ncu…", total=None)
        self.count = 0
        self.progress.start()

    def kernel(self, progress: KernelProgress) -> None:
        """A finished kernel prints a ✓ line; a growing one updates the status line."""
        if progress.done:
            self.count += 1
            self.console.print(f"✓ {describe(progress)}")
            self.progress.update(self.task, description=f"{self.count} kernels profiled")
        else:
            self.progress.update(
                self.task,
                description=f"{self.count} done · profiling {one_line(progress.name)} {progress.percent}%",
            )

    def passthrough(self, text: str) -> None:
        """The program's own output, printed above the status line (never as markup)."""
        self.console.print(text.rstrip("\n"), soft_wrap=True)

    def close(self) -> None:
        self.progress.stop()  # the status line goes


def progress_sink() -> ProgressSink:
    """Rich on an interactive stderr, plain lines otherwise (and always under NO_COLOR)."""
    return RichProgress() if sys.stderr.isatty() and not os.environ.get("NO_COLOR") else PlainProgress()
