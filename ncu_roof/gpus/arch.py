"""Per-architecture figures, keyed by compute capability, each with its source: one type (`Arch`),
one table (`archs()`, from `data/archs.toml`, which says what each figure is for). The FLOP figures
are per SM per clock (`specs.Hardware` scales them). A `Figure` or `PathScale` with `verified=False`
is derived or unverified on real hardware and says so wherever it is shown. Beside them, the peak
of every memory-tier traffic counter per architecture (`counter_peaks()`, `data/tier_peaks.toml`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from ncu_roof.base.tomlfile import package_table

L1_BYTES_PER_CLK_PER_SM = 128.0


def nearest_listed(cc: str, listed: Mapping[str, object]) -> str | None:
    """The listed revision an unlisted compute capability takes its figures from: its major's
    nearest lower one (10.3 → 10.0, 12.1 → 12.0), or None."""
    try:
        major, minor = (int(part) for part in cc.split(".")[:2])
    except ValueError:
        return None
    # from the listed keys, not by counting down from `minor` (a damaged file's 8.1000000000000 hung);
    # a listed revision of this major as written canonically (`8.6`, never `8.06`)
    found = (re.fullmatch(rf"{major}\.(0|[1-9][0-9]*)", k) for k in listed)
    below = [int(m[1]) for m in found if m is not None and int(m[1]) < minor]
    return f"{major}.{max(below)}" if below else None


@dataclass(frozen=True, kw_only=True)
class Sourced:
    """Where a figure came from, and whether real hardware confirmed it (`describe` says so if not)."""

    source: str
    verified: bool = True

    def describe(self) -> str:
        return self.source if self.verified else f"{self.source} (unverified)"


@dataclass(frozen=True, kw_only=True)
class Figure(Sourced):
    per_sm_per_clock: float  # one rate per SM per clock


@dataclass(frozen=True, kw_only=True)
class PathScale(Sourced):
    ratio: float  # a floating tensor data path's dense rate as a multiple of the dense FP16 tensor rate


@dataclass(frozen=True)
class Arch:
    """The figures of one compute capability, per SM and per clock."""

    cc: str  # "8.0"
    name: str
    flop_per_sm_per_clk: Mapping[str, float]  # fp64, fp32, fp16, tensor (FP16 in, dense)
    source: str  # of the FLOP and byte figures
    schedulers_per_sm: Figure  # warp instructions issued per SM per clock
    xu_ops: Figure  # special-function results (exp2, log2, rsqrt, sin, cos, rcp) per SM per clock
    int8_tensor_ops: Figure | None = None  # dense INT8 tensor operations (2 per MAC) per SM per clock
    tensor_paths: Mapping[str, PathScale] = field(default_factory=dict)  # floating tensor paths
    # what `gpus` shows at boost; `analyze` takes every tier's per-clock peak, and its marks, from
    # `counter_peaks` (the peak of the very counter a tier was counted with)
    l1_byte_per_sm_per_clk: float = L1_BYTES_PER_CLK_PER_SM  # LSU writeback (Nsight's L1 measure)
    shared_byte_per_sm_per_clk: float = L1_BYTES_PER_CLK_PER_SM  # one 128 B wavefront per clock
    unverified: tuple[str, ...] = ()  # the FLOP figures that no report or datasheet confirmed
    # a die of GeForce and workstation cards too (Turing's GTX 16xx and RTX 20xx beside the T4):
    # the product table lists few of its products, so its CC alone names none (`infer_gpu`)
    consumer: bool = False


@cache
def archs() -> dict[str, Arch]:
    table = package_table("archs")
    return {row["cc"]: _arch(row, table["default"]) for row in table["arch"]}


_FIGURES = ("schedulers_per_sm", "xu_ops", "int8_tensor_ops")  # the `Figure`s of an `Arch`


def _arch(row: dict[str, Any], default: dict[str, Any]) -> Arch:
    given = {k: {**default.get(k, {}), **row.get(k, {})} for k in _FIGURES}
    figures = {k: Figure(**figure) for k, figure in given.items() if figure}
    paths = {p: PathScale(**scale) for p, scale in row.get("tensor_paths", {}).items()}
    return Arch(**row | figures | {"tensor_paths": paths, "unverified": tuple(row.get("unverified", ()))})


def arch_for_cc(cc: str | None) -> Arch | None:
    """The listed figures of a compute capability ("8.0"; "8.0" also for "8" or "80"), or None."""
    if cc is None:
        return None
    text = cc.strip()
    if re.fullmatch(r"\d\d", text):
        text = f"{text[0]}.{text[1]}"
    elif re.fullmatch(r"\d+", text):
        text += ".0"
    return archs().get(text)


def arch_for(cc: str | None) -> Arch | None:
    """The figures of compute capability `cc`; an unlisted minor revision takes its major's
    nearest lower listed one (`nearest_listed`), with every figure marked unverified."""
    if (listed := arch_for_cc(cc)) is not None or not cc:
        return listed
    if (base := archs().get(nearest_listed(cc, archs()) or "")) is None:
        return None
    figures = {k: replace(f, verified=False) for k in _FIGURES if (f := getattr(base, k)) is not None}
    return replace(
        base,
        cc=cc,
        name=f"{base.name} figures",
        source=f"assumed equal to CC {base.cc} ({base.source})",
        tensor_paths={p: replace(s, verified=False) for p, s in base.tensor_paths.items()},
        unverified=tuple(base.flop_per_sm_per_clk),
        **figures,
    )


# The counter peaks: a tier's traffic is only ever judged against the peak of the very counter it
# was counted with (`recipe.tiers`): `lts__t_sectors` against the L2 tag stage's sector peak,
# Nsight's `lts__lts2xbar_cycles_active × 32` against the L2→crossbar data path's, and so on. Where
# a report lacks that peak, `roofs.fill_builtin` takes it from here × the SM or L2-slice count × the
# clock the launch ran at (the unit's own, else the SM clock: one clock per device). A figure no
# report confirmed is marked unverified in the data file, and only there (`CounterPeak.verified`).


@dataclass(frozen=True, kw_only=True)
class CounterPeak(Sourced):
    """One counter's peak: `per_clock` counter units per `unit` ("SM" or "L2 slice") per clock of
    `clock` ("l1" or "l2", as `roofs.CLOCK_COLUMNS`)."""

    per_clock: float
    unit: str
    clock: str
    older_ncu: tuple[str, float] | None = None  # (versions, figure) where older ncu reported another

    def describe(self) -> str:
        older = f"; {self.older_ncu[0]} reported {self.older_ncu[1]:g}" if self.older_ncu else ""
        return f"{self.per_clock:g}/{self.unit}/clk: {super().describe()}{older}"  # no older: unverified


# a counter that is another × a fixed number of bytes: lts__t_bytes = lts__t_sectors × 32 B (the
# sector of `recipe.Factors`, not imported: `gpus` runs without numpy)
_SAME_AS = {f"{u}__t_bytes.sum": (f"{u}__t_sectors.sum", 32.0) for u in ("lts", "l1tex")}
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
        k: replace(p, source=f"assumed as CC {cc} ({p.source})", verified=False, older_ncu=None)
        for k, p in figures.items()
    }


def counter_peak(cc: str, counter: str) -> tuple[CounterPeak, float] | None:
    """The peak of `counter` (a `.sum`) on `cc` and the bytes per counter unit it implies beyond the
    counter's own (32 for lts__t_bytes = lts__t_sectors × 32); None where the table has none."""
    figures = counter_peaks().get(cc)
    if figures is None:  # an unlisted revision: its major's nearest lower one, unverified
        if (base_cc := nearest_listed(cc, counter_peaks())) is None:
            return None
        figures = _unverified(counter_peaks()[base_cc], base_cc)
    base, per_unit = _SAME_AS.get(counter, (counter, 1.0))
    peak = figures.get(base)
    return None if peak is None else (peak, per_unit)


def l2_slices(memory_bus_bits: float) -> int:
    """L2 slices of a GPU by its memory bus: 4 per 32-bit GDDR channel, 1 per 64 bits of HBM (a bus of 1024
    bits or more). Confirmed by the `.sum`/`.avg` ratio of lts__ counters in the corpus: T4 (256-bit) 32, RTX
    2060 Max-Q (192-bit) 24, RTX 5060 Ti (128-bit) 16, A100 and H100 PCIe (5120-bit) 80."""
    bits = int(memory_bus_bits)
    return bits // 64 if bits >= 1024 else bits // 8
