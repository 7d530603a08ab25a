"""Fix first and fold repeats: each launch's headroom (`headroom_s`), and the launches of one kernel
(name, grid, block, device) or of one NVTX range on one device as one group (`KernelGroup`). Pure
functions of an `Analysis` (left unchanged), asked by every renderer: the table, the Markdown, the
HTML, the JSON and the plot rank and fold kernels the same way."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.frame import frame_of, integer_ops
from ncu_roof.analysis.model import intensity_array, known_sum, nan_to_none
from ncu_roof.analysis.records import Kernel
from ncu_roof.analysis.sol import headroom_array
from ncu_roof.analysis.verdict_phrases import verdict_codes
from ncu_roof.base.vocabulary import GroupBy, SortBy


def headroom_s(kernel: Kernel) -> float | None:
    """Seconds this launch would save at its binding roof: duration − the roofline's minimum time
    (`sol.headroom_array`); None without a roofline verdict, or above its roof."""
    duration, pct = (math.nan if v is None else v for v in (kernel.duration_s, kernel.pct_of_roof))
    return nan_to_none(headroom_array(np.array([duration]), np.array([pct]))[0])


GroupKey = tuple[str, str | None, str | None, int]  # name (or NVTX range), grid, block, device
NO_NVTX = "(no NVTX range)"


@dataclass(frozen=True)
class KernelGroup:
    """Launches of one kernel or NVTX range (`Kernel.nvtx`; none: `NO_NVTX`), slowest first: their
    rows in the analysis and what is said of them; a `Kernel` only for those asked for (`lead`)."""

    key: GroupKey
    rows: tuple[int, ...]  # its launches' rows in the analysis, slowest first
    kernels: Sequence[Kernel] = field(repr=False, compare=False)  # the analysis' launches
    numbers: Mapping[str, np.ndarray] = field(repr=False, compare=False)  # their figure_numbers
    time_share: float | None = None  # of the whole analysis' time
    device_share: float | None = None  # of its device's time
    total_duration_s: float | None = None  # sum over its launches with a duration
    mean_duration_s: float | None = None
    min_duration_s: float | None = None
    max_duration_s: float | None = None
    verdicts: tuple[str, ...] = ()  # the verdicts its launches got (with their basis), most time first
    verdict_shares: tuple[float, ...] = (1.0,)  # of its time, each of `verdicts` (nan: no time at all)
    headroom_s: float | None = None  # sum over the launches that have one (a lower bound if not all)
    headroom_complete: bool = True
    headroom_sol_s: float | None = None  # sum over the launches with SOL data (`Kernel.headroom_sol_s`)
    above_roof: bool = False  # some launch is measured above its roof
    notes: tuple[str, ...] = ()  # its launches' notes, each once, slowest launch's first

    @cached_property
    def figures(self) -> Kernel:
        """What a row of the group shows (`combined_figures`; the launch itself when alone)."""
        if self.count == 1:
            return self.lead
        return combined_figures(self.lead, self.numbers, np.array(self.rows, dtype="int64"))

    @property
    def name(self) -> str:
        return self.key[0]

    @property
    def device(self) -> int:
        return self.key[3]

    @property
    def lead(self) -> Kernel:
        """The longest launch: the group's representative row."""
        return self.kernels[self.rows[0]]

    @property
    def count(self) -> int:
        return len(self.rows)

    @staticmethod
    def of(key: GroupKey, launches: Sequence[Kernel]) -> KernelGroup:
        """A group of the given launches (in that order), with their total time and nothing else."""
        times = [k.duration_s for k in launches if k.duration_s is not None]
        rows = tuple(range(len(launches)))
        numbers = figure_numbers(frame_of(launches))
        return KernelGroup(key, rows, launches, numbers, total_duration_s=sum(times) if times else None)


def device_totals_s(analysis: Analysis) -> dict[int, float]:
    """Seconds per device: the sum of its launches' durations (absent: a device without one)."""
    timed = analysis.launches.filter(pl.col("duration_s").is_not_null())
    duration, device = (timed.get_column(c).to_numpy() for c in ("duration_s", "device"))
    ids, inverse = np.unique(device, return_inverse=True)
    seconds = np.bincount(inverse, weights=duration).tolist()  # summed in launch order
    return dict(zip(ids.tolist(), seconds, strict=True))


def group_kernels(analysis: Analysis, by: GroupBy = GroupBy.KERNEL, notes: bool = True) -> list[KernelGroup]:
    """Groups in first-launch order (`GroupBy.NONE`: one per launch, keyed by kernel), made once; `notes`
    False: without their notes, unless made with them (the JSON and the plot show none: a fifth of it)."""
    key, fuller = ("groups", by, notes), ("groups", by, True)
    return list(analysis.derived(key, lambda: tuple(_group_kernels(analysis, by, notes)), fuller))


def _grouped(launches: pl.DataFrame, by: GroupBy, notes: bool) -> pl.DataFrame:
    """Per group, in first-launch order: its key's columns, `rows` (its launches' rows, slowest first,
    ties in launch order) and `notes` (its launches' notes, each once, in that order; or none)."""
    kernel, none = ["name", "grid", "block", "device"], pl.lit([], pl.List(pl.String)).alias("notes")
    if by is GroupBy.NONE:
        said = pl.col("notes").list.unique(maintain_order=True) if notes else none
        return launches.select(*kernel, pl.concat_list("row").alias("rows"), said)
    keys = [pl.col("nvtx").fill_null(NO_NVTX), "device"] if by is GroupBy.NVTX else kernel
    slowest = pl.col("duration_s").fill_null(-1.0)
    row, said = (pl.col(c).sort_by(slowest, descending=True, maintain_order=True) for c in ("row", "notes"))
    said = said.explode().drop_nulls().unique(maintain_order=True) if notes else none
    return launches.group_by(keys, maintain_order=True).agg(row.alias("rows"), said)


def _group_kernels(analysis: Analysis, by: GroupBy, notes: bool) -> list[KernelGroup]:
    launches = analysis.launches
    codes, phrases = verdict_codes(launches, basis=True)
    table = _grouped(launches.with_row_index("row"), by, notes)
    duration, pct = (launches.get_column(c).to_numpy() for c in ("duration_s", "pct_of_roof"))
    durations_s, rooms_s, above = duration.tolist(), headroom_array(duration, pct), pct > 100.0
    rooms_sol_s = launches.get_column("headroom_sol_s").to_numpy()

    def one_launch(j: int) -> dict[str, Any]:
        """What is said of a group of one launch (every group of `--launches`): no arrays to reduce."""
        time = None if math.isnan(durations_s[j]) else durations_s[j]
        room = nan_to_none(rooms_s[j])
        return {
            **dict.fromkeys(
                ("total_duration_s", "mean_duration_s", "min_duration_s", "max_duration_s"), time
            ),
            "verdicts": (phrases[codes[j]],),
            "headroom_s": room,
            "headroom_complete": room is not None,
            "headroom_sol_s": nan_to_none(rooms_sol_s[j]),
            "above_roof": bool(above[j]),
        }

    def several(rows: np.ndarray) -> dict[str, Any]:
        """What is said of several launches (`rows`, slowest first): sums, extremes, verdicts by time."""
        seconds = duration[rows]
        times = seconds[~np.isnan(seconds)]
        time = nan_to_none(known_sum(seconds, exact=True))
        # each verdict's time, sums in launch order (slowest first); by time, ties by first seen
        words, first_at, inverse = np.unique(codes[rows], return_index=True, return_inverse=True)
        word_s = np.bincount(inverse, weights=np.where(np.isnan(seconds), 0.0, seconds), minlength=len(words))
        order, timed_s = np.lexsort((first_at, -word_s)), float(word_s.sum())
        rooms = rooms_s[rows]
        return {
            "total_duration_s": time,
            "mean_duration_s": time / len(times) if time is not None else None,
            "min_duration_s": float(times.min()) if len(times) else None,
            "max_duration_s": float(times.max()) if len(times) else None,
            "verdicts": tuple(phrases[c] for c in words[order].tolist()),
            "verdict_shares": tuple(
                (word_s[order] / timed_s if timed_s > 0 else np.full(len(order), math.nan)).tolist()
            ),
            "headroom_s": nan_to_none(known_sum(rooms)),
            "headroom_complete": not np.isnan(rooms).any(),
            "headroom_sol_s": nan_to_none(known_sum(rooms_sol_s[rows])),
            "above_roof": bool(above[rows].any()),
        }

    if by is GroupBy.NVTX:
        keys: list[GroupKey] = [(r, None, None, d) for r, d in table.select("nvtx", "device").iter_rows()]
    else:
        keys = list(table.select("name", "grid", "block", "device").iter_rows())
    total_s, device_s = analysis.total_duration_s, device_totals_s(analysis)
    kernels, numbers, groups = analysis.kernels, figure_numbers(launches), []
    for key, rows, texts in zip(
        keys, table.get_column("rows").to_list(), table.get_column("notes").to_list(), strict=True
    ):
        said = one_launch(rows[0]) if len(rows) == 1 else several(np.array(rows))
        time, on_device_s = said["total_duration_s"], device_s.get(key[3], 0.0)
        share = None if time is None else time / total_s if total_s > 0 else None
        device_share = None if time is None else time / on_device_s if on_device_s > 0 else None
        groups.append(
            KernelGroup(key, tuple(rows), kernels, numbers, share, device_share, notes=tuple(texts), **said)
        )
    return groups


def figure_numbers(launches: pl.DataFrame) -> dict[str, np.ndarray]:
    """What `combined_figures` sums per launch (NaN: null), once for all groups; map keys: `flop.total`."""
    out = {c: launches.get_column(c).to_numpy() for c in ("duration_s", "pct_of_roof", "headroom_sol_s")}
    for name in ("flop", "bytes", "sol_pct", "pct_of_bandwidth"):
        for values in launches.get_column(name).struct.unnest().iter_columns():
            out[f"{name}.{values.name}"] = values.to_numpy()
    return out | {f"ops.{key}": ops.to_numpy() for key, ops in integer_ops(launches).items()}


def combined_figures(lead: Kernel, numbers: Mapping[str, np.ndarray], rows: np.ndarray) -> Kernel:
    """Several launches (`rows`, their `figure_numbers`) as one: FLOPs, operations, bytes and SOL
    headroom summed, rates over summed time, intensity over summed bytes, percentages weighted by
    time; each over the launches that have the figure (and a duration), None where none has it."""

    def of(field: str, key: str | None = None) -> np.ndarray:
        values = numbers.get(field if key is None else f"{field}.{key}")
        return np.full(len(rows), np.nan) if values is None else np.asarray(values, dtype="float64")[rows]

    duration = np.where(of("duration_s") > 0, of("duration_s"), np.nan)

    def sums(numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, float]:
        both = ~np.isnan(numerator) & ~np.isnan(denominator)
        return known_sum(numerator[both]), known_sum(denominator[both])

    def over(numerator: np.ndarray, denominator: np.ndarray) -> float | None:
        top, bottom = sums(numerator, denominator)
        return nan_to_none(top / bottom) if bottom > 0 else None

    def timed(pct: np.ndarray) -> float | None:  # a percentage weighted by each launch's time
        share = over(duration * pct / 100.0, np.where(np.isnan(pct), np.nan, duration))
        return None if share is None else 100.0 * share

    def ratio(flop: np.ndarray, nbytes: np.ndarray) -> float | None:
        top, bottom = sums(flop, nbytes)
        return nan_to_none(float(intensity_array(np.array([top]), np.array([bottom]))[0]))

    flop, nbytes = of("flop", "total"), {t: of("bytes", t) for t in lead.bytes}
    return replace(
        lead,
        flop={p: nan_to_none(known_sum(of("flop", p))) for p in lead.flop},
        bytes={t: nan_to_none(known_sum(b)) for t, b in nbytes.items()},
        intensity_flop_per_byte={t: ratio(flop, b) for t, b in nbytes.items()},
        achieved_flop_per_s=over(flop, duration),
        achieved_byte_per_s={t: over(b, duration) for t, b in nbytes.items()},
        attainable_flop_per_s=over(flop, duration * of("pct_of_roof") / 100.0),
        pct_of_roof=timed(of("pct_of_roof")),
        sol_pct={k: timed(of("sol_pct", k)) for k in lead.sol_pct},
        pct_of_bandwidth={t: timed(of("pct_of_bandwidth", t)) for t in lead.pct_of_bandwidth},
        headroom_sol_s=nan_to_none(known_sum(of("headroom_sol_s"))),
        ops={k: nan_to_none(known_sum(of("ops", k))) for k in lead.ops},
    )


def ranked(groups: Iterable[KernelGroup], by: SortBy = SortBy.TIME) -> list[KernelGroup]:
    """Largest first by total time or by headroom; unknowns last, ties by first launch."""
    field = "headroom_s" if by is SortBy.HEADROOM else "total_duration_s"
    return sorted(groups, key=lambda g: -(-1.0 if getattr(g, field) is None else getattr(g, field)))


def repeats(groups: Sequence[KernelGroup]) -> bool:
    """Whether any kernel ran more than once (then tables show groups by default)."""
    return any(g.count > 1 for g in groups)


@dataclass(frozen=True)
class FixFirst:
    """The group that would save the most time at its roofs."""

    group: KernelGroup
    saving_s: float
    share: float | None  # of the total time (of its device's, in a per-device view)


def fix_first(groups: Sequence[KernelGroup], total_s: float) -> FixFirst | None:
    savings = {i: g.headroom_s for i, g in enumerate(groups) if g.headroom_s is not None and g.headroom_s > 0}
    if not savings:
        return None
    best = max(savings, key=savings.__getitem__)  # the first of the largest, as `ranked` ranks them
    return FixFirst(groups[best], savings[best], savings[best] / total_s if total_s > 0 else None)
