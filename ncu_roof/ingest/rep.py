"""`.ncu-rep` / `.ncu-repz` reports: NVIDIA's `ncu_report` module, else `ncu --import`."""

from __future__ import annotations

import mmap
import re

from ncu_roof.base.ncu import NcuTool, find_ncu, import_raw_csv
from ncu_roof.errors import BadInputError, MissingToolError
from ncu_roof.ingest import MAGIC, has_report_header
from ncu_roof.ingest.reprows import report_rows
from ncu_roof.ingest.table import InputFormat, RunTable, row_frame, settle_shapes

_VERSION = re.compile(rb"(20\d\d\.\d+\.\d+(?:\.\d+)?) \(build")
REP_HINT = "pip install 'ncu-roof[rep]' (NVIDIA's ncu-report, no GPU needed), or put `ncu` on PATH"
# a .ncu-repz is the report as one zstd stream: ncu_report (2026.3) reads it so, by its suffix
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def report_version(raw: bytes | mmap.mmap) -> str | None:
    """The ncu version that wrote a report: only stored as text inside the file (inside its zstd
    stream for a `.ncu-repz`, read a few MB at a time until found)."""
    if raw[: len(ZSTD_MAGIC)] != ZSTD_MAGIC:
        match = _VERSION.search(raw)
        return match.group(1).decode() if match else None
    import pyarrow as pa

    stream = pa.CompressedInputStream(pa.BufferReader(pa.py_buffer(raw)), "zstd")
    tail = b""
    try:
        while chunk := stream.read(1 << 22):
            if match := _VERSION.search(tail + chunk):
                return match.group(1).decode()
            tail = chunk[-64:]  # a version cut by the chunk's end is found in the next
    except OSError:  # damaged past what ncu_report read
        return None
    return None


def read_report(path: str, raw: bytes | mmap.mmap) -> RunTable:
    """`raw`: the report's bytes, or a memory map of them (only its header and version are read)."""
    if not has_report_header(path, raw):
        raise BadInputError(
            f"{path}: not an Nsight Compute report (no NVR header)",
            hint="pass the `.ncu-rep` written by `ncu -o`, or a CSV from `ncu --csv`",
        )
    rows = report_rows(path)
    if rows is None:  # no ncu_report
        return read_with_cli(path, raw)
    if not rows and path.endswith(".ncu-repz"):
        _refuse_compressed(path, raw)
    if not rows:
        raise BadInputError(
            f"{path}: the report holds no profiled kernel (truncated or damaged file?)",
            hint="profile again with `ncu-roof profile -- ./app`",
        )
    for row in rows:  # a launch without a name: what `ncu_report` returns for a report cut off mid-record
        # (a report cut exactly between two launches cannot be told from a shorter one)
        if not isinstance(row.get("name"), str) or not row["name"].strip():
            raise BadInputError(
                f"{path}: launch {row['id']} has no kernel name: the report is truncated or damaged",
                hint="copy the report again (it may still be being written), or profile again",
            )
    launches = settle_shapes(row_frame(rows))
    return RunTable(path=path, format=InputFormat.NCU_REP, ncu_version=report_version(raw), launches=launches)


def _refuse_compressed(path: str, raw: bytes | mmap.mmap) -> None:
    """A `.ncu-repz` that `ncu_report` read nothing from: one that is not zstd-compressed (a
    `.ncu-rep` renamed, say), or one this `ncu_report` cannot read or that is damaged."""
    if not len(raw):
        raise BadInputError(f"{path}: file is empty", hint="profile again with `ncu-roof profile -- ./app`")
    if raw[: len(ZSTD_MAGIC)] != ZSTD_MAGIC:
        plain = raw[: len(MAGIC)] == MAGIC
        raise BadInputError(
            f"{path}: not a compressed report (a .ncu-repz is zstd-compressed; this file is not)",
            hint="it is an uncompressed report: rename it to FILE.ncu-rep"
            if plain
            else "pass the .ncu-repz that Nsight Compute 2025.4+ wrote, or its .ncu-rep",
        )
    raise BadInputError(
        f"{path}: the installed ncu_report cannot read this compressed report (or it is damaged)",
        hint="pip install -U ncu-report (Nsight Compute 2025.4+ writes .ncu-repz), "
        "or decompress it: zstd -d FILE.ncu-repz -o FILE.ncu-rep",
    )


def read_with_cli(path: str, raw: bytes | mmap.mmap, tool: NcuTool | None = None) -> RunTable:
    """`ncu --import` when `ncu_report` is not installed: `tool`, else the ncu `find_ncu` finds."""
    from ncu_roof.ingest.csvblocks import find_headers
    from ncu_roof.ingest.csvfile import read_csv_file

    if tool is None:
        try:
            tool = find_ncu()
        except MissingToolError as err:
            what = ".ncu-repz needs ncu_report or ncu, 2025.4 or later"
            what = what if path.endswith(".ncu-repz") else ".ncu-rep needs ncu_report or ncu"
            raise MissingToolError(f"{path}: reading {what}", hint=REP_HINT) from err
    page = import_raw_csv(tool, path)
    launches = read_csv_file(path, page, find_headers(page).pages, None)().launches
    return RunTable(path=path, format=InputFormat.NCU_REP, ncu_version=report_version(raw), launches=launches)
