"""Bytes per memory tier: every definition of its traffic (Nsight's per version, counted, shared),
each with the roof of the very same counter, and the per-row choice among them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import numpy.typing as npt

from ncu_roof.base.metrics import (
    CC_MAJOR,
    CC_MINOR,
    CLOCKS,
    DRAM_RATES,
    DRAM_READ_WRITE,
    DRAM_SECTORS,
    L1_SECTOR_METRICS,
    SHARED_CONFLICTS,
    SHARED_OPS,
    SHARED_REQUESTS,
    SHARED_SASS_BYTES,
    SHARED_WAVEFRONTS,
    VERSION_MARKER,
    counter_forms,
)
from ncu_roof.base.ncu import version_tuple
from ncu_roof.base.vocabulary import TrafficDefinition
from ncu_roof.recipe.frame import (
    FACTORS,
    Flags,
    Formula,
    MetricFrame,
    Numbers,
    Texts,
    fillna,
    first_available,
)

LOWER_BOUND = "a lower bound"  # in a bytes label: the tier's traffic is only part of it
OTHER_NSIGHT = "nsight-other"  # the kind of another Nsight version's measure


@dataclass(frozen=True)
class TierDefinition:
    """One definition of a tier's traffic, with the roof of the very same counter."""

    kind: str  # "nsight", "counted" or "shared"
    label: Texts  # per row: the formula of the bytes
    bytes: Numbers
    bandwidth_byte_per_s: Numbers
    roof_label: Texts  # per row: how the roof was had (peak_sustained or pct of peak)
    counter: Texts  # per row: the counter whose peak is the roof (`base*scale`); NaN without bytes
    # (where no definition has bytes, `pick_tier` names the counter Nsight draws)

    def columns(self) -> list[np.ndarray]:
        return [self.label, self.bytes, self.bandwidth_byte_per_s, self.roof_label, self.counter]


def _counter_of(m: MetricFrame, name: str, nbytes: Numbers) -> Texts:
    """`name` (a counter, or a label) on the rows with bytes, NaN on the others (one shared text;
    the shared all-NaN labels where no row has bytes, as most definitions of a report)."""
    has = ~np.isnan(nbytes)
    if not has.any():
        return m.no_labels
    return np.array([np.nan, name], dtype=object)[has.astype(np.intp)]


def _measured(
    m: MetricFrame, duration: Numbers, kind: str, base: str, s: float, clock_name: str, rated: bool = True
) -> TierDefinition:
    """A tier counter, `base` (a `.sum` of `metrics.TIER_MEASURES`) × `s` bytes: bytes (count, else rate ×
    time if `rated`) and its own peak rate: `.peak_sustained` × its clock, else achieved rate ÷
    (`.pct_of_peak_sustained_elapsed` / 100), not from a hundredths-rounded percentage under 1 % (a CSV's 0.08
    is 0.075–0.085: ±6 %). A `derived__…` rate or peak (the same in bytes, in some reports) stands in."""
    forms = counter_forms(base)
    if not any(m.has(form) for form in forms):  # a counter the report lacks
        return _no_rows(m, kind)
    # count, rate, peak, pct of peak (the .sum's, else the .avg's: the .avg's percentage of its
    # per-unit peak is the .sum's of the sum of them), then the derived rate and peak if any
    _, rate_name, peak_name, pct_name, avg_pct_name, *derived = forms
    name = base if s == 1 else f"{base}*{s:g}"
    count = m(base) * s
    rates: list[Formula] = [(f"{rate_name}*{s:g}", m(rate_name) * s), *((d, m(d)) for d in derived[:1])]
    peaks: list[Formula] = [(f"{name}.peak_sustained", m(peak_name) * s), *((d, m(d)) for d in derived[1:])]
    achieved = fillna(first_available(rates)[0], count / duration)
    by_time = [(f"rate*time:{label}".removesuffix("*1"), r * duration) for label, r in rates] if rated else []
    nbytes, label = first_available([(f"counter:{name}", count), *by_time])
    pct = fillna(m(pct_name), m(avg_pct_name))
    coarse = (pct < 1) & (np.abs(pct * 100 - np.rint(pct * 100)) < 1e-6)  # not a report's 0.0812…
    by_pct = np.where((pct > 0) & ~coarse, achieved / (pct / 100.0), np.nan)
    roofs = [(f"{label} x {clock_name}", p * m(clock_name)) for label, p in peaks]
    roof, roof_label = first_available([*roofs, (f"{name} rate / pct_of_peak_sustained_elapsed", by_pct)])
    return TierDefinition(kind, label, nbytes, roof, roof_label, _counter_of(m, name, nbytes))


def _fixed(
    m: MetricFrame, label: str, nbytes: Numbers, roof_of: TierDefinition, counter: str
) -> TierDefinition:
    """Another formula for the traffic of `counter`, judged against `roof_of`'s roof (that of the
    same counter, or none where the report holds no peak of it): DRAM read + write = dram__bytes."""
    labels, counters = (_counter_of(m, text, nbytes) for text in (label, counter))
    return replace(roof_of, label=labels, bytes=nbytes, counter=counters)


def _no_rows(m: MetricFrame, kind: str) -> TierDefinition:
    """A definition no row has (its counter absent): the shared read-only all-NaN arrays."""
    return TierDefinition(kind, m.no_labels, m.nan, m.nan, m.no_labels, m.no_labels)


def _within(m: MetricFrame, d: TierDefinition, rows: Flags) -> TierDefinition:
    """`d` on `rows` only (NaN on the others)."""
    if rows.all():
        return d
    if not rows.any():
        return _no_rows(m, d.kind)
    return TierDefinition(d.kind, *(np.where(rows, x, np.nan) for x in d.columns()))


def measured_era(m: MetricFrame) -> str | None:
    """The Nsight roofline of a report whose ncu version the input does not say (a CSV), by what it holds:
    "2022" when it has device attributes but not `device__attribute_cluster_launch`, which ncu reports from
    2023.1 on (every corpus report of ncu ≤ 2022.4 lacks it, every later one has it, and a re-export keeps the
    report's attributes), nor a later Nsight's L2 measure; None otherwise (newest first)."""

    def held(name: str) -> bool:
        return not np.isnan(m(name)).all()

    # the L2 measures of the 2023 and 2024 roofline sections (their percentages alone are in
    # every --set full of older versions too)
    xbar = counter_forms("lts__lts2xbar_cycles_active.sum")  # count, rate, peak, …, derived rate (5)
    newer = [VERSION_MARKER, *xbar[:3], xbar[5], "l1tex__m_xbar2l1tex_read_bytes.sum.peak_sustained"]
    return "2022" if held(CC_MAJOR) and not any(held(name) for name in newer) else None


def nsight_era(ncu_version: str | None) -> str | None:
    """Which Nsight roofline a report's tiers follow: "2022" (≤ 2022.x), "2023" or "2024" (≥ 2024.1)."""
    if not ncu_version:
        return None
    version = version_tuple(ncu_version)
    return "2022" if version < (2023,) else "2023" if version < (2024, 1) else "2024"


def tier_candidates(
    m: MetricFrame, duration: Numbers, era: str | None, traffic: TrafficDefinition
) -> dict[str, tuple[str, list[TierDefinition], Texts]]:
    """Per tier: the definition asked, candidates by preference, per row the roof counter if no traffic."""
    lts, l1, dram_clk = (CLOCKS[u] for u in ("lts", "l1tex", "dram"))
    sector, wb = FACTORS.sector_bytes, FACTORS.l1_writeback_bytes_per_cycle
    xbar = FACTORS.l2_xbar_bytes_per_cycle

    measure, asked = partial(_measured, m, duration), traffic.value
    # DRAM: both definitions count dram__bytes (= read + write), with its own peak
    dram_bytes = measure(asked, "dram__bytes.sum", 1.0, dram_clk, rated=False)

    dram_sum = partial(_fixed, m, roof_of=dram_bytes, counter="dram__bytes.sum")
    read, write = DRAM_READ_WRITE
    read_sectors, write_sectors = DRAM_SECTORS
    read_rate, write_rate = DRAM_RATES
    dram = [
        dram_bytes,
        dram_sum(f"counter:{read}+{write}", m(read) + m(write)),
        dram_sum(
            f"counter:({read_sectors}+{write_sectors})*{sector:g}",
            (m(read_sectors) + m(write_sectors)) * sector,
        ),
        measure(asked, "dram__bytes.sum", 1.0, dram_clk),
        dram_sum(f"rate*time:{read_rate}+{write_rate}", (m(read_rate) + m(write_rate)) * duration),
        # one direction alone: DRAM traffic still, a lower bound (the label says so; so does a note)
        *(
            dram_sum(f"{kind}:{name} ({other} not collected: {LOWER_BOUND})", m(name) * per)
            for kind, names, per in (("counter", DRAM_READ_WRITE, 1.0), ("rate*time", DRAM_RATES, duration))
            for name, other in zip(names, ("write", "read"), strict=True)
        ),
    ]

    l2_nsight = {
        "2024": measure("nsight", "lts__lts2xbar_cycles_active.sum", xbar, lts),
        "2023": measure("nsight", "l1tex__m_xbar2l1tex_read_bytes.sum", 1.0, lts),
        # lts__t_bytes is lts__t_sectors x 32: a report with only the sectors has the same measure
        "2022": _first_with_bytes(
            measure("nsight", "lts__t_bytes.sum", 1.0, lts),
            [measure("nsight", "lts__t_sectors.sum", sector, lts)],
        )[0],
    }
    l2_counted = [
        measure("counted", "lts__t_sectors.sum", sector, lts),
        measure("counted", "lts__t_bytes.sum", 1.0, lts),
    ]

    cc = 10 * m(CC_MAJOR) + m(CC_MINOR)
    # each scope on the compute capabilities Nsight draws it on; any scope where the CC is unknown
    scopes = (("_mem_lgds", cc >= 90), ("_mem_lg", (cc >= 75) & (cc <= 89)), ("", cc <= 72))
    writeback, *others = (
        _within(m, measure("nsight", f"l1tex__lsu_writeback_active{s}.sum", wb, l1), drawn | np.isnan(cc))
        for s, drawn in scopes
    )
    l1_writeback = _first_with_bytes(writeback, others)[0]
    l1_nsight = {
        "2024": l1_writeback,
        "2023": l1_writeback,
        "2022": measure("nsight", "l1tex__t_bytes.sum", 1.0, l1),
    }
    # the tag stage's built-in sector peak is assumed but on CC 9.0 (`data/tier_peaks.toml`)
    t_sectors = measure("counted", "l1tex__t_sectors.sum", sector, l1)
    global_ld, global_st, local_ld, local_st = (m(name) for name in L1_SECTOR_METRICS)
    l1_counted = [
        measure("counted", "l1tex__t_bytes.sum", 1.0, l1),
        t_sectors,
        _fixed(
            m,
            f"counter:l1tex__t_sectors_pipe_lsu_mem_{{global,local}}_op_{{ld,st}}.sum*{sector:g}",
            (global_ld + global_st + fillna(local_ld, 0.0) + fillna(local_st, 0.0)) * sector,
            t_sectors,
            f"l1tex__t_sectors.sum*{sector:g}",
        ),
    ]

    wavefront = FACTORS.shared_wavefront_bytes
    pipe = measure("shared", f"{SHARED_WAVEFRONTS}.sum", wavefront, l1)
    shared = [
        # the parent metric also counts wavefronts that are not shared-memory instructions (it is
        # non-zero for kernels without any): the bytes come from the per-instruction children,
        # the roof from the parent (the same data pipe)
        _fixed(
            m,
            f"counter:{SHARED_WAVEFRONTS}_op_{{ld,st,atom}}.sum*{wavefront:g}",
            (m(SHARED_OPS[0]) + m(SHARED_OPS[1]) + fillna(m(SHARED_OPS[2]), 0.0)) * wavefront,
            pipe,
            f"{SHARED_WAVEFRONTS}.sum*{wavefront:g}",
        ),
        _fixed(
            m, f"counter:{SHARED_SASS_BYTES}", m(SHARED_SASS_BYTES), _no_rows(m, "shared"), SHARED_SASS_BYTES
        ),
    ]

    def ordered(by_era: dict[str, TierDefinition], counted: list[TierDefinition]) -> list[TierDefinition]:
        """The report's own Nsight measure (any, newest first, when the version is unknown),
        then another version's, then counted traffic; counted first under `counted`."""
        eras = [era] if era else ["2024", "2023", "2022"]
        own = list({id(by_era[e]): by_era[e] for e in eras}.values())  # each once (L1: 2023 is 2024)
        others = [replace(d, kind=OTHER_NSIGHT) for d in by_era.values() if all(d is not o for o in own)]
        if traffic is TrafficDefinition.COUNTED:
            return [*counted, *own, *others]
        return [*own, *others, *counted]

    # a launch without traffic on a tier takes the roof of the counter Nsight (≥ 2024.1) draws there
    # (the writeback scope of its CC; `_mem_lg` where the CC is unknown): for the device's roofs
    drawn_l1 = np.full(m.rows, np.nan, dtype=object)
    for s, drawn in scopes:
        drawn_l1[drawn | (s == "_mem_lg") & np.isnan(cc)] = f"l1tex__lsu_writeback_active{s}.sum*{wb:g}"

    everywhere = partial(np.full, m.rows, dtype=object)
    xbar_bytes = everywhere(f"lts__lts2xbar_cycles_active.sum*{xbar:g}")
    return {
        "dram": (asked, dram, everywhere("dram__bytes.sum")),
        "l2": (asked, ordered(l2_nsight, l2_counted), xbar_bytes),
        "l1": (asked, ordered(l1_nsight, l1_counted), drawn_l1),
        "shared": ("shared", shared, everywhere(f"{SHARED_WAVEFRONTS}.sum*{wavefront:g}")),
    }


def _first_with_bytes(
    start: TierDefinition, definitions: list[TierDefinition]
) -> tuple[TierDefinition, npt.NDArray[np.intp]]:
    """Per row, the columns of the first of `definitions` with bytes (`start`'s where none has
    them), and which it was (`len(definitions)`: none); objects (None, NaN, labels) kept."""
    columns = [column.copy() for column in start.columns()]
    which = np.full(len(start.bytes), len(definitions))
    for i, d in enumerate(definitions):
        take = np.isnan(columns[1]) & ~np.isnan(d.bytes)
        if take.any():  # most alternatives fill no row at all
            for column, values in zip(columns, d.columns(), strict=True):
                column[take] = values[take]
            which[take] = i
    return TierDefinition(start.kind, *columns), which


_KIND_WORDS = {
    "nsight": "the measure Nsight draws",
    OTHER_NSIGHT: "the measure another Nsight version draws",
    "counted": "counted traffic",
}


def pick_tier(
    m: MetricFrame, asked: str, definitions: list[TierDefinition], drawn: Texts, era: str | None
) -> tuple[TierDefinition, Texts]:
    """Per row: the first definition with bytes, whether the report holds its roof or not (the
    built-in table holds every counter's peak: `gpus.arch.counter_peaks`), so every launch of a run
    is counted by one measure, never judged against another counter's peak; and which definition
    ("nsight", "counted", "shared", "closest to nsight: counted", …; NaN where none: `drawn`'s counter)."""
    picked, which = _first_with_bytes(replace(_no_rows(m, asked), counter=drawn), definitions)
    unknown = asked == TrafficDefinition.NSIGHT.value and era is None
    words = "nsight (ncu version unknown: chosen by the metrics present)" if unknown else asked
    texts = [
        words if d.kind == asked else f"closest to {asked}: {_KIND_WORDS.get(d.kind, d.kind)}"
        for d in definitions
    ]
    return picked, np.array([*texts, np.nan], dtype=object)[which]


def shared_bank_conflicts(m: MetricFrame) -> tuple[Numbers, Numbers]:
    """Shared loads and stores: wavefronts per request, and the percentage of their wavefronts
    that are bank conflicts (Nsight's SharedMemoryConflicts rule: its counters, ldmatrix requests
    0 where not collected); NaN where a counter is missing or no request was made."""
    requests = m(SHARED_REQUESTS[0]) + m(SHARED_REQUESTS[1]) + fillna(m(SHARED_REQUESTS[2]), 0.0)
    wavefronts = m(SHARED_OPS[0]) + m(SHARED_OPS[1])
    conflicts = m(SHARED_CONFLICTS[0]) + m(SHARED_CONFLICTS[1])
    made = requests > 0  # (x/0 is silent under `normalize_columns`' errstate)
    per_request = np.where(made, wavefronts / requests, np.nan)
    return per_request, np.where(made & (wavefronts > 0), 100.0 * conflicts / wavefronts, np.nan)
