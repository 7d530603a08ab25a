"""`--format csv`: one row per launch, the launch table's columns (`ncu_roof.analysis.launches`:
units in their names, in its order; a sparse mapping, `cap_flop_per_s`, `pipe_pct`, has a column
only for the keys some launch has: read columns by name).

Counts (FLOPs, bytes, operations) are whole numbers; other numbers keep 15 significant digits,
the precision a float64 carries without the noise of the arithmetic that made it (`0.000284704`,
not `0.00028470400000000004`), and read back exactly. Flags are `true`/`false`, missing values
empty, lists of texts joined with `; `, every text cell guarded against formulas (`csv_cell`)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.launches import each_distinct, launch_table
from ncu_roof.render.output import joined
from ncu_roof.render.text import csv_cell


def _cells(column: pl.Series) -> pl.Series:
    """A column's CSV cells (null: empty), by its type. Numbers (finite: `launch_table` made the rest
    null), by their exact text (-0.0 stays apart); a count (a rate times the duration) the nearest whole."""
    if column.dtype == pl.Float64:  # FLOPs, operations, bytes per tier: counts
        count = column.name.startswith(("flop_", "ops_")) or column.name.endswith("_bytes")

        def cell(text: str) -> str:
            value = float(text)
            return str(round(value)) if count else repr(float(f"{value:.15g}"))

        return each_distinct(column.cast(pl.String), cell)
    if column.dtype in (pl.Boolean, pl.Int64):  # true / false, whole numbers
        return (column.fill_null(False) if column.dtype == pl.Boolean else column).cast(pl.String)
    if isinstance(column.dtype, pl.List):
        column = column.list.join("; ")
    return each_distinct(column, lambda t: csv_cell(t) or None)


def render_csv(analysis: Analysis) -> str:
    return joined(csv_pieces(analysis))


def csv_pieces(analysis: Analysis, chunk: int = 1 << 14) -> Iterator[bytes]:
    """The CSV in pieces of `chunk` rows, as UTF-8 (the header in the first; Polars' defaults: null
    empty, `\n`): a big one is never held whole, nor twice as text and bytes."""
    cells = pl.DataFrame([_cells(column) for column in launch_table(analysis).iter_columns()])
    for start in range(0, max(1, len(cells)), chunk):
        cells.slice(start, chunk).write_csv(
            written := io.BytesIO(), include_header=not start, quote_style="necessary"
        )
        yield written.getvalue()
