"""The analysis as one flat table: one row per launch, one column per value, the unit in its name.

This is the one column vocabulary: `--format csv`, `--format parquet`, `Analysis.to_arrow()` and
`to_pandas()` are this table, with these names in this order (docs/api.md lists them).

* A name ends with its unit (`duration_s`, `dram_bytes`, `sol_sm_pct`, `l2_cap_flop_per_s`,
  `device_sm_clock_hz`); a count of FLOPs or operations leads with it (`flop_fp32`, `ops_int8`),
  as the recipe has always named them (`recipe_dram_bytes` is where `dram_bytes` came from).
* Every `Kernel` field becomes a column: a scalar keeps its name (`bound`, `pct_of_roof`), a
  mapping gives one column per key, named by `MAP_COLUMNS` (`flop_total`, `dram_bytes`,
  `l2_intensity_flop_per_byte`, `sol_sm_pct`, `pipe_alu_pct`, `recipe_duration_s`), a tuple of
  notes stays a list, a nested record is a column of its JSON text, an enum of its value.
* What groups say of each launch (`groups`): `headroom_s`, `group_id`, `fix_first_rank`.
* What the JSON says once per input and device: `input_path`, `input_format`, `ncu_version`,
  `device_name`, `device_cc`, `device_sm_clock_hz`, `roof_source` and the device's roofs
  (`device_roof_fp32_flop_per_s`, `device_roof_dram_byte_per_s`).

The headline columns come first (`LEAD`, the CSV's columns since its first release), then every
other column in field order. Missing is null, never 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields, is_dataclass
from enum import Enum
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from ncu_roof.analysis.columns import (
    BOOLS,
    FLOATS,
    INTS,
    MAPS,
    SPARSE_MAPS,
    LaunchColumns,
    distinct,
    shared_texts,
)
from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.groups import SortBy, group_kernels, headroom_array, ranked
from ncu_roof.analysis.records import Kernel
from ncu_roof.base.vocabulary import COMPUTE, PRECISIONS, SOL_KEYS, TIERS

if TYPE_CHECKING:
    import pyarrow as pa

FLOAT, INT, TEXT, BOOL, TEXTS, JSON = "float", "int", "text", "bool", "texts", "json"
RANK = "rank"  # whole numbers, null where there is none (float64 with NaN until written)
KEY_ORDER = (*PRECISIONS, "total", *TIERS, COMPUTE, *SOL_KEYS)  # then any other key, by name
TEXT_FIELDS = (
    *("name", "grid", "block", "nvtx", "binding", "roofline_binding", "compute_precision"),
    *("sol_unit", "compute_ceiling", "sol_busiest_unit"),
)
ENUM_FIELDS = ("bound", "verdict_basis", "sol_bound")  # a column of the enum's value
TEXTS_FIELDS = ("notes", "missing")  # lists of text
TEXT_MAPS = ("recipe",)  # a column per key, of text
NUMBER_OBJECTS = ("ops",)  # mappings of numbers held per launch: a column per key
JSON_FIELDS = ("traffic", "tensor_paths", "not_collected", "instructions")  # a column of JSON text
# a mapping field → its columns' names, `{}` its key
MAP_COLUMNS = {
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
    *("achieved_flop_per_s", "attainable_flop_per_s", "binding", "bound", "compute_precision"),
    "pct_of_roof",
    *(MAP_COLUMNS["flop"].format(p) for p in (*PRECISIONS, "total")),
    *(MAP_COLUMNS["bytes"].format(t) for t in TIERS),
    *(MAP_COLUMNS["intensity_flop_per_byte"].format(t) for t in TIERS),
    *(MAP_COLUMNS["sol_pct"].format(k) for k in SOL_KEYS),
    "notes",
    "headroom_s",
    "headroom_sol_s",  # what the busiest Speed-of-Light unit still allows
    "group_id",
    "fix_first_rank",
)


def _json(value: Any) -> str | None:
    """A nested value as JSON text (None stays null; a record is its fields)."""
    if value is None:
        return None
    return json.dumps(_plain(value), ensure_ascii=False, allow_nan=False)


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _keys(present: Iterable[str]) -> list[str]:
    present = set(present)
    known = [k for k in KEY_ORDER if k in present]
    return known + sorted(present - set(known))


def _field_columns(name: str, columns: LaunchColumns) -> dict[str, tuple[str, Any]]:
    """The flat columns of one `Kernel` field: (kind, values) by column name."""
    if name in FLOATS:
        return {name: (FLOAT, columns[name])}
    if name in INTS:
        return {name: (INT, columns[name])}
    if name in BOOLS:
        return {name: (BOOL, columns[name])}
    if name in MAPS:  # a sparse map's key that no launch has gets no column
        values = columns.maps[name]
        present = [k for k, a in values.items() if name not in SPARSE_MAPS or not np.isnan(a).all()]
        return {MAP_COLUMNS[name].format(key): (FLOAT, values[key]) for key in _keys(present)}
    items = columns[name].tolist()
    if name in TEXT_FIELDS:
        return {name: (TEXT, items)}
    if name in ENUM_FIELDS:
        return {name: (TEXT, [v.value for v in items])}
    if name in TEXTS_FIELDS:
        return {name: (TEXTS, [list(v) for v in items])}
    kind = TEXT if name in TEXT_MAPS else FLOAT if name in NUMBER_OBJECTS else None
    if kind is not None:
        keys = _keys(chain.from_iterable(distinct(items)))
        return {MAP_COLUMNS[name].format(key): (kind, [row.get(key) for row in items]) for key in keys}
    if name in JSON_FIELDS:
        return {name: (JSON, shared_texts(items, _json))}
    raise AssertionError(f"Kernel field {name} has no column kind")  # a test covers every field


def kernel_columns(columns: LaunchColumns) -> dict[str, tuple[str, Any]]:
    """Column name → (kind, one value per launch), every Kernel field flattened, in field order."""
    out: dict[str, tuple[str, Any]] = {}
    for f in fields(Kernel):
        out |= _field_columns(f.name, columns)
    out["above_roof"] = (BOOL, columns["pct_of_roof"] > 100.0)  # the Kernel property the JSON carries
    return out


def group_columns(analysis: Analysis) -> dict[str, tuple[str, Any]]:
    """Per launch, what `groups` says: its headroom (the time it would save at its binding roof),
    its group (its kernel and launch shape on its device; 0, 1, … in first-launch order), and its
    group's place in the fix-first ranking (1: the group that would save the most time, as the
    headline's "fix first"; null for a group that has no headroom)."""
    columns = analysis.columns
    n = len(columns)
    groups = group_kernels(analysis)
    group_id = np.zeros(n, dtype=np.int64)
    for index, group in enumerate(groups):
        group_id[list(group.rows)] = index
    rank = np.full(n, np.nan)
    with_room = [g for g in groups if g.headroom_s is not None and g.headroom_s > 0]
    for place, group in enumerate(ranked(with_room, SortBy.HEADROOM), start=1):
        rank[list(group.rows)] = place
    return {
        "headroom_s": (FLOAT, headroom_array(columns["duration_s"], columns["pct_of_roof"])),
        "group_id": (INT, group_id),
        "fix_first_rank": (RANK, rank),
    }


def launch_columns(analysis: Analysis) -> dict[str, tuple[str, Any]]:
    """The launch table: column name → (kind, one value per launch), `LEAD` first."""
    table = {**kernel_columns(analysis.columns), **group_columns(analysis), **context_columns(analysis)}
    return {name: table[name] for name in (*LEAD, *(c for c in table if c not in LEAD))}


def context_columns(analysis: Analysis) -> dict[str, tuple[str, Any]]:
    """Per launch, what its input and device say: path, format, ncu version, device roofs."""
    columns = analysis.columns
    inputs = [analysis.inputs[i] for i in columns["input"].tolist()]
    by_index = {d.index: d for d in analysis.devices}
    devices = [by_index[i] for i in columns["device"].tolist()]
    out: dict[str, tuple[str, Any]] = {
        "input_path": (TEXT, [i.path for i in inputs]),
        "input_format": (TEXT, [i.format for i in inputs]),
        "ncu_version": (TEXT, [i.ncu_version for i in inputs]),
        "device_name": (TEXT, [d.name for d in devices]),
        "device_cc": (TEXT, [d.cc for d in devices]),
        "device_sm_clock_hz": (FLOAT, [d.sm_clock_hz for d in devices]),
        "roof_source": (TEXT, [d.roofs.source for d in devices]),
    }
    compute = [d.roofs.compute_flop_per_s for d in devices]
    for key in _keys(chain.from_iterable(compute)):
        out[f"device_roof_{key}_flop_per_s"] = (FLOAT, [c.get(key) for c in compute])
    bandwidth = [d.roofs.bandwidth_byte_per_s for d in devices]
    for key in _keys(chain.from_iterable(bandwidth)):
        out[f"device_roof_{key}_byte_per_s"] = (FLOAT, [b.get(key) for b in bandwidth])
    return out


def to_arrow(analysis: Analysis) -> pa.Table:
    """The launch table as a `pyarrow.Table` (floats float64 with nulls, lists of strings)."""
    import pyarrow as pa

    from ncu_roof.base.arrow import (
        bool_array,
        float_array,
        int_array,
        rank_array,
        string_array,
        text_lists_array,
    )

    # through the buffers: pyarrow's own conversion of a list imports pandas (~0.35 s)
    build: dict[str, Callable[[Any], pa.Array]] = {
        FLOAT: float_array,
        INT: int_array,
        RANK: rank_array,
        TEXT: string_array,
        BOOL: bool_array,
        TEXTS: text_lists_array,
        JSON: string_array,
    }
    columns = launch_columns(analysis)
    arrays = [build[kind](values) for kind, values in columns.values()]
    return pa.Table.from_arrays(arrays, names=list(columns))
