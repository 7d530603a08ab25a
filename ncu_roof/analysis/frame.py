"""An analysis' launches as one Polars DataFrame: one row per launch, one column per `Kernel` field.

Numbers are Float64 (null: not known), integers Int64, flags Boolean, texts String, enums their
value, `notes` and `missing` lists of text, mappings structs. In a *sparse* struct (`SPARSE`) a
null field is a key the launch does not have: a pipe without a figure, a tier without traffic, a
quantity without a formula, a tensor path of another device. In a dense one (`flop`, `bytes`,
`sol_pct`, …) every key is there and null is a number not known.

`Kernel.instructions` is the column `instruction_roofline`, as the JSON names it. Two `Kernel`
fields are not stored, as they follow from others: `ops` (the integer tensor paths' counts and
`ops_total`) and `roofline_binding` (it is `binding`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from enum import Enum
from typing import Any, TypeVar, overload

import numpy as np
import polars as pl

from ncu_roof.analysis.records import InstructionRoofline, Kernel, TensorPath
from ncu_roof.analysis.sol import headroom_array
from ncu_roof.base.arrays import equals, object_array
from ncu_roof.base.vocabulary import PRECISIONS, SOL_KEYS, TIERS, Bound, VerdictBasis
from ncu_roof.recipe import is_integer_path

T = TypeVar("T")

# struct fields whose null fields are keys a launch does not have ("*": every field of the struct)
SPARSE: frozenset[tuple[str, ...]] = frozenset(
    {
        ("cap_flop_per_s",),
        ("pipe_pct",),
        ("recipe",),
        ("traffic",),
        ("traffic", "*"),
        ("not_collected",),
        ("tensor_paths",),
        ("instruction_roofline", "intensity_warp_inst_per_transaction"),
        ("instruction_roofline", "transaction_peak_per_s"),
        ("instruction_roofline", "transaction_bytes"),  # the JSON's: one per intensity
        ("ops",),  # the JSON's: its keys are the launch's integer tensor paths (`integer_ops`)
    }
)
ENUMS = {"bound": Bound, "verdict_basis": VerdictBasis, "sol_bound": Bound}
DENSE_MAPS = {  # a dense map's keys
    "flop": (*PRECISIONS, "total"),
    "bytes": TIERS,
    "intensity_flop_per_byte": TIERS,
    "achieved_byte_per_s": TIERS,
    "sol_pct": SOL_KEYS,
    "pct_of_bandwidth": TIERS,
}


def numbers(values: np.ndarray | Sequence[float | None]) -> pl.Series:
    return pl.Series(np.asarray(values, dtype="float64"), nan_to_null=True)


def texts(values: Iterable[Any]) -> pl.Series:
    """Texts (None: null; a column cast to String); one text that every row has (a formula, a
    traffic definition: launches of one export share them) converted once."""
    if isinstance(values, pl.Series):
        return values.cast(pl.String)
    array = values if isinstance(values, np.ndarray) else object_array(values)
    if len(array) > 1 and equals(array, array[0]).all():
        return pl.Series([array[0]], dtype=pl.String).new_from_index(0, len(array))
    return pl.Series(array.tolist(), dtype=pl.String)


def sentences(template: str, *texts: np.ndarray | pl.Series) -> pl.Series:
    """`template` per row, its `{}` filled in order by texts (object arrays, or Series; any other
    brace is text), in one Polars `concat_str` (numpy's `+` of object arrays: a text per part, 3x the
    cost). A missing part is refused: a null sentence would be a note dropped without a word."""
    first, *rest = template.split("{}")
    parts = (t if isinstance(t, pl.Series) else pl.Series(t.tolist(), dtype=pl.String) for t in texts)
    pieces = [pl.lit(first), *(e for p, r in zip(parts, rest, strict=True) for e in (pl.lit(p), pl.lit(r)))]
    out = pl.select(pl.concat_str(pieces)).to_series()
    if out.null_count():
        raise ValueError(f"a part of {template!r} is missing")
    return out


def each_distinct(
    column: pl.Series, make: Callable[[Any], Any], dtype: pl.DataType = pl.String()
) -> pl.Series:
    """`make` of each distinct value of the column, spread back to every row; null stays null (a
    long column holds few: a device's roofs, repeated launches, runs)."""
    distinct = column.unique().drop_nulls()
    return column.replace_strict(distinct, [make(t) for t in distinct.to_list()], return_dtype=dtype)


def enum_texts(values: np.ndarray, enum: type[Enum]) -> pl.Series:
    """An object array of one enum's members (or their values) as their values (None: null), a
    lookup per row; anything else is refused, never made null."""
    members = list(enum)
    code = {None: len(members)} | {k: i for i, m in enumerate(members) for k in (m, m.value)}
    try:
        codes = np.fromiter(map(code.__getitem__, values.tolist()), dtype=np.int64, count=len(values))
    except KeyError as stray:
        raise ValueError(f"{stray.args[0]!r} is no {enum.__name__}") from None
    return pl.Series([*(m.value for m in members), None], dtype=pl.String).gather(codes)


def text_lists(rows: Iterable[Sequence[str]]) -> pl.Series:
    """Tuples of texts as a list column, each distinct tuple converted once (launches share their
    notes: Polars converts 100,000 lists in ~0.4 s)."""
    code: dict[tuple[str, ...], int] = {}
    codes = [code.setdefault(tuple(r), len(code)) for r in rows]
    return pl.Series([list(r) for r in code], dtype=pl.List(pl.String)).gather(codes)


def struct(fields: Mapping[str, pl.Series], n: int) -> pl.Series:
    if not fields:
        return pl.Series([{}]).new_from_index(0, n)
    return pl.DataFrame([s.alias(k) for k, s in fields.items()]).to_struct()


def where(mask: np.ndarray, values: pl.Series) -> pl.Series:
    """`values` where `mask`, else null."""
    if mask.all():
        return values
    return pl.select(pl.when(pl.lit(pl.Series(mask, dtype=pl.Boolean))).then(pl.lit(values))).to_series()


def is_sparse(path: tuple[str, ...]) -> bool:
    return path in SPARSE or (len(path) > 1 and (*path[:-1], "*") in SPARSE)


def holds_sparse(path: tuple[str, ...]) -> bool:
    """Whether the struct at `path`, or one inside it, is sparse (a dense one is kept as it is)."""
    n = len(path)
    return any(len(q) >= n and all(a in (b, "*") for a, b in zip(q[:n], path, strict=True)) for q in SPARSE)


def without_absent(value: Any, path: tuple[str, ...]) -> Any:
    """A row's value (`DataFrame.row(named=True)`) with the keys of sparse structs it lacks left out."""
    if not isinstance(value, dict):
        return value
    sparse = is_sparse(path)
    return {k: without_absent(v, (*path, k)) for k, v in value.items() if v is not None or not sparse}


def integer_paths(launches: pl.DataFrame) -> list[str]:
    fields = launches.get_column("tensor_paths").dtype.fields  # type: ignore[attr-defined]
    return [f.name for f in fields if is_integer_path(f.name)]


def integer_ops(launches: pl.DataFrame) -> dict[str, pl.Series]:
    """`Kernel.ops` as columns: each integer tensor path's operations (where a launch has the
    path), and `total` (`ops_total` where a launch has an integer path); none without one."""
    paths = {p: launches.get_column("tensor_paths").struct.field(p) for p in integer_paths(launches)}
    has = {p: path.is_not_null().to_numpy() for p, path in paths.items() if path.null_count() < len(path)}
    if not has:
        return {}
    total = where(np.logical_or.reduce(list(has.values())), launches.get_column("ops_total"))
    return {**{p: paths[p].struct.field("count") for p in has}, "total": total}


def roof_columns(launches: pl.DataFrame) -> tuple[pl.Series, pl.Series]:
    """What the JSON and CSV say of each launch's % of roof: whether it was measured above its roof
    (`above_roof`), and the seconds it would save at it (`headroom_s`, `sol.headroom_array`)."""
    pct = launches.get_column("pct_of_roof")
    headroom = headroom_array(launches.get_column("duration_s").to_numpy(), pct.to_numpy())
    return (pct > 100.0).fill_null(False).alias("above_roof"), numbers(headroom).alias("headroom_s")


TEXTS = (
    *("name", "grid", "block", "nvtx", "binding", "compute_precision", "sol_unit"),
    *("compute_ceiling", "sol_busiest_unit"),
)
FLOATS = (
    *("duration_s", "time_share", "achieved_flop_per_s", "attainable_flop_per_s", "pct_of_roof"),
    *("compute_ceiling_pct", "headroom_sol_s"),
)
INTS = ("id", "input", "device", "run")
BOOLS = ("small_grid", "flop_total_is_lower_bound", "ops_total_is_lower_bound")


def launch_frame(values: Mapping[str, Any]) -> pl.DataFrame:
    """Launches as the launch frame, by `Kernel` field: the fields above as arrays or lists (an
    enum's an object array), the others (mappings, records) already as columns."""
    typed = {
        **{f: pl.Series(values[f], dtype=pl.Int64) for f in INTS},
        **{f: texts(values[f]) for f in TEXTS},
        **{f: numbers(values[f]) for f in FLOATS},
        **{f: pl.Series(values[f], dtype=pl.Boolean) for f in BOOLS},
        **{f: enum_texts(values[f], enum) for f, enum in ENUMS.items()},
    }
    columns = {**typed, **{k: v for k, v in values.items() if k not in typed}}
    return pl.DataFrame([s.alias(k) for k, s in columns.items()])


def kernel_of(named: Mapping[str, Any]) -> Kernel:
    row: dict[str, Any] = {k: without_absent(v, (k,)) for k, v in named.items()}
    row.update({key: enum(row[key]) for key, enum in ENUMS.items()})
    total = row.pop("ops_total")  # as `integer_ops`: where the launch has an integer tensor path
    ops = {p: t["count"] for p, t in row["tensor_paths"].items() if is_integer_path(p)}
    row["ops"] = {**ops, "total": total} if ops else {}
    row["tensor_paths"] = {p: TensorPath(**t) for p, t in row["tensor_paths"].items()}
    row["notes"], row["missing"] = tuple(row["notes"]), tuple(row["missing"])
    row["not_collected"] = {p: tuple(t) for p, t in row["not_collected"].items()}
    row["roofline_binding"] = row["binding"]
    roof = row.pop("instruction_roofline")
    row["instructions"] = None if roof is None else InstructionRoofline(**roof)
    return Kernel(**row)


def shapes(frame: pl.DataFrame) -> list[tuple[dict[str, bool], np.ndarray]]:
    """The launches by the keys their sparse structs have (a struct's fields are fixed, the keys of
    some JSON objects are not): per shape, which fields it has, and its rows, in first-launch order."""
    flags: dict[str, pl.Series] = {}
    for column in frame.columns:
        _flags(frame.get_column(column), (column,), flags)
    if not flags:
        return [({}, np.arange(len(frame), dtype=np.int64))]
    table = pl.DataFrame(flags).with_row_index("row").group_by(list(flags), maintain_order=True).agg("row")
    return [
        (dict(zip(flags, r[:-1], strict=True)), np.asarray(r[-1], dtype=np.int64)) for r in table.iter_rows()
    ]


def _flags(series: pl.Series, path: tuple[str, ...], out: dict[str, pl.Series]) -> None:
    """Whether each launch has each field of the sparse structs in `series`, by dotted path."""
    if not isinstance(series.dtype, pl.Struct) or not holds_sparse(path):
        return
    fields = series.struct.unnest()
    if is_sparse(path):
        out.update(
            (".".join((*path, f.name)), f) for f in fields.select(pl.all().is_not_null()).iter_columns()
        )
    for inner in fields.iter_columns():
        _flags(inner, (*path, inner.name), out)


def kept(series: pl.Series, path: tuple[str, ...], has: Mapping[str, bool]) -> pl.Series:
    """A column of launches of one shape (`has`: the fields they have) less the sparse fields they lack."""
    if not isinstance(series.dtype, pl.Struct) or not holds_sparse(path):
        return series
    fields = {
        f.name: kept(f, (*path, f.name), has)
        for f in series.struct.unnest().iter_columns()
        if not is_sparse(path) or has[".".join((*path, f.name))]
    }
    made = struct(fields, len(series))
    return made if not series.null_count() else where(series.is_not_null().to_numpy(), made)


def plain_column(values: Sequence[Any], keys: Sequence[str] | None = None) -> pl.Series:
    """Python values (numbers as Float64; None: null) as a column; mappings (all of them, even of
    no rows, where `keys` is given) as structs, their keys `keys`, then any other first-seen."""
    if keys is None and not any(isinstance(v, Mapping) for v in values):
        if all(v is None or (isinstance(v, float | int) and not isinstance(v, bool)) for v in values):
            return numbers(values)
        return pl.Series(values, strict=False)
    present = dict.fromkeys([*(keys or ()), *(k for v in values if v is not None for k in v)])
    fields = {k: plain_column([None if v is None else v.get(k) for v in values]) for k in present}
    return where(np.array([v is not None for v in values], dtype=bool), struct(fields, len(values)))


def frame_of(kernels: Sequence[Kernel]) -> pl.DataFrame:
    """`Kernel` objects (made by hand, or a few picked out) as the launch frame; `kernel_of` gives
    each back but for the fields not stored (above) and a dense map's keys (all, null if absent)."""

    def field(name: str) -> list[Any]:
        return [getattr(k, name) for k in kernels]

    roofs = [None if k.instructions is None else vars(k.instructions) for k in kernels]
    records = {
        **{f: field(f) for f in (*INTS, *BOOLS, *FLOATS, *TEXTS)},
        **{f: object_array(field(f)) for f in ENUMS},
        **{f: plain_column(field(f), keys) for f, keys in DENSE_MAPS.items()},
        **{f: plain_column(field(f), ()) for f in ("cap_flop_per_s", "pipe_pct")},  # sparse maps
        **{f: text_lists(field(f)) for f in ("notes", "missing")},
        **{f: plain_column(field(f), ()) for f in ("recipe", "traffic")},  # sparse, as `device_frame` orders
        "not_collected": plain_column([{p: list(m[p]) for p in m} for m in field("not_collected")], ()),
        "tensor_paths": plain_column([{p: vars(m[p]) for p in m} for m in field("tensor_paths")], ()),
        "ops_total": numbers([k.ops.get("total") for k in kernels]),
        "instruction_roofline": where(
            np.array([r is not None for r in roofs], dtype=bool),
            plain_column([r or _NO_ROOF for r in roofs], [f.name for f in fields(InstructionRoofline)]),
        ),
    }
    return launch_frame(records)


# an instruction roofline's maps, for their type
_NO_ROOF: dict[str, Any] = {"intensity_warp_inst_per_transaction": {}, "transaction_peak_per_s": {}}


class FrameRows(Sequence[T]):
    """A frame's rows as a sequence of records, each row `make(DataFrame.row(named=True))`
    (`kernel_of`: the launch frame's `Kernel`s), each made once, when first asked for."""

    def __init__(self, frame: pl.DataFrame, make: Callable[[Mapping[str, Any]], T]) -> None:
        self.frame = frame
        self.make = make
        self._made: dict[int, T] = {}

    def __len__(self) -> int:
        return len(self.frame)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return [self[j] for j in range(*index.indices(len(self)))]
        j = range(len(self))[index]  # an IndexError past either end
        if j not in self._made:
            self._made[j] = self.make(self.frame.row(j, named=True))
        return self._made[j]

    def __iter__(self) -> Iterator[T]:  # the rows read in batches, not one `row` call each
        for j, row in enumerate(self.frame.iter_rows(named=True)):
            if j not in self._made:
                self._made[j] = self.make(row)
            yield self._made[j]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrameRows({len(self)} rows)"
