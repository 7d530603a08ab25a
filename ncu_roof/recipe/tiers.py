"""Bytes per memory tier: every definition of its traffic (Nsight's per version, counted, shared),
each with the roof of the very same counter, and the per-row choice among them."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ncu_roof.base.metrics import (
    CC_MAJOR,
    CC_MINOR,
    CLOCKS,
    DRAM_RATES,
    DRAM_READ_WRITE,
    DRAM_SECTORS,
    L1_SECTOR_METRICS,
    MEASURE_DERIVED,
    SHARED_CONFLICTS,
    SHARED_OPS,
    SHARED_REQUESTS,
    SHARED_SASS_BYTES,
    SHARED_WAVEFRONTS,
    VERSION_MARKER,
    counter_forms,
)
from ncu_roof.base.ncu import version_tuple
from ncu_roof.base.traffic import TrafficDefinition
from ncu_roof.recipe.frame import (
    Factors,
    Flags,
    Formula,
    MetricFrame,
    Numbers,
    Texts,
    choose,
    fillna,
    labels_of,
)
from ncu_roof.recipe.tier_pick import OTHER_NSIGHT, TierColumns

LOWER_BOUND = "a lower bound"  # in a bytes label: the tier's traffic is only part of it
DRAM_COUNTER = "dram__bytes.sum"


@dataclass(frozen=True)
class _Measure:
    """One counter of a tier's traffic: `base` (a `.sum` of `metrics.TIER_MEASURES`) × `scale`
    bytes, its peak at `clock`; `derived` is the same quantity already in bytes (`derived__…`),
    as some reports store it."""

    base: str
    scale: float
    clock: str

    @property
    def derived(self) -> str | None:
        return MEASURE_DERIVED[self.base]

    def name(self) -> str:
        return self.base if self.scale == 1 else f"{self.base}*{self.scale:g}"

    def inputs(self) -> tuple[str, ...]:
        """The metrics bytes and roof are computed from (the clock only scales a peak)."""
        return counter_forms(self.base)


@dataclass(frozen=True)
class TierDefinition:
    """One definition of a tier's traffic, with the roof of the very same counter."""

    kind: str  # "nsight", "counted" or "shared"
    label: Texts  # per row: the formula of the bytes
    bytes: Numbers
    bandwidth_byte_per_s: Numbers
    roof_label: Texts  # per row: how the roof was had (peak_sustained or pct of peak)
    counter: Texts  # per row with bytes: the counter whose peak is the roof (`base*scale`), NaN else


def _counter_of(m: MetricFrame, name: str, nbytes: Numbers) -> Texts:
    """`name` on the rows with bytes, NaN on the others (one shared text; the shared all-NaN
    labels where no row has bytes, as most definitions of a report)."""
    has = ~np.isnan(nbytes)
    if not has.any():
        return m.no_labels
    counter: Texts = np.array([np.nan, name], dtype=object)[has.astype(np.intp)]
    return counter


def _measured(
    m: MetricFrame, duration: Numbers, measure: _Measure, kind: str, rated: bool = True
) -> TierDefinition:
    """Bytes (count, else rate × time unless `rated` is False) and the counter's own peak rate:
    `.peak_sustained` × its clock, else achieved rate ÷ (`.pct_of_peak_sustained_elapsed` / 100)."""
    if not any(m.has(name) for name in measure.inputs()):  # a counter the report lacks
        return _no_rows(m, kind)
    s = measure.scale
    base, derived, clock = measure.base, measure.derived, m(measure.clock)
    count = m(base) * s
    rates: list[Formula] = [(f"{base}.per_second*{s:g}", m(f"{base}.per_second") * s)]
    peaks: list[Formula] = [(f"{measure.name()}.peak_sustained", m(f"{base}.peak_sustained") * s)]
    if derived is not None:
        rates.append((f"{derived}.per_second", m(f"{derived}.per_second")))
        peaks.append((f"{derived}.peak_sustained", m(f"{derived}.peak_sustained")))
    rate, rate_chosen = choose(rates)
    peak, peak_chosen = choose(peaks)
    nbytes, bytes_chosen = choose(
        [(f"counter:{measure.name()}", count), ("rate*time:", rate * duration if rated else m.nan)]
    )
    # labels as codes into a few texts: rate × time says which rate, a peak at which clock
    rate_labels = [f"rate*time:{label}" for label in labels_of(rates)[1:]]
    texts = [np.nan, *(t.removesuffix("*1") for t in (f"counter:{measure.name()}", *rate_labels))]
    codes = np.where(bytes_chosen == 2, 1 + rate_chosen, bytes_chosen)
    label: Texts = np.array(texts, dtype=object)[codes]
    # the .avg's percentage of its per-unit peak is the .sum's of the sum of them
    pct = fillna(
        m(f"{base}.pct_of_peak_sustained_elapsed"),
        m(f"{base.removesuffix('.sum')}.avg.pct_of_peak_sustained_elapsed"),
    )
    achieved = fillna(rate, count / duration)
    by_pct = np.where(pct > 0, achieved / (pct / 100.0), np.nan)
    roof, roof_chosen = choose([("peak", peak * clock), ("pct", by_pct)])
    peak_texts = [f"{label} x {measure.clock}" for label in labels_of(peaks)[1:]]
    texts = [np.nan, *peak_texts, f"{measure.name()} rate / pct_of_peak_sustained_elapsed"]
    codes = np.where(roof_chosen == 1, peak_chosen, np.where(roof_chosen == 2, 1 + len(peaks), 0))
    roof_label: Texts = np.array(texts, dtype=object)[codes]
    return TierDefinition(kind, label, nbytes, roof, roof_label, _counter_of(m, measure.name(), nbytes))


def _fixed(
    m: MetricFrame, label: str, nbytes: Numbers, roof_of: TierDefinition, kind: str, counter: str
) -> TierDefinition:
    """Another formula for the traffic of `counter`, judged against `roof_of`'s roof (that of the
    same counter, or none where the report holds no peak of it): DRAM read + write = dram__bytes."""
    texts = np.array([np.nan, label], dtype=object)
    labels: Texts = texts[(~np.isnan(nbytes)).astype(np.intp)]
    roof = roof_of.bandwidth_byte_per_s
    return TierDefinition(kind, labels, nbytes, roof, roof_of.roof_label, _counter_of(m, counter, nbytes))


def _no_rows(m: MetricFrame, kind: str) -> TierDefinition:
    """A definition no row has (its counter absent): the shared read-only all-NaN arrays."""
    return TierDefinition(kind, m.no_labels, m.nan, m.nan, m.no_labels, m.no_labels)


def _within(m: MetricFrame, d: TierDefinition, rows: Flags) -> TierDefinition:
    """`d` on `rows` only (NaN on the others)."""
    if rows.all():
        return d
    if not rows.any():
        return _no_rows(m, d.kind)
    label, roof_label, counter = (np.where(rows, x, np.nan) for x in (d.label, d.roof_label, d.counter))
    nbytes, roof = (np.where(rows, x, np.nan) for x in (d.bytes, d.bandwidth_byte_per_s))
    return TierDefinition(d.kind, label, nbytes, roof, roof_label, counter)


def measured_era(m: MetricFrame) -> str | None:
    """The Nsight roofline of a report whose ncu version the input does not say (a CSV), by what
    it holds: "2022" when it has device attributes but not `device__attribute_cluster_launch`,
    which ncu reports from 2023.1 on (every corpus report of ncu ≤ 2022.4 lacks it, every later
    one has it, and a re-export keeps the report's attributes), nor a later Nsight's L2 measure;
    None otherwise (newest first)."""
    attributes = bool((~np.isnan(m(CC_MAJOR))).any())
    # the L2 measures of the 2023 and 2024 roofline sections (their percentages alone are in
    # every --set full of older versions too)
    xbar = "lts__lts2xbar_cycles_active.sum"
    newer = [VERSION_MARKER, xbar, f"{xbar}.per_second", f"{xbar}.peak_sustained"]
    newer += [
        "derived__lts__lts2xbar_bytes.sum.per_second",
        "l1tex__m_xbar2l1tex_read_bytes.sum.peak_sustained",
    ]
    if attributes and not any(bool((~np.isnan(m(name))).any()) for name in newer):
        return "2022"
    return None


def nsight_era(ncu_version: str | None) -> str | None:
    """Which Nsight roofline a report's tiers follow: "2022" (≤ 2022.x), "2023" or "2024" (≥ 2024.1)."""
    if not ncu_version:
        return None
    version = version_tuple(ncu_version)
    if version < (2023,):
        return "2022"
    return "2023" if version < (2024, 1) else "2024"


def _writeback(cc: Numbers, scope: str) -> Flags:
    """Rows whose compute capability draws the L1 writeback of `scope` ("", "_mem_lg", "_mem_lgds")."""
    return {"": cc <= 72, "_mem_lg": (cc >= 75) & (cc <= 89), "_mem_lgds": cc >= 90}[scope]


def tier_candidates(
    m: MetricFrame, duration: Numbers, f: Factors, era: str | None, traffic: TrafficDefinition
) -> dict[str, tuple[str, list[TierDefinition]]]:
    """Per tier: the definition asked for, and its candidates in order of preference."""
    lts, l1, dram_clk = (CLOCKS[u] for u in ("lts", "l1tex", "dram"))
    sector, xbar, wb = f.sector_bytes, f.l2_xbar_bytes_per_cycle, f.l1_writeback_bytes_per_cycle

    def measure(kind: str, base: str, scale: float, clock: str, rated: bool = True) -> TierDefinition:
        return _measured(m, duration, _Measure(base, scale, clock), kind, rated)

    asked = traffic.value
    # DRAM: both definitions count dram__bytes (= read + write), with its own peak
    dram_bytes = measure(asked, "dram__bytes.sum", 1.0, dram_clk, rated=False)
    (read, write), (read_sectors, write_sectors), (read_rate, write_rate) = (
        DRAM_READ_WRITE,
        DRAM_SECTORS,
        DRAM_RATES,
    )
    dram = [
        dram_bytes,
        _fixed(m, f"counter:{read}+{write}", m(read) + m(write), dram_bytes, asked, DRAM_COUNTER),
        _fixed(
            m,
            f"counter:({read_sectors}+{write_sectors})*{sector:g}",
            (m(read_sectors) + m(write_sectors)) * sector,
            dram_bytes,
            asked,
            DRAM_COUNTER,
        ),
        measure(asked, "dram__bytes.sum", 1.0, dram_clk),
        _fixed(
            m,
            f"rate*time:{read_rate}+{write_rate}",
            (m(read_rate) + m(write_rate)) * duration,
            dram_bytes,
            asked,
            DRAM_COUNTER,
        ),
        # one direction alone: DRAM traffic still, a lower bound (the label says so; so does a note)
        *(
            _fixed(
                m,
                f"{kind}:{name} ({other} not collected: {LOWER_BOUND})",
                values,
                dram_bytes,
                asked,
                DRAM_COUNTER,
            )
            for kind, name, other, values in (
                ("counter", read, "write", m(read)),
                ("counter", write, "read", m(write)),
                ("rate*time", read_rate, "write", m(read_rate) * duration),
                ("rate*time", write_rate, "read", m(write_rate) * duration),
            )
        ),
    ]

    l2_nsight = {
        "2024": measure("nsight", "lts__lts2xbar_cycles_active.sum", xbar, lts),
        "2023": measure("nsight", "l1tex__m_xbar2l1tex_read_bytes.sum", 1.0, lts),
        # lts__t_bytes is lts__t_sectors x 32: a report with only the sectors has the same measure
        "2022": _first_of(
            [
                measure("nsight", "lts__t_bytes.sum", 1.0, lts),
                measure("nsight", "lts__t_sectors.sum", sector, lts),
            ]
        ),
    }
    l2_counted = [
        measure("counted", "lts__t_sectors.sum", sector, lts),
        measure("counted", "lts__t_bytes.sum", 1.0, lts),
    ]

    cc = 10 * m(CC_MAJOR) + m(CC_MINOR)
    writebacks = []
    for scope in ("_mem_lgds", "_mem_lg", ""):
        d = measure("nsight", f"l1tex__lsu_writeback_active{scope}.sum", wb, l1)
        # the scope Nsight draws on this compute capability; any scope where the CC is unknown
        writebacks.append(_within(m, d, _writeback(cc, scope) | np.isnan(cc)))
    l1_writeback = _first_of(writebacks)
    l1_nsight = {
        "2024": l1_writeback,
        "2023": l1_writeback,
        "2022": measure("nsight", "l1tex__t_bytes.sum", 1.0, l1),
    }
    # the built-in 128 B/SM/clk is the writeback's and the shared data pipe's peak (confirmed by
    # the reports); the tag stage's sector peak is not confirmed, so it gets no built-in roof
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
            "counted",
            f"l1tex__t_sectors.sum*{sector:g}",
        ),
    ]

    wavefront = f.shared_wavefront_bytes
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
            "shared",
            f"{SHARED_WAVEFRONTS}.sum*{wavefront:g}",
        ),
        _fixed(
            m,
            f"counter:{SHARED_SASS_BYTES}",
            m(SHARED_SASS_BYTES),
            _no_rows(m, "shared"),
            "shared",
            SHARED_SASS_BYTES,
        ),
    ]

    def ordered(by_era: dict[str, TierDefinition], counted: list[TierDefinition]) -> list[TierDefinition]:
        """The report's own Nsight measure (any, newest first, when the version is unknown),
        then another version's, then counted traffic; counted first under `counted`."""
        own: list[TierDefinition] = []
        for e in [era] if era else ["2024", "2023", "2022"]:
            if all(by_era[e] is not d for d in own):
                own.append(by_era[e])
        others = [replace(d, kind=OTHER_NSIGHT) for d in by_era.values() if all(d is not o for o in own)]
        if traffic is TrafficDefinition.COUNTED:
            return [*counted, *own, *others]
        return [*own, *others, *counted]

    return {
        "dram": (asked, dram),
        "l2": (asked, ordered(l2_nsight, l2_counted)),
        "l1": (asked, ordered(l1_nsight, l1_counted)),
        "shared": ("shared", shared),
    }


def _first_of(definitions: list[TierDefinition]) -> TierDefinition:
    """Row-wise merge of alternatives of one definition (the first with bytes wins per row)."""
    first = definitions[0]
    merged = TierColumns.of(first)
    for d in definitions[1:]:
        merged.take(np.isnan(merged.nbytes) & ~np.isnan(d.bytes), d)
    return TierDefinition(
        first.kind, merged.label, merged.nbytes, merged.roof, merged.roof_label, merged.counter
    )


def shared_bank_conflicts(m: MetricFrame) -> tuple[Numbers, Numbers]:
    """Shared loads and stores: wavefronts per request, and the percentage of their wavefronts
    that are bank conflicts (Nsight's SharedMemoryConflicts rule: its counters, ldmatrix requests
    0 where not collected); NaN where a counter is missing or no request was made."""
    requests = m(SHARED_REQUESTS[0]) + m(SHARED_REQUESTS[1]) + fillna(m(SHARED_REQUESTS[2]), 0.0)
    wavefronts = m(SHARED_OPS[0]) + m(SHARED_OPS[1])
    conflicts = m(SHARED_CONFLICTS[0]) + m(SHARED_CONFLICTS[1])
    made = requests > 0
    per_request = np.where(made, wavefronts / np.where(made, requests, 1.0), np.nan)
    pct = np.where(
        made & (wavefronts > 0), 100.0 * conflicts / np.where(wavefronts > 0, wavefronts, 1.0), np.nan
    )
    return per_request, np.where(np.isnan(per_request), np.nan, pct)
