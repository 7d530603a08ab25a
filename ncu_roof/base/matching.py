"""How `diff` pairs the kernels of two runs (no pandas: the CLI declares its options with it)."""

from __future__ import annotations

from enum import StrEnum


class MatchBy(StrEnum):
    """What two launches must share to be compared: name and launch shape, name, or nothing (order)."""

    NAME_SHAPE = "name+shape"
    NAME = "name"
    ORDER = "order"
