"""Predict a kernel's roofline before it exists: FLOPs and bytes (or intensities) against roofs.
The verdict comes from `model.roofline()`, the same function `analyze` uses for measured kernels."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field, replace

import numpy as np

from ncu_roof.analysis.model import (
    RooflinePoint,
    bound_of,
    compute_roof_arrays,
    default_precision,
    nan_to_none,
    per_kernel,
    roofline,
)
from ncu_roof.analysis.workloads import Param, Workload
from ncu_roof.base.units import Dimension, parse_quantity
from ncu_roof.base.vocabulary import COMPUTE, Roofs
from ncu_roof.errors import UsageError
from ncu_roof.gpus.arch import arch_for_cc
from ncu_roof.gpus.lookup import gpu_by_key
from ncu_roof.gpus.specs import TERA, scaled

ANY_PRECISION = "any"  # a bare `--peak V`: the one compute roof of a custom platform
DEFAULT_TIER = "dram"


@dataclass(frozen=True)
class Prediction:
    roofs: Roofs
    workload_name: str | None
    params: Mapping[str, Param]
    flop: float | None  # None when only intensities were given
    bytes_by_tier: Mapping[str, float]  # empty for tiers known only by their intensity
    point: RooflinePoint
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    ops: OpsCeiling | None = None  # integer or special-function work beside the FLOPs

    @property
    def bound(self) -> str:
        return bound_of(self.point.binding).value

    @property
    def attainable_flop_per_s(self) -> float | None:
        return self.point.attainable_flop_per_s

    @property
    def binding(self) -> str | None:
        """The tier or `compute` roof that caps the kernel (None: nothing can be said)."""
        return self.point.binding

    @property
    def compute_ceiling(self) -> str | None:
        """What limits compute: the FLOP precision, or "int8" / "xu" when the operations take longer."""
        return self.ops.ceiling if self.ops is not None and self.ops.binds else self.point.compute_precision


@dataclass(frozen=True)
class OpsCeiling:
    """Operations that are not FLOPs, against their own ceiling (ops/s)."""

    count: float
    ceiling: str  # "int8" (dense INT8 tensor operations) or "xu" (special-function results)
    peak_per_s: float
    source: str
    flop_time_s: float | None  # the FLOPs' own time at their peak (None: no FLOP peak, and no FLOPs)

    @property
    def time_s(self) -> float:
        return self.count / self.peak_per_s

    @property
    def binds(self) -> bool:
        """The operations take longer than the FLOPs: they name the compute ceiling."""
        return self.flop_time_s is None or self.time_s > self.flop_time_s

    @property
    def compute_time_s(self) -> float | None:
        """The compute roof's time as `analyze` takes it (None: the FLOPs' own): INT8 ops and FLOPs each at
        their peak, added (as a kernel's precisions); XU results run beside the FLOPs: the longer."""
        if self.ceiling == "int8":
            return (self.flop_time_s or 0.0) + self.time_s
        return self.time_s if self.binds else None


Peaks = Mapping[str, tuple[float, str]]  # a tensor path's FLOP/s, or a ceiling's ops/s → (rate, source)
TENSOR = "tensor:"  # the roof of one tensor data path: "tensor:bf16"


def builtin_peaks(gpu: str | None) -> tuple[Peaks, Peaks]:
    """A built-in GPU's dense floating tensor data-path peaks (FLOP/s), and its integer-tensor and
    special-function ceilings (ops/s), from its architecture's figures (none if unlisted). Each floating path:
    its ratio to the GPU's dense FP16 tensor peak x that datasheet figure (per-clock x SMs x boost clock would
    overstate GPUs quoting tensor peaks below that clock, e.g. H100 SXM5 at 1.83 GHz). XU: results per SM per
    clock x SMs x boost clock. INT8 (dense tensor) takes the other tensor paths' clock: its per-clock ratio to
    dense FP16 tensor x that datasheet peak (the boost clock would overstate H100 SXM5: 8192 x 132 SMs x 1.98
    GHz = 2.141 POP/s, against the datasheet's 1979 TOPS dense, = its FP8)."""
    row = gpu_by_key(gpu) if gpu else None
    arch = arch_for_cc(row.cc) if row is not None else None
    if row is None or arch is None:
        return {}, {}
    where = f"{arch.name} (cc {arch.cc})"
    fp16 = f"{row.name} datasheet, dense FP16 tensor {row.tensor_tflop_per_s:g} TFLOP/s"
    fp16_flop_per_s = scaled(row.tensor_tflop_per_s, TERA)
    paths = {
        path: (scale.ratio * fp16_flop_per_s, f"{where}: {scale.describe()} x FP16 tensor peak ({fp16})")
        for path, scale in arch.tensor_paths.items()
    }
    xu = arch.xu_ops
    what = f"{xu.per_sm_per_clock:g}/clk/SM x {row.sm_count} SMs x {row.boost_clock_ghz:g} GHz boost"
    rate = xu.per_sm_per_clock * row.sm_count * row.boost_clock_ghz * 1e9
    ops = {"xu": (rate, f"{where}: {what}; {xu.describe()}")}
    int8 = arch.int8_tensor_ops
    if int8 is None or not arch.flop_per_sm_per_clk.get("tensor"):
        return paths, ops
    ratio = int8.per_sm_per_clock / arch.flop_per_sm_per_clk["tensor"]
    ops["int8"] = (
        ratio * fp16_flop_per_s,
        f"{where}: {int8.per_sm_per_clock:g} INT8 ops/clk/SM = x{ratio:g} of "
        f"FP16 tensor ({int8.describe()}) x {fp16} (one clock with its tensor paths)",
    )
    return paths, ops


def with_tensor_path(roofs: Roofs, precision: str | None, peaks: Peaks) -> Roofs:
    """`roofs` with the `tensor:PATH` roof `precision` names: the GPU's figure, else the platform's
    `tensor:PATH` or `PATH` peak, else its `tensor` roof for fp16, or bf16 where the architecture lists no
    paths (a user's or unlisted platform): Volta and Turing (listed without bf16) lack BF16 tensor cores."""
    if precision is None or not precision.startswith(TENSOR):
        return roofs
    path, compute = precision.removeprefix(TENSOR), roofs.compute_flop_per_s
    if path in peaks:
        rate, source = peaks[path]
    elif precision in compute:
        return roofs
    else:
        half = path == "fp16" or (path == "bf16" and not peaks)
        given = path if path in compute else "tensor" if half and "tensor" in compute else None
        if given is None:
            raise UsageError(
                f"this platform has no {path} tensor peak (it has {', '.join(compute) or 'none'})",
                hint=f"choose another --dtype, or give it: --peak {precision}=FLOP_PER_S "
                f"(with --bandwidth TIER=VALUE), or a [peak] entry in --roofs FILE.toml",
            )
        rate, source = compute[given], roofs.sources.get(given, roofs.source)
    return replace(
        roofs, compute_flop_per_s={**compute, precision: rate}, sources={**roofs.sources, precision: source}
    )


_EXAMPLES = {
    Dimension.BYTE: "1.5GB",
    Dimension.FLOP_PER_S: "19.5TFLOP/s",
    Dimension.BYTE_PER_S: "1.5TB/s",
    Dimension.FLOP_PER_BYTE: "0.25",  # intensities are plain ratios, never SI-prefixed in practice
}


def parse_assignments(
    items: Sequence[str], dimension: Dimension, default_key: str | None, *, positive: bool = False
) -> dict[str, float]:
    """NAME=VALUE items (`l2=5TB/s`; a bare `5TB/s` is `default_key`'s where there is one); a roof
    (`positive`) must be above zero, a count may be zero."""
    out: dict[str, float] = {}
    for item in items:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep and default_key is not None:
            key, value = default_key, key
        elif not (sep and key and value):
            raise UsageError(f"{item!r}: expected NAME=VALUE", hint="e.g. dram=20GB/s or l2=1")
        key = key.lower()
        if key in out:
            raise UsageError(f"{key} given twice ({item!r})", hint="give each tier or precision once")
        number = parse_quantity(value, dimension)
        if not math.isfinite(number) or number < 0 or (positive and number == 0):
            kind = "positive" if positive else "non-negative"
            raise UsageError(
                f"{item!r}: must be {kind} (a finite {dimension.value or 'number'})",
                hint=f"e.g. {key}={_EXAMPLES.get(dimension, '2')}",
            )
        out[key] = number
    return out


def custom_roofs(peaks: Sequence[str], bandwidths: Sequence[str]) -> Roofs:
    """`--peak [PRECISION=]V` and `--bandwidth TIER=V` → a user platform (tier names are free)."""
    compute = parse_assignments(peaks, Dimension.FLOP_PER_S, ANY_PRECISION, positive=True)
    if not (bandwidth := parse_assignments(bandwidths, Dimension.BYTE_PER_S, None, positive=True)):
        raise UsageError(
            "a custom platform needs at least one --bandwidth TIER=V",
            hint="e.g. --peak 100GFLOP/s --bandwidth dram=20GB/s",
        )
    sources = {k: "user: command line" for k in (*compute, *bandwidth)}
    return Roofs(compute, bandwidth, source="user", sources=sources, name="custom")


def peak_for(roofs: Roofs, precision: str | None) -> tuple[float | None, str | None]:
    """The compute roof for `precision` (None: the platform's default, fp32 first)."""
    peaks = roofs.compute_flop_per_s
    if precision is None:  # the platform's default (fp32 first), named; else its one unnamed roof
        if (default := default_precision(peaks)) is None:
            return peaks.get(ANY_PRECISION), None
        return nan_to_none(per_kernel(peaks[default], 1)[0]), default
    roof, dominant = compute_roof_arrays({precision: np.ones(1)}, peaks)
    peak = nan_to_none(roof[0])
    if peak is None and precision not in peaks and ANY_PRECISION in peaks:  # a custom platform's one roof
        return peaks[ANY_PRECISION], precision
    if peak is None and peaks:
        raise UsageError(
            f"this platform has no {precision} peak (it has {', '.join(peaks)})",
            hint=f"choose another --dtype, or describe the platform with its {precision} peak: "
            f"--roofs FILE.toml, or --peak {precision}=VALUE with --bandwidth TIER=VALUE",
        )
    return peak, dominant[0]


def ops_peak(roofs: Roofs, peaks: Peaks, ceiling: str) -> tuple[float, str]:
    """The ops/s ceiling: the GPU's per-architecture figure, else the platform's `--peak NAME=V`."""
    if ceiling in peaks:
        return peaks[ceiling]
    if ceiling in roofs.compute_flop_per_s:
        return roofs.compute_flop_per_s[ceiling], roofs.sources.get(ceiling, "user")
    raise UsageError(
        f"this platform has no {ceiling} ceiling (operations per second)",
        hint=f"give it: --peak {ceiling}=OPS_PER_S (a bare number, operations per second), or a "
        f"[peak] {ceiling} entry in --roofs FILE.toml",
    )


def predict(
    roofs: Roofs,
    flop: float | None,
    bytes_by_tier: Mapping[str, float],
    intensity_by_tier: Mapping[str, float],
    precision: str | None = None,
    workload: Workload | None = None,
    ops: float | None = None,
    ops_ceiling: str | None = None,
    ops_peaks: Peaks | None = None,
    tensor_peaks: Peaks | None = None,
) -> Prediction:
    """Place a kernel on `roofs`; tiers known by intensity get bytes = FLOP / intensity. `ops` (integer tensor
    operations, special-function results) run against their own ceiling `ops_ceiling` (the compute roof's
    time: `OpsCeiling.compute_time_s`); a `tensor:PATH` precision against its dense peak (`tensor_peaks`)."""
    roofs = with_tensor_path(roofs, precision, tensor_peaks or {})
    flop = _checked_work(flop, ops)
    _check_tiers(roofs, bytes_by_tier, intensity_by_tier)
    nominal_flop = 1.0 if flop is None else flop
    derived = {t: nominal_flop / x for t, x in intensity_by_tier.items()}
    peak, used_precision = peak_for(roofs, precision)
    if flop and peak is None and roofs.compute_flop_per_s:  # (no roof at all: placed by its bytes)
        raise UsageError(
            f"this platform has no peak for the FLOPs (it has {', '.join(roofs.compute_flop_per_s)})",
            hint="describe it with the FLOPs' peak too: --peak fp32=VALUE (or --dtype and its peak)",
        )
    ceiling: OpsCeiling | None = None
    if ops and ops_ceiling is not None:
        rate, source = ops_peak(roofs, ops_peaks or {}, ops_ceiling)
        ceiling = OpsCeiling(ops, ops_ceiling, rate, source, nominal_flop / peak if peak else None)
    compute_time_s = ceiling.compute_time_s if ceiling is not None else None

    def place(tied: Set[str]) -> RooflinePoint:
        nbytes = {**bytes_by_tier, **{t: 0.0 if t in tied else b for t, b in derived.items()}}
        return roofline(
            nominal_flop, nbytes, peak, roofs.bandwidth_byte_per_s, used_precision, compute_time_s
        )

    point = place(set())
    # Tiers known by intensity are judged by it, not by the bytes derived from it: bytes = FLOP /
    # intensity and time = bytes / bandwidth round twice, so a tier exactly at its ridge point
    # could outlast compute by an ulp. One whose intensity is at or above compute cap / bandwidth
    # cannot bind (a tie with compute is compute): placed again with no traffic, it caps at the
    # compute roof. Each reports its intensity as given.
    cap = point.cap_flop_per_s.get(COMPUTE)
    if point.flop and cap is not None and cap > 0:
        tied = {t for t, x in intensity_by_tier.items() if x >= cap / roofs.bandwidth_byte_per_s[t]}
        point = place(tied) if tied else point
        given = {t: x for t, x in intensity_by_tier.items() if t in point.intensity_flop_per_byte}
        point = replace(point, intensity_flop_per_byte={**point.intensity_flop_per_byte, **given})
    if flop is None:
        point = replace(point, flop=None, time_at_roof_s=None)
    return Prediction(
        roofs=roofs,
        workload_name=workload.name if workload else None,
        params=dict(workload.params) if workload else {},
        flop=flop,
        bytes_by_tier=dict(bytes_by_tier) if flop is None else {**bytes_by_tier, **derived},
        point=point,
        assumptions=workload.assumptions if workload else (),
        ops=ceiling,
    )


def _checked_work(flop: float | None, ops: float | None) -> float | None:
    """The FLOPs to place (0 for integer work alone); a negative or non-finite count is refused."""
    if ops is not None and not (math.isfinite(ops) and ops >= 0):
        raise UsageError(f"--ops {ops!r}: must be a finite, non-negative count", hint="e.g. --ops 4e10")
    if ops and flop is None:
        flop = 0.0  # integer work alone: no floating-point operations
    if flop is not None and not (math.isfinite(flop) and flop >= 0):
        raise UsageError(
            f"--flops {flop!r}: must be a finite, non-negative FLOP count",
            hint="e.g. --flops 1e9 or --flops 2.5GFLOP",
        )
    return flop


def _check_tiers(
    roofs: Roofs, bytes_by_tier: Mapping[str, float], intensity_by_tier: Mapping[str, float]
) -> None:
    """Each tier given once, by bytes or by a positive intensity, and with a bandwidth here."""
    if both := sorted(set(bytes_by_tier) & set(intensity_by_tier)):
        raise UsageError(
            f"tier {both[0]} given both bytes and intensity; give one",
            hint=f"--bytes {both[0]}=N or --intensity {both[0]}=X, not both",
        )
    if not (given := {**bytes_by_tier, **intensity_by_tier}):
        raise UsageError(
            "nothing to place: give --bytes [TIER=]N or --intensity TIER=X",
            hint="or name a workload, e.g. `ncu-roof predict vector-add --n 1e7`",
        )
    if unknown := sorted(t for t in given if t not in roofs.bandwidth_byte_per_s):
        raise UsageError(
            f"tier {unknown[0]} has no bandwidth on this platform "
            f"(it has {', '.join(roofs.bandwidth_byte_per_s) or 'none'})",
            hint=f"add --bandwidth {unknown[0]}=VALUE, or use one of the platform's tiers",
        )
    if bad := sorted(t for t, x in intensity_by_tier.items() if not (math.isfinite(x) and x > 0)):
        raise UsageError(
            f"intensity {bad[0]}={intensity_by_tier[bad[0]]!r}: must be positive (a finite FLOP/B)",
            hint=f"e.g. --intensity {bad[0]}=0.25",
        )


def predict_workload(
    roofs: Roofs, workload: Workload, ops_peaks: Peaks | None = None, tensor_peaks: Peaks | None = None
) -> Prediction:
    return predict(
        roofs,
        workload.flop,
        workload.bytes_by_tier,
        {},
        workload.precision,
        workload,
        ops=workload.ops or None,
        ops_ceiling=workload.ops_ceiling,
        ops_peaks=ops_peaks,
        tensor_peaks=tensor_peaks,
    )
