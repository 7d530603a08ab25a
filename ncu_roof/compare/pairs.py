"""Base vs head, pair by pair: the kernels of two runs matched, and what each pair says, as one Polars
frame (`pair_frame`); a `KernelDiff` is made only for a pair someone asks for (`kernel_diff`).

Kernels match by (name, grid, block, order among equals) by default: the n-th launch of a shape in
the base pairs with the n-th of that shape in the head; `MatchBy.NAME` ignores the launch shape,
`MatchBy.ORDER` pairs the n-th launches of the two runs. Every mode pairs within the NVTX range when
both runs carry ranges, and within the device (`ordinal`: its index in its ncu run) when both ran
on several (`pairing_keys`): a run on one GPU pairs with a run on another."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import polars as pl

from ncu_roof.analysis.frame import struct
from ncu_roof.analysis.model import finite_or_none
from ncu_roof.analysis.verdict_phrases import verdict_words
from ncu_roof.base.vocabulary import MatchBy


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
        base, head = finite_or_none(self.base), finite_or_none(self.head)
        return None if base is None or head is None or base == 0 else 100.0 * (head - base) / base


@dataclass(frozen=True)
class KernelDiff:
    name: str
    base_name: str | None  # the base's name where it differs (`MatchBy.ORDER`)
    grid: str | None
    block: str | None
    nvtx: str | None
    occurrence: int  # 0 for the first launch of this (name, grid, block), 1 for the next, …
    base_id: int | None
    head_id: int | None
    base_run: int | None  # ncu's launch IDs restart in each run of a file
    head_run: int | None
    base_device: int | None
    head_device: int | None
    duration_s: Change
    flop_per_s: Change
    bytes: Mapping[str, Change]
    intensity_flop_per_byte: Mapping[str, Change]
    verdict_base: str | None
    verdict_head: str | None
    status: Status

    @property
    def verdict_changed(self) -> bool:
        return None not in (self.verdict_base, self.verdict_head) and (self.verdict_base != self.verdict_head)


NUMBERS = ("duration_s", "achieved_flop_per_s")  # a {base, head, delta_pct} struct each
MAPS = ("bytes", "intensity_flop_per_byte")  # per tier, such a struct
_MATCH_COLUMNS: dict[MatchBy, tuple[str, ...]] = {
    MatchBy.NAME_SHAPE: ("name", "grid", "block"),
    MatchBy.NAME: ("name",),
    MatchBy.ORDER: (),
}


def pairing_keys(base: pl.DataFrame, head: pl.DataFrame, match: MatchBy) -> tuple[str, ...]:
    """The columns launches pair on: the match's, the device where both runs launched on several (it
    tells their launches apart; one GPU each pairs across indices), the NVTX range where both have;
    `MatchBy.ORDER` none: the n-th launches of the two runs, whatever their devices and ranges."""
    if match is MatchBy.ORDER:
        return ()
    several = all(
        side.select((pl.col("ordinal").n_unique().over("run") > 1).any()).item() for side in (base, head)
    )
    ranges = all(side.get_column("nvtx").is_not_null().any() for side in (base, head))
    return (*_MATCH_COLUMNS[match], *(["ordinal"] if several else []), *(["nvtx"] if ranges else []))


def match_rows(base: pl.DataFrame, head: pl.DataFrame, match: MatchBy = MatchBy.NAME_SHAPE) -> pl.DataFrame:
    """`base_row`, `head_row` (null: no launch on that side) and `occurrence` of each pair, in head
    order, then the base-only launches; a missing name, grid or range matches a missing one."""
    keys = list(pairing_keys(base, head, match))

    def numbered(launches: pl.DataFrame, row: str) -> pl.DataFrame:
        rows = pl.int_range(pl.len(), dtype=pl.Int64)
        occurrence = rows.over(keys) if keys else rows
        return launches.select(*keys, occurrence.alias("occurrence"), rows.alias(row))

    joined = numbered(head, "head_row").join(
        numbered(base, "base_row"), on=[*keys, "occurrence"], how="full", coalesce=True, nulls_equal=True
    )
    return joined.sort("head_row", "base_row", nulls_last=True).select("base_row", "head_row", "occurrence")


def pair_frame(base: pl.DataFrame, head: pl.DataFrame, match: MatchBy, threshold_pct: float) -> pl.DataFrame:
    """A row per pair (`match_rows`): its launches' rows, then the diff JSON's pair object a column
    per key: name, shape and range from the head (else the base), the base's name where it differs,
    both sides' IDs, runs and devices, the status, a {base, head, delta_pct} struct per number (per
    tier of `MAPS`), both verdicts in words. Launch frames carry `ordinal` (`comparison.diff`)."""
    tiers = sorted({*base.get_column("bytes").struct.fields, *head.get_column("bytes").struct.fields})
    joined = (
        match_rows(base, head, match)
        .join(_side(base, tiers, "base"), on="base_row", how="left", maintain_order="left")
        .join(_side(head, tiers, "head"), on="head_row", how="left", maintain_order="left")
    )

    def either(column: str) -> pl.Expr:
        on_head, head = pl.col("head_row").is_not_null(), pl.col(f"head:{column}")
        return pl.when(on_head).then(head).otherwise(pl.col(f"base:{column}")).alias(column)

    def delta(column: str) -> pl.Expr:
        base, head = pl.col(f"base:{column}"), pl.col(f"head:{column}")
        return pl.when(base.is_finite() & head.is_finite() & (base != 0)).then(100.0 * (head - base) / base)

    def change(column: str, alias: str) -> pl.Expr:
        sides = (pl.col(f"{side}:{column}").alias(side) for side in ("base", "head"))
        return pl.struct(*sides, delta(column).alias("delta_pct")).alias(alias)

    def per_tier(field: str) -> pl.Expr:
        if not tiers:
            return pl.lit(struct({}, len(joined))).alias(field)
        return pl.struct(change(f"{field}:{t}", t) for t in tiers).alias(field)

    status = (
        pl.when(pl.col("base_row").is_null())
        .then(pl.lit(Status.ONLY_HEAD.value))
        .when(pl.col("head_row").is_null())
        .then(pl.lit(Status.ONLY_BASE.value))
        .otherwise(_by_change(delta("duration_s"), threshold_pct))
    )
    return joined.select(
        "base_row",
        "head_row",
        either("name"),
        pl.when(pl.col("base:name") != pl.col("head:name")).then(pl.col("base:name")).alias("base_name"),
        *(either(c) for c in ("grid", "block", "nvtx")),
        "occurrence",
        *(pl.col(f"{s}:{c}").alias(f"{s}_{c}") for c in ("id", "run", "device") for s in ("base", "head")),
        status.alias("status"),
        *(change(c, c) for c in NUMBERS),
        *(per_tier(f) for f in MAPS),
        pl.struct(*(pl.col(f"{side}:verdict").alias(side) for side in ("base", "head"))).alias("verdict"),
    )


def _side(launches: pl.DataFrame, tiers: Sequence[str], side: str) -> pl.DataFrame:
    """What a pair reads of one side's launches, each column named `side:column` (`side:bytes:dram`
    for a tier; null where the side has no such tier), and its row."""
    has = {f: launches.get_column(f).struct.fields for f in MAPS}
    columns = launches.select(
        *("name", "grid", "block", "nvtx", "id", "run"),
        pl.col("ordinal").alias("device"),
        *NUMBERS,
        *(
            (pl.col(f).struct.field(t) if t in has[f] else pl.lit(None, pl.Float64)).alias(f"{f}:{t}")
            for f in MAPS
            for t in tiers
        ),
        verdict_words(launches, basis=True).alias("verdict"),
    )
    return columns.select(
        pl.all().name.prefix(f"{side}:"), pl.int_range(pl.len(), dtype=pl.Int64).alias(f"{side}_row")
    )


def _by_change(change_pct: pl.Expr, threshold_pct: float) -> pl.Expr:
    return (
        pl.when(change_pct.is_null() | change_pct.is_nan())
        .then(pl.lit(Status.UNKNOWN.value))
        .when(change_pct > threshold_pct)
        .then(pl.lit(Status.REGRESSED.value))
        .when(change_pct < -threshold_pct)
        .then(pl.lit(Status.IMPROVED.value))
        .otherwise(pl.lit(Status.UNCHANGED.value))
    )


def classify(durations: Sequence[Change], threshold_pct: float) -> list[Status]:
    """The status of each change of time by itself (one expression for them all, as for the pairs)."""
    change_pct = pl.lit(pl.Series([d.delta_pct for d in durations], dtype=pl.Float64))
    return [Status(s) for s in pl.select(_by_change(change_pct, threshold_pct)).to_series()]


def sides(pairs: pl.DataFrame, column: str, tier: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One number (of one tier) of every pair on the base and on the head (NaN: not known, or not finite)."""
    change = pairs.get_column(column)
    if tier is not None:
        change = change.struct.field(tier)
    base, head = (change.struct.field(side).to_numpy() for side in ("base", "head"))
    return np.where(np.isfinite(base), base, np.nan), np.where(np.isfinite(head), head, np.nan)


def kernel_diff(row: Mapping[str, Any]) -> KernelDiff:

    def change(sides: Mapping[str, float | None]) -> Change:
        return Change(finite_or_none(sides["base"]), finite_or_none(sides["head"]))

    return KernelDiff(
        **{k: row[k] for k in ("name", "base_name", "grid", "block", "nvtx", "occurrence")},
        **{f"{side}_{k}": row[f"{side}_{k}"] for k in ("id", "run", "device") for side in ("base", "head")},
        duration_s=change(row["duration_s"]),
        flop_per_s=change(row["achieved_flop_per_s"]),
        bytes={t: change(c) for t, c in row["bytes"].items()},
        intensity_flop_per_byte={t: change(c) for t, c in row["intensity_flop_per_byte"].items()},
        verdict_base=row["verdict"]["base"],
        verdict_head=row["verdict"]["head"],
        status=Status(row["status"]),
    )
