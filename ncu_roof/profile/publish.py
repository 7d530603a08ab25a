"""Where a profile's report goes: the target checked first, a private folder beside it, the report
loaded by the project's own reader, then moved into place with one rename.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncu_roof.base.ncu import NcuTool, import_raw_csv
from ncu_roof.errors import BadInputError, MissingToolError, NcuRoofError, OutputError, ProfileError

if TYPE_CHECKING:
    from ncu_roof.ingest.table import RunTable

WRITE_HINT = "check that you may write there, or choose another -o"


def prepare_target(targets: list[Path], force: bool) -> None:
    """Refuse to replace an existing file without `force` (as ncu does), and create the folder:
    before ncu runs, as a profile is too slow to throw away over an output path."""
    for target in targets:
        if target.is_dir():
            raise OutputError(f"cannot write {target}: is a directory", hint="choose another -o")
        if target.exists() and not force:
            raise OutputError(
                f"{target} already exists", hint="pass -f/--force to replace it, or choose another -o"
            )
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(
                f"cannot write {target}: cannot create {target.parent} ({err.strerror or err})",
                hint=WRITE_HINT,
            ) from None


@contextmanager
def private_workdir(output: Path) -> Iterator[Path]:
    """A temporary folder beside the output (same file system, so the final rename is atomic)."""
    directory = output.parent
    try:
        work = Path(tempfile.mkdtemp(prefix=".ncu-roof-", dir=directory))
    except OSError as err:
        raise OutputError(f"cannot write {output}: {err.strerror or err}", hint=WRITE_HINT) from None
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True)
class ReportCheck:
    """A finished temporary report: how many launches it holds, or why it cannot be kept."""

    launches: int = 0
    problem: str | None = None
    table: RunTable | None = None  # the report as read, so that it is not read a second time


def load_report(report: Path, tool: NcuTool | None = None) -> RunTable:
    """The report as `analyze` reads it, except that `ncu --import` (used when `ncu_report` is not
    installed) runs `tool`, the ncu that wrote it, not whichever ncu is first on PATH."""
    from ncu_roof.ingest import read_input
    from ncu_roof.ingest.rep import read_with_cli
    from ncu_roof.ingest.reprows import ncu_report_installed

    if tool is None or ncu_report_installed():
        return read_input(str(report))
    return read_with_cli(str(report), report.read_bytes(), tool)


def check_report(report: Path, tool: NcuTool | None = None) -> ReportCheck:
    """The finished temporary report's launch count, or why it cannot be kept: `analyze`'s reader
    decides (a truncated, empty or damaged report raises its `NcuRoofError`). `MissingToolError`
    (nothing here reads reports) and bugs propagate; either way the report stays where it is."""
    try:
        table = load_report(report, tool)
    except MissingToolError:
        raise
    except NcuRoofError as err:
        return ReportCheck(problem=err.message.removeprefix(f"{report}: "))
    if table.rows == 0:
        return ReportCheck(problem="the report holds no profiled kernel")
    return ReportCheck(launches=table.rows, table=table)


def publish_report(report: Path, target: Path) -> Path:
    """Move the finished temporary report into place (atomic: same file system)."""
    os.replace(report, target)
    return target


def export_csv(tool: NcuTool, report: Path) -> bytes:
    """The raw page of a report as CSV, base units, C locale."""
    try:
        return import_raw_csv(tool, report)
    except BadInputError as err:
        raise ProfileError(
            err.message.replace("`ncu --import`", "`ncu --import --csv`", 1),
            hint="the report is kept; export it later with `ncu --import REPORT --csv --page raw`",
        ) from None
