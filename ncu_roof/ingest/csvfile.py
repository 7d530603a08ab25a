"""ncu CSV output: raw page (one row per launch) and details page (one row per metric).

A file may hold `==PROF==` lines, application output and several CSV blocks (one per ncu run);
blocks are found by their header line and parsed by column *name*. The raw page is read with
pyarrow, selecting only the columns the recipe needs; the details page with the csv module,
because its metric rows are ragged. Lines that are not CSV rows (application output, `==PROF==`)
are passed over; a row that starts like a data row but is damaged (wrong number of cells, an
unbalanced quote, cut off, a non-integer ID or device) is never dropped silently: it is an error
naming the line, or, with `skip_bad_rows`, its kernel is left out and a warning says so.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import pandas as pd

from ncu_roof.errors import BadInputError, naming_file
from ncu_roof.ingest.nvtx import nvtx_columns, nvtx_of_cells
from ncu_roof.ingest.table import InputFormat, RunTable, identity_frame
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
    """One CSV block: its header cells, the bytes from the header line to the next block, the
    file line its header is on (1-based) and whether it runs to the end of the file."""

    header: list[str]
    data: bytes
    line: int = 1
    last: bool = True

    def line_of(self, offset: int) -> int:
        """The file line of a byte offset inside this block."""
        return self.line + self.data.count(b"\n", 0, max(offset, 0))


@dataclass
class Damage:
    """Damaged rows of one file: an error at the end, or (skip) a warning and the kernels kept."""

    path: str
    skip: bool
    rows: list[tuple[int, str]] = field(default_factory=list)
    lost_kernels: set[tuple[int, str]] = field(default_factory=set)

    def add(self, line: int, reason: str) -> None:
        self.rows.append((line, reason))

    def check(self) -> None:
        """Raise unless skipping: the first damaged row, with its line, and how many more."""
        if not self.rows or self.skip:
            return
        line, reason = min(self.rows)
        more = f" ({len(self.rows) - 1} more damaged rows)" if len(self.rows) > 1 else ""
        raise BadInputError(
            f"{self.path}: line {line}: {reason}{more}",
            hint="repair or re-export the file; --skip-bad-rows reads the intact kernels "
            "and says what it left out",
        )

    def warnings(self, kernels: int) -> tuple[str, ...]:
        if not self.rows:
            return ()
        lines = sorted({line for line, _ in self.rows})
        shown = ", ".join(str(n) for n in lines[:5]) + (", …" if len(lines) > 5 else "")
        lost = f"; {kernels} kernel{'s' if kernels != 1 else ''} left out" if kernels else ""
        return (
            f"{self.path}: skipped {len(self.rows)} damaged row{'s' if len(self.rows) != 1 else ''} "
            f"(line{'s' if len(lines) != 1 else ''} {shown}: {min(self.rows)[1]}){lost}",
        )


_DATA_START = re.compile(r'^"?[^",\s]*"?,')
_ID_START = re.compile(r'^"?\s*\d+\s*"?,"?\s*\d*\s*"?,')
_ROW_START = re.compile(r'^\s*("|\d)')  # a last line cut off right after it began
_INTEGER = re.compile(r"^\s*\d{1,15}\s*$")
_DEVICE = re.compile(r"^\s*\d{1,4}\s*$")


def looks_like_data(line: str, columns: int) -> bool:
    """A row of the table rather than application output: an ID-like first cell and enough cells."""
    if _ID_START.match(line):
        return True
    return bool(_DATA_START.match(line)) and line.count(",") >= max(2, columns // 2)


def records(block: Block, damage: Damage) -> Iterator[tuple[int, list[str]]]:
    """(file line, cells) of every data row after the header; quoted line breaks are kept,
    foreign lines passed over, damaged rows reported to `damage` (and not yielded)."""
    text = block.data.decode("utf-8", "replace")
    lines = text.split("\n")
    columns = len(block.header)
    least = block.header.index("Metric Value") + 1 if is_details(block.header) else columns
    widths: Counter[int] = Counter()  # cells per row: a last row without its line break and
    i = 1  # with fewer cells than most rows is cut off
    while i < len(lines):
        start = i
        record = lines[i]
        i += 1
        if not record.strip() or not looks_like_data(record, columns):
            if block.last and i == len(lines) and _ROW_START.match(record):
                damage.add(block.line + start, "the last row is cut off (truncated file?)")
            continue
        while record.count('"') % 2 and i < len(lines) and i - start < 64:
            record += "\n" + lines[i]  # a line break inside a quoted name, kept as it was
            i += 1
        record = record.removesuffix("\r")
        line = block.line + start
        at_end = block.last and i == len(lines) and not text.endswith("\n")
        if at_end and (record.count('"') % 2 or _cut_off(record, block, least)):
            damage.add(line, "the last row is cut off (truncated file?)")
            continue
        if record.count('"') % 2:
            damage.add(line, "unbalanced quote")
            i = start + 1
            continue
        try:
            cells = next(csv.reader([record], strict=True))
        except csv.Error as err:
            damage.add(line, f"not a valid CSV row ({err})")
            continue
        if at_end and widths and len(cells) < widths.most_common(1)[0][0]:
            damage.add(line, "the last row is cut off (truncated file?)")
            continue
        widths[len(cells)] += 1
        yield line, cells


def _cut_off(record: str, block: Block, least: int) -> bool:
    """A last row without its line break: cut off if it has too few cells, or (a fully quoted
    file) does not end the way ncu ends a row."""
    if block.data.startswith(b'"') and not record.endswith(('"', ",")):
        return True
    try:
        return len(next(csv.reader([record]), [])) < least
    except csv.Error:
        return True


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
    line, counted = 1, 0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(raw)
        line += raw.count(b"\n", counted, start)
        counted = start
        chunk = raw[start:end]
        first_line = chunk.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
        try:
            header = next(csv.reader([first_line]))
        except csv.Error:  # e.g. a NUL byte
            header = first_line.split(",")
        blocks.append(Block(header=header, data=chunk, line=line, last=end == len(raw)))
    return blocks


def _orphans(raw: bytes, first: Block, damage: Damage) -> None:
    """CSV rows or a header-like line before the first header: a header line that was damaged,
    and the rows under it would be lost without a word."""
    end = raw.find(first.data[:64]) if first.data else -1
    prefix = raw[: max(end, 0)].decode("utf-8", "replace").split("\n")
    for number, line in enumerate(prefix, start=1):
        if line.count(",") < 5 or line.startswith("=="):
            continue
        if _ID_START.match(line) or '"Kernel Name"' in line or "Process ID" in line:
            damage.add(
                number, "a CSV row (or header) before the first intact header (a damaged header line?)"
            )


def check_header(path: str, block: Block) -> None:
    """A header that cannot be read by name: a needed column twice, or a details page that lost
    one of its key columns (read as a raw page it would give one bogus kernel per metric row)."""
    needed = [c for c in block.header if c in _CSV_IDENTITY or c in _DETAILS_KEYS or is_wanted(c)]
    twice = sorted({c for c in needed if block.header.count(c) > 1})
    if twice:
        raise BadInputError(
            f"{path}: line {block.line}: column {twice[0]!r} appears more than once in the header",
            hint="re-export the report; a hand-edited CSV must name each column once",
        )
    present = [c for c in _DETAILS_KEYS if c in block.header]
    if present and not is_details(block.header):
        lost = [c for c in ("Metric Name", "Metric Value") if c not in block.header]
        raise BadInputError(
            f"{path}: line {block.line}: a details-page header without {' or '.join(map(repr, lost))}",
            hint="re-export the details page (`ncu --import R --csv --page details`), or the raw page",
        )


_DETAILS_KEYS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")


def is_details(header: list[str]) -> bool:
    return "Metric Name" in header and "Metric Value" in header


def ncu_messages(text: str) -> list[str]:
    """`==ERROR==` / `==WARNING==` / `==PROF==` lines of ncu found in a file, prefix kept."""
    return [f"=={m.group(1)}== {m.group(2).strip()}" for m in _NCU_LINE.finditer(text)]


def read_csv_file(path: str, raw: bytes, style: NumberStyle | None, skip_bad_rows: bool = False) -> RunTable:
    blocks = find_blocks(raw)
    if not blocks:
        raise no_csv_error(path, raw)
    for block in blocks:
        check_header(path, block)
    details = [is_details(b.header) for b in blocks]
    if any(details) and not all(details):
        raise BadInputError(
            f"{path}: mixes raw-page and details-page CSV blocks",
            hint="export each page to its own file (`ncu --import R --csv --page raw`)",
        )
    fmt = InputFormat.DETAILS_CSV if all(details) else InputFormat.RAW_CSV
    damage = Damage(path, skip_bad_rows)
    _orphans(raw, blocks[0], damage)
    with naming_file(path):  # units and number styles: say which file
        frame, lost = (
            _read_details(blocks, style, damage) if all(details) else _read_raw(blocks, style, damage)
        )
    damage.check()
    if frame.empty:
        what = "no intact kernel rows" if damage.rows else "no kernel rows"
        raise BadInputError(
            f"{path}: the CSV header is there but {what} follow (truncated file?)",
            hint="re-export the report: `ncu --import report.ncu-rep --csv --page raw --print-units base`",
        )
    return RunTable(path=path, format=fmt, ncu_version=None, frame=frame, warnings=damage.warnings(lost))


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


def _read_raw(blocks: list[Block], style: NumberStyle | None, damage: Damage) -> tuple[pd.DataFrame, int]:
    parts = [p for run, b in enumerate(blocks) if (p := _read_raw_block(b, run, damage)) is not None]
    if not parts:
        return pd.DataFrame(), 0
    cells = pd.concat([p[1] for p in parts], ignore_index=True)
    number_style = _style(cells, style)
    frames = [_finish_raw(text, units, number_style) for text, _, units in parts]
    return pd.concat(frames, ignore_index=True), len({line for line, _ in damage.rows})


def _read_raw_block(
    block: Block, run: int, damage: Damage
) -> tuple[pd.DataFrame, pd.Series, dict[str, str]] | None:
    header = block.header
    first_end = block.data.find(b"\n")
    if first_end == -1:
        return None
    second_end = block.data.find(b"\n", first_end + 1)
    units_line = block.data[first_end + 1 : second_end if second_end != -1 else len(block.data)]
    try:
        units_row = next(csv.reader([units_line.decode("utf-8", "replace").rstrip("\r")]), [])
    except csv.Error:
        units_row = []
    has_units = bool(units_row) and not _INTEGER.match(units_row[0])
    if not has_units:
        units_row = []
    identity = [c for c in header if c in _CSV_IDENTITY]
    metrics = [c for c in header if is_wanted(c)]
    chosen = _unique(identity + nvtx_columns(header) + metrics, header)
    units = {
        c: effective_unit(c, units_row[header.index(c)] if header.index(c) < len(units_row) else "")
        for c in metrics
    }
    text = _raw_fast(block, chosen, has_units)
    if text is None:  # damaged somewhere: the slow reader says where
        text = _raw_slow(block, chosen, has_units, damage)
    text = _check_identity(text, block, damage)
    if text.empty:
        return None
    text["run"] = str(run)
    numeric = [c for c in metrics if c != "device__attribute_display_name"]
    cells = _sample_cells(text[numeric]) if numeric else pd.Series(dtype=str)
    return text, cells, units


def _raw_fast(block: Block, chosen: list[str], has_units: bool) -> pd.DataFrame | None:
    """pyarrow on an intact block; None when any row is damaged (or quotes do not pair up)."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    if block.data.count(b'"') % 2 or (block.last and not block.data.endswith(b"\n")):
        return None
    columns = len(block.header)
    damaged: list[str] = []

    def invalid(row: object) -> str:
        line = str(getattr(row, "text", ""))
        if looks_like_data(line, columns):
            damaged.append(line)
        return "skip"

    try:
        table = pacsv.read_csv(
            io.BytesIO(block.data),
            read_options=pacsv.ReadOptions(skip_rows_after_names=int(has_units), block_size=1 << 24),
            parse_options=pacsv.ParseOptions(invalid_row_handler=invalid),
            convert_options=pacsv.ConvertOptions(
                include_columns=chosen,
                column_types={c: pa.string() for c in chosen},
                strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowKeyError, pa.ArrowTypeError):
        return None
    return None if damaged else table.to_pandas()


def _raw_slow(block: Block, chosen: list[str], has_units: bool, damage: Damage) -> pd.DataFrame:
    """The csv module, row by row: every damaged row reported with its line."""
    width = len(block.header)
    where = [block.header.index(c) for c in chosen]
    rows: list[list[str]] = []
    lines: list[int] = []
    for number, (line, cells) in enumerate(records(block, damage)):
        if number == 0 and has_units:
            continue
        if len(cells) != width:
            damage.add(line, f"{len(cells)} cells where the header has {width}")
            continue
        rows.append([cells[i] for i in where])
        lines.append(line)
    frame = pd.DataFrame(rows, columns=chosen, dtype=object)
    frame.attrs["lines"] = lines
    return frame


def _check_identity(text: pd.DataFrame, block: Block, damage: Damage) -> pd.DataFrame:
    """Rows whose ID or Device is not a small non-negative integer are damaged."""
    bad = pd.Series(False, index=text.index)
    reasons: dict[int, str] = {}
    for column, pattern, what in (("ID", _INTEGER, "ID"), ("Device", _DEVICE, "Device")):
        if column not in text.columns:
            continue
        cells = text[column].astype(str)
        wrong = ~cells.str.match(pattern.pattern) & ~((column == "Device") & (cells.str.strip() == ""))
        for position in wrong.to_numpy().nonzero()[0]:
            reasons.setdefault(
                int(position), f"{what} {one_cell(cells.iloc[position])} is not an integer index"
            )
        bad |= wrong
    if not bad.any():
        return text
    lines = text.attrs.get("lines")
    for row, reason in sorted(reasons.items()):
        damage.add(lines[row] if lines else _find_line(block, text.iloc[row]), reason)
    return text[~bad.to_numpy()].reset_index(drop=True)


def _find_line(block: Block, row: pd.Series) -> int:
    """The line of a row pyarrow read (only on the error path): found by its ID cell."""
    cell = str(row.get("ID", "")).encode("utf-8", "replace")
    for needle in (b'\n"' + cell + b'",', b"\n" + cell + b","):
        offset = block.data.find(needle)
        if offset != -1:
            return block.line_of(offset + 1)
    return block.line


def one_cell(text: str) -> str:
    """A cell quoted for a message, clipped."""
    return repr(text if len(text) <= 40 else text[:39] + "…")


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
    columns["nvtx"] = _nvtx_column(text)
    for metric, unit in units.items():
        if metric == "device__attribute_display_name":
            continue
        columns[metric] = parse_numbers(text[metric], style) * si_factor(unit)
    # Built in one go: inserting ~1,000 metric columns one by one fragments the frame.
    return identity_frame(pd.DataFrame(columns, index=text.index))


def _nvtx_column(text: pd.DataFrame) -> list[str | None] | None:
    """Each row's NVTX text, when the page has NVTX columns (launches share a few distinct cells)."""
    columns = nvtx_columns([str(c) for c in text.columns])
    if not columns:
        return None
    seen: dict[tuple[object, ...], str | None] = {}
    out = []
    for cells in text[columns].itertuples(index=False, name=None):
        if cells not in seen:
            seen[cells] = nvtx_of_cells(dict(zip(columns, cells, strict=True)))
        out.append(seen[cells])
    return out


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


def metric_for(name: str, unit: str) -> str | None:
    if "__" in name:
        return name if is_wanted(name) else None
    if unit.endswith(("/second", "/s")) and name in _BANDWIDTH_LABELS:
        return _BANDWIDTH_LABELS[name]
    if unit.endswith(("/second", "/s")) and name in _LABELS and "Throughput" in name:
        return None
    return _LABELS.get(name)


def _identity_problem(ident: str, process: str, device: str) -> str | None:
    if not _INTEGER.match(ident):
        return f"ID {one_cell(ident)} is not an integer index"
    if not _INTEGER.match(process):
        return f"Process ID {one_cell(process)} is not an integer"
    if device.strip() and not _DEVICE.match(device):
        return f"Device {one_cell(device)} is not an integer index"
    return None


def _details_rows(blocks: list[Block], damage: Damage) -> Iterator[dict[str, str]]:
    """The metric rows of every block; a damaged row taints the kernels on either side of it
    (with `skip_bad_rows` those kernels are left out whole: a partial kernel would be read
    with other formulas)."""
    for run, block in enumerate(blocks):
        header = block.header
        least = header.index("Metric Value") + 1
        tainted: set[str] = set()
        previous: str | None = None
        seen = len(damage.rows)
        kept: list[dict[str, str]] = []
        checked: dict[tuple[str, str, str], str | None] = {}  # the same IDs repeat on every row
        for line, row in records(block, damage):
            record = dict(zip(header, row, strict=False))
            ident, device = record.get("ID", "").strip(), record.get("Device", "")
            cells = (ident, record.get("Process ID", "0"), device)
            if cells not in checked:
                checked[cells] = _identity_problem(*cells)
            problem = checked[cells]
            if not least <= len(row) <= len(header):
                problem = f"{len(row)} cells where the header has {least} to {len(header)}"
            if problem is not None:
                damage.add(line, problem)
                if _INTEGER.match(ident):
                    tainted.add(ident)
                continue
            if len(damage.rows) > seen:  # damaged rows since the last good one
                tainted.update({ident} | ({previous} if previous is not None else set()))
            seen = len(damage.rows)
            previous = record["ID"] = ident
            if record.get("Metric Name", ""):
                record["run"] = str(run)
                record["_line"] = str(line)
                kept.append(record)
        if len(damage.rows) > seen and previous is not None:
            tainted.add(previous)
        _check_groups(block, kept, damage, tainted)
        damage.lost_kernels |= {(run, ident) for ident in tainted}
        yield from (r for r in kept if r["ID"] not in tainted)


def partial_groups(
    keys: list[tuple[str, int]], rows: dict[str, list[tuple[str, str]]]
) -> dict[str, tuple[int, str]]:
    """Kernels of a per-metric page whose rows cannot all be theirs: (line, reason) per key.

    `keys` are (kernel key, line) in file order, one per row, and `rows` each kernel's
    (section, metric) sequence. ncu prints every kernel of a run with the same rows, together;
    rows of one kernel split by another's, or a kernel holding only the first or last rows of
    another kernel's sequence, are what a cut, a lost line or a damaged ID leave behind.
    """
    found: dict[str, tuple[int, str]] = {}
    done: set[str] = set()
    previous = None
    for key, line in keys:
        if key != previous and key in done and key not in found:
            found[key] = (line, f"rows of {key} are split by another kernel's (damaged ID?)")
        if previous is not None and key != previous:
            done.add(previous)
        previous = key
    first_line: dict[str, int] = {}
    for key, line in keys:
        first_line.setdefault(key, line)
    shapes = {tuple(seq) for seq in rows.values()}
    for key, seq in rows.items():
        whole = tuple(seq)
        for other in shapes:
            if len(other) > len(whole) and (other[: len(whole)] == whole or other[-len(whole) :] == whole):
                found.setdefault(
                    key,
                    (
                        first_line[key],
                        f"{key} has {len(whole)} of the {len(other)} metric rows other kernels have "
                        "(truncated file or a lost line?)",
                    ),
                )
                break
    return found


def _check_groups(block: Block, kept: list[dict[str, str]], damage: Damage, tainted: set[str]) -> None:
    labels = {f"kernel ID {r['ID']} of process {r.get('Process ID', '')}": r["ID"] for r in kept}
    keys = [(f"kernel ID {r['ID']} of process {r.get('Process ID', '')}", int(r["_line"])) for r in kept]
    rows: dict[str, list[tuple[str, str]]] = {}
    for (key, _), record in zip(keys, kept, strict=True):
        rows.setdefault(key, []).append((record.get("Section Name", ""), record["Metric Name"]))
    for key, (line, reason) in partial_groups(keys, rows).items():
        damage.add(line, reason)
        tainted.add(labels[key])


_DETAIL_KEYS = ["run", "ID", "Process ID"]
_DETAIL_IDENTITY = [c for c in _CSV_IDENTITY if c not in ("ID", "Process ID")]


def _read_details(blocks: list[Block], style: NumberStyle | None, damage: Damage) -> tuple[pd.DataFrame, int]:
    """One row per kernel: every kernel with a metric row, even one whose metrics are all
    unknown (its values are missing then, but it is not lost)."""
    table = []
    nvtx: dict[tuple[str, ...], str | None] = {}  # the same cells repeat on every metric row
    columns = list(dict.fromkeys(c for b in blocks for c in nvtx_columns(b.header)))
    for r in _details_rows(blocks, damage):
        unit = r.get("Metric Unit", "")
        cells = tuple(r.get(c, "") for c in columns)
        if cells not in nvtx:
            nvtx[cells] = nvtx_of_cells(dict(zip(columns, cells, strict=True)))
        metric = metric_for(r["Metric Name"], unit)
        table.append(
            (
                r["run"],
                r["ID"],
                r.get("Process ID", ""),
                *(r.get(c) for c in _DETAIL_IDENTITY),
                nvtx[cells],
                r.get("Metric Value", ""),
                metric,
                effective_unit(metric, unit) if metric is not None else unit,
            )
        )
    lost = len(damage.lost_kernels)
    if not table:
        return pd.DataFrame(), lost
    records = pd.DataFrame(
        table, columns=[*_DETAIL_KEYS, *_DETAIL_IDENTITY, "nvtx", "Metric Value", "metric", "unit"]
    )
    keys = _DETAIL_KEYS
    ident = records.drop_duplicates(subset=keys).set_index(keys)
    rows = records[records["metric"].notna()].copy()
    if rows.empty:
        wide = pd.DataFrame(index=ident.index)
    else:
        number_style = _style(rows["Metric Value"], style)
        rows["value"] = parse_numbers(rows["Metric Value"], number_style) * rows["unit"].map(si_factor)
        first = rows.drop_duplicates(subset=[*keys, "metric"], keep="first")
        wide = first.pivot(index=keys, columns="metric", values="value").reindex(ident.index)
        wide.columns = [str(c) for c in wide.columns]
    out = pd.DataFrame(index=ident.index)
    for column in _DETAIL_IDENTITY:
        out[_CSV_IDENTITY[column]] = ident[column]
    out["nvtx"] = ident["nvtx"]
    out = pd.concat([out, wide], axis=1).reset_index()
    out = out.rename(columns={"ID": "id", "Process ID": "process_id"})
    out["device_name"] = None
    out["_order"] = pd.to_numeric(out["id"], errors="coerce")
    out = out.sort_values(["run", "_order"], key=_run_key).drop(columns="_order")
    return identity_frame(out.reset_index(drop=True)), lost


def _run_key(column: pd.Series) -> pd.Series:
    return pd.to_numeric(column, errors="coerce")
