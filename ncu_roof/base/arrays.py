"""Object arrays of Python values (verdicts, names, tuples of notes) and numpy's elementwise `==`
of them (`astype(bool)` is their elementwise `bool()`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt


def object_array(values: Iterable[Any]) -> npt.NDArray[np.object_]:
    """Python values as a one-dimensional object array (tuples and records stay whole: `fromiter`
    never looks inside them, where assigning a list does, at 5x the cost)."""
    items = values if isinstance(values, list | tuple) else list(values)
    return np.fromiter(items, dtype=object, count=len(items))


def equals(values: npt.NDArray[np.object_], value: object) -> npt.NDArray[np.bool_]:
    """Elementwise `== value` of an object column (a verdict, a roof's name; a tuple is one value)."""
    scalar = np.empty((), dtype=object)
    scalar[()] = value
    return np.equal(values, scalar)
