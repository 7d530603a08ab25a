"""What one panel of the roofline shows, before any drawing (no matplotlib): the groups' points
per tier, the roofs merged into lines, other ceilings, axis limits, a diff's arrows, the caption;
and of the instruction roofline: points per tier and the roofs, medians over the launches."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from typing import Any, NamedTuple

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.groups import GroupKey, KernelGroup, device_totals_s, group_kernels, ranked
from ncu_roof.analysis.model import TRANSACTION_BYTES, default_precision
from ncu_roof.analysis.records import Device, Kernel
from ncu_roof.base.text import distinct_names, one_line, plural, si
from ncu_roof.base.vocabulary import PRECISION_NAMES, TIER_NAMES, Bound
from ncu_roof.gpus.arch import arch_for_cc

Arrow = tuple[Kernel, Kernel]  # (base, head): drawn as a before → after arrow

# roofs by family: memory tiers in blues (darkest = farthest from the SMs), compute in warm tones
TIER_COLOURS = {"dram": "#08306b", "l2": "#2171b5", "l1": "#4292c6", "shared": "#6baed6"}
OTHER_TIER_COLOUR = "#9ecae1"
PRECISION_COLOURS = {"fp64": "#7f2704", "fp32": "#a63603", "fp16": "#d94801", "tensor": "#54278f"}
OTHER_PRECISION_COLOUR = "#8c6d31"
TENSOR_PATH_COLOUR = "#807dba"  # a tensor data path a kernel was judged against (FLOP/s or OP/s)
XU_COLOUR = "#238b45"  # the special-function unit (results/s)
MAX_MARKERS = 2000  # kernel groups drawn per panel; the rest (the shortest) are thinned out
LABELLED_KERNELS, LABEL_CHARS = 8, 30  # the groups with the most time named, in so many characters
SAME_ROOF_REL = 0.005  # roofs within 0.5 % share one line


@dataclass(frozen=True)
class KernelPoint:
    """Where one kernel group sits for one tier: its summed FLOPs over summed bytes and time (in
    the instruction roofline: its warp instructions per transaction and per second)."""

    group: KernelGroup
    tier: str
    intensity_flop_per_byte: float
    flop_per_s: float


@dataclass(frozen=True)
class RoofLine:
    """One drawn roof: the names sharing it (`L1/Shared`), its value, its colour."""

    label: str
    value: float
    colour: str
    unit: str = "FLOP/s"  # "OP/s": a ceiling of operations that are not FLOPs (as predict writes it)
    shown: str | None = None  # the figure its label shows, when not its value in `unit`


class Limits(NamedTuple):
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float


def group_points(group: KernelGroup) -> list[KernelPoint]:
    """A group's drawable points (`KernelGroup.figures`): finite, positive intensity and FLOP/s (log axes)."""
    achieved = group.figures.achieved_flop_per_s
    if achieved is None or not (math.isfinite(achieved) and achieved > 0):
        return []
    return [
        KernelPoint(group, tier, ai, achieved)
        for tier, ai in group.figures.intensity_flop_per_byte.items()
        if ai is not None and math.isfinite(ai) and ai > 0
    ]


def merged_roofs(
    values: Mapping[str, float], names: Mapping[str, str], colours: Mapping[str, str], other: str
) -> list[RoofLine]:
    """Roofs by value, largest first; keys whose values agree within 0.5 % share one line."""
    groups: list[tuple[list[str], float]] = []
    for key, value in sorted(values.items(), key=lambda kv: (-kv[1], kv[0])):
        if not (math.isfinite(value) and value > 0):
            continue
        if groups and abs(groups[-1][1] - value) <= SAME_ROOF_REL * groups[-1][1]:
            groups[-1][0].append(key)
        else:
            groups.append(([key], value))
    return [
        RoofLine(one_line("/".join(names.get(k, k) for k in keys)), value, colours.get(keys[0], other))
        for keys, value in groups
    ]


def ops_ceilings(device: Device, launches: pl.DataFrame) -> list[RoofLine]:
    """Ceilings beyond the per-precision roofs: each tensor data path with a peak (`Tensor BF16` in FLOP/s,
    `Tensor INT8` in OP/s), and the XU ceiling (results/s) where a kernel was bound by its pipe."""
    paths: dict[str, RoofLine] = {}
    for record in launches.get_column("tensor_paths").unique(maintain_order=True).to_list():
        for path, t in record.items():
            if t and t["peak_per_s"] and t["count"] and math.isfinite(t["peak_per_s"]):
                unit = "OP/s" if t["unit"] == "OP" else "FLOP/s"
                paths[path] = RoofLine(f"Tensor {path.upper()}", t["peak_per_s"], TENSOR_PATH_COLOUR, unit)
    out = sorted(paths.values(), key=lambda r: -r.value)
    arch = arch_for_cc(device.cc)
    # only where the XU pipe binds: a memory-bound kernel whose busiest pipe is XU would sit above a
    # line in other units that limits nothing
    xu = (pl.col("compute_ceiling") == "pipe:xu") & (pl.col("bound") == Bound.COMPUTE.value)
    if not launches.filter(xu).is_empty() and arch is not None and device.sm_count and device.sm_clock_hz:
        rate = arch.xu_ops.per_sm_per_clock * device.sm_count * device.sm_clock_hz
        out.append(RoofLine("XU (special functions)", rate, XU_COLOUR, "OP/s"))
    return out


def reference_precision(launches: pl.DataFrame, peaks: Mapping[str, float]) -> str | None:
    """The precision whose roof the ridge points use: the one most kernel time is spent in."""
    times = (
        launches.filter(pl.col("compute_precision").is_in(list(peaks)))
        .group_by("compute_precision")
        .agg(pl.col("duration_s").fill_null(0.0).sum())
        .sort("duration_s", "compute_precision", descending=[True, False])  # a tie: the first name
    )
    return str(times.item(0, "compute_precision")) if not times.is_empty() else default_precision(peaks)


def axis_limits(xs: Iterable[float], ys: Iterable[float]) -> Limits:
    """Limits that hold every point and ridge with margin; at least three decades each way."""
    return Limits(*_span(list(xs), (1e-2, 1e3), 10.0), *_span(list(ys), (1e9, 1e15), 3.0))


def _span(values: list[float], default: tuple[float, float], right_margin: float) -> tuple[float, float]:
    if not (good := [v for v in values if math.isfinite(v) and v > 0]):
        return default
    lo = 10.0 ** math.floor(math.log10(min(good) / 2.0))
    hi = max(good) * right_margin
    if hi / lo < 1e3:
        lo = hi / 1e3
    return lo, hi


@dataclass(frozen=True)
class Panel:
    analysis: Analysis
    device: Device
    launches: pl.DataFrame  # the device's launches
    drawn: Sequence[tuple[KernelGroup, list[KernelPoint]]]  # the groups drawn (by time), with their points
    drawable: int  # launches with something to place on log axes (the groups' and the thinned out)
    peaks: Sequence[RoofLine]  # roofs and ceilings, the top one first (the diagonals end at it)
    bands: Sequence[RoofLine]  # a diagonal per tier, the widest first
    ridges: Sequence[tuple[float, float]]  # drawn on the reference precision's roof

    @cached_property
    def groups(self) -> list[KernelGroup]:
        return [g for g, _ in self.drawn]

    @cached_property
    def points(self) -> list[KernelPoint]:  # a group's together
        return [pt for _, found in self.drawn for pt in found]

    @cached_property
    def labels(self) -> tuple[list[str], list[str]]:
        """The labelled groups' names, never alike (`distinct_names`), and the caption's `[K1] …` lines."""
        return distinct_names([g.name for g, _ in self.drawn[:LABELLED_KERNELS]], LABEL_CHARS)

    @property
    def total_s(self) -> float:  # the device's time (`device_totals_s`; the groups' `device_share` is of it)
        return device_totals_s(self.analysis).get(self.device.index, 0.0)


def drawable(launches: pl.DataFrame) -> int:
    """How many launches can be placed on log axes: FLOPs, a duration and bytes of some tier."""
    tiers = [pl.col("bytes").struct.field(t) != 0 for t in launches.get_column("bytes").struct.fields]
    some_bytes = pl.any_horizontal(pl.lit(False), *tiers)  # null: not known
    drawn = (pl.col("flop").struct.field("total") > 0) & (pl.col("duration_s") != 0) & some_bytes
    return int(launches.select(drawn.fill_null(False).sum()).item())


def device_groups(analysis: Analysis, device: Device) -> list[KernelGroup]:  # by time
    return [g for g in ranked(group_kernels(analysis, notes=False)) if g.device == device.index]


def panel(analysis: Analysis, device: Device) -> Panel:
    launches = analysis.launches.filter(pl.col("device") == device.index)
    found = ((g, group_points(g)) for g in device_groups(analysis, device))
    drawn = list(islice(((g, points) for g, points in found if points), MAX_MARKERS))
    roofs = device.roofs
    peaks = merged_roofs(roofs.compute_flop_per_s, PRECISION_NAMES, PRECISION_COLOURS, OTHER_PRECISION_COLOUR)
    peaks += ops_ceilings(device, launches)  # after the top roof: the bands end at that one
    bands = merged_roofs(roofs.bandwidth_byte_per_s, TIER_NAMES, TIER_COLOURS, OTHER_TIER_COLOUR)
    ref = reference_precision(launches, roofs.compute_flop_per_s)
    ref_peak = roofs.compute_flop_per_s.get(ref) if ref else None
    ridges = [(ref_peak / b.value, ref_peak) for b in bands] if ref_peak else []
    return Panel(analysis, device, launches, drawn, drawable(launches), peaks, bands, ridges)


ISSUE_COLOUR = PRECISION_COLOURS["fp32"]  # a compute roof: warm, as the FLOP roofline's
INST_UNIT = "inst/s"  # warp instructions per second: `100 Ginst/s`, as `100 TFLOP/s`
Roof = dict[str, Any]  # a launch's `instruction_roofline`, as Polars gives a struct


def instruction_panel(analysis: Analysis, device: Device) -> tuple[Panel, list[Roof]]:
    """The groups with an instruction roofline (points, roofs) and their launches' instruction rooflines."""
    groups = device_groups(analysis, device)
    rows = [j for g in groups for j in g.rows]
    launches = analysis.launches[rows]
    by_row = dict(zip(rows, launches.select("instruction_roofline", "duration_s").iter_rows(), strict=True))
    drawn = [(g, points) for g in groups if (points := _instruction_points(g, by_row))]
    roofs = [roof for g, _ in drawn for j in g.rows if (roof := by_row[j][0]) is not None]
    drawable = sum(g.count for g, _ in drawn)
    return Panel(analysis, device, launches, drawn, drawable, *_instruction_roofs(roofs), ()), roofs


def _instruction_points(
    group: KernelGroup, by_row: Mapping[int, tuple[Roof | None, float | None]]
) -> list[KernelPoint]:
    """One point per tier: the group's warp instructions over its transactions and its time
    (over the launches that have both), where finite and positive (log axes)."""
    inst = seconds = 0.0
    transactions: dict[str, float] = {}
    for roof, duration_s in (by_row[j] for j in group.rows):
        if roof is None or not roof["warp_inst"] or not duration_s:
            continue
        inst += roof["warp_inst"]
        seconds += duration_s
        for tier, x in roof["intensity_warp_inst_per_transaction"].items():
            if x is not None and math.isfinite(x) and x > 0:
                transactions[tier] = transactions.get(tier, 0.0) + roof["warp_inst"] / x
    if inst <= 0 or seconds <= 0:
        return []
    return [KernelPoint(group, tier, inst / n, inst / seconds) for tier, n in transactions.items() if n > 0]


def _instruction_roofs(records: Sequence[Roof]) -> tuple[list[RoofLine], list[RoofLine]]:
    """The issue peak, and one diagonal per tier (largest first): medians over the drawn launches."""
    issues = [r["issue_peak_warp_inst_per_s"] for r in records if r["issue_peak_warp_inst_per_s"]]
    issue = statistics.median(issues) if issues else None
    peaks = [RoofLine("Issue", issue, ISSUE_COLOUR, INST_UNIT)] if issue else []
    bands = []
    for tier in TRANSACTION_BYTES:
        rates = [p for r in records if (p := r["transaction_peak_per_s"].get(tier)) is not None]
        rate = statistics.median(rates) if rates else None
        if rate and math.isfinite(rate) and rate > 0:
            colour = TIER_COLOURS.get(tier, OTHER_TIER_COLOUR)
            shown = si(rate * TRANSACTION_BYTES[tier], "B/s")
            bands.append(RoofLine(TIER_NAMES.get(tier, tier), rate, colour, shown=shown))
    return peaks, sorted(bands, key=lambda b: -b.value)


def arrow_points(
    arrows: Sequence[Arrow], groups: Sequence[KernelGroup]
) -> list[tuple[KernelPoint, KernelPoint]]:
    """One before → after pair per drawn head group: the base launches matched to its launches,
    summed as the group is, at one tier both sides have (the head's binding tier, else DRAM)."""
    bases: dict[GroupKey, list[Kernel]] = {}  # by kernel: (name, grid, block, device)
    for base, head in arrows:
        bases.setdefault((head.name, head.grid, head.block, head.device), []).append(base)
    pairs = []
    for group in (g for g in groups if g.key in bases):
        base_points = {q.tier: q for q in group_points(KernelGroup.of(group.key, bases[group.key]))}
        head_points = {q.tier: q for q in group_points(group)}
        if common := [t for t in head_points if t in base_points]:
            tier = next((t for t in (group.lead.binding, "dram") if t in common), common[0])
            pairs.append((base_points[tier], head_points[tier]))
    return pairs


def caption(p: Panel, full: bool, name_device: bool, wrap: int) -> str:
    """Where the roofs come from; with `full`, every roof's source (the formulas); what was not
    drawn. Sources and roof names come from data: `one_line`, or the SVG is ill-formed XML."""
    import textwrap

    roofs = p.device.roofs
    head = f"Device {p.device.index}: roofs" if name_device else "Roofs"
    no_roofs = not roofs.compute_flop_per_s and not roofs.bandwidth_byte_per_s
    lines = [] if no_roofs else [f"{head} {source_words(roofs.source)}."]
    if full:
        by_source: dict[str, list[str]] = {}
        for key, source in roofs.sources.items():
            name = PRECISION_NAMES.get(key) or TIER_NAMES.get(key, key)
            by_source.setdefault(one_line(source), []).append(one_line(name))
        details = "; ".join(f"{', '.join(names)}: {source}" for source, names in by_source.items())
        lines += textwrap.wrap(details, wrap, max_lines=8, placeholder=" …")  # none: no line
    if not_flops := [c.label for c in p.peaks if c.unit != "FLOP/s"]:
        arch, xu = arch_for_cc(p.device.cc), ""
        if arch is not None and any(label.startswith("XU") for label in not_flops):
            rate = f"{arch.xu_ops.per_sm_per_clock:g} results/clk/SM, {arch.xu_ops.describe()}"
            xu = f" (XU: {rate}, x SMs x the measured SM clock)"
        lines.append(f"{' and '.join(not_flops)}: operations per second, not FLOPs{xu}.")
    if undrawable := len(p.launches) - p.drawable:
        lines.append(
            f"{undrawable:,} of {plural(len(p.launches), 'launch')} not drawn: no FLOPs, no duration "
            "or no bytes to place them on log axes."
        )
    if (thinned := p.drawable - sum(g.count for g in p.groups)) > 0:
        lines.append(
            f"{plural(thinned, 'launch')} of the kernels with the least time not drawn (thinned to "
            f"{MAX_MARKERS:,} kernels)."
        )
    if no_roofs:
        which = f"device {p.device.index}" if name_device else "this device"
        lines.append(f"No roofs for {which}: pass --gpu KEY or --roofs FILE.")
    lines += p.labels[1]  # (each one line: `distinct_names`)
    return "\n".join(part for line in lines for part in textwrap.wrap(line, wrap))


def source_words(source: str) -> str:
    """Where the roofs come from, in words: `report` → measured in the report, …"""
    text = one_line(source)
    if text == "report":
        return "measured in the report (peak per cycle × the measured clock, as Nsight Compute does)"
    if text.startswith("builtin:"):
        return f"from the built-in {text.removeprefix('builtin:')} datasheet figures (ncu-roof gpus)"
    return f"from the roofs file ({text})" if text.startswith("user") else f"from {text}"
