"""What ncu's merged output says: progress lines, tool lines, the outcome of one run, and why a
profile failed: ONE table of ncu's known failures, each with its message and its fix
(data/known_failures.toml), looked up first by `diagnose` (a run that left no usable report) and
`damaged_report_error` (a report that does not load). Pure; the CLI shows the progress
(`ncu_roof.cli.profile`), through `ProgressSink`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ncu_roof.base.ncu import PROFILING
from ncu_roof.base.tomlfile import package_table
from ncu_roof.errors import ProfileError
from ncu_roof.profile.argv import ProfileOptions, filter_args

# ncu 2025 writes the launch's place among those it will profile: `- 0 (1/10): 0%…`
_PROGRESS = re.compile(
    PROFILING + r"(?: \(\d+/\d+\))?: (?P<bar>[0-9%.]*)(?:\s*-\s*(?P<passes>\d+) pass(?:es)?)?\s*$"
)
_APP_ERROR = re.compile(r"The application returned an error code \((?P<code>-?\d+)\)")
TOOL_PREFIXES = ("==PROF==", "==WARNING==", "==ERROR==")  # the lines ncu writes, not the program
NO_KERNELS = re.compile(r"No kernels were profiled")


@dataclass(frozen=True)
class KernelProgress:
    """One `==PROF== Profiling` line; `passes` is None while the kernel is still being replayed."""

    name: str
    percent: int
    passes: int | None

    @property
    def done(self) -> bool:
        """Whether the line is finished (`- 37 passes`), not still growing."""
        return self.passes is not None


def parse_progress(line: str) -> KernelProgress | None:
    """Parse a (possibly still growing) progress line, old (`"name": 0%…`), new (`- 3: 0%…`) or
    ncu 2025's (`- 3 (4/10): 0%…`)."""
    match = _PROGRESS.match(line.rstrip("\r\n"))
    if match is None:
        return None
    percents = re.findall(r"(\d+)%", match["bar"])
    passes = match["passes"]
    return KernelProgress(
        name=match["name"],
        percent=int(percents[-1]) if percents else 0,
        passes=int(passes) if passes is not None else None,
    )


class ProgressSink(Protocol):
    """Where the runner reports progress and passes the program's output on."""

    def kernel(self, progress: KernelProgress) -> None:
        """A progress line: growing (`passes` None) or finished."""

    def passthrough(self, text: str) -> None:
        """Output of the program (or an ncu warning) to show as it came."""

    def close(self) -> None:
        """The run is over."""


@dataclass(frozen=True)
class RunOutcome:
    """What one ncu run left: its exit code, its tool lines, progress, and the report if any."""

    returncode: int
    tool_lines: tuple[str, ...]
    kernels: tuple[KernelProgress, ...]
    report: Path | None
    elapsed_s: float = 0.0

    @property
    def app_exit_code(self) -> int | None:
        """The profiled program's own exit code, when ncu says it returned an error."""
        codes = [m["code"] for line in self.tool_lines for m in [_APP_ERROR.search(line)] if m]
        return int(codes[-1]) if codes else None

    @property
    def no_kernels(self) -> bool:
        return any(NO_KERNELS.search(line) for line in self.tool_lines)

    def last_error_line(self) -> str | None:
        """ncu's last `==ERROR==` line, without the prefix."""
        errors = [
            line.removeprefix("==ERROR==").strip() for line in self.tool_lines if line.startswith("==ERROR==")
        ]
        return errors[-1] if errors else None


VERBOSE_HINT = "rerun with --ncu-args=--verbose for details, or profile fewer kernels (-k, -c)"
_TABLE = package_table("known_failures")
_ANYWHERE = _TABLE["analyze_anywhere"]
# each (a pattern in ncu's output, what it means for the user, what to do about it)
KNOWN_FAILURES = tuple(
    (re.compile(f["pattern"]), f["message"], f["hint"].replace("{analyze_anywhere}", _ANYWHERE))
    for f in _TABLE["failure"]
)

# ncu warnings the no-kernels diagnosis speaks for: not passed through to the user as well
SPOKEN_FOR = re.compile(NO_KERNELS.pattern + r"|launched by child processes requires")


def known_failure(outcome: RunOutcome) -> ProfileError | None:
    """The error of the first known failure in ncu's output, if any."""
    text = "\n".join(outcome.tool_lines)
    return next((ProfileError(m, hint=h) for pattern, m, h in KNOWN_FAILURES if pattern.search(text)), None)


def diagnose(outcome: RunOutcome, options: ProfileOptions) -> Path:
    """The report of a run that produced a usable one; else the error of why it did not, raised."""
    if outcome.report is not None and not outcome.no_kernels:  # a report worth keeping
        return outcome.report
    if (known := known_failure(outcome)) is not None:
        raise known
    if outcome.no_kernels:
        app = outcome.app_exit_code
        exited = f" (the program exited with code {app})" if app is not None else ""
        used = " ".join(filter_args(options)[2:]) or "none"  # the filters, and children's when it applies
        hint = f"check the filters (used: {used}) and that the program launches CUDA kernels"
        if options.target_processes != "all":
            hint += "; kernels of child processes need --target-processes all"
        raise ProfileError(f"no kernels were profiled{exited}", hint=hint)
    last = outcome.last_error_line() or "no report was written"
    raise ProfileError(f"ncu failed (exit code {outcome.returncode}): {last}", hint=VERBOSE_HINT)


def damaged_report_error(outcome: RunOutcome, reason: str, kept: str) -> ProfileError:
    """ncu wrote a report that does not load: say why, quoting ncu's last error if it failed.

    `kept` says what became of the user's target (`runs/x.ncu-rep was left as it was`).
    """
    if (known := known_failure(outcome)) is not None:
        return known
    if outcome.returncode == 0:
        return ProfileError(
            f"ncu exited normally but its report does not load: {reason}",
            hint=f"{kept}; check the free disk space, then {VERBOSE_HINT}",
        )
    last = outcome.last_error_line()
    if last is None:
        return ProfileError(
            f"ncu failed (exit code {outcome.returncode}) and its report does not load: {reason}",
            hint=f"{kept}; {VERBOSE_HINT}",
        )
    return ProfileError(
        f"ncu failed (exit code {outcome.returncode}): {last}",
        hint=f"{kept}; its new report does not load ({reason}); {VERBOSE_HINT}",
    )
