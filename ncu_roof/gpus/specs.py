"""Built-in GPU figures, two kinds for two uses: `ncu-roof gpus` and `predict` show each product's
datasheet peaks at its boost clock (dense), exactly as the datasheet prints them (`Gpu`); `analyze`
needs roofs at the clock the kernel ran: the per-architecture figures (`arch.Arch`: per SM per
clock) × the SM count × the measured clock (`Hardware`: every roof of a device at one clock), from
`device__attribute_*` for a device not in the product table (`data/gpus.toml`, read by `lookup`).

DRAM bytes per DRAM clock = bus width / 4 (double data rate: bus bits / 8 × 2), which is
`dram__bytes.sum.peak_sustained` in every corpus report (A100 5120-bit: 1280 B; A10G 384-bit: 96 B)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ncu_roof.base.vocabulary import PRECISIONS
from ncu_roof.gpus.arch import L1_BYTES_PER_CLK_PER_SM, Arch, arch_for, counter_peak, l2_slices

L2_XBAR_BYTES = "lts__lts2xbar_cycles_active.sum*32"  # Nsight's L2 measure (≥ 2024.1): 32 B a cycle

TERA = 12  # decimal exponents: 133.8 TFLOP/s is 133.8e12 exactly, not 133.8 * 1e12
GIGA = 9


def scaled(value: float, exponent: int) -> float:
    """`value` × 10**exponent without binary rounding noise (133.8e12, not 133800000000000.02)."""
    return float(f"{value!r}e{exponent}")


@dataclass(frozen=True)
class Hardware:
    """What per-clock built-in roofs are computed from: a product row or a report's attributes."""

    origin: str  # "builtin:a100-sxm4" or "device attributes"
    arch: Arch | None
    sm_count: int | None
    boost_clock_hz: float | None
    memory_bus_bits: float | None  # DRAM bytes per DRAM clock: bus width / 4; L2 slices by it
    dram_boost_clock_hz: float | None
    overrides: Mapping[str, float] = field(default_factory=dict)  # product FLOP/SM/clk (H800 FP64)
    l2_clock_hz: float | None = None  # the L2's own clock where one was measured (`Gpu.l2_clock_ghz`)
    l2_clock_source: str | None = None
    l2_slice_count: float | None = None  # the device's own (`device__attribute_l2s_count`), else by its bus

    def per_clock(self) -> dict[str, tuple[float, str]]:
        """Each compute roof in FLOP per SM clock, and its recipe: `128 FLOP/SM/clk x 108 SMs, CC 8.0 …`."""
        if self.arch is None or not self.sm_count:
            return {}
        unverified = {*self.arch.unverified, *self.overrides}
        where = f"x {self.sm_count} SMs, CC {self.arch.cc} {self.arch.name}: {self.arch.source}"
        return {
            key: (
                per_sm * self.sm_count,
                f"{per_sm:g} FLOP/SM/clk{' (unverified)' * (key in unverified)} {where}",
            )
            for key, per_sm in {**self.arch.flop_per_sm_per_clk, **self.overrides}.items()
        }

    def counter_per_clock(self, counter: str) -> tuple[float, str, str] | None:
        """The peak of a tier's traffic counter (`base*scale`, as `recipe.tiers` names it) in bytes per
        clock, the clock it scales with ("l1", "l2", "dram") and its recipe; None where the table has none."""
        base, _, scale_text = counter.partition("*")
        scale, bits = float(scale_text) if scale_text else 1.0, self.memory_bus_bits
        if base == "dram__bytes.sum":
            return (bits / 4 * scale, "dram", f"{bits / 4:g} B/clk (bus width / 4)") if bits else None
        if self.arch is None or (found := counter_peak(self.arch.cc, base)) is None:
            return None
        peak, per_unit = found
        by = "device__attribute_l2s_count" if self.l2_slice_count else "memory bus / 8 GDDR, / 64 HBM"
        slices = self.l2_slice_count or (bits and l2_slices(bits))
        units, what = (slices, f"L2 slices ({by})") if peak.unit == "L2 slice" else (self.sm_count, "SMs")
        if not units:
            return None
        factor = f" x {per_unit * scale:g} B" if per_unit * scale != 1 else ""
        how = f"{counter}: {peak.describe()}{factor} x {units:g} {what}, CC {self.arch.cc}"
        return peak.per_clock * per_unit * scale * units, peak.clock, how


def hardware_from_attributes(
    sm_count: float | None,
    clock_hz: float | None,
    memory_clock_hz: float | None,
    bus_bits: float | None,
    cc: str | None,
    l2_slice_count: float | None = None,
) -> Hardware | None:
    """Built-in figures from ncu's `device__attribute_*` values (any NVIDIA GPU since Volta)."""

    def ok(value: float | None) -> float | None:
        return value if value is not None and value > 0 else None  # NaN is not > 0

    arch, sms, bus, slices = arch_for(cc), ok(sm_count), ok(bus_bits), ok(l2_slice_count)
    if (arch is None or sms is None) and bus is None:
        return None
    return Hardware(
        origin="device attributes",
        arch=arch,
        sm_count=None if sms is None else int(sms),
        boost_clock_hz=ok(clock_hz),
        memory_bus_bits=bus,
        dram_boost_clock_hz=ok(memory_clock_hz),
        l2_slice_count=slices,
    )


@dataclass(frozen=True, kw_only=True)
class Gpu:
    """One product (a `data/gpus.toml` row): datasheet peaks at boost (dense), what per-clock roofs need."""

    key: str
    name: str
    cc: str
    names: tuple[str, ...]  # device names as ncu writes them, normalized (see `normalize_name`)
    fp64_tflop_per_s: float | None = None
    fp32_tflop_per_s: float
    fp16_tflop_per_s: float | None = None  # CUDA-core (non-tensor) FP16
    tensor_tflop_per_s: float  # FP16/BF16 tensor, dense
    dram_gbyte_per_s: float
    memory_bus_bits: int
    sm_count: int
    boost_clock_ghz: float
    source: str
    l2_tbyte_per_s: float | None = None
    l2_source: str | None = None
    overrides: Mapping[str, float] = field(default_factory=dict)  # FLOP/SM/clk unlike its arch
    # the L2's own clock (lts__cycles_elapsed.avg.per_second) at unlocked clocks, where ncu measured
    # it on this product: NVIDIA publishes none, and on GH100 it is not the SM's
    l2_clock_ghz: float | None = None
    l2_clock_source: str | None = None

    @property
    def compute_flop_per_s(self) -> dict[str, float]:
        peaks = {p: getattr(self, f"{p}_tflop_per_s") for p in PRECISIONS}
        return {k: scaled(v, TERA) for k, v in peaks.items() if v is not None}

    @property
    def l1_byte_per_s(self) -> float:
        return scaled(self.sm_count * L1_BYTES_PER_CLK_PER_SM * self.boost_clock_ghz, GIGA)

    def _l2(self) -> tuple[float, str] | None:
        """L2 → SM bandwidth at boost and its source: the table's figure, else Nsight's L2
        measure's per-clock peak (`arch.counter_peaks`) x the L2 clock where ncu measured it on this
        product, else the SM boost clock (NVIDIA publishes no L2 clock; said so)."""
        if self.l2_tbyte_per_s is not None:
            return scaled(self.l2_tbyte_per_s, TERA), self.l2_source or self.source
        if (found := self.hardware().counter_per_clock(L2_XBAR_BYTES)) is None:
            return None
        per_clock, _, how = found
        if self.l2_clock_ghz is not None:
            rate = per_clock * scaled(self.l2_clock_ghz, GIGA)  # whole numbers: no rounding noise
            return rate, f"derived: {how} x {self.l2_clock_ghz:g} GHz L2 clock ({self.l2_clock_source})"
        rate = scaled(per_clock * self.boost_clock_ghz, GIGA)
        return rate, f"derived: {how} x {self.boost_clock_ghz:g} GHz SM boost (no L2 clock is published)"

    def _bandwidths(self) -> dict[str, tuple[float, str]]:
        """Each tier's bandwidth at boost (byte/s) and its source."""
        boost = f"{self.boost_clock_ghz:g} GHz boost"
        l1 = self.l1_byte_per_s, f"derived: {self.sm_count} SMs x {L1_BYTES_PER_CLK_PER_SM:g} B/clk x {boost}"
        l2 = self._l2()
        dram = scaled(self.dram_gbyte_per_s, GIGA), self.source
        return {"dram": dram, **({"l2": l2} if l2 is not None else {}), "l1": l1, "shared": l1}

    @property
    def bandwidth_byte_per_s(self) -> dict[str, float]:
        return {tier: rate for tier, (rate, _) in self._bandwidths().items()}

    @property
    def sources(self) -> dict[str, str]:
        bandwidths = {tier: source for tier, (_, source) in self._bandwidths().items()}
        return {**{k: self.source for k in self.compute_flop_per_s}, **bandwidths}

    def ridge_flop_per_byte(self, precision: str) -> float | None:
        peak = self.compute_flop_per_s.get(precision)
        return None if peak is None else peak / scaled(self.dram_gbyte_per_s, GIGA)

    def hardware(self) -> Hardware:
        """Per-clock figures of this product (its architecture's, with its own SMs and bus)."""
        return Hardware(
            origin=f"builtin:{self.key}",
            arch=arch_for(self.cc),
            sm_count=self.sm_count,
            boost_clock_hz=scaled(self.boost_clock_ghz, GIGA),
            memory_bus_bits=self.memory_bus_bits,
            dram_boost_clock_hz=scaled(self.dram_gbyte_per_s, GIGA) / (self.memory_bus_bits / 4),
            overrides=self.overrides,
            l2_clock_hz=None if self.l2_clock_ghz is None else scaled(self.l2_clock_ghz, GIGA),
            l2_clock_source=self.l2_clock_source,
        )
