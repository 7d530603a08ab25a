"""`ncu_roof.analysis.launches`: the nested records' JSON text, and the table's Arrow schema."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from conftest import analyzed
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof import pipeline
from ncu_roof.analysis.core import analyze
from ncu_roof.analysis.launches import MAP_COLUMNS, json_texts, to_arrow
from ncu_roof.analysis.notes import COLLECTION_FAILED, ZERO_DURATION
from ncu_roof.pipeline import example_path
from ncu_roof.render.jsonout import render_json

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


def assert_null_where_the_json_has_null(path: Path) -> None:
    """Every float column of the launch table finite or null; a tier's intensity and cap, which the
    analysis holds as infinity for FLOPs over 0 bytes, null where the JSON kernels have null."""
    a = analyzed(path)
    table = to_arrow(a)
    for name, column in zip(table.column_names, table.columns, strict=True):
        if column.type == pa.float64():
            assert all(v is None or math.isfinite(v) for v in column.to_pylist()), name
    kernels = json.loads(render_json(a))["kernels"]
    infinite = 0
    for field in ("intensity_flop_per_byte", "cap_flop_per_s"):
        by_tier = a.launches.get_column(field)
        for tier in by_tier.struct.fields:
            held = by_tier.struct.field(tier).to_list()
            infinite += held.count(math.inf)
            name = MAP_COLUMNS[field].format(tier)
            flat = table.column(name).to_pylist() if name in table.column_names else [None] * len(held)
            written = [k[field].get(tier) for k in kernels]
            assert flat == written == [None if v == math.inf else v for v in held], name
    assert infinite, "the case at hand: an infinity in the analysis"


def test_a_number_that_is_not_finite_is_null_as_in_the_json(fixtures: Path) -> None:
    """The example's H100 SiLU launches do FLOPs with 0 shared-memory bytes: an infinite shared
    intensity, null in the JSON, so null in the table (Arrow, Parquet, pandas' NaN, the CSV's empty)."""
    for path in (Path(example_path()), fixtures / "h200" / "h200_full_raw.csv"):
        assert_null_where_the_json_has_null(path)


@pytest.mark.parametrize(
    "name",
    [
        "h100pcie_rep_2025.1_full_silu.ncu-rep",  # 0 shared bytes
        "t4_rep_full-2024.2.1_mlp.ncu-rep",
        "a100_details-kerneltime-rules_hier-roofline_bert-attn.csv",  # and an infinite shared cap
        "a100_details-kerneltime_two-runs-traceback-warning.csv",  # 0 DRAM bytes
    ],
)
def test_corpus_infinities_are_null_as_in_the_json(corpus: Path, name: str) -> None:
    if name.endswith(".ncu-rep"):
        pytest.importorskip("ncu_report")
    assert_null_where_the_json_has_null(corpus / name)


@pytest.mark.parametrize("name", ["raw_base.csv", "raw_every_launch_failed.csv", "an unreadable cell"])
def test_an_analysis_without_notes_differs_only_in_them_and_keeps_a_failed_launchs(
    fixtures: Path, tmp_path: Path, name: str
) -> None:
    """A diff's and a plot's analysis (`notes=False`): every other column as the full analysis', and
    of the notes only the reader's and a failed collection's (by which a failed capture is refused)."""
    path = fixtures / name
    if not path.exists():  # a reader's note: a metric cell that reads as no number
        with (fixtures / "raw_base.csv").open(encoding="utf-8", newline="") as page:
            rows = list(csv.reader(page))
        rows[2][rows[0].index("dram__bytes_read.sum")] = "12abc"
        with (path := tmp_path / "unreadable.csv").open("w", encoding="utf-8", newline="") as out:
            csv.writer(out, quoting=csv.QUOTE_ALL).writerows(rows)
    tables = pipeline.read_tables([str(path)])
    full, bare = (analyze(tables, notes=notes).launches for notes in (True, False))
    assert bare.drop("notes").equals(full.drop("notes"))
    given = tables[0].launches.get_column("input_notes").explode().drop_nulls()
    said = {COLLECTION_FAILED, ZERO_DURATION, *given}
    kept = full.get_column("notes").list.eval(pl.element().filter(pl.element().is_in(list(said))))
    assert bare.get_column("notes").to_list() == kept.to_list()
    assert any(full.get_column("notes").to_list())  # the full analysis has notes to leave out
