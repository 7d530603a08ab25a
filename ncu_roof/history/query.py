"""The history's questions, asked of DuckDB (embedded; no server) over the dataset's Parquet.

A local dataset is read by DuckDB itself (`read_parquet` over the folders, the GPU and commit
filters pruning them by name); any other URI through pyarrow's filesystems, DuckDB scanning the
pyarrow dataset. A launch counts only when its run's row is in `runs/` (the row is published
last: an add still under way, or interrupted, is not there yet). Results come back as Python rows
and numpy columns (no pandas, no Arrow conversion).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ncu_roof.errors import MissingToolError, UsageError
from ncu_roof.history.store import (
    LAUNCHES,
    PARTITION_VALUE,
    RUNS,
    SUFFIX,
    Dataset,
    no_history,
    parquet_dataset,
)

if TYPE_CHECKING:
    import numpy as np

Row = dict[str, Any]
GROUP = "name, grid, block, gpu, commit"  # a point: a kernel group at a commit
HIVE = "hive_partitioning = true, hive_types = {'gpu': 'VARCHAR', 'commit': 'VARCHAR'}"


class History:
    """A DuckDB connection to one dataset, and the FROM clauses of its tables: the launches of a
    GPU's commits (`launches_from`, `gpu` and `commit` as text), the run ids whose rows are in
    place (`published`: a listing, no file read) and a GPU's runs rows (`runs_from`). A local
    dataset's clauses name only the folders a question needs (nothing is globbed or opened
    before a query runs)."""

    def __init__(self, dataset: Dataset) -> None:
        try:
            import duckdb
        except ImportError:
            raise MissingToolError(
                "the history commands query the dataset with DuckDB, which is not installed",
                hint="pip install 'ncu-roof[history]'  (or: pip install duckdb)",
            ) from None
        self.dataset = dataset
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'")
        self.root = dataset.root.replace("'", "''")
        if dataset.remote is None:
            for part in (LAUNCHES, RUNS):
                if not os.path.isdir(dataset.path(part)):
                    raise no_history(dataset, part)
        else:
            self.con.register("launches", parquet_dataset(dataset, LAUNCHES))
            self.con.register("runs", parquet_dataset(dataset, RUNS))

    def _local(self, *values: str | None) -> bool:
        """Whether clauses may name folders: a local dataset, and partition values that are
        letters, digits, `.`, `_` and `-` (`store.partition_value`: safe inside a literal)."""
        return self.dataset.remote is None and all(not v or PARTITION_VALUE.fullmatch(v) for v in values)

    def launches_from(self, gpu: str | None = None, commits: Sequence[str] = ()) -> str:
        """The FROM clause of the launches of a GPU and commits (a local dataset: the files of
        their folders alone, listed here; the caller's WHERE filters them alike elsewhere)."""
        if not self._local(gpu, *commits):
            return "launches" if self.dataset.remote is not None else self._launches([])
        return self._launches(self._files(gpu, commits))

    def _files(self, gpu: str | None, commits: Sequence[str]) -> list[str]:
        """The launch files of a GPU's (every GPU's) commits (every commit's): a listing of their
        folders (a file staged by an add under way is no `*.parquet`)."""
        top = self.dataset.path(LAUNCHES)
        files = []
        for g in [f"gpu={gpu}"] if gpu else _names(top):
            folder = posixpath.join(top, g)
            for c in [f"commit={c}" for c in commits] if commits else _names(folder):
                names = _names(posixpath.join(folder, c))
                files += [posixpath.join(folder, c, n) for n in names if n.endswith(SUFFIX)]
        return files

    def _launches(self, files: Sequence[str]) -> str:
        """`read_parquet` of these files (none: every launch file, of no row)."""
        if not files:
            return f"(SELECT * FROM read_parquet('{self.root}/{LAUNCHES}/*/*/*{SUFFIX}', {HIVE}) WHERE false)"
        listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        return f"read_parquet([{listed}], {HIVE})"

    def published(self, gpu: str | None = None) -> str:
        """A query of the run ids whose rows are in `runs/` (of one GPU; a local dataset: a
        listing of its folder, no file read)."""
        if not self._local(gpu):
            return "SELECT run_id FROM runs" + (" WHERE gpu = $gpu" if gpu else "")
        folder = f"gpu={gpu}" if gpu else "*"
        return (
            f"SELECT parse_filename(file, true) AS run_id FROM glob('{self.root}/{RUNS}/{folder}/*{SUFFIX}')"
        )

    def runs_from(self, gpu: str) -> str:
        """The FROM clause of one GPU's runs rows (a local dataset: that folder's files alone)."""
        if self.dataset.remote is not None:
            return "(SELECT * FROM runs WHERE gpu = $gpu)"
        folder = self.dataset.path(RUNS, f"gpu={gpu}")
        if not os.path.isdir(folder):
            raise UsageError(
                f"no run on GPU {gpu!r} in {self.dataset.uri}", hint="history show lists the GPUs"
            )
        return f"read_parquet('{self.root}/{RUNS}/gpu={gpu.replace(chr(39), '')}/*{SUFFIX}')"


def _names(folder: str) -> list[str]:
    """The names in a folder (none if it is not there): partitions, or `*.parquet` files."""
    try:
        with os.scandir(folder) as entries:
            return [e.name for e in entries if not e.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return []


def rows(history: History, sql: str, params: dict[str, Any] | None = None) -> list[Row]:
    import duckdb

    try:
        relation = history.con.sql(sql, params=params or {})
    except duckdb.IOException as err:  # a folder with no Parquet file in it yet
        raise UsageError(
            f"the dataset cannot be read: {str(err).splitlines()[0]}", hint="add a run first"
        ) from None
    assert relation is not None
    names = relation.columns
    return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]


def runs_rows(history: History, gpu: str) -> list[Row]:
    """One GPU's runs rows (provenance), in commit-time order (a commit's time: its runs')."""
    source = history.runs_from(gpu)
    params = {"gpu": gpu} if "$gpu" in source else {}
    return rows(history, f"SELECT * FROM {source} ORDER BY time, commit, run_id", params)


def gpus_of(history: History, commit: str) -> list[str]:
    """The GPUs a commit has a published run on (its launch folders alone are read)."""
    sql = f"""SELECT DISTINCT gpu FROM {history.launches_from(commits=[commit])} WHERE commit = $commit
             AND run_id IN ({history.published()}) ORDER BY gpu"""
    return [row["gpu"] for row in rows(history, sql, {"commit": commit})]


def check_regex(history: History, pattern: str) -> None:
    import duckdb

    try:
        history.con.sql("SELECT regexp_matches('', $p) AS ok", params={"p": pattern}).fetchall()
    except duckdb.Error:
        raise UsageError(
            f"--kernel {pattern!r} is not a regular expression", hint="RE2 syntax, e.g. --kernel 'gemm|conv'"
        ) from None


def recent_commits(history: History, gpu: str | None, last: int) -> dict[str, list[str]]:
    """GPU → its last `last` commits (by their earliest run's time)."""
    sql = f"""SELECT gpu, commit, min(time) AS time FROM {history.launches_from(gpu)}
              WHERE run_id IN ({history.published(gpu)}) {"AND gpu = $gpu" if gpu else ""}
              GROUP BY gpu, commit ORDER BY time, commit"""
    by_gpu: dict[str, list[str]] = {}
    for row in rows(history, sql, {"gpu": gpu} if gpu else {}):
        by_gpu.setdefault(row["gpu"], []).append(row["commit"])
    return {key: commits[-last:] for key, commits in by_gpu.items()}


def points(history: History, kernel: str | None, gpu: str | None, last: int | None) -> list[Row]:
    """Per kernel group (name, grid, block, GPU) and commit, in commit-time order: the median,
    fastest and slowest duration, launches, runs, the verdict most launches got and the basis
    most of those launches' verdicts rest on (`roofline`, `sol`, `none`), the time (its earliest
    run's); of each GPU's last `last` commits. One scan of the launches (two with
    `last`, the second of those commits' folders alone)."""
    if kernel:
        check_regex(history, kernel)
    if last is not None and last < 1:
        raise UsageError(f"--last {last}: must be at least 1", hint="e.g. --last 50")
    if (
        gpu
        and history.dataset.remote is None
        and not os.path.isdir(history.dataset.path(LAUNCHES, f"gpu={gpu}"))
    ):
        keys = sorted(name.removeprefix("gpu=") for name in os.listdir(history.dataset.path(LAUNCHES)))
        raise UsageError(
            f"no run on GPU {gpu!r} in {history.dataset.uri}", hint="its GPUs: " + ", ".join(keys)
        )
    scopes: list[tuple[str | None, list[str]]] = [(gpu, [])]
    if last is not None:
        scopes = list(recent_commits(history, gpu, last).items())
    found: list[Row] = []
    for scope, commits in scopes:
        params: dict[str, Any] = {}
        where = [f"run_id IN ({history.published(scope)})"]
        if scope:
            where.append("gpu = $gpu")
            params["gpu"] = scope
        if commits:
            where.append("commit IN (SELECT unnest($commits))")
            params["commits"] = commits
        if kernel:
            where.append("regexp_matches(name, $kernel)")
            params["kernel"] = kernel
        sql = f"""
            WITH launch AS (
                SELECT name, grid, block, gpu, commit, duration_s, run_id, time, bound, verdict_basis,
                       count(*) OVER (PARTITION BY {GROUP}, bound) AS verdict_launches,
                       count(*) OVER (PARTITION BY {GROUP}, bound, verdict_basis) AS basis_launches
                FROM {history.launches_from(scope, commits)} WHERE {" AND ".join(where)})
            SELECT * EXCLUDE (pick), pick.verdict AS verdict, pick.basis AS basis FROM (
                SELECT {GROUP},
                       median(duration_s) AS median_duration_s, min(duration_s) AS min_duration_s,
                       max(duration_s) AS max_duration_s, count(*) AS launches,
                       count(DISTINCT run_id) AS runs, min(time) AS time,
                       arg_max({{'verdict': bound, 'basis': verdict_basis}},
                               [verdict_launches, basis_launches]) AS pick
                FROM launch GROUP BY {GROUP})"""
        found += rows(history, sql, params)
    return sorted(
        found, key=lambda r: (r["name"], r["grid"] or "", r["block"] or "", r["gpu"], r["time"], r["commit"])
    )


def durations(history: History, gpu: str, commits: Sequence[str]) -> dict[str, np.ndarray]:
    """Every published launch of these commits on this GPU: name, grid, block, commit, run,
    duration as numpy columns."""
    sql = f"""
        SELECT name, grid, block, commit, run_id, duration_s FROM {history.launches_from(gpu, commits)}
        WHERE gpu = $gpu AND commit IN (SELECT unnest($commits))
          AND run_id IN ({history.published(gpu)})"""
    relation = history.con.sql(sql, params={"gpu": gpu, "commits": list(commits)})
    assert relation is not None
    columns: dict[str, np.ndarray] = relation.fetchnumpy()
    return columns
