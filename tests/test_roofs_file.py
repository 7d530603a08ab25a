"""`--roofs FILE.toml`: every value a finite, positive quantity, or one error naming file and key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CliResult, run_cli

import ncu_roof
from ncu_roof.base.units import Dimension, parse_quantity
from ncu_roof.base.vocabulary import Bound, Roofs
from ncu_roof.errors import BadInputError
from ncu_roof.gpus.roofs import load_roofs_file

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, peak: str, dram: str = '"20GB/s"') -> str:
    path = tmp_path / "lab.toml"
    path.write_text(f'name = "lab"\n[peak]\nfp32 = {peak}\n[bandwidth]\ndram = {dram}\n')
    return str(path)


def test_good_file_reads_strings_and_plain_numbers(tmp_path: Path) -> None:
    roofs = load_roofs_file(write(tmp_path, '"100GFLOP/s"', "2e10"))
    assert roofs.compute_flop_per_s == {"fp32": 100e9}
    assert roofs.bandwidth_byte_per_s == {"dram": 20e9}
    assert roofs.name == "lab" and roofs.sources["dram"].startswith("user:")


@pytest.mark.parametrize(
    "peak",
    [
        "0",
        "-5",
        "nan",
        "inf",
        "-inf",
        "0.0",
        "true",
        "false",
        "[1]",
        "{ a = 1 }",
        '"0GFLOP/s"',
        '"-1TFLOP/s"',
        '"1e400FLOP/s"',
        "1979-05-27",
    ],
)
def test_bad_peak_is_bad_input_naming_file_and_key(tmp_path: Path, peak: str) -> None:
    path = write(tmp_path, peak)
    with pytest.raises(BadInputError) as err:
        load_roofs_file(path)
    assert path in err.value.message and "[peak] fp32" in err.value.message
    assert err.value.hint


@pytest.mark.parametrize("dram", ["true", "0", "nan", "inf", "-2e10", "[20e9]", '"20GFLOP/s"'])
def test_bad_bandwidth_is_bad_input_naming_file_and_key(tmp_path: Path, dram: str) -> None:
    path = write(tmp_path, '"100GFLOP/s"', dram)
    with pytest.raises(BadInputError) as err:
        load_roofs_file(path)
    assert path in err.value.message and "[bandwidth] dram" in err.value.message


@pytest.mark.parametrize("value", [True, False, float("nan"), float("inf"), -float("inf"), 10**400, "1e400"])
def test_parse_quantity_rejects_bools_and_non_finite(value: object) -> None:
    from ncu_roof.errors import UsageError

    with pytest.raises(UsageError):
        parse_quantity(value, Dimension.BYTE_PER_S)  # type: ignore[arg-type]


def run(*args: str) -> CliResult:
    """`ncu-roof ARGS…` in this process, through `main` (exit codes as the console script's)."""
    return run_cli(*args, cwd=ROOT)


@pytest.mark.parametrize(
    "command",
    [
        ["predict", "--intensity", "dram=0.25", "-F", "json"],
        ["analyze", "--example", "--format", "json"],
    ],
)
@pytest.mark.parametrize("dram", ["true", "nan", "[1]"])
def test_cli_bad_roofs_file_is_one_error_and_hint(tmp_path: Path, command: list[str], dram: str) -> None:
    path = write(tmp_path, '"100GFLOP/s"', dram)
    done = run(*command, "--roofs", path)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and path in lines[0] and "dram" in lines[0]
    assert lines[1].startswith("hint:") and len(lines) == 2
    assert done.stdout == ""


def test_cli_good_roofs_file_predicts_strict_json(tmp_path: Path) -> None:
    done = run("predict", "--intensity", "dram=0.25", "-F", "json", "--roofs", write(tmp_path, "1e11"))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert doc["attainable_flop_per_s"] == pytest.approx(5e9)


def test_a_diff_reads_its_roofs_file_once(
    tmp_path: Path, fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The roofs are resolved once per run and passed to both sides (issue 29: one resolution)."""
    from ncu_roof.gpus import roofs
    from ncu_roof.pipeline import Request, run_each

    loaded: list[str] = []
    real = roofs.load_roofs_file

    def counted(path: str) -> Roofs:
        loaded.append(path)
        return real(path)

    monkeypatch.setattr(roofs, "load_roofs_file", counted)
    path = write(tmp_path, '"1 TFLOP/s"')
    sides = run_each([str(fixtures / "raw_base.csv")] * 2, Request(roofs=path))
    assert loaded == [path] and all(a.devices[0].roofs.name == "lab" for a in sides)


def test_flops_of_a_precision_the_roofs_file_lacks_leave_no_memory_verdict(
    tmp_path: Path, corpus: Path
) -> None:
    # the A10G's SGEMMs: fp32 FLOPs and DRAM bytes, no SOL; a roofs file with an fp64 peak and a
    # DRAM bandwidth only (or a typo, fp23) says nothing of how long the fp32 FLOPs take, so no
    # roof can be said to bind: they were "memory-bound (dram)" at 0.5 % of a roof of 39 TFLOP/s
    sgemm = str(corpus / "a10g_details_base-units-nsecond_sgemm-flops-dram.csv")
    path = tmp_path / "fp64.toml"
    path.write_text('[peak]\nfp64 = "0.5TFLOP/s"\n[bandwidth]\ndram = "600GB/s"\n')
    (first, *_) = ncu_roof.analyze(sgemm, roofs=str(path)).kernels
    assert first.bound is Bound.UNKNOWN and first.binding is None and first.attainable_flop_per_s is None
    assert (
        "no roofline verdict: fp32 FLOPs but no fp32 peak, and compute may be what binds; give it with"
        " --roofs FILE ([peak] fp32 = ...)" in first.notes
    )
    path.write_text('[peak]\nfp32 = "35TFLOP/s"\n[bandwidth]\ndram = "600GB/s"\n')
    (first, *_) = ncu_roof.analyze(sgemm, roofs=str(path)).kernels
    assert first.bound is Bound.COMPUTE and first.binding == "compute"


def test_a_tensor_path_without_a_peak_names_the_key_that_gives_it(tmp_path: Path) -> None:
    # bf16 tensor FLOPs (a tensor:bf16 path) are timed at the file's `tensor` peak: the note named
    # `[peak] tensor:bf16`, a key no verdict reads (and bare, no TOML key)
    fixture = str(ROOT / "fixtures" / "verdict_tensor_gemm_na_variant.csv")
    path = tmp_path / "lab.toml"
    tiers = '[bandwidth]\ndram = "2TB/s"\nl2 = "10TB/s"\nl1 = "20TB/s"\nshared = "20TB/s"\n'
    path.write_text('[peak]\nfp32 = "32TFLOP/s"\n' + tiers)
    (kernel,) = ncu_roof.analyze(fixture, roofs=str(path)).kernels
    assert kernel.binding is None
    assert (
        "no roofline verdict: tensor:bf16 FLOPs but no tensor peak, and compute may be what binds; give"
        " it with --roofs FILE ([peak] tensor = ...)" in kernel.notes
    )
    path.write_text('[peak]\nfp32 = "32TFLOP/s"\ntensor = "500TFLOP/s"\n' + tiers)  # as the note says
    (kernel,) = ncu_roof.analyze(fixture, roofs=str(path)).kernels
    assert kernel.binding == "compute" and not any("no roofline verdict" in n for n in kernel.notes)
