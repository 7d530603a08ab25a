"""Safe text for every sink: kernel names are hostile (templates, `|`, backticks, ESC, newlines).

The one home of the guards every sink applies to every text field from data (kernel names,
grid and block, device names, paths, notes): `one_line` (terminal and logs), `csv_cell`
(spreadsheet formulas), `code_span` / `table_cell` / `plain` (Markdown); HTML sinks use
`html.escape(one_line(text))`.
"""

from __future__ import annotations

import re

# C0/C1 controls, zero-width characters, bidi overrides and isolates, line/paragraph separators:
# anything that could hide, reorder or break the text around a kernel name
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_BACKTICKS = re.compile(r"`+")
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&@:])")

TIER_NAMES = {"dram": "DRAM", "l2": "L2", "l1": "L1", "shared": "Shared"}


def one_line(text: str) -> str:
    """No control characters and no line breaks: safe for a terminal line or a log."""
    return _CONTROL.sub("?", text.replace("\r", " ").replace("\n", " ").replace("\t", " "))


def csv_cell(text: str) -> str:
    """Spreadsheets run cells starting with = + - @ as formulas: prefix those with a quote."""
    clean = one_line(text)
    return "'" + clean if clean.startswith(_FORMULA_START) else clean


def code_span(text: str) -> str:
    """`text` as an inline code span that renders exactly, whatever backticks it contains.

    The fence is one backtick longer than the longest run inside; a space pads text that starts
    or ends with a backtick (or starts and ends with a space, which CommonMark would strip).
    Line breaks and control characters become one line first. In a table, wrap in `table_cell`.
    """
    body = one_line(text)
    if not body:
        return "` `"
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * (longest + 1)
    pad = body[0] == "`" or body[-1] == "`" or (body[0] == " " and body[-1] == " ")
    space = " " if pad else ""
    return f"{fence}{space}{body}{space}{fence}"


def table_cell(text: str) -> str:
    """Markdown for one table cell: one line, `|` escaped (GFM needs it even inside code spans)."""
    return one_line(text).replace("|", "\\|")


def plain(text: str) -> str:
    """Data as literal text outside code spans: Markdown and HTML punctuation backslash-escaped."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", one_line(text))


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
