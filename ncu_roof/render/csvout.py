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

BATCH_CELLS = 1 << 18  # the cells of one kind made at once: every column of a small table, a few of a big one


def _count_cell(text: str) -> str:  # FLOPs, operations, bytes: a rate times the duration, the nearest whole
    return str(round(float(text)))


def _number_cell(text: str) -> str:
    return repr(float(f"{float(text):.15g}"))


def _text_cell(text: str) -> str | None:
    return csv_cell(text) or None


def _as_text(column: pl.Series) -> pl.Series:
    """A number's exact text, a list of texts joined with `; `."""
    return (column.list.join("; ") if isinstance(column.dtype, pl.List) else column).cast(pl.String)


def _cells(table: pl.DataFrame) -> pl.DataFrame:
    """The table's CSV cells (null: empty), by each column's type. Numbers (finite: `launch_table`
    made the rest null) from their exact text (-0.0 stays apart); the cells of one kind (counts,
    other numbers, texts) made once for each distinct value of many columns (`BATCH_CELLS`) at once."""
    kinds: dict[Callable[[str], str | None], list[pl.Series]] = {}
    cells: dict[str, pl.Series] = {}
    for column in table.iter_columns():
        if column.dtype in (pl.Boolean, pl.Int64):  # true / false, whole numbers
            cells[column.name] = (column.fill_null(False) if column.dtype == pl.Boolean else column).cast(
                pl.String
            )
        elif column.dtype == pl.Float64:
            count = column.name.startswith(("flop_", "ops_")) or column.name.endswith("_bytes")
            kinds.setdefault(_count_cell if count else _number_cell, []).append(column)
        else:
            kinds.setdefault(_text_cell, []).append(column)
    rows = len(table)
    per = max(1, BATCH_CELLS // max(1, rows))
    for make, columns in kinds.items():
        for first in range(0, len(columns), per):
            batch = columns[first : first + per]
            made = each_distinct(pl.concat([_as_text(c) for c in batch]), make)
            cells.update((c.name, made.slice(i * rows, rows).alias(c.name)) for i, c in enumerate(batch))
    return pl.DataFrame([cells[name] for name in table.columns])


def render_csv(analysis: Analysis) -> str:
    return joined(csv_pieces(analysis))


def csv_pieces(analysis: Analysis, chunk: int = 1 << 14) -> Iterator[bytes]:
    """The CSV in pieces of `chunk` rows, as UTF-8 (the header in the first; Polars' defaults: null
    empty, `\n`): a big one is never held whole, nor twice as text and bytes."""
    cells = _cells(launch_table(analysis))
    for start in range(0, max(1, len(cells)), chunk):
        cells.slice(start, chunk).write_csv(
            written := io.BytesIO(), include_header=not start, quote_style="necessary"
        )
        yield written.getvalue()
