"""`ncu-roof gpus` (the built-in table) and `ncu-roof predict` (a roofline before the kernel)."""

from __future__ import annotations

from typing import Annotated

import typer

from ncu_roof import pipeline
from ncu_roof.analysis.workloads import MATRIX_PRECISION, OPS_DTYPES, Param, build
from ncu_roof.base.units import Dimension, parse_quantity
from ncu_roof.cli import app
from ncu_roof.cli.options import GpuKey, RoofsFile
from ncu_roof.errors import UsageError
from ncu_roof.render.console import screen
from ncu_roof.render.formats import OutputFormat, format_of
from ncu_roof.render.output import write_output

WRITES = (OutputFormat.TABLE, OutputFormat.JSON)
# the two options `gpus` and `predict` share
TextFormat = Annotated[
    str | None, typer.Option("--format", "-F", help="table or json (default: from the -o suffix)")
]
OutputFile = Annotated[str | None, typer.Option("--output", "-o", help="Write to FILE (atomic).")]


@app.command("gpus")
def gpus_command(fmt: TextFormat = None, output: OutputFile = None) -> None:
    """List the built-in GPUs: peaks, bandwidths, ridge points and sources."""
    chosen = format_of("gpus", fmt, output, WRITES)
    from ncu_roof.render import gpusout

    if chosen is OutputFormat.JSON:
        write_output(gpusout.render_json(), output)
        return
    shown = screen(output)
    write_output(gpusout.render_text(shown.width, color=shown.color), output)


def _count(text: str, name: str) -> int:
    if (value := parse_quantity(text, Dimension.NUMBER)) != int(value) or value <= 0:
        raise UsageError(
            f"--{name} {text}: must be a positive whole number", hint=f"e.g. --{name} 1e7 or --{name} 4096"
        )
    return int(value)


@app.command("predict")
def predict_command(
    workload: str | None = typer.Argument(
        None, help="vector-add, dot, saxpy, rmsnorm, layernorm, softmax, gemm, stencil7, exp"
    ),
    n: str | None = typer.Option(None, "--n", help="Elements / points / GEMM columns."),
    m: str | None = typer.Option(None, "--m", help="GEMM rows."),
    k: str | None = typer.Option(None, "--k", help="GEMM inner dimension."),
    d: str | None = typer.Option(None, "--d", help="Hidden size (norms, softmax)."),
    tokens: str | None = typer.Option(None, "--tokens", help="Rows (norms, softmax)."),
    dtype: str | None = typer.Option(
        None,
        "--dtype",
        help="fp64, fp32, fp16, bf16; tf32, fp8 (gemm and --flops: fp16/bf16/tf32/fp8 on their "
        "tensor path); int8 (gemm, --ops).",
    ),
    unfused: bool = typer.Option(False, "--unfused", help="Count intermediate DRAM round trips."),
    tile: str | None = typer.Option(None, "--tile", help="GEMM output tile size T (T x T)."),
    gpu: GpuKey = None,
    peak: list[str] = typer.Option([], "--peak", help="[PRECISION=]FLOP/s, e.g. 100GFLOP/s."),
    bandwidth: list[str] = typer.Option([], "--bandwidth", help="TIER=B/s, e.g. dram=20GB/s."),
    roofs_file: RoofsFile = None,
    flops: str | None = typer.Option(None, "--flops", help="FLOPs of the kernel."),
    ops: str | None = typer.Option(None, "--ops", help="Integer operations (with --dtype int8)."),
    nbytes: list[str] = typer.Option([], "--bytes", help="[TIER=]bytes (tier dram by default)."),
    intensity: list[str] = typer.Option([], "--intensity", help="TIER=FLOP/B."),
    fmt: TextFormat = None,
    output: OutputFile = None,
) -> None:
    """Predict the roofline verdict of a kernel from its FLOPs and bytes, or a workload model."""
    chosen = format_of("predict", fmt, output, WRITES)
    from ncu_roof.analysis import prediction  # numpy: only when predicting

    roofs = pipeline.platform(gpu, roofs_file, peak, bandwidth)
    paths, peaks = prediction.builtin_peaks(gpu)
    sizes = {"n": n, "m": m, "k": k, "d": d, "tokens": tokens, "tile": tile}
    if workload is not None:
        if flops is not None or ops is not None or nbytes or intensity:
            raise UsageError(
                "give a workload or --flops/--bytes/--intensity, not both",
                hint="e.g. `predict gemm --m 4096 ...` or `predict --flops 1e9 --bytes 1e8 ...`",
            )
        params: dict[str, Param | None] = {k: _count(v, k) for k, v in sizes.items() if v is not None}
        params |= {"dtype": dtype, "unfused": unfused}
        result = prediction.predict_workload(roofs, build(workload, params), peaks, paths)
    else:
        stray = [name for name, v in sizes.items() if v is not None]
        if stray or unfused:
            raise UsageError(
                f"--{(stray or ['unfused'])[0]} needs a workload",
                hint="e.g. `ncu-roof predict gemm --m 4096 --n 4096 --k 4096`",
            )
        if dtype is not None and dtype not in MATRIX_PRECISION and dtype not in OPS_DTYPES:
            raise UsageError(
                f"unknown dtype {dtype!r}", hint="use fp64, fp32; tf32, bf16, fp16, fp8 (tensor) or int8"
            )
        if (ops is not None) != (dtype in OPS_DTYPES):
            raise UsageError(
                "--ops (integer operations) goes with --dtype int8",
                hint="e.g. `ncu-roof predict --gpu a100-sxm4 --dtype int8 --ops 4e10 --bytes 2e7`",
            )
        result = prediction.predict(
            roofs,
            parse_quantity(flops, Dimension.FLOP) if flops is not None else None,
            prediction.parse_assignments(nbytes, Dimension.BYTE, prediction.DEFAULT_TIER),
            prediction.parse_assignments(intensity, Dimension.FLOP_PER_BYTE, None, positive=True),
            MATRIX_PRECISION.get(dtype) if dtype else None,
            ops=parse_quantity(ops, Dimension.NUMBER) if ops is not None else None,
            ops_ceiling=dtype if dtype in OPS_DTYPES else None,
            ops_peaks=peaks,
            tensor_peaks=paths,
        )
    from ncu_roof.render import predictout

    if chosen is OutputFormat.JSON:
        write_output(predictout.render_json(result), output)
        return
    shown = screen(output)
    write_output(predictout.render_text(result, shown.width, color=shown.color), output)
