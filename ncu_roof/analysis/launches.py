"""The analysis as one flat table: one row per launch, one column per value, the unit in its name.

This is the one column vocabulary: `--format csv`, `--format parquet`, `Analysis.to_arrow()` and
`to_pandas()` are this table, with these names in this order (docs/api.md lists them).

* A name ends with its unit (`duration_s`, `dram_bytes`, `sol_sm_pct`, `device_sm_clock_hz`); a
  count of FLOPs or operations leads with it (`flop_fp32`, `ops_int8`), as the recipe names them.
* Each `Kernel` field is a column: a scalar by its name, a mapping one per key (`MAP_COLUMNS`),
  notes a list, a nested record its JSON text, an enum its value. Then what groups say of each
  launch (`headroom_s`, `group_id`, `fix_first_rank`), and what the JSON says once per input and
  device (`input_path`, `device_name`, `roof_source`, `device_roof_dram_byte_per_s`, …).

`LEAD` (the CSV's columns since its first release) first, then the rest in field order; missing is null, never
0, and so is a number that is not finite (an intensity of FLOPs over 0 bytes, its cap), as in the JSON. Made
from the launch frame (`Analysis.launches`), groups, inputs and devices joined on."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import fields
from typing import TYPE_CHECKING

import polars as pl
import polars.selectors as cs

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.frame import each_distinct as each_distinct  # csvout's too
from ncu_roof.analysis.frame import integer_ops, is_sparse, numbers, roof_columns, texts, without_absent
from ncu_roof.analysis.groups import group_kernels, ranked
from ncu_roof.analysis.records import Kernel
from ncu_roof.base.vocabulary import COMPUTE, PRECISIONS, SOL_KEYS, TIERS, SortBy

if TYPE_CHECKING:
    import pyarrow as pa

KEY_ORDER = (*PRECISIONS, "total", *TIERS, COMPUTE, *SOL_KEYS)  # then any other key, by name
JSON_FIELDS = ("traffic", "tensor_paths", "not_collected", "instructions")  # nested records: JSON text
STORED_AS = {"instructions": "instruction_roofline", "roofline_binding": "binding"}  # the frame's column
MAP_COLUMNS = {  # a mapping field → its columns' names, `{}` its key
    "flop": "flop_{}",
    "ops": "ops_{}",
    "bytes": "{}_bytes",
    "intensity_flop_per_byte": "{}_intensity_flop_per_byte",
    "achieved_byte_per_s": "{}_achieved_byte_per_s",
    "cap_flop_per_s": "{}_cap_flop_per_s",
    "sol_pct": "sol_{}_pct",
    "pipe_pct": "pipe_{}_pct",
    "pct_of_bandwidth": "{}_bandwidth_pct",
    "recipe": "recipe_{}",
}
# The first columns, in this order: who ran where, the verdict, its work and traffic, headroom
LEAD = (
    *("id", "name", "input", "device", "grid", "block", "nvtx", "duration_s", "time_share"),
    *("achieved_flop_per_s", "attainable_flop_per_s", "binding", "bound", "compute_precision", "pct_of_roof"),
    *(MAP_COLUMNS["flop"].format(p) for p in (*PRECISIONS, "total")),
    *(MAP_COLUMNS["bytes"].format(t) for t in TIERS),
    *(MAP_COLUMNS["intensity_flop_per_byte"].format(t) for t in TIERS),
    *(MAP_COLUMNS["sol_pct"].format(k) for k in SOL_KEYS),
    *("notes", "headroom_s", "headroom_sol_s", "group_id", "fix_first_rank"),
)


def _keys(present: Iterable[str]) -> list[str]:
    return sorted(set(present), key=lambda k: (KEY_ORDER.index(k) if k in KEY_ORDER else len(KEY_ORDER), k))


def json_texts(column: pl.Series) -> pl.Series:
    """A struct column as JSON text per launch (a sparse struct's absent keys left out, a number
    that is not finite null; a null record stays null), each distinct value written once."""

    def text(key: str) -> str | None:
        value = without_absent(json.loads(key), (column.name,))
        return None if value is None else json.dumps(value, ensure_ascii=False)

    return each_distinct(column.struct.json_encode(), text)  # one compact text per value, numbers exact


def _field_columns(name: str, launches: pl.DataFrame) -> list[pl.Series]:
    """One `Kernel` field's flat columns: a mapping's one per key (none for a sparse key no launch has)."""
    if name == "ops":  # each integer tensor path's count, and `ops_total` where a launch has one
        keys = integer_ops(launches)
    else:
        column = launches.get_column(STORED_AS.get(name, name))
        if name in JSON_FIELDS:
            return [json_texts(column).alias(name)]
        if name not in MAP_COLUMNS:
            return [column.alias(name)]
        fields = column.struct.unnest().iter_columns()
        keys = {s.name: s for s in fields if not is_sparse((name,)) or s.null_count() < len(s)}
    return [keys[k].alias(MAP_COLUMNS[name].format(k)) for k in _keys(keys)]


def group_columns(analysis: Analysis) -> pl.DataFrame:
    """Per launch (`row`): its group (kernel and launch shape on its device; 0, 1, … in first-launch order)
    and the group's place in the fix-first ranking (1: the headline's "fix first"; null without headroom)."""
    groups = group_kernels(analysis, notes=False)
    with_room = [g for g in groups if g.headroom_s is not None and g.headroom_s > 0]
    place = {id(g): p for p, g in enumerate(ranked(with_room, SortBy.HEADROOM), start=1)}
    return pl.DataFrame(
        {
            "row": [list(g.rows) for g in groups],
            "group_id": range(len(groups)),
            "fix_first_rank": [place.get(id(g)) for g in groups],
        },
        schema={"row": pl.List(pl.Int64), "group_id": pl.Int64, "fix_first_rank": pl.Int64},
    ).explode("row")


def input_columns(analysis: Analysis) -> pl.DataFrame:
    rows = [(j, i.path, i.format, i.ncu_version) for j, i in enumerate(analysis.inputs)]
    schema = {"input": pl.Int64, "input_path": pl.String, "input_format": pl.String, "ncu_version": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


def device_columns(analysis: Analysis) -> pl.DataFrame:
    """Per device that ran launches (`device`): its name, CC, clock, roofs and where they came from."""
    used = set(analysis.launches.get_column("device").unique().to_list())
    devices = [d for d in analysis.devices if d.index in used]
    columns = {
        "device": pl.Series([d.index for d in devices], dtype=pl.Int64),
        "device_name": texts(d.name for d in devices),
        "device_cc": texts(d.cc for d in devices),
        "device_sm_clock_hz": numbers([d.sm_clock_hz for d in devices]),
        "roof_source": texts(d.roofs.source for d in devices),
    }
    for kind, unit in (("compute_flop_per_s", "flop_per_s"), ("bandwidth_byte_per_s", "byte_per_s")):
        roofs = [getattr(d.roofs, kind) for d in devices]
        for key in _keys(k for r in roofs for k in r):
            columns[f"device_roof_{key}_{unit}"] = numbers([r.get(key) for r in roofs])
    return pl.DataFrame([s.alias(k) for k, s in columns.items()])


def launch_table(analysis: Analysis) -> pl.DataFrame:
    """`LEAD`, the other columns in `Kernel` field order, then what each launch's input and device say; a
    number that is not finite null, as the JSON writes it."""
    launches = analysis.launches
    kernel = [c for f in fields(Kernel) for c in _field_columns(f.name, launches)]
    table = (
        pl.DataFrame([*kernel, *roof_columns(launches)])  # as the JSON says
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("row"))
        .join(group_columns(analysis), on="row", how="left", maintain_order="left")
        .drop("row")
        .join(input_columns(analysis), on="input", how="left", maintain_order="left")
        .join(device_columns(analysis), on="device", how="left", maintain_order="left")
        .with_columns(pl.when(cs.float().is_finite()).then(cs.float()))
    )
    return table.select(*LEAD, *(c for c in table.columns if c not in LEAD))


def to_arrow(analysis: Analysis) -> pa.Table:
    """`launch_table` as a `pyarrow.Table`: float64 (nulls), int64, string, list<string>, bool columns."""
    import pyarrow as pa

    table = launch_table(analysis).to_arrow()
    plain = {pa.large_string(): pa.string(), pa.large_list(pa.large_string()): pa.list_(pa.string())}
    return table.cast(pa.schema([(f.name, plain.get(f.type, f.type)) for f in table.schema]))
