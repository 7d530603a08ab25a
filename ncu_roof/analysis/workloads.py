"""Built-in workload models: FLOPs and minimum bytes of common kernels, before any profiling.

Each model is a small pure function returning a `Workload` with the assumptions behind its counts
(seed 000's vector add, RMSNorm and GEMM; seed 004's dot product and 7-point stencil). Bytes are
DRAM bytes: the traffic between the chip and its memory that the model cannot avoid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ncu_roof.errors import UsageError

DTYPE_BYTES = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2}
VECTOR_PRECISION = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "bf16": "fp16"}
# Floating tensor data paths: GEMM (and `--flops`) work in these runs against the path's own dense
# tensor peak, the roof `tensor:PATH` (`arch.tensor_peaks`); tf32 and fp8 are matrix-only.
TENSOR_DTYPES = ("tf32", "bf16", "fp16", "fp8")
TENSOR_BYTES = {"tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
MATRIX_PRECISION = {"fp64": "fp64", "fp32": "fp32", **{d: f"tensor:{d}" for d in TENSOR_DTYPES}}
# Integer data paths: their work is operations (2 per multiply-accumulate), never FLOPs, against
# their own ceiling (`prediction.builtin_ops_peaks`).
OPS_DTYPES = ("int8",)
INT8_BYTES = 1
INT32_BYTES = 4
FP8_OUT_BYTES = 2  # an fp8 GEMM writes C in bf16/fp16 (assumed; fp8 output is rarer)

Param = int | str | bool


@dataclass(frozen=True)
class Workload:
    name: str
    params: Mapping[str, Param]
    flop: float
    bytes_by_tier: Mapping[str, float]
    precision: str  # the compute roof it runs against: fp64, fp32, fp16 (CUDA cores) or tensor:PATH
    assumptions: tuple[str, ...]
    ops: float = 0.0  # non-floating-point operations (integer tensor ops, special-function results)
    ops_ceiling: str | None = None  # the ceiling they run against: "int8" (tensor) or "xu"


def _dtype_bytes(dtype: str) -> int:
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        choices = ", ".join((*DTYPE_BYTES, "tf32", "fp8", *OPS_DTYPES))
        hint = f"use one of {choices} (tf32, fp8, int8: gemm only)"
        raise UsageError(f"unknown dtype {dtype!r}", hint=hint) from None


def vector_add(n: int, dtype: str = "fp32") -> Workload:
    size = _dtype_bytes(dtype)
    return Workload(
        "vector-add",
        {"n": n, "dtype": dtype},
        float(n),
        {"dram": 3.0 * n * size},
        VECTOR_PRECISION[dtype],
        (f"y = x + z: {n} additions, 1 FLOP each", f"read x and z, write y once: 3 x {n} x {size} B"),
    )


def dot(n: int, dtype: str = "fp32") -> Workload:
    size = _dtype_bytes(dtype)
    return Workload(
        "dot",
        {"n": n, "dtype": dtype},
        2.0 * n,
        {"dram": 2.0 * n * size},
        VECTOR_PRECISION[dtype],
        (
            f"s = sum x*y: {n} multiplies and {n} adds (N-1 adds counted as N, exact for large N)",
            f"read x and y once: 2 x {n} x {size} B; the scalar result is negligible",
        ),
    )


def saxpy(n: int, dtype: str = "fp32") -> Workload:
    size = _dtype_bytes(dtype)
    return Workload(
        "saxpy",
        {"n": n, "dtype": dtype},
        2.0 * n,
        {"dram": 3.0 * n * size},
        VECTOR_PRECISION[dtype],
        (
            f"y = a*x + y: one multiply and one add per element, {n} elements",
            f"read x and y, write y once: 3 x {n} x {size} B",
        ),
    )


def _rowwise(
    name: str,
    d: int,
    tokens: int,
    dtype: str,
    unfused: bool,
    *,
    flop_per_value: float,
    unfused_passes: int,
    unfused_traffic: str,
    fused_traffic: str,
    counted: tuple[str, ...],
) -> Workload:
    """An operation over `tokens` rows of `d` values: unfused, each pass over a row goes through
    DRAM; fused, the row is read once and written once (intermediates stay on chip)."""
    size = _dtype_bytes(dtype)
    passes = unfused_passes if unfused else 2
    traffic = unfused_traffic if unfused else fused_traffic
    return Workload(
        name,
        {"d": d, "tokens": tokens, "dtype": dtype, "unfused": unfused},
        flop_per_value * d * tokens,
        {"dram": float(passes * d * size * tokens)},
        VECTOR_PRECISION[dtype],
        (counted[0], "per row of d, " + traffic, *counted[1:]),
    )


_FUSED = "fused: read x and write y once: 2 x d x size B (intermediates stay on chip)"


def rmsnorm(d: int, tokens: int = 1, dtype: str = "fp32", unfused: bool = False) -> Workload:
    return _rowwise(
        "rmsnorm",
        d,
        tokens,
        dtype,
        unfused,
        flop_per_value=4.0,
        unfused_passes=5,
        unfused_traffic="unfused: read x, 3 intermediates written and re-read from DRAM, write y: "
        "5 x d x size B",
        fused_traffic=_FUSED,
        counted=(
            "per token: square d, sum d-1, mean/eps/rsqrt ~4, scale by rms and gamma 2d: ~4d FLOP",
            "gamma (d values) stays in cache across tokens and is not counted",
        ),
    )


def layernorm(d: int, tokens: int = 1, dtype: str = "fp32", unfused: bool = False) -> Workload:
    return _rowwise(
        "layernorm",
        d,
        tokens,
        dtype,
        unfused,
        flop_per_value=7.0,
        unfused_passes=7,
        unfused_traffic="unfused: read x for the mean, read x again and write x-mean, read x-mean "
        "for the variance, read it again and write the normalized tensor, read that and write y: "
        "7 x d x size B",
        fused_traffic=_FUSED,
        counted=(
            "per token: mean d, subtract d, square d, sum d, multiply by rstd d, gamma d, beta d: "
            "~7d FLOP (the few scalar ops are neglected)",
            "gamma and beta stay in cache across tokens and are not counted",
        ),
    )


def softmax(d: int, tokens: int = 1, dtype: str = "fp32", unfused: bool = False) -> Workload:
    return _rowwise(
        "softmax",
        d,
        tokens,
        dtype,
        unfused,
        flop_per_value=5.0,
        unfused_passes=6,
        unfused_traffic="unfused: read x for the max, read x and write exp(x-max), read that for "
        "the sum, read it again and write y: 6 x d x size B",
        fused_traffic="fused (online softmax): read x and write y once: 2 x d x size B",
        counted=("per row of d: max d, subtract d, exp d (counted as 1 FLOP), sum d, divide d: 5d FLOP",),
    )


def gemm(m: int, n: int, k: int, dtype: str = "fp32", tile: int | None = None) -> Workload:
    """C (m x n) = A (m x k) @ B (k x n): ideal reuse, or square T x T output tiles. An int8 GEMM
    does 2mnk integer operations (no FLOPs) and writes int32 C."""
    integer = dtype in OPS_DTYPES
    size = INT8_BYTES if integer else TENSOR_BYTES.get(dtype) or _dtype_bytes(dtype)
    out_size = INT32_BYTES if integer else FP8_OUT_BYTES if dtype == "fp8" else size
    params: dict[str, Param] = {"m": m, "n": n, "k": k, "dtype": dtype}
    if tile is None:
        inputs = float(m * k + k * n)
        traffic = "ideal reuse: read A and B once, write C once: (mk + kn) x size + mn x C size B"
    else:
        params["tile"] = tile
        inputs = float(m * k * math.ceil(n / tile) + k * n * math.ceil(m / tile))
        traffic = (
            f"tiled, {tile}x{tile} output tiles: each tile reads a {tile}-row strip of A and a "
            f"{tile}-column strip of B, so A is read ceil(n/{tile}) times and B ceil(m/{tile}) "
            "times; C written once"
        )
    work = 2.0 * m * n * k
    nbytes = {"dram": inputs * size + float(m * n) * out_size}
    if integer:
        return Workload(
            "gemm",
            params,
            0.0,
            nbytes,
            "tensor",
            (
                "2mnk integer operations (one multiply and one add per (i, j, l)) on INT8 tensor "
                "cores; no FLOPs",
                traffic,
                "A and B int8 (1 B), C int32 (4 B)",
            ),
            ops=work,
            ops_ceiling="int8",
        )
    return Workload(
        "gemm",
        params,
        work,
        nbytes,
        MATRIX_PRECISION[dtype],
        (
            "2mnk FLOP: one multiply and one add per (i, j, l)",
            traffic,
            f"{dtype} on the {dtype} tensor data path (its dense peak)"
            if dtype in TENSOR_DTYPES
            else f"{dtype} on CUDA cores",
            *(("A and B fp8 (1 B), C bf16 (2 B)",) if dtype == "fp8" else ()),
        ),
    )


def exp(n: int, dtype: str = "fp32") -> Workload:
    """y = exp(x) over n elements: one special-function (XU) result and one multiply each."""
    size = _dtype_bytes(dtype)
    return Workload(
        "exp",
        {"n": n, "dtype": dtype},
        float(n),
        {"dram": 2.0 * n * size},
        VECTOR_PRECISION[dtype],
        (
            f"exp(x) = exp2(x * log2(e)): one multiply (1 FLOP) and one MUFU.EX2 on the "
            f"special-function unit (XU) per element, {n} elements",
            f"read x and write y once: 2 x {n} x {size} B",
        ),
        ops=float(n),
        ops_ceiling="xu",
    )


def stencil7(n: int, dtype: str = "fp64") -> Workload:
    size = _dtype_bytes(dtype)
    return Workload(
        "stencil7",
        {"n": n, "dtype": dtype},
        13.0 * n,
        {"dram": 2.0 * n * size},
        VECTOR_PRECISION[dtype],
        (
            f"7-point stencil over {n} points: 7 multiplies + 6 adds = 13 FLOP per point",
            f"with reuse of neighbours on chip: one {size} B read and one {size} B write per point",
        ),
    )


BUILDERS: Mapping[str, Callable[..., Workload]] = {
    "vector-add": vector_add,
    "dot": dot,
    "saxpy": saxpy,
    "rmsnorm": rmsnorm,
    "layernorm": layernorm,
    "softmax": softmax,
    "gemm": gemm,
    "stencil7": stencil7,
    "exp": exp,
}
REQUIRED: Mapping[str, tuple[str, ...]] = {
    "vector-add": ("n",),
    "dot": ("n",),
    "saxpy": ("n",),
    "stencil7": ("n",),
    "rmsnorm": ("d",),
    "layernorm": ("d",),
    "softmax": ("d",),
    "gemm": ("m", "n", "k"),
    "exp": ("n",),
}
OPTIONAL: Mapping[str, tuple[str, ...]] = {
    "vector-add": ("dtype",),
    "dot": ("dtype",),
    "saxpy": ("dtype",),
    "stencil7": ("dtype",),
    "rmsnorm": ("tokens", "dtype", "unfused"),
    "layernorm": ("tokens", "dtype", "unfused"),
    "softmax": ("tokens", "dtype", "unfused"),
    "gemm": ("dtype", "tile"),
    "exp": ("dtype",),
}


def build(name: str, params: Mapping[str, Param | None]) -> Workload:
    """A workload by name, from the parameters given (None = not given)."""
    if name not in BUILDERS:
        raise UsageError(f"unknown workload {name!r}", hint="choose one of " + ", ".join(BUILDERS))
    given = {k: v for k, v in params.items() if v is not None and v is not False}
    missing = [p for p in REQUIRED[name] if p not in given]
    if missing:
        flags = " ".join(f"--{p} N" for p in missing)
        raise UsageError(f"workload {name} needs {', '.join(missing)}", hint=f"add {flags}")
    extra = sorted(set(given) - set(REQUIRED[name]) - set(OPTIONAL[name]))
    if extra:
        raise UsageError(
            f"workload {name} does not take {', '.join(extra)}",
            hint=f"{name} takes " + ", ".join((*REQUIRED[name], *OPTIONAL[name])),
        )
    dtype = given.get("dtype")
    if dtype in (*OPS_DTYPES, "tf32", "fp8") and name != "gemm":
        raise UsageError(f"dtype {dtype} is for gemm only", hint="use fp64, fp32, fp16 or bf16")
    for key, value in given.items():
        if key not in ("dtype", "unfused") and (not isinstance(value, int) or value <= 0):
            raise UsageError(f"{key} must be a positive integer, not {value!r}", hint=f"e.g. --{key} 4096")
    return BUILDERS[name](**given)
