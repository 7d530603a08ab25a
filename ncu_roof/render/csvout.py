"""`--format csv`: one row per launch, flat columns with units in their names.

The columns are the launch table's (`ncu_roof.analysis.launches`, as `to_arrow()` and Parquet),
in its order: the CSV's first columns (`LEAD`), then `headroom_s`, `group_id`, `fix_first_rank`,
the flags, the verdict's basis, caps, operations, pipes, compute ceiling, recipe, the nested
records as JSON text, and what the input and device say. Sparse mappings (`cap_flop_per_s`,
`pipe_pct`) give a column only for the keys some launch has: read columns by name.

Counts (FLOPs, bytes, operations) are whole numbers; other numbers keep 15 significant digits,
the precision a float64 carries without the noise of the arithmetic that made it (`0.000284704`,
not `0.00028470400000000004`), and read back exactly. Flags are `true`/`false`, missing values
empty, lists of texts joined with `; `, every text cell guarded against formulas (`csv_cell`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.launches import launch_table
from ncu_roof.render.text import csv_cell


def _each_distinct(column: pl.Series, text: Callable[[str], str | None]) -> pl.Series:
    """`text` of each distinct text of the column (a long column holds few: a device's roofs,
    repeated launches), spread back to every row; null stays null."""
    distinct = column.unique().drop_nulls()
    return column.replace_strict(distinct, [text(t) for t in distinct.to_list()], return_dtype=pl.String)


def _numbers(column: pl.Series, count: bool) -> pl.Series:
    """Numbers as cells: NaN and ±inf empty (by their exact shortest text: -0.0 stays apart); a
    count whole, as ncu counts (one derived from a rate times the duration: the nearest), any
    other 15 significant digits at most (no float noise), as Python writes the float they make."""

    def cell(text: str) -> str | None:
        value = float(text)
        if not math.isfinite(value):
            return None
        return str(round(value)) if count else repr(float(f"{value:.15g}"))

    return _each_distinct(column.cast(pl.String), cell)


def _cells(column: pl.Series) -> pl.Series:
    """A column's CSV cells (null: empty): by its type, a count column's as whole numbers."""
    if column.dtype == pl.Float64:  # FLOPs, operations, bytes per tier: counts
        count = column.name.startswith(("flop_", "ops_")) or column.name.endswith("_bytes")
        return _numbers(column, count)
    if column.dtype == pl.Boolean:
        return column.fill_null(False).cast(pl.String)  # true / false
    if column.dtype == pl.Int64:
        return column.cast(pl.String)
    if isinstance(column.dtype, pl.List):
        column = column.list.join("; ")
    return _each_distinct(column, lambda t: csv_cell(t) or None)


def render_csv(analysis: Analysis) -> str:
    table = launch_table(analysis)
    cells = pl.DataFrame([_cells(table.get_column(c)) for c in table.columns])
    return cells.write_csv(null_value="", line_terminator="\n", quote_style="necessary")
