"""`--format csv`: one row per launch, flat columns with units in their names.

Numbers keep 15 significant digits, the precision a float64 carries without the noise of the
arithmetic that made it (`0.000284704`, not `0.00028470400000000004`); they read back exactly.
"""

from __future__ import annotations

import csv
import io

from ncu_roof.analysis import Analysis, Kernel
from ncu_roof.render.jsonout import kernel_json
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


def _row(kernel: Kernel) -> dict[str, object]:
    k = kernel_json(kernel)
    row: dict[str, object] = {key: k[key] for key in ("id", "input", "device", *_TEXTS, *_SCALARS)}
    for field, (keys, pattern) in _NESTED.items():
        row.update({pattern.format(key): k[field][key] for key in keys})
    for key in _TEXTS:
        row[key] = None if row[key] is None else csv_cell(str(row[key]))
    row["name"] = csv_cell(kernel.name)
    row["notes"] = csv_cell("; ".join(kernel.notes))
    row["headroom_s"] = k["headroom_s"]
    return {column: cell(row[column]) for column in COLUMNS}


def cell(value: object) -> object:
    """A CSV cell: missing is empty, a float has 15 significant digits at most (no float noise)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(float(f"{value:.15g}"))
    return value


def render_csv(analysis: Analysis) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_row(kernel) for kernel in analysis.kernels)
    return out.getvalue()
