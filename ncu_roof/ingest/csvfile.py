"""ncu CSV output: raw page (one row per launch) and details page (one row per metric).

A file may hold `==PROF==` lines, application output and several CSV blocks (one per ncu run);
blocks are found by their header line and parsed by column *name*. The raw page is read with
pyarrow, selecting only the columns the recipe needs; the details page with the csv module,
because its metric rows are ragged.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from ncu_roof.errors import BadInputError
from ncu_roof.ingest.table import IDENTITY_COLUMNS, InputFormat, RunTable
from ncu_roof.recipe import is_wanted
from ncu_roof.units import (
    NumberStyle,
    confirm_number_style,
    detect_number_style,
    effective_unit,
    parse_numbers,
    si_factor,
)

csv.field_size_limit(sys.maxsize)

_HEADER = re.compile(rb'^"?ID"?,"?Process ID"?,', re.MULTILINE)
_NCU_LINE = re.compile(r"^==(PROF|WARNING|ERROR)==\s*(.*)$", re.MULTILINE)
_CSV_IDENTITY = {
    "ID": "id",
    "Process ID": "process_id",
    "Kernel Name": "name",
    "Device": "device",
    "CC": "cc",
    "Grid Size": "grid",
    "Block Size": "block",
}


@dataclass(frozen=True)
class Block:
    """One CSV block: its header cells and the bytes from the header line to the next block."""

    header: list[str]
    data: bytes


def _header_starts(raw: bytes) -> list[int]:
    """Offsets of the header lines; literal `find` first, since a multiline regex scan of a
    70 MB raw page costs a third of a second and the header is always one of a few spellings."""
    starts: set[int] = set()
    for needle in (b'"ID","Process ID",', b"ID,Process ID,", b'"ID",', b"ID,"):
        pos = raw.find(needle)
        while pos != -1:
            if (pos == 0 or raw[pos - 1 : pos] == b"\n") and _HEADER.match(raw, pos):
                starts.add(pos)
            pos = raw.find(needle, pos + 1)
        if starts:
            break
    return sorted(starts)


def find_blocks(raw: bytes) -> list[Block]:
    starts = _header_starts(raw)
    blocks = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(raw)
        chunk = raw[start:end]
        first_line = chunk.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
        header = next(csv.reader([first_line]))
        blocks.append(Block(header=header, data=chunk))
    return blocks


def is_details(header: list[str]) -> bool:
    return "Metric Name" in header and "Metric Value" in header


def ncu_messages(text: str) -> list[str]:
    """`==ERROR==` / `==WARNING==` / `==PROF==` lines of ncu found in a file, prefix kept."""
    return [f"=={m.group(1)}== {m.group(2).strip()}" for m in _NCU_LINE.finditer(text)]


def read_csv_file(path: str, raw: bytes, style: NumberStyle | None) -> RunTable:
    blocks = find_blocks(raw)
    if not blocks:
        raise no_csv_error(path, raw)
    details = [is_details(b.header) for b in blocks]
    if any(details) and not all(details):
        raise BadInputError(
            f"{path}: mixes raw-page and details-page CSV blocks",
            hint="export each page to its own file (`ncu --import R --csv --page raw`)",
        )
    fmt = InputFormat.DETAILS_CSV if all(details) else InputFormat.RAW_CSV
    try:
        frame = _read_details(blocks, style) if all(details) else _read_raw(blocks, style)
    except BadInputError as err:  # units and number styles: say which file
        err.message = f"{path}: {err.message}"
        err.args = (err.message,)
        raise
    if frame.empty:
        raise BadInputError(
            f"{path}: the CSV header is there but no kernel rows follow (truncated file?)",
            hint="re-export the report: `ncu --import report.ncu-rep --csv --page raw --print-units base`",
        )
    return RunTable(path=path, format=fmt, ncu_version=None, frame=frame)


def no_csv_error(path: str, raw: bytes) -> BadInputError:
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        return BadInputError(
            f"{path}: file is empty",
            hint="profile again: `ncu-roof profile -- ./app`, or `ncu --csv --page raw ... > run.csv`",
        )
    if re.search(r"^\s+Section: ", text, re.MULTILINE):
        return BadInputError(
            f"{path}: this is ncu console text, not CSV",
            hint="save the report instead (`ncu -o run ...`) or export CSV with "
            "`ncu --import run.ncu-rep --csv --page raw --print-units base`",
        )
    messages = ncu_messages(text)
    decisive = [m for m in messages if m.startswith(("==ERROR==", "==WARNING=="))]
    if messages:
        quoted = (decisive or messages)[-1]
        return BadInputError(
            f"{path}: holds ncu messages but no CSV; ncu said: {quoted}",
            hint="nothing was profiled: check the kernel filters (-k, -c, --nvtx) and "
            "`--target-processes all`, then profile again",
        )
    return BadInputError(
        f'{path}: not an Nsight Compute CSV or report (no `"ID","Process ID",...` header)',
        hint="ncu-roof reads `.ncu-rep` files and `ncu --csv` output (raw or details page)",
    )


# ---------------------------------------------------------------- raw page


def _read_raw(blocks: list[Block], style: NumberStyle | None) -> pd.DataFrame:
    parts = [_read_raw_block(b, run) for run, b in enumerate(blocks)]
    cells = pd.concat([p[1] for p in parts], ignore_index=True) if parts else pd.Series(dtype=str)
    number_style = _style(cells, style)
    frames = [_finish_raw(text, units, number_style) for text, _, units in parts]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _read_raw_block(block: Block, run: int) -> tuple[pd.DataFrame, pd.Series, dict[str, str]]:
    import pyarrow as pa
    from pyarrow import csv as pacsv

    header = block.header
    first_end = block.data.find(b"\n")
    if first_end == -1:
        return pd.DataFrame(), pd.Series(dtype=str), {}
    second_end = block.data.find(b"\n", first_end + 1)
    units_line = block.data[first_end + 1 : second_end if second_end != -1 else len(block.data)]
    units_row = next(csv.reader([units_line.decode("utf-8", "replace").rstrip("\r")]), [])
    identity = [c for c in header if c in _CSV_IDENTITY]
    metrics = [c for c in header if is_wanted(c)]
    chosen = _unique(identity + metrics, header)
    units = {
        c: effective_unit(c, units_row[header.index(c)] if header.index(c) < len(units_row) else "")
        for c in metrics
    }
    table = pacsv.read_csv(
        io.BytesIO(block.data),
        read_options=pacsv.ReadOptions(skip_rows_after_names=1, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(invalid_row_handler=lambda _row: "skip"),
        convert_options=pacsv.ConvertOptions(
            include_columns=chosen,
            column_types={c: pa.string() for c in chosen},
            strings_can_be_null=False,
        ),
    )
    text = table.to_pandas()
    text["run"] = str(run)
    numeric = [c for c in metrics if c != "device__attribute_display_name"]
    cells = _sample_cells(text[numeric]) if numeric else pd.Series(dtype=str)
    return text, cells, units


_SAMPLE_ROWS = 512


def _sample_cells(text: pd.DataFrame) -> pd.Series:
    """The distinct cells of at most `_SAMPLE_ROWS` evenly spaced rows, for the locale detection.

    Every kernel row of a raw page has hundreds of numbers, clocks among them (~1e9 in base units),
    so a few hundred rows carry all the evidence; stacking all cells of a 5,000-kernel page cost
    more than parsing it.
    """
    if len(text) > _SAMPLE_ROWS:
        step = len(text) / _SAMPLE_ROWS
        text = text.iloc[sorted({int(i * step) for i in range(_SAMPLE_ROWS)} | {len(text) - 1})]
    cells = pd.Series(text.to_numpy(dtype=object).ravel())
    return cells.drop_duplicates()


def _style(cells: pd.Series, forced: NumberStyle | None) -> NumberStyle:
    if forced is None:
        return detect_number_style(cells)
    confirm_number_style(cells, forced)
    return forced


def _unique(names: list[str], header: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for name in names:
        if name not in seen and header.count(name) == 1:
            seen.add(name)
            out.append(name)
    return out


def _finish_raw(text: pd.DataFrame, units: dict[str, str], style: NumberStyle) -> pd.DataFrame:
    columns: dict[str, object] = {}
    for column, name in _CSV_IDENTITY.items():
        columns[name] = text[column] if column in text.columns else None
    columns["run"] = text["run"]
    columns["device_name"] = text.get("device__attribute_display_name")
    for metric, unit in units.items():
        if metric == "device__attribute_display_name":
            continue
        columns[metric] = parse_numbers(text[metric], style) * si_factor(unit)
    # Built in one go: inserting ~1,000 metric columns one by one fragments the frame.
    return _clean_identity(pd.DataFrame(columns, index=text.index))


def _clean_identity(frame: pd.DataFrame) -> pd.DataFrame:
    for column in IDENTITY_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame["id"] = pd.to_numeric(frame["id"], errors="coerce").astype("Int64")
    frame["device"] = pd.to_numeric(frame["device"], errors="coerce").astype("Int64")
    return frame.dropna(subset=["id"]).reset_index(drop=True)


# ---------------------------------------------------------------- details page

# Section-header labels of the details page (all known spellings) → the metric they print.
_LABELS: dict[str, str] = {
    "Duration": "gpu__time_duration.sum",
    "Elapsed Cycles": "gpc__cycles_elapsed.max",
    "SM Frequency": "gpc__cycles_elapsed.avg.per_second",
    "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
    "Compute (SM) Throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "Compute (SM) [%]": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL SM": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "Memory Throughput": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "Memory [%]": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL Memory": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAM Throughput": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL DRAM": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "L1/TEX Cache Throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "SOL L1/TEX Cache": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "L2 Cache Throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL L2 Cache": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "Waves Per SM": "launch__waves_per_multiprocessor",
}
# "Memory Throughput" in Memory Workload Analysis is a bandwidth, not a percentage.
_BANDWIDTH_LABELS = {"Memory Throughput": "dram__bytes.sum.per_second"}


def _metric_for(name: str, unit: str) -> str | None:
    if "__" in name:
        return name if is_wanted(name) else None
    if unit.endswith(("/second", "/s")) and name in _BANDWIDTH_LABELS:
        return _BANDWIDTH_LABELS[name]
    if unit.endswith(("/second", "/s")) and name in _LABELS and "Throughput" in name:
        return None
    return _LABELS.get(name)


def _details_rows(blocks: list[Block]) -> Iterator[dict[str, str]]:
    for run, block in enumerate(blocks):
        header = block.header
        text = block.data.decode("utf-8", "replace")
        lines = (line for line in text.splitlines()[1:] if line.startswith('"'))
        for row in csv.reader(lines):
            record = dict(zip(header, row, strict=False))
            metric = record.get("Metric Name", "")
            if not metric:
                continue
            record["run"] = str(run)
            yield record


def _read_details(blocks: list[Block], style: NumberStyle | None) -> pd.DataFrame:
    kept = []
    for record in _details_rows(blocks):
        unit = record.get("Metric Unit", "")
        metric = _metric_for(record["Metric Name"], unit)
        if metric is not None:
            kept.append({**record, "metric": metric, "unit": effective_unit(metric, unit)})
    if not kept:
        return pd.DataFrame()
    rows = pd.DataFrame(kept)
    number_style = _style(rows["Metric Value"], style)
    scale = rows["unit"].map(si_factor)
    rows["value"] = parse_numbers(rows["Metric Value"], number_style) * scale
    keys = ["run", "ID", "Process ID"]
    first = rows.drop_duplicates(subset=[*keys, "metric"], keep="first")
    wide = first.pivot(index=keys, columns="metric", values="value")
    wide.columns = [str(c) for c in wide.columns]
    ident = rows.drop_duplicates(subset=keys).set_index(keys)
    out = pd.DataFrame(index=wide.index)
    for column, name in _CSV_IDENTITY.items():
        if column not in ("ID", "Process ID"):
            out[name] = ident[column] if column in ident.columns else None
    out = pd.concat([out, wide], axis=1).reset_index()
    out = out.rename(columns={"ID": "id", "Process ID": "process_id"})
    out["device_name"] = None
    out["_order"] = pd.to_numeric(out["id"], errors="coerce")
    out = out.sort_values(["run", "_order"], key=_run_key).drop(columns="_order")
    return _clean_identity(out.reset_index(drop=True))


def _run_key(column: pd.Series) -> pd.Series:
    return pd.to_numeric(column, errors="coerce")
