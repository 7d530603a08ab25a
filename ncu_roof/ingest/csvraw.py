"""The raw page (`--page raw`): one row per launch, one column per metric.

Read with pyarrow, only the columns the recipe needs; a block with a damaged row is read again
row by row (csv module) so that every damaged row is named with its line.
"""

from __future__ import annotations

import csv
import io

import pandas as pd

from ncu_roof.ingest.csvblocks import (
    _CSV_IDENTITY,
    _DEVICE,
    _INTEGER,
    Block,
    Damage,
    choose_style,
    looks_like_data,
    one_cell,
    records,
)
from ncu_roof.ingest.nvtx import nvtx_columns, nvtx_of_cells
from ncu_roof.ingest.table import identity_frame
from ncu_roof.metrics import is_wanted
from ncu_roof.units import NumberStyle, effective_unit, parse_numbers, si_factor


def read_raw(blocks: list[Block], style: NumberStyle | None, damage: Damage) -> tuple[pd.DataFrame, int]:
    parts = [p for run, b in enumerate(blocks) if (p := _read_raw_block(b, run, damage)) is not None]
    if not parts:
        return pd.DataFrame(), 0
    cells = pd.concat([p[1] for p in parts], ignore_index=True)
    number_style = choose_style(cells, style)
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

