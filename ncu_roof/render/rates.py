"""The achieved and attainable rate cells of every table: FLOP/s, or operations per second for
integer tensor work without FLOPs (`achieved_words`)."""

from __future__ import annotations

from ncu_roof.analysis.records import Kernel
from ncu_roof.base.text import si


def integer_ops_rate(k: Kernel, over_s: float | None) -> tuple[float, str] | None:
    """A kernel whose work is integer tensor operations alone (no FLOPs): its operations over
    `over_s` seconds and the paths that did them (`int8`); None for any other kernel."""
    flop, ops = k.flop.get("total"), k.ops.get("total")
    if flop or not ops or not over_s or over_s <= 0:
        return None
    paths = "+".join(p for p, v in k.ops.items() if p != "total" and v)
    return ops / over_s, paths


def achieved_words(k: Kernel, duration_s: float | None = None) -> str:
    """`27.7 TFLOP/s`; `39.4 TOP/s (int8)` for integer tensor work without FLOPs, which a
    `0 FLOP/s` would read as nothing done. `duration_s`: a group's summed time (its figures keep
    the lead launch's), else the launch's."""
    ops = integer_ops_rate(k, duration_s or k.duration_s)
    return si(k.achieved_flop_per_s, "FLOP/s") if ops is None else f"{si(ops[0], 'OP/s')} ({ops[1]})"


def attainable_words(k: Kernel, duration_s: float | None = None) -> str:
    """`145 TFLOP/s`; integer tensor work without FLOPs: its operations over the roofline's time."""
    time_s = duration_s or k.duration_s
    at_roof_s = None if time_s is None or k.pct_of_roof is None else time_s * k.pct_of_roof / 100
    ops = integer_ops_rate(k, at_roof_s)
    return si(k.attainable_flop_per_s, "FLOP/s") if ops is None else f"{si(ops[0], 'OP/s')} ({ops[1]})"
