"""Coding a column: each distinct value once, every row a code into those values (first-seen
order, as `pandas.factorize`; one `dict` pass, so a raw CSV page or a report is analyzed without
importing pandas), and numpy's elementwise tests of object columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from ncu_roof.base.units import missing_cell

Codes = npt.NDArray[np.int64]


def factorize(values: Iterable[Any], *, missing_is_value: bool = False) -> tuple[Codes, list[Any]]:
    """Codes 0, 1, … in first-seen order, and the distinct values (the first row of each).

    None and NaN are missing (code -1, not among the values), unless `missing_is_value`: then
    None and NaN are each a value of its own. Unhashable values raise TypeError.
    """
    column = values if isinstance(values, np.ndarray) and values.dtype == object else object_array(values)
    if len(column) and _all_alike(column):  # most columns of a trace: one formula, or none
        first = column[0]
        if missing_is_value or not missing_cell(first):
            return np.zeros(len(column), dtype=np.int64), [first]
        return np.full(len(column), -1, dtype=np.int64), []
    return _dict(column.tolist(), missing_is_value)


def _all_alike(column: npt.NDArray[np.object_]) -> bool:
    """Whether every row is the first row's value (numpy's elementwise `==`), every one None, or
    every one NaN (unequal to itself): one code for all."""
    first = column[0]
    hash(first)  # unhashable: TypeError, as from the dict
    if first is not None and missing_cell(first):
        return bool(np.not_equal(column, column).all())
    return bool(equals(column, first).all())


def object_array(values: Iterable[Any]) -> npt.NDArray[np.object_]:
    """Python values as a one-dimensional object array (tuples and records stay whole: `fromiter`
    never looks inside them, where assigning a list does, at 5x the cost)."""
    items = values if isinstance(values, list | tuple) else list(values)
    return np.fromiter(items, dtype=object, count=len(items))


def truthy(values: npt.NDArray[np.object_]) -> npt.NDArray[np.bool_]:
    """Elementwise `bool()` of an object column."""
    return values.astype(bool)


def equals(values: npt.NDArray[np.object_], value: object) -> npt.NDArray[np.bool_]:
    """Elementwise `== value` of an object column (a verdict, a roof's name; a tuple is one value)."""
    scalar = np.empty((), dtype=object)
    scalar[()] = value
    out: npt.NDArray[np.bool_] = np.equal(values, scalar)
    return out


def _dict(items: list[Any], missing_is_value: bool) -> tuple[Codes, list[Any]]:
    """Each distinct value found by one `dict.fromkeys` (first-seen order, at C speed); only those
    are tested for missing. Every NaN object is a key of its own there, and all take one code."""
    code_of: dict[Any, int] = {}
    distinct: list[Any] = []
    nan_code: int | None = None
    for key in dict.fromkeys(items):
        if not missing_cell(key):
            code_of[key] = len(distinct)
            distinct.append(key)
        elif not missing_is_value:
            code_of[key] = -1
        elif key is None:
            code_of[key] = len(distinct)
            distinct.append(key)
        else:
            if nan_code is None:
                nan_code = len(distinct)
                distinct.append(key)
            code_of[key] = nan_code
    codes = np.fromiter(map(code_of.__getitem__, items), dtype=np.int64, count=len(items))
    return codes, distinct
