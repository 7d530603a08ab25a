"""The one registry of output formats: each one's file suffixes and binary-ness (`FORMATS`), and
`render`, one branch per format. The CLI's choices, the format of an `-o` suffix and the tests
iterate `OutputFormat`: a format added to the enum but not registered in `FORMATS` and given a
branch in `render` fails the tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from io import BytesIO
from pathlib import PurePath
from typing import TYPE_CHECKING

from ncu_roof.base.vocabulary import GroupBy, SortBy
from ncu_roof.errors import UsageError
from ncu_roof.render.console import PIPE_WIDTH

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ncu_roof.analysis.core import Analysis
    from ncu_roof.render.output import Document
    from ncu_roof.render.plot_panel import Arrow

METADATA_KEY = b"ncu-roof"  # a Parquet file's schema metadata: the JSON document's header


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"
    HTML = "html"
    PARQUET = "parquet"
    SVG = "svg"
    PNG = "png"
    PDF = "pdf"


class Caption(StrEnum):
    SHORT = "short"  # where the roofs come from, in one line
    FULL = "full"  # and every roof's source and formula
    NONE = "none"


@dataclass(frozen=True)
class RenderOptions:
    """Everything a renderer may need; each reads only its own part."""

    color: bool = False
    width: int = PIPE_WIDTH  # columns (the CLI passes the screen's)
    top: int = 30  # table rows (0 = all)
    launches: bool = False  # one row per launch, not per kernel group
    group_by: GroupBy = GroupBy.KERNEL
    sort: SortBy = SortBy.TIME
    plot_ref: str | None = None  # where the plot file is, relative to the report (Markdown)
    device: int | None = None  # plot: one device only (default: one panel per device)
    width_in: float | None = None  # plot size in inches
    height_in: float | None = None
    dpi: float | None = None  # PNG resolution
    caption: Caption = Caption.SHORT
    arrows: tuple[Arrow, ...] = ()  # plot: a diff's before → after pairs


@dataclass(frozen=True)
class FormatSpec:
    suffixes: tuple[str, ...]  # lower case, with the dot; the first is the usual one
    binary: bool  # bytes that must not go to a terminal
    image: bool = False  # a roofline picture (also valid for `plot -o` and `--plot`)


FORMATS = {  # every member's entry (tests/test_formats.py checks that none is missing)
    OutputFormat.TABLE: FormatSpec((".txt",), binary=False),
    OutputFormat.JSON: FormatSpec((".json",), binary=False),
    OutputFormat.CSV: FormatSpec((".csv",), binary=False),
    OutputFormat.MARKDOWN: FormatSpec((".md", ".markdown"), binary=False),
    OutputFormat.HTML: FormatSpec((".html", ".htm"), binary=False),
    OutputFormat.PARQUET: FormatSpec((".parquet",), binary=True),
    OutputFormat.SVG: FormatSpec((".svg",), binary=False, image=True),
    OutputFormat.PNG: FormatSpec((".png",), binary=True, image=True),
    OutputFormat.PDF: FormatSpec((".pdf",), binary=True, image=True),
}


def from_suffix(path: str | None) -> OutputFormat | None:
    if path is None or path == "-":
        return None
    suffix = PurePath(path).suffix.lower()
    return next((f for f, s in FORMATS.items() if suffix in s.suffixes), None)


def choose(fmt: OutputFormat | None, output: str | None, output_option: str = "-o") -> OutputFormat:
    """`--format`, else what the output's (`output_option`'s) suffix says, else the table (no clash)."""
    implied = from_suffix(output)
    if fmt is not None and implied is not None and implied is not fmt and implied is not OutputFormat.TABLE:
        raise UsageError(
            f"--format {fmt.value} contradicts {output_option} {output} (its suffix says {implied.value})",
            hint=f"drop --format, or name the file …{FORMATS[fmt].suffixes[0]}",
        )
    return fmt or implied or OutputFormat.TABLE


def format_of(
    command: str, fmt: str | None, output: str | None, writes: Sequence[OutputFormat]
) -> OutputFormat:
    """`--format` (one of the formats `command` `writes`), else what the -o suffix says (`choose`);
    a format or suffix it cannot write is a usage error that names what it can."""
    names = [f.value for f in writes]
    if fmt is not None and fmt not in names:
        raise UsageError(f"{command} has no --format {fmt!r}", hint=f"use --format {' or '.join(names)}")
    if (implied := from_suffix(output)) is not None and implied not in writes:
        *most, last = (FORMATS[f].suffixes[0] for f in writes)
        raise UsageError(
            f"{command} cannot write -o {output} (its suffix says {implied.value})",
            hint=f"name a {' or '.join(filter(None, [', '.join(most), last]))} file ({', '.join(names)})",
        )
    return choose(OutputFormat(fmt) if fmt is not None else None, output)


def image_format(path: str, option: str) -> OutputFormat:
    if (fmt := from_suffix(path)) is None or not FORMATS[fmt].image:
        names = ", ".join(s.suffixes[0] for s in FORMATS.values() if s.image)
        raise UsageError(f"{option} {path}: unknown image type", hint=f"name a {names} file")
    return fmt


def render(analysis: Analysis, fmt: OutputFormat, options: RenderOptions) -> Document:
    """`analysis` as `fmt` (each renderer's module imported only when it renders)."""
    if FORMATS[fmt].image:
        from ncu_roof.render.plot import render_plot

        return render_plot(analysis, fmt=fmt.value, options=options)
    if fmt is OutputFormat.JSON:
        from ncu_roof.render.jsonout import json_pieces

        return json_pieces(analysis)
    if fmt is OutputFormat.CSV:
        from ncu_roof.render.csvout import csv_pieces

        return csv_pieces(analysis)
    if fmt is OutputFormat.PARQUET:  # the launch table (a row per launch with its input's and
        # device's facts) as one file, so files of many runs can be queried together (DuckDB, Polars,
        # Spark, pandas); `METADATA_KEY`: the JSON's header (inputs, devices, each roof and its source, …)
        import pyarrow.parquet as pq

        from ncu_roof.analysis.launches import to_arrow
        from ncu_roof.render.jsonout import outline

        header = {k: v for k, v in outline(analysis).items() if k != "kernels"}
        text = json.dumps(header, ensure_ascii=False, allow_nan=False)
        table = to_arrow(analysis).replace_schema_metadata({METADATA_KEY: text.encode()})
        pq.write_table(table, buffer := BytesIO(), compression="zstd")
        return buffer.getvalue()
    from ncu_roof.render.summary import summarize

    summary = summarize(analysis, group_by=options.group_by, sort=options.sort, launches=options.launches)
    if fmt is OutputFormat.MARKDOWN:
        from ncu_roof.render.markdown import render_markdown

        return render_markdown(summary, plot_ref=options.plot_ref)
    if fmt is OutputFormat.HTML:
        from ncu_roof.render.html import render_html

        return render_html(summary, plot=options)
    from ncu_roof.render.terminal import render_terminal

    assert fmt is OutputFormat.TABLE, fmt  # a format added to the enum gets its renderer above
    return render_terminal(summary, color=options.color, width=options.width, top=options.top)
