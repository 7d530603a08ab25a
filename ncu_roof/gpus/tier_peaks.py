"""The peak of every memory-tier traffic counter, per architecture: one table (`counter_peaks()`,
read from `data/tier_peaks.toml`, which says what the figures are and where each comes from).

A tier's traffic is only ever judged against the peak of the very counter it was counted with
(`recipe.tiers`): `lts__t_sectors` against the L2 tag stage's sector peak, Nsight's
`lts__lts2xbar_cycles_active × 32` against the L2→crossbar data path's, and so on. Where a report
lacks that peak, `roofs.fill_builtin` takes it from here × the SM or L2-slice count × the clock the
launch ran at (the unit's own clock, else the SM clock: one clock per device). A figure no report
confirmed is marked unverified in the data file, and only there (`CounterPeak.verified`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ncu_roof.base.tomlfile import package_table
from ncu_roof.gpus.arch import nearest_listed

SECTOR_BYTES = 32.0  # as `recipe.Factors` (not imported: `gpus` runs without numpy)


@dataclass(frozen=True)
class CounterPeak:
    """One counter's peak: `per_clock` counter units per `unit` ("SM" or "L2 slice") per clock of
    `clock` ("l1" or "l2", as `roofs.CLOCK_COLUMNS`)."""

    per_clock: float
    unit: str
    clock: str
    source: str
    verified: bool = True
    older_ncu: tuple[str, float] | None = None  # (versions, figure) where older ncu reported another

    def describe(self) -> str:
        older = f"; {self.older_ncu[0]} reported {self.older_ncu[1]:g}" if self.older_ncu else ""
        text = f"{self.per_clock:g}/{self.unit}/clk: {self.source}{older}"
        return text if self.verified else f"{text} (unverified)"


# a counter that is another × a fixed number of bytes (lts__t_bytes = lts__t_sectors × 32)
_SAME_AS = {f"{u}__t_bytes.sum": (f"{u}__t_sectors.sum", SECTOR_BYTES) for u in ("lts", "l1tex")}
WRITEBACKS = tuple(f"l1tex__lsu_writeback_active{s}.sum" for s in ("", "_mem_lg", "_mem_lgds"))


@cache
def counter_peaks() -> dict[str, dict[str, CounterPeak]]:
    """Each listed compute capability's figures by counter (a `.sum`, as `recipe.tiers` names
    them): its own, else the table's defaults; the writeback scopes share one (`writeback`)."""
    table = package_table("tier_peaks")
    out: dict[str, dict[str, CounterPeak]] = {}
    for cc, listed in table["cc"].items():
        if "assumed_as" in listed:
            out[cc] = _unverified(out[listed["assumed_as"]], listed["assumed_as"])
            continue
        figures = {**table["default"], **listed}
        out[cc] = {
            counter: _peak(figures["writeback" if counter in WRITEBACKS else counter], unit_clock)
            for counter, unit_clock in table["counter"].items()
        }
    return out


def _peak(figure: dict[str, Any], unit_clock: dict[str, str]) -> CounterPeak:
    older = figure.get("older_ncu")
    return CounterPeak(**{**figure, **unit_clock, "older_ncu": None if older is None else tuple(older)})


def _unverified(figures: dict[str, CounterPeak], cc: str) -> dict[str, CounterPeak]:
    """Another architecture's figures (`cc`'s), assumed: every one unverified."""
    return {
        k: CounterPeak(p.per_clock, p.unit, p.clock, f"assumed as CC {cc} ({p.source})", False)
        for k, p in figures.items()
    }


def counter_peak(cc: str, counter: str) -> tuple[CounterPeak, float] | None:
    """The peak figure of `counter` (a `.sum`) on compute capability `cc`, and the bytes per
    counter unit it implies beyond the counter's own (32 for lts__t_bytes = lts__t_sectors × 32);
    None where the table has none."""
    figures = counter_peaks().get(cc)
    if figures is None:  # an unlisted revision: its major's nearest lower one, unverified
        base_cc = nearest_listed(cc, counter_peaks())
        if base_cc is None:
            return None
        figures = _unverified(counter_peaks()[base_cc], base_cc)
    base, per_unit = _SAME_AS.get(counter, (counter, 1.0))
    peak = figures.get(base)
    return None if peak is None else (peak, per_unit)


def l2_slices(memory_bus_bits: float) -> int:
    """L2 slices of a GPU by its memory bus: 4 per 32-bit GDDR channel, 1 per 64 bits of HBM
    (a bus of 1024 bits or more). Confirmed by the `.sum`/`.avg` ratio of lts__ counters in the
    corpus: T4 (256-bit) 32, RTX 2060 Max-Q (192-bit) 24, RTX 5060 Ti (128-bit) 16, A100 and H100
    PCIe (5120-bit) 80."""
    bits = int(memory_bus_bits)
    return bits // 64 if bits >= 1024 else bits // 8
