"""`profile`'s progress display on stderr: a live rich line on a terminal, plain lines otherwise."""

from __future__ import annotations

import os
import sys
from typing import IO

from ncu_roof.base.text import one_line
from ncu_roof.profile.progress import KernelProgress, ProgressSink


def describe(progress: KernelProgress) -> str:
    """`name (37 passes)`, on one line whatever the kernel name holds."""
    plural = "pass" if progress.passes == 1 else "passes"
    return f"{one_line(progress.name)} ({progress.passes} {plural})"


class PlainProgress:
    """One line per profiled kernel, for logs and pipes (stderr is not a TTY, or NO_COLOR)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.count = 0

    def kernel(self, progress: KernelProgress) -> None:
        """A finished kernel gets its line; a growing one is not shown."""
        if not progress.done:
            return
        self.count += 1
        self.stream.write(f"ncu-roof: kernel {self.count} profiled: {describe(progress)}\n")
        self.stream.flush()

    def passthrough(self, text: str) -> None:
        """The program's own output (and ncu's warnings), as they came."""
        self.stream.write(text)
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


class RichProgress:
    """A live status line on stderr: the kernel being replayed, its percentage, kernels done."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True, highlight=False)
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
        from rich.text import Text

        name = one_line(progress.name)
        if progress.done:
            self.count += 1
            self.console.print(Text(f"✓ {describe(progress)}"))
            self.progress.update(self.task, description=f"{self.count} kernels profiled")
        else:
            self.progress.update(
                self.task, description=f"{self.count} done · profiling {name} {progress.percent}%"
            )

    def passthrough(self, text: str) -> None:
        """The program's own output, printed above the status line (never as markup)."""
        from rich.text import Text

        self.console.print(Text(text.rstrip("\n")), soft_wrap=True)

    def close(self) -> None:
        self.progress.stop()  # the status line goes


def progress_sink(stream: IO[str] | None = None) -> ProgressSink:
    """Rich on an interactive stderr, plain lines otherwise (and always under NO_COLOR)."""
    out = stream if stream is not None else sys.stderr
    if out.isatty() and not os.environ.get("NO_COLOR"):
        return RichProgress()
    return PlainProgress(out)
