"""What ncu's merged output says: progress lines, tool lines, and the outcome of one run. Pure
parsing; the CLI shows the progress (`ncu_roof.cli.progress`), through `ProgressSink`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

_PROGRESS = re.compile(
    r'^==PROF== Profiling "(?P<name>.*)"(?: - (?P<id>\d+))?: (?P<bar>[0-9%.]*)'
    r"(?:\s*-\s*(?P<passes>\d+) pass(?:es)?)?\s*$"
)
_APP_ERROR = re.compile(r"The application returned an error code \((?P<code>-?\d+)\)")
TOOL_PREFIXES = ("==PROF==", "==WARNING==", "==ERROR==")  # the lines ncu writes, not the program
NO_KERNELS = re.compile(r"No kernels were profiled")


@dataclass(frozen=True)
class KernelProgress:
    """One `==PROF== Profiling` line; `passes` is None while the kernel is still being replayed."""

    name: str
    result_id: int | None
    percent: int
    passes: int | None

    @property
    def done(self) -> bool:
        """Whether the line is finished (`- 37 passes`), not still growing."""
        return self.passes is not None


def parse_progress(line: str) -> KernelProgress | None:
    """Parse a (possibly still growing) progress line, old (`"name": 0%…`) or new (`- 3: 0%…`)."""
    match = _PROGRESS.match(line.rstrip("\r\n"))
    if match is None:
        return None
    percents = re.findall(r"(\d+)%", match["bar"])
    passes = match["passes"]
    return KernelProgress(
        name=match["name"],
        result_id=int(match["id"]) if match["id"] is not None else None,
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

    @property
    def profiled(self) -> bool:
        """A report worth keeping: written, and ncu did not say that nothing was profiled."""
        return self.report is not None and not self.no_kernels

    @property
    def text(self) -> str:
        """The tool lines as one text, for the known-failure patterns."""
        return "\n".join(self.tool_lines)

    def last_error_line(self) -> str | None:
        """ncu's last `==ERROR==` line, without the prefix."""
        errors = [
            line.removeprefix("==ERROR==").strip() for line in self.tool_lines if line.startswith("==ERROR==")
        ]
        return errors[-1] if errors else None
