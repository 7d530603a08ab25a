"""The one summary view that the terminal, Markdown and HTML render (each only escapes and lays out):
per device the share of time per verdict, the costliest kernel and the kernel to fix first (the
most time it would save at its roof); the rows (kernel groups, or launches); each distinct note
once, with its launch count; why verdicts are missing. Verdict words and colours live here, once."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.groups import (
    FixFirst,
    KernelGroup,
    device_totals_s,
    fix_first,
    group_kernels,
    ranked,
    repeats,
)
from ncu_roof.analysis.records import Device
from ncu_roof.base.text import distinct_names, launch_shape, pct, plural, si
from ncu_roof.base.vocabulary import BASIS_LEGEND, BASIS_WORDS, COMPUTE, Bound, GroupBy, SortBy
from ncu_roof.render.unplaced import missing_reason

# one colour per verdict for every sink (terminal, plot, HTML); colour-blind safe (Okabe–Ito):
# memory blue as the memory roofs, compute vermillion as the compute roofs, latency (neither)
# bluish green, each pair told apart under every colour-vision deficiency
VERDICT_COLOURS = {
    Bound.MEMORY: "#0072b2",
    Bound.COMPUTE: "#d55e00",
    Bound.LATENCY: "#009e73",
    Bound.BALANCED: "#cc79a7",
    Bound.UNKNOWN: "#7f7f7f",
}
Labels = tuple[dict[str, str], tuple[str, ...]]  # each name's label, and the `[K1] …` lines (`Summary.names`)


def roof_rows(device: Device) -> list[tuple[str, str, str]]:
    """(roof, peak, where it comes from) of each of a device's roofs: compute, then memory tiers."""
    roofs = device.roofs
    peaks = [(p, si(v, "FLOP/s")) for p, v in roofs.compute_flop_per_s.items()]
    peaks += [(t, si(v, "B/s")) for t, v in roofs.bandwidth_byte_per_s.items()]
    return [(key, peak, roofs.sources.get(key, roofs.source)) for key, peak in peaks]


def lack_counters(analysis: Analysis) -> str:
    """`3 launches lack counters` (`1 launch lacks`): those `Analysis.collect_hint` would collect;
    `Some launches lack counters` where no launch says which (a hand-made analysis)."""
    if not (lacking := int((analysis.launches.get_column("missing").list.len() > 0).sum())):
        return "Some launches lack counters"
    return f"{plural(lacking, 'launch')} {'lacks' if lacking == 1 else 'lack'} counters"


def roofs_clock_words(device: Device) -> str:
    """` at 1.41 GHz (measured)`: the SM clock of a device's roofs; ` at boost clock (none measured)` without
    one (per-clock figures × the datasheet boost, not its peaks); empty if no roof scales."""
    sources = device.roofs.sources.values()
    if device.sm_clock_hz is not None and any("measured" in s for s in sources):
        return f" at {si(device.sm_clock_hz, 'Hz')} (measured)"
    return " at boost clock (none measured)" if any("at boost" in s for s in sources) else ""


@dataclass(frozen=True)
class Note:
    """One distinct note (numbers in it may differ between launches) and how many it concerns."""

    number: int
    text: str  # its wording: a number that differs between its launches as a range (`33–40%`)
    launches: int
    vary: str  # ` (numbers vary)` when its launches' wordings differ in numbers, else empty


@dataclass(frozen=True)
class Row:
    rank: int
    group: KernelGroup
    notes: tuple[int, ...]  # numbers of its notes

    @property
    def verdict(self) -> str:  # of most of its time, with its basis (the share: a cell of its own)
        return self.verdicts[0][0]

    @cached_property
    def verdicts(self) -> tuple[tuple[str, float], ...]:
        return verdicts_by_time(self.group)

    @property
    def bound(self) -> Bound:
        return self.group.lead.bound

    @property
    def shape(self) -> str:  # its launch shape, `8192×256`
        return launch_shape(self.group.lead.grid, self.group.lead.block)

    def share(self, per_device: bool) -> str:
        share = self.group.device_share if per_device else self.group.time_share
        return pct(None if share is None else 100 * share)

    def saving(self) -> str:
        """The time it could save (`+`: a lower bound); `–` when unknown."""
        value = self.group.headroom_s
        return "–" if value is None else si(value, "s") + ("" if self.group.headroom_complete else "+")

    def flagged(self, notes: bool = False) -> str:
        """Its verdict, `⚠ above roof` when it is, and with `notes` its notes' numbers (`[1,4]`)."""
        above = " ⚠ above roof" if self.group.above_roof else ""
        refs = f" [{','.join(map(str, self.notes))}]" if notes and self.notes else ""
        return self.verdict + above + refs


def verdicts_by_time(group: KernelGroup) -> tuple[tuple[str, float], ...]:
    """A group's verdicts with their share of its time, most first; verdicts that differ only in
    a number are one, the number as a range (`compute-bound (SM 60–75%) · SOL`)."""
    if len(group.verdicts) == 1:
        return ((group.verdicts[0], group.verdict_shares[0]),)
    shares = (0.0 if math.isnan(s) else s for s in group.verdict_shares)
    texts = ((v, _NUMBER.sub("#", v), s) for v, s in zip(group.verdicts, shares, strict=True))
    return tuple((text, share) for _, text, share, _ in _merged(texts))


def verdict_words(group: KernelGroup) -> str:
    """The verdict of most of its time, with its share if not all: `latency-bound · SOL (38% of its time)`."""
    seen = verdicts_by_time(group)
    first, share = seen[0]
    return first if len(seen) == 1 else f"{first} ({pct(100 * share)} of its time)"


@dataclass(frozen=True)
class DeviceView:
    device: Device
    launches: int
    total_s: float
    shares: tuple[tuple[Bound, float], ...]  # of its time per verdict, largest first, > 0 only
    memory_tiers: tuple[tuple[str, float], ...]  # of its time per binding tier of memory-bound ones
    costliest: KernelGroup | None
    fix_first: FixFirst | None
    bases: Mapping[Bound, str]  # what each verdict's time rests on (`roofline/SOL`: its launches, both)


@dataclass(frozen=True)
class Summary:
    analysis: Analysis
    rows: tuple[Row, ...]
    grouped: bool  # rows are kernel groups (False: one row per launch)
    sort: SortBy
    devices: tuple[DeviceView, ...]
    notes: tuple[Note, ...]
    missing_reason: str | None
    by_nvtx: bool = False  # rows are NVTX-range groups: their name is the range, not a kernel

    _names: dict[int, Labels] = field(default_factory=dict, init=False, repr=False, compare=False)

    def names(self, width: int) -> Labels:
        """Each row's (and fix-first kernel's) name as `width` columns show it, different names
        never alike (`text.distinct_names`), and the `[K1] …` lines that resolve an index."""
        if width not in self._names:
            rows = [r.group.name for r in self.rows]  # one a launch with --launches: each name once
            fix = [v.fix_first.group.name for v in self.devices if v.fix_first is not None]
            names = list(dict.fromkeys([*rows, *fix]))
            labels, keys = distinct_names(names, width)
            self._names[width] = (dict(zip(names, labels, strict=True)), tuple(keys))
        return self._names[width]

    def shape_words(self, row: Row, before: str = " ") -> str:
        """`before` and the row's launch shape where rows of its name have several (groups of one
        kernel), for a table with no launch shape column: lest two rows read alike; else nothing."""
        return f"{before}{row.shape}" if row.group.name in self._shaped and not self.by_nvtx else ""

    @cached_property
    def _shaped(self) -> frozenset[str]:  # the names of rows of several launch shapes
        first: dict[str, str] = {}  # each name's first shape
        return frozenset(n for r in self.rows if first.setdefault(n := r.group.name, r.shape) != r.shape)

    @property
    def name_header(self) -> str:  # the rows' name column: kernel groups, NVTX groups
        return ("kernel", "NVTX range")[self.by_nvtx]

    @property
    def name_title(self) -> str:
        return self.name_header[:1].upper() + self.name_header[1:]

    def title(self, devices: bool = False, kernels: bool = False) -> str:
        """`7 launches of 5 kernels on 2 devices, 2.06 ms`: of kernels when rows are groups (with
        `kernels` always), on devices with `devices` when there are several."""
        groups = f" of {plural(len(self.rows), 'kernel')}" if self.grouped or kernels else ""
        on = f" on {len(self.devices)} devices" if devices and self.multi_device else ""
        return f"{plural(self.launches, 'launch')}{groups}{on}, {si(self.total_s, 's')}"

    @property
    def multi_device(self) -> bool:
        return len(self.devices) > 1

    @property
    def launches(self) -> int:
        return self.analysis.launches.height

    @cached_property
    def total_s(self) -> float:
        return self.analysis.total_duration_s

    def legend(self, *, figures: bool = True) -> list[str]:
        """What the columns mean, one phrase each, for every sink; `figures`: the AI, Binding and
        Bandwidth columns too (Markdown and HTML show them, the terminal does not)."""
        share = "of its device's time" if self.multi_device else "of the total time"
        sums = (
            "Time, FLOP, bytes, rates, % of roof and SOL = over all its launches (sums; rates "
            "and intensity of the sums; percentages weighted by time)"
        )
        mixed = "Of its time = the share of the kernel's time its verdict covers (the others: --launches)"
        return [
            *([sums] if self.grouped else []),
            f"Share = {share}",
            "% of roof = the roofline's minimum time over the measured time",
            "Could save = the time it would save at its binding roof (+: a lower bound)",
            BASIS_LEGEND,
            *([mixed] if any(len(r.verdicts) > 1 for r in self.rows) else []),
            "[n] = note n below",
            *(FIGURES_LEGEND if figures else ()),
        ]


FIGURES_LEGEND = (
    "AI = arithmetic intensity, FLOP per byte against each memory tier",
    "Binding = the roof that limits the kernel in the roofline model",
    "Bandwidth = achieved, at the binding tier (DRAM when compute-bound)",
)


def summarize(
    analysis: Analysis,
    *,
    group_by: GroupBy = GroupBy.KERNEL,
    sort: SortBy = SortBy.TIME,
    launches: bool = False,
) -> Summary:
    """The view of one analysis: groups when kernels repeat, unless `launches`. Which kernel to fix
    first is a question about kernels (groups), however the rows are shown."""
    kernels = group_kernels(analysis, group_by)
    by_nvtx = group_by is GroupBy.NVTX and not launches  # asked for: shown even without repeats
    grouped = by_nvtx or (group_by is not GroupBy.NONE and not launches and repeats(kernels))
    # without repeats, the groups are the launches already
    shown = group_kernels(analysis, GroupBy.NONE) if not grouped and repeats(kernels) else kernels
    notes, numbers = _notes(analysis)
    rows = tuple(
        Row(i + 1, g, tuple(sorted({numbers[n] for n in g.notes}))) for i, g in enumerate(ranked(shown, sort))
    )
    totals = device_totals_s(analysis)
    devices = tuple(
        _device_view(analysis, d, kernels, totals.get(d.index, math.nan)) for d in analysis.devices
    )
    return Summary(analysis, rows, grouped, sort, devices, notes, missing_reason(analysis), by_nvtx)


def _device_view(
    analysis: Analysis, device: Device, groups: Sequence[KernelGroup], total_s: float
) -> DeviceView:
    mine = [g for g in groups if g.device == device.index]
    here = analysis.launches.filter(pl.col("device") == device.index)
    timed = here.filter(pl.col("duration_s").is_not_null() & pl.lit(total_s > 0))  # none: no shares
    binding = pl.col("binding")
    memory = (pl.col("bound") == Bound.MEMORY.value) & binding.is_not_null() & (binding != COMPUTE)
    by_bound = _shares(timed, "bound", total_s)
    by_tier = _shares(timed.filter(memory), "binding", total_s)
    return DeviceView(
        device=device,
        launches=here.height,
        total_s=total_s,
        shares=tuple(sorted(((Bound(b), s) for b, s in by_bound.items() if s > 0), key=lambda i: -i[1])),
        memory_tiers=tuple(sorted(by_tier.items(), key=lambda i: -i[1])),
        costliest=ranked(mine, SortBy.TIME)[0] if mine else None,
        fix_first=fix_first(mine, total_s),
        bases=_bases(timed),
    )


def _bases(launches: pl.DataFrame) -> dict[Bound, str]:
    """Each verdict's bases among its launches, in the ladder's order: `SOL`, `roofline/SOL`."""
    return {
        Bound(bound): "/".join(word for basis, word in BASIS_WORDS.items() if basis.value in bases)
        for bound, bases in launches.group_by("bound").agg(pl.col("verdict_basis").unique()).iter_rows()
    }


def _shares(launches: pl.DataFrame, column: str, total_s: float) -> dict[str, float]:
    sums = launches.group_by(column, maintain_order=True).agg(pl.col("duration_s").truediv(total_s).sum())
    return dict(sums.iter_rows())


_NUMBER = re.compile(r"[0-9]+(?:[.,][0-9]+)*")  # ASCII digits: Python's and Polars' `\d` differ in Unicode


def _merged(texts: Iterable[tuple[str, str, float]]) -> list[tuple[str, str, float, int]]:
    """(text, template (its numbers as `#`), weight) merged by template, most weight first:
    (template, wording with differing numbers as ranges, summed weight, how many wordings)."""
    totals: dict[str, float] = {}
    wordings: dict[str, dict[str, None]] = {}  # first-seen order
    for text, key, weight in texts:
        totals[key] = totals.get(key, 0) + weight
        wordings.setdefault(key, {})[text] = None
    merged = [(k, _ranges(next(iter(w)), set(w)), totals[k], len(w)) for k, w in wordings.items()]
    return sorted(merged, key=lambda item: -item[2])


def _notes(analysis: Analysis) -> tuple[tuple[Note, ...], dict[str, int]]:
    """The distinct notes (differing only in numbers: one), most launches first; each note's number."""
    each = analysis.launches.select(pl.col("notes").list.unique(maintain_order=True)).explode("notes")
    # each distinct note's launches, in first-seen order, and its template (`_merged`)
    per_note = (
        each.drop_nulls()
        .group_by("notes", maintain_order=True)
        .len()
        .with_columns(pl.col("notes").str.replace_all(_NUMBER.pattern, "#").alias("template"))
    )
    texts, counts, templates = (per_note.get_column(c).to_list() for c in ("notes", "len", "template"))
    merged = _merged(zip(texts, templates, counts, strict=True))
    numbers = {key: i + 1 for i, (key, _, _, _) in enumerate(merged)}
    notes = tuple(
        Note(i + 1, text, int(n), " (numbers vary)" if variants > 1 else "")
        for i, (_, text, n, variants) in enumerate(merged)
    )
    return notes, {note: numbers[key] for note, key in zip(texts, templates, strict=True)}


def _ranges(first: str, wordings: set[str]) -> str:
    """A note's wording, each number that differs between its launches a range (`SM 33–40%`); else `first`."""
    slots = zip(*(_NUMBER.findall(w) for w in wordings), strict=True)  # one template: as many numbers each

    def span(_: re.Match[str]) -> str:
        texts = sorted(set(next(slots)), key=lambda text: float(text.replace(",", "")))  # `1,234`, `0.80`
        return texts[0] if len(texts) == 1 else f"{texts[0]}–{texts[-1]}"

    return _NUMBER.sub(span, first)
