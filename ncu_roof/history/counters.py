"""What the reader read of each launch, kept beside its quantities: two map columns.

`counters` (map<string, double>): every numeric column of the reader's table — the ncu metrics,
in SI as the reader scaled them (`gpu__time_duration.sum` in seconds), and the launch's ID and
device index; `counter_texts` (map<string, string>): its text columns — name, grid, block,
device name, CC, NVTX, the ncu run, a metric ncu gave as text, and the input's notes on the
launch (a JSON list). A missing value has no entry. Two columns whatever the metric set, so a
history's files share one schema across metric sets (DuckDB `counters['dram__bytes.sum']`,
Polars `.list.eval`, Spark `counters['…']`), and a file's footer stays small.

`tables_of` reads them back into the tables the analysis takes (`history rebuild`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import polars.selectors as cs

from ncu_roof.base.arrays import object_array

if TYPE_CHECKING:
    import pyarrow as pa

    from ncu_roof.ingest import RunTable

NUMBERS, TEXTS = "counters", "counter_texts"
NOTES = "input_notes"


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False) if value else None
    return str(value)


def _map(names: Sequence[str], columns: Sequence[np.ndarray], rows: int, number: bool) -> pa.Array:
    """Per row, the (name, value) of each column that holds a value there."""
    import pyarrow as pa

    if number:
        matrix = np.column_stack(columns) if columns else np.zeros((rows, 0))
        valid = ~np.isnan(matrix)
    else:
        matrix = np.column_stack(columns) if columns else np.zeros((rows, 0), dtype=object)
        valid = (
            np.vectorize(lambda v: v is not None, otypes=[bool])(matrix)
            if matrix.size
            else matrix.astype(bool)
        )
    column_of = np.nonzero(valid)[1]  # row-major: each row's entries together
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(valid.sum(axis=1), out=offsets[1:])
    keys = pl.Series([names[j] for j in column_of.tolist()], dtype=pl.String).to_arrow().cast(pa.string())
    items = pl.Series(matrix[valid].tolist(), dtype=pl.Float64 if number else pl.String).to_arrow()
    items = items if number else items.cast(pa.string())  # (Polars gives large_string)
    return pa.MapArray.from_arrays(pl.Series(offsets).to_arrow(), keys, items)


def counter_columns(tables: Sequence[RunTable]) -> dict[str, pa.Array]:
    """Every table's columns as the two maps, row after row of the tables in order: numbers (the
    metrics, ID and device index) as doubles, the others as texts."""
    # NaN as null first: a metric that is text in another table becomes text, and a NaN no entry
    # (by type: `DataFrame.fill_nan` reads a column named `^id$` as a pattern, Polars 2.1)
    frame = pl.concat(
        [t.launches.with_columns(cs.float().fill_nan(None)) for t in tables], how="diagonal_relaxed"
    )
    floats = frame.select(cs.numeric().cast(pl.Float64))  # by type: a column's name is no pattern
    numeric = floats.columns
    textual = [c for c in frame.columns if c not in numeric]
    numbers = [s.to_numpy() for s in floats.iter_columns()]  # null: NaN
    texts = [object_array(_text(v) for v in frame.get_column(c).to_list()) for c in textual]
    rows = frame.height
    return {NUMBERS: _map(numeric, numbers, rows, True), TEXTS: _map(textual, texts, rows, False)}


def _unmapped(column: pa.ChunkedArray, rows: int, number: bool) -> list[pl.Series]:
    """A map column back into one column per key (NaN or null where a row has no entry)."""
    array = column.combine_chunks()
    offsets = pl.Series(array.offsets).to_numpy()
    keys = pl.Series(array.keys).to_numpy()
    items = pl.Series(array.items).to_numpy()
    row_of = np.repeat(np.arange(rows), np.diff(offsets))
    entries = slice(int(offsets[0]), int(offsets[-1]))
    keys, items = keys[entries], items[entries]
    out = []
    for key in dict.fromkeys(keys.tolist()):
        at = keys == key
        values = np.full(rows, np.nan) if number else np.full(rows, None, dtype=object)
        values[row_of[at]] = items[at]
        out.append(
            pl.Series(key, values if number else values.tolist(), dtype=pl.Float64 if number else pl.String)
        )
    return out


def tables_of(launches: pa.Table) -> list[RunTable]:
    """The reader's tables back from stored rows: one per input, ncu run and device, in row order
    (as `record.device_tables` cut them); a column with no value in a table is left out of it."""
    from ncu_roof.ingest import RunTable
    from ncu_roof.ingest.table import IDENTITY, InputFormat

    rows = launches.num_rows
    frame = pl.DataFrame(
        [*_unmapped(launches.column(NUMBERS), rows, True), *_unmapped(launches.column(TEXTS), rows, False)]
    )
    absent = [pl.repeat(None, rows, dtype=pl.String, eager=True).alias(c) for c in IDENTITY if c not in frame]
    frame = frame.with_columns(absent).with_columns(
        pl.col(NOTES).str.json_decode(IDENTITY[NOTES]),
        *(pl.col(c).cast(pl.Float64).fill_nan(None).cast(pl.Int64) for c in ("id", "device")),
        *(pl.col(c).cast(kind) for c, kind in IDENTITY.items() if c not in (NOTES, "id", "device")),
        input=pl.int_range(rows),
    )
    paths = launches.column("input_path").to_pylist()
    formats = launches.column("input_format").to_pylist()
    versions = launches.column("ncu_version").to_pylist()
    out = []
    for part in frame.with_columns(path=pl.Series(paths, dtype=pl.String)).partition_by(
        "path", "run", "device", maintain_order=True
    ):
        first = part.item(0, "input")
        part = part.drop("input", "path")
        kept = [c for c in part.iter_columns() if c.name in IDENTITY or not _all_missing(c)]
        out.append(RunTable(paths[first], InputFormat(formats[first]), versions[first], pl.DataFrame(kept)))
    return out


def _all_missing(values: pl.Series) -> bool:
    if values.dtype == pl.Float64:  # NaN or null
        return bool(np.isnan(values.to_numpy()).all())
    return values.null_count() == len(values)
