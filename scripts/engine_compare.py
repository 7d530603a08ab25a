"""Polars against pyarrow on what the launch table does, on the bench's 100k trace (docs/architecture.md).

    python scripts/engine_compare.py [--work /tmp/ncu-roof-bench] [--repeat 3]

Each step timed in this process (wall and CPU, median of `--repeat`), the same work in both
libraries: the trace's identity and counter columns read as text and parsed to float64; the
launches grouped by (name, grid, block, device), counted and summed; two traces' groups joined on
that key (the diff's pairing); every launch's row written as JSON (orjson over pyarrow's rows,
against Polars' own writer).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

KEY = ["Kernel Name", "Grid Size", "Block Size", "Device"]
COUNTERS = [
    "gpu__time_duration.sum",
    "dram__bytes.sum.per_second",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__m_xbar2l1tex_read_bytes.sum.per_second",
    "smsp__cycles_elapsed.avg.per_second",
]


def timed(step: Callable[[], object], repeat: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        step()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def arrow_read(path: Path) -> pa.Table:
    table = pacsv.read_csv(
        path,
        pacsv.ReadOptions(skip_rows_after_names=1, use_threads=True),
        convert_options=pacsv.ConvertOptions(
            include_columns=KEY + COUNTERS, column_types={c: pa.string() for c in KEY + COUNTERS}
        ),
    )
    return table.from_arrays(
        [*(table[c] for c in KEY), *(pc.cast(table[c], pa.float64()) for c in COUNTERS)], names=KEY + COUNTERS
    )


def polars_read(path: Path) -> pl.DataFrame:
    frame = pl.read_csv(path, columns=KEY + COUNTERS, infer_schema=False, skip_rows_after_header=1)
    return frame.with_columns(pl.col(COUNTERS).cast(pl.Float64))


def arrow_groups(table: pa.Table) -> pa.Table:
    return table.group_by(KEY, use_threads=False).aggregate(
        [("gpu__time_duration.sum", "sum"), ("gpu__time_duration.sum", "count")]
    )


def polars_groups(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.group_by(KEY, maintain_order=True).agg(
        pl.col("gpu__time_duration.sum").sum().alias("sum"), pl.len().alias("count")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ncu-roof-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    head, base = args.work / "trace-100k-head.csv", args.work / "trace-100k.csv"
    if not base.exists():
        raise SystemExit(f"make the inputs first: python scripts/bench.py --work {args.work} --only none")
    table, frame = arrow_read(base), polars_read(base)
    other_table, other_frame = arrow_groups(arrow_read(head)), polars_groups(polars_read(head))
    rows = frame.height
    steps: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("read 11 columns, parse 7", lambda: arrow_read(base), lambda: polars_read(base)),
        ("group by name, grid, block, device", lambda: arrow_groups(table), lambda: polars_groups(frame)),
        (
            "join two traces' groups",
            lambda: arrow_groups(table).join(other_table, KEY, join_type="full outer"),
            lambda: polars_groups(frame).join(other_frame, on=KEY, how="full", coalesce=True),
        ),
        (
            f"{rows:,} rows as JSON",
            lambda: orjson.dumps(table.to_pylist()),
            lambda: frame.write_json(),
        ),
    ]
    versions = f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, polars {pl.__version__}"
    print(f"{versions}; {rows:,} launches")
    print(f"{'step':<36} {'pyarrow wall/cpu s':>19} {'polars wall/cpu s':>19}")
    for label, arrow, polars in steps:
        a, p = timed(arrow, args.repeat), timed(polars, args.repeat)
        print(f"{label:<36} {a[0]:9.3f} / {a[1]:6.3f}  {p[0]:9.3f} / {p[1]:6.3f}")


if __name__ == "__main__":
    main()
