"""Per-architecture figures, keyed by compute capability, each with its source: one type (`Arch`),
one table (`ARCHS`).

- FLOP per SM per clock (dense; fp16 = CUDA-core HFMA2 × 4): `analyze` scales them by the SM
  count and the measured clock (`gpu_specs.Hardware`), so that every built-in roof of one device
  refers to one clock. Those no report or datasheet confirmed are listed in `Arch.unverified`.
  The memory tiers' per-clock peaks, and their marks, are `tier_peaks`' (one per counter).
- Issue slots, the special-function unit (XU) and INT8 tensor rates, and the floating tensor data
  paths' ratios to dense FP16 tensor: the instruction roofline's issue peak where the report lacks
  a scheduler count, and `predict`'s integer, special-function and tensor-path ceilings. A
  `Figure` or `PathScale` with `verified=False` is derived or unverified on real hardware and says
  so wherever it is shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

L1_BYTES_PER_CLK_PER_SM = 128.0
GUIDE = 'CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table'
WHITEPAPERS = "NVIDIA architecture whitepapers: 4 warp schedulers per SM, 1 warp instruction per clock each"


@dataclass(frozen=True)
class Figure:
    """One rate per SM per clock, with where it came from."""

    per_sm_per_clock: float
    source: str
    verified: bool = True

    def describe(self) -> str:
        return self.source if self.verified else f"{self.source} (unverified)"


@dataclass(frozen=True)
class PathScale:
    """A floating tensor data path's dense rate as a multiple of the dense FP16 tensor rate."""

    ratio: float
    source: str
    verified: bool = True

    def describe(self) -> str:
        return self.source if self.verified else f"{self.source} (unverified)"


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
    # `tier_peaks` (the peak of the very counter a tier was counted with)
    l1_byte_per_sm_per_clk: float = L1_BYTES_PER_CLK_PER_SM  # LSU writeback (Nsight's L1 measure)
    shared_byte_per_sm_per_clk: float = L1_BYTES_PER_CLK_PER_SM  # one 128 B wavefront per clock
    unverified: tuple[str, ...] = ()  # the FLOP figures that no report or datasheet confirmed


def _datasheet(ops: float, what: str) -> Figure:
    return Figure(ops, f"derived: {what} dense INT8 TOPS / (SMs x boost clock)", verified=False)


def _paths(datasheet: str, ratios: Mapping[str, float], verified: bool = True) -> dict[str, PathScale]:
    return {p: PathScale(r, f"{datasheet} (dense, x{r:g} of FP16)", verified) for p, r in ratios.items()}


_REPORT = "{} from the peak_sustained metrics of an ncu report of the {}"
_FP16 = {"fp16": 1.0}
_AMPERE = {"tf32": 0.5, "bf16": 1.0, "fp16": 1.0}
_WITH_FP8 = {**_AMPERE, "fp8": 2.0}
_ISSUE = Figure(4, WHITEPAPERS)
_XU = Figure(16, GUIDE)
_UNVERIFIED_ISSUE = Figure(4, WHITEPAPERS, verified=False)
_UNVERIFIED_XU = Figure(16, GUIDE, verified=False)

ARCHS: tuple[Arch, ...] = (
    Arch(
        "7.0",
        "Volta GV100",
        {"fp64": 64.0, "fp32": 128.0, "fp16": 256.0, "tensor": 1024.0},
        "NVIDIA Tesla V100 GPU architecture whitepaper (8 tensor cores x 64 FMA per SM)",
        _ISSUE,
        _XU,
        tensor_paths=_paths("NVIDIA V100 datasheet: FP16 tensor 125 TFLOPS", _FP16),
    ),
    Arch(
        "7.2",
        "Volta GV10B (Xavier)",
        {"fp32": 128.0, "fp16": 256.0, "tensor": 1024.0},
        "assumed equal to GV100 per SM (no FP64 figure)",
        _UNVERIFIED_ISSUE,
        _UNVERIFIED_XU,
        unverified=("fp32", "fp16", "tensor"),
    ),
    Arch(
        "7.5",
        "Turing TU10x",
        {"fp64": 4.0, "fp32": 128.0, "fp16": 256.0, "tensor": 1024.0},
        _REPORT.format("FP64/FP32", "Tesla T4") + "; FP16 and tensor (FP16 accumulate) from the T4 datasheet",
        _ISSUE,
        _XU,
        _datasheet(2048, "T4 datasheet 130"),
        _paths("NVIDIA T4 datasheet: FP16 tensor 65 TFLOPS", _FP16),
    ),
    Arch(
        "8.0",
        "Ampere GA100",
        {"fp64": 64.0, "fp32": 128.0, "fp16": 512.0, "tensor": 2048.0},
        _REPORT.format("FP64/FP32/FP16", "A100") + "; tensor from the A100 datasheet",
        _ISSUE,
        _XU,
        _datasheet(4096, "A100 datasheet 624"),
        _paths("NVIDIA A100 datasheet: TF32 156, BF16 312, FP16 312 TFLOPS", _AMPERE),
    ),
    Arch(
        "8.6",
        "Ampere GA10x",
        {"fp64": 4.0, "fp32": 256.0, "fp16": 256.0, "tensor": 1024.0},
        _REPORT.format("FP64/FP32/FP16", "A10G") + "; tensor from the A10 datasheet (FP32 accumulate)",
        _ISSUE,
        _XU,
        _datasheet(2048, "A10 datasheet 250"),
        _paths("NVIDIA A10 datasheet: TF32 62.5, BF16 125, FP16 125 TFLOPS", _AMPERE),
    ),
    Arch(
        "8.7",
        "Ampere GA10B (Orin)",
        {"fp32": 256.0, "fp16": 256.0},
        "assumed equal to GA10x per SM (no FP64 or tensor figure)",
        _UNVERIFIED_ISSUE,
        _UNVERIFIED_XU,
        unverified=("fp32", "fp16"),
    ),
    Arch(
        "8.9",
        "Ada AD10x",
        {"fp64": 4.0, "fp32": 256.0, "fp16": 256.0, "tensor": 1024.0},
        _REPORT.format("FP64/FP32", "RTX 4090")
        + "; FP16 and tensor (FP16 accumulate) from the Ada whitepaper",
        _ISSUE,
        _XU,
        _datasheet(2048, "L4 datasheet 242"),
        _paths("NVIDIA L4 datasheet: TF32 60, BF16 121, FP16 121, FP8 242.5 TFLOPS", _WITH_FP8),
    ),
    Arch(
        "9.0",
        "Hopper GH100",
        {"fp64": 128.0, "fp32": 256.0, "fp16": 512.0, "tensor": 4096.0},
        _REPORT.format("FP64/FP32/FP16", "H100 PCIe") + "; tensor from the H100 whitepaper",
        _ISSUE,
        _XU,
        Figure(8192, "ncu report: sm__ops_path_tensor_src_int8.sum.peak_sustained / SMs (H100 PCIe)"),
        _paths(
            "NVIDIA H100 datasheet (SXM5): TF32 494.7, BF16 989.4, FP16 989.4, FP8 1979 TFLOPS", _WITH_FP8
        ),
    ),
    Arch(
        "10.0",
        "Blackwell GB100",
        {"fp64": 128.0, "fp32": 256.0, "fp16": 512.0, "tensor": 8192.0},
        "assumed from the B200 datasheet ratios",
        _UNVERIFIED_ISSUE,
        _UNVERIFIED_XU,
        tensor_paths=_paths(
            "NVIDIA B200 datasheet: TF32 1.1, BF16 2.25, FP16 2.25, FP8 4.5 PFLOPS", _WITH_FP8, False
        ),
        unverified=("fp64", "fp32", "fp16", "tensor"),
    ),
    Arch(
        "12.0",
        "Blackwell GB20x",
        {"fp64": 4.0, "fp32": 256.0, "fp16": 256.0, "tensor": 1024.0},
        "NVIDIA RTX Blackwell architecture whitepaper (RTX 5090: FP32 = FP16, tensor FP16 dense)",
        _UNVERIFIED_ISSUE,
        _UNVERIFIED_XU,
        unverified=("fp64", "fp16", "tensor"),
    ),
)
_BY_CC = {a.cc: a for a in ARCHS}


def arch_for_cc(cc: str | None) -> Arch | None:
    """The listed figures of a compute capability ("8.0"; "8.0" also for "8" or "80"), or None."""
    if cc is None:
        return None
    text = cc.strip()
    if re.fullmatch(r"\d\d", text):
        text = f"{text[0]}.{text[1]}"
    elif re.fullmatch(r"\d+", text):
        text += ".0"
    return _BY_CC.get(text)


def arch_for(cc: str | None) -> Arch | None:
    """The figures of compute capability `cc`; an unlisted minor revision takes its major's
    nearest lower listed one (10.3 → 10.0, 12.1 → 12.0), with every figure marked unverified."""
    listed = arch_for_cc(cc)
    if listed is not None or not cc:
        return listed
    try:
        major, minor = (int(part) for part in cc.split(".")[:2])
    except ValueError:
        return None
    for m in range(minor - 1, -1, -1):
        base = _BY_CC.get(f"{major}.{m}")
        if base is not None:
            return _assumed(base, cc)
    return None


def _assumed(base: Arch, cc: str) -> Arch:
    """`base`'s figures for the unlisted revision `cc`, every one marked unverified."""
    return replace(
        base,
        cc=cc,
        name=f"{base.name} figures",
        source=f"assumed equal to CC {base.cc} ({base.source})",
        schedulers_per_sm=replace(base.schedulers_per_sm, verified=False),
        xu_ops=replace(base.xu_ops, verified=False),
        int8_tensor_ops=base.int8_tensor_ops and replace(base.int8_tensor_ops, verified=False),
        tensor_paths={p: replace(s, verified=False) for p, s in base.tensor_paths.items()},
        unverified=tuple(base.flop_per_sm_per_clk),
    )


def ops_peaks(cc: str, sm_count: int, boost_clock_ghz: float) -> dict[str, tuple[float, str]]:
    """Integer and special-function ceilings of a GPU of compute capability `cc`, in operations
    per second, with their sources: "int8" (dense INT8 tensor operations) and "xu"
    (special-function results)."""
    arch = arch_for_cc(cc)
    if arch is None:
        return {}
    out: dict[str, tuple[float, str]] = {}
    figures = {"xu": arch.xu_ops, "int8": arch.int8_tensor_ops}
    for name, figure in figures.items():
        if figure is not None:
            rate = figure.per_sm_per_clock * sm_count * boost_clock_ghz * 1e9
            what = f"{figure.per_sm_per_clock:g}/clk/SM x {sm_count} SMs x {boost_clock_ghz:g} GHz boost"
            out[name] = (rate, f"{arch.name} (cc {arch.cc}): {what}; {figure.describe()}")
    return out


def tensor_peaks(cc: str, fp16_tensor_flop_per_s: float, fp16_source: str) -> dict[str, tuple[float, str]]:
    """Dense peaks of the floating tensor data paths (tf32, bf16, fp16, fp8) of a GPU of compute
    capability `cc`, in FLOP/s with their sources: each path's ratio to the GPU's own dense FP16
    tensor peak (its datasheet figure; a per-clock figure x SMs x the table's boost clock would
    overstate GPUs whose datasheet quotes tensor peaks below that clock, e.g. H100 SXM5 at 1.83 GHz)."""
    arch = arch_for_cc(cc)
    if arch is None:
        return {}
    return {
        path: (
            scale.ratio * fp16_tensor_flop_per_s,
            f"{arch.name} (cc {arch.cc}): {scale.describe()} x FP16 tensor peak ({fp16_source})",
        )
        for path, scale in arch.tensor_paths.items()
    }
