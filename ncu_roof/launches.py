"""The analysis as one flat table: one row per launch, one column per value, the unit in its name.

Every `Kernel` field becomes a column: a scalar keeps its name (`duration_s`, `bound`,
`pct_of_roof`), a mapping gives one column per key, named `FIELD_KEY` (`flop_total`,
`bytes_dram`, `intensity_flop_per_byte_l2`, `sol_pct_sm`, `recipe_duration_s`), a tuple of
notes stays a list, and a nested record (or anything else) is a column of its JSON text, an
enum a column of its value. Then come what the JSON says once per input and device: `input_path`,
`input_format`, `ncu_version`, `device_name`, `device_cc`, `device_sm_clock_hz`, `roof_source`
and the device's roofs (`device_roof_fp32_flop_per_s`, `device_roof_dram_byte_per_s`). Missing
is null, never 0. The Python API's `to_arrow()` / `to_pandas()` and the Parquet export are this
table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import fields, is_dataclass
from enum import Enum
from itertools import chain
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING, Any

from ncu_roof.analysis import Analysis, Kernel
from ncu_roof.vocabulary import COMPUTE, PRECISIONS, SOL_KEYS, TIERS

if TYPE_CHECKING:
    import pyarrow as pa

FLOAT, INT, TEXT, BOOL, TEXTS, JSON = "float", "int", "text", "bool", "texts", "json"
KEY_ORDER = (*PRECISIONS, "total", *TIERS, COMPUTE, *SOL_KEYS)  # then any other key, by name
DERIVED = (("above_roof", BOOL),)  # Kernel properties the JSON also carries


def _kind(annotation: str) -> tuple[str, bool]:
    """(kind of each value, whether the field is a mapping of such values) from its annotation;
    JSON (the value's JSON text) for whatever is not a plain value: nested records, enums."""
    plain = annotation.removesuffix(" | None")
    if plain.startswith("Mapping[str, float"):
        return FLOAT, True
    if plain == "Mapping[str, str]":
        return TEXT, True
    if plain == "tuple[str, ...]":
        return TEXTS, False
    return {"float": FLOAT, "int": INT, "bool": BOOL, "str": TEXT}.get(plain, JSON), False


def _json(value: Any) -> str | None:
    """A nested value as JSON text (None stays null; an enum is its value, a record its fields)."""
    if value is None:
        return None
    if isinstance(value, Enum):
        return str(value.value)
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


def _keys(maps: Sequence[Mapping[str, Any]]) -> list[str]:
    present = set(chain.from_iterable(maps))
    known = [k for k in KEY_ORDER if k in present]
    return known + sorted(present - set(known))


def kernel_columns(kernels: Sequence[Kernel]) -> dict[str, tuple[str, list[Any]]]:
    """Column name → (kind, one value per kernel), every Kernel field flattened."""
    out: dict[str, tuple[str, list[Any]]] = {}
    for f in fields(Kernel):
        kind, mapping = _kind(str(f.type))
        values = list(map(attrgetter(f.name), kernels))
        if mapping:
            for key in _keys(values):
                out[f"{f.name}_{key}"] = (kind, list(map(methodcaller("get", key), values)))
        elif kind == JSON:
            texts = list(map(_json, values))
            enum = all(isinstance(v, Enum | None) for v in values)  # an enum column reads as text
            out[f.name] = (TEXT, texts) if enum else (JSON, texts)
        elif kind == TEXTS:
            out[f.name] = (kind, list(map(list, values)))
        else:
            out[f.name] = (kind, values)
    for name, kind in DERIVED:
        out[name] = (kind, list(map(attrgetter(name), kernels)))
    return out


def context_columns(analysis: Analysis) -> dict[str, tuple[str, list[Any]]]:
    """Per launch, what its input and device say: path, format, ncu version, device roofs."""
    inputs = [analysis.inputs[k.input] for k in analysis.kernels]
    by_index = {d.index: d for d in analysis.devices}
    devices = [by_index[k.device] for k in analysis.kernels]
    out: dict[str, tuple[str, list[Any]]] = {
        "input_path": (TEXT, [i.path for i in inputs]),
        "input_format": (TEXT, [i.format for i in inputs]),
        "ncu_version": (TEXT, [i.ncu_version for i in inputs]),
        "device_name": (TEXT, [d.name for d in devices]),
        "device_cc": (TEXT, [d.cc for d in devices]),
        "device_sm_clock_hz": (FLOAT, [d.sm_clock_hz for d in devices]),
        "roof_source": (TEXT, [d.roofs.source for d in devices]),
    }
    compute = [d.roofs.compute_flop_per_s for d in devices]
    for key in _keys(compute):
        out[f"device_roof_{key}_flop_per_s"] = (FLOAT, [c.get(key) for c in compute])
    bandwidth = [d.roofs.bandwidth_byte_per_s for d in devices]
    for key in _keys(bandwidth):
        out[f"device_roof_{key}_byte_per_s"] = (FLOAT, [b.get(key) for b in bandwidth])
    return out


def to_arrow(analysis: Analysis) -> pa.Table:
    """The launch table as a `pyarrow.Table` (floats float64 with nulls, lists of strings)."""
    import pyarrow as pa

    types = {FLOAT: pa.float64(), INT: pa.int64(), TEXT: pa.string(), BOOL: pa.bool_(),
             TEXTS: pa.list_(pa.string()), JSON: pa.string()}
    columns = {**kernel_columns(analysis.kernels), **context_columns(analysis)}
    arrays = [pa.array(values, type=types[kind], from_pandas=True) for kind, values in columns.values()]
    return pa.Table.from_arrays(arrays, names=list(columns))
