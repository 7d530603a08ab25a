"""Readers: any Nsight Compute output → `RunTable` (format chosen by content, not extension).

`read_input` reads one input (a path, or `-` for stdin); `expand_inputs` (ingest.inputs) turns
command-line arguments — directories, globs, `-` — into inputs.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ncu_roof.base.units import NumberStyle
from ncu_roof.ingest.inputs import (
    MAGIC,
    STDIN,
    Expanded,
    expand_inputs,
    is_report,
    mapped,
    read_text_bytes,
)

if TYPE_CHECKING:  # loaded on first use (`__getattr__`): expanding inputs needs no numpy
    from ncu_roof.ingest.table import IDENTITY, InputFormat, RunTable

__all__ = ["IDENTITY", "Expanded", "InputFormat", "RunTable", "expand_inputs", "read_input"]

_BOM = b"\xef\xbb\xbf"
_FROM_TABLE = ("IDENTITY", "InputFormat", "RunTable")


def __getattr__(name: str) -> Any:
    if name in _FROM_TABLE:
        from ncu_roof.ingest import table

        return getattr(table, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_input(
    path: str,
    number_style: NumberStyle | None = None,
    skip_bad_rows: bool = False,
) -> RunTable:
    """Read one input; `number_style=None` detects the locale of a CSV per file; with
    `skip_bad_rows` damaged rows leave their kernels out (with a warning) instead of failing."""
    if path != STDIN and is_report(path):
        from ncu_roof.ingest.rep import read_report

        with mapped(path) as view:
            return _finish(read_report(path, view))
    raw = read_text_bytes(path)
    if path == STDIN and raw[: len(MAGIC)] == MAGIC:
        return _report_from_stdin(raw)
    return _finish(_read_text(path, raw, number_style, skip_bad_rows))


def _report_from_stdin(raw: bytes) -> RunTable:
    import tempfile

    from ncu_roof.ingest.rep import read_report

    with tempfile.TemporaryDirectory(prefix="ncu-roof-") as folder:
        copy = os.path.join(folder, "stdin.ncu-rep")
        with open(copy, "wb") as handle:
            handle.write(raw)
        table = read_report(copy, raw)
    return _finish(replace(table, path=STDIN))


def _read_text(path: str, raw: bytes, style: NumberStyle | None, skip_bad_rows: bool) -> RunTable:
    from ncu_roof.ingest.console import is_console_text, read_console_text
    from ncu_roof.ingest.csvblocks import find_headers
    from ncu_roof.ingest.csvdetails import read_summary_csv
    from ncu_roof.ingest.csvfile import read_csv_file

    raw, notes = _clean_text(path, raw)
    headers = find_headers(raw)
    if headers.summaries:
        table = read_summary_csv(path, raw, headers.summaries[0], style, skip_bad_rows)
    elif not headers.pages and is_console_text(raw):
        table = read_console_text(path, raw, style, skip_bad_rows)
    else:
        table = read_csv_file(path, raw, headers.pages, style, skip_bad_rows)
    return replace(table, warnings=(*notes, *table.warnings))


def _clean_text(path: str, raw: bytes) -> tuple[bytes, tuple[str, ...]]:
    """A BOM dropped; invalid UTF-8 replaced by U+FFFD, with a warning naming the first line."""
    raw = raw.removeprefix(_BOM)
    if raw.isascii():  # no copy: decoding a 200 MB page only to check it cost a fifth of a second
        return raw, ()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        text = raw.decode("utf-8", "replace")
        bad = text.count("\ufffd") - raw.decode("utf-8", "ignore").count("\ufffd")
        plural = "s" if bad != 1 else ""
        note = f"{path}: {bad} invalid UTF-8 sequence{plural} replaced by U+FFFD (first on line {line})"
        return text.encode("utf-8"), (note,)
    return raw, ()


def _finish(table: RunTable) -> RunTable:
    """Nonsense values excluded (with notes), a warning counting them. The memory pyarrow's pool
    (mimalloc) kept from a CSV read goes back to the OS before the analysis allocates its own: the
    100k trace's JSON peaked at 640-720 MB without, 600-630 MB with, CPU time alike."""
    from ncu_roof.ingest.sanity import exclude_nonsense

    if "pyarrow" in sys.modules:  # a CSV was read (a report's read does not load it)
        import pyarrow as pa

        pa.default_memory_pool().release_unused()

    launches, excluded = exclude_nonsense(table.launches, table.metric_columns)
    if not excluded:
        return table
    warning = (
        f"{table.path}: {excluded} value{'s' if excluded != 1 else ''} excluded as impossible "
        "(negative, not finite or implausible); the kernels' notes name them"
    )
    return replace(table, launches=launches, warnings=(*table.warnings, warning))
