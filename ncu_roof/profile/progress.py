"""What `profile` asks ncu (`ProfileOptions` → an argument list, no shell; the version checks, the
report's names) and what ncu's merged output says: progress and tool lines, one run's outcome, and
why a profile failed (ONE table of ncu's known failures with message and fix, data/known_failures.toml,
looked up first by `diagnose` and `damaged_report_error`). Pure; the CLI shows the progress."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ncu_roof.base.metrics import COLLECT
from ncu_roof.base.ncu import INSTALL_HINT, PROFILING, NcuTool, version_tuple
from ncu_roof.base.tomlfile import package_table
from ncu_roof.errors import MissingToolError, ProfileError

ROOFLINE_SECTIONS = tuple(
    f"SpeedOfLight_Hierarchical{kind}RooflineChart" for kind in ("Double", "Single", "Half", "Tensor")
)
REPORT_SUFFIX = ".ncu-rep"
MIN_VERSION = (2020, 1)  # `ncu` got its name and the roofline metrics/sections in 2020.1
REGEX_FILTER_VERSION = (2021, 1)  # `-k regex:…` (before: --kernel-regex)
CONFIG_FILE_VERSION = (2023, 1)  # `--config-file` (2022.3 rejects it as an unknown option)
# the options passed on to ncu when given, each as `--its-name VALUE` (`--kernel-name regex:gemm`)
FILTERS = ("kernel_name", "launch_count", "launch_skip", "replay_mode", "clock_control", "cache_control")


@dataclass(frozen=True)
class ProfileOptions:
    """What the user asked for; `program` is the command line of the profiled application, `force`
    allows replacing an existing report (and `--csv` file), as ncu's own `-f` does."""

    program: Sequence[str]
    output: str = "report"
    fast: bool = False
    kernel_name: str | None = None
    launch_count: int | None = None
    launch_skip: int | None = None
    nvtx: bool = False
    nvtx_include: Sequence[str] = ()
    target_processes: str = "all"
    replay_mode: str | None = None
    clock_control: str | None = None
    cache_control: str | None = None
    ncu_args: tuple[str, ...] = ()
    csv: bool = False
    timeout_s: float | None = None
    kill_after_s: float = 5.0
    force: bool = False


def check_version(version: str | None, options: ProfileOptions) -> None:
    """Refuse an ncu that cannot do what was asked, saying why (unknown versions are trusted)."""
    found = version_tuple(version)
    if found < MIN_VERSION:
        raise MissingToolError(
            f"Nsight Compute {version} is too old: ncu-roof needs 2020.1 or newer "
            "(the `ncu` CLI and the roofline metrics arrived in 2020.1)",
            hint=INSTALL_HINT,
        )
    if options.kernel_name and options.kernel_name.startswith("regex:") and found < REGEX_FILTER_VERSION:
        raise MissingToolError(
            f"Nsight Compute {version} does not understand `-k regex:…` (added in 2021.1)",
            hint="pass a plain kernel name, or install a newer Nsight Compute",
        )


def filter_args(options: ProfileOptions) -> list[str]:
    args: list[str] = ["--target-processes", options.target_processes]
    for name in FILTERS:
        if (value := getattr(options, name)) is not None:
            args += [f"--{name.replace('_', '-')}", str(value)]
    if options.nvtx or options.nvtx_include:
        args.append("--nvtx")
    return args + [arg for include in options.nvtx_include for arg in ("--nvtx-include", include)]


def build_argv(tool: NcuTool, options: ProfileOptions, program: Path, export_base: Path) -> list[str]:
    """The full ncu argv (no shell) for the resolved absolute `program`; ncu's own `-f` always, as
    it writes into a private folder, never over the user's report."""
    argv = [tool.path]
    if version_tuple(tool.version) >= CONFIG_FILE_VERSION:
        argv += ["--config-file", "off"]
    if options.fast:  # only the recipe's minimal metric list (`metrics.COLLECT`, every part)
        argv += ["--metrics", ",".join(sorted({name for names in COLLECT.values() for name in names}))]
    else:  # `--set full` plus the hierarchical roofline sections (not in `full`)
        argv += ["--set", "full", *(arg for section in ROOFLINE_SECTIONS for arg in ("--section", section))]
    argv += [*filter_args(options), *options.ncu_args, "-f", "-o", str(export_base)]
    return [*argv, str(program), *options.program[1:]]


def report_path(output: str) -> Path:
    """`runs/pr123` → `runs/pr123.ncu-rep` (ncu's own convention for `-o`)."""
    return Path(output if output.endswith(REPORT_SUFFIX) else output + REPORT_SUFFIX)


def csv_path(report: Path) -> Path:
    """`runs/pr123.ncu-rep` → `runs/pr123.csv`, where `--csv` writes the raw page."""
    return Path(str(report).removesuffix(REPORT_SUFFIX) + ".csv")


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
    """Parse a (possibly still growing) progress line, old (`"name": 0%…`), new (`- 3: 0%…`) or ncu
    2025's, with the launch's place among those it will profile (`- 3 (4/10): 0%…`)."""
    if (match := _PROGRESS.match(line.rstrip("\r\n"))) is None:
        return None
    percents = re.findall(r"(\d+)%", match["bar"])
    return KernelProgress(
        name=match["name"],
        percent=int(percents[-1]) if percents else 0,
        passes=int(match["passes"]) if match["passes"] is not None else None,
    )


class ProgressSink(Protocol):
    """Where the runner reports each progress line (`kernel`: growing, `passes` None, or finished),
    passes the program's output (or an ncu warning) on to show as it came, and says the run is over."""

    def kernel(self, progress: KernelProgress) -> None: ...
    def passthrough(self, text: str) -> None: ...
    def close(self) -> None: ...


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

    def last_error_line(self) -> str | None:
        errors = (line for line in reversed(self.tool_lines) if line.startswith("==ERROR=="))
        return next((line.removeprefix("==ERROR==").strip() for line in errors), None)


VERBOSE_HINT = "rerun with --ncu-args=--verbose for details, or profile fewer kernels (-k, -c)"
_TABLE = package_table("known_failures")
# each (a pattern in ncu's output, what it means for the user, what to do about it)
KNOWN_FAILURES = tuple(
    (re.compile(f["pattern"]), f["message"], f["hint"].format(analyze_anywhere=_TABLE["analyze_anywhere"]))
    for f in _TABLE["failure"]
)

# ncu warnings the no-kernels diagnosis speaks for: not passed through to the user as well
SPOKEN_FOR = re.compile(NO_KERNELS.pattern + r"|launched by child processes requires")


def known_failure(outcome: RunOutcome) -> ProfileError | None:
    text = "\n".join(outcome.tool_lines)
    return next((ProfileError(m, hint=h) for pattern, m, h in KNOWN_FAILURES if pattern.search(text)), None)


def diagnose(outcome: RunOutcome, options: ProfileOptions) -> Path:
    """The report of a run that produced a usable one; else the error of why it did not, raised."""
    no_kernels = any(NO_KERNELS.search(line) for line in outcome.tool_lines)
    if outcome.report is not None and not no_kernels:  # a report worth keeping
        return outcome.report
    if (known := known_failure(outcome)) is not None:
        raise known
    if no_kernels:
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
    """ncu wrote a report that does not load: say why, quoting ncu's last error if it failed, and
    what became of the user's target (`kept`: `runs/x.ncu-rep was left as it was`)."""
    if (known := known_failure(outcome)) is not None:
        return known
    if outcome.returncode == 0:
        return ProfileError(
            f"ncu exited normally but its report does not load: {reason}",
            hint=f"{kept}; check the free disk space, then {VERBOSE_HINT}",
        )
    if (last := outcome.last_error_line()) is None:
        return ProfileError(
            f"ncu failed (exit code {outcome.returncode}) and its report does not load: {reason}",
            hint=f"{kept}; {VERBOSE_HINT}",
        )
    return ProfileError(
        f"ncu failed (exit code {outcome.returncode}): {last}",
        hint=f"{kept}; its new report does not load ({reason}); {VERBOSE_HINT}",
    )
