"""Safe text for every sink: kernel names are hostile (templates, `|`, backticks, ESC, newlines).
The guards the sinks apply to every text from data (names, shapes, paths, notes), on top of
`base.text.one_line` (terminal, logs); HTML sinks use `html.escape(one_line(text))`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ncu_roof.base.text import one_line

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_BACKTICKS = re.compile(r"`+")
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&@:])")


def csv_cell(text: str) -> str:
    """Spreadsheets run cells starting with = + - @ as formulas: prefix those with a quote."""
    clean = one_line(text)
    return "'" + clean if clean.startswith(_FORMULA_START) else clean


def code_span(text: str) -> str:
    """`text` (made one line) as an inline code span that renders exactly, whatever backticks it
    holds: fenced one backtick longer than its longest run, a space padding text that starts or
    ends with a backtick (or starts and ends with a space, which CommonMark would strip). In
    a table, wrap it in `table_cell`."""
    if not (body := one_line(text)):
        return "` `"
    fence = "`" * (_longest_backticks(body) + 1)
    space = " " if body[0] == "`" or body[-1] == "`" or (body[0] == " " and body[-1] == " ") else ""
    return f"{fence}{space}{body}{space}{fence}"


def code_block(text: str, info: str = "") -> str:
    """`text` as a one-line fenced code block (`info`: its language), fenced longer than its backtick runs."""
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return f"{fence}{info}\n{one_line(text)}\n{fence}"


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def table_cell(text: str) -> str:
    """Markdown for one table cell: one line, `|` escaped (GFM needs it even inside code spans)."""
    return one_line(text).replace("|", "\\|")


def unbroken(text: str) -> str:
    """`432 µs` kept on one line (no-break spaces) in a table cell that may wrap."""
    return text.replace(" ", "\u00a0")


def plain(text: str) -> str:
    """Data as literal text outside code spans: Markdown and HTML punctuation backslash-escaped."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", one_line(text))


def md_row(cells: Iterable[str]) -> str:
    """One Markdown table row of cells already made safe (`table_cell`, `code_span`)."""
    return "| " + " | ".join(cells) + " |"


def md_table(header: Sequence[str], left: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table: the `left` columns aligned left, the others right."""
    align = [":---" if h in left else "---:" for h in header]
    return "\n".join(md_row(cells) for cells in (header, align, *rows))


def folded(title: str, body: str, *, inline: bool = False) -> str:
    """`body` folded in `<details>` under `title` (our own words only: a <summary> is raw HTML to
    GitHub); `inline`: `<summary>` on the line of `<details>` (the diff and history comments)."""
    summary = f"<summary>{title}</summary>"
    return f"<details>{summary if inline else chr(10) + summary}\n\n{body}\n\n</details>"
