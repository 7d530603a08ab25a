"""The history's questions, asked of DuckDB (embedded; no server) over the dataset's Parquet.

pyarrow opens the files (any filesystem it reaches) and DuckDB scans them, the partition filters
(GPU, commit) pushed down to the folders. A launch counts only when its run's row is in `runs/`
(the row is published last: an add still under way, or interrupted, is not there yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ncu_roof.errors import MissingToolError, UsageError
from ncu_roof.history.store import LAUNCHES, RUNS, Dataset, parquet_dataset

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

GROUP = ("name", "grid", "block", "gpu")  # a kernel group: name, launch shape, GPU


def connect(dataset: Dataset) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with `launches` (the Parquet dataset) and `runs` (its rows) in it."""
    try:
        import duckdb
    except ImportError:
        raise MissingToolError(
            "the history commands query the dataset with DuckDB, which is not installed",
            hint="pip install 'ncu-roof[history]'  (or: pip install duckdb)",
        ) from None
    con = duckdb.connect()
    launches = parquet_dataset(dataset, LAUNCHES)
    runs = parquet_dataset(dataset, RUNS).to_table()
    con.register("launches", launches)
    con.register("runs", runs)
    return con


def _arrow(result: Any) -> pa.Table:
    """A result as an Arrow table (DuckDB 2 names it `to_arrow_table`, 1.x `fetch_arrow_table`)."""
    convert = getattr(result, "to_arrow_table", None) or result.fetch_arrow_table
    table: pa.Table = convert()
    return table


def runs_table(con: duckdb.DuckDBPyConnection) -> pa.Table:
    table = _arrow(con.sql("SELECT * FROM runs ORDER BY time, commit, run_id"))
    return table


def commit_order(con: duckdb.DuckDBPyConnection, gpu: str | None) -> list[tuple[str, str, Any]]:
    """(GPU, commit, time) of every commit with a run, in commit-time order (a commit's time:
    its earliest run's)."""
    where = "WHERE gpu = $gpu" if gpu else ""
    rows: list[tuple[str, str, Any]] = con.execute(
        f"SELECT gpu, commit, min(time) AS t FROM runs {where} GROUP BY gpu, commit ORDER BY t, commit",
        {"gpu": gpu} if gpu else {},
    ).fetchall()
    return rows


def check_regex(con: duckdb.DuckDBPyConnection, pattern: str) -> None:
    import duckdb

    try:
        con.execute("SELECT regexp_matches('', $p)", {"p": pattern})
    except duckdb.Error:
        raise UsageError(
            f"--kernel {pattern!r} is not a regular expression", hint="RE2 syntax, e.g. --kernel 'gemm|conv'"
        ) from None


def points(con: duckdb.DuckDBPyConnection, kernel: str | None, gpu: str | None, last: int | None) -> pa.Table:
    """Per kernel group (name, shape, GPU) and commit, in commit-time order: median, min and max
    duration, launches, runs, the most common verdict; the last `last` commits of each GPU."""
    if kernel:
        check_regex(con, kernel)
    order = commit_order(con, gpu)
    if last is not None:
        by_gpu: dict[str, list[tuple[str, str, Any]]] = {}
        for row in order:
            by_gpu.setdefault(row[0], []).append(row)
        order = [row for rows in by_gpu.values() for row in rows[-last:]]
    commits = sorted({c for _, c, _ in order})
    if not commits:
        return _arrow(con.sql("SELECT NULL AS name WHERE false"))
    filters = ["commit IN (SELECT unnest($commits))"]
    params: dict[str, Any] = {"commits": commits}
    if gpu:
        filters.append("gpu = $gpu")
        params["gpu"] = gpu
    if kernel:
        filters.append("regexp_matches(name, $kernel)")
        params["kernel"] = kernel
    sql = f"""
        WITH c AS (SELECT gpu, commit, min(time) AS time FROM runs GROUP BY ALL),
        p AS (
            SELECT name, grid, block, gpu, commit,
                   median(duration_s) AS median_duration_s, min(duration_s) AS min_duration_s,
                   max(duration_s) AS max_duration_s, count(*) AS launches,
                   count(DISTINCT run_id) AS runs, mode(bound) AS verdict
            FROM launches
            WHERE {" AND ".join(filters)} AND run_id IN (SELECT run_id FROM runs)
            GROUP BY ALL)
        SELECT p.*, c.time FROM p JOIN c USING (gpu, commit)
        ORDER BY name, grid NULLS FIRST, block NULLS FIRST, gpu, time, commit"""
    table = _arrow(con.sql(sql, params=params))
    return table


def durations(con: duckdb.DuckDBPyConnection, gpu: str, commits: Sequence[str]) -> pa.Table:
    """Every published launch of these commits on this GPU: group, commit, run, duration."""
    sql = """
        SELECT name, grid, block, commit, run_id, duration_s FROM launches
        WHERE gpu = $gpu AND commit IN (SELECT unnest($commits))
          AND run_id IN (SELECT run_id FROM runs WHERE gpu = $gpu)"""
    table = _arrow(con.sql(sql, params={"gpu": gpu, "commits": list(commits)}))
    return table
