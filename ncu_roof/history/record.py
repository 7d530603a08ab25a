"""One profiled run as history rows: its launches (quantities, verdicts, the counters read) and
its provenance, one row per GPU.

The launch rows are `ncu_roof.analysis.launches` (every quantity and verdict of `analyze`, units in the
names) plus, per launch, what the reader read (`history.counters`: two map columns), so that
`history rebuild` can re-derive the past with a later recipe: the `details` table. The
`launches` table holds their `LEAN` columns, joined to the details on (`run_id`, `launch`).

The run's id is a hash of the commit and of every input's bytes (in any order): the same files
added for the same commit twice are one run.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ncu_roof import pipeline
from ncu_roof.errors import BadInputError, UsageError
from ncu_roof.version import __version__

if TYPE_CHECKING:
    import pyarrow as pa

    from ncu_roof.analysis.core import Analysis
    from ncu_roof.ingest import RunTable

CHUNK_BYTES = 1 << 20
LEAN = (  # the launches table's columns (details/ holds every column and the counters)
    *("run_id", "launch", "time", "name", "grid", "block", "nvtx", "id", "run", "device_name"),
    *("duration_s", "flop_total", "bytes_dram", "achieved_flop_per_s", "attainable_flop_per_s"),
    *("pct_of_roof", "bound", "binding", "verdict_basis", "ncu_version"),
)
CLOCK_CONTROLS = ("base", "none")  # ncu --clock-control: locked at base clocks, or left free


@dataclass(frozen=True)
class Provenance:
    """What the caller says of a run (the rest is read from the inputs)."""

    commit: str
    time: datetime | None = None  # None: now (not stated: a re-add of the same run keeps its time)
    branch: str | None = None
    labels: Mapping[str, str] | None = None
    clock_control: str | None = None  # "base" (locked), "none" (free), None: not said
    driver: str | None = None
    host: str | None = None
    gpu: str | None = None  # --gpu KEY: the roofs the analysis used (rebuild uses them again)


@dataclass(frozen=True)
class Run:
    run_id: str
    launches: Mapping[str, pa.Table]  # GPU key → that GPU's launch rows (`LEAN` columns)
    details: Mapping[str, pa.Table]  # GPU key → the same launches' every column and counters
    runs: Mapping[str, pa.Table]  # GPU key → the run's provenance row on that GPU


def parse_time(text: str | None) -> datetime | None:
    """ISO-8601 (`2026-12-04T18:00:00Z`, `2026-12-04`), timezone-aware (UTC when none is given);
    None: not given (now, when the run is added)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--time {text!r} is not ISO-8601", hint="e.g. --time 2026-12-04T18:00:00Z"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def parse_labels(items: Sequence[str]) -> dict[str, str]:
    """`KEY=VALUE` strings → a mapping (a repeated key: the last one)."""
    labels: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--label {item!r} is not KEY=VALUE", hint="e.g. --label runner=h100-1")
        labels[key.strip()] = value
    return labels


def recorded_sm_count(launches: pl.DataFrame) -> int | None:
    """The SM count one device's launches recorded (`SM_COUNT_METRICS`: their median), or None
    (never the built-in GPU table's)."""
    from ncu_roof.base.metrics import SM_COUNT_METRICS

    for metric in SM_COUNT_METRICS:
        values = launches.get_column(metric).to_numpy() if metric in launches.columns else None
        if values is not None and np.isfinite(values).any():
            return round(float(np.nanmedian(values)))
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def gpu_key(launches: pl.DataFrame) -> str:
    """One device's partition, from what its launches recorded alone: ncu's device name, the
    compute capability and the SM count, as a slug (`nvidia-h100-pcie-cc90-114sm`; a part not
    recorded is left out, `unknown` if none is). No table of GPUs is consulted, so a device the
    built-in table lacks, or a later version's table, keeps the key."""
    from ncu_roof.gpus.roofs import first_label

    name, cc, sms = (
        first_label(launches.get_column("device_name").to_numpy()),
        first_label(launches.get_column("cc").to_numpy()),
        recorded_sm_count(launches),
    )
    tail = [f"cc{_slug(cc).replace('-', '')}" if cc and _slug(cc) else "", f"{sms}sm" if sms else ""]
    suffix = "".join(f"-{part}" for part in tail if part)[:64]  # a few characters, as ncu records them
    head = _slug(name or "")[: 128 - len(suffix)].strip("-") or "unknown"
    return head + suffix


def run_id(commit: str, paths: Sequence[str]) -> str:
    """The hash of the commit and of each input's bytes (sorted: the order they were named in
    does not count)."""
    digests = []
    for path in paths:
        if path == "-":
            raise UsageError("history add cannot read stdin", hint="save it to a file and add that file")
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                while chunk := handle.read(CHUNK_BYTES):
                    digest.update(chunk)
        except OSError as err:
            raise BadInputError(f"{path}: {err.strerror or err}", hint="check the path") from None
        digests.append(digest.hexdigest())
    whole = hashlib.sha256("\n".join([commit, *sorted(digests)]).encode())
    return whole.hexdigest()[:20]


def device_tables(tables: Sequence[RunTable]) -> list[RunTable]:
    """Each table cut into one table per (ncu run, device), in the order of their first launch:
    the analysis of these lists its launches in exactly their row order."""
    return [
        replace(table, launches=part)
        for table in tables
        for part in table.launches.partition_by("run", "device", maintain_order=True)
    ]


def metric_set(tables: Sequence[RunTable]) -> str:
    """The hash of the collected metric names (a changed set is a change of method)."""
    names = sorted({c for t in tables for c in t.metric_columns})
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


def launch_table(analysis: Analysis, tables: Sequence[RunTable], run: str) -> pa.Table:
    """The launch rows of an analysis of `device_tables`: quantities, verdicts, counters."""
    import pyarrow as pa

    from ncu_roof.analysis.launches import to_arrow
    from ncu_roof.history.counters import counter_columns

    table = to_arrow(analysis)
    for name, array in counter_columns(tables).items():
        table = table.append_column(name, array)
    n = table.num_rows
    table = table.append_column("launch", pl.int_range(n, dtype=pl.Int64, eager=True).to_arrow())
    return table.append_column(
        "run_id", pl.repeat(run, n, dtype=pl.String, eager=True).to_arrow().cast(pa.string())
    )


def split_rows(table: pa.Table, keys: Sequence[str]) -> dict[str, pa.Table]:
    """The rows of each key (one key per row), keys in first-seen order."""
    import pyarrow.compute as pc

    row_keys = pl.Series(keys, dtype=pl.String).to_arrow()
    return {k: table.filter(pc.equal(row_keys, k)) for k in dict.fromkeys(keys)}


def analyze_tables(tables: Sequence[RunTable], gpu: str | None) -> Analysis:
    return pipeline.run(list(tables), pipeline.Request(gpu=gpu))


def input_paths(paths: Sequence[str]) -> list[str]:
    """The inputs as `analyze` expands them (directories, globs)."""
    return [p for p in pipeline.expand(list(paths), lambda _: None) if isinstance(p, str)]


def build_run(items: Sequence[str], provenance: Provenance, rid: str) -> Run:
    """Read and analyze the (expanded) inputs as `analyze` does, and lay them out as the rows of
    the run `rid`."""
    provenance = replace(provenance, time=provenance.time or datetime.now(UTC))
    assert provenance.time is not None
    tables = device_tables(pipeline.read_tables(items))
    analysis = analyze_tables(tables, provenance.gpu)
    pipeline.refuse_failed_captures(analysis)  # a capture that measured nothing is no point of a trend
    details = with_time(launch_table(analysis, tables, rid), provenance.time)
    keys = [gpu_key(t.launches) for t in tables]  # one device a table: analysis.devices[i] is tables[i]'s
    by_gpu = split_rows(details, [keys[i] for i in analysis.launches.get_column("device").to_list()])
    counts = {k: t.num_rows for k, t in by_gpu.items()}
    runs = runs_table(rid, analysis, tables, provenance, keys, items, counts)
    one_row = {k: runs.slice(i, 1) for i, k in enumerate(counts)}
    return Run(rid, {k: lean(t) for k, t in by_gpu.items()}, by_gpu, one_row)


def lean(details: pa.Table) -> pa.Table:
    """The `LEAN` columns of the launch rows: what trends and the gate read. A file of a few
    columns opens ~4x faster than one of 120, and a GPU's history is a file per commit."""
    return details.select([c for c in LEAN if c in details.column_names])


def with_time(launches: pa.Table, when: datetime) -> pa.Table:
    """The launch rows with their run's `time` (what orders commits without reading `runs/`)."""
    return launches.append_column("time", time_array([when] * launches.num_rows))


def time_array(values: Sequence[datetime]) -> pa.Array:
    """UTC times as an Arrow timestamp[us, UTC] array."""
    return pl.Series(values, dtype=pl.Datetime("us", "UTC")).to_arrow()


def runs_table(
    rid: str,
    analysis: Analysis,
    tables: Sequence[RunTable],
    provenance: Provenance,
    keys: Sequence[str],
    paths: Sequence[str],
    counts: Mapping[str, int],
) -> pa.Table:
    """One row per GPU of the run: commit, time, branch, labels, the GPU as the run recorded it
    (name, CC, SM count; the built-in GPU it matches, for information), its clocks, the driver,
    ncu's version, the metric set, the host, and what the run was read from."""
    from ncu_roof.gpus.lookup import match_gpu
    from ncu_roof.gpus.roofs import first_label

    rows = []
    for key in dict.fromkeys(keys):
        devices = [d for d, k in zip(analysis.devices, keys, strict=True) if k == key]
        launches = next(t.launches for t, k in zip(tables, keys, strict=True) if k == key)
        clocks = [d.sm_clock_hz for d in devices if d.sm_clock_hz is not None]
        ncu = sorted({i.ncu_version for i in analysis.inputs if i.ncu_version})
        name = first_label(launches.get_column("device_name").to_numpy())
        sku = match_gpu(name)
        sms = recorded_sm_count(launches)
        rows.append(
            {
                "run_id": rid,
                "gpu": key,
                "commit": provenance.commit,
                "time": provenance.time,
                "branch": provenance.branch,
                "labels": json.dumps(dict(provenance.labels or {}), sort_keys=True),
                "device_name": name,
                "cc": first_label(launches.get_column("cc").to_numpy()),
                "gpu_sku": sku.key if sku is not None else None,
                "sm_count": float(sms) if sms is not None else None,
                "sm_clock_hz": float(np.median(clocks)) if clocks else None,
                "clock_control": provenance.clock_control,
                "driver": provenance.driver,
                "ncu_version": ", ".join(ncu) or None,
                "metric_set": metric_set(tables),
                "host": provenance.host or socket.gethostname(),
                "roofs_gpu": provenance.gpu,
                "inputs": json.dumps(list(paths)),
                "launches": counts[key],
                "ncu_roof_version": __version__,
            }
        )
    return rows_table(rows, runs_schema())


def rows_table(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows as a table of `schema`, made by Polars (pyarrow's own conversion of Python values
    imports pandas, ~0.9 s of an add)."""
    kinds = pl.DataFrame(schema.empty_table()).schema
    return pl.DataFrame(list(rows), schema=kinds).to_arrow().cast(schema)


def runs_schema() -> pa.Schema:
    """The runs table's columns (built when pyarrow is loaded)."""
    import pyarrow as pa

    text = pa.string()
    return pa.schema(
        [
            *(("run_id", text), ("gpu", text), ("commit", text)),
            ("time", pa.timestamp("us", tz="UTC")),
            *(("branch", text), ("labels", text), ("device_name", text), ("cc", text), ("gpu_sku", text)),
            *(("sm_count", pa.float64()), ("sm_clock_hz", pa.float64())),
            *(("clock_control", text), ("driver", text), ("ncu_version", text), ("metric_set", text)),
            *(("host", text), ("roofs_gpu", text), ("inputs", text), ("launches", pa.int64())),
            ("ncu_roof_version", text),
        ]
    )
