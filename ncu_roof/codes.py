"""Coding a column: each distinct value once, every row a code into those values.

`factorize` is `pandas.factorize` of an object column, first-seen order. It uses pandas' own
hash table when pandas is already loaded (a details page, a notebook), and a dict otherwise: a
report, a raw CSV page or console text is analyzed without ever importing pandas (~0.35 s of a
~1 s run). Both give the same codes and values (tests/test_codes.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from ncu_roof.units import missing_cell

Codes = npt.NDArray[np.int64]


class _NoneKey:
    """Stands for None while a column is coded with None a value of its own (hashed by identity)."""


_NONE = _NoneKey()
_NAN = float("nan")  # every NaN of a column is one value (as pandas counts them)


def factorize(values: Iterable[Any], *, missing_is_value: bool = False) -> tuple[Codes, list[Any]]:
    """Codes 0, 1, … in first-seen order, and the distinct values (the first row of each).

    None and NaN are missing (code -1, not among the values), unless `missing_is_value`: then
    None and NaN are each a value of its own. Unhashable values raise TypeError.
    """
    column = values if isinstance(values, np.ndarray) and values.dtype == object else object_array(values)
    few = _by_identity(column, missing_is_value)
    if few is not None:
        return few
    pd = sys.modules.get("pandas")
    if pd is not None:
        return _pandas(pd, column, missing_is_value)
    return _dict(column.tolist(), missing_is_value)


def object_array(values: Iterable[Any]) -> npt.NDArray[np.object_]:
    """Python values as a one-dimensional object array (tuples and records stay whole: `fromiter`
    never looks inside them, where assigning a list does, at 5x the cost)."""
    items = values if isinstance(values, list | tuple) else list(values)
    return np.fromiter(items, dtype=object, count=len(items))


IDENTITY_MAX = 16  # distinct objects up to which a column is coded by identity


def _by_identity(column: npt.NDArray[np.object_], missing_is_value: bool) -> tuple[Codes, list[Any]] | None:
    """Codes of a column that holds few distinct objects (the labels a recipe makes by indexing a
    few texts): its objects found by address (`_addresses`), and only those coded by value
    (`_dict`: equal objects share a code). None when the column holds many distinct objects."""
    found = _addresses(column)
    if found is None:
        return None
    which, objects = found
    object_codes, distinct = _dict(objects, missing_is_value)
    codes: Codes = object_codes[which]
    return codes, distinct


def object_ids(column: npt.NDArray[np.object_]) -> npt.NDArray[np.intp]:
    """Each row's object by its `id` (its address), read from the array itself: no call per row."""
    rows = np.ascontiguousarray(column, dtype=object)
    ids: npt.NDArray[np.intp] = np.frombuffer(rows.data, dtype=np.intp).reshape(rows.shape)
    return ids


def _addresses(column: npt.NDArray[np.object_]) -> tuple[Codes, list[Any]] | None:
    """The distinct objects of a column that holds few (at most `IDENTITY_MAX`), and each row's
    index among them: the rows of each object found by comparing the objects' addresses, one
    vectorized pass per object. None when it holds more (a sample of its first rows tells)."""
    column = np.ascontiguousarray(column)
    address = object_ids(column)
    if len(set(address[:256].tolist())) > IDENTITY_MAX // 2:
        return None
    which = np.full(len(column), -1, dtype=np.int64)
    objects: list[Any] = []
    at = 0
    while at < len(column):
        if len(objects) == IDENTITY_MAX:
            return None
        which[address == address[at]] = len(objects)
        objects.append(column[at])
        left = np.flatnonzero(which[at:] < 0)
        if not len(left):
            break
        at += int(left[0])
    return which, objects


def flags(values: npt.NDArray[np.object_], test: Callable[[Any], bool]) -> npt.NDArray[np.bool_]:
    """`test` of every row of an object column, asked once per object when the rows share a few
    (launches share their verdicts, labels and notes), else once per row."""
    found = _addresses(values)
    if found is None:
        return np.fromiter(map(test, values.tolist()), dtype=bool, count=len(values))
    which, objects = found
    out: npt.NDArray[np.bool_] = np.array([test(o) for o in objects], dtype=bool)[which]
    return out


def truthy(values: npt.NDArray[np.object_]) -> npt.NDArray[np.bool_]:
    """Elementwise `bool()` of an object column."""
    return flags(values, bool)


def equals(values: npt.NDArray[np.object_], value: object) -> npt.NDArray[np.bool_]:
    """Elementwise `== value` of an object column (a verdict, a roof's name)."""
    return flags(values, lambda v: bool(v == value))


def _pandas(pd: Any, column: npt.NDArray[np.object_], missing_is_value: bool) -> tuple[Codes, list[Any]]:
    if not missing_is_value:
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        return codes.astype("int64"), list(uniques)
    keyed = column.copy()
    keyed[[v is None for v in column.tolist()]] = _NONE  # pandas takes None and NaN for one value
    codes = pd.factorize(keyed, use_na_sentinel=False)[0].astype("int64")
    first = np.unique(codes, return_index=True)[1]  # codes count up in first-seen order
    return codes, [column[j] for j in first.tolist()]  # the values themselves (pandas makes None NaN)


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
