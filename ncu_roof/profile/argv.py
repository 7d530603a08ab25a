"""The ncu command line `profile` builds: what the user asked for → an argument list (no shell)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ncu_roof.base.metrics import COLLECT
from ncu_roof.base.ncu import INSTALL_HINT, NcuTool, version_tuple
from ncu_roof.errors import MissingToolError, UsageError

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

    program: tuple[str, ...]
    output: str = "report"
    fast: bool = False
    kernel_name: str | None = None
    launch_count: int | None = None
    launch_skip: int | None = None
    nvtx: bool = False
    nvtx_include: tuple[str, ...] = ()
    target_processes: str = "all"
    replay_mode: str | None = None
    clock_control: str | None = None
    cache_control: str | None = None
    ncu_args: tuple[str, ...] = ()
    csv: bool = False
    timeout_s: float | None = None
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
    """The pass-through filters, in ncu's spelling."""
    args: list[str] = ["--target-processes", options.target_processes]
    for name in FILTERS:
        if (value := getattr(options, name)) is not None:
            args += [f"--{name.replace('_', '-')}", str(value)]
    if options.nvtx or options.nvtx_include:
        args.append("--nvtx")
    for include in options.nvtx_include:
        args += ["--nvtx-include", include]
    return args


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


def resolve_program(name: str) -> Path:
    """The absolute path of the program to profile, checked before ncu is started."""
    if os.sep in name:
        path = Path(name).absolute()
    else:
        found = shutil.which(name)
        if found is None:
            raise UsageError(f"{name}: program not found on PATH", hint="give its path, e.g. ./" + name)
        path = Path(found)
    if not path.exists():
        raise UsageError(f"{name}: program not found", hint="check the path of the program to profile")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise UsageError(
            f"{name}: not an executable file",
            hint=f"`chmod +x {name}`, or run it through its interpreter (`-- python {name}`)",
        )
    return path


def report_path(output: str) -> Path:
    """`runs/pr123` → `runs/pr123.ncu-rep` (ncu's own convention for `-o`)."""
    return Path(output if output.endswith(REPORT_SUFFIX) else output + REPORT_SUFFIX)


def csv_path(report: Path) -> Path:
    """`runs/pr123.ncu-rep` → `runs/pr123.csv`, where `--csv` writes the raw page."""
    return Path(str(report).removesuffix(REPORT_SUFFIX) + ".csv")
