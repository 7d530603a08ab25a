"""The analysis as one flat table: one row per launch, one column per value, the unit in its name.

Every `Kernel` field becomes a column: a scalar keeps its name (`duration_s`, `bound`,
`pct_of_roof`), a mapping gives one column per key, named `FIELD_KEY` (`flop_total`,
`bytes_dram`, `intensity_flop_per_byte_l2`, `sol_pct_sm`, `recipe_duration_s`), a tuple of
notes stays a list. Then come what the JSON says once per input and device: `input_path`,
`input_format`, `ncu_version`, `device_name`, `device_cc`, `device_sm_clock_hz`, `roof_source`
and the device's roofs (`device_roof_fp32_flop_per_s`, `device_roof_dram_byte_per_s`). Missing
is null, never 0. The Python API's `to_arrow()` / `to_pandas()` and the Parquet export are this
table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from enum import Enum
from itertools import chain
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING, Any

from ncu_roof.analysis import Analysis, Kernel
from ncu_roof.model import COMPUTE, PRECISIONS, SOL_KEYS, TIERS

if TYPE_CHECKING:
    import pyarrow as pa

FLOAT, INT, TEXT, BOOL, TEXTS = "float", "int", "text", "bool", "texts"
KEY_ORDER = (*PRECISIONS, "total", *TIERS, COMPUTE, *SOL_KEYS)  # then any other key, by name
DERIVED = (("above_roof", BOOL),)  # Kernel properties the JSON also carries


def _kind(annotation: str) -> tuple[str, bool]:
    """(kind of each value, whether the field is a mapping) from a field's annotation."""
    if annotation.startswith("Mapping"):
        return (TEXT if annotation.startswith("Mapping[str, str") else FLOAT), True
    if annotation.startswith("tuple"):
        return TEXTS, False
    if "float" in annotation:
        return FLOAT, False
    if annotation.startswith("int"):
        return INT, False
    if annotation.startswith("bool"):
        return BOOL, False
    return TEXT, False  # strings and enums (written by value)


def _keys(maps: Sequence[Mapping[str, Any]]) -> list[str]:
    present = set(chain.from_iterable(maps))
    known = [k for k in KEY_ORDER if k in present]
    return known + sorted(present - set(known))


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def kernel_columns(kernels: Sequence[Kernel]) -> dict[str, tuple[str, list[Any]]]:
    """Column name → (kind, one value per kernel), every Kernel field flattened."""
    out: dict[str, tuple[str, list[Any]]] = {}
    for f in fields(Kernel):
        kind, mapping = _kind(str(f.type))
        values = list(map(attrgetter(f.name), kernels))
        if mapping:
            for key in _keys(values):
                out[f"{f.name}_{key}"] = (kind, list(map(methodcaller("get", key), values)))
        elif kind == TEXT:
            out[f.name] = (kind, list(map(_plain, values)))
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
             TEXTS: pa.list_(pa.string())}
    columns = {**kernel_columns(analysis.kernels), **context_columns(analysis)}
    arrays = [pa.array(values, type=types[kind], from_pandas=True) for kind, values in columns.values()]
    return pa.Table.from_arrays(arrays, names=list(columns))
