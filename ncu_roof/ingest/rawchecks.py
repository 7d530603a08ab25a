"""Checks of a CSV page once parsed (a raw page's table, cells as text; a details page's IDs):
what a lost line or a damaged export leaves that no single row shows. They read what was parsed
only, whichever way it was parsed.

* No units row under the header: every value's scale is unknown (a duration in `us` read as if
  in ncu's base unit), so the page's kernels are damaged.
* A gap in the IDs (raw and details pages): ncu numbers the launches of a run 0, 1, 2, …, so
  `0, 2, 3` lost a launch's rows.
* A cell that reads as no number (and is none of ncu's words for a missing value) is a note on
  its launch naming the metric and the text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ncu_roof.base.units import unreadable
from ncu_roof.ingest.csvblocks import Damage
from ncu_roof.ingest.sanity import unreadable_note

if TYPE_CHECKING:
    import pyarrow as pa

GAPS_SHOWN = 100  # the gaps named of a page with many (all are counted)


def without_units(table: pa.Table, line: int, run: int, damage: Damage) -> None:
    """The page's header has no units row under it (`line`): all its kernels damaged."""
    rows = table.num_rows
    ids = table["ID"].to_pylist() if "ID" in table.column_names else range(rows)
    damage.lose(
        line,
        f"no units row under the raw page's header: the values of its {rows} "
        f"kernel{'s' if rows != 1 else ''} have no known units "
        "(re-export with `ncu --import R --csv --page raw`)",
        {(run, str(i)) for i in ids},
    )


def check_ids(
    ids: Sequence[int] | np.ndarray, line_of: Callable[[int], int], run: int, damage: Damage
) -> None:
    """IDs missing from a run (`0, 2, 3`; `ids` as the page lists its launches) are lost rows:
    damage at the row after each gap (the kernels read are kept when skipping; the lost ones are
    counted). `line_of(i)`: the line of the launch `ids[i]`."""
    if not len(ids):
        return
    listed = np.asarray(ids)
    present = np.unique(listed)
    missing = np.setdiff1d(np.arange(present[-1] + 1), present)
    if not len(missing):
        return
    starts = missing[np.r_[True, np.diff(missing) > 1]].tolist()  # each gap's first missing ID
    for first in starts[:GAPS_SHOWN]:
        after = int(np.flatnonzero(listed > first)[0])
        last = int(present[present > first][0]) - 1
        what = f"ID {first} is" if last == first else f"IDs {first} to {last} are"
        lost = "a lost row" if last == first else "lost rows"
        reason = f"{what} missing before this row: {lost} (or an export filtered with -k)"
        damage.lose(line_of(after), reason, {(run, str(i)) for i in range(first, last + 1)})
    damage.lost_kernels |= {(run, str(i)) for i in missing.tolist()}


def unreadable_notes(cells: pa.Table, metrics: Mapping[str, np.ndarray]) -> dict[int, list[str]]:
    """Per launch (row), a note on each metric cell of `cells` that `metrics` read as no number."""
    notes: dict[int, list[str]] = {}
    for metric, values in metrics.items():
        if np.isnan(values).any():
            for row, text in unreadable(cells[metric], values):
                notes.setdefault(row, []).append(unreadable_note(metric, text))
    return notes
