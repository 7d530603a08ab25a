"""`.ncu-rep` / `.ncu-repz` reports: NVIDIA's `ncu_report` module, else `ncu --import`."""

from __future__ import annotations

import mmap
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ncu_roof.errors import BadInputError, MissingToolError
from ncu_roof.ingest.nvtx import nvtx_text
from ncu_roof.ingest.table import InputFormat, RunTable, row_columns, settle_shapes
from ncu_roof.metrics import is_wanted
from ncu_roof.ncu import NcuTool, find_ncu, import_raw_csv
from ncu_roof.units import si_factor

MAGIC = b"NVR\x00"
_VERSION = re.compile(rb"(20\d\d\.\d+\.\d+(?:\.\d+)?) \(build")
REP_HINT = "pip install 'ncu-roof[rep]' (NVIDIA's ncu-report, no GPU needed), or put `ncu` on PATH"


def report_version(raw: bytes | mmap.mmap) -> str | None:
    """The ncu version that wrote a report: only stored as text inside the file."""
    match = _VERSION.search(raw)
    return match.group(1).decode() if match else None


def read_report(path: str, raw: bytes | mmap.mmap) -> RunTable:
    """`raw`: the report's bytes, or a memory map of them (only its header and version are read)."""
    if raw[: len(MAGIC)] != MAGIC and not path.endswith(".ncu-repz"):
        raise BadInputError(
            f"{path}: not an Nsight Compute report (no NVR header)",
            hint="pass the `.ncu-rep` written by `ncu -o`, or a CSV from `ncu --csv`",
        )
    try:
        with _quiet_stderr():
            import ncu_report
    except ImportError:
        return read_with_cli(path, raw)
    with _quiet_stderr():
        context = ncu_report.load_report(path)
    wanted: dict[tuple[str, ...], list[str]] = {}  # launches of one report share their metric names
    rows = [_action_row(action, i, wanted) for i, action in enumerate(_actions(context))]
    if not rows:
        raise BadInputError(
            f"{path}: the report holds no profiled kernel (truncated or damaged file?)",
            hint="profile again with `ncu-roof profile -- ./app`",
        )
    _check_complete(path, rows)
    columns = settle_shapes(row_columns(rows))
    return RunTable(path=path, format=InputFormat.NCU_REP, ncu_version=report_version(raw), columns=columns)


def _check_complete(path: str, rows: list[dict[str, Any]]) -> None:
    """A launch without a name is what `ncu_report` returns for a report cut off mid-record.

    (A report cut exactly between two launches cannot be told from a shorter one.)
    """
    for row in rows:
        name = row.get("name")
        if not isinstance(name, str) or not name.strip():
            raise BadInputError(
                f"{path}: launch {row['id']} has no kernel name: the report is truncated or damaged",
                hint="copy the report again (it may still be being written), or profile again",
            )


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


def ncu_report_installed() -> bool:
    """Whether NVIDIA's `ncu_report` module (the reader `read_report` prefers) can be imported."""
    try:
        with _quiet_stderr():  # as `read_report` imports it: its C++ library logs to fd 2
            import ncu_report  # noqa: F401
    except ImportError:
        return False
    return True


def _actions(context: Any) -> list[Any]:
    return [
        rng.action_by_idx(j)
        for i in range(context.num_ranges())
        for rng in [context.range_by_idx(i)]
        for j in range(rng.num_actions())
    ]


def _action_row(action: Any, index: int, wanted: dict[tuple[str, ...], list[str]]) -> dict[str, Any]:
    """One launch's identity and the metrics the recipe reads (only those are fetched)."""
    row: dict[str, Any] = {"run": "0", "id": index, "name": action.name(action.NameBase_DEMANGLED)}
    names = tuple(action.metric_names())
    if names not in wanted:
        wanted[names] = [name for name in names if is_wanted(name)]
    for name in wanted[names]:
        metric = action.metric_by_name(name)
        value = metric.value() if metric is not None else None
        if isinstance(value, str):
            row[name] = value
            continue
        unit = metric.unit() if hasattr(metric, "unit") else ""
        row[name] = np.nan if value is None else float(value) * si_factor(unit or "")
    row["device_name"] = row.pop("device__attribute_display_name", None)
    row["device"] = _device_index(action)
    row["process_id"] = _int_metric(action, "launch__process_id")
    row["nvtx"] = _nvtx(action)
    return row  # grid, block and cc: `settle_shapes`, from the launch__* and device__* metrics


def _nvtx(action: Any) -> str | None:
    """The launch's NVTX ranges (`INvtxState`: per domain, its push/pop stack and start/end ranges)."""
    state = action.nvtx_state() if hasattr(action, "nvtx_state") else None
    if state is None:
        return None
    domains = [state.domain_by_id(i) for i in state.domains()]
    return nvtx_text(
        (d.name(), tuple(d.push_pop_ranges()), tuple(d.start_end_ranges())) for d in domains if d is not None
    )


def _int_metric(action: Any, name: str) -> int | None:
    metric = action.metric_by_name(name)
    value = metric.value() if metric is not None else None
    return int(value) if isinstance(value, (int, float)) else None


def _device_index(action: Any) -> int:
    value = _int_metric(action, "device__attribute_device_index")
    return value if value is not None else 0


def read_with_cli(path: str, raw: bytes | mmap.mmap, tool: NcuTool | None = None) -> RunTable:
    """`ncu --import` when `ncu_report` is not installed: `tool`, else the ncu `find_ncu` finds."""
    from ncu_roof.ingest.csvblocks import find_headers
    from ncu_roof.ingest.csvfile import read_csv_file

    if tool is None:
        try:
            tool = find_ncu()
        except MissingToolError as err:
            message = f"{path}: reading .ncu-rep needs ncu_report or ncu"
            raise MissingToolError(message, hint=REP_HINT) from err
    page = import_raw_csv(tool, path)
    table = read_csv_file(path, page, find_headers(page).pages, None)
    version = report_version(raw)
    return RunTable(path=path, format=InputFormat.NCU_REP, ncu_version=version, columns=table.columns)
