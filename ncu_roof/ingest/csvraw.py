"""The raw page (`--page raw`): one row per launch, one column per metric.

Read with pyarrow, only the columns the recipe needs, as text (a block with a damaged row again
with the csv module, to name its line), kept in Arrow until each metric is parsed once to float64.
Checked once a block is parsed: no units row under the header (every value's scale unknown: a
duration in `us` read as if in ncu's base unit) damages its kernels; gaps in the IDs (`check_ids`);
a cell that reads as no number (none of ncu's words for missing) is a note on its launch."""

from __future__ import annotations

import csv
import functools
import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.units import (
    NumberStyle,
    detect_number_style,
    effective_unit,
    parse_numbers,
    si_factor,
    unreadable,
)
from ncu_roof.ingest.csvblocks import (
    _CSV_IDENTITY,
    _DEVICE,
    _INTEGER,
    LAUNCH_ID,
    Block,
    Damage,
    check_ids,
    device_problem,
    id_problem,
    looks_like_data,
    records,
    unreadable_note,
)
from ncu_roof.ingest.nvtx import nvtx_columns, nvtx_of_cells
from ncu_roof.ingest.table import identity_frame, with_notes

if TYPE_CHECKING:
    import pyarrow as pa


DISPLAY_NAME = "device__attribute_display_name"  # the one wanted metric that is text


@dataclass(frozen=True)
class RawPart:
    """One block's intact rows: the chosen columns as text, the unit of each numeric metric, its run."""

    cells: pa.Table
    units: dict[str, str]
    run: int


def parse_raw(blocks: list[Block], damage: Damage) -> list[RawPart]:
    """The intact rows of every block, as text: all that needs the file's bytes."""
    return [p for run, b in enumerate(blocks) if (p := _read_raw_block(b, run, damage)) is not None]


def finish_raw(parts: list[RawPart], style: NumberStyle | None) -> pl.DataFrame | None:
    """The launches of the parsed rows, every metric a number (None when no row is intact)."""
    if not parts:
        return None
    number_style = detect_number_style([cell for p in parts for cell in _sample_cells(p)], style)
    if len(parts) == 1:
        return _finish_raw(parts[0], number_style)
    # columns in first-seen order; a metric a block lacks is NaN there, never null: a float64
    # column of one chunk without nulls is numpy's own array, both ways, without a copy
    launches = pl.concat([_finish_raw(p, number_style) for p in parts], how="diagonal_relaxed")
    return launches.with_columns(pl.col(pl.Float64).fill_null(math.nan))


def _read_raw_block(block: Block, run: int, damage: Damage) -> RawPart | None:
    header, first_end = block.header, block.data.find(b"\n")
    if first_end == -1:  # (only a last block can lack a line break: cut in its header)
        damage.cut_short(block.line)
        return None
    second_end = block.data.find(b"\n", first_end + 1)
    units_line = block.data[first_end + 1 : second_end if second_end != -1 else len(block.data)]
    try:
        units_row = next(csv.reader([units_line.decode("utf-8", "replace").rstrip("\r")]), [])
    except csv.Error:
        units_row = []
    has_units = bool(units_row) and not _INTEGER.match(units_row[0])
    # each name's unit: its first column's (a units row may be short)
    unit_of = dict(reversed(list(zip(header, units_row if has_units else [], strict=False))))
    identity = [c for c in header if c in _CSV_IDENTITY]
    metrics = [c for c in header if is_wanted(c)]
    times = Counter(header)  # a name twice in the header is no column of its own
    chosen = list(dict.fromkeys(c for c in identity + nvtx_columns(header) + metrics if times[c] == 1))
    units = {c: effective_unit(c, unit_of.get(c, "")) for c in metrics if c != DISPLAY_NAME}
    lines: list[int] | None = None
    before, table = len(damage.rows), _parse_block(block, chosen, has_units)
    if table is None:  # damaged somewhere: the slow reader says where
        table, lines = _raw_slow(block, chosen, has_units, damage)
    # each row left out as the index of the row read after it (for `check_ids`)
    left_out: np.ndarray = np.searchsorted(lines or [], sorted({n for n, _ in damage.rows[before:]}))
    table, kept = _check_identity(table, lines, block, damage)
    if kept is not None:  # and the rows it left out; then the indices among the rows it kept
        left_out = np.r_[left_out, np.flatnonzero(~kept)].astype(np.int64)
        left_out -= np.cumsum(np.r_[0, ~kept])[left_out]
        lines = None if lines is None else [n for n, keep in zip(lines, kept, strict=True) if keep]
    if table.num_rows and not has_units:  # all the block's kernels damaged
        rows = table.num_rows
        damage.lose(
            block.line + 1,
            f"no units row under the raw page's header: the values of its {rows} "
            f"kernel{'s' if rows != 1 else ''} have no known units "
            "(re-export with `ncu --import R --csv --page raw`)",
            rows,
        )
        return None
    ids = _text(table, "ID")  # (checked: whole numbers)
    check_ids(
        [] if ids is None else ids.to_numpy(),
        lambda row: lines[row] if lines else _find_line(block, table, row),
        damage,
        left_out,
    )
    if table.num_rows == 0:
        if len(damage.rows) == before and not block.last:  # ncu prints no header without rows
            damage.add(
                block.line + 1 + has_units, "a raw-page header with no kernel row under it (a lost row?)"
            )
        return None
    return RawPart(table, units, run)


def _parse_block(block: Block, chosen: list[str], has_units: bool) -> pa.Table | None:
    """pyarrow's streaming read of the chosen columns as text; None for a damaged row, a cut block or unpaired
    quotes (one-shot `read_csv`, two threads: as long, 2x the CPU, ~200 MB more at 100k launches)."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    if (block.last and not block.data.endswith(b"\n")) or _quotes(block.data) % 2:
        return None
    columns = len(block.header)
    damaged: list[str] = []

    def invalid(row: object) -> str:
        line = str(getattr(row, "text", ""))
        if looks_like_data(line, columns):
            damaged.append(line)
        return "skip"

    # 2 MB blocks: a row stays far smaller than a block
    options = pacsv.ReadOptions(skip_rows_after_names=int(has_units), block_size=1 << 21, use_threads=True)
    try:
        table = pacsv.open_csv(
            pa.BufferReader(pa.py_buffer(block.data)),  # the bytes themselves, no copies
            read_options=options,
            parse_options=pacsv.ParseOptions(invalid_row_handler=invalid),
            convert_options=pacsv.ConvertOptions(
                include_columns=chosen,
                column_types={c: pa.string() for c in chosen},
                strings_can_be_null=False,
            ),
        ).read_all()
    except (pa.ArrowInvalid, pa.ArrowKeyError, pa.ArrowTypeError):
        return None
    finally:
        pa.default_memory_pool().release_unused()  # the parse buffers, before the numbers are made
    return None if damaged else table


def _quotes(data: bytes) -> int:
    """The `"` in `data`, by numpy in 4 MiB chunks (`bytes.count` loops: 0.11 s for 225 MB, this 0.03 s)."""
    view, step = np.frombuffer(data, np.uint8), 1 << 22
    return sum(int(np.count_nonzero(view[i : i + step] == ord('"'))) for i in range(0, len(view), step))


def _raw_slow(block: Block, chosen: list[str], has_units: bool, damage: Damage) -> tuple[pa.Table, list[int]]:
    """The csv module, row by row: every damaged row reported with its line."""
    width, where = len(block.header), [block.header.index(c) for c in chosen]
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
    return pl.DataFrame(rows, schema=dict.fromkeys(chosen, pl.String), orient="row").to_arrow(), lines


def _check_identity(
    table: pa.Table, lines: list[int] | None, block: Block, damage: Damage
) -> tuple[pa.Table, np.ndarray | None]:
    """Rows whose ID is no launch ID or whose Device is no small non-negative integer are damaged and
    left out (with the rows kept, None: all); an empty Device is no device (the GPU ncu names first)."""
    import pyarrow.compute as pc

    bad = np.zeros(table.num_rows, dtype=bool)
    reasons: dict[int, str] = {}
    for column, pattern in (("ID", LAUNCH_ID), ("Device", _DEVICE)):
        if column not in table.column_names:
            continue
        cells = table[column]
        right = pc.match_substring_regex(cells, pattern.pattern)
        if column == "Device":
            right = pc.or_(right, pc.match_substring_regex(pc.utf8_trim_whitespace(cells), "^$"))
        wrong = ~pl.Series(right).to_numpy()
        for position in np.flatnonzero(wrong).tolist():
            text = str(cells[position].as_py())
            reasons.setdefault(position, id_problem(text) if column == "ID" else device_problem(text))
        bad |= wrong
    if not bad.any():
        return table, None
    for row, reason in sorted(reasons.items()):
        damage.add(lines[row] if lines else _find_line(block, table, row), reason)
    return table.filter(pl.Series(~bad).to_arrow()), ~bad


def _find_line(block: Block, table: pa.Table, row: int) -> int:
    """The line of a row pyarrow read (only on the error path): found by its ID cell."""
    ident = table["ID"][row].as_py() if "ID" in table.column_names else ""
    cell = str(ident).encode("utf-8", "replace")
    for needle in (b'\n"' + cell + b'",', b"\n" + cell + b","):
        if (offset := block.data.find(needle)) != -1:
            return block.line + block.data.count(b"\n", 0, offset + 1)
    return block.line


_SAMPLE_ROWS = 512


def _sample_cells(part: RawPart) -> list[str | None]:
    """Distinct cells of ≤ `_SAMPLE_ROWS` evenly spaced rows, for the locale: a raw page's row has hundreds of
    numbers, clocks ~1e9, so a few hundred rows hold all evidence (all cells: dearer than parsing)."""
    if not part.units:
        return []
    table = part.cells.select(list(part.units))
    rows = table.num_rows
    if rows > _SAMPLE_ROWS:  # the sample taken by Arrow: Polars copies every text it is given
        step = rows / _SAMPLE_ROWS
        picked = sorted({int(i * step) for i in range(_SAMPLE_ROWS)} | {rows - 1})
        table = table.take(pl.Series(picked, dtype=pl.Int64).to_arrow())
    return pl.concat(pl.DataFrame(table).get_columns()).unique().to_list()


def _finish_raw(part: RawPart, style: NumberStyle) -> pl.DataFrame:
    """Identity columns from the text (ID and device as integers), then every metric parsed once (SI)."""
    table = part.cells
    identity: dict[str, object] = {name: _text(table, column) for column, name in _CSV_IDENTITY.items()}
    identity["run"] = str(part.run)
    identity["device_name"] = _text(table, DISPLAY_NAME)
    columns = nvtx_columns(table.column_names)
    if columns:  # each row's NVTX text (launches share a few distinct cells)
        nvtx = functools.cache(lambda *cells: nvtx_of_cells(dict(zip(columns, cells, strict=True))))
        identity["nvtx"] = [nvtx(*row) for row in zip(*(table[c].to_pylist() for c in columns), strict=True)]
    metrics: list[pl.Series] = []
    notes: dict[int, list[str]] = {}
    for metric in part.units:  # each metric column parsed once, in SI units
        values = parse_numbers(part.cells[metric], style)
        factor = si_factor(part.units[metric])
        metrics.append(pl.Series(metric, values * factor if factor != 1.0 else values))
        if np.isnan(values).any():  # a note on each cell that reads as no number
            for row, text in unreadable(table[metric], values):
                notes.setdefault(row, []).append(unreadable_note(metric, text))
    return with_notes(identity_frame(identity, table.num_rows).hstack(metrics), notes)


def _text(table: pa.Table, column: str) -> pl.Series | None:
    """A text column (null where null); ID and Device (`_check_identity`: digits or empty) as integers,
    null where empty (not by `replace`, whose first use maps 11 MB of Polars while the file is held)."""
    import pyarrow.compute as pc

    if column not in table.column_names:
        return None
    if column in ("ID", "Device"):
        return pl.Series(pc.utf8_trim_whitespace(table[column])).cast(pl.Int64, strict=False)
    return pl.Series(table[column])
