"""`--format csv`: one row per launch, flat columns with units in their names.

Numbers keep 15 significant digits, the precision a float64 carries without the noise of the
arithmetic that made it (`0.000284704`, not `0.00028470400000000004`); they read back exactly.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np

from ncu_roof.analysis import Analysis
from ncu_roof.groups import headroom_array
from ncu_roof.render.text import csv_cell
from ncu_roof.vocabulary import PRECISIONS, SOL_KEYS, TIERS

_SCALARS = (
    "duration_s",
    "time_share",
    "achieved_flop_per_s",
    "attainable_flop_per_s",
    "binding",
    "bound",
    "compute_precision",
    "pct_of_roof",
)
# nested JSON field → how its keys become flat column names
_NESTED = {
    "flop": ((*PRECISIONS, "total"), "flop_{}"),
    "bytes": (TIERS, "{}_bytes"),
    "intensity_flop_per_byte": (TIERS, "{}_intensity_flop_per_byte"),
    "sol_pct": (SOL_KEYS, "sol_{}_pct"),
}
_TEXTS = ("grid", "block", "nvtx")  # identity texts, guarded like kernel names
COLUMNS = (
    "id",
    "name",
    "input",
    "device",
    "grid",
    "block",
    "nvtx",
    *_SCALARS,
    *(pattern.format(key) for keys, pattern in _NESTED.values() for key in keys),
    "notes",
    "headroom_s",
)


def _numbers(values: np.ndarray) -> list[object]:
    """CSV cells of numbers: missing and non-finite are empty."""
    return [cell(v) if math.isfinite(v) else "" for v in values.tolist()]


def _texts(values: list[str | None]) -> list[object]:
    guarded = {v: csv_cell(v) for v in set(values) if v is not None}
    return ["" if v is None else guarded[v] for v in values]


def _columns(analysis: Analysis) -> dict[str, list[object]]:
    """Every CSV column of every launch, from the launch columns."""
    c = analysis.columns
    out: dict[str, list[object]] = {key: c[key].tolist() for key in ("id", "input", "device")}
    out |= {key: _texts(c[key].tolist()) for key in (*_TEXTS, "name")}
    for key in _SCALARS:
        values = c[key]
        if values.dtype.kind == "f":
            out[key] = _numbers(values)
        else:
            out[key] = ["" if v is None else getattr(v, "value", v) for v in values.tolist()]
    for field, (keys, pattern) in _NESTED.items():
        out |= {pattern.format(key): _numbers(c.key(field, key)) for key in keys}
    out["notes"] = _texts(["; ".join(notes) for notes in c["notes"].tolist()])
    out["headroom_s"] = _numbers(headroom_array(c["duration_s"], c["pct_of_roof"]))
    return out


def cell(value: object) -> object:
    """A CSV cell: missing is empty, a float has 15 significant digits at most (no float noise)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(float(f"{value:.15g}"))
    return value


def render_csv(analysis: Analysis) -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow(COLUMNS)
    columns = _columns(analysis)
    writer.writerows(zip(*(columns[name] for name in COLUMNS), strict=True))
    return out.getvalue()
