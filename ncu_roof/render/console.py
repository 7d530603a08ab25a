"""Where a command's text goes (`screen`: the one terminal check every command makes;
`stderr_width`: the same for stderr), and the rich console every text sink prints to, built one way
(`rich_text`: colour only when asked; no markup, emoji or highlighting applied to data)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

PIPE_WIDTH = 120  # columns of every command's text to a file or a pipe without COLUMNS
MIN_WIDTH = 60  # the narrowest layout: a smaller COLUMNS lays text out at this width


@dataclass(frozen=True)
class Screen:  # what a command's text is laid out for
    width: int  # columns
    color: bool  # whether it may be coloured


def to_terminal(output: str | None) -> bool:
    """Whether text for `output` goes to a terminal: stdout (None or `-`) that is one (`>&-`: none)."""
    return output in (None, "-") and sys.stdout is not None and sys.stdout.isatty()


def screen(output: str | None) -> Screen:
    """A terminal: its width (COLUMNS when set) and colour unless NO_COLOR is set; a file or a pipe
    (a CI log): COLUMNS when set, else `PIPE_WIDTH`, no colour. Never under `MIN_WIDTH`: below it the
    tables' numbers would not fit, and a line the terminal wraps still shows every digit."""
    if not to_terminal(output):
        return Screen(max(MIN_WIDTH, _columns() or PIPE_WIDTH), color=False)
    columns = shutil.get_terminal_size((PIPE_WIDTH, 40)).columns
    return Screen(max(MIN_WIDTH, columns), color=not os.environ.get("NO_COLOR"))


def stderr_width() -> int | None:
    """The columns of the CLI's messages when stderr is a terminal: COLUMNS when set, else the
    terminal's; never under `MIN_WIDTH`. None for a pipe or a file: a CI log is searched a line at
    a time, so each message stays one line there."""
    if sys.stderr is None or not sys.stderr.isatty():
        return None
    if (columns := _columns()) is None:
        with contextlib.suppress(OSError, ValueError):
            columns = os.get_terminal_size(sys.stderr.fileno()).columns
    return max(MIN_WIDTH, columns or PIPE_WIDTH)


def _columns() -> int | None:
    """COLUMNS when it is a positive whole number (as a shell or a CI job sets it), else None."""
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def sized(table: Table, columns: Iterable[tuple[str, str, int]]) -> None:
    for header, justify, width in columns:
        table.add_column(header, justify=justify, no_wrap=True, overflow="ellipsis", width=width)  # type: ignore[arg-type]


def rich_text(renderable: RenderableType, width: int, *, color: bool = False) -> str:
    """`renderable` as text `width` columns wide, coloured only when `color`, without the spaces rich
    pads or wraps lines with (a CI log shows them as noise)."""
    from rich.console import Console

    buffer = io.StringIO()
    Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="256" if color else None,
        width=width,
        highlight=False,
        emoji=False,
        markup=False,
    ).print(renderable)
    return "\n".join(line.rstrip(" ") for line in buffer.getvalue().split("\n"))
