"""An analysis' launches as columns: one array per `Kernel` field, one row per launch.

This is how an `Analysis` holds its launches. Whatever reads many launches at once (the JSON, the
launch table and Parquet, groups, diff, the plot) reads these arrays; a `Kernel` is made only for
a row someone asks for (`KernelRows[j]`), so 100,000 launches cost columns, not objects.

Each field is kept by its kind:

* numbers (`duration_s`, `pct_of_roof`, …): float64, NaN for None;
* integers and flags: int64 and bool;
* text, enums and nested records (`name`, `bound`, `recipe`, `notes`, `instructions`, …): object
  arrays holding the `Kernel`'s own values (launches that share a recipe share one object);
* mappings of numbers: one float64 array per key. Dense maps (`flop`, `bytes`, …) have every key
  in every row (NaN for None); in sparse maps (`cap_flop_per_s`, `pipe_pct`) NaN means the row has
  no such key.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numpy as np

if TYPE_CHECKING:
    import polars as pl

from ncu_roof.analysis.records import Kernel
from ncu_roof.base.codes import factorize, object_array

FLOATS = (
    "duration_s",
    "time_share",
    "achieved_flop_per_s",
    "attainable_flop_per_s",
    "pct_of_roof",
    "compute_ceiling_pct",
    "headroom_sol_s",
)
INTS = ("id", "input", "device", "run")
BOOLS = ("small_grid", "flop_total_is_lower_bound", "ops_total_is_lower_bound")
OBJECTS = (
    "name",
    "grid",
    "block",
    "nvtx",
    "binding",
    "roofline_binding",
    "compute_precision",
    "bound",
    "verdict_basis",
    "sol_bound",
    "sol_unit",
    "compute_ceiling",
    "recipe",
    "notes",
    "missing",
    "traffic",
    "ops",
    "tensor_paths",
    "not_collected",
    "instructions",
    "sol_busiest_unit",
)
DENSE_MAPS = (
    "flop",
    "bytes",
    "intensity_flop_per_byte",
    "achieved_byte_per_s",
    "sol_pct",
    "pct_of_bandwidth",
)
SPARSE_MAPS = ("cap_flop_per_s", "pipe_pct")
T = TypeVar("T")
SCALARS = (*FLOATS, *INTS, *BOOLS, *OBJECTS)
MAPS = (*DENSE_MAPS, *SPARSE_MAPS)


@dataclass(frozen=True)
class LaunchColumns:
    """Every launch's `Kernel` fields as arrays of one length (row j = launch j)."""

    length: int
    values: Mapping[str, np.ndarray]  # field of SCALARS → its array
    maps: Mapping[str, Mapping[str, np.ndarray]]  # field of MAPS → key → float64

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, field: str) -> np.ndarray:
        return self.values[field]

    def key(self, field: str, key: str) -> np.ndarray:
        """One key of a mapping field for every launch (all NaN when no launch has it)."""
        values = self.maps[field].get(key)
        return np.full(self.length, np.nan) if values is None else values

    def window(self, start: int, stop: int) -> LaunchColumns:
        """The launches from `start` up to `stop`, as read-only views (nothing copied)."""
        stop = min(stop, self.length)
        return LaunchColumns(
            max(stop - start, 0),
            {f: _view(a, start, stop) for f, a in self.values.items()},
            {f: {k: _view(a, start, stop) for k, a in m.items()} for f, m in self.maps.items()},
        )

    def take(self, rows: np.ndarray) -> LaunchColumns:
        """The launches at `rows` (indices), in that order."""
        return LaunchColumns(
            len(rows),
            {f: a[rows] for f, a in self.values.items()},
            {f: {k: a[rows] for k, a in m.items()} for f, m in self.maps.items()},
        )

    @staticmethod
    def concat(parts: Sequence[LaunchColumns]) -> LaunchColumns:
        """Parts one after another; a map key that a part lacks is NaN there (one part: itself,
        not a copy of its hundred-odd arrays)."""
        if not parts:
            return empty_columns()
        if len(parts) == 1:
            return parts[0]
        values = {f: np.concatenate([p.values[f] for p in parts]) for f in SCALARS}
        maps: dict[str, dict[str, np.ndarray]] = {}
        for f in MAPS:
            keys = list(dict.fromkeys(k for p in parts for k in p.maps[f]))
            maps[f] = {
                k: np.concatenate([p.maps[f].get(k, np.full(p.length, np.nan)) for p in parts]) for k in keys
            }
        return LaunchColumns(sum(p.length for p in parts), values, maps)


def _view(values: np.ndarray, start: int, stop: int) -> np.ndarray:
    view = values[start:stop]
    view.flags.writeable = False
    return view


def empty_columns() -> LaunchColumns:
    return from_kernels(())


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def kernel_at(columns: LaunchColumns, j: int) -> Kernel:
    """Row j as a `Kernel`."""
    v = columns.values
    fields: dict[str, Any] = {f: _number(float(v[f][j])) for f in FLOATS}
    fields |= {f: int(v[f][j]) for f in INTS}
    fields |= {f: bool(v[f][j]) for f in BOOLS}
    fields |= {f: v[f][j] for f in OBJECTS}
    for f in DENSE_MAPS:
        fields[f] = {k: _number(float(a[j])) for k, a in columns.maps[f].items()}
    for f in SPARSE_MAPS:
        fields[f] = {k: float(a[j]) for k, a in columns.maps[f].items() if not math.isnan(a[j])}
    return Kernel(**fields)


def _floats(values: Sequence[float | None]) -> np.ndarray:
    return np.array([np.nan if x is None else x for x in values], dtype="float64")


def from_kernels(kernels: Sequence[Kernel]) -> LaunchColumns:
    """`Kernel` objects (made by hand, or a few picked out) as columns: `kernel_at`'s inverse."""
    values: dict[str, np.ndarray] = {}
    for f in FLOATS:
        values[f] = _floats([getattr(k, f) for k in kernels])
    for f in INTS:
        values[f] = np.array([getattr(k, f) for k in kernels], dtype="int64")
    for f in BOOLS:
        values[f] = np.array([getattr(k, f) for k in kernels], dtype=bool)
    for f in OBJECTS:
        values[f] = object_array([getattr(k, f) for k in kernels])
    maps: dict[str, dict[str, np.ndarray]] = {}
    for f in MAPS:
        rows = [getattr(k, f) for k in kernels]
        keys = dict.fromkeys(key for row in rows for key in row)
        maps[f] = {key: _floats([row.get(key) for row in rows]) for key in keys}
    return LaunchColumns(len(kernels), values, maps)


class KernelRows(Sequence[Kernel]):
    """The launches of an analysis as a sequence of `Kernel`, each made when first asked for."""

    def __init__(self, columns: LaunchColumns, frame: pl.DataFrame | None = None) -> None:
        self.columns = columns
        self.frame = frame
        self._made: dict[int, Kernel] = {}

    def __len__(self) -> int:
        return self.columns.length

    @overload
    def __getitem__(self, index: int) -> Kernel: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Kernel]: ...
    def __getitem__(self, index: int | slice) -> Kernel | Sequence[Kernel]:
        if isinstance(index, slice):
            return [self[j] for j in range(*index.indices(len(self)))]
        j = index + len(self) if index < 0 else index
        if not 0 <= j < len(self):
            raise IndexError(index)
        kernel = self._made.get(j)
        if kernel is None:
            kernel = self._made[j] = kernel_at(self.columns, j)
        return kernel

    def __iter__(self) -> Iterator[Kernel]:
        return (self[j] for j in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"KernelRows({len(self)} launches)"


def shared_texts(values: list[Any], encode: Callable[[Any], T]) -> list[T]:
    """`[encode(v) for v in values]`, each distinct value encoded once: by value where values can
    be hashed (enums, notes), else by identity (launches share one recipe or traffic object)."""
    if not values:
        return []
    try:
        codes, distinct = factorized(object_array(values))
    except TypeError:  # dicts, or records holding them
        first, codes = identity_codes(values)
        distinct = [values[j] for j in first.tolist()]
    made = np.empty(len(distinct), dtype=object)
    made[:] = [encode(v) for v in distinct]
    out: list[T] = made[codes].tolist()
    return out


def factorized(values: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """`codes.factorize` of an object column with None and NaN values of their own: codes, and
    the distinct values in first-seen order."""
    return factorize(values, missing_is_value=True)


DISTINCT_MIN_ROWS = 1024  # shorter columns are encoded as they are


def number_texts(numbers: np.ndarray, encode: Callable[[np.ndarray], list[T]]) -> list[T]:
    """`encode(numbers)`, or for a long column of few distinct values (a device's roofs, repeated
    launches) `encode` of the distinct ones, spread back to every row (-0.0 is kept apart; a
    column of one value, bit for bit, is encoded once)."""
    if len(numbers) < DISTINCT_MIN_ROWS:
        return encode(numbers)
    bits = numbers.view(np.int64)
    if (bits == bits[0]).all():  # one value (a counter no launch has, say): one text
        return encode(numbers[:1]) * len(numbers)
    if not np.signbit(numbers[numbers == 0]).any():
        distinct, where = np.unique(numbers, return_inverse=True)
        if len(distinct) * 4 <= len(numbers):
            texts: list[T] = np.array(encode(distinct), dtype=object)[where.ravel()].tolist()
            return texts
    return encode(numbers)


def distinct_rows(codes: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of integer codes (one array per column) → the first row of each distinct combination
    (in the order of the rows' codes, column by column), and for every row the index of its
    combination among those (`numpy.unique` of one integer key per row)."""
    n = len(codes[0]) if codes else 0
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    widths = [int(c.max()) + 2 for c in codes]  # codes from -1
    if math.prod(widths) < 2**62:  # one integer per row, in the order of the rows' codes
        key = np.zeros(n, dtype=np.int64)
        for c, width in zip(codes, widths, strict=True):
            key = key * width + (c + 1)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(np.column_stack(codes), axis=0, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def identity_codes(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct object (by identity: launches share their recipe and
    traffic objects), and each row's code into those."""
    ids = np.fromiter(map(id, values), dtype="int64", count=len(values))
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def number_codes(values: np.ndarray) -> np.ndarray:
    """A float column coded by its bits (every NaN one value; -0.0 is not 0.0: their texts differ)."""
    bits = np.where(np.isnan(values), np.nan, values).view("int64")
    codes: np.ndarray = np.unique(bits, return_inverse=True)[1].ravel()
    return codes


def distinct_numbers(
    numbers: Sequence[np.ndarray], codes: Sequence[np.ndarray] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """`distinct_rows` of float columns (by `number_codes`) and integer code columns: launches of one
    kernel repeat their counts and their device's peaks, so a record per row is made once per kind."""
    return distinct_rows([*(number_codes(np.asarray(a, dtype="float64")) for a in numbers), *codes])


def distinct(values: list[Any]) -> list[Any]:
    """The distinct objects of a column (by identity: launches share their recipe objects), in
    first-seen order."""
    first = identity_codes(values)[0]
    return [values[j] for j in np.sort(first).tolist()]


def columns_of(kernels: Sequence[Kernel]) -> LaunchColumns:
    """The columns behind a sequence of kernels (made from the objects when it has none)."""
    return kernels.columns if isinstance(kernels, KernelRows) else from_kernels(kernels)


@dataclass(frozen=True)
class Coded:
    """One column as codes into its distinct values (pandas.factorize): code -1 is missing."""

    codes: np.ndarray
    values: list[Any]
    missing: Any = None  # the value of a missing cell

    def value(self, code: int) -> Any:
        return self.missing if code < 0 else self.values[code]


def coded(
    group: Mapping[str, np.ndarray],
    column: str,
    n: int,
    as_value: Callable[[Any], Any] = lambda v: v,
) -> Coded:
    """A column of n launches coded (None and NaN missing); an absent column is missing everywhere."""
    if column not in group:
        return Coded(np.full(n, -1, dtype="int64"), [])
    codes, uniques = factorize(group[column])
    return Coded(codes, [as_value(u) for u in uniques])


def text_value(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def shared_rows(columns: Sequence[Coded], n: int, make: Callable[[tuple[Any, ...]], T]) -> np.ndarray:
    """`make(the row's values)` for every row, made once per distinct row (launches that share a
    recipe or traffic definitions share one object)."""
    if not columns:
        return object_array([make(()) for _ in range(n)])
    first, inverse = distinct_rows([c.codes for c in columns])
    made = np.empty(len(first), dtype=object)
    made[:] = [make(tuple(c.value(int(c.codes[j])) for c in columns)) for j in first.tolist()]
    out: np.ndarray = made[inverse]
    return out


def decoded(column: Coded, missing: str | None) -> np.ndarray:
    """A coded column back as an object array of its values (`missing` where missing)."""
    values = np.empty(len(column.values) + 1, dtype=object)
    values[:] = [*column.values, missing]
    out: np.ndarray = values[column.codes]  # code -1: the last entry
    return out
