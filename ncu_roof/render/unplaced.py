"""Why launches are not placed on a roofline, worded for the summary."""

from __future__ import annotations

from collections import Counter

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.notes import COLLECTION_FAILED, ZERO_DURATION
from ncu_roof.analysis.records import Device
from ncu_roof.base.text import plural


def missing_reason(analysis: Analysis, notes: str = "the notes") -> str | None:
    """Why launches are not placed on a roofline (no `% of roof`, so no roofline verdict): a reason
    per distinct case, the most common first; None when every launch is placed."""
    unplaced = analysis.launches.filter(pl.col("pct_of_roof").is_null())
    if unplaced.is_empty():
        return None
    no_duration = pl.col("duration_s").is_null()
    failed = pl.col("notes").list.eval(pl.element().is_in([COLLECTION_FAILED, ZERO_DURATION])).list.any()
    facts = unplaced.group_by(  # each case's launches, in the order the launches first have it
        "device",
        no_duration.alias("no_duration"),
        (no_duration & failed).alias("failed"),  # no duration, because the collection failed
        pl.col("flop").struct.field("total").is_null().alias("no_flop"),
        maintain_order=True,
    ).len()
    reasons: Counter[str] = Counter()
    devices = dict(enumerate(analysis.devices))
    for device, *case, count in facts.iter_rows():
        reasons[_missing_reason(devices.get(device), notes, *case)] += count
    return "; ".join(f"{plural(n, 'launch')} {_agreeing(why, n)}" for why, n in reasons.most_common())


def _agreeing(reason: str, count: int) -> str:
    """A reason's verb for one launch: "1 launch has no roofs", "2 launches have no roofs"."""
    return "has " + reason.removeprefix("have ") if count == 1 and reason.startswith("have ") else reason


def _missing_reason(device: Device | None, notes: str, no_duration: bool, failed: bool, no_flop: bool) -> str:
    if failed:
        return "failed to collect (ncu measured nothing, or a duration of 0): profile again"
    if device is None or not device.roofs.compute_flop_per_s:
        if device is None or device.name is None:
            return "have no roofs (the input names no GPU): pass --gpu KEY or --roofs FILE"
        return "have no compute roofs: pass --gpu KEY or --roofs FILE"
    if no_flop:
        return "have no FLOP counters: profile with `--set roofline` or `--set full`"
    if no_duration:
        return "have no duration (gpu__time_duration.sum)"
    return f"have no roof for the counters they have: see {notes}"
