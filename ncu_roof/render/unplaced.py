"""Why launches are not placed on a roofline (no `% of roof`, so no roofline verdict): one reason
per distinct case, the most common first, worded for the summary.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ncu_roof.analysis.columns import shared_texts
from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.notes import COLLECTION_FAILED, ZERO_DURATION
from ncu_roof.base.text import plural


def missing_reason(analysis: Analysis) -> str | None:
    """Why launches are not placed on a roofline (no `% of roof`, so no roofline verdict), the most
    common reason first; None when every launch is placed."""
    columns = analysis.columns
    unplaced = np.flatnonzero(np.isnan(columns["pct_of_roof"]))
    if not len(unplaced):
        return None
    no_duration = np.isnan(columns["duration_s"][unplaced])
    failed = np.zeros(len(unplaced), dtype=bool)  # no duration, because the collection failed
    failed[no_duration] = shared_texts(  # each distinct notes tuple looked at once
        columns["notes"][unplaced[no_duration]].tolist(),
        lambda notes: any(n in (COLLECTION_FAILED, ZERO_DURATION) for n in notes),
    )
    no_flop = np.isnan(columns.key("flop", "total")[unplaced])
    # each launch's facts as one number: its device, then the three flags as bits
    facts = columns["device"][unplaced].astype("int64") * 8 + no_duration * 4 + failed * 2 + no_flop
    distinct, first, counts = np.unique(facts, return_index=True, return_counts=True)
    reasons: Counter[str] = Counter()
    for k in np.argsort(first, kind="stable").tolist():  # in the order the launches first have them
        fact = int(distinct[k])
        why = _missing_reason(analysis, fact >> 3, bool(fact & 4), bool(fact & 2), bool(fact & 1))
        reasons[why] += int(counts[k])
    ordered_reasons = sorted(reasons.items(), key=lambda item: -item[1])
    return "; ".join(f"{plural(n, 'launch')} {_agreeing(why, n)}" for why, n in ordered_reasons)


def _agreeing(reason: str, count: int) -> str:
    """A reason's verb for one launch: "1 launch has no roofs", "2 launches have no roofs"."""
    return "has " + reason.removeprefix("have ") if count == 1 and reason.startswith("have ") else reason


def _missing_reason(analysis: Analysis, index: int, no_duration: bool, failed: bool, no_flop: bool) -> str:
    device = analysis.devices[index] if index < len(analysis.devices) else None
    roofs = device.roofs if device else None
    if failed:
        return "failed to collect (ncu measured nothing, or a duration of 0): profile again"
    if roofs is None or not roofs.compute_flop_per_s:
        if device is None or device.name is None:
            return "have no roofs (the input names no GPU): pass --gpu KEY or --roofs FILE"
        return "have no compute roofs: pass --gpu KEY or --roofs FILE"
    if no_flop:
        return "have no FLOP counters: profile with `--set roofline` or `--set full`"
    if no_duration:
        return "have no duration (gpu__time_duration.sum)"
    return "have no roof for the counters they have: see the notes"
