"""`.ncu-repz`, Nsight Compute 2025.4's compressed report (zstd): read through `ncu_report` when it
can, else refused with one error naming the fix."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

REPORT = "v100_rep_basic_vectorops.ncu-rep"  # one launch: vector_add on a V100


def test_a_compressed_report_reads_as_the_report_it_compresses(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    zstd = shutil.which("zstd")
    if zstd is None:
        pytest.skip("zstd not on PATH")
    packed = tmp_path / "run.ncu-repz"
    subprocess.run([zstd, "-q", str(corpus / REPORT), "-o", str(packed)], check=True)
    plain = json.loads(run_cli("analyze", str(corpus / REPORT), "-F", "json").stdout)
    done = run_cli("analyze", str(packed), "-F", "json")
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout)
    assert [k["name"] for k in read["kernels"]] == [k["name"] for k in plain["kernels"]]
    assert read["kernels"][0]["duration_s"] == plain["kernels"][0]["duration_s"]
    assert read["inputs"][0]["format"] == "ncu-rep"


def test_a_compressed_report_it_cannot_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    packed = tmp_path / "run.ncu-repz"
    packed.write_bytes(b"\x1f\x8b\x08\x00" + bytes(200))  # gzip, not zstd: ncu_report finds nothing
    done = run_cli("analyze", str(packed))
    assert done.returncode == 3  # bad input
    assert done.stderr.splitlines()[-2:] == [
        f"error: {packed}: the installed ncu_report cannot read this compressed report (or it is damaged)",
        "hint: pip install -U ncu-report (Nsight Compute 2025.4+ writes .ncu-repz), "
        "or decompress it: zstd -d FILE.ncu-repz -o FILE.ncu-rep",
    ]
