"""The per-row choice among a tier's definitions: a tier's columns merged row by row, the first
definition with bytes taken, and the words saying which definition each row took.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ncu_roof.base.traffic import TrafficDefinition
from ncu_roof.recipe.frame import Flags, Numbers, Texts

if TYPE_CHECKING:
    from ncu_roof.recipe.tiers import TierDefinition


@dataclass
class TierColumns:
    """A tier's columns while definitions are merged row by row (new arrays: `take` writes into
    them); objects (None, NaN, labels) are kept as they are."""

    label: Texts
    nbytes: Numbers
    roof: Numbers
    roof_label: Texts
    counter: Texts

    @staticmethod
    def of(d: TierDefinition) -> TierColumns:
        return TierColumns(
            d.label.copy(),
            d.bytes.copy(),
            d.bandwidth_byte_per_s.copy(),
            d.roof_label.copy(),
            d.counter.copy(),
        )

    @staticmethod
    def empty(rows: int) -> TierColumns:
        nothing = np.full(rows, np.nan, dtype=object)  # NaN: the label of a row no definition fits
        return TierColumns(
            nothing, np.full(rows, np.nan), np.full(rows, np.nan), nothing.copy(), nothing.copy()
        )

    def take(self, rows: Flags, d: TierDefinition) -> None:
        if not rows.any():  # most alternatives fill no row at all
            return
        self.label[rows] = d.label[rows]
        self.nbytes[rows] = d.bytes[rows]
        self.roof[rows] = d.bandwidth_byte_per_s[rows]
        self.roof_label[rows] = d.roof_label[rows]
        self.counter[rows] = d.counter[rows]


OTHER_NSIGHT = "nsight-other"


_KIND_WORDS = {
    "nsight": "the measure Nsight draws",
    OTHER_NSIGHT: "the measure another Nsight version draws",
    "counted": "counted traffic",
}


@dataclass(frozen=True)
class PickedTier:
    """One tier's traffic per row: bytes, roof of the same counter, and where each came from."""

    bytes: Numbers
    label: Texts
    bandwidth_byte_per_s: Numbers
    roof_label: Texts
    definition: Texts  # "nsight", "counted", "shared"; "closest to nsight: counted", …; NaN: no bytes
    counter: Texts  # the counter whose peak is the roof (`base*scale`: the built-in table's key)


def pick_tier(asked: str, definitions: list[TierDefinition], rows: int, era: str | None) -> PickedTier:
    """Per row: the first definition with bytes, whether the report holds its roof or not (the
    built-in table holds every counter's peak: `tier_peaks`), so that every launch of a run, in
    any of its forms, is counted by the same measure; a tier's traffic is never judged against
    another counter's peak."""
    picked = TierColumns.empty(rows)
    which = np.full(rows, len(definitions))  # the definition each row took; len: none
    for i, d in enumerate(definitions):
        take = np.isnan(picked.nbytes) & ~np.isnan(d.bytes)
        picked.take(take, d)
        which[take] = i
    if asked == TrafficDefinition.NSIGHT.value and era is None:
        words = "nsight (ncu version unknown: chosen by the metrics present)"
    else:
        words = asked
    texts = [
        words if d.kind == asked else f"closest to {asked}: {_KIND_WORDS.get(d.kind, d.kind)}"
        for d in definitions
    ]
    definition: Texts = np.array([*texts, np.nan], dtype=object)[which]
    return PickedTier(picked.nbytes, picked.label, picked.roof, picked.roof_label, definition, picked.counter)
