"""ncu console text (work in progress)."""

from __future__ import annotations

from ncu_roof.errors import BadInputError
from ncu_roof.ingest.table import RunTable
from ncu_roof.units import NumberStyle


def is_console_text(raw: bytes) -> bool:
    return False


def read_console_text(path: str, raw: bytes, style: NumberStyle | None) -> RunTable:
    raise BadInputError(f"{path}: console text is not read yet", hint="export the raw page")
