"""Mine the corpus' reports for the per-clock peak of every memory-tier traffic counter, per SM or
per L2 slice, as `ncu_roof.gpus.arch.counter_peaks` holds them, and print each beside the table's figure.

Three ways a report gives a counter's peak per unit per clock:
  peak   <counter>.avg.peak_sustained (per unit), or .sum.peak_sustained / units
  pct    count / (pct_of_peak_sustained_elapsed / 100) / the unit's elapsed cycles / units
  reads  (lts__lts2xbar_cycles_active only) L2 read sectors / its pct / (L2 slice-cycles from
         lts__t_sectors' count and pct): one crossbar cycle per read sector returned
Units: SMs from device__attribute_multiprocessor_count; L2 slices from a lts__ counter's .sum/.avg,
else `arch.l2_slices` (by the memory bus). Elapsed cycles: <unit>__cycles_elapsed.avg, else
its clock x duration, else the SM's (gpc__cycles_elapsed.max) for SM counters.

usage: python scripts/mine_peaks.py [CORPUS]     (needs `pip install ncu-report`)
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ncu_roof.gpus.arch import counter_peak, counter_peaks, l2_slices

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
Value = Callable[[str], float | None]


@dataclass(frozen=True)
class Finding:
    """One counter's peak per unit per clock as one report gives it."""

    report: str
    gpu: str
    ncu_version: str
    cc: str
    counter: str
    per_clock: float
    how: str  # "peak", "pct" or "reads"


def _counters() -> dict[str, bool]:
    """Every counter the table has a peak for, sorted → whether its peak is per L2 slice."""
    per_slice = {c: p.unit == "L2 slice" for figures in counter_peaks().values() for c, p in figures.items()}
    return dict(sorted(per_slice.items()))


def _launches(path: Path) -> Iterator[tuple[Value, str]]:
    import ncu_report

    context = ncu_report.load_report(str(path))
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)

            def value(name: str, action: object = action) -> float | None:
                metric = action.metric_by_name(name)  # type: ignore[attr-defined]
                if metric is None:
                    return None
                try:
                    v = metric.value()
                except Exception:  # a metric of a kind without a value
                    return None
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    return None
                return float(v)

            name = action.metric_by_name("device__attribute_display_name")
            yield value, str(name.value()) if name is not None else "?"


def _version(path: Path) -> str:
    """The ncu version in the report's name (the corpus names its reports by it), else "?"."""
    found = re.search(r"(20\d\d\.\d+(?:\.\d+)?)", path.name)
    return found.group(1) if found else "?"


def mine_report(path: Path) -> list[Finding]:
    """Every counter peak one report gives, launch by launch (duplicates kept)."""
    out: list[Finding] = []
    for g, gpu in _launches(path):
        major, minor = (
            g("device__attribute_compute_capability_major"),
            g("device__attribute_compute_capability_minor"),
        )
        if major is None or minor is None:
            continue
        cc = f"{int(major)}.{int(minor)}"
        sms = g("device__attribute_multiprocessor_count")
        bus = g("device__attribute_global_memory_bus_width")
        duration = g("gpu__time_duration.sum")
        slices = _slices(g) or (l2_slices(bus) if bus else None)

        def cycles(unit: str, g: Value = g, duration: float | None = duration) -> float | None:
            elapsed = g(f"{unit}__cycles_elapsed.avg")
            clock = g(f"{unit}__cycles_elapsed.avg.per_second")
            if elapsed:
                return elapsed
            if clock and duration:
                return clock * duration * 1e-9
            return g("gpc__cycles_elapsed.max") if unit == "l1tex" else None

        def add(counter: str, value: float, how: str, gpu: str = gpu, cc: str = cc) -> None:
            out.append(Finding(path.name, gpu, _version(path), cc, counter, value, how))

        for counter, per_slice in _counters().items():
            base = counter.removesuffix(".sum")
            units = slices if per_slice else sms
            if not units:
                continue
            avg_peak, sum_peak = g(f"{base}.avg.peak_sustained"), g(f"{counter}.peak_sustained")
            if avg_peak:
                add(counter, avg_peak, "peak")
            elif sum_peak:
                add(counter, sum_peak / units, "peak")
            count = g(counter)
            pct = g(f"{counter}.pct_of_peak_sustained_elapsed") or g(
                f"{base}.avg.pct_of_peak_sustained_elapsed"
            )
            elapsed = cycles("lts" if per_slice else "l1tex")
            if count and pct and elapsed:
                add(counter, count / (pct / 100) / elapsed / units, "pct")
        reads = g("lts__t_sectors_srcunit_tex_op_read.sum")
        sectors, sector_pct = g("lts__t_sectors.sum"), g("lts__t_sectors.avg.pct_of_peak_sustained_elapsed")
        sector_peak = g("lts__t_sectors.avg.peak_sustained")
        xbar_pct = g("lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed")
        if reads and reads > 1e5 and sectors and sector_pct and sector_peak and xbar_pct:
            slice_cycles = sectors / (sector_pct / 100) / sector_peak
            add("lts__lts2xbar_cycles_active.sum", reads / (xbar_pct / 100) / slice_cycles, "reads")
    return out


def _slices(g: Value) -> float | None:
    """L2 slices: a lts__ counter's .sum / .avg."""
    for base in ("lts__t_sectors", "lts__cycles_elapsed", "lts__lts2xbar_cycles_active", "lts__d_sectors"):
        total, mean = g(f"{base}.sum"), g(f"{base}.avg")
        if total and mean:
            return round(total / mean)
    return None


def mine(corpus: Path) -> list[Finding]:
    return [f for path in sorted(corpus.glob("*.ncu-rep")) for f in mine_report(path)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    corpus = Path(args[0]) if args else DEFAULT_CORPUS
    if not corpus.is_dir():
        print(f"error: no corpus at {corpus}", file=sys.stderr)
        return 2
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        print("error: this script reads reports with NVIDIA's ncu_report", file=sys.stderr)
        print("hint: pip install ncu-report", file=sys.stderr)
        return 2
    seen: set[tuple[str, str, str, float]] = set()
    print("report | ncu | CC | counter | per unit per clock | how | table")
    for f in mine(corpus):
        key = (f.report, f.counter, f.how, round(f.per_clock, 2))
        if key in seen:
            continue
        seen.add(key)
        found = counter_peak(f.cc, f.counter)
        table = "-" if found is None else found[0].describe()
        print(f"{f.report} | {f.ncu_version} | {f.cc} | {f.counter} | {f.per_clock:.3f} | {f.how} | {table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
