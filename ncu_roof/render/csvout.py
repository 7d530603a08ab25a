"""`--format csv`: one row per launch, flat columns with units in their names.

The columns are the launch table's (`ncu_roof.analysis.launches`, what `to_arrow()` and Parquet hold),
under the same names, in the same order: first the columns the CSV has always had (`LEAD`), then
`headroom_s`, `group_id` and `fix_first_rank`, then the flags (`above_roof`,
`flop_total_is_lower_bound`), the verdict's basis, the caps, operations, pipes and compute
ceiling, the recipe, the nested records as their JSON text, and what the launch's input and device
say. Sparse mappings (`cap_flop_per_s`, `pipe_pct`) give a column only for the keys some launch
has, so read columns by name.

Counts (FLOPs, bytes, operations) are whole numbers. Other numbers keep 15 significant digits,
the precision a float64 carries without the noise of the arithmetic that made it
(`0.000284704`, not `0.00028470400000000004`); they read back exactly.
Flags are `true`/`false`, missing values empty, lists of texts joined with `; `, and every text
cell is guarded against spreadsheet formulas (`csv_cell`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ncu_roof.analysis.columns import number_texts
from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.launches import BOOL, FLOAT, INT, JSON, LEAD, RANK, TEXT, TEXTS, launch_columns
from ncu_roof.render.text import csv_cell

COLUMNS = LEAD  # the columns every CSV has, in this order; the launch table's others follow


def _numbers(values: Sequence[float | None] | np.ndarray) -> list[object]:
    """CSV cells of numbers: missing and non-finite are empty. A long column of few distinct
    values (a device's roofs, its caps, repeated launches) has each formatted once."""
    given = values if isinstance(values, np.ndarray) else [math.nan if v is None else v for v in values]
    return number_texts(np.asarray(given, dtype="float64"), _number_cells)


def _number_cells(numbers: np.ndarray) -> list[object]:
    """As `cell` of each number, NaN and ±inf empty."""
    isfinite = math.isfinite
    return [repr(float(f"{v:.15g}")) if isfinite(v) else "" for v in numbers.tolist()]


def _texts(values: Sequence[str | None]) -> list[object]:
    """Guarded text cells (each distinct text guarded once); None is empty."""
    guarded = {v: csv_cell(v) for v in set(values) if v is not None}
    return ["" if v is None else guarded[v] for v in values]


def _counts(values: np.ndarray) -> list[object]:
    """CSV cells of counts (FLOPs, bytes, operations): whole numbers, as ncu counts them (a count
    ncu derives from a rate times the duration is rounded to the nearest whole number)."""
    return number_texts(np.asarray(values, dtype="float64"), _count_cells)


def _count_cells(numbers: np.ndarray) -> list[object]:
    isfinite = math.isfinite
    return [str(round(v)) if isfinite(v) else "" for v in numbers.tolist()]


def _is_count(name: str) -> bool:
    """The launch table's count columns: FLOPs, operations, bytes per tier."""
    return name.startswith(("flop_", "ops_")) or name.endswith("_bytes")


def _cells(name: str, kind: str, values: Any) -> list[object]:
    """A column's CSV cells: a count column's as whole numbers, every other by its kind."""
    if kind == FLOAT and _is_count(name):
        return _counts(values)
    return _CELLS[kind](values)


def _text_lists(values: Sequence[Sequence[str]]) -> list[object]:
    return _texts(["; ".join(texts) for texts in values])


def _flags(values: Sequence[bool] | np.ndarray) -> list[object]:
    return ["true" if v else "false" for v in np.asarray(values, dtype=bool).tolist()]


def _ints(values: Sequence[int] | np.ndarray) -> list[object]:
    out: list[object] = np.asarray(values).tolist()
    return out


def _ranks(values: np.ndarray) -> list[object]:
    """Whole numbers held as floats: NaN is empty."""
    return ["" if math.isnan(v) else int(v) for v in values.tolist()]


_CELLS: dict[str, Callable[[Any], list[object]]] = {
    FLOAT: _numbers,
    INT: _ints,
    RANK: _ranks,
    TEXT: _texts,
    BOOL: _flags,
    TEXTS: _text_lists,
    JSON: _texts,
}


def _columns(analysis: Analysis) -> dict[str, list[object]]:
    """Every CSV column of every launch, in order: the launch table's columns as cells."""
    return {name: _cells(name, kind, values) for name, (kind, values) in launch_columns(analysis).items()}


def cell(value: object) -> object:
    """A CSV cell: missing is empty, a float has 15 significant digits at most (no float noise)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(float(f"{value:.15g}"))
    return value


def render_csv(analysis: Analysis) -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    columns = _columns(analysis)
    writer.writerow(columns)
    writer.writerows(zip(*columns.values(), strict=True))
    return out.getvalue()
