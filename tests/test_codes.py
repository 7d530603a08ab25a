"""`codes.factorize` gives the codes and values `pandas.factorize` gives; distinct rows, number
texts and the elementwise tests of object columns."""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ncu_roof.analysis import columns as columns_module
from ncu_roof.base import codes


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


CELLS = st.one_of(
    st.none(),
    st.just(math.nan),
    st.just(float("nan")),
    st.just(np.float32("nan")),  # a NaN that is no Python float: missing all the same
    st.sampled_from(["a", "b", "", "nan", "None"]),
    st.text(max_size=3),
    st.floats(allow_nan=False, width=16),
    st.integers(-3, 3),
    st.tuples(st.sampled_from(["x", "y"])),
    st.sampled_from(list(Colour)),
)


def column_of(values: list[Any]) -> np.ndarray:
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def pandas_codes(values: list[Any], missing_is_value: bool) -> tuple[Any, list[Any]]:
    """What `pandas.factorize` makes of the column (None and NaN each a value of its own when
    `missing_is_value`: pandas takes them for one, so None is keyed apart)."""
    column = column_of(values)
    if not missing_is_value:
        found, uniques = pd.factorize(column, use_na_sentinel=True)
        return found.astype("int64"), list(uniques)
    keyed = column.copy()
    keyed[[v is None for v in values]] = NONE
    found = pd.factorize(keyed, use_na_sentinel=False)[0].astype("int64")
    first = np.unique(found, return_index=True)[1]
    return found, [column[j] for j in first.tolist()]


NONE = object()


def is_nan(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def same(a: list[Any], b: list[Any]) -> bool:
    """Equal values, where NaN equals NaN and None equals only None."""
    return len(a) == len(b) and all(
        (x is None and y is None)
        or (is_nan(x) and is_nan(y))
        or (x is not None and y is not None and not is_nan(x) and x == y)
        for x, y in zip(a, b, strict=True)
    )


@given(st.lists(CELLS, max_size=30), st.booleans())
def test_factorize_codes_as_pandas_does(values: list[Any], missing_is_value: bool) -> None:
    codes_pd, values_pd = pandas_codes(values, missing_is_value)
    codes_dict, values_dict = codes.factorize(values, missing_is_value=missing_is_value)
    assert codes_pd.tolist() == codes_dict.tolist()
    assert codes_pd.dtype == codes_dict.dtype == np.dtype("int64")
    assert same(values_pd, values_dict)


@given(st.lists(CELLS, max_size=30))
def test_missing_is_minus_one_as_pandas_factorize(values: list[Any]) -> None:
    column = np.empty(len(values), dtype=object)
    column[:] = values
    expected, uniques = pd.factorize(column, use_na_sentinel=True)
    got, distinct = codes.factorize(values)
    assert got.tolist() == expected.tolist()
    assert same(distinct, list(uniques))


def test_a_sliced_column_is_coded_by_its_own_rows() -> None:
    column = column_of(["a", "b", None, "a", "c", "b"])[::2]  # not contiguous: "a", None, "c"
    assert codes.factorize(column)[0].tolist() == [0, -1, 1]


def test_none_and_nan_are_values_of_their_own() -> None:
    got, values = codes.factorize([None, "a", math.nan, None, float("nan"), "a"], missing_is_value=True)
    assert got.tolist() == [0, 1, 2, 0, 2, 1]
    assert values[0] is None and values[1] == "a" and math.isnan(values[2])


def test_first_seen_order_and_the_first_row_of_each() -> None:
    first, second = ("k",), ("k",)  # equal values: the first row's object is the value kept
    got, values = codes.factorize(["b", first, "a", second, "b"])
    assert got.tolist() == [0, 1, 2, 1, 0]
    assert values == ["b", ("k",), "a"] and values[1] is first


@given(CELLS, st.integers(1, 5), st.booleans())
def test_a_column_of_one_value_codes_as_pandas_does(value: Any, rows: int, missing_is_value: bool) -> None:
    """Every row alike (one formula, or none, in every launch of a trace): one code, or -1."""
    codes_pd, values_pd = pandas_codes([value] * rows, missing_is_value)
    codes_one, values_one = codes.factorize([value] * rows, missing_is_value=missing_is_value)
    assert codes_one.tolist() == codes_pd.tolist()
    assert same(values_pd, values_one) and all(v is value for v in values_one)


def test_rows_alike_but_one_are_coded_apart() -> None:
    assert codes.factorize(["a", "a", "b"])[0].tolist() == [0, 0, 1]
    assert codes.factorize([None, None, math.nan])[0].tolist() == [-1, -1, -1]
    assert codes.factorize([math.nan, math.nan, "a"], missing_is_value=True)[0].tolist() == [0, 0, 1]
    assert codes.factorize([None, math.nan], missing_is_value=True)[0].tolist() == [0, 1]


def test_unhashable_values_raise_type_error() -> None:
    for missing_is_value in (False, True):
        with pytest.raises(TypeError):
            codes.factorize([{"a": 1}], missing_is_value=missing_is_value)
        with pytest.raises(TypeError):  # every row alike
            codes.factorize([{"a": 1}] * 3, missing_is_value=missing_is_value)


POOL = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1e-300, 2.5, 1e16, -3.0])


@given(st.lists(POOL, min_size=1, max_size=4), st.integers(0, 2000), st.booleans())
@example([0.0, -0.0], 1500, False)  # equal as numbers, not as texts
@example([-0.0], 1500, True)
@example([math.nan], 1500, True)
def test_number_texts_are_each_number_s_text(pool: list[float], rows: int, one: bool) -> None:
    """A long column of few values (or of one, bit for bit) has each encoded once; the texts are
    those of every row encoded on its own (-0.0 and 0.0 apart, NaN and the infinities null)."""
    from ncu_roof.analysis.columns import number_texts

    def each(numbers: np.ndarray) -> list[str]:
        return [json.dumps(v) if math.isfinite(v) else "null" for v in numbers.tolist()]

    values = [pool[0]] * (rows + 1) if one else [pool[i % len(pool)] for i in range(rows + 1)]
    expected = [json.dumps(v) if math.isfinite(v) else "null" for v in values]
    assert number_texts(np.array(values, dtype="float64"), each) == expected


@given(
    st.integers(0, 4).flatmap(
        lambda k: st.lists(st.lists(st.integers(-1, 9), min_size=k, max_size=k), max_size=30)
    ),
    st.booleans(),
)
def test_distinct_rows_are_the_sorted_distinct_combinations(rows: list[list[int]], huge: bool) -> None:
    """The first row of each distinct combination, in ascending order, and each row's index among
    them (also for codes past one integer)."""
    columns = [np.array(c, dtype="int64") for c in zip(*rows, strict=True)] if rows and rows[0] else []
    if huge and columns:
        columns = [*columns, np.where(columns[0] >= 0, columns[0] + 2**61, -1)]
    by_table = columns_module.distinct_rows(columns)
    if columns:  # rows alike share an index; the first row of each is the first of its kind
        keys = list(zip(*(c.tolist() for c in columns), strict=True))
        first, inverse = by_table
        assert [keys[j] for j in first.tolist()] == sorted(set(keys)) or huge
        assert all(keys[i] == keys[first[inverse[i]]] for i in range(len(keys)))
        assert all(keys.index(keys[j]) == j for j in first.tolist())


@given(st.lists(st.integers(0, 40), max_size=300), st.integers(1, 3))
def test_truthy_and_equals_ask_each_row(picks: list[int], step: int) -> None:
    """`bool()` and `==` of every row, whether the rows share a few objects or hold many (a tuple,
    an empty one, a record, None, 0, "", NaN, ...), through a strided view too; a tuple is one
    value to compare with."""
    pool: list[Any] = [(), ("a",), {}, {"k": 1}, None, 0, 1, "", "x", math.nan, *range(2, 33)]
    values = codes.object_array([pool[p] for p in picks])
    assert codes.truthy(values).tolist() == [bool(pool[p]) for p in picks]
    assert codes.truthy(values[::step]).tolist() == [bool(pool[p]) for p in picks[::step]]
    assert codes.equals(values, "x").tolist() == [pool[p] == "x" for p in picks]
    assert codes.equals(values[::step], 0).tolist() == [pool[p] == 0 for p in picks[::step]]
    assert codes.equals(values, ("a",)).tolist() == [pool[p] == ("a",) for p in picks]
