"""What every reader returns: one row per profiled launch, identity columns plus ncu metrics in SI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ncu_roof.units import cell_number

if TYPE_CHECKING:  # the readers of raw pages and reports, and the analysis, never load pandas
    import pandas as pd


class InputFormat(Enum):
    NCU_REP = "ncu-rep"
    RAW_CSV = "raw-csv"
    DETAILS_CSV = "details-csv"
    CONSOLE_TEXT = "console-text"  # ncu's own printout (details page or --print-summary)
    SUMMARY_CSV = "summary-csv"  # `--print-summary per-kernel|per-gpu --csv`


IDENTITY_COLUMNS = (
    "run",
    "id",
    "process_id",
    "name",
    "device",
    "cc",
    "device_name",
    "grid",
    "block",
    "nvtx",  # the launch's NVTX ranges as one text (ingest/nvtx.py), or None
    "input_notes",  # a tuple of notes on this launch's input (excluded values), or None
)
INTEGER_COLUMNS = ("id", "device")  # float64 in `RunTable.columns` (NaN where missing), Int64 in `frame`

Columns = Mapping[str, np.ndarray]


def identity_columns(values: Mapping[str, Any], rows: int) -> dict[str, np.ndarray]:
    """Every identity column, in `IDENTITY_COLUMNS` order: ID and device as float64 (NaN where
    missing), the others as objects (None where a reader has none; a scalar is every row's)."""
    out: dict[str, np.ndarray] = {}
    for column in IDENTITY_COLUMNS:
        value = values.get(column)
        if column in INTEGER_COLUMNS:
            out[column] = _integers(value, rows)
            continue
        cells = np.empty(rows, dtype=object)
        cells[:] = value if isinstance(value, (list, tuple, np.ndarray)) else [value] * rows
        out[column] = cells
    return out


def _integers(value: Any, rows: int) -> np.ndarray:
    if value is None:
        return np.full(rows, np.nan)
    cells = np.asarray(value)
    if cells.dtype.kind in "iuf":
        return cells.astype("float64")
    return np.array([cell_number(v) for v in cells.tolist()], dtype="float64")


def row_columns(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """A reader's launches as rows (dicts) → `RunTable.columns`. A metric a launch lacks is NaN
    there, an identity column it lacks None; a metric column is float64 unless some launch gives
    it as text."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    present = {c: [row.get(c) for row in rows] for c in IDENTITY_COLUMNS if c in names}
    metrics: dict[str, np.ndarray] = {}
    for name in names:
        if name in IDENTITY_COLUMNS:
            continue
        values = [row.get(name, np.nan) for row in rows]
        if all(isinstance(v, float) for v in values):
            metrics[name] = np.array(values, dtype="float64")
        else:
            cells = np.empty(len(values), dtype=object)
            cells[:] = values
            metrics[name] = cells
    return {**identity_columns(present, len(rows)), **metrics}


def concat_columns(parts: list[Columns]) -> Columns:
    """Parts one after another (as pandas concatenates frames): columns in first-seen order, a
    column a part lacks is NaN there."""
    if len(parts) == 1:
        return parts[0]
    names = list(dict.fromkeys(c for p in parts for c in p))
    return {
        c: np.concatenate([p[c] if c in p else np.full(len(p["id"]), np.nan) for p in parts]) for c in names
    }


def frame_columns(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """A reader's DataFrame (identity and metric columns) as `RunTable.columns`."""
    rows = len(frame)
    present = {c: frame[c].to_numpy(dtype=object) for c in IDENTITY_COLUMNS if c in frame}
    identity = identity_columns(present, rows)
    metrics = {str(c): frame[c].to_numpy() for c in frame.columns if str(c) not in IDENTITY_COLUMNS}
    return {**identity, **metrics}


@dataclass(frozen=True)
class RunTable:
    """The launches read from one input file.

    `columns` holds the identity columns above (texts as objects, missing as None; ID and device
    index as float64, NaN where missing) and one float64 column per ncu metric, already scaled to
    SI (seconds, bytes, hertz, byte/s; ratios as printed). `frame` is the same as a DataFrame.
    `warnings` are what the reader says about the file as a whole (rows skipped, bytes replaced);
    `averaged` names the metrics whose values are averages over several invocations (a
    `--print-summary` input; empty otherwise).
    """

    path: str
    format: InputFormat
    ncu_version: str | None
    columns: Columns
    warnings: tuple[str, ...] = ()
    averaged: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        """The number of launches."""
        return len(self.columns["id"])

    @property
    def metric_columns(self) -> list[str]:
        return [c for c in self.columns if c not in IDENTITY_COLUMNS]

    def metrics(self) -> dict[str, np.ndarray]:
        """The metric columns alone (what the recipe reads)."""
        return {c: self.columns[c] for c in self.metric_columns}

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The launches as a DataFrame (for notebooks): ID and device as nullable integers."""
        import pandas as pd

        data: dict[str, Any] = dict(self.columns)
        for column in INTEGER_COLUMNS:
            data[column] = pd.array(np.asarray(self.columns[column], dtype="float64"), dtype="Int64")
        return pd.DataFrame(data, index=pd.RangeIndex(self.rows))
