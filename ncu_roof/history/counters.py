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

if TYPE_CHECKING:
    import pyarrow as pa

    from ncu_roof.ingest import RunTable

NUMBERS, TEXTS = "counters", "counter_texts"
NOTES = "input_notes"


def _concat(tables: Sequence[RunTable], name: str, number: bool) -> np.ndarray:
    parts = []
    for t in tables:
        if name in t.columns:
            parts.append(t.columns[name])
        else:
            parts.append(np.full(t.rows, np.nan) if number else np.full(t.rows, None, dtype=object))
    return np.concatenate(parts) if parts else np.zeros(0)


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, tuple):
        return json.dumps(list(value), ensure_ascii=False) if value else None
    return str(value)


def _map(names: Sequence[str], columns: Sequence[np.ndarray], rows: int, number: bool) -> pa.Array:
    """Per row, the (name, value) of each column that holds a value there."""
    import polars as pl
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
    """Every table's columns as the two maps, row after row of the tables in order."""
    rows = sum(t.rows for t in tables)
    names = list(dict.fromkeys(c for t in tables for c in t.columns))
    numeric = [c for c in names if all(t.columns[c].dtype.kind == "f" for t in tables if c in t.columns)]
    textual = [c for c in names if c not in numeric]
    numbers = [_concat(tables, c, number=True) for c in numeric]
    texts = [
        np.array([_text(v) for v in _concat(tables, c, number=False).tolist()], dtype=object) for c in textual
    ]
    return {NUMBERS: _map(numeric, numbers, rows, True), TEXTS: _map(textual, texts, rows, False)}


def _unmapped(column: pa.ChunkedArray, rows: int, number: bool) -> dict[str, np.ndarray]:
    """A map column back into one array per key (NaN or None where a row has no entry)."""
    import polars as pl

    array = column.combine_chunks()
    offsets = pl.Series(array.offsets).to_numpy()
    keys = pl.Series(array.keys).to_numpy()
    items = pl.Series(array.items).to_numpy()
    row_of = np.repeat(np.arange(rows), np.diff(offsets))
    entries = slice(int(offsets[0]), int(offsets[-1]))
    keys, items = keys[entries], items[entries]
    out: dict[str, np.ndarray] = {}
    for key in dict.fromkeys(keys.tolist()):
        at = keys == key
        values = np.full(rows, np.nan) if number else np.full(rows, None, dtype=object)
        values[row_of[at]] = items[at]
        out[key] = values
    return out


def tables_of(launches: pa.Table) -> list[RunTable]:
    """The reader's tables back from stored rows: one per input, ncu run and device, in row order
    (as `record.device_tables` cut them); a column with no value in a table is left out of it."""
    from ncu_roof.ingest import RunTable
    from ncu_roof.ingest.table import IDENTITY_COLUMNS, INTEGER_COLUMNS, InputFormat

    rows = launches.num_rows
    columns = {
        **_unmapped(launches.column(NUMBERS), rows, True),
        **_unmapped(launches.column(TEXTS), rows, False),
    }
    if NOTES in columns:
        columns[NOTES] = np.array([tuple(json.loads(v)) if v else None for v in columns[NOTES]], dtype=object)
    for name in IDENTITY_COLUMNS:
        if name not in columns:
            columns[name] = (
                np.full(rows, np.nan) if name in INTEGER_COLUMNS else np.full(rows, None, dtype=object)
            )
    paths = launches.column("input_path").to_pylist()
    keys = np.array(
        [f"{p}\x00{r}\x00{d}" for p, r, d in zip(paths, columns["run"], columns["device"], strict=True)],
        dtype=object,
    )
    formats = launches.column("input_format").to_pylist()
    versions = launches.column("ncu_version").to_pylist()
    out = []
    for key in dict.fromkeys(keys.tolist()):
        mask = keys == key
        first = int(np.flatnonzero(mask)[0])
        part = {c: a[mask] for c, a in columns.items()}
        kept = {c: a for c, a in part.items() if c in IDENTITY_COLUMNS or not _all_missing(a)}
        out.append(RunTable(paths[first], InputFormat(formats[first]), versions[first], kept))
    return out


def _all_missing(values: np.ndarray) -> bool:
    if values.dtype.kind == "f":
        return bool(np.isnan(values).all())
    return all(v is None for v in values.tolist())
