"""The traffic definitions a memory tier can be judged by (no pandas: the CLI reads this early)."""

from __future__ import annotations

from enum import StrEnum


class TrafficDefinition(StrEnum):
    """Which traffic a memory tier is judged by (the shared tier always keeps its own).

    Either way, a tier's traffic is judged only against the peak of the very counter it was
    counted with.
    """

    NSIGHT = "nsight"  # exactly what the Nsight Compute version that wrote the report draws
    COUNTED = "counted"  # all traffic through the tier, each counter with its own peak
