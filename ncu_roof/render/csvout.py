"""`--format csv`: one row per launch, the launch table's columns (`ncu_roof.analysis.launches`:
units in their names, in its order; a sparse mapping, `cap_flop_per_s`, `pipe_pct`, has a column
only for the keys some launch has: read columns by name).

Counts (FLOPs, bytes, operations) are whole numbers; other numbers keep 15 significant digits,
the precision a float64 carries without the noise of the arithmetic that made it (`0.000284704`,
not `0.00028470400000000004`), and read back exactly. Flags are `true`/`false`, missing values
empty, lists of texts joined with `; `, every text cell guarded against formulas (`csv_cell`)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.launches import each_distinct, launch_table
from ncu_roof.render.output import joined
from ncu_roof.render.text import csv_cell

CELL: dict[str, Callable[[str], str | None]] = {  # a cell from a number's exact text (-0.0 stays apart)
    "count": lambda text: str(round(float(text))),  # FLOPs, operations, bytes: a rate times the duration
    "number": lambda text: repr(float(f"{float(text):.15g}")),
    "text": lambda text: csv_cell(text) or None,
}


def _cells(table: pl.DataFrame) -> pl.DataFrame:
    """The table's CSV cells (null: empty), by each column's type; numbers are finite (`launch_table`
    made the rest null). The cells of one kind are made once for each distinct value of all its columns."""
    cells: dict[str, pl.Series] = {}
    kinds: dict[str, list[pl.Series]] = {}
    for column in table.iter_columns():
        if column.dtype == pl.Boolean:  # true / false
            column = column.fill_null(False)
        if column.dtype in (pl.Boolean, pl.Int64):
            cells[column.name] = column.cast(pl.String)
        elif column.dtype == pl.Float64:
            count = column.name.startswith(("flop_", "ops_")) or column.name.endswith("_bytes")
            kinds.setdefault("count" if count else "number", []).append(column)
        else:
            kinds.setdefault("text", []).append(
                column.list.join("; ") if isinstance(column.dtype, pl.List) else column
            )
    rows = len(table)
    for kind, columns in kinds.items():
        made = each_distinct(pl.concat([c.cast(pl.String) for c in columns]), CELL[kind])
        cells.update((c.name, made.slice(i * rows, rows).alias(c.name)) for i, c in enumerate(columns))
    return pl.DataFrame([cells[name] for name in table.columns])


def render_csv(analysis: Analysis) -> str:
    return joined(csv_pieces(analysis))


def csv_pieces(analysis: Analysis, chunk: int = 1 << 14) -> Iterator[bytes]:
    """The CSV in pieces of `chunk` rows, as UTF-8 (the header in the first; Polars' defaults: null
    empty, `\n`), each piece's cells made in turn: a big one is never held whole, as cells or bytes."""
    table = launch_table(analysis)
    for start in range(0, max(1, len(table)), chunk):
        _cells(table.slice(start, chunk)).write_csv(
            written := io.BytesIO(), include_header=not start, quote_style="necessary"
        )
        yield written.getvalue()
