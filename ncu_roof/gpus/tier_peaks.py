"""The peak of every memory-tier traffic counter, per architecture: one table (`COUNTER_PEAKS`),
each figure per SM or per L2 slice and per clock of its unit, with its source.

A tier's traffic is only ever judged against the peak of the very counter it was counted with
(`recipe.tiers`): `lts__t_sectors` against the L2 tag stage's sector peak, Nsight's
`lts__lts2xbar_cycles_active × 32` against the L2→crossbar data path's, and so on. Where a report
lacks that peak, `roofs.fill_builtin` takes it from here × the SM or L2-slice count × the clock the
launch ran at (the unit's own clock, else the SM clock: one clock per device).

Figures are in the counter's own unit (sectors, cycles, bytes) per unit per clock; most come from
the `.peak_sustained` values that real reports carry (`<counter>.avg.peak_sustained` is per unit,
`.sum.peak_sustained` per GPU), or from a report's count ÷ `pct_of_peak_sustained_elapsed` ÷ its
elapsed cycles (`scripts/mine_peaks.py` prints them; `tests/test_tier_peaks.py` checks every
figure against every corpus report that carries it). A figure no report confirmed is marked
unverified here, and only here (`CounterPeak.verified`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SECTOR_BYTES = 32.0


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


# the counters whose figures are per L2 slice, and what their bytes are per counter unit
L2_COUNTERS = ("lts__t_sectors.sum", "lts__lts2xbar_cycles_active.sum")
_SAME_AS = {  # a counter that is another × a fixed number of bytes (lts__t_bytes = sectors × 32)
    "lts__t_bytes.sum": ("lts__t_sectors.sum", SECTOR_BYTES),
    "l1tex__t_bytes.sum": ("l1tex__t_sectors.sum", SECTOR_BYTES),
}
WRITEBACKS = tuple(f"l1tex__lsu_writeback_active{s}.sum" for s in ("", "_mem_lg", "_mem_lgds"))


def _rep(gpus: str, how: str = "peak") -> str:
    what = {
        "peak": "its .avg.peak_sustained (per unit)",
        "sum": "its .sum.peak_sustained / units",
        "pct": "count / pct_of_peak_sustained_elapsed / elapsed cycles / units",
        "reads": "L2 read sectors / this counter's pct_of_peak_sustained_elapsed, per the L2 tag stage's "
        "peak (one xbar cycle per read sector returned)",
    }[how]
    return f"ncu reports of the {gpus}: {what}"


def _sm(value: float, source: str, verified: bool = True, clock: str = "l1") -> CounterPeak:
    return CounterPeak(value, "SM", clock, source, verified)


def _slice(
    value: float, source: str, verified: bool = True, older: tuple[str, float] | None = None
) -> CounterPeak:
    return CounterPeak(value, "L2 slice", "l2", source, verified, older)


_ASSUMED_TAGS = (
    "assumed: one 128-byte tag lookup (4 sectors) per SM per clock, the L1 data path's 128 B/clk/SM "
    "(NVIDIA Volta and Ampere whitepapers); no report of this architecture carries this peak (an "
    "H200's ncu 2025.3.1 gives 16 on CC 9.0)"
)
_SHARED_DATA = "32 banks x 4 B per SM per clock (CUDA C++ Programming Guide, shared memory)"
_A100_V100 = (
    "NVIDIA A100 whitepaper: A100's L2 read bandwidth is 2.3x V100's (80 slices x 64 B x 1.41 GHz "
    "vs 64 slices x 32 B x 1.53 GHz)"
)


def _arch(
    lts_sectors: CounterPeak,
    lts2xbar: CounterPeak,
    xbar2l1tex: CounterPeak,
    writeback: CounterPeak,
    shared: CounterPeak,
    tags: CounterPeak | None = None,
) -> dict[str, CounterPeak]:
    return {
        "lts__t_sectors.sum": lts_sectors,
        "lts__lts2xbar_cycles_active.sum": lts2xbar,
        # Nsight 2023.x draws this counter's peak at the L2 clock; its .peak_sustained is per SM
        "l1tex__m_xbar2l1tex_read_bytes.sum": xbar2l1tex,
        "l1tex__t_sectors.sum": tags or _sm(4, _ASSUMED_TAGS, verified=False),
        **{w: writeback for w in WRITEBACKS},
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": shared,
        "sm__sass_data_bytes_mem_shared.sum": _sm(128, _SHARED_DATA),
    }


def _unverified(figures: Mapping[str, CounterPeak], cc: str) -> dict[str, CounterPeak]:
    """Another architecture's figures, assumed for `cc`: every one unverified."""
    return {
        k: CounterPeak(p.per_clock, p.unit, p.clock, f"assumed as CC {cc} ({p.source})", False)
        for k, p in figures.items()
    }


_T4 = "Tesla T4, GTX 1660 SUPER"
_GA10X = "A40, A10G, RTX 3070"
_TURING = _arch(
    _slice(1, _rep(_T4)),
    _slice(1, _rep("Tesla T4", "reads")),
    _sm(32, _rep(_T4, "pct"), clock="l2"),
    _sm(1, _rep("Tesla T4, GTX 1660 SUPER", "pct")),
    _sm(1, _rep("Tesla T4, GTX 1660 SUPER", "pct")),
)
_VOLTA = _arch(
    _slice(1, _A100_V100),
    _slice(1, f"assumed one 32 B return per slice per clock ({_A100_V100})", verified=False),
    _sm(32, "assumed as CC 7.5 (Turing)", verified=False, clock="l2"),
    _sm(1, "NVIDIA Volta whitepaper: 128 B/clk/SM L1 data path (no corpus report carries it)", False),
    _sm(1, "NVIDIA Volta whitepaper: 32 banks x 4 B/clk/SM shared memory (no corpus report carries it)"),
)
_GA100 = _arch(
    _slice(3, _rep("A100 (ncu 2022.4, 2025.1)"), older=("ncu 2020.3", 2.0)),
    _slice(2, _rep("A100 SXM4 40GB")),
    _sm(64, _rep("A100 PCIe and SXM4", "pct"), clock="l2"),
    _sm(1, _rep("A100 SXM4 40GB", "sum")),
    _sm(1, _rep("A100 SXM4 40GB", "pct")),
)
_GA10 = _arch(
    _slice(1, _rep("A40, RTX 3070")),
    _slice(1, _rep("RTX 3070", "reads")),
    _sm(32, _rep("A10G", "sum") + "; RTX 3070: count / pct", clock="l2"),
    _sm(1, _rep(_GA10X, "pct")),
    _sm(1, _rep("A40, RTX 3070", "pct")),
)
_AD10 = _arch(
    _slice(2, _rep("RTX 4090")),
    _slice(2, _rep("RTX 4090", "reads")),
    _sm(32, _rep("RTX 4090", "pct"), clock="l2"),
    _sm(1, _rep("RTX 4090", "pct")),
    _sm(1, _rep("RTX 4090", "pct")),
)
_H200 = "H200 SXM (ncu 2025.3.1, fixtures/h200/h200_peaks_raw.csv)"
_GH100 = _arch(
    _slice(3, _rep(f"H100 PCIe and the {_H200}")),
    _slice(2, _rep(f"H100 PCIe and the {_H200}")),
    _sm(128, _rep("H100 PCIe", "pct") + f"; the {_H200}: its .avg.peak_sustained", clock="l2"),
    _sm(1, _rep(f"H100 PCIe and the {_H200}", "sum")),
    _sm(1, _rep("H100 PCIe", "pct") + f"; the {_H200}: its .avg.peak_sustained"),
    # four 128-byte tag lookups per SM per clock on Hopper, where earlier ones are assumed at one
    _sm(16, _rep(_H200)),
)

COUNTER_PEAKS: dict[str, dict[str, CounterPeak]] = {
    "7.0": _VOLTA,
    "7.2": _unverified(_VOLTA, "7.0"),
    "7.5": _TURING,
    "8.0": _GA100,
    "8.6": _GA10,
    "8.7": _unverified(_GA10, "8.6"),
    "8.9": _AD10,
    "9.0": _GH100,
    "10.0": _unverified(_GH100, "9.0"),
    "12.0": _unverified(_AD10, "8.9"),
}


def counter_peak(cc: str, counter: str) -> tuple[CounterPeak, float] | None:
    """The peak figure of `counter` (a `.sum`, as `recipe.tiers` names them) on compute capability
    `cc`, and the bytes per counter unit it implies beyond the counter's own (32 for
    lts__t_bytes, which is lts__t_sectors × 32); None where the table has none."""
    figures = COUNTER_PEAKS.get(cc)
    if figures is None:  # an unlisted revision: its major's nearest lower one, unverified
        try:
            major, minor = (int(p) for p in cc.split(".")[:2])
        except ValueError:
            return None
        lower = [k for k in COUNTER_PEAKS if int(k.split(".")[0]) == major and int(k.split(".")[1]) < minor]
        if not lower:
            return None
        base_cc = max(lower, key=lambda k: int(k.split(".")[1]))
        figures = _unverified(COUNTER_PEAKS[base_cc], base_cc)
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
