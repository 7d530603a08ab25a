"""`ncu_roof.analysis.launches`: the nested records' JSON text, and the table's Arrow schema."""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl
import pyarrow as pa
from conftest import analyzed
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.launches import json_texts, to_arrow

NUMBER = st.one_of(st.none(), st.floats(), st.sampled_from([-0.0, 4e10, 1e22, 0.1 + 0.2]))
RECORD = st.fixed_dictionaries({"count": NUMBER, "unit": st.one_of(st.none(), st.text(max_size=3))})


def finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


@given(st.lists(st.one_of(st.none(), st.fixed_dictionaries({"a": RECORD, "b": NUMBER})), max_size=20))
def test_json_texts_are_json_dumps_of_each_record(rows: list[dict[str, Any] | None]) -> None:
    """Every number exact (-0.0 kept apart from 0.0), not finite as null; a null record null."""
    column = pl.Series(
        "x",
        rows,
        dtype=pl.Struct({"a": pl.Struct({"count": pl.Float64, "unit": pl.String}), "b": pl.Float64}),
    )
    expected = [
        None
        if r is None
        else json.dumps(
            {"a": {"count": finite(r["a"]["count"]), "unit": r["a"]["unit"]}, "b": finite(r["b"])},
            ensure_ascii=False,
        )
        for r in rows
    ]
    assert json_texts(column).to_list() == expected


def test_a_sparse_records_absent_keys_are_left_out() -> None:
    column = pl.Series("traffic", [{"dram": {"roof": "dram", "recipe": None}, "l2": None}])
    assert json_texts(column).to_list() == ['{"dram": {"roof": "dram"}}']


def test_the_arrow_schema(fixtures: Any) -> None:
    table = to_arrow(analyzed(fixtures / "verdict_int8_gemm.csv"))
    types = dict(zip(table.column_names, table.schema.types, strict=True))
    assert types["id"] == types["group_id"] == types["fix_first_rank"] == pa.int64()
    assert types["duration_s"] == types["ops_int8"] == types["device_roof_fp32_flop_per_s"] == pa.float64()
    assert types["name"] == types["traffic"] == types["input_path"] == types["bound"] == pa.string()
    assert types["notes"] == types["missing"] == pa.list_(pa.string())
    assert types["above_roof"] == types["small_grid"] == pa.bool_()
    assert set(types.values()) == {pa.int64(), pa.float64(), pa.string(), pa.list_(pa.string()), pa.bool_()}
    assert table.column("shared_bytes").null_count == 1  # not collected: null, never 0


def test_an_analysis_of_no_launch_is_an_empty_table_with_the_lead_columns() -> None:
    """An `Analysis` built by hand with no launches (the API allows it): a table with its headline
    columns and no row, and a CSV that is its header alone."""
    from ncu_roof.analysis.core import Analysis
    from ncu_roof.analysis.launches import LEAD
    from ncu_roof.render.csvout import render_csv

    empty = Analysis(inputs=(), devices=(), kernels=())
    table = to_arrow(empty)
    assert table.num_rows == 0 and table.column_names[: len(LEAD)] == list(LEAD)
    assert render_csv(empty).splitlines()[0].split(",")[: len(LEAD)] == list(LEAD)
    assert len(render_csv(empty).splitlines()) == 1
