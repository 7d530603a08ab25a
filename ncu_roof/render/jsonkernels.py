"""The kernel objects of `--format json`, written by Polars from the launch columns.

Every key of a kernel object is one column of a Polars frame, one row per launch, built from the
analysis' arrays (`LaunchColumns`): numbers (NaN and ±inf written as null), mappings as structs, and
the records launches share (recipe, traffic, notes, tensor paths, instruction roofline) converted
once per distinct record and gathered by code. `DataFrame.write_ndjson` writes the frame.

A struct has the same keys in every row, where some JSON objects do not: a sparse map
(`cap_flop_per_s`, `pipe_pct`) leaves out the keys it has no number for, and records differ in
their keys (one recipe names more quantities than another). The launches are therefore split by
the shape of their objects (a frame per shape: usually one) and their lines put back in order.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ncu_roof.analysis.columns import LaunchColumns, columns_of, distinct_rows, factorized, identity_codes
from ncu_roof.analysis.groups import headroom_array
from ncu_roof.analysis.model import TRANSACTION_BYTES, finite_or_none
from ncu_roof.analysis.records import InstructionRoofline, Kernel, TensorPath
from ncu_roof.base.codes import object_array
from ncu_roof.base.vocabulary import PRECISIONS, SOL_KEYS, TIERS

Rows = np.ndarray | None  # the launches of one shape (None: all of them)


@dataclass(frozen=True)
class Part:
    """One key of the kernel objects: its values for some launches, and (for objects whose keys
    differ from launch to launch) each launch's shape of value."""

    build: Callable[[Rows], pl.Series]
    shapes: np.ndarray | None = None  # per launch, a code of its value's shape; None: one shape


def _numbers(values: np.ndarray) -> pl.Series:
    """Numbers (NaN for missing): Polars writes NaN and ±inf as null."""
    return pl.Series(np.asarray(values, dtype="float64"))


def _series(values: pl.Series) -> Part:
    return Part(lambda rows: values if rows is None else values.gather(rows))


def _struct(fields: Mapping[str, pl.Series], n: int) -> pl.Series:
    """n objects of these keys (with no keys: n `{}`)."""
    if not fields:
        return pl.Series([{}]).gather(np.zeros(n, dtype=np.int64))
    return pl.DataFrame([s.alias(k) for k, s in fields.items()]).to_struct()


def _objects(values: np.ndarray, convert: Callable[[Any], Any], keys: Callable[[Any], Hashable]) -> Part:
    """An object column, each distinct object (launches alike share one) converted to its JSON
    value once; `keys` tells the values whose JSON objects have other keys apart (a frame each: a
    struct's keys are fixed)."""
    items = values.tolist()
    first, codes = identity_codes(items)
    distinct = [items[j] for j in first.tolist()]
    made = [convert(v) for v in distinct]
    shape_codes, shapes = factorized(object_array([keys(v) for v in distinct]))

    def build(rows: Rows) -> pl.Series:
        used, local = np.unique(codes if rows is None else codes[rows], return_inverse=True)
        return _columnar([made[i] for i in used.tolist()]).gather(local.ravel())

    return Part(build, np.asarray(shape_codes)[codes] if len(shapes) > 1 else None)


def _columnar(values: list[Any]) -> pl.Series:
    """JSON values with the same keys as a Polars column, built key by key (not value by value)."""
    first = values[0]
    if isinstance(first, dict):
        return _struct({k: _columnar([v[k] for v in values]) for k in first}, len(values))
    if isinstance(first, list):  # the lists here are of texts: notes, the terms not collected
        return _text_lists(values)
    return pl.Series(values)


def _text_lists(lists: list[list[str]]) -> pl.Series:
    """Lists of texts as one Polars list column: the texts in one column, gathered per list (an
    empty list holds a null, dropped again). Polars' own conversion of many lists takes 4x as
    long, and pyarrow's is not loaded for a report (`ncu_report`)."""
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    texts = pl.Series([t for one in lists for t in one or (None,)], dtype=pl.String)
    frame = pl.DataFrame({"list": np.repeat(np.arange(len(lists)), np.maximum(lengths, 1)), "text": texts})
    return frame.group_by("list", maintain_order=True).agg(pl.col("text").drop_nulls()).get_column("text")


def _dense(columns: LaunchColumns, field: str, keys: Sequence[str]) -> Part:
    return _series(_struct({k: _numbers(columns.key(field, k)) for k in keys}, len(columns)))


def _sparse(columns: LaunchColumns, field: str) -> Part:
    """A mapping of numbers that has a key only where its number is not NaN."""
    maps = columns.maps[field]
    names = list(maps)
    if not names:
        return _series(_struct({}, len(columns)))
    present = np.column_stack([~np.isnan(a) for a in maps.values()])
    first, patterns = distinct_rows(list(present.T.astype("int64")))

    def build(rows: Rows) -> pl.Series:
        keys = [k for k, has in zip(names, present[0 if rows is None else rows[0]], strict=True) if has]
        values = {k: maps[k] if rows is None else maps[k][rows] for k in keys}
        return _struct({k: _numbers(v) for k, v in values.items()}, len(present if rows is None else rows))

    return Part(build, patterns if len(first) > 1 else None)


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


def _texts(columns: LaunchColumns, field: str) -> pl.Series:
    """A column of texts (None: null)."""
    return pl.Series(columns[field].tolist(), dtype=pl.String)


def _enums(columns: LaunchColumns, field: str) -> pl.Series:
    """A column of enums as their values (an enum's members are its only objects: told apart by
    identity, not by hashing each)."""
    items = columns[field].tolist()
    first, codes = identity_codes(items)
    return pl.Series([items[j].value for j in first.tolist()], dtype=pl.String).gather(codes)


def _sol_verdict(columns: LaunchColumns) -> Part:
    fields = {"bound": _enums(columns, "sol_bound"), "unit": _texts(columns, "sol_unit")}
    return _series(_struct(fields | {"small_grid": pl.Series(columns["small_grid"])}, len(columns)))


def _integer(field: str) -> Callable[[LaunchColumns], Part]:
    return lambda c: _series(pl.Series(c[field]))


def _number(field: str) -> Callable[[LaunchColumns], Part]:
    return lambda c: _series(_numbers(c[field]))


def _text(field: str) -> Callable[[LaunchColumns], Part]:
    return lambda c: _series(_texts(c, field))


def _enum(field: str) -> Callable[[LaunchColumns], Part]:
    return lambda c: _series(_enums(c, field))


def _map(field: str, keys: Sequence[str]) -> Callable[[LaunchColumns], Part]:
    return lambda c: _dense(c, field, keys)


def _record(
    field: str, convert: Callable[[Any], Any], keys: Callable[[Any], Hashable] = lambda v: ()
) -> Callable[[LaunchColumns], Part]:
    return lambda c: _objects(c[field], convert, keys)


def _instruction_keys(roof: InstructionRoofline | None) -> Hashable:
    if roof is None:
        return None
    return tuple(roof.intensity_warp_inst_per_transaction), tuple(roof.transaction_peak_per_s)


# The kernel object, key by key, in the order of the contract (docs/schemas/analysis.v1.schema.json)
KERNEL: tuple[tuple[str, Callable[[LaunchColumns], Part]], ...] = (
    ("id", _integer("id")),
    ("name", _text("name")),
    ("input", _integer("input")),
    ("run", _integer("run")),
    ("device", _integer("device")),
    ("grid", _text("grid")),
    ("block", _text("block")),
    ("nvtx", _text("nvtx")),
    ("duration_s", _number("duration_s")),
    ("time_share", _number("time_share")),
    ("flop", _map("flop", (*PRECISIONS, "total"))),
    ("bytes", _map("bytes", TIERS)),
    ("intensity_flop_per_byte", _map("intensity_flop_per_byte", TIERS)),
    ("achieved_flop_per_s", _number("achieved_flop_per_s")),
    ("achieved_byte_per_s", _map("achieved_byte_per_s", TIERS)),
    ("attainable_flop_per_s", _number("attainable_flop_per_s")),
    ("cap_flop_per_s", lambda c: _sparse(c, "cap_flop_per_s")),
    ("binding", _text("binding")),
    ("bound", _enum("bound")),
    ("compute_precision", _text("compute_precision")),
    ("pct_of_roof", _number("pct_of_roof")),
    ("above_roof", lambda c: _series(pl.Series(c["pct_of_roof"] > 100.0))),
    ("sol_pct", _map("sol_pct", SOL_KEYS)),
    ("pct_of_bandwidth", _map("pct_of_bandwidth", TIERS)),
    ("recipe", _record("recipe", dict, tuple)),
    (
        "traffic",
        _record(
            "traffic",
            lambda v: {tier: dict(entry) for tier, entry in v.items()},
            lambda v: tuple((tier, tuple(entry)) for tier, entry in v.items()),
        ),
    ),
    ("notes", _record("notes", list)),
    ("verdict_basis", _enum("verdict_basis")),
    ("sol_verdict", _sol_verdict),
    ("flop_total_is_lower_bound", _integer("flop_total_is_lower_bound")),
    ("not_collected", _record("not_collected", lambda v: {p: list(t) for p, t in v.items()}, tuple)),
    ("ops", _record("ops", lambda v: {k: finite_or_none(x) for k, x in v.items()}, tuple)),
    ("ops_total_is_lower_bound", _integer("ops_total_is_lower_bound")),
    ("tensor_paths", _record("tensor_paths", _tensor_paths, tuple)),
    ("pipe_pct", lambda c: _sparse(c, "pipe_pct")),
    ("compute_ceiling", _text("compute_ceiling")),
    ("compute_ceiling_pct", _number("compute_ceiling_pct")),
    ("instruction_roofline", _record("instructions", _instructions, _instruction_keys)),
    ("headroom_s", lambda c: _series(_numbers(headroom_array(c["duration_s"], c["pct_of_roof"])))),
    ("headroom_sol_s", _number("headroom_sol_s")),
    ("sol_busiest_unit", _text("sol_busiest_unit")),
)


def _lines(columns: LaunchColumns, chunk: int) -> Iterator[bytes]:
    """The kernels' JSON objects, one line each (JSON escapes a line break inside a string),
    `chunk` launches at a time, as UTF-8 (as Polars writes them: a file gets them as they are)."""
    if not len(columns):
        return
    parts = {key: make(columns) for key, make in KERNEL}
    varied = [p.shapes for p in parts.values() if p.shapes is not None]
    if not varied:
        frame = _frame(parts, None)
        for start in range(0, len(columns), chunk):
            frame.slice(start, chunk).write_ndjson(written := io.BytesIO())
            yield written.getvalue()
        return
    _, shape_of_row = distinct_rows(varied)  # a frame per shape, their lines put back in order
    order = np.argsort(shape_of_row, kind="stable")
    lines = pl.concat(
        [
            _frame(parts, order[start:stop]).select(pl.struct(pl.all()).struct.json_encode()).to_series()
            for start, stop in _runs(shape_of_row[order])
        ]
    ).gather(np.argsort(order))
    for start in range(0, len(columns), chunk):
        yield lines.slice(start, chunk).str.join("\n").item().encode() + b"\n"


def _runs(codes: np.ndarray) -> list[tuple[int, int]]:
    """The runs of equal codes in sorted codes, as (start, stop)."""
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    return list(zip(starts.tolist(), [*starts[1:].tolist(), len(codes)], strict=True))


def _frame(parts: Mapping[str, Part], rows: Rows) -> pl.DataFrame:
    return pl.DataFrame([p.build(rows).alias(key) for key, p in parts.items()])


def kernel_array(columns: LaunchColumns, chunk: int) -> Iterator[bytes]:
    """The kernels' JSON array in pieces of UTF-8 (`chunk` kernels each), compact: the lines
    `,`-separated."""
    yield b"["
    last = b""
    for lines in _lines(columns, chunk):
        if last:
            yield last.replace(b"\n", b",")  # (every line ends in a `\n`: a `,` before the next)
        last = lines
    yield last[:-1].replace(b"\n", b",")
    yield b"]"


def kernels_json(kernels: Sequence[Kernel]) -> list[dict[str, Any]]:
    """The kernel objects as Python values (what the JSON holds, parsed)."""
    columns = columns_of(kernels)
    out: list[dict[str, Any]] = json.loads(b"".join(kernel_array(columns, max(len(columns), 1))))
    return out
