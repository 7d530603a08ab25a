"""Text any layer may show: one line with no control characters (kernel names are hostile:
templates, `|`, backticks, ESC, newlines), kernel names folded for a cell, SI numbers, launch
shapes. Scaling to k/M/G happens only here, for display; the sinks' own escaping is in
`render.text`.
"""

from __future__ import annotations

import re

# C0/C1 controls, zero-width characters, bidi overrides and isolates, line/paragraph separators:
# anything that could hide, reorder or break the text around a kernel name
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def one_line(text: str) -> str:
    """No control characters and no line breaks: safe for a terminal line or a log."""
    return _CONTROL.sub("?", text.replace("\r", " ").replace("\n", " ").replace("\t", " "))


def shorten(name: str, width: int = 60) -> str:
    """A kernel name for a table cell: template arguments and parameters folded, then clipped.

    `void at::native::reduce_kernel<512, 1, ...>(T3)` → `at::native::reduce_kernel<…>(…)`.
    """
    text = one_line(name).strip()
    if text.startswith("void "):
        text = text[5:]
    text = _fold(text, "<", ">", "<…>")
    text = _fold(text, "(", ")", "(…)") if len(text) > width else text
    return text if len(text) <= width else text[: width - 1] + "…"


def _fold(text: str, open_: str, close: str, placeholder: str) -> str:
    out: list[str] = []
    depth = 0
    for char in text:
        if char == open_:
            if depth == 0:
                out.append(placeholder)
            depth += 1
        elif char == close and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """`1.2e11, "FLOP/s"` → `120 GFLOP/s`; None → `–`. Scaling happens only here, for display."""
    if value is None or value != value:
        return "–"
    if value == float("inf"):
        return "∞"
    prefixes = (
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
        (1.0, ""),
        (1e-3, "m"),
        (1e-6, "µ"),
        (1e-9, "n"),
    )
    magnitude = abs(value)
    if magnitude == 0:
        return f"0 {unit}".strip()
    for scale, prefix in prefixes:
        if magnitude >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}".strip()
    return f"{value:.{digits}g} {unit}".strip()


def intensity(value: float | None, digits: int = 3) -> str:
    """An intensity in FLOP/byte as a plain number, 3 significant digits, never an SI prefix.

    `0.0948`, `2.73`, `104`, `1.23e+03`: `si()` would print 0.0948 as `94.8 m`, which reads as
    millions. None or NaN → `–`, infinity (no bytes) → `∞`.
    """
    if value is None or value != value:
        return "–"
    if value in (float("inf"), float("-inf")):
        return "∞" if value > 0 else "-∞"
    return f"{value:.{digits}g}"


def pct(value: float | None) -> str:
    return "–" if value is None or value != value else f"{value:.0f}%"


def launch_shape(grid: str | None, block: str | None) -> str:
    """`(8192, 1, 1)` × `(256, 1, 1)` → `8192×256`; 2-D and 3-D shapes keep their commas."""

    def dims(text: str | None) -> str:
        if not text:
            return "?"
        parts = [p.strip() for p in text.strip("()").split(",")]
        while len(parts) > 1 and parts[-1] == "1":
            parts.pop()
        return ",".join(parts)

    if grid is None and block is None:
        return "–"
    return one_line(f"{dims(grid)}×{dims(block)}")


def plural(count: int, noun: str) -> str:
    """`1 launch`, `2 launches`, `3 kernels`."""
    if count == 1:
        return f"1 {noun}"
    suffix = "es" if noun.endswith(("s", "sh", "ch", "x")) else "s"
    return f"{count:,} {noun}{suffix}"
