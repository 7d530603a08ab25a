"""Readers: any Nsight Compute output → `RunTable` (format chosen by content, not extension)."""

from __future__ import annotations

from pathlib import Path

from ncu_roof.errors import BadInputError
from ncu_roof.ingest.csvfile import read_csv_file
from ncu_roof.ingest.rep import MAGIC, read_report
from ncu_roof.ingest.table import IDENTITY_COLUMNS, InputFormat, RunTable
from ncu_roof.units import NumberStyle

__all__ = ["IDENTITY_COLUMNS", "InputFormat", "RunTable", "read_input"]


def read_input(path: str, number_style: NumberStyle | None = None) -> RunTable:
    """Read one file; `number_style=None` detects the locale of a CSV per file."""
    file = Path(path)
    if not file.exists():
        raise BadInputError(f"{path}: no such file", hint="check the path; `ncu -o NAME` writes NAME.ncu-rep")
    if file.is_dir():
        raise BadInputError(f"{path}: is a directory", hint="pass the report or CSV files inside it")
    try:
        raw = file.read_bytes()
    except OSError as err:
        raise BadInputError(
            f"{path}: cannot read ({err.strerror})", hint="check the file's permissions"
        ) from err
    if raw.startswith(MAGIC) or path.endswith(".ncu-repz"):
        return read_report(path, raw)
    if path.endswith(".ncu-rep") and raw and b"\x00" in raw[:64]:
        return read_report(path, raw)
    return read_csv_file(path, raw, number_style)
