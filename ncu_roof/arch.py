"""Per-architecture throughput figures the report does not carry: issue slots, the special-function
unit (XU) and INT8 tensor rates, keyed by compute capability, each with its source.

Shared by `analyze` (the instruction roofline's issue peak where the report lacks a scheduler
count) and `predict` (integer and special-function ceilings of a built-in GPU). Figures marked
`verified=False` are derived or unverified on real hardware and say so wherever they are shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

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
class Arch:
    cc: str  # "8.0"
    name: str
    schedulers_per_sm: Figure  # warp instructions issued per SM per clock
    xu_ops: Figure  # special-function results (exp2, log2, rsqrt, sin, cos, rcp) per SM per clock
    int8_tensor_ops: Figure | None  # dense INT8 tensor operations (2 per MAC) per SM per clock
    tensor_paths: Mapping[str, PathScale] = field(default_factory=dict)  # floating tensor paths


@dataclass(frozen=True)
class PathScale:
    """A floating tensor data path's dense rate as a multiple of the dense FP16 tensor rate."""

    ratio: float
    source: str
    verified: bool = True

    def describe(self) -> str:
        return self.source if self.verified else f"{self.source} (unverified)"


def _datasheet(ops: float, what: str) -> Figure:
    return Figure(ops, f"derived: {what} dense INT8 TOPS / (SMs x boost clock)", verified=False)


def _paths(datasheet: str, ratios: Mapping[str, float], verified: bool = True) -> dict[str, PathScale]:
    return {p: PathScale(r, f"{datasheet} (dense, x{r:g} of FP16)", verified) for p, r in ratios.items()}


_FP16 = {"fp16": 1.0}
_AMPERE = {"tf32": 0.5, "bf16": 1.0, "fp16": 1.0}
_WITH_FP8 = {**_AMPERE, "fp8": 2.0}
_ISSUE = Figure(4, WHITEPAPERS)
_XU = Figure(16, GUIDE)
_UNVERIFIED_ISSUE = Figure(4, WHITEPAPERS, verified=False)
_UNVERIFIED_XU = Figure(16, GUIDE, verified=False)

ARCHS: tuple[Arch, ...] = (
    Arch("7.0", "Volta", _ISSUE, _XU, None, _paths("NVIDIA V100 datasheet: FP16 tensor 125 TFLOPS", _FP16)),
    Arch(
        "7.5",
        "Turing",
        _ISSUE,
        _XU,
        _datasheet(2048, "T4 datasheet 130"),
        _paths("NVIDIA T4 datasheet: FP16 tensor 65 TFLOPS", _FP16),
    ),
    Arch(
        "8.0",
        "Ampere GA100",
        _ISSUE,
        _XU,
        _datasheet(4096, "A100 datasheet 624"),
        _paths("NVIDIA A100 datasheet: TF32 156, BF16 312, FP16 312 TFLOPS", _AMPERE),
    ),
    Arch(
        "8.6",
        "Ampere GA10x",
        _ISSUE,
        _XU,
        _datasheet(2048, "A10 datasheet 250"),
        _paths("NVIDIA A10 datasheet: TF32 62.5, BF16 125, FP16 125 TFLOPS", _AMPERE),
    ),
    Arch(
        "8.9",
        "Ada",
        _ISSUE,
        _XU,
        _datasheet(2048, "L4 datasheet 242"),
        _paths("NVIDIA L4 datasheet: TF32 60, BF16 121, FP16 121, FP8 242.5 TFLOPS", _WITH_FP8),
    ),
    Arch(
        "9.0",
        "Hopper",
        _ISSUE,
        _XU,
        Figure(8192, "ncu report: sm__ops_path_tensor_src_int8.sum.peak_sustained / SMs (H100 PCIe)"),
        _paths(
            "NVIDIA H100 datasheet (SXM5): TF32 494.7, BF16 989.4, FP16 989.4, FP8 1979 TFLOPS", _WITH_FP8
        ),
    ),
    Arch(
        "10.0",
        "Blackwell",
        _UNVERIFIED_ISSUE,
        _UNVERIFIED_XU,
        None,
        _paths("NVIDIA B200 datasheet: TF32 1.1, BF16 2.25, FP16 2.25, FP8 4.5 PFLOPS", _WITH_FP8, False),
    ),
    Arch("12.0", "Blackwell GB20x", _UNVERIFIED_ISSUE, _UNVERIFIED_XU, None),
)

def arch_for_cc(cc: str | None) -> Arch | None:
    """The figures of a compute capability ("8.0"; "8.0" also for "8" or "80"), or None."""
    if cc is None:
        return None
    text = cc.strip()
    if re.fullmatch(r"\d\d", text):
        text = f"{text[0]}.{text[1]}"
    elif re.fullmatch(r"\d+", text):
        text += ".0"
    return next((a for a in ARCHS if a.cc == text), None)


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
