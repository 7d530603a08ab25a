"""`history rebuild`: every stored run's quantities and verdicts derived again from its stored
counters (`details/`: `history.counters`) with this version's recipe and roofs, each file
rewritten atomically in place (a rebuild interrupted leaves each file either old or new, every
one readable)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ncu_roof.history.counters import tables_of
from ncu_roof.history.record import analyze_tables, launch_table, lean, split_rows, with_time
from ncu_roof.history.store import (
    DETAILS,
    RUNS,
    launches_path,
    no_history,
    open_dataset,
    replace_file,
    run_files,
)

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class Rebuilt:
    runs: int
    launches: int


def rebuild_run(launches: Sequence[tuple[str, pa.Table]], run: str, gpu: str | None) -> dict[str, pa.Table]:
    """A run's launch files (GPU key, rows) derived again: GPU key → its new rows."""
    tables, owners = [], []
    for key, rows in launches:
        for table in tables_of(rows):
            tables.append(table)
            owners += [key] * table.rows
    analysis = analyze_tables(tables, gpu)
    when = launches[0][1].column("time")[0].as_py()
    return split_rows(with_time(launch_table(analysis, tables, run), when), owners)


def rebuild(uri: str) -> Rebuilt:
    import pyarrow.parquet as pq

    dataset = open_dataset(uri)
    runs = launches_total = 0
    by_run: dict[str, list[dict[str, object]]] = {}
    files = run_files(dataset)
    if not files:  # as `show` and `check`: nothing to rebuild is an error, not "0 runs rebuilt"
        raise no_history(dataset, RUNS)
    for path in files:
        for row in pq.read_table(path, filesystem=dataset.fs).to_pylist():
            by_run.setdefault(str(row["run_id"]), []).append(row)
    for run, rows in by_run.items():
        commit = str(rows[0]["commit"])
        gpus = [str(r["gpu"]) for r in rows]
        details = {key: launches_path(dataset, key, commit, run, DETAILS) for key in gpus}
        stored = [(key, pq.read_table(p, filesystem=dataset.fs)) for key, p in details.items()]
        gpu = rows[0]["roofs_gpu"]
        for key, table in rebuild_run(stored, run, str(gpu) if gpu else None).items():
            replace_file(dataset, table, details[key])  # the details first: the launches are made of them
            replace_file(dataset, lean(table), launches_path(dataset, key, commit, run))
            launches_total += table.num_rows
        runs += 1
    return Rebuilt(runs, launches_total)
