"""Base vs head, pair by pair: the kernels of two runs matched, and what each pair says, as
columns (`PairColumns`); a `KernelDiff` is made only for a pair someone asks for (`PairRows`).

Kernels match by (name, grid, block, order among equals) by default: the n-th launch of a shape in
the base pairs with the n-th launch of that shape in the head. `MatchBy.NAME` ignores the launch
shape; `MatchBy.ORDER` pairs the n-th launch of the base with the n-th of the head.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, overload

import numpy as np

from ncu_roof.analysis.columns import LaunchColumns, distinct_rows
from ncu_roof.analysis.model import finite, finite_or_none
from ncu_roof.base.codes import factorize
from ncu_roof.base.matching import MatchBy

KernelKey = tuple[int, int, int]  # (input, run, id): ncu's launch IDs restart in each run


class Status(StrEnum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    UNCHANGED = "unchanged"
    UNKNOWN = "unknown"  # a duration is missing on one side
    ONLY_BASE = "only-base"
    ONLY_HEAD = "only-head"


@dataclass(frozen=True)
class Change:
    base: float | None
    head: float | None

    @property
    def delta_pct(self) -> float | None:
        """(head − base) / base in percent; None when either side is missing or base is 0."""
        if not (finite(self.base) and finite(self.head)) or self.base == 0:
            return None
        assert self.base is not None and self.head is not None
        return 100.0 * (self.head - self.base) / self.base


@dataclass(frozen=True)
class KernelDiff:
    name: str
    grid: str | None
    block: str | None
    occurrence: int  # 0 for the first launch of this (name, grid, block), 1 for the next, …
    base_id: int | None
    head_id: int | None
    duration_s: Change
    flop_per_s: Change
    bytes: Mapping[str, Change]
    intensity_flop_per_byte: Mapping[str, Change]
    verdict_base: str | None
    verdict_head: str | None
    status: Status
    base_key: KernelKey | None = None
    head_key: KernelKey | None = None

    @property
    def verdict_changed(self) -> bool:
        return None not in (self.verdict_base, self.verdict_head) and (self.verdict_base != self.verdict_head)


@dataclass(frozen=True)
class PairColumns:
    """Every matched pair as arrays (row j = pair j): what `KernelDiff` holds, for many at once.

    Rows are -1 where a side has no launch; numbers NaN where missing (`Change` then holds None)."""

    base_row: np.ndarray
    head_row: np.ndarray
    occurrence: np.ndarray
    name: list[str]
    grid: list[str | None]
    block: list[str | None]
    base_id: list[int | None]
    head_id: list[int | None]
    base_key: list[KernelKey | None]
    head_key: list[KernelKey | None]
    numbers: Mapping[str, tuple[np.ndarray, np.ndarray]]  # quantity → (base, head) values
    verdict_base: list[str | None]
    verdict_head: list[str | None]
    status: list[Status]

    def __len__(self) -> int:
        return len(self.status)

    def delta_pct(self, quantity: str) -> np.ndarray:
        """`Change.delta_pct` of one quantity for every pair (NaN where it is None)."""
        base, head = self.numbers[quantity]
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = 100.0 * (head - base) / base
        return np.where(np.isfinite(base) & np.isfinite(head) & (base != 0), delta, np.nan)


DURATION, FLOP_PER_S = "duration_s", "achieved_flop_per_s"


def tier_key(field: str, tier: str) -> str:
    return f"{field}:{tier}"


class PairRows(Sequence[KernelDiff]):
    """The pairs of a diff as `KernelDiff` objects, each made when first asked for."""

    def __init__(self, columns: PairColumns, tiers: Sequence[str]) -> None:
        self.columns = columns
        self.tiers = tuple(tiers)

    def __len__(self) -> int:
        return len(self.columns)

    @overload
    def __getitem__(self, index: int) -> KernelDiff: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[KernelDiff]: ...
    def __getitem__(self, index: int | slice) -> KernelDiff | Sequence[KernelDiff]:
        if isinstance(index, slice):
            return [self[j] for j in range(*index.indices(len(self)))]
        c = self.columns
        j = range(len(self))[index]

        def change(quantity: str) -> Change:
            base, head = c.numbers[quantity]
            return Change(finite_or_none(float(base[j])), finite_or_none(float(head[j])))

        return KernelDiff(
            name=c.name[j],
            grid=c.grid[j],
            block=c.block[j],
            occurrence=int(c.occurrence[j]),
            base_id=c.base_id[j],
            head_id=c.head_id[j],
            duration_s=change(DURATION),
            flop_per_s=change(FLOP_PER_S),
            bytes={t: change(tier_key("bytes", t)) for t in self.tiers},
            intensity_flop_per_byte={t: change(tier_key("intensity_flop_per_byte", t)) for t in self.tiers},
            verdict_base=c.verdict_base[j],
            verdict_head=c.verdict_head[j],
            status=c.status[j],
            base_key=c.base_key[j],
            head_key=c.head_key[j],
        )

    def __iter__(self) -> Iterator[KernelDiff]:
        return (self[j] for j in range(len(self)))


def match_rows(
    base: LaunchColumns, head: LaunchColumns, match: MatchBy = MatchBy.NAME_SHAPE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(base row, head row, occurrence) of each pair, in head order, then base-only launches in
    base order; a row is -1 where that side has no launch.

    Both sides' launches are coded by what `match` compares (name and launch shape, name, or
    nothing: launch order; a missing name or grid matches a missing one), each launch numbered among
    its equals on its side, and the head's (code, number) looked up among the base's.
    """
    n_head = len(head)
    codes = [factorize(np.concatenate([head[c], base[c]]))[0] for c in _MATCH_COLUMNS[match]]  # None, NaN: -1
    kind = distinct_rows(codes)[1] if codes else np.zeros(n_head + len(base), dtype="int64")
    head_kind, base_kind = kind[:n_head], kind[n_head:]
    head_occurrence, base_occurrence = _occurrences(head_kind), _occurrences(base_kind)
    width = int(max(head_occurrence.max(initial=0), base_occurrence.max(initial=0))) + 1
    base_of_head = _lookup(head_kind * width + head_occurrence, base_kind * width + base_occurrence)
    paired = np.zeros(len(base), dtype=bool)
    paired[base_of_head[base_of_head >= 0]] = True
    only_base = np.flatnonzero(~paired)
    base_rows = np.concatenate([base_of_head, only_base])
    head_rows = np.concatenate([np.arange(n_head), np.full(len(only_base), -1)])
    return base_rows, head_rows, np.concatenate([head_occurrence, base_occurrence[only_base]])


_MATCH_COLUMNS: dict[MatchBy, tuple[str, ...]] = {
    MatchBy.NAME_SHAPE: ("name", "grid", "block"),
    MatchBy.NAME: ("name",),
    MatchBy.ORDER: (),
}


def _lookup(keys: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Where each key is in `among` (whose keys are distinct), -1 where it is not."""
    if len(among) == 0:
        return np.full(len(keys), -1, dtype="int64")
    order = np.argsort(among, kind="stable")
    ranked = among[order]
    at = np.minimum(np.searchsorted(ranked, keys), len(among) - 1)
    return np.where(ranked[at] == keys, order[at], -1)


def _occurrences(kinds: np.ndarray) -> np.ndarray:
    """Each row's number among the rows of its kind before it (0, 1, …: pandas' cumcount)."""
    order = np.argsort(kinds, kind="stable")
    ranked = kinds[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    lengths = np.diff(np.r_[starts, len(kinds)])
    out = np.empty(len(kinds), dtype="int64")
    out[order] = np.arange(len(kinds)) - np.repeat(starts, lengths)
    return out


def _side(values: np.ndarray, rows: np.ndarray, missing: Any = np.nan) -> np.ndarray:
    """values[rows], `missing` where the row is -1 (no launch on that side)."""
    if len(values) == 0:
        return np.full(len(rows), missing, dtype=values.dtype if missing is np.nan else object)
    taken = values[np.where(rows >= 0, rows, 0)]
    if missing is np.nan and taken.dtype.kind == "f":
        return np.where(rows >= 0, taken, np.nan)
    out = taken.astype(object)
    out[rows < 0] = missing
    return out


def pair_columns(
    base: LaunchColumns,
    head: LaunchColumns,
    base_rows: np.ndarray,
    head_rows: np.ndarray,
    occurrence: np.ndarray,
    tiers: Sequence[str],
    threshold_pct: float,
    verdicts: tuple[Sequence[str], Sequence[str]],
) -> PairColumns:
    """What each pair says: names from the head (else the base), both sides' numbers, verdicts
    (`verdicts`: each side's launches' verdict words), and the status (only one side, or the
    duration's change against the threshold)."""
    numbers: dict[str, tuple[np.ndarray, np.ndarray]] = {
        q: (_side(base[q], base_rows), _side(head[q], head_rows)) for q in (DURATION, FLOP_PER_S)
    }
    for field in ("bytes", "intensity_flop_per_byte"):
        for t in tiers:
            numbers[tier_key(field, t)] = (
                _side(base.key(field, t), base_rows),
                _side(head.key(field, t), head_rows),
            )

    def either(column: str) -> list[Any]:
        on_head, on_base = _side(head[column], head_rows, None), _side(base[column], base_rows, None)
        return [h if r >= 0 else b for r, h, b in zip(head_rows.tolist(), on_head, on_base, strict=True)]

    def ids(columns: LaunchColumns, rows: np.ndarray) -> list[int | None]:
        return list(_side(columns["id"], rows, None))

    def keys(columns: LaunchColumns, rows: np.ndarray) -> list[KernelKey | None]:
        parts = zip(*(_side(columns[c], rows, None).tolist() for c in ("input", "run", "id")), strict=True)
        return [None if None in key else key for key in parts]

    base_words, head_words = verdicts
    pairs = PairColumns(
        base_row=base_rows,
        head_row=head_rows,
        occurrence=occurrence,
        name=either("name"),
        grid=either("grid"),
        block=either("block"),
        base_id=ids(base, base_rows),
        head_id=ids(head, head_rows),
        base_key=keys(base, base_rows),
        head_key=keys(head, head_rows),
        numbers=numbers,
        verdict_base=[None if r < 0 else base_words[r] for r in base_rows.tolist()],
        verdict_head=[None if r < 0 else head_words[r] for r in head_rows.tolist()],
        status=[],
    )
    return replace(pairs, status=_statuses(pairs, threshold_pct))


def _statuses(pairs: PairColumns, threshold_pct: float) -> list[Status]:
    by_change = _by_change(pairs.delta_pct(DURATION), threshold_pct)
    return [
        Status.ONLY_HEAD if b < 0 else Status.ONLY_BASE if h < 0 else status
        for b, h, status in zip(pairs.base_row.tolist(), pairs.head_row.tolist(), by_change, strict=True)
    ]


def _by_change(change_pct: np.ndarray, threshold_pct: float) -> list[Status]:
    """A change beyond the threshold is a regression or an improvement; NaN is unknown."""
    cases = [
        (np.isnan(change_pct), Status.UNKNOWN),
        (change_pct > threshold_pct, Status.REGRESSED),
        (change_pct < -threshold_pct, Status.IMPROVED),
    ]
    kinds = [s for _, s in cases] + [Status.UNCHANGED]
    chosen = np.select([mask for mask, _ in cases], list(range(len(cases))), len(cases))
    return [kinds[i] for i in chosen.tolist()]


def classify(duration: Change, threshold_pct: float) -> Status:
    change = duration.delta_pct
    return _by_change(np.array([np.nan if change is None else change]), threshold_pct)[0]
