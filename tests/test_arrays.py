"""The elementwise tests of object columns (`base.arrays`): `bool()` and `==` of every row."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.base import arrays


@given(st.lists(st.integers(0, 40), max_size=300), st.integers(1, 3))
def test_bool_and_equals_ask_each_row(picks: list[int], step: int) -> None:
    """`bool()` and `==` of every row, whether the rows share a few objects or hold many (a tuple,
    an empty one, a record, None, 0, "", NaN, ...), through a strided view too; a tuple is one
    value to compare with."""
    pool: list[Any] = [(), ("a",), {}, {"k": 1}, None, 0, 1, "", "x", math.nan, *range(2, 33)]
    values = arrays.object_array([pool[p] for p in picks])
    assert values.astype(bool).tolist() == [bool(pool[p]) for p in picks]
    assert values[::step].astype(bool).tolist() == [bool(pool[p]) for p in picks[::step]]
    assert arrays.equals(values, "x").tolist() == [pool[p] == "x" for p in picks]
    assert arrays.equals(values[::step], 0).tolist() == [pool[p] == 0 for p in picks[::step]]
    assert arrays.equals(values, ("a",)).tolist() == [pool[p] == ("a",) for p in picks]
