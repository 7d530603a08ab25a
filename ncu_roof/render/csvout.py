"""`--format csv`: one row per kernel, flat columns with units in their names."""

from __future__ import annotations

import csv
import io

from ncu_roof.analysis import Analysis
from ncu_roof.recipe import PRECISIONS, SOL_KEYS, TIERS
from ncu_roof.render.jsonout import kernel_json
from ncu_roof.render.text import one_line

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """Spreadsheets run cells starting with = + - @ as formulas: prefix those with a quote."""
    clean = one_line(text)
    return "'" + clean if clean.startswith(_FORMULA_START) else clean


COLUMNS = (
    "id",
    "name",
    "input",
    "device",
    "grid",
    "block",
    "duration_s",
    "time_share",
    *(f"flop_{p}" for p in (*PRECISIONS, "total")),
    *(f"{t}_bytes" for t in TIERS),
    *(f"{t}_intensity_flop_per_byte" for t in TIERS),
    "achieved_flop_per_s",
    "attainable_flop_per_s",
    "binding",
    "bound",
    "compute_precision",
    "pct_of_roof",
    *(f"sol_{k}_pct" for k in SOL_KEYS),
    "notes",
)


def render_csv(analysis: Analysis) -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow(COLUMNS)
    for kernel in analysis.kernels:
        k = kernel_json(kernel)
        flat = {
            **{
                key: k[key]
                for key in (
                    "id",
                    "input",
                    "device",
                    "duration_s",
                    "time_share",
                    "achieved_flop_per_s",
                    "attainable_flop_per_s",
                    "binding",
                    "bound",
                    "compute_precision",
                    "pct_of_roof",
                )
            },
            "name": safe_cell(kernel.name),
            "grid": kernel.grid,
            "block": kernel.block,
            **{f"flop_{p}": k["flop"][p] for p in (*PRECISIONS, "total")},
            **{f"{t}_bytes": k["bytes"][t] for t in TIERS},
            **{f"{t}_intensity_flop_per_byte": k["intensity_flop_per_byte"][t] for t in TIERS},
            **{f"sol_{s}_pct": k["sol_pct"][s] for s in SOL_KEYS},
            "notes": safe_cell("; ".join(kernel.notes)),
        }
        writer.writerow(["" if flat[c] is None else flat[c] for c in COLUMNS])
    return out.getvalue()
