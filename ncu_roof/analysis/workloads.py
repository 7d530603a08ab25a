"""Built-in workload models: FLOPs and minimum bytes of common kernels, before any profiling. Each
gives a `Workload` with the assumptions behind its counts: GEMM (seed 000's) is counted here, the
others by their figures in ncu_roof/data/workloads.toml (which holds every model's texts). Bytes are
DRAM bytes: the traffic between the chip and its memory that the model cannot avoid."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncu_roof.base.tomlfile import package_table
from ncu_roof.errors import UsageError

# bytes per value; tf32, fp8 and int8 are matrix-only (gemm)
DTYPE_BYTES = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "tf32": 4, "fp8": 1, "int8": 1}
# bf16 outside GEMM: its arithmetic at the FP32 roof (said in the assumptions), never FP16's: packed
# bf16 runs at half the FP16 rate on the A100 (datasheet: FP16 78, BF16 39 TFLOPS non-tensor)
VECTOR_PRECISION = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "bf16": "fp32"}
BF16_IN_FP32 = "bf16 values widened to fp32 for the arithmetic (as elementwise kernels do): the FP32 roof"
# Floating tensor data paths: GEMM (and `--flops`) work in these runs against the path's own dense
# tensor peak, the roof `tensor:PATH` (`prediction.builtin_peaks`).
TENSOR_DTYPES = ("tf32", "bf16", "fp16", "fp8")
MATRIX_PRECISION = {"fp64": "fp64", "fp32": "fp32", **{d: f"tensor:{d}" for d in TENSOR_DTYPES}}
# Integer data paths: their work is operations (2 per multiply-accumulate), never FLOPs, against
# their own ceiling (`prediction.builtin_peaks`).
OPS_DTYPES = ("int8",)
INT32_BYTES = 4
FP8_OUT_BYTES = 2  # an fp8 GEMM writes C in bf16/fp16 (assumed; fp8 output is rarer)

Param = int | str | bool
MODELS: Mapping[str, Mapping[str, Any]] = package_table("workloads")


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


def gemm(m: int, n: int, k: int, dtype: str = "fp32", tile: int | None = None) -> Workload:
    """C (m x n) = A (m x k) @ B (k x n): ideal reuse, or square T x T output tiles. An int8 GEMM
    does 2mnk integer operations (no FLOPs) and writes int32 C."""
    integer, size = dtype in OPS_DTYPES, DTYPE_BYTES[dtype]
    out_size = INT32_BYTES if integer else FP8_OUT_BYTES if dtype == "fp8" else size
    params: dict[str, Param] = {"m": m, "n": n, "k": k, "dtype": dtype}
    texts = MODELS["gemm"]
    if tile is None:
        inputs, traffic = float(m * k + k * n), texts["ideal_traffic"]
    else:
        params["tile"] = tile
        inputs = float(m * k * math.ceil(n / tile) + k * n * math.ceil(m / tile))
        traffic = texts["tiled_traffic"].format(tile=tile)
    work = 2.0 * m * n * k
    nbytes = {"dram": inputs * size + float(m * n) * out_size}
    if integer:
        counted, sizes = texts["integer"]
        said = (counted, traffic, sizes)
        return Workload("gemm", params, 0.0, nbytes, "tensor", said, ops=work, ops_ceiling="int8")
    path = texts["tensor_path" if dtype in TENSOR_DTYPES else "cuda_cores"].format(dtype=dtype)
    said = (texts["flop"], traffic, path, *((texts["fp8"],) if dtype == "fp8" else ()))
    return Workload("gemm", params, work, nbytes, MATRIX_PRECISION[dtype], said)


def _modelled(name: str, given: Mapping[str, Any]) -> Workload:
    """A workload of `MODELS` over n elements, or over `tokens` rows of d values."""
    model = MODELS[name]
    dtype = given.get("dtype", model.get("dtype", "fp32"))
    size = DTYPE_BYTES[dtype]
    widened = (BF16_IN_FP32,) if dtype == "bf16" else ()
    if "n" in model["takes"]:
        n, ceiling = given["n"], model.get("ops_ceiling")
        return Workload(
            name,
            {"n": n, "dtype": dtype},
            model["flop_per_element"] * n,
            {"dram": model["values_per_element"] * n * size},
            VECTOR_PRECISION[dtype],
            (*(text.format(n=n, size=size) for text in model["assumptions"]), *widened),
            ops=float(n) if ceiling else 0.0,
            ops_ceiling=ceiling,
        )
    d, tokens = given["d"], given.get("tokens", 1)
    unfused = given.get("unfused", False)
    passes = model["unfused_passes"] if unfused else 2
    traffic = model["unfused_traffic"] if unfused else model["fused_traffic"]
    counted = model["counted"]
    return Workload(
        name,
        {"d": d, "tokens": tokens, "dtype": dtype, "unfused": unfused},
        model["flop_per_value"] * d * tokens,
        {"dram": float(passes * d * size * tokens)},
        VECTOR_PRECISION[dtype],
        (counted[0], "per row of d, " + traffic, *counted[1:], *widened),
    )


def build(name: str, params: Mapping[str, Param | None]) -> Workload:
    """A workload by name, from the parameters given (None = not given)."""
    if name not in MODELS:
        raise UsageError(f"unknown workload {name!r}", hint="choose one of " + ", ".join(MODELS))
    required, optional = MODELS[name]["takes"], MODELS[name]["options"]
    given: dict[str, Any] = {k: v for k, v in params.items() if v is not None and v is not False}
    if missing := [p for p in required if p not in given]:
        flags = " ".join(f"--{p} N" for p in missing)
        raise UsageError(f"workload {name} needs {', '.join(missing)}", hint=f"add {flags}")
    if extra := sorted(set(given) - set(required) - set(optional)):
        raise UsageError(
            f"workload {name} does not take {', '.join(extra)}",
            hint=f"{name} takes " + ", ".join((*required, *optional)),
        )
    for key, value in given.items():
        if key not in ("dtype", "unfused") and (not isinstance(value, int) or value <= 0):
            raise UsageError(f"{key} must be a positive integer, not {value!r}", hint=f"e.g. --{key} 4096")
    if (dtype := given.get("dtype")) not in (None, *DTYPE_BYTES):
        hint = f"use one of {', '.join(DTYPE_BYTES)} (tf32, fp8, int8: gemm only)"
        raise UsageError(f"unknown dtype {dtype!r}", hint=hint)
    # gemm: every dtype; the others: their `dtypes` (exp: no fp64), else the CUDA-core ones
    modelled = list(DTYPE_BYTES) if name == "gemm" else MODELS[name].get("dtypes", list(VECTOR_PRECISION))
    if dtype is not None and dtype not in modelled:
        if dtype not in VECTOR_PRECISION:  # tf32, fp8, int8
            raise UsageError(f"dtype {dtype} is for gemm only", hint=f"use {', '.join(modelled)}")
        raise UsageError(
            f"workload {name} is modelled for {', '.join(modelled)}, not {dtype}",
            hint=f"use --dtype {modelled[0]}, or --flops/--ops/--bytes",
        )
    return gemm(**given) if name == "gemm" else _modelled(name, given)
