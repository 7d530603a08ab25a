"""The history's questions, asked of DuckDB (embedded; no server) over the dataset's Parquet.

A local dataset is read by DuckDB itself (`read_parquet` over the folders, the GPU and commit
filters pruning them by name); any other URI through pyarrow's filesystems, DuckDB scanning the
pyarrow dataset. A launch counts only when its run's row is in `runs/` (the row is published
last: an add still under way, or interrupted, is not there yet). Results come back as Python rows
and numpy columns (no pandas, no Arrow conversion).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ncu_roof.errors import MissingToolError, UsageError
from ncu_roof.history.store import LAUNCHES, RUNS, SUFFIX, Dataset, no_history, parquet_dataset

if TYPE_CHECKING:
    import duckdb
    import numpy as np

Row = dict[str, Any]


def connect(dataset: Dataset) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the views `launches` (every launch, `gpu` and `commit` as text)
    and `runs` (one row per GPU of a run)."""
    try:
        import duckdb
    except ImportError:
        raise MissingToolError(
            "the history commands query the dataset with DuckDB, which is not installed",
            hint="pip install 'ncu-roof[history]'  (or: pip install duckdb)",
        ) from None
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    if dataset.remote is None:
        for part in (LAUNCHES, RUNS):
            if not os.path.isdir(dataset.path(part)):
                raise no_history(dataset, part)
        root = dataset.root.replace("'", "''")
        hive = "hive_partitioning = true, hive_types = {'gpu': 'VARCHAR', 'commit': 'VARCHAR'}"
        con.execute(
            f"CREATE VIEW launches AS SELECT * FROM read_parquet('{root}/{LAUNCHES}/*/*/*{SUFFIX}', {hive})"
        )
        con.execute(f"CREATE VIEW runs AS SELECT * FROM read_parquet('{root}/{RUNS}/*{SUFFIX}')")
    else:
        con.register("launches", parquet_dataset(dataset, LAUNCHES))
        con.register("runs", parquet_dataset(dataset, RUNS))
    return con


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> list[Row]:
    import duckdb

    try:
        relation = con.sql(sql, params=params or {})
    except duckdb.IOException as err:  # a folder with no Parquet file in it yet
        raise UsageError(
            f"the dataset cannot be read: {str(err).splitlines()[0]}", hint="add a run first"
        ) from None
    assert relation is not None
    names = relation.columns
    return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]


def runs_rows(con: duckdb.DuckDBPyConnection) -> list[Row]:
    """Every run's provenance row (one per GPU), in time order."""
    return rows(con, "SELECT * FROM runs ORDER BY time, commit, run_id")


def commit_order(con: duckdb.DuckDBPyConnection, gpu: str | None) -> list[Row]:
    """`gpu`, `commit`, `time` of every commit with a run, in commit-time order (a commit's time:
    its earliest run's)."""
    where = "WHERE gpu = $gpu" if gpu else ""
    sql = (
        f"SELECT gpu, commit, min(time) AS time FROM runs {where} GROUP BY gpu, commit ORDER BY time, commit"
    )
    return rows(con, sql, {"gpu": gpu} if gpu else {})


def check_regex(con: duckdb.DuckDBPyConnection, pattern: str) -> None:
    import duckdb

    try:
        con.sql("SELECT regexp_matches('', $p) AS ok", params={"p": pattern}).fetchall()
    except duckdb.Error:
        raise UsageError(
            f"--kernel {pattern!r} is not a regular expression", hint="RE2 syntax, e.g. --kernel 'gemm|conv'"
        ) from None


def last_commits(order: Sequence[Row], last: int | None) -> list[Row]:
    """The last `last` commits of each GPU (all of them: None)."""
    if last is None:
        return list(order)
    by_gpu: dict[str, list[Row]] = {}
    for row in order:
        by_gpu.setdefault(row["gpu"], []).append(row)
    return [row for kept in by_gpu.values() for row in kept[-last:]]


def points(
    con: duckdb.DuckDBPyConnection, kernel: str | None, gpu: str | None, last: int | None
) -> list[Row]:
    """Per kernel group (name, grid, block, GPU) and commit, in commit-time order: the median,
    fastest and slowest duration, launches, runs, the verdict most launches got, the time."""
    if kernel:
        check_regex(con, kernel)
    commits = sorted({row["commit"] for row in last_commits(commit_order(con, gpu), last)})
    if not commits:
        return []
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
    return rows(con, sql, params)


def durations(con: duckdb.DuckDBPyConnection, gpu: str, commits: Sequence[str]) -> dict[str, np.ndarray]:
    """Every published launch of these commits on this GPU: name, grid, block, commit, duration
    as numpy columns."""
    sql = """
        SELECT name, grid, block, commit, duration_s FROM launches
        WHERE gpu = $gpu AND commit IN (SELECT unnest($commits))
          AND run_id IN (SELECT run_id FROM runs WHERE gpu = $gpu)"""
    relation = con.sql(sql, params={"gpu": gpu, "commits": list(commits)})
    assert relation is not None
    columns: dict[str, np.ndarray] = relation.fetchnumpy()
    return columns
