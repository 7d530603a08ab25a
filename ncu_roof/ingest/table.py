"""What every reader returns: one row per profiled launch, identity columns plus ncu metrics in SI.

Launch shape and compute capability (`settle_shapes`): one text for each, whichever form a run
was read from. Every reader of reports and CSV pages ends with `settle_shapes`, so a kernel gets
the same `grid`, `block` and `cc` from a report, its raw page (any ncu release, any units), its
details page or its `--print-summary` CSV. The texts are ncu's own spellings, written by
`shape_text`, `total_text` and `cc_text` only:

* From the per-axis dims (`launch__grid_dim_x/y/z`, `launch__block_dim_x/y/z`), exact:
  `(39312, 1, 1)`. A report and a raw page of ncu 2022.3 hold only these (2022.3's raw page has no
  `Grid Size` / `Block Size` / `CC` columns).
* Else from ncu's own text (the `Grid Size` / `Block Size` columns of a CSV page) when it agrees
  with the launch's totals, written again by `shape_text` (a digit group of a locale,
  `(39,312, 1, 1)`, stays in its axis: ncu separates axes by `, `).
* Else from the totals alone (`launch__grid_size`, `launch__block_size`: blocks, and threads per
  block; the details page's Launch Statistics `Grid Size` / `Block Size` rows): the bare count,
  `4096`. A total is not a 3-D shape (4096 blocks may be `(64, 64, 1)`), so it is not written as
  one; the bare count is how the console reader gives the launches of a `--print-summary` line
  (`Block Size 256, Grid Size 4096`), which knows only totals.
* Else None (unknown).

ncu's text is not used when it cannot be the launch's shape:

* a dimension of 0 (`(0, 0, 0)`): what ncu writes for a launch whose report holds no launch
  configuration (a failed collection); no launch has one, and the report itself gives none;
* a product that differs from the launch's total: ncu 2024.1 re-exporting a report that holds only
  totals (ncu 2019's, `v100_rep_basic_vectorops`) writes `Grid Size` `(1048576, 1, 1)`, the thread
  count, against `launch__grid_size` 4096. Then both of that launch's texts (grid and block) are
  ncu's guesses, not what it read, and both are taken from the totals (`4096`, `256`): the block
  `(256, 1, 1)` it writes beside is a guess of the same kind.

A text that does not read as a shape at all is kept as it is (nothing to check it against). `cc`
is the `CC` column when a page has one, else `major.minor` of
`device__attribute_compute_capability_major/minor`. Console text (`ingest.console`) is read as ncu
printed it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ncu_roof.base.metrics import CC_MAJOR, CC_MINOR
from ncu_roof.base.units import cell_number

if TYPE_CHECKING:  # the readers of raw pages and reports, and the analysis, never load pandas
    import pandas as pd


class InputFormat(Enum):
    NCU_REP = "ncu-rep"
    RAW_CSV = "raw-csv"
    DETAILS_CSV = "details-csv"
    CONSOLE_TEXT = "console-text"  # ncu's own printout (details page or --print-summary)
    SUMMARY_CSV = "summary-csv"  # `--print-summary per-kernel|per-gpu --csv`


IDENTITY_COLUMNS = (
    "run",
    "id",
    "process_id",
    "name",
    "device",
    "cc",
    "device_name",
    "grid",
    "block",
    "nvtx",  # the launch's NVTX ranges as one text (ingest/nvtx.py), or None
    "input_notes",  # a tuple of notes on this launch's input (excluded values), or None
)
INTEGER_COLUMNS = ("id", "device")  # float64 in `RunTable.columns` (NaN where missing), Int64 in `frame`

Columns = Mapping[str, np.ndarray]


def identity_columns(values: Mapping[str, Any], rows: int) -> dict[str, np.ndarray]:
    """Every identity column, in `IDENTITY_COLUMNS` order: ID and device as float64 (NaN where
    missing), the others as objects (None where a reader has none; a scalar is every row's)."""
    out: dict[str, np.ndarray] = {}
    for column in IDENTITY_COLUMNS:
        value = values.get(column)
        if column in INTEGER_COLUMNS:
            out[column] = _integers(value, rows)
            continue
        cells = np.empty(rows, dtype=object)
        cells[:] = value if isinstance(value, (list, tuple, np.ndarray)) else [value] * rows
        out[column] = cells
    return out


def _integers(value: Any, rows: int) -> np.ndarray:
    if value is None:
        return np.full(rows, np.nan)
    cells = np.asarray(value)
    if cells.dtype.kind in "iuf":
        return cells.astype("float64")
    return np.array([cell_number(v) for v in cells.tolist()], dtype="float64")


def row_columns(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """A reader's launches as rows (dicts) → `RunTable.columns`. A metric a launch lacks is NaN
    there, an identity column it lacks None; a metric column is float64 unless some launch gives
    it as text."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    present = {c: [row.get(c) for row in rows] for c in IDENTITY_COLUMNS if c in names}
    metrics: dict[str, np.ndarray] = {}
    for name in names:
        if name in IDENTITY_COLUMNS:
            continue
        values = [row.get(name, np.nan) for row in rows]
        if all(isinstance(v, float) for v in values):
            metrics[name] = np.array(values, dtype="float64")
        else:
            cells = np.empty(len(values), dtype=object)
            cells[:] = values
            metrics[name] = cells
    return {**identity_columns(present, len(rows)), **metrics}


def concat_columns(parts: list[Columns]) -> Columns:
    """Parts one after another (as pandas concatenates frames): columns in first-seen order, a
    column a part lacks is NaN there."""
    if len(parts) == 1:
        return parts[0]
    names = list(dict.fromkeys(c for p in parts for c in p))
    return {
        c: np.concatenate([p[c] if c in p else np.full(len(p["id"]), np.nan) for p in parts]) for c in names
    }


# --- launch shape and compute capability (the module docstring) ---------------------------------

KINDS = ("grid", "block")
_AXIS_SEPARATOR = re.compile(r",\s+")  # ncu's `, ` between axes; a digit group has no space
_DIGIT_GROUPS = re.compile(r"[,.'\s]")
_MISSING = -1.0  # a missing number in the keys of `settle_shapes` (NaN would not sort as one
# value): no count, dimension or capability is negative, so every helper reads it as missing


def _count(value: object) -> int | None:
    """A positive whole number, else None (missing, NaN, 0, negative, fractional)."""
    number = cell_number(value) if not isinstance(value, (int, float)) else float(value)
    if not math.isfinite(number) or number < 1 or number != int(number):
        return None
    return int(number)


def shape_text(dims: Sequence[object]) -> str | None:
    """`(x, y, z)` as ncu writes a launch shape; None unless every axis is a positive count."""
    counts = [_count(d) for d in dims]
    if not counts or any(c is None for c in counts):
        return None
    return "(" + ", ".join(str(c) for c in counts) + ")"


def total_text(total: object) -> str | None:
    """A total alone (blocks in the grid, threads in a block): the bare count, `4096`."""
    count = _count(total)
    return None if count is None else str(count)


def cc_text(major: object, minor: object) -> str | None:
    """`8.6` from the two device attributes; None unless both are whole numbers (0 included)."""
    numbers = [cell_number(v) if not isinstance(v, (int, float)) else float(v) for v in (major, minor)]
    if not all(math.isfinite(n) and n >= 0 and n == int(n) for n in numbers):
        return None
    return f"{int(numbers[0])}.{int(numbers[1])}"


def _parsed(text: str) -> tuple[tuple[int, ...], bool] | None:
    """The axes of ncu's text and whether it is a shape: `(8, 8, 1)` → ((8, 8, 1), True), `4096`
    → ((4096,), False); None when it reads as neither. Axes are split at `, ` (ncu's own
    separator), so digit groups of a locale (`(39,312, 1, 1)`, `4.096`) stay inside their axis."""
    stripped = text.strip()
    shaped = stripped.startswith("(") and stripped.endswith(")")
    inner = stripped[1:-1].strip() if shaped else stripped
    if not shaped:  # a count: any separators are digit groups
        parts = [inner]
    elif _AXIS_SEPARATOR.search(inner):
        parts = _AXIS_SEPARATOR.split(inner)
    else:
        parts = inner.split(",")
    axes = [_DIGIT_GROUPS.sub("", part) for part in parts]
    if not all(axis.isascii() and axis.isdigit() for axis in axes):
        return None
    return tuple(int(axis) for axis in axes), shaped


def _text_state(text: object, total: float) -> tuple[str, str | None]:
    """What ncu's text says — 'none', 'zero' (no shape), 'wrong' (not its total), 'good' — and
    the text to give for it ('good'): written by `shape_text` / `total_text`, or as it is when
    it does not read as a shape."""
    if not isinstance(text, str) or not text.strip():
        return "none", None
    parsed = _parsed(text)
    if parsed is None:
        return "good", text  # not a shape: kept as it is
    axes, shaped = parsed
    if 0 in axes:
        return "zero", None
    if total >= 1 and math.prod(axes) != total:
        return "wrong", None
    return "good", shape_text(axes) if shaped else total_text(axes[0])


def _launch(
    texts: tuple[object, object], dims: tuple[Sequence[float], ...], totals: tuple[float, float]
) -> tuple[str | None, str | None]:
    states = [_text_state(t, total) for t, total in zip(texts, totals, strict=True)]
    trusted = all(state != "wrong" for state, _ in states)
    out: list[str | None] = []
    for (state, text), axes, total in zip(states, dims, totals, strict=True):
        exact = shape_text(axes)
        if exact is not None:
            out.append(exact)
        elif trusted and state == "good":
            out.append(text)
        else:
            out.append(total_text(total))
    return out[0], out[1]


def _numbers(columns: Mapping[str, np.ndarray], name: str, rows: int) -> np.ndarray:
    """A metric column as floats, `_MISSING` where missing (or where the page has no such column)."""
    values = columns.get(name)
    if values is None:
        return np.full(rows, _MISSING)
    if values.dtype.kind != "f":
        values = np.array([cell_number(v) for v in values.tolist()], dtype="float64")
    return np.where(np.isnan(values), _MISSING, values)


def _texts(columns: Mapping[str, np.ndarray], name: str, rows: int) -> tuple[np.ndarray, list[str]]:
    """A text column's codes (as floats) and its distinct texts, a missing text as "" (which
    `_text_state` and the capability read as none, as they read None)."""
    values = columns.get(name)
    if values is None:
        return np.zeros(rows), [""]
    texts = [v if isinstance(v, str) else "" for v in values.tolist()]
    code = {text: k for k, text in enumerate(dict.fromkeys(texts))}
    return np.fromiter(map(code.__getitem__, texts), dtype="float64", count=rows), list(code)


def settle_shapes(columns: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The reader's columns with `grid`, `block` and `cc` settled as the module docstring says.

    Launches share a few distinct (texts, dims, totals, capability) rows: each is settled once
    (one sort of the rows' bytes finds them; a Python pass per row cost 0.1 s at 100k launches).
    """
    rows = len(columns["id"])
    out = dict(columns)
    (grid, grids), (block, blocks), (cc, ccs) = (_texts(columns, c, rows) for c in ("grid", "block", "cc"))
    numbers = [
        *(_numbers(columns, f"launch__{kind}_dim_{axis}", rows) for kind in KINDS for axis in "xyz"),
        *(_numbers(columns, f"launch__{kind}_size", rows) for kind in KINDS),  # blocks, threads per block
        _numbers(columns, CC_MAJOR, rows),
        _numbers(columns, CC_MINOR, rows),
    ]
    if rows == 0:
        return out
    every = [grid, block, cc, *numbers]
    varying = [column for column in every if not (column == column[0]).all()]  # most are constant
    if varying:
        packed = np.ascontiguousarray(np.column_stack(varying))
        packed = packed.view(np.dtype((np.void, packed.dtype.itemsize * packed.shape[1]))).ravel()
        _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    else:
        first, inverse = np.zeros(1, dtype=np.intp), np.zeros(rows, dtype=np.intp)
    settled = np.empty((3, len(first)), dtype=object)  # grid, block and cc of each distinct row
    for j, row in enumerate(first.tolist()):
        key = [float(column[row]) for column in every]
        texts = (grids[int(key[0])], blocks[int(key[1])])
        dims, totals, (major, minor) = (key[3:6], key[6:9]), (key[9], key[10]), key[11:13]
        settled[0, j], settled[1, j] = _launch(texts, dims, totals)
        text = ccs[int(key[2])]
        settled[2, j] = text if isinstance(text, str) and text.strip() else cc_text(major, minor)
    out["grid"], out["block"], out["cc"] = (kind[inverse.ravel()] for kind in settled)
    return out


@dataclass(frozen=True)
class RunTable:
    """The launches read from one input file.

    `columns` holds the identity columns above (texts as objects, missing as None; ID and device
    index as float64, NaN where missing) and one float64 column per ncu metric, already scaled to
    SI (seconds, bytes, hertz, byte/s; ratios as printed). `frame` is the same as a DataFrame.
    `warnings` are what the reader says about the file as a whole (rows skipped, bytes replaced);
    `averaged` names the metrics whose values are averages over several invocations (a
    `--print-summary` input; empty otherwise).
    """

    path: str
    format: InputFormat
    ncu_version: str | None
    columns: Columns
    warnings: tuple[str, ...] = ()
    averaged: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        """The number of launches."""
        return len(self.columns["id"])

    @property
    def metric_columns(self) -> list[str]:
        return [c for c in self.columns if c not in IDENTITY_COLUMNS]

    def metrics(self) -> dict[str, np.ndarray]:
        """The metric columns alone (what the recipe reads)."""
        return {c: self.columns[c] for c in self.metric_columns}

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The launches as a DataFrame (for notebooks): ID and device as nullable integers."""
        import pandas as pd

        data: dict[str, Any] = dict(self.columns)
        for column in INTEGER_COLUMNS:
            data[column] = pd.array(np.asarray(self.columns[column], dtype="float64"), dtype="Int64")
        return pd.DataFrame(data, index=pd.RangeIndex(self.rows))
