"""What every reader returns: one row per profiled launch, identity columns plus ncu metrics in SI."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import pandas as pd


class InputFormat(Enum):
    NCU_REP = "ncu-rep"
    RAW_CSV = "raw-csv"
    DETAILS_CSV = "details-csv"


IDENTITY_COLUMNS = ("run", "id", "process_id", "name", "device", "cc", "device_name", "grid", "block")


@dataclass(frozen=True)
class RunTable:
    """The launches read from one input file.

    `frame` holds the identity columns above (strings or ints; missing as None/NaN) and one float
    column per ncu metric, already scaled to SI (seconds, bytes, hertz, byte/s; ratios as printed).
    """

    path: str
    format: InputFormat
    ncu_version: str | None
    frame: pd.DataFrame

    @property
    def metric_columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns if str(c) not in IDENTITY_COLUMNS]
