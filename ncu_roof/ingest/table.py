"""What every reader returns: one row per profiled launch, identity columns plus ncu metrics in SI."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

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


def identity_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Every identity column present (None where a reader has none), ID and device as nullable ints."""
    for column in IDENTITY_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame["id"] = pd.to_numeric(frame["id"], errors="coerce").astype("Int64")
    frame["device"] = pd.to_numeric(frame["device"], errors="coerce").astype("Int64")
    return frame.reset_index(drop=True)


@dataclass(frozen=True)
class RunTable:
    """The launches read from one input file.

    `frame` holds the identity columns above (strings or ints; missing as None/NaN) and one float
    column per ncu metric, already scaled to SI (seconds, bytes, hertz, byte/s; ratios as printed).
    `warnings` are what the reader says about the file as a whole (rows skipped, bytes replaced);
    `averaged` names the metrics whose values are averages over several invocations (a
    `--print-summary` input; empty otherwise).
    """

    path: str
    format: InputFormat
    ncu_version: str | None
    frame: pd.DataFrame
    warnings: tuple[str, ...] = ()
    averaged: tuple[str, ...] = ()

    @property
    def metric_columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns if str(c) not in IDENTITY_COLUMNS]
