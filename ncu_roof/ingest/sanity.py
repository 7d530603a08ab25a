"""Values no GPU can produce are excluded (NaN) with a note naming the metric, never passed on.

Every ncu counter, rate and percentage the recipe reads is non-negative and finite; a few have a
ceiling no real launch comes near. Such values come from damaged or hand-edited files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from ncu_roof.ingest.csvblocks import one_cell

_DAY_S = 86_400.0
# (metric-name test, ceiling in SI, what the ceiling means)
_CEILINGS: tuple[tuple[str, float, str], ...] = (
    ("gpu__time_duration", _DAY_S, "a kernel duration over a day"),
    ("pct_of_peak", 1000.0, "over 1000% of peak"),
    ("cycles_elapsed.avg.per_second", 1e11, "a clock over 100 GHz"),
    ("bytes", 1e18, "over 1 EB"),
)


def exclude_nonsense(launches: pl.DataFrame, metrics: list[str]) -> tuple[pl.DataFrame, int]:
    """Negative, non-finite or implausible metric values → NaN, with a note on their row in
    `input_notes`; returns the launches (new columns where values were excluded) and the number
    of values excluded."""
    replaced: list[pl.Series] = []
    notes: dict[int, list[str]] = {}
    excluded = 0
    for metric in metrics:
        column = launches.get_column(metric)
        if column.dtype != pl.Float64:
            continue
        values = column.to_numpy()
        bad = np.isinf(values) | (values < 0)
        ceiling, meaning = next(
            (c[1:] for c in _CEILINGS if c[0] in metric and not (c[0] == "bytes" and "per_second" in metric)),
            (math.inf, ""),
        )
        if meaning:
            bad |= values > ceiling
        if not bad.any():
            continue
        for position in np.flatnonzero(bad):
            value = float(values[position])
            why = "is not finite" if not np.isfinite(value) else "is negative" if value < 0 else ""
            why = why or f"is implausible ({meaning})"
            notes.setdefault(int(position), []).append(f"input: {metric} = {value:g} {why}; excluded")
        excluded += int(bad.sum())
        replaced.append(pl.Series(metric, np.where(bad, np.nan, values)))
    return with_notes(launches.with_columns(replaced), notes), excluded


def with_notes(launches: pl.DataFrame, notes: Mapping[int, Sequence[str]]) -> pl.DataFrame:
    """`notes` (row → lines) added to the rows' `input_notes`."""
    if not notes:
        return launches
    merged = launches.get_column("input_notes").to_list()
    for i, lines in notes.items():
        merged[i] = [*(merged[i] or ()), *lines]
    return launches.with_columns(pl.Series("input_notes", merged, dtype=pl.List(pl.String)))


def unreadable_note(metric: str, text: str) -> str:
    """The note on a launch whose `metric` cell reads as no number (`units.unreadable`)."""
    return f"input: {metric} reads {one_cell(text)}, which is not a number; left out"
