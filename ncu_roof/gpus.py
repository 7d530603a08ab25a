"""Built-in GPU table: datasheet peaks (boost clock, dense) and bandwidths, each row with its source.

L1/shared bandwidth is not on datasheets; where given it is derived as SMs × 128 B/clk × boost
clock (the L1/shared data path width of Volta and later) and labelled as derived. L2 bandwidth is
given only where a source states it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ncu_roof.errors import UsageError

TERA = 12  # decimal exponents: 133.8 TFLOP/s is 133.8e12 exactly, not 133.8 * 1e12
GIGA = 9


def scaled(value: float, exponent: int) -> float:
    """`value` × 10**exponent without binary rounding noise (133.8e12, not 133800000000000.02)."""
    return float(f"{value!r}e{exponent}")


L1_BYTES_PER_CLK_PER_SM = 128.0


@dataclass(frozen=True)
class Gpu:
    key: str
    name: str
    pattern: str  # regex matched against ncu's device__attribute_display_name
    fp64_tflop_per_s: float | None
    fp32_tflop_per_s: float
    fp16_tflop_per_s: float | None  # CUDA-core (non-tensor) FP16
    tensor_tflop_per_s: float  # FP16/BF16 tensor, dense
    dram_gbyte_per_s: float
    sm_count: int
    boost_clock_ghz: float
    source: str
    l2_tbyte_per_s: float | None = None
    l2_source: str | None = None

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


SEED_000 = "seed 000 (Roofline Lab: Predict Then Measure), hardware ridge-point table"

GPUS: tuple[Gpu, ...] = (
    Gpu(
        "v100-pcie",
        "Tesla V100 PCIe",
        r"V100[- ]PCIE",
        7.0,
        14.0,
        28.0,
        112.0,
        900.0,
        80,
        1.38,
        "NVIDIA Tesla V100 datasheet (PCIe); " + SEED_000,
    ),
    Gpu(
        "v100-sxm2",
        "Tesla V100 SXM2",
        r"V100[- ]SXM",
        7.8,
        15.7,
        31.4,
        125.0,
        900.0,
        80,
        1.53,
        "NVIDIA Tesla V100 datasheet (SXM2)",
    ),
    Gpu("t4", "Tesla T4", r"\bT4\b", 0.25, 8.1, 16.2, 65.0, 320.0, 40, 1.59, "NVIDIA T4 datasheet"),
    Gpu(
        "a10",
        "NVIDIA A10",
        r"\bA10\b(?!G)",
        0.49,
        31.2,
        31.2,
        125.0,
        600.0,
        72,
        1.695,
        "NVIDIA A10 datasheet (FP64 = FP32/64)",
    ),
    Gpu(
        "a10g",
        "NVIDIA A10G",
        r"\bA10G\b",
        0.55,
        35.0,
        35.0,
        140.1,
        600.0,
        80,
        1.71,
        "derived: 80 SMs and 1.71 GHz (device attributes in A10G ncu reports) x the A10 datasheet's "
        "per-SM rates (FP32 256, FP16 tensor 1024 FLOP/clk); 384-bit GDDR6 at 6.25 GHz [verify]",
    ),
    Gpu("a40", "NVIDIA A40", r"\bA40\b", 0.58, 37.4, 37.4, 149.7, 696.0, 84, 1.74, "NVIDIA A40 datasheet"),
    Gpu(
        "a100-pcie",
        "A100 PCIe 40GB",
        r"A100[- ]PCIE[- ]40GB|A100[- ]PCIE$",
        9.7,
        19.5,
        78.0,
        312.0,
        1555.0,
        108,
        1.41,
        "NVIDIA A100 datasheet (PCIe 40GB)",
    ),
    Gpu(
        "a100-pcie-80gb",
        "A100 PCIe 80GB",
        r"A100 80GB PCIe|A100[- ]PCIE[- ]80GB",
        9.7,
        19.5,
        78.0,
        312.0,
        1935.0,
        108,
        1.41,
        "NVIDIA A100 datasheet (PCIe 80GB)",
    ),
    Gpu(
        "a100-sxm4-40gb",
        "A100 SXM4 40GB",
        r"A100[- ]SXM4?[- ]40GB",
        9.7,
        19.5,
        78.0,
        312.0,
        1555.0,
        108,
        1.41,
        "NVIDIA A100 datasheet (SXM4 40GB)",
    ),
    Gpu(
        "a100-sxm4",
        "A100 SXM4 80GB",
        r"A100[- ]SXM",
        9.7,
        19.5,
        78.0,
        312.0,
        2039.0,
        108,
        1.41,
        "NVIDIA A100 datasheet (SXM4 80GB); " + SEED_000,
    ),
    Gpu(
        "rtx3070",
        "GeForce RTX 3070",
        r"RTX 3070",
        0.32,
        20.3,
        20.3,
        81.3,
        448.0,
        46,
        1.725,
        "NVIDIA Ampere GA102/GA104 whitepaper (FP16 tensor, FP16 accumulate, dense)",
    ),
    Gpu(
        "rtx3090",
        "GeForce RTX 3090",
        r"RTX 3090",
        0.56,
        35.6,
        35.6,
        142.0,
        936.0,
        82,
        1.695,
        "NVIDIA Ampere GA102 whitepaper (FP16 tensor, FP16 accumulate, dense)",
    ),
    Gpu(
        "rtx4090",
        "GeForce RTX 4090",
        r"RTX 4090",
        1.29,
        82.6,
        82.6,
        330.3,
        1008.0,
        128,
        2.52,
        "NVIDIA Ada Lovelace architecture whitepaper (FP16 tensor, FP16 accumulate, dense)",
    ),
    Gpu(
        "rtx5090",
        "GeForce RTX 5090",
        r"RTX 5090",
        1.64,
        104.8,
        104.8,
        419.0,
        1792.0,
        170,
        2.407,
        "NVIDIA RTX Blackwell architecture whitepaper (FP16 tensor, dense) [verify]",
    ),
    Gpu(
        "l4",
        "NVIDIA L4",
        r"\bL4\b",
        0.47,
        30.3,
        30.3,
        121.0,
        300.0,
        58,
        2.04,
        "NVIDIA L4 datasheet (tensor dense = half the sparse figure)",
    ),
    Gpu(
        "l40s",
        "NVIDIA L40S",
        r"\bL40S\b",
        1.41,
        91.6,
        91.6,
        362.05,
        864.0,
        142,
        2.52,
        "NVIDIA L40S datasheet (tensor dense = half the sparse figure)",
    ),
    Gpu(
        "h100-pcie",
        "H100 PCIe",
        r"H100 PCIe",
        25.6,
        51.2,
        102.4,
        756.0,
        2000.0,
        114,
        1.755,
        "NVIDIA H100 datasheet (PCIe; tensor dense)",
    ),
    Gpu(
        "gh200",
        "GH200 (96 GB HBM3)",
        r"GH200",
        34.0,
        67.0,
        133.8,
        989.0,
        4000.0,
        132,
        1.98,
        "NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3; tensor dense)",
    ),
    Gpu(
        "h200",
        "H200 SXM",
        r"(?<!G)H200",
        34.0,
        67.0,
        133.8,
        989.0,
        4800.0,
        132,
        1.98,
        "NVIDIA H200 datasheet (SXM; tensor dense)",
    ),
    Gpu(
        "h100-sxm5",
        "H100 SXM5",
        r"H100 (SXM|80GB HBM3)|H100$",
        34.0,
        67.0,
        133.8,
        989.0,
        3350.0,
        132,
        1.98,
        "NVIDIA H100 datasheet (SXM5; tensor dense); " + SEED_000,
        l2_tbyte_per_s=5.2,
        l2_source="seed 000 §4 (L2 cache bandwidth ~5.2 TB/s)",
    ),
    Gpu(
        "b200",
        "B200",
        r"\bB200\b",
        40.0,
        90.0,
        None,
        2250.0,
        8000.0,
        148,
        1.965,
        "NVIDIA DGX/HGX B200 datasheet (per GPU, FP16 tensor dense); " + SEED_000,
    ),
)

BY_KEY = {gpu.key: gpu for gpu in GPUS}


def gpu_by_key(key: str) -> Gpu:
    try:
        return BY_KEY[key.lower()]
    except KeyError:
        raise UsageError(
            f"unknown GPU {key!r}",
            hint="`ncu-roof gpus` lists the built-in keys; or describe yours with --roofs FILE.toml",
        ) from None


def match_gpu(display_name: str | None) -> Gpu | None:
    """The built-in row for ncu's device name (`NVIDIA A100-SXM4-40GB` → a100-sxm4-40gb)."""
    if not display_name:
        return None
    for gpu in GPUS:
        if re.search(gpu.pattern, display_name, flags=re.IGNORECASE):
            return gpu
    return None
