"""Built-in GPU figures: per architecture (per SM, per clock) and per product (datasheet, boost).

Two uses, two kinds of figure:
- `ncu-roof gpus` and `predict` show each product's datasheet peaks at its boost clock (dense),
  exactly as the datasheet prints them (`Gpu.compute_flop_per_s`, `Gpu.bandwidth_byte_per_s`).
- `analyze` needs roofs at the clock the kernel ran. It computes them from the per-architecture
  figures (`Arch`: FLOP and bytes per SM per clock) × the SM count × the measured clock
  (`Hardware`), so that every roof of one device refers to one clock. A device that is not in the
  product table gets the same from the report's own `device__attribute_*` values.

DRAM bytes per DRAM clock = bus width / 4 (double data rate: bus bits / 8 × 2), which is
`dram__bytes.sum.peak_sustained` in every corpus report (A100 5120-bit: 1280 B; A10G 384-bit: 96 B).
Per-architecture figures that no report or datasheet confirmed are listed in `Arch.unverified`,
the one place that says so.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ncu_roof.errors import UsageError

TERA = 12  # decimal exponents: 133.8 TFLOP/s is 133.8e12 exactly, not 133.8 * 1e12
GIGA = 9


def scaled(value: float, exponent: int) -> float:
    """`value` × 10**exponent without binary rounding noise (133.8e12, not 133800000000000.02)."""
    return float(f"{value!r}e{exponent}")


L1_BYTES_PER_CLK_PER_SM = 128.0


@dataclass(frozen=True)
class Arch:
    """Per-SM, per-clock figures of one compute capability (dense; fp16 = CUDA-core HFMA2 × 4)."""

    cc: str
    name: str
    flop_per_sm_per_clk: Mapping[str, float]  # fp64, fp32, fp16, tensor (FP16 in, dense)
    source: str
    l1_byte_per_sm_per_clk: float = L1_BYTES_PER_CLK_PER_SM  # LSU writeback (Nsight's L1 measure)
    shared_byte_per_sm_per_clk: float = L1_BYTES_PER_CLK_PER_SM  # one 128 B wavefront per clock
    unverified: tuple[str, ...] = ()  # the figures above that no report or datasheet confirmed

    def label(self, key: str) -> str:
        return " (unverified)" if key in self.unverified else ""


_REPORT = "{} from the peak_sustained metrics of an ncu report of the {}"
ARCHS: tuple[Arch, ...] = (
    Arch(
        "7.0",
        "Volta GV100",
        {"fp64": 64.0, "fp32": 128.0, "fp16": 256.0, "tensor": 1024.0},
        "NVIDIA Tesla V100 GPU architecture whitepaper (8 tensor cores x 64 FMA per SM)",
    ),
    Arch(
        "7.2",
        "Volta GV10B (Xavier)",
        {"fp32": 128.0, "fp16": 256.0, "tensor": 1024.0},
        "assumed equal to GV100 per SM (no FP64 figure)",
        unverified=("fp32", "fp16", "tensor", "l1", "shared"),
    ),
    Arch(
        "7.5",
        "Turing TU10x",
        {"fp64": 4.0, "fp32": 128.0, "fp16": 256.0, "tensor": 1024.0},
        _REPORT.format("FP64/FP32", "Tesla T4") + "; FP16 and tensor (FP16 accumulate) from the T4 datasheet",
    ),
    Arch(
        "8.0",
        "Ampere GA100",
        {"fp64": 64.0, "fp32": 128.0, "fp16": 512.0, "tensor": 2048.0},
        _REPORT.format("FP64/FP32/FP16", "A100") + "; tensor from the A100 datasheet",
    ),
    Arch(
        "8.6",
        "Ampere GA10x",
        {"fp64": 4.0, "fp32": 256.0, "fp16": 256.0, "tensor": 1024.0},
        _REPORT.format("FP64/FP32/FP16", "A10G") + "; tensor from the A10 datasheet (FP32 accumulate)",
    ),
    Arch(
        "8.7",
        "Ampere GA10B (Orin)",
        {"fp32": 256.0, "fp16": 256.0},
        "assumed equal to GA10x per SM (no FP64 or tensor figure)",
        unverified=("fp32", "fp16", "l1", "shared"),
    ),
    Arch(
        "8.9",
        "Ada AD10x",
        {"fp64": 4.0, "fp32": 256.0, "fp16": 256.0, "tensor": 1024.0},
        _REPORT.format("FP64/FP32", "RTX 4090")
        + "; FP16 and tensor (FP16 accumulate) from the Ada whitepaper",
    ),
    Arch(
        "9.0",
        "Hopper GH100",
        {"fp64": 128.0, "fp32": 256.0, "fp16": 512.0, "tensor": 4096.0},
        _REPORT.format("FP64/FP32/FP16", "H100 PCIe") + "; tensor from the H100 whitepaper",
    ),
    Arch(
        "10.0",
        "Blackwell GB100",
        {"fp64": 128.0, "fp32": 256.0, "fp16": 512.0, "tensor": 8192.0},
        "assumed from the B200 datasheet ratios",
        unverified=("fp64", "fp32", "fp16", "tensor", "l1", "shared"),
    ),
    Arch(
        "12.0",
        "Blackwell GB20x",
        {"fp64": 4.0, "fp32": 256.0, "fp16": 256.0, "tensor": 1024.0},
        "NVIDIA RTX Blackwell architecture whitepaper (RTX 5090: FP32 = FP16, tensor FP16 dense)",
        unverified=("fp64", "fp16", "tensor", "l1", "shared"),
    ),
)
ARCH_BY_CC = {a.cc: a for a in ARCHS}


def arch_for(cc: str | None) -> Arch | None:
    """The figures of compute capability `cc`; an unlisted minor revision takes its major's
    nearest lower listed one (10.3 → 10.0, 12.1 → 12.0), with every figure marked unverified."""
    if not cc:
        return None
    if cc in ARCH_BY_CC:
        return ARCH_BY_CC[cc]
    try:
        major, minor = (int(part) for part in cc.split(".")[:2])
    except ValueError:
        return None
    for m in range(minor - 1, -1, -1):
        base = ARCH_BY_CC.get(f"{major}.{m}")
        if base is not None:
            keys = (*base.flop_per_sm_per_clk, "l1", "shared")
            return Arch(
                cc,
                f"{base.name} figures",
                base.flop_per_sm_per_clk,
                f"assumed equal to CC {base.cc} ({base.source})",
                unverified=keys,
            )
    return None


@dataclass(frozen=True)
class Hardware:
    """What per-clock built-in roofs are computed from: a product row or a report's attributes."""

    origin: str  # "builtin:a100-sxm4" or "device attributes"
    arch: Arch | None
    sm_count: int | None
    boost_clock_hz: float | None
    dram_byte_per_clk: float | None  # bus width / 4
    dram_boost_clock_hz: float | None
    overrides: Mapping[str, float] = field(default_factory=dict)  # product FLOP/SM/clk (H800 FP64)

    def per_clock(self) -> dict[str, tuple[float, str]]:
        """Each roof as (value per clock, the clock it scales with: "sm", "l1" or "dram")."""
        out: dict[str, tuple[float, str]] = {}
        if self.arch is not None and self.sm_count:
            flops = {**self.arch.flop_per_sm_per_clk, **self.overrides}
            for precision, per_sm in flops.items():
                out[precision] = (per_sm * self.sm_count, "sm")
            out["l1"] = (self.arch.l1_byte_per_sm_per_clk * self.sm_count, "l1")
            out["shared"] = (self.arch.shared_byte_per_sm_per_clk * self.sm_count, "l1")
        if self.dram_byte_per_clk:
            out["dram"] = (self.dram_byte_per_clk, "dram")
        return out

    def boost_clock(self, kind: str) -> float | None:
        return self.dram_boost_clock_hz if kind == "dram" else self.boost_clock_hz

    def describe(self, key: str) -> str:
        """How one roof is built: `128 FLOP/SM/clk x 108 SMs (CC 8.0 Ampere GA100 ...)`."""
        if key == "dram":
            return f"{self.dram_byte_per_clk:g} B/clk (bus width / 4)"
        assert self.arch is not None
        per_sm = {**self.arch.flop_per_sm_per_clk, **self.overrides}.get(key)
        if key in ("l1", "shared"):
            per_sm = self.arch.l1_byte_per_sm_per_clk if key == "l1" else self.arch.shared_byte_per_sm_per_clk
            unit = "B"
        else:
            unit = "FLOP"
        verified = " (unverified)" if key in self.arch.unverified or key in self.overrides else ""
        return (
            f"{per_sm:g} {unit}/SM/clk{verified} x {self.sm_count} SMs, "
            f"CC {self.arch.cc} {self.arch.name}: {self.arch.source}"
        )


def hardware_from_attributes(
    sm_count: float | None,
    clock_hz: float | None,
    memory_clock_hz: float | None,
    bus_bits: float | None,
    cc: str | None,
) -> Hardware | None:
    """Built-in figures from ncu's `device__attribute_*` values (any NVIDIA GPU since Volta)."""

    def ok(value: float | None) -> bool:
        return value is not None and value == value and value > 0

    arch = arch_for(cc)
    sms = int(sm_count) if ok(sm_count) and sm_count is not None else None
    dram = bus_bits / 4 if ok(bus_bits) and bus_bits is not None else None
    if (arch is None or sms is None) and dram is None:
        return None
    return Hardware(
        origin="device attributes",
        arch=arch,
        sm_count=sms,
        boost_clock_hz=clock_hz if ok(clock_hz) else None,
        dram_byte_per_clk=dram,
        dram_boost_clock_hz=memory_clock_hz if ok(memory_clock_hz) else None,
    )


@dataclass(frozen=True)
class Gpu:
    """One product: its datasheet peaks at boost (dense) and what per-clock roofs need."""

    key: str
    name: str
    cc: str
    names: tuple[str, ...]  # device names as ncu writes them, normalized (see `normalize_name`)
    fp64_tflop_per_s: float | None
    fp32_tflop_per_s: float
    fp16_tflop_per_s: float | None  # CUDA-core (non-tensor) FP16
    tensor_tflop_per_s: float  # FP16/BF16 tensor, dense
    dram_gbyte_per_s: float
    memory_bus_bits: int
    sm_count: int
    boost_clock_ghz: float
    source: str
    l2_tbyte_per_s: float | None = None
    l2_source: str | None = None
    overrides: Mapping[str, float] = field(default_factory=dict)  # FLOP/SM/clk unlike its arch

    @property
    def compute_flop_per_s(self) -> dict[str, float]:
        peaks = {
            "fp64": self.fp64_tflop_per_s,
            "fp32": self.fp32_tflop_per_s,
            "fp16": self.fp16_tflop_per_s,
            "tensor": self.tensor_tflop_per_s,
        }
        return {k: scaled(v, TERA) for k, v in peaks.items() if v is not None}

    @property
    def l1_byte_per_s(self) -> float:
        return scaled(self.sm_count * L1_BYTES_PER_CLK_PER_SM * self.boost_clock_ghz, GIGA)

    @property
    def bandwidth_byte_per_s(self) -> dict[str, float]:
        out = {"dram": scaled(self.dram_gbyte_per_s, GIGA)}
        if self.l2_tbyte_per_s is not None:
            out["l2"] = scaled(self.l2_tbyte_per_s, TERA)
        out["l1"] = self.l1_byte_per_s
        out["shared"] = self.l1_byte_per_s
        return out

    @property
    def sources(self) -> dict[str, str]:
        derived = (
            f"derived: {self.sm_count} SMs x {L1_BYTES_PER_CLK_PER_SM:g} B/clk x "
            f"{self.boost_clock_ghz:g} GHz boost"
        )
        out = {k: self.source for k in (*self.compute_flop_per_s, "dram")}
        if self.l2_tbyte_per_s is not None:
            out["l2"] = self.l2_source or self.source
        out["l1"] = derived
        out["shared"] = derived
        return out

    def ridge_flop_per_byte(self, precision: str) -> float | None:
        peak = self.compute_flop_per_s.get(precision)
        return None if peak is None else peak / scaled(self.dram_gbyte_per_s, GIGA)

    def hardware(self) -> Hardware:
        """Per-clock figures of this product (its architecture's, with its own SMs and bus)."""
        per_clk = self.memory_bus_bits / 4
        return Hardware(
            origin=f"builtin:{self.key}",
            arch=arch_for(self.cc),
            sm_count=self.sm_count,
            boost_clock_hz=scaled(self.boost_clock_ghz, GIGA),
            dram_byte_per_clk=per_clk,
            dram_boost_clock_hz=scaled(self.dram_gbyte_per_s, GIGA) / per_clk,
            overrides=self.overrides,
        )


SEED_000 = "seed 000 (Roofline Lab: Predict Then Measure), hardware ridge-point table"
_DENSE = "tensor dense = half the sparse figure"

GPUS: tuple[Gpu, ...] = (
    Gpu(
        "v100-pcie",
        "Tesla V100 PCIe",
        "7.0",
        ("v100 pcie 16gb", "v100 pcie 32gb", "v100 pcie"),
        7.0,
        14.0,
        28.0,
        112.0,
        900.0,
        4096,
        80,
        1.38,
        "NVIDIA Tesla V100 datasheet (PCIe); " + SEED_000,
    ),
    Gpu(
        "v100-sxm2",
        "Tesla V100 SXM2",
        "7.0",
        ("v100 sxm2 16gb", "v100 sxm2 32gb", "v100 sxm2"),
        7.8,
        15.7,
        31.4,
        125.0,
        900.0,
        4096,
        80,
        1.53,
        "NVIDIA Tesla V100 datasheet (SXM2)",
    ),
    Gpu("t4", "Tesla T4", "7.5", ("t4",), 0.25, 8.1, 16.2, 65.0, 320.0, 256, 40, 1.59, "NVIDIA T4 datasheet"),
    Gpu(
        "a10",
        "NVIDIA A10",
        "8.6",
        ("a10",),
        0.49,
        31.2,
        31.2,
        125.0,
        600.0,
        384,
        72,
        1.695,
        "NVIDIA A10 datasheet (FP64 = FP32/64)",
    ),
    Gpu(
        "a10g",
        "NVIDIA A10G",
        "8.6",
        ("a10g",),
        0.55,
        35.0,
        35.0,
        140.1,
        600.0,
        384,
        80,
        1.71,
        "derived: 80 SMs and 1.71 GHz (device attributes in A10G ncu reports) x the A10 datasheet's "
        "per-SM rates (FP32 256, FP16 tensor 1024 FLOP/clk); 384-bit GDDR6 at 6.25 GHz (unverified)",
    ),
    Gpu(
        "a40",
        "NVIDIA A40",
        "8.6",
        ("a40",),
        0.58,
        37.4,
        37.4,
        149.7,
        696.0,
        384,
        84,
        1.74,
        "NVIDIA A40 datasheet",
    ),
    Gpu(
        "a100-pcie",
        "A100 PCIe 40GB",
        "8.0",
        ("a100 pcie 40gb", "a100 pcie"),
        9.7,
        19.5,
        78.0,
        312.0,
        1555.0,
        5120,
        108,
        1.41,
        "NVIDIA A100 datasheet (PCIe 40GB)",
    ),
    Gpu(
        "a100-pcie-80gb",
        "A100 PCIe 80GB",
        "8.0",
        ("a100 80gb pcie", "a100 pcie 80gb"),
        9.7,
        19.5,
        78.0,
        312.0,
        1935.0,
        5120,
        108,
        1.41,
        "NVIDIA A100 datasheet (PCIe 80GB)",
    ),
    Gpu(
        "a100-sxm4-40gb",
        "A100 SXM4 40GB",
        "8.0",
        ("a100 sxm4 40gb", "a100 sxm 40gb"),
        9.7,
        19.5,
        78.0,
        312.0,
        1555.0,
        5120,
        108,
        1.41,
        "NVIDIA A100 datasheet (SXM4 40GB)",
    ),
    Gpu(
        "a100-sxm4",
        "A100 SXM4 80GB",
        "8.0",
        ("a100 sxm4 80gb", "a100 sxm 80gb", "a100 sxm4"),
        9.7,
        19.5,
        78.0,
        312.0,
        2039.0,
        5120,
        108,
        1.41,
        "NVIDIA A100 datasheet (SXM4 80GB); " + SEED_000,
    ),
    Gpu(
        "rtx3070",
        "GeForce RTX 3070",
        "8.6",
        ("rtx 3070",),
        0.32,
        20.3,
        20.3,
        81.3,
        448.0,
        256,
        46,
        1.725,
        "NVIDIA Ampere GA102/GA104 whitepaper (FP16 tensor, FP16 accumulate, dense)",
    ),
    Gpu(
        "rtx3090",
        "GeForce RTX 3090",
        "8.6",
        ("rtx 3090",),
        0.56,
        35.6,
        35.6,
        142.0,
        936.0,
        384,
        82,
        1.695,
        "NVIDIA Ampere GA102 whitepaper (FP16 tensor, FP16 accumulate, dense)",
    ),
    Gpu(
        "rtx4090",
        "GeForce RTX 4090",
        "8.9",
        ("rtx 4090",),
        1.29,
        82.6,
        82.6,
        330.3,
        1008.0,
        384,
        128,
        2.52,
        "NVIDIA Ada Lovelace architecture whitepaper (FP16 tensor, FP16 accumulate, dense)",
    ),
    Gpu(
        "rtx5090",
        "GeForce RTX 5090",
        "12.0",
        ("rtx 5090",),
        1.64,
        104.8,
        104.8,
        419.0,
        1792.0,
        512,
        170,
        2.407,
        "NVIDIA RTX Blackwell architecture whitepaper (FP16 tensor, dense; unverified)",
    ),
    Gpu(
        "l4",
        "NVIDIA L4",
        "8.9",
        ("l4",),
        0.47,
        30.3,
        30.3,
        121.0,
        300.0,
        192,
        58,
        2.04,
        f"NVIDIA L4 datasheet ({_DENSE})",
    ),
    Gpu(
        "l40s",
        "NVIDIA L40S",
        "8.9",
        ("l40s",),
        1.41,
        91.6,
        91.6,
        362.05,
        864.0,
        384,
        142,
        2.52,
        f"NVIDIA L40S datasheet ({_DENSE})",
    ),
    Gpu(
        "h100-pcie",
        "H100 PCIe",
        "9.0",
        ("h100 pcie",),
        25.6,
        51.2,
        102.4,
        756.0,
        2000.0,
        5120,
        114,
        1.755,
        "NVIDIA H100 datasheet (PCIe; tensor dense)",
    ),
    Gpu(
        "h800-pcie",
        "H800 PCIe",
        "9.0",
        ("h800 pcie",),
        0.8,
        51.0,
        102.4,
        756.0,
        2000.0,
        5120,
        114,
        1.755,
        "NVIDIA H800 PCIe datasheet (tensor dense; FP16 as H100 PCIe, unverified)",
        overrides={"fp64": 4.0},
    ),
    Gpu(
        "gh200",
        "GH200 (96 GB HBM3)",
        "9.0",
        ("gh200 480gb", "gh200 120gb", "gh200 96gb", "gh200"),
        34.0,
        67.0,
        133.8,
        989.0,
        4000.0,
        6144,
        132,
        1.98,
        "NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3; tensor dense)",
    ),
    Gpu(
        "gh200-144gb",
        "GH200 (144 GB HBM3e)",
        "9.0",
        ("gh200 144g hbm3e", "gh200 144gb hbm3e", "gh200 144gb"),
        34.0,
        67.0,
        133.8,
        989.0,
        4900.0,
        6144,
        132,
        1.98,
        "NVIDIA GH200 Grace Hopper Superchip datasheet (144 GB HBM3e; tensor dense)",
    ),
    Gpu(
        "h200",
        "H200 SXM",
        "9.0",
        ("h200", "h200 141gb"),
        34.0,
        67.0,
        133.8,
        989.0,
        4800.0,
        6144,
        132,
        1.98,
        "NVIDIA H200 datasheet (SXM; tensor dense)",
    ),
    Gpu(
        "h100-sxm5",
        "H100 SXM5",
        "9.0",
        ("h100 80gb hbm3", "h100 sxm5 80gb", "h100 sxm5", "h100 sxm", "h100"),
        34.0,
        67.0,
        133.8,
        989.0,
        3350.0,
        5120,
        132,
        1.98,
        "NVIDIA H100 datasheet (SXM5; tensor dense); " + SEED_000,
        l2_tbyte_per_s=5.2,
        l2_source="seed 000 §4 (L2 cache bandwidth ~5.2 TB/s)",
    ),
    Gpu(
        "h800",
        "H800 SXM5",
        "9.0",
        ("h800", "h800 80gb hbm3", "h800 sxm5"),
        1.0,
        67.0,
        133.8,
        989.0,
        3350.0,
        5120,
        132,
        1.98,
        "NVIDIA H800 SXM5 datasheet (tensor dense; FP16 as H100 SXM5, unverified)",
        overrides={"fp64": 4.0},
    ),
    Gpu(
        "b200",
        "B200",
        "10.0",
        ("b200",),
        40.0,
        90.0,
        None,
        2250.0,
        8000.0,
        8192,
        148,
        1.965,
        "NVIDIA DGX/HGX B200 datasheet (per GPU, FP16 tensor dense); " + SEED_000,
    ),
)

BY_KEY = {gpu.key: gpu for gpu in GPUS}
_PREFIXES = ("nvidia ", "geforce ", "tesla ", "quadro ")


def normalize_name(name: str) -> str:
    """ncu's device name in one spelling across driver eras: `NVIDIA A100-SXM4-40GB`,
    `A100-SXM4-40GB` → `a100 sxm4 40gb`; `Tesla V100-SXM2-16GB` → `v100 sxm2 16gb`."""
    text = re.sub(r"[\s\-_]+", " ", name.strip().lower())
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if text.startswith(prefix):
                text, changed = text[len(prefix) :], True
    return text.strip()


_BY_NAME = {name: gpu for gpu in GPUS for name in gpu.names}


def match_gpu(display_name: str | None) -> Gpu | None:
    """The product row of ncu's device name, matched whole (so `RTX 4090 Laptop GPU`, `RTX 4070 Ti
    SUPER` or `A10G` never take the row of `RTX 4090`, `RTX 4070` or `A10`)."""
    if not display_name:
        return None
    return _BY_NAME.get(normalize_name(display_name))


def gpu_by_key(key: str) -> Gpu:
    """A built-in row by key (any case) or by the device name ncu writes."""
    gpu = BY_KEY.get(key.strip().lower()) or match_gpu(key)
    if gpu is not None:
        return gpu
    close = difflib.get_close_matches(key.strip().lower(), list(BY_KEY), n=3, cutoff=0.6)
    close += [
        _BY_NAME[n].key
        for n in difflib.get_close_matches(normalize_name(key), list(_BY_NAME), n=3, cutoff=0.75)
        if _BY_NAME[n].key not in close
    ]
    guess = f"did you mean {' or '.join(close)}? " if close else ""
    raise UsageError(
        f"unknown GPU {key!r}",
        hint=guess + "`ncu-roof gpus` lists the built-in keys; or describe yours with --roofs FILE.toml",
    )
