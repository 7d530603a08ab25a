"""`--format json`: the stable `ncu-roof/analysis/v1` contract (docs/analysis-schema.md)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import Enum
from json.encoder import encode_basestring
from operator import attrgetter, methodcaller
from typing import Any

import numpy as np

from ncu_roof.analysis import SCHEMA, Analysis, Device, InstructionRoofline, Kernel
from ncu_roof.groups import (
    GroupBy,
    KernelGroup,
    device_totals_s,
    fix_first,
    group_kernels,
    headroom_s,
    ranked,
)
from ncu_roof.model import TRANSACTION_BYTES, finite_or_none
from ncu_roof.vocabulary import PRECISIONS, SOL_KEYS, TIERS


def device_json(device: Device) -> dict[str, Any]:
    roofs = device.roofs
    return {
        "index": device.index,
        "input": device.input,
        "name": device.name,
        "cc": device.cc,
        "roofs": {
            "compute_flop_per_s": {k: finite_or_none(v) for k, v in roofs.compute_flop_per_s.items()},
            "bandwidth_byte_per_s": {k: finite_or_none(v) for k, v in roofs.bandwidth_byte_per_s.items()},
        },
        "sm_clock_hz": finite_or_none(device.sm_clock_hz),
        "roof_source": roofs.source,
        "roof_sources": dict(roofs.sources),
    }


# The kernel object of the JSON, field by field: (key, kind of value, Kernel attribute or a
# function of the kernel), or (key, Kernel attribute, keys) for a mapping of numbers with fixed
# keys. The same spec gives one kernel's dict (`kernel_json`) and, column by column, the text of
# many kernels at once (`kernels_text`): that is what makes 100,000 launches cheap to write. An
# OBJECT is any JSON-ready value (dict, list, None; numbers already finite or None).
NUMBER, INT, TEXT, BOOL, ENUM, NUMBERS, OBJECT = "number", "int", "text", "bool", "enum", "numbers", "object"
Getter = str | Callable[[Kernel], Any]
Leaf = tuple[str, str, Getter]
Nested = tuple[str, str, tuple[str, ...]]


KERNEL_SPEC: tuple[Leaf | Nested, ...] = (
    ("id", INT, "id"),
    ("name", TEXT, "name"),
    ("input", INT, "input"),
    ("run", INT, "run"),
    ("device", INT, "device"),
    ("grid", TEXT, "grid"),
    ("block", TEXT, "block"),
    ("nvtx", TEXT, "nvtx"),
    ("duration_s", NUMBER, "duration_s"),
    ("time_share", NUMBER, "time_share"),
    ("flop", "flop", (*PRECISIONS, "total")),
    ("bytes", "bytes", TIERS),
    ("intensity_flop_per_byte", "intensity_flop_per_byte", TIERS),
    ("achieved_flop_per_s", NUMBER, "achieved_flop_per_s"),
    ("achieved_byte_per_s", "achieved_byte_per_s", TIERS),
    ("attainable_flop_per_s", NUMBER, "attainable_flop_per_s"),
    ("cap_flop_per_s", NUMBERS, "cap_flop_per_s"),
    ("binding", TEXT, "binding"),
    ("bound", ENUM, "bound"),
    ("compute_precision", TEXT, "compute_precision"),
    ("pct_of_roof", NUMBER, "pct_of_roof"),
    ("above_roof", BOOL, "above_roof"),
    ("sol_pct", "sol_pct", SOL_KEYS),
    ("recipe", OBJECT, "recipe"),
    ("traffic", OBJECT, lambda k: {tier: dict(entry) for tier, entry in k.traffic.items()}),
    ("notes", OBJECT, "notes"),
    ("verdict_basis", ENUM, "verdict_basis"),
    (
        "sol_verdict",
        OBJECT,
        lambda k: {"bound": k.sol_bound.value, "unit": k.sol_unit, "small_grid": k.small_grid},
    ),
    ("flop_total_is_lower_bound", BOOL, "flop_total_is_lower_bound"),
    ("not_collected", OBJECT, lambda k: {p: list(v) for p, v in k.not_collected.items()}),
    ("ops", NUMBERS, "ops"),
    ("ops_total_is_lower_bound", BOOL, "ops_total_is_lower_bound"),
    ("tensor_paths", OBJECT, lambda k: _tensor_paths(k)),
    ("pipe_pct", NUMBERS, "pipe_pct"),
    ("compute_ceiling", TEXT, "compute_ceiling"),
    ("compute_ceiling_pct", NUMBER, "compute_ceiling_pct"),
    ("instruction_roofline", OBJECT, lambda k: _instructions(k.instructions)),
    ("headroom_s", NUMBER, headroom_s),
)


def _value(kind: str, value: Any) -> Any:
    """One value as the JSON holds it: non-finite numbers as null, enums by value, plain containers."""
    if kind == NUMBER:
        return finite_or_none(value)
    if kind == ENUM:
        return value.value
    if kind == NUMBERS:
        return {k: finite_or_none(v) for k, v in value.items()}
    if kind == OBJECT and isinstance(value, Mapping):
        return dict(value)
    if kind == OBJECT and isinstance(value, tuple):
        return list(value)
    return value


def _getter(what: Getter) -> Callable[[Kernel], Any]:
    return attrgetter(what) if isinstance(what, str) else what


def kernel_json(kernel: Kernel) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, how, what in KERNEL_SPEC:
        if isinstance(what, tuple):
            values = getattr(kernel, how)
            out[key] = {k: finite_or_none(values.get(k)) for k in what}
        else:
            out[key] = _value(how, _getter(what)(kernel))
    return out


_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _numbers(values: list[Any]) -> list[str]:
    """Numbers (None for missing) as `json.dumps` writes them; NaN and ±inf as null."""
    numbers = np.array(values, dtype="float64")  # None → NaN
    finite = np.isfinite(numbers)
    if not finite.any():
        return ["null"] * len(values)
    cells = numbers.astype(object)
    cells[~finite] = None
    return _encode(cells.tolist())[1:-1].split(", ")  # numbers and null never hold ", "


def _column(kind: str, values: list[Any]) -> list[str]:
    """The JSON text of every value of one column."""
    if not values:
        return []
    if kind == NUMBER:
        return _numbers(values)
    if kind == INT:
        return list(map(str, values))
    if kind == BOOL:
        return ["true" if v else "false" for v in values]
    if kind == TEXT:  # names repeat: encode each distinct one once
        texts = {v: "null" if v is None else encode_basestring(v) for v in set(values)}
        return list(map(texts.__getitem__, values))
    cache: dict[Any, str] = {}  # many launches share an enum value, a recipe or their notes
    out = []
    for value in values:
        key = value if kind != NUMBERS else tuple(value.items())
        key = key if isinstance(key, tuple | Enum) else repr(value)  # dicts and lists: by their text
        text = cache.get(key)
        if text is None:
            text = cache[key] = _encode(_value(kind, value))
        out.append(text)
    return out


CHUNK_KERNELS = 8192  # kernels whose cells are held at once: bounds the memory of a big document


def kernels_text(kernels: Sequence[Kernel]) -> str:
    """`[kernel_json(k) for k in kernels]` as compact JSON text, built column by column."""
    return "".join(_kernels_pieces(kernels))


def _kernels_pieces(kernels: Sequence[Kernel]) -> Iterator[str]:
    """The kernels' JSON array in pieces, one chunk of kernels at a time (joined once, by the caller)."""
    template: list[str] = []
    for key, _, what in KERNEL_SPEC:
        if isinstance(what, tuple):
            inner = ", ".join(f"{encode_basestring(k)}: %s" for k in what)
            template.append(f"{encode_basestring(key)}: {{{inner}}}")
        else:
            template.append(f"{encode_basestring(key)}: %s")
    row = "{" + ", ".join(template) + "}"
    yield "["
    for start in range(0, len(kernels), CHUNK_KERNELS):
        if start:
            yield ", "
        yield ", ".join(row % cells for cells in _cells(kernels[start : start + CHUNK_KERNELS]))
    yield "]"


def _cells(kernels: Sequence[Kernel]) -> zip[tuple[str, ...]]:
    """Per kernel, the JSON text of every leaf of the spec, in the template's order."""
    columns: list[list[str]] = []
    for _, how, what in KERNEL_SPEC:
        if isinstance(what, tuple):
            maps = list(map(attrgetter(how), kernels))
            columns += [_numbers(list(map(methodcaller("get", k), maps))) for k in what]
        else:
            columns.append(_column(how, list(map(_getter(what), kernels))))
    return zip(*columns, strict=True)


def _instructions(roof: InstructionRoofline | None) -> dict[str, Any] | None:
    if roof is None:
        return None
    return {
        "warp_inst": finite_or_none(roof.warp_inst),
        "warp_inst_per_s": finite_or_none(roof.warp_inst_per_s),
        "issue_peak_warp_inst_per_s": finite_or_none(roof.issue_peak_warp_inst_per_s),
        "issue_peak_source": roof.issue_peak_source,
        "intensity_warp_inst_per_transaction": {
            k: finite_or_none(v) for k, v in roof.intensity_warp_inst_per_transaction.items()
        },
        "transaction_peak_per_s": {k: finite_or_none(v) for k, v in roof.transaction_peak_per_s.items()},
        "transaction_bytes": {k: TRANSACTION_BYTES[k] for k in roof.intensity_warp_inst_per_transaction},
        "recipe": roof.recipe,
    }


def _tensor_paths(kernel: Kernel) -> dict[str, dict[str, Any]]:
    return {
        path: {"unit": t.unit, "count": finite_or_none(t.count), "peak_per_s": finite_or_none(t.peak_per_s)}
        for path, t in kernel.tensor_paths.items()
    }


def analysis_json(analysis: Analysis) -> dict[str, Any]:
    return _document(analysis, [kernel_json(k) for k in analysis.kernels])


def _document(analysis: Analysis, kernels: object) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "inputs": [
            {
                "path": i.path,
                "format": i.format,
                "ncu_version": i.ncu_version,
                "kernels": i.kernels,
                "averaged": list(i.averaged),
            }
            for i in analysis.inputs
        ],
        "devices": [device_json(d) for d in analysis.devices],
        "kernels": kernels,
        "total_duration_s": finite_or_none(analysis.total_duration_s),
        "collect_command": analysis.collect_hint,
        **groups_json(analysis),
        **analysis.extra,
    }


def analysis_header(analysis: Analysis) -> dict[str, Any]:
    """The document without its kernels: schema, inputs, devices and their roofs, totals."""
    document = _document(analysis, None)
    del document["kernels"]
    return document


def group_json(group: KernelGroup, index_of: Mapping[int, int]) -> dict[str, Any]:
    return {
        "name": group.name,
        "grid": group.key[1],
        "block": group.key[2],
        "device": group.device,
        "launches": group.count,
        "kernels": sorted(index_of[id(k)] for k in group.launches),
        "total_duration_s": finite_or_none(group.total_duration_s),
        "mean_duration_s": finite_or_none(group.mean_duration_s),
        "min_duration_s": finite_or_none(group.min_duration_s),
        "max_duration_s": finite_or_none(group.max_duration_s),
        "time_share": finite_or_none(group.time_share),
        "device_share": finite_or_none(group.device_share),
        "verdicts": list(group.verdicts),
        "headroom_s": finite_or_none(group.headroom_s),
        "headroom_complete": group.headroom_complete,
    }


def groups_json(analysis: Analysis) -> dict[str, Any]:
    """`groups` (launches of one kernel, launch shape and device; by total time), `fix_first`, and
    `nvtx_groups` (launches of one NVTX range and device; empty when no launch ran in one)."""
    index_of = {id(k): i for i, k in enumerate(analysis.kernels)}
    groups = ranked(group_kernels(analysis))
    position = {id(g): i for i, g in enumerate(groups)}
    totals = device_totals_s(analysis)
    first = []
    for device in analysis.devices:
        best = fix_first([g for g in groups if g.device == device.index], totals.get(device.index, 0.0))
        if best is not None:
            first.append(
                {
                    "device": device.index,
                    "group": position[id(best.group)],
                    "name": best.group.name,
                    "headroom_s": finite_or_none(best.saving_s),
                    "device_share": finite_or_none(best.share),
                }
            )
    by_nvtx = ranked(group_kernels(analysis, GroupBy.NVTX)) if any(k.nvtx for k in analysis.kernels) else []
    return {
        "groups": [group_json(g, index_of) for g in groups],
        "fix_first": first,
        "nvtx_groups": [group_json(g, index_of) for g in by_nvtx],
    }


PRETTY_MAX_KERNELS = 500  # larger analyses are written compact, their kernels column by column


def render_json(analysis: Analysis) -> str:
    if len(analysis.kernels) <= PRETTY_MAX_KERNELS:
        return json.dumps(analysis_json(analysis), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    kernels = object()  # stands for the kernels' text in the document
    pieces = ["{"]
    for i, (key, value) in enumerate(_document(analysis, kernels).items()):
        pieces.append(f"{', ' if i else ''}{_encode(key)}: ")
        if value is kernels:
            pieces += _kernels_pieces(analysis.kernels)
        else:
            pieces.append(_encode(value))
    pieces.append("}\n")
    return "".join(pieces)  # one copy of a document that may be hundreds of MB
