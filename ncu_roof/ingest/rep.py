"""`.ncu-rep` / `.ncu-repz` reports: NVIDIA's `ncu_report` module, else `ncu --import`."""

from __future__ import annotations

import mmap
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.ncu import find_ncu, import_raw_csv
from ncu_roof.base.units import si_factor
from ncu_roof.errors import BadInputError, MissingToolError
from ncu_roof.ingest import MAGIC
from ncu_roof.ingest.nvtx import nvtx_text

if TYPE_CHECKING:  # the table (numpy, Polars) loads only once read: `ncu_report` must load first
    from ncu_roof.ingest.table import RunTable

Row = dict[str, Any]

_VERSION = re.compile(rb"(20\d\d\.\d+\.\d+(?:\.\d+)?) \(build")
REP_HINT = "pip install 'ncu-roof[rep]' (NVIDIA's ncu-report, no GPU needed), or put `ncu` on PATH"
# a .ncu-repz is the report as one zstd stream: ncu_report (2026.3) reads it so, by its suffix
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def report_version(raw: bytes | mmap.mmap) -> str | None:
    """The ncu version that wrote a report: only stored as text inside the file (inside its zstd
    stream for a `.ncu-repz`, read a few MB at a time until found)."""
    if raw[: len(ZSTD_MAGIC)] != ZSTD_MAGIC:
        match = _VERSION.search(raw)
        return match.group(1).decode() if match else None
    import pyarrow as pa

    stream = pa.CompressedInputStream(pa.BufferReader(pa.py_buffer(raw)), "zstd")
    tail = b""
    with suppress(OSError):  # damaged past what ncu_report read
        while chunk := stream.read(1 << 22):
            if match := _VERSION.search(tail + chunk):
                return match.group(1).decode()
            tail = chunk[-64:]  # a version cut by the chunk's end is found in the next
    return None


def read_report(path: str, raw: bytes | mmap.mmap) -> RunTable:
    """`raw`: the report's bytes, or a memory map of them (only its header and version are read)."""
    from ncu_roof.ingest.table import InputFormat, RunTable, row_frame, settle_shapes

    if (rows := report_rows(path)) is None:  # no ncu_report
        return read_with_cli(path, raw)
    if not rows and path.endswith(".ncu-repz"):
        _refuse_compressed(path, raw)
    if not rows:
        raise BadInputError(
            f"{path}: the report holds no profiled kernel (truncated or damaged file?)",
            hint="profile again with `ncu-roof profile -- ./app`",
        )
    for row in rows:  # a launch without a name: what `ncu_report` returns for a report cut off mid-record
        # (a report cut exactly between two launches cannot be told from a shorter one)
        if not isinstance(row.get("name"), str) or not row["name"].strip():
            raise BadInputError(
                f"{path}: launch {row['id']} has no kernel name: the report is truncated or damaged",
                hint="copy the report again (it may still be being written), or profile again",
            )
    launches = settle_shapes(row_frame(rows))
    return RunTable(path=path, format=InputFormat.NCU_REP, ncu_version=report_version(raw), launches=launches)


def _refuse_compressed(path: str, raw: bytes | mmap.mmap) -> None:
    """A `.ncu-repz` that `ncu_report` read nothing from: one that is not zstd-compressed (a
    `.ncu-rep` renamed, say), or one this `ncu_report` cannot read or that is damaged."""
    if not len(raw):
        raise BadInputError(f"{path}: file is empty", hint="profile again with `ncu-roof profile -- ./app`")
    if raw[: len(ZSTD_MAGIC)] != ZSTD_MAGIC:
        raise BadInputError(
            f"{path}: not a compressed report (a .ncu-repz is zstd-compressed; this file is not)",
            hint="it is an uncompressed report: rename it to FILE.ncu-rep"
            if raw[: len(MAGIC)] == MAGIC
            else "pass the .ncu-repz that Nsight Compute 2025.4+ wrote, or its .ncu-rep",
        )
    raise BadInputError(
        f"{path}: the installed ncu_report cannot read this compressed report (or it is damaged)",
        hint="pip install -U ncu-report (Nsight Compute 2025.4+ writes .ncu-repz), "
        "or decompress it: zstd -d FILE.ncu-repz -o FILE.ncu-rep",
    )


def read_with_cli(path: str, raw: bytes | mmap.mmap, page: bytes | None = None) -> RunTable:
    """`ncu --import` when `ncu_report` is not installed: its raw `page` (`import_raw_csv`) where
    the caller ran it, else that of the ncu `find_ncu` finds."""
    from ncu_roof.ingest.csvblocks import find_headers
    from ncu_roof.ingest.csvfile import read_csv_file
    from ncu_roof.ingest.table import InputFormat, RunTable

    if page is None:
        try:
            tool = find_ncu()
        except MissingToolError as err:
            what = ".ncu-repz needs ncu_report or ncu, 2025.4 or later"
            what = what if path.endswith(".ncu-repz") else ".ncu-rep needs ncu_report or ncu"
            raise MissingToolError(f"{path}: reading {what}", hint=REP_HINT) from err
        page = import_raw_csv(tool, path)
    launches = read_csv_file(path, page, find_headers(page)[0], None)().launches
    return RunTable(path=path, format=InputFormat.NCU_REP, ncu_version=report_version(raw), launches=launches)


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """ncu_report's C++ library logs to file descriptor 2; keep that off the user's terminal."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _ncu_report() -> Any:
    """NVIDIA's `ncu_report` module (its C++ library logs to fd 2 as it loads), or None."""
    try:
        with _quiet_stderr():
            import ncu_report
    except ImportError:
        return None
    return ncu_report


def ncu_report_installed() -> bool:
    """Whether NVIDIA's `ncu_report` module (the reader `read_report` prefers) can be imported."""
    return _ncu_report() is not None


def report_rows(path: str) -> list[Row] | None:
    """Every launch's identity and the metrics the recipe reads; None without `ncu_report`."""
    if (ncu_report := _ncu_report()) is None:
        return None
    with _quiet_stderr():
        context = ncu_report.load_report(path)
    wanted: dict[tuple[str, ...], list[str]] = {}  # launches of one report share their metric names
    # each range is held while its launches are read: an action outlives a range freed under it only
    # by chance (ncu_report 2025.3 on an H200 crashed reading a unit through such an action)
    ranges = [context.range_by_idx(i) for i in range(context.num_ranges())]
    actions = ((rng, rng.action_by_idx(j)) for rng in ranges for j in range(rng.num_actions()))
    return [_action_row(action, i, wanted) for i, (_, action) in enumerate(actions)]


def _action_row(action: Any, index: int, wanted: dict[tuple[str, ...], list[str]]) -> Row:
    """One launch's identity and the metrics the recipe reads (only those are fetched)."""
    row: Row = {"run": "0", "id": index, "name": action.name(action.NameBase_DEMANGLED)}
    names = tuple(action.metric_names())
    if names not in wanted:
        wanted[names] = [name for name in names if is_wanted(name)]
    for name in wanted[names]:
        metric = action.metric_by_name(name)
        value = metric.value() if metric is not None else None
        if value is None or isinstance(value, str):  # a metric without a value has no unit to ask
            row[name] = float("nan") if value is None else value  # (ncu_report 2025.3 crashes then)
            continue
        unit = metric.unit() if hasattr(metric, "unit") else ""
        row[name] = float(value) * si_factor(unit or "")
    row["device_name"] = row.pop("device__attribute_display_name", None)
    row["device"] = _int_metric(action, "device__attribute_device_index") or 0
    row["process_id"] = _int_metric(action, "launch__process_id")
    # the launch's NVTX ranges (`INvtxState`: per domain, its push/pop stack and start/end ranges)
    state = action.nvtx_state() if hasattr(action, "nvtx_state") else None
    domains = [state.domain_by_id(i) for i in state.domains()] if state is not None else []
    row["nvtx"] = nvtx_text(
        (d.name(), tuple(d.push_pop_ranges()), tuple(d.start_end_ranges())) for d in domains if d is not None
    )
    return row  # grid, block and cc: `settle_shapes`, from the launch__* and device__* metrics


def _int_metric(action: Any, name: str) -> int | None:
    metric = action.metric_by_name(name)
    value = metric.value() if metric is not None else None
    return int(value) if isinstance(value, (int, float)) else None
