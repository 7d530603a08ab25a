"""A report's launches through NVIDIA's `ncu_report`, as plain rows (dicts of floats and texts);
`ingest.rep` makes the table of them."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.units import si_factor
from ncu_roof.ingest.nvtx import nvtx_text

Row = dict[str, Any]


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
    ncu_report = _ncu_report()
    if ncu_report is None:
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
    device = _int_metric(action, "device__attribute_device_index")
    row["device"] = device if device is not None else 0
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
