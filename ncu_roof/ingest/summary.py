"""`--print-summary per-kernel|per-gpu --csv` exports (work in progress)."""

from __future__ import annotations

from ncu_roof.errors import BadInputError
from ncu_roof.ingest.table import RunTable
from ncu_roof.units import NumberStyle


def is_summary_csv(raw: bytes) -> bool:
    return False


def read_summary_csv(path: str, raw: bytes, style: NumberStyle | None, skip_bad_rows: bool) -> RunTable:
    raise BadInputError(f"{path}: summary CSV is not read yet", hint="export the raw page")
