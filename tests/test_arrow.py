"""`ncu_roof.base.arrow`: the buffer conversions give what pyarrow's own conversions give (offsets,
nulls and chunks included), and reading a CSV page or console text through them loads no pandas."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from conftest import modules_loaded_by
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.base.arrow import (
    bool_array,
    bool_values,
    float_array,
    float_values,
    int_array,
    string_array,
    text_values,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def pieces(draw: st.DrawFn, values: list[Any], kind: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """The values as pyarrow holds them after a read: sliced (an offset into the buffers), or
    split into chunks."""
    array = pa.array([None, *values, None], type=kind).slice(1, len(values))  # offset 1
    if draw(st.booleans()) or len(values) < 2:
        return array
    cut = draw(st.integers(1, len(values) - 1))
    return pa.chunked_array([array.slice(0, cut), array.slice(cut)], type=kind)


@st.composite
def float_columns(draw: st.DrawFn) -> tuple[list[float | None], pa.Array | pa.ChunkedArray]:
    values = draw(st.lists(st.one_of(st.none(), st.floats(allow_nan=False)), max_size=40))
    return values, pieces(draw, values, pa.float64())


@st.composite
def bool_columns(draw: st.DrawFn) -> tuple[list[bool | None], pa.Array | pa.ChunkedArray]:
    values = draw(st.lists(st.one_of(st.none(), st.booleans()), max_size=40))
    return values, pieces(draw, values, pa.bool_())


TEXTS = st.one_of(st.none(), st.sampled_from(["", "a", "ä", "a,b", '"q"']), st.text(max_size=4))


@st.composite
def text_columns(draw: st.DrawFn) -> tuple[list[str | None], pa.Array | pa.ChunkedArray]:
    values = draw(st.lists(TEXTS, max_size=40))
    return values, pieces(draw, values, pa.string())


@given(float_columns())
def test_float_values_are_the_numbers_with_nan_for_null(column: tuple[list[float | None], Any]) -> None:
    values, arrow = column
    got = float_values(arrow)
    assert got.dtype == np.float64 and len(got) == len(values)
    assert [None if math.isnan(x) else x for x in got.tolist()] == values
    assert got.tolist() == pytest.approx(arrow.to_numpy(zero_copy_only=False).tolist(), nan_ok=True)


@given(bool_columns())
def test_bool_values_are_the_flags_with_false_for_null(column: tuple[list[bool | None], Any]) -> None:
    values, arrow = column
    got = bool_values(arrow)
    assert got.dtype == np.bool_ and got.tolist() == [bool(v) for v in values]


@given(text_columns())
def test_text_values_are_the_texts_with_none_for_null(column: tuple[list[str | None], Any]) -> None:
    values, arrow = column
    got = text_values(arrow)
    assert got.dtype == object and got.tolist() == values == arrow.to_pylist()


def test_text_values_share_one_object_per_distinct_text() -> None:
    got = text_values(pa.array(["kernel_" + "x" * 20, "k2", "kernel_" + "x" * 20]))
    assert got[0] is got[2]


@given(st.lists(TEXTS, max_size=40))
def test_string_array_is_what_pa_array_makes(values: list[str | None]) -> None:
    made = string_array(values)
    made.validate(full=True)
    assert made.equals(pa.array(values, type=pa.string()))
    assert made.null_count == values.count(None)


@given(st.lists(st.booleans(), max_size=40))
def test_bool_array_is_what_pa_array_makes(values: list[bool]) -> None:
    made = bool_array(np.array(values, dtype=bool))
    made.validate(full=True)
    assert made.equals(pa.array(values, type=pa.bool_()))


def test_a_chunked_array_of_no_chunks_is_empty() -> None:
    assert float_values(pa.chunked_array([], type=pa.float64())).tolist() == []
    assert bool_values(pa.chunked_array([], type=pa.bool_())).tolist() == []
    assert text_values(pa.chunked_array([], type=pa.string())).tolist() == []


def test_float_values_never_write_into_the_arrow_buffer() -> None:
    arrow = pa.array([1.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        float_values(arrow)[0] = 99.0
    with_null = float_values(pa.array([1.0, None]))  # a copy (NaN written into it): writable
    with_null[0] = 3.0
    assert arrow.to_pylist() == [1.0, 2.0]


@given(st.lists(st.one_of(st.none(), st.floats()), max_size=40), st.booleans())
def test_float_array_is_what_pa_array_makes_of_numbers(values: list[float | None], as_numpy: bool) -> None:
    """None and NaN are null (pyarrow's `from_pandas=True`); infinities stay."""
    given_values = np.array([np.nan if v is None else v for v in values]) if as_numpy else values
    made = float_array(given_values)
    made.validate(full=True)
    assert made.equals(pa.array(values, type=pa.float64(), from_pandas=True))


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40))
def test_int_array_is_what_pa_array_makes(values: list[int]) -> None:
    made = int_array(np.array(values, dtype=np.int64))
    made.validate(full=True)
    assert made.equals(pa.array(values, type=pa.int64()))


def test_the_parquet_export_loads_no_pandas(tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    args = ["analyze", str(FIXTURES / "raw_nvtx.csv"), "--format", "parquet", "-o", str(out)]
    assert modules_loaded_by(args, {"pandas"}) == set()
    assert out.stat().st_size > 0


def test_wrong_types_are_refused() -> None:
    with pytest.raises(TypeError, match="float_values of int64"):
        float_values(pa.array([1, 2]))
    with pytest.raises(TypeError, match="bool_values of string"):
        bool_values(pa.array(["a"]))


@pytest.mark.parametrize(
    "given_input",
    [
        "raw_base.csv",  # pyarrow's read
        "damaged",  # raw_base.csv with a short row: the csv module's read, then string_array
        "raw_base_de_DE.csv",  # the careful number parse
        "verdict_tensor_gemm_na_variant.csv",  # a column of n/a only: no chunk left to convert
        "raw_two_runs_with_app_output.csv",
        "console_details_2024.txt",  # parse_numbers of console text
        "summary_per_kernel.csv",
    ],
)
def test_reading_csv_or_console_text_loads_no_pandas(given_input: str, tmp_path: Path) -> None:
    """pyarrow imports pandas (~0.35 s) on its first `to_numpy` or `pa.array`; the readers go
    through the buffers instead, so a CSV page is analyzed without pandas."""
    out = tmp_path / "out.json"
    path = FIXTURES / given_input
    if given_input == "damaged":
        lines = (FIXTURES / "raw_base.csv").read_text(encoding="utf-8").splitlines(keepends=True)
        path = tmp_path / "damaged.csv"
        path.write_text("".join([*lines[:3], '"99","1","app"\n', *lines[3:]]), encoding="utf-8")
    args = ["analyze", str(path), "--skip-bad-rows", "--format", "json", "-o", str(out)]
    assert modules_loaded_by(args, {"pandas"}) == set()
    assert '"kernels": [' in out.read_text(encoding="utf-8")
