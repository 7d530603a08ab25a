"""Readers: any Nsight Compute output → `RunTable` (format chosen by content, not extension).

`expand_inputs` turns command-line arguments (directories, globs, `-`) into the inputs to read;
`read_input` reads one (a path, or `-` for stdin): only regular files (a FIFO or a device would
block or never end), at most `MAX_TEXT_BYTES` of text, an OS error a `BadInputError` naming it."""

from __future__ import annotations

import glob
import mmap
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ncu_roof.base.units import NumberStyle
from ncu_roof.errors import BadInputError, naming_file

if TYPE_CHECKING:  # loaded on first use (`__getattr__`): expanding inputs needs no numpy
    from ncu_roof.ingest.table import IDENTITY, InputFormat, RunTable

__all__ = ["IDENTITY", "Expanded", "InputFormat", "RunTable", "expand_inputs", "read_input"]

STDIN = "-"
MAGIC = b"NVR\x00"  # the first bytes of a `.ncu-rep` report
MAX_TEXT_BYTES = 1 << 30  # CSV or console text; a 5,000-kernel raw page is ~70 MB
REPORT_SUFFIXES = (".ncu-rep", ".ncu-repz")
TEXT_SUFFIXES = (".csv", ".txt", ".log", ".out")
_GLOB_CHARS = frozenset("*?[")
PATH_HINT = "check the path; `ncu -o NAME` writes NAME.ncu-rep"
_BOM = b"\xef\xbb\xbf"


def __getattr__(name: str) -> Any:
    if name in ("IDENTITY", "InputFormat", "RunTable"):
        from ncu_roof.ingest import table

        return getattr(table, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_input(path: str, number_style: NumberStyle | None = None, skip_bad_rows: bool = False) -> RunTable:
    """Read one input; `number_style=None` detects the locale of a CSV per file; with
    `skip_bad_rows` damaged rows leave their kernels out (with a warning) instead of failing."""
    if path != STDIN and (report := _report(path)) is not None:
        return report
    return _finish(_read_text(path, number_style, skip_bad_rows))


def _report(path: str) -> RunTable | None:
    """A report, told by its first bytes (a `.ncu-repz`, compressed, by its name); None for text
    (not binary, within `MAX_TEXT_BYTES`: refused before it is read), whose mapped bytes (or those
    read where nothing can be mapped) are let go on return, before the text is read."""
    with mapped(path) as view:
        if view[: len(MAGIC)] == MAGIC or path.endswith(".ncu-repz"):
            from ncu_roof.ingest.rep import read_report

            return _finish(read_report(path, view))
        if path.endswith(".ncu-rep") and b"\x00" in view[:64]:
            raise BadInputError(
                f"{path}: not an Nsight Compute report (no NVR header)",
                hint="pass the `.ncu-rep` written by `ncu -o`, or a CSV from `ncu --csv`",
            )
        if len(view) > MAX_TEXT_BYTES:
            raise _too_big(path)
    return None


def _read_text(path: str, style: NumberStyle | None, skip_bad_rows: bool) -> RunTable:
    """A text input, or a report piped to stdin. This frame holds the only reference to the file's
    bytes, so that they go before a raw page's numbers are made (`read_csv_file`)."""
    from ncu_roof.ingest.console import is_console_text, read_console_text
    from ncu_roof.ingest.csvblocks import find_headers
    from ncu_roof.ingest.csvdetails import read_summary_csv
    from ncu_roof.ingest.csvfile import read_csv_file

    raw = read_text_bytes(path)
    if path == STDIN and raw[: len(MAGIC)] == MAGIC:  # a report piped in: read from a copy
        import tempfile

        from ncu_roof.ingest.rep import read_report

        with tempfile.TemporaryDirectory(prefix="ncu-roof-") as folder:
            copy = os.path.join(folder, "stdin.ncu-rep")
            with open(copy, "wb") as handle:
                handle.write(raw)
            with naming_file(STDIN, copy):
                return replace(read_report(copy, raw), path=STDIN)
    raw, notes = _clean_text(path, raw)
    pages, summaries = find_headers(raw)
    if summaries:
        table = read_summary_csv(path, raw, summaries[0], style, skip_bad_rows)
    elif not pages and is_console_text(raw):
        table = read_console_text(path, raw, style, skip_bad_rows)
    else:
        finish = read_csv_file(path, raw, pages, style, skip_bad_rows)
        del raw
        table = finish()
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
    """Nonsense values excluded, noted and counted; pyarrow's mimalloc pool frees a CSV read's memory to the
    OS before the analysis allocates (100k-trace JSON peak 640-720 MB without, 600-630 MB with; CPU alike)."""
    from ncu_roof.ingest.table import exclude_nonsense

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


# --- inputs the way people pass them, read without surprises ------------------------------------


@dataclass(frozen=True)
class Expanded:
    """What the arguments named: the inputs, in order, and what was passed over (with why)."""

    paths: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def expand_inputs(arguments: Sequence[str]) -> Expanded:
    """`-` stays stdin; a directory gives its reports and CSV/text files, sorted by name; a
    quoted glob is expanded here (sorted); a glob that matches nothing is an error."""
    paths: list[str] = []
    skipped: list[str] = []
    for argument in arguments:
        matches = [argument]
        if argument != STDIN and _GLOB_CHARS & set(argument) and not os.path.lexists(argument):
            matches = sorted(glob.glob(argument))
            if not matches:
                raise BadInputError(f"{argument}: no file matches this pattern", hint=PATH_HINT)
        for match in matches:
            _add(match, paths, skipped)
    if not paths:
        raise BadInputError(
            "no inputs: " + ("; ".join(skipped) if skipped else "nothing was named"),
            hint="pass .ncu-rep reports, ncu CSV exports or ncu console text",
        )
    return Expanded(tuple(paths), tuple(skipped))


def _add(path: str, paths: list[str], skipped: list[str]) -> None:
    if path == STDIN or not os.path.isdir(path):  # (False for a name too long: reported when it is read)
        paths.append(path)
        return
    before = len(paths)
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as err:
        raise BadInputError(f"{path}: cannot list this directory ({err.strerror})", hint=PATH_HINT) from None
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.name.endswith(REPORT_SUFFIXES + TEXT_SUFFIXES) and entry.is_file():
            paths.append(entry.path)
        else:
            skipped.append(f"{entry.path}: skipped (not a report, CSV or text file)")
    if len(paths) == before:
        raise BadInputError(
            f"{path}: this directory holds no report, CSV or text file",
            hint="pass the .ncu-rep reports or ncu CSV/console-text files inside it",
        )


def _cannot_read(path: str, err: OSError, hint: str = "check the file's permissions") -> BadInputError:
    return BadInputError(f"{path}: cannot read ({err.strerror or err})", hint=hint)


@contextmanager
def mapped(path: str) -> Iterator[bytes | mmap.mmap]:
    """A regular file's bytes, mapped (a multi-GB report never read whole); any other refused unopened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file", hint=PATH_HINT) from None
    except OSError as err:
        raise _cannot_read(path, err, "check the path and its permissions") from None
    if stat.S_ISDIR(info.st_mode):
        raise BadInputError(f"{path}: is a directory", hint="pass the report or CSV files inside it")
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device or socket"
        raise BadInputError(
            f"{path}: is {kind}, not a regular file",
            hint="save the ncu output to a file first, or pipe it to `-` (stdin)",
        )
    try:
        with open(path, "rb") as handle:
            try:
                view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if info.st_size else None
            except OSError:  # a file system that maps nothing (sysfs, FUSE with direct_io): read
                view = None
            if view is None:  # (past the text limit: as good as all, for the size check)
                yield handle.read(MAX_TEXT_BYTES + 1) if info.st_size else b""
                return
            with view:
                yield view
    except OSError as err:
        raise _cannot_read(path, err) from None


def read_text_bytes(path: str) -> bytes:
    """A whole text input (a regular file `mapped` checked, or `-`: stdin), refused past `MAX_TEXT_BYTES`."""
    if path == STDIN and sys.stdin is None:  # started with stdin closed (`<&-`)
        raise BadInputError(
            "-: stdin is closed", hint="pipe or redirect the input: `ncu-roof analyze - < run.csv`"
        )
    try:
        with open(path, "rb") if path != STDIN else nullcontext(sys.stdin.buffer) as handle:
            data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as err:
        raise _cannot_read(path, err) from None
    if len(data) > MAX_TEXT_BYTES:
        raise _too_big(path)
    return data


def _too_big(path: str) -> BadInputError:
    return BadInputError(
        f"{path}: over {MAX_TEXT_BYTES >> 20} MiB of text; refused rather than read whole",
        hint="export fewer kernels, or only the raw page (`ncu --import R --csv --page raw`), "
        "or pass the .ncu-rep report itself",
    )
