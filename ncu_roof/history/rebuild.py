"""`history rebuild`: every stored run's quantities and verdicts derived again from its stored
counters (`ncu.*` columns) with this version's recipe and roofs, each file rewritten atomically
in place (a rebuild interrupted leaves each file either old or new, every one readable)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ncu_roof.history.record import COUNTER, analyze_tables, launch_table, split_rows
from ncu_roof.history.store import launches_path, open_dataset, replace, run_files

if TYPE_CHECKING:
    import pyarrow as pa

    from ncu_roof.ingest import RunTable


@dataclass(frozen=True)
class Rebuilt:
    runs: int
    launches: int


def _column(table: pa.Table, name: str) -> np.ndarray:
    from ncu_roof.arrow import float_values

    column = table.column(name)
    if column.type == "double":
        return np.array(float_values(column))
    cells = np.empty(table.num_rows, dtype=object)
    values = column.to_pylist()
    cells[:] = [tuple(v) if isinstance(v, list) and v else None if isinstance(v, list) else v for v in values]
    return cells


def stored_tables(launches: pa.Table) -> list[RunTable]:
    """The reader's tables back from stored rows: one per input, ncu run and device, in row order
    (as `record.device_tables` cut them), columns all null in a table left out (it had none)."""
    from ncu_roof.codes import factorize
    from ncu_roof.ingest import RunTable
    from ncu_roof.ingest.table import IDENTITY_COLUMNS, InputFormat

    names = [c for c in launches.column_names if c.startswith(COUNTER)]
    paths = launches.column("input_path").to_pylist()
    runs = launches.column(COUNTER + "run").to_pylist()
    devices = launches.column(COUNTER + "device").to_pylist()
    keys = np.empty(launches.num_rows, dtype=object)
    keys[:] = [f"{p}\x00{r}\x00{d}" for p, r, d in zip(paths, runs, devices, strict=True)]
    codes, distinct = factorize(keys, missing_is_value=True)
    columns = {c.removeprefix(COUNTER): _column(launches, c) for c in names}
    formats = launches.column("input_format").to_pylist()
    versions = launches.column("ncu_version").to_pylist()
    out = []
    for k in range(len(distinct)):
        rows = codes == k
        first = int(np.flatnonzero(rows)[0])
        part = {c: a[rows] for c, a in columns.items()}
        kept = {c: a for c, a in part.items() if not _all_missing(a) or c in IDENTITY_COLUMNS}
        out.append(RunTable(paths[first], InputFormat(formats[first]), versions[first], kept))
    return out


def _all_missing(values: np.ndarray) -> bool:
    if values.dtype.kind == "f":
        return bool(np.isnan(values).all())
    return all(v is None for v in values.tolist())


def rebuild_run(launches: Sequence[tuple[str, pa.Table]], run: str, gpu: str | None) -> dict[str, pa.Table]:
    """A run's launch files (GPU key, rows) derived again: GPU key → its new rows."""
    tables, owners = [], []
    for key, rows in launches:
        for table in stored_tables(rows):
            tables.append(table)
            owners += [key] * table.rows
    analysis = analyze_tables(tables, gpu)
    new = launch_table(analysis, tables, run)
    return split_rows(new, owners)


def rebuild(uri: str) -> Rebuilt:
    import pyarrow.parquet as pq

    dataset = open_dataset(uri)
    runs = launches_total = 0
    for path in run_files(dataset):
        rows = pq.read_table(path, filesystem=dataset.fs).to_pylist()
        if not rows:
            continue
        run, commit = str(rows[0]["run_id"]), str(rows[0]["commit"])
        files = {str(r["gpu"]): launches_path(dataset, str(r["gpu"]), commit, run) for r in rows}
        stored = [(key, pq.read_table(p, filesystem=dataset.fs)) for key, p in files.items()]
        for key, table in rebuild_run(stored, run, rows[0]["roofs_gpu"]).items():
            replace(dataset, table, files[key])
            launches_total += table.num_rows
        runs += 1
    return Rebuilt(runs, launches_total)
