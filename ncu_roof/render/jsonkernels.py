"""The kernel objects of `--format json`: the field spec, one kernel's dict (`kernel_json`), and
the text of many kernels at once, built from the launch columns (`kernels_text`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

import numpy as np

from ncu_roof.analysis.columns import LaunchColumns, coded, columns_of, shared_rows, shared_texts
from ncu_roof.analysis.groups import headroom_array, headroom_s
from ncu_roof.analysis.model import TRANSACTION_BYTES, finite_or_none
from ncu_roof.analysis.records import InstructionRoofline, Kernel, TensorPath
from ncu_roof.base.vocabulary import PRECISIONS, SOL_KEYS, TIERS
from ncu_roof.render.jsoncells import (
    by_pattern,
    encode,
    fill,
    flag_texts,
    float_texts,
    fold_constants,
    joined_rows,
    numbers_text,
    object_template,
    per_distinct,
    sparse_texts,
)

# The kernel object of the JSON, field by field: (key, kind of value, `Kernel` field), or with a
# function that turns the field's value into its JSON value, or (key, kind, a function of a
# `Kernel`, the same of the launch columns) for what several fields make. The same spec gives one
# kernel's dict (`kernel_json`) and, from the analysis' columns, the text of every kernel at once
# (`kernels_text`): that is what makes 100,000 launches cheap to write. An OBJECT is any
# JSON-ready value (dict, list, None; numbers already finite or None).
NUMBER, INT, TEXT, BOOL, ENUM, NUMBERS, OBJECT = "number", "int", "text", "bool", "enum", "numbers", "object"
DENSE = "dense"  # a mapping of numbers with fixed keys (given in the spec)
Convert = Callable[[Any], Any]


@dataclass(frozen=True)
class Field:
    key: str
    kind: str
    field: str  # the `Kernel` field (and launch column) it is read from
    convert: Convert | None = None  # OBJECT: the field's value → its JSON value
    keys: tuple[str, ...] = ()  # DENSE: the mapping's keys


@dataclass(frozen=True)
class Derived:
    key: str
    kind: str
    of_kernel: Callable[[Kernel], Any]
    of_columns: Callable[[LaunchColumns], list[str]]  # the JSON text of every launch


def _tensor_paths(paths: Mapping[str, TensorPath]) -> dict[str, dict[str, Any]]:
    return {
        path: {"unit": t.unit, "count": finite_or_none(t.count), "peak_per_s": finite_or_none(t.peak_per_s)}
        for path, t in paths.items()
    }


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


def _sol_verdict_cells(columns: LaunchColumns) -> list[str]:
    n = len(columns)
    parts = {c: columns[c] for c in ("sol_bound", "sol_unit", "small_grid")}
    texts = shared_rows(  # each distinct (bound, unit, small grid) encoded once
        [coded(parts, c, n) for c in parts],
        n,
        lambda p: encode({"bound": p[0].value, "unit": p[1], "small_grid": bool(p[2])}),
    )
    out: list[str] = texts.tolist()
    return out


KERNEL_SPEC: tuple[Field | Derived, ...] = (
    Field("id", INT, "id"),
    Field("name", TEXT, "name"),
    Field("input", INT, "input"),
    Field("run", INT, "run"),
    Field("device", INT, "device"),
    Field("grid", TEXT, "grid"),
    Field("block", TEXT, "block"),
    Field("nvtx", TEXT, "nvtx"),
    Field("duration_s", NUMBER, "duration_s"),
    Field("time_share", NUMBER, "time_share"),
    Field("flop", DENSE, "flop", keys=(*PRECISIONS, "total")),
    Field("bytes", DENSE, "bytes", keys=TIERS),
    Field("intensity_flop_per_byte", DENSE, "intensity_flop_per_byte", keys=TIERS),
    Field("achieved_flop_per_s", NUMBER, "achieved_flop_per_s"),
    Field("achieved_byte_per_s", DENSE, "achieved_byte_per_s", keys=TIERS),
    Field("attainable_flop_per_s", NUMBER, "attainable_flop_per_s"),
    Field("cap_flop_per_s", NUMBERS, "cap_flop_per_s"),
    Field("binding", TEXT, "binding"),
    Field("bound", ENUM, "bound"),
    Field("compute_precision", TEXT, "compute_precision"),
    Field("pct_of_roof", NUMBER, "pct_of_roof"),
    Derived(
        "above_roof",
        BOOL,
        lambda k: k.above_roof,
        lambda c: flag_texts((c["pct_of_roof"] > 100.0).tolist()),
    ),
    Field("sol_pct", DENSE, "sol_pct", keys=SOL_KEYS),
    Field("pct_of_bandwidth", DENSE, "pct_of_bandwidth", keys=TIERS),
    Field("recipe", OBJECT, "recipe", dict),
    Field("traffic", OBJECT, "traffic", lambda v: {tier: dict(entry) for tier, entry in v.items()}),
    Field("notes", OBJECT, "notes", list),
    Field("verdict_basis", ENUM, "verdict_basis"),
    Derived(
        "sol_verdict",
        OBJECT,
        lambda k: {"bound": k.sol_bound.value, "unit": k.sol_unit, "small_grid": k.small_grid},
        _sol_verdict_cells,
    ),
    Field("flop_total_is_lower_bound", BOOL, "flop_total_is_lower_bound"),
    Field("not_collected", OBJECT, "not_collected", lambda v: {p: list(t) for p, t in v.items()}),
    Field("ops", OBJECT, "ops", lambda v: {k: finite_or_none(x) for k, x in v.items()}),
    Field("ops_total_is_lower_bound", BOOL, "ops_total_is_lower_bound"),
    Derived("tensor_paths", OBJECT, lambda k: _tensor_paths(k.tensor_paths), lambda c: _tensor_path_cells(c)),
    Field("pipe_pct", NUMBERS, "pipe_pct"),
    Field("compute_ceiling", TEXT, "compute_ceiling"),
    Field("compute_ceiling_pct", NUMBER, "compute_ceiling_pct"),
    Derived(
        "instruction_roofline",
        OBJECT,
        lambda k: _instructions(k.instructions),
        lambda c: _instruction_cells(c),
    ),
    Derived(
        "headroom_s",
        NUMBER,
        headroom_s,
        lambda c: numbers_text(headroom_array(c["duration_s"], c["pct_of_roof"])),
    ),
    Field("headroom_sol_s", NUMBER, "headroom_sol_s"),
    Field("sol_busiest_unit", TEXT, "sol_busiest_unit"),
)


def _value(spec: Field, value: Any) -> Any:
    """One `Kernel` value as the JSON holds it: non-finite numbers as null, enums by value."""
    if spec.kind == NUMBER:
        return finite_or_none(value)
    if spec.kind == ENUM:
        return value.value
    if spec.kind == DENSE:
        return {k: finite_or_none(value.get(k)) for k in spec.keys}
    if spec.kind == NUMBERS:
        return {k: finite_or_none(v) for k, v in value.items()}
    if spec.kind == OBJECT and spec.convert is not None:
        return spec.convert(value)
    return value


def kernel_json(kernel: Kernel) -> dict[str, Any]:
    """One kernel's object, from the `Kernel` (what `kernels_text` writes for many at once)."""
    return {
        spec.key: spec.of_kernel(kernel)
        if isinstance(spec, Derived)
        else _value(spec, getattr(kernel, spec.field))
        for spec in KERNEL_SPEC
    }


def _tensor_path_cells(columns: LaunchColumns) -> list[str]:
    return per_distinct(columns["tensor_paths"].tolist(), _tensor_path_texts)


def _tensor_path_texts(records: list[Mapping[str, TensorPath]]) -> list[str]:
    """`tensor_paths` of these launches: one template per set of paths, numbers filled column-wise."""
    out = [""] * len(records)
    for paths, rows in by_pattern(records, tuple).items():
        assert isinstance(paths, tuple)
        first = records[rows[0]]
        inner = {
            p: {"unit": encode_basestring(first[p].unit), "count": "%s", "peak_per_s": "%s"} for p in paths
        }
        template = object_template({p: object_template(fields) for p, fields in inner.items()})
        cells: list[list[str]] = []
        for p in paths:
            paths_of_rows = [records[j][p] for j in rows]
            cells += [
                float_texts([t.count for t in paths_of_rows]),
                float_texts([t.peak_per_s for t in paths_of_rows]),
            ]
        fill(out, rows, template, cells)
    return out


def _instruction_shape(r: InstructionRoofline | None) -> Hashable:
    return (
        None if r is None else (tuple(r.intensity_warp_inst_per_transaction), tuple(r.transaction_peak_per_s))
    )


def _instruction_cells(columns: LaunchColumns) -> list[str]:
    return per_distinct(columns["instructions"].tolist(), _instruction_texts)


def _instruction_texts(records: list[InstructionRoofline | None]) -> list[str]:
    """`instruction_roofline` of these launches: one template per set of tiers, filled column-wise."""
    out = ["null"] * len(records)
    for shape, rows in by_pattern(records, _instruction_shape).items():
        if shape is None:
            continue
        assert isinstance(shape, tuple)
        tiers, peak_tiers = shape
        rs = [r for j in rows if (r := records[j]) is not None]
        template = object_template(
            {
                "warp_inst": "%s",
                "warp_inst_per_s": "%s",
                "issue_peak_warp_inst_per_s": "%s",
                "issue_peak_source": "%s",
                "intensity_warp_inst_per_transaction": object_template(dict.fromkeys(tiers, "%s")),
                "transaction_peak_per_s": object_template(dict.fromkeys(peak_tiers, "%s")),
                "transaction_bytes": encode({k: TRANSACTION_BYTES[k] for k in tiers}),
                "recipe": "%s",
            }
        )
        cells = [
            float_texts([r.warp_inst for r in rs]),
            float_texts([r.warp_inst_per_s for r in rs]),
            float_texts([r.issue_peak_warp_inst_per_s for r in rs]),
            shared_texts([r.issue_peak_source for r in rs], encode),
            *(float_texts([r.intensity_warp_inst_per_transaction[k] for r in rs]) for k in tiers),
            *(float_texts([r.transaction_peak_per_s[k] for r in rs]) for k in peak_tiers),
            shared_texts([r.recipe for r in rs], encode),
        ]
        fill(out, rows, template, cells)
    return out


def _cells_of(spec: Field | Derived, columns: LaunchColumns) -> list[str]:
    """The JSON text of one spec entry for every launch."""
    if isinstance(spec, Derived):
        return spec.of_columns(columns)
    kind, n = spec.kind, len(columns)
    if kind == NUMBERS:
        return sparse_texts(columns.maps[spec.field], n)
    values = columns[spec.field]
    if kind == NUMBER:
        return numbers_text(values)
    if kind == INT:  # an input, run or device index is mostly one number for a whole chunk
        one = len(values) > 0 and values[0] == values[-1] and bool((values == values[0]).all())
        return [str(values[0])] * n if one else list(map(str, values.tolist()))
    if kind == BOOL:
        return flag_texts(values.tolist())
    if kind == TEXT:  # names repeat: encode each distinct one once
        items = values.tolist()
        texts = {v: "null" if v is None else encode_basestring(v) for v in set(items)}
        return list(map(texts.__getitem__, items))
    return shared_texts(values.tolist(), lambda v: encode(_value(spec, v)))


CHUNK_KERNELS = 4096  # kernels whose cells are held at once: bounds the memory of a big document


def kernels_text(kernels: Sequence[Kernel]) -> str:
    """`[kernel_json(k) for k in kernels]` as compact JSON text, built from the launch columns."""
    return "".join(kernel_array(columns_of(kernels)))


def _dense_keys(spec: Field | Derived, columns: LaunchColumns) -> tuple[str, ...] | None:
    """The keys of a mapping whose every launch has the same keys (a dense mapping's, or a sparse
    one's where no launch lacks a key another has), else None."""
    if not isinstance(spec, Field):
        return None
    if spec.kind == DENSE:
        return spec.keys
    if spec.kind != NUMBERS:
        return None
    present = {k: ~np.isnan(a) for k, a in columns.maps[spec.field].items()}
    if any(p.any() and not p.all() for p in present.values()):
        return None
    return tuple(k for k, p in present.items() if p.all())


def _slots(keys: tuple[str, ...] | None) -> str:
    """Where a spec's values go in a kernel's template: one `%s`, or a mapping with the same keys
    in every launch as an object with a `%s` per key (filled in the same pass as the kernel)."""
    return "%s" if keys is None else object_template({k: "%s" for k in keys})


def _columns_of(
    spec: Field | Derived, keys: tuple[str, ...] | None, columns: LaunchColumns
) -> list[list[str]]:
    """The JSON texts of a spec's slots, a list per slot."""
    if keys is None:
        return [_cells_of(spec, columns)]
    assert isinstance(spec, Field)
    values, n = columns.maps[spec.field], len(columns)
    return [numbers_text(values.get(k, np.full(n, np.nan))) for k in keys]


def kernel_array(columns: LaunchColumns) -> Iterator[str]:
    """The kernels' JSON array in pieces, one chunk of kernels at a time (a big document is never
    held whole)."""
    yield "["
    for i, start in enumerate(range(0, len(columns), CHUNK_KERNELS)):
        if i:
            yield ", "
        yield _chunk_text(columns, start)
    yield "]"


def _chunk_text(columns: LaunchColumns, start: int) -> str:
    """The kernel objects of one chunk (from `start`), `, `-separated."""
    chunk = columns.window(start, start + CHUNK_KERNELS)
    keys = [_dense_keys(spec, chunk) for spec in KERNEL_SPEC]
    row = object_template({spec.key: _slots(k) for spec, k in zip(KERNEL_SPEC, keys, strict=True)})
    cells = [
        texts for spec, k in zip(KERNEL_SPEC, keys, strict=True) for texts in _columns_of(spec, k, chunk)
    ]
    literals, varying = fold_constants(row, cells)
    return joined_rows(literals, varying, len(chunk))
