"""The rich consoles the text sinks print to, built one way: `text_console` for the analysis and
diff tables (colour only when asked; no markup, emoji or highlighting applied to data), and
`plain_text` for a renderable written to a file (no colour at all).
"""

from __future__ import annotations

import io
from typing import IO, TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


def text_console(
    file: IO[str], width: int, *, color: bool, color_system: Literal["standard", "256"] = "256"
) -> Console:
    from rich.console import Console

    return Console(
        file=file,
        force_terminal=color,
        no_color=not color,
        color_system=color_system if color else None,
        width=width,
        highlight=False,
        emoji=False,
        markup=False,
    )


def plain_text(renderable: RenderableType, width: int) -> str:
    """`renderable` as plain text (no colour), `width` columns wide."""
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=width, no_color=True, color_system=None).print(renderable)
    return buffer.getvalue()
