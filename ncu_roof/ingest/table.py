"""What every reader returns: one row per profiled launch, identity columns plus ncu metrics in SI.

Launch shape and CC (`settle_shapes`, every report and CSV reader's last step): a kernel gets the same `grid`,
`block` and `cc` from a report, its raw page (any ncu release, any units), details page or `--print-summary`
CSV, in ncu's own spellings (written by `shape_text`, `total_text` and `cc_text` only), from the first of:

* the per-axis dims (`launch__grid_dim_x/y/z`, `launch__block_dim_x/y/z`), exact: `(39312, 1, 1)`
  (all that a report and ncu 2022.3's raw page hold: no `Grid Size` / `Block Size` / `CC` there);
* ncu's text (a CSV page's `Grid Size` / `Block Size`) when it agrees with the launch's totals,
  written again by `shape_text` (a locale's digit group, `(39,312, 1, 1)`, stays in its axis: ncu
  separates axes by `, `); a text that does not read as a shape is kept as it is;
* the totals alone (`launch__grid_size` blocks, `launch__block_size` threads per block, as the details
  page's Launch Statistics and a console `--print-summary` line give them): the bare count, `4096`
  (4096 blocks may be `(64, 64, 1)`); else None.

ncu's text is not the launch's shape with a dimension of 0 (`(0, 0, 0)`: a report without launch
configuration, a failed collection) or a product unlike the launch's total (ncu 2024.1 re-exporting
a report of totals only, ncu 2019's `v100_rep_basic_vectorops`, writes `Grid Size` `(1048576, 1,
1)`, the thread count, against `launch__grid_size` 4096): then both of its texts are ncu's guesses
(its block `(256, 1, 1)` too) and both come from the totals. `cc` is a page's `CC` column, else
`major.minor` of `device__attribute_compute_capability_*`. Console text is read as ncu printed it.

Values no GPU can produce (`exclude_nonsense`: negative, non-finite, or past a ceiling no real
launch comes near) are excluded (NaN) with a note naming the metric: damaged or hand-edited files."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ncu_roof.base.arrays import object_array
from ncu_roof.base.metrics import CC_MAJOR, CC_MINOR
from ncu_roof.base.units import cell_number, cell_texts

if TYPE_CHECKING:  # the readers of raw pages and reports, and the analysis, never load pandas
    import pandas as pd


class InputFormat(Enum):
    NCU_REP = "ncu-rep"
    RAW_CSV = "raw-csv"
    DETAILS_CSV = "details-csv"
    CONSOLE_TEXT = "console-text"  # ncu's own printout (details page or --print-summary)
    SUMMARY_CSV = "summary-csv"  # `--print-summary per-kernel|per-gpu --csv`


IDENTITY: dict[str, pl.DataType] = {  # each identity column's type; a missing value is null
    "run": pl.String(),
    "id": pl.Int64(),
    "process_id": pl.String(),
    "name": pl.Categorical(),  # launches repeat a few hundred names: 12 MB less than text at 100k
    "device": pl.Int64(),
    "cc": pl.String(),
    "device_name": pl.String(),
    "grid": pl.String(),
    "block": pl.String(),
    "nvtx": pl.String(),  # the launch's NVTX ranges as one text (ingest/nvtx.py)
    "input_notes": pl.List(pl.String()),  # notes on this launch's input (excluded values)
}


def identity_frame(values: Mapping[str, Any], rows: int) -> pl.DataFrame:
    """Every identity column, in `IDENTITY` order and type: a scalar is every row's, a column
    a reader lacks is null; an ID or device index given as text is read by `cell_number`."""
    return pl.DataFrame([_identity(name, values.get(name), rows) for name in IDENTITY])


def _identity(name: str, value: Any, rows: int) -> pl.Series:
    dtype = IDENTITY[name]
    if isinstance(value, pl.Series):
        return value.alias(name).cast(dtype)
    if value is None or isinstance(value, str):
        return pl.repeat(value, rows, dtype=dtype, eager=True).alias(name)
    if dtype == pl.Int64:
        numbers = [cell_number(v) if isinstance(v, str) else v for v in value]
        return pl.Series(name, numbers, dtype=pl.Float64, nan_to_null=True).cast(dtype)
    return pl.Series(name, value, dtype=dtype, strict=False)


def row_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A reader's launches as rows (dicts) → `RunTable.launches`, a metric a launch lacks NaN; one some
    launch gives as text is text, numbers as Python writes them (exact: `cell_number`), NaN as null."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    present = {c: [row.get(c) for row in rows] for c in IDENTITY if c in names}
    metrics: list[pl.Series] = []
    for name in [n for n in names if n not in IDENTITY]:
        values = [row.get(name, math.nan) for row in rows]
        if all(isinstance(v, float) for v in values):
            metrics.append(pl.Series(name, values, dtype=pl.Float64))
        else:
            metrics.append(pl.Series(name, cell_texts(values), dtype=pl.String))
    return identity_frame(present, len(rows)).hstack(metrics)


# --- launch shape and compute capability (the module docstring) ---------------------------------

KINDS = ("grid", "block")
_AXIS_SEPARATOR = re.compile(r",\s+")  # ncu's `, ` between axes; a digit group has no space
_DIGIT_GROUPS = re.compile(r"[,.'\s]")


def _count(value: object, least: int = 1) -> int | None:
    """A whole number from `least` up, else None (missing, NaN, too small, fractional)."""
    number = cell_number(value)
    return int(number) if math.isfinite(number) and number >= least and number == int(number) else None


def shape_text(dims: Sequence[object]) -> str | None:
    """`(x, y, z)` as ncu writes a launch shape; None unless every axis is a positive count."""
    counts = [_count(d) for d in dims]
    return None if None in counts else "(" + ", ".join(str(c) for c in counts) + ")"


def total_text(total: object) -> str | None:
    """A total alone (blocks in the grid, threads in a block): the bare count, `4096`."""
    count = _count(total)
    return None if count is None else str(count)


def cc_text(major: object, minor: object) -> str | None:
    """`8.6` from the two device attributes; None unless both are whole numbers (0 included)."""
    numbers = [_count(major, 0), _count(minor, 0)]
    return None if None in numbers else f"{numbers[0]}.{numbers[1]}"


def _ncu_text(text: object, total: float) -> tuple[bool, str | None]:
    """Whether ncu's text may be the launch's (False: a product unlike its total), and the text to give: its
    axes (split at `, `) by `shape_text` or `total_text`, else as it is; None for none or an axis of 0."""
    if not isinstance(text, str) or not text.strip():
        return True, None
    stripped = text.strip()
    shaped = stripped.startswith("(") and stripped.endswith(")")
    inner = stripped[1:-1].strip() if shaped else stripped
    parts = _AXIS_SEPARATOR.split(inner) if shaped else [inner]  # a count: any separators are digit groups
    if len(parts) == 1 and shaped:
        parts = inner.split(",")
    digits = [_DIGIT_GROUPS.sub("", part) for part in parts]
    if not all(axis.isascii() and axis.isdigit() for axis in digits):
        return True, text  # not a shape: kept as it is
    axes = [int(axis) for axis in digits]
    if 0 in axes:
        return True, None
    if total >= 1 and math.prod(axes) != total:
        return False, None
    return True, shape_text(axes) if shaped else total_text(axes[0])


_SHAPE_METRICS = (
    *(f"launch__{kind}_dim_{axis}" for kind in KINDS for axis in "xyz"),
    *(f"launch__{kind}_size" for kind in KINDS),  # blocks, threads per block
    CC_MAJOR,
    CC_MINOR,
)


def _settled(row: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """One distinct row's `grid`, `block` and `cc` (its texts, and those `_SHAPE_METRICS` the
    page has: numbers, or texts a report gave, each read by `cell_number`)."""
    totals = [cell_number(row.get(f"launch__{kind}_size")) for kind in KINDS]
    texts = [_ncu_text(row[kind], total) for kind, total in zip(KINDS, totals, strict=True)]
    trusted = all(agrees for agrees, _ in texts)
    shapes = [
        shape_text([row.get(f"launch__{kind}_dim_{axis}") for axis in "xyz"])
        or (text if trusted else None)
        or total_text(total)
        for kind, (_, text), total in zip(KINDS, texts, totals, strict=True)
    ]
    cc: str | None = row["cc"]
    if cc is None or not cc.strip():
        cc = cc_text(row.get(CC_MAJOR), row.get(CC_MINOR))
    return shapes[0], shapes[1], cc


def settle_shapes(launches: pl.DataFrame) -> pl.DataFrame:
    """The reader's launches with `grid`, `block` and `cc` settled as the module docstring says: each
    distinct (texts, dims, totals, capability) row once, joined back (a pass per row: 0.1 s at 100k)."""
    metrics = [launches.get_column(c) for c in _SHAPE_METRICS if c in launches.columns]
    keys = pl.DataFrame([*launches.select("grid", "block", "cc").get_columns(), *metrics])
    distinct = keys.unique(maintain_order=True)  # (NaN equals NaN here and in the join)
    names = {f"settled_{c}": c for c in ("grid", "block", "cc")}
    settled = [_settled(dict(zip(keys.columns, row, strict=True))) for row in distinct.iter_rows()]
    distinct = distinct.hstack(pl.DataFrame(settled, schema=dict.fromkeys(names, pl.String), orient="row"))
    out = keys.join(distinct, on=keys.columns, how="left", nulls_equal=True, maintain_order="left")
    return launches.with_columns(out.get_column(k).alias(c) for k, c in names.items())


@dataclass(frozen=True)
class RunTable:
    """The launches read from one input file: `IDENTITY`'s columns (null where missing) and one per
    ncu metric in SI (seconds, bytes, hertz, byte/s; ratios as printed), float64, NaN where missing
    (text only where a report gives it as text: `row_frame`). `warnings`: on the whole file (rows
    skipped, bytes replaced); `averaged`: metrics averaged over invocations (`--print-summary`)."""

    path: str
    format: InputFormat
    ncu_version: str | None
    launches: pl.DataFrame
    warnings: tuple[str, ...] = ()
    averaged: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        return self.launches.height

    @property
    def metric_columns(self) -> list[str]:
        return [c for c in self.launches.columns if c not in IDENTITY]

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The launches as a pandas DataFrame (for notebooks): ID and device as nullable integers,
        texts as objects (None where missing), a launch's notes as a tuple."""
        import pandas as pd

        data: dict[str, Any] = {}
        for column in self.launches.iter_columns():
            if column.dtype == pl.Float64:
                data[column.name] = column.to_numpy()
            elif column.dtype == pl.Int64:
                data[column.name] = pd.array(column.to_list(), dtype="Int64")
            else:
                values = column.to_list()
                data[column.name] = object_array(tuple(v) if isinstance(v, list) else v for v in values)
        return pd.DataFrame(data, index=pd.RangeIndex(self.rows))


# --- values no GPU can produce (the module docstring) ---------------------------------------------

_DAY_S = 86_400.0
# (metric-name regex, ceiling in SI, what the ceiling means)
_CEILINGS: tuple[tuple[re.Pattern[str], float, str], ...] = (
    (re.compile("gpu__time_duration"), _DAY_S, "a kernel duration over a day"),
    (re.compile("pct_of_peak"), 1000.0, "over 1000% of peak"),
    (re.compile(r"cycles_elapsed\.avg\.per_second"), 1e11, "a clock over 100 GHz"),
    (re.compile(r"^(?!.*per_second).*bytes"), 1e18, "over 1 EB"),  # a byte count, not a rate
)


def exclude_nonsense(launches: pl.DataFrame, metrics: list[str]) -> tuple[pl.DataFrame, int]:
    """Negative, non-finite or implausible metric values → NaN, with a note on their row in
    `input_notes`; the launches (new columns where changed) and the number of values excluded."""
    replaced: list[pl.Series] = []
    notes: dict[int, list[str]] = {}
    for metric in metrics:
        column = launches.get_column(metric)
        if column.dtype != pl.Float64:
            continue
        values = column.to_numpy()
        ceiling, meaning = next(((c, m) for p, c, m in _CEILINGS if p.search(metric)), (math.inf, ""))
        bad = np.isinf(values) | (values < 0) | (values > ceiling)
        if not bad.any():
            continue
        for position in np.flatnonzero(bad):
            value = float(values[position])
            why = "is not finite" if not np.isfinite(value) else "is negative" if value < 0 else ""
            why = why or f"is implausible ({meaning})"
            notes.setdefault(int(position), []).append(f"input: {metric} = {value:g} {why}; excluded")
        replaced.append(pl.Series(metric, np.where(bad, np.nan, values)))
    return with_notes(launches.with_columns(replaced), notes), sum(map(len, notes.values()))


def with_notes(launches: pl.DataFrame, notes: Mapping[int, Sequence[str]]) -> pl.DataFrame:
    if not notes:
        return launches
    merged = launches.get_column("input_notes").to_list()
    for i, lines in notes.items():
        merged[i] = [*(merged[i] or ()), *lines]
    return launches.with_columns(pl.Series("input_notes", merged, dtype=pl.List(pl.String)))
