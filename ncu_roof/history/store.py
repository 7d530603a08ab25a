"""Where a history lives: a folder (or any URI a pyarrow filesystem reaches) of plain Parquet.

    DATASET/launches/gpu=KEY/commit=SHA/RUN.parquet   one row per launch: the lean columns
    DATASET/details/gpu=KEY/commit=SHA/RUN.parquet    the same launches: every column, counters
    DATASET/runs/gpu=KEY/RUN.parquet                  the run's provenance on that GPU (one row)

Every file is named by its run's id (a hash of what was profiled: `record.run_id`), so two jobs
adding different runs never write the same file, and no file is ever rewritten by an add. A file
is written under a temporary name that no reader globs (a leading `.` and no `.parquet` suffix)
and renamed into place; the run's rows in `runs/` are renamed last, so a run is either whole or
absent to `history show` and `check` (which count a launch only when its run's row is there),
and an add interrupted at any point leaves the dataset as it was (what it staged or renamed is
removed on the way out, unless every file was in place).
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ncu_roof.errors import BadInputError, OutputError, UsageError

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs

LAUNCHES = "launches"
DETAILS = "details"
RUNS = "runs"
SUFFIX = ".parquet"
STATISTICS = ("name", "grid", "block", "duration_s", "run_id", "time", "commit")
PARTITION_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class Dataset:
    """A history's root folder, and the filesystem it is on (a local folder's made when first
    used: `show` and `check` read a local dataset through DuckDB alone)."""

    root: str
    uri: str
    remote: pafs.FileSystem | None = None  # None: the local disk

    @cached_property
    def fs(self) -> pafs.FileSystem:
        if self.remote is not None:
            return self.remote
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem()

    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)


def open_dataset(uri: str) -> Dataset:
    """A local folder (relative or absolute) or a URI (`file://`, `s3://…`: pyarrow's filesystems)."""
    import os

    if "://" not in uri:
        return Dataset(os.path.abspath(uri).replace(os.sep, "/"), uri)
    import pyarrow.fs as pafs

    try:
        fs, root = pafs.FileSystem.from_uri(uri)
    except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise UsageError(
            f"cannot open dataset {uri}: {err}", hint="a folder, or a URI pyarrow reads"
        ) from None
    local = isinstance(fs, pafs.LocalFileSystem)
    return Dataset(root.rstrip("/"), uri, None if local else fs)


def partition_value(value: str, what: str) -> str:
    """A commit SHA or a GPU key as a folder name: letters, digits, `.`, `_`, `-`."""
    if not PARTITION_VALUE.fullmatch(value):
        raise UsageError(
            f"{what} {value!r} cannot name a partition",
            hint=f"a {what} of letters, digits, '.', '_' and '-' (at most 128)",
        )
    return value


def launches_path(dataset: Dataset, gpu: str, commit: str, run_id: str, part: str = LAUNCHES) -> str:
    """A run's launch file on one GPU (`part`: `launches`, or `details`)."""
    return dataset.path(part, f"gpu={gpu}", f"commit={commit}", run_id + SUFFIX)


def runs_path(dataset: Dataset, gpu: str, run_id: str) -> str:
    return dataset.path(RUNS, f"gpu={gpu}", run_id + SUFFIX)


def exists(dataset: Dataset, path: str) -> bool:
    import pyarrow.fs as pafs

    return dataset.fs.get_file_info(path).type is not pafs.FileType.NotFound


def _staged(path: str) -> str:
    folder, name = posixpath.split(path)
    return posixpath.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")


def write_parquet(dataset: Dataset, table: pa.Table, path: str) -> None:
    import pyarrow.parquet as pq

    try:
        dataset.fs.create_dir(posixpath.dirname(path), recursive=True)
    except OSError as err:  # a file where a folder belongs, no permission, a full disk
        raise OutputError(
            f"cannot write to dataset {dataset.uri}: {err.strerror or err}",
            hint="give a folder (new or one `history add` made) that this user can write",
        ) from None
    # a small footer (no Arrow schema copy, statistics only where a filter uses them): a query
    # over a GPU's 500 commits opens 500 files, and reading each footer is most of the cost
    stats = [c for c in STATISTICS if c in table.column_names]
    pq.write_table(
        table, path, filesystem=dataset.fs, compression="zstd", store_schema=False, write_statistics=stats
    )


def publish(dataset: Dataset, files: Mapping[str, pa.Table], last: Sequence[str]) -> None:
    """Write every table to its path: all staged first, then renamed into place, `last` last.
    On any failure or interrupt, the staged files and those already renamed are removed."""
    staged: dict[str, str] = {}
    placed: list[str] = []
    order = [p for p in files if p not in last] + list(last)
    try:
        for path in order:
            staged[path] = _staged(path)
            write_parquet(dataset, files[path], staged[path])
        for path in order:
            _move(dataset, staged[path], path)
            del staged[path]
            placed.append(path)
    except BaseException:
        for path in [*staged.values(), *(placed if len(placed) < len(order) else [])]:
            remove(dataset, path)
        raise


def replace_file(dataset: Dataset, table: pa.Table, path: str) -> None:
    """One file rewritten atomically (`history rebuild`, `add --replace`): staged, then renamed
    over the old one."""
    staged = _staged(path)
    try:
        write_parquet(dataset, table, staged)
        _move(dataset, staged, path)
    except BaseException:
        remove(dataset, staged)
        raise


def _move(dataset: Dataset, source: str, target: str) -> None:
    """A rename on a local disk (atomic); a copy and a delete on an object store."""
    dataset.fs.move(source, target)


def remove(dataset: Dataset, path: str) -> None:
    with contextlib.suppress(OSError):  # never written, or already gone
        dataset.fs.delete_file(path)


def run_files(dataset: Dataset) -> list[str]:
    """The paths of every run's rows (`runs/gpu=*/*.parquet`), sorted."""
    import pyarrow.fs as pafs

    selector = pafs.FileSelector(dataset.path(RUNS), allow_not_found=True, recursive=True)
    infos = dataset.fs.get_file_info(selector)
    return sorted(i.path for i in infos if i.is_file and i.base_name.endswith(SUFFIX))


def no_history(dataset: Dataset, part: str) -> BadInputError:
    return BadInputError(
        f"{dataset.uri} holds no history ({part}/ is missing)",
        hint=f"add a run first: ncu-roof history add {dataset.uri} RUN.ncu-rep --commit SHA",
    )


def stored_rows(dataset: Dataset, run_id: str) -> list[dict[str, Any]]:
    """The runs rows of `run_id` already in the dataset (a listing of `runs/`, then those files)."""
    import pyarrow.parquet as pq

    name = run_id + SUFFIX
    paths = [p for p in run_files(dataset) if posixpath.basename(p) == name]
    return [row for p in paths for row in pq.read_table(p, filesystem=dataset.fs).to_pylist()]


def parquet_dataset(dataset: Dataset, part: str) -> ds.Dataset:
    """`launches/`, `details/` (their partitions read as text) or `runs/` (its rows name their
    GPU) as a pyarrow dataset."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if not exists(dataset, dataset.path(part)):
        raise no_history(dataset, part)
    keys = pa.schema([("gpu", pa.string()), ("commit", pa.string())])
    partitioning = ds.partitioning(keys, flavor="hive") if part == LAUNCHES else None
    return ds.dataset(dataset.path(part), filesystem=dataset.fs, format="parquet", partitioning=partitioning)
