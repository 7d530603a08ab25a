"""Predict vs measure on the H200 fixtures: for each kernel of `scripts/h200/roofkern.cu`, what
`ncu-roof predict --gpu h200` says before the kernel runs (its built-in workload where one
matches, else `--flops/--bytes` from the hand counts of `fixtures/h200/README.md`) beside what
`ncu-roof analyze fixtures/h200/h200_full_raw.csv` measured; a Markdown table on stdout.

usage: python scripts/h200/predict_vs_measure.py [RAW_CSV]
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ncu_roof
from ncu_roof.base.text import si

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "fixtures" / "h200" / "h200_full_raw.csv"


@dataclass(frozen=True)
class Case:
    """One kernel: its launch in the raw page, the `predict` arguments, what they stand for."""

    launch: int
    label: str
    args: tuple[str, ...]
    note: str = ""
    platform: tuple[str, ...] = ("--gpu", "h200")


CASES = (
    Case(0, "vector_add_f32 n=2^26", ("vector-add", "--n", "67108864", "--dtype", "fp32")),
    Case(3, "vector_add_f32 n=2^20", ("vector-add", "--n", "1048576", "--dtype", "fp32")),
    Case(4, "daxpy_f64", ("saxpy", "--n", "33554432", "--dtype", "fp64")),
    Case(5, "rmsnorm_f32", ("rmsnorm", "--d", "4096", "--tokens", "8192", "--dtype", "fp32")),
    Case(6, "sgemm_naive_f32", ("gemm", "--m", "2048", "--n", "2048", "--k", "2048", "--dtype", "fp32")),
    Case(7, "sgemm_tiled_f32<32>", ("gemm", "--m", "2048", "--n", "2048", "--k", "2048", "--dtype", "fp32")),
    Case(8, "wmma_gemm_f16", ("gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "fp16")),
    Case(9, "wmma_gemm_s8", ("gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "int8")),
    Case(
        10,
        "reduce_sum_i32",
        ("--flops", "67108864", "--bytes", "268435456", "--dtype", "fp32"),
        "IADD given as FP32 FLOPs (predict has no integer-ALU roof)",
    ),
    Case(
        11,
        "expf_loop_f32<256>",
        ("--flops", "3221225472", "--bytes", "16777216", "--dtype", "fp32"),
        "FMUL+FFMA only: --flops cannot carry the 2^30 MUFU.EX2",
    ),
    Case(
        11, "expf_loop_f32<256>", ("exp", "--n", "1073741824"), "exp workload: 2^30 exps, 8 B each from DRAM"
    ),
    Case(
        12,
        "l2_resident_read<32>",
        ("--flops", "134623232", "--bytes", "dram=16777216", "--bytes", "l1=536870912"),
        "no L2 roof in the built-in h200: its 537 MB from L2 given as L1 bytes",
    ),
    Case(
        12,
        "l2_resident_read<32>",
        ("--flops", "134623232", "--bytes", "dram=16777216", "--bytes", "l2=536870912"),
        "own platform: the h200 datasheet's FP32 and DRAM, the report's L2 peak (188 x 32 B x 1.709 GHz)",
        ("--peak", "fp32=67TFLOP/s", "--bandwidth", "dram=4.8TB/s", "--bandwidth", "l2=10.28TB/s"),
    ),
    Case(
        13,
        "l1_resident_read<256>",
        ("--flops", "1108107264", "--bytes", "dram=17301504", "--bytes", "l1=4429185024"),
    ),
    Case(14, "shared_stride<1>", ("--flops", "276824064", "--bytes", "shared=1107296256")),
    Case(
        15,
        "shared_stride<32>",
        ("--flops", "276824064", "--bytes", "shared=1107296256"),
        "the same minimum bytes: a roofline knows no bank conflicts",
    ),
)


def predict(case: Case) -> dict[str, Any]:
    """`ncu-roof predict ARGS --gpu h200 --format json` (or the case's own platform), as a person
    runs it."""
    command = [sys.executable, "-m", "ncu_roof", "predict", *case.args, *case.platform, "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[2:])}: exit {done.returncode}\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def predicted_time_s(p: dict[str, Any]) -> float:
    """The roofline's minimum time: of the FLOPs or, for integer work, of the operations."""
    times = [float(p["time_at_roof_s"])]
    if p["ops"] is not None:
        times.append(float(p["ops"]["time_s"]))
    return max(times)


def verdict(bound: str | None, binding: str | None) -> str:
    return f"{bound} ({binding})" if bound not in (None, "latency", binding) else str(bound)


def row(case: Case, p: dict[str, Any], k: dict[str, Any]) -> str:
    predicted_s, measured_s = predicted_time_s(p), float(k["duration_s"])
    binding = p["binding"] if p["bound"] == "memory" else p["compute_ceiling"]
    attainable, achieved = si(p["attainable_flop_per_s"], "FLOP/s"), si(k["achieved_flop_per_s"], "FLOP/s")
    if p["ops"] is not None and p["ops"]["time_s"] >= p["time_at_roof_s"]:
        binding = f"{p['ops']['ceiling']} {si(p['ops']['peak_per_s'], 'op/s')}"
        # predict's FLOP/s fields read 0 for integer work: the attainable rate in operations
        attainable = si(p["ops"]["count"] / predicted_s, "op/s")
        achieved += f" ({si(k['ops']['total'] / measured_s, 'op/s')})"
    measured_binding = k["binding"] if k["bound"] != "compute" else k["compute_ceiling"]
    platform = "" if case.platform == ("--gpu", "h200") else " " + " ".join(case.platform)
    cells = (
        f"`{case.label}`",
        "`" + " ".join(case.args) + platform + "`",
        si(predicted_s, "s"),
        si(measured_s, "s"),
        f"{measured_s / predicted_s:.2f}×",
        attainable,
        si(k["attainable_flop_per_s"], "FLOP/s"),
        achieved,
        f"{p['bound']} ({binding})",
        verdict(k["bound"], measured_binding) + f", {k['pct_of_roof']:.0f} % of roof",
        case.note,
    )
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| kernel | `predict … --gpu h200` | predicted time | measured time | measured ÷ predicted "
    "| predicted attainable | measured attainable | achieved | predicted binding | measured verdict "
    "| note |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"
)


def main(raw: Path) -> None:
    measured = json.loads(ncu_roof.analyze(str(raw)).to_json())["kernels"]
    lines = [HEADER, *(row(case, predict(case), measured[case.launch]) for case in CASES)]
    print("\n".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else RAW)
