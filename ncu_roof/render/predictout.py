"""A prediction rendered: the `ncu-roof/prediction/v1` JSON document (docs/prediction-schema.md),
and the terminal view (per-tier table, verdict line, assumptions) as text."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ncu_roof.analysis.model import bound_of, finite_map, finite_or_none
from ncu_roof.analysis.prediction import TENSOR, Prediction
from ncu_roof.analysis.records import bound_at
from ncu_roof.base.text import intensity, si
from ncu_roof.base.vocabulary import COMPUTE
from ncu_roof.render.console import PIPE_WIDTH, rich_text

SCHEMA = "ncu-roof/prediction/v1"


def to_dict(p: Prediction) -> dict[str, Any]:
    """The `ncu-roof/prediction/v1` document (docs/prediction-schema.md); SI, JSON-safe."""
    return {
        "schema": SCHEMA,
        "platform": {
            "name": p.roofs.name,
            "peak_flop_per_s": finite_map(p.roofs.compute_flop_per_s),
            "bandwidth_byte_per_s": finite_map(p.roofs.bandwidth_byte_per_s),
        },
        "workload": {
            "name": p.workload_name,
            "params": dict(p.params),
            "flop": finite_or_none(p.flop),
            "bytes": finite_map(p.bytes_by_tier),
        },
        "intensity_flop_per_byte": finite_map(p.point.intensity_flop_per_byte),
        "ridge_flop_per_byte": finite_map(p.point.ridge_flop_per_byte),
        "cap_flop_per_s": finite_map(p.point.cap_flop_per_s),
        "attainable_flop_per_s": finite_or_none(p.point.attainable_flop_per_s),
        "binding": p.point.binding,
        "bound": p.bound,
        "time_at_roof_s": finite_or_none(p.point.time_at_roof_s),
        "compute_ceiling": p.compute_ceiling,
        "compute_peak_source": _compute_source(p),
        "ops": None
        if p.ops is None
        else {
            "count": finite_or_none(p.ops.count),
            "ceiling": p.ops.ceiling,
            "peak_per_s": finite_or_none(p.ops.peak_per_s),
            "peak_source": p.ops.source,
            "time_s": finite_or_none(p.ops.time_s),
        },
    }


def _compute_source(p: Prediction) -> str | None:
    """Where the compute roof the FLOPs ran against came from (None: no compute roof)."""
    precision = p.point.compute_precision
    if precision is None or COMPUTE not in p.point.cap_flop_per_s:
        return None
    return p.roofs.sources.get(precision, p.roofs.source)


def render_json(p: Prediction) -> str:
    """Strict JSON (`allow_nan=False`): a non-finite value that slipped past `to_dict` raises."""
    return json.dumps(to_dict(p), indent=2, allow_nan=False) + "\n"


def render_text(p: Prediction, width: int = PIPE_WIDTH, *, color: bool = False) -> str:
    """The per-tier table, verdict line and assumptions, `width` columns wide, coloured only when `color`."""
    point = p.point
    ops_only = p.ops is not None and not p.flop  # integer work alone: its tiers in operations
    work = "op" if ops_only else "FLOP"
    platform = p.roofs.name or p.roofs.source
    args = " ".join(f"{k}={v}" for k, v in p.params.items())
    what = "Prediction" if p.workload_name is None else f"{p.workload_name} ({args})"
    table = Table(title=f"{what} on {platform}", title_justify="left")
    for column in ("roof", "bytes", "bandwidth", f"AI {work}/B", f"ridge {work}/B", "cap"):
        table.add_column(column, justify="left" if column == "roof" else "right")
    figures = (point.intensity_flop_per_byte, point.ridge_flop_per_byte, point.cap_flop_per_s)
    for tier in point.intensity_flop_per_byte:  # the tiers with a roof (no FLOPs: no FLOP/s cap)
        mark = " ◀" if tier == point.binding else ""
        bandwidth, moved = p.roofs.bandwidth_byte_per_s[tier], p.bytes_by_tier.get(tier)
        if p.ops is not None and ops_only:  # a tier's intensity, ridge and cap in operations
            ai = p.ops.count / moved if moved else None
            ridge = p.ops.peak_per_s / bandwidth if bandwidth else None
            cap = bandwidth * ai if ai is not None else None
        else:
            ai, ridge, cap = (f.get(tier) for f in figures)
        cells = intensity(ai, 4), intensity(ridge, 4), si(cap, f"{work.upper()}/s", 4)
        table.add_row(tier + mark, si(moved, "B"), si(bandwidth, "B/s"), *cells)
    if COMPUTE in point.cap_flop_per_s and not ops_only:
        mark = " ◀" if point.binding == COMPUTE and (p.ops is None or not p.ops.binds) else ""
        label = f"compute ({point.compute_precision})" if point.compute_precision else "compute"
        table.add_row(label + mark, "", "", "", "", si(point.cap_flop_per_s[COMPUTE], "FLOP/s", 4))
    if p.ops is not None:
        mark = " ◀" if point.binding == COMPUTE and p.ops.binds else ""
        table.add_row(f"{p.ops.ceiling} ops{mark}", "", "", "", "", si(p.ops.peak_per_s, "OP/s", 4))
    parts: list[Text | Table] = [table, Text(verdict_line(p))]
    if (precision := point.compute_precision) is not None and precision.startswith(TENSOR):
        parts.append(Text(f"{precision} peak: {_compute_source(p)}"))
    if p.ops is not None:
        parts.append(Text(f"{p.ops.ceiling} ceiling: {p.ops.source}"))
    if p.assumptions:
        parts.append(Text("assumptions:\n" + "\n".join(f"  - {a}" for a in p.assumptions)))
    return rich_text(Group(*parts), width, color=color)


def verdict_line(p: Prediction) -> str:
    point = p.point
    if point.binding is None:
        return "verdict: unknown (no roof applies)"
    where = bound_at(bound_of(point.binding), point.binding)
    if point.binding == COMPUTE and p.compute_ceiling:
        where += f" ({p.compute_ceiling})"
    ops_only = p.ops is not None and not p.flop  # integer work alone: a FLOP/s figure says nothing
    flop = f"{si(p.flop, 'FLOP', 4)}; " if p.flop is not None and not ops_only else ""
    if p.ops is not None:
        flop += f"{si(p.ops.count, 'OP', 4)} at {si(p.ops.peak_per_s, 'OP/s', 4)} ({p.ops.ceiling}); "
    attainable = "" if ops_only else f"attainable {si(point.attainable_flop_per_s, 'FLOP/s', 4)}"
    text = f"verdict: {where}; {flop}{attainable}".rstrip("; ")
    if point.peak_flop_per_s and point.attainable_flop_per_s is not None and not ops_only:
        share = 100.0 * point.attainable_flop_per_s / point.peak_flop_per_s
        text += f" ({share:.3g}% of the compute peak)"
    if point.time_at_roof_s is not None:
        text += f"; time at the roof {si(point.time_at_roof_s, 's', 4)}"
    return text
