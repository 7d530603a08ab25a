"""`.ncu-repz`, Nsight Compute 2025.4's compressed report: the report as one zstd stream, which
NVIDIA's `ncu_report` (2026.3.1 here) reads by its suffix. Read through `ncu_report` when it can,
else refused with one error naming the fix.

The fixture `fixtures/h200/h200_profile_vector_add_small.ncu-repz` is the H200 `.ncu-rep` beside it
compressed here with `zstd -19` (no Nsight Compute 2025.4 was at hand to write one; `ncu_report`
reads it as the report it compresses, which is what these tests check)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

H200 = FIXTURES / "h200"
REPORT = H200 / "h200_profile_vector_add_small.ncu-rep"
PACKED = H200 / "h200_profile_vector_add_small.ncu-repz"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def test_the_fixture_is_the_report_compressed() -> None:
    assert PACKED.read_bytes()[:4] == ZSTD_MAGIC and REPORT.read_bytes()[:4] == b"NVR\x00"
    assert PACKED.stat().st_size < REPORT.stat().st_size / 10


def test_a_compressed_report_reads_as_the_report_it_compresses() -> None:
    pytest.importorskip("ncu_report")
    plain = json.loads(run_cli("analyze", str(REPORT), "-F", "json").stdout)
    done = run_cli("analyze", str(PACKED), "-F", "json")
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout)
    assert [k["name"] for k in read["kernels"]] == [
        "vector_add_f32(const float *, const float *, float *, long)"
    ]
    assert read["kernels"] == plain["kernels"]  # every figure of every launch
    assert read["devices"] == plain["devices"]
    assert read["inputs"][0]["format"] == "ncu-rep"
    assert read["inputs"][0]["ncu_version"] == plain["inputs"][0]["ncu_version"] == "2025.3.1.0"


def test_the_version_inside_a_compressed_report_is_found_across_chunks() -> None:
    import pyarrow as pa

    from ncu_roof.ingest.rep import report_version

    text = b"x" * ((1 << 22) - 9) + b"NVIDIA 2025.4.0.0 (build 36507110)" + b"y" * 100
    packed = pa.compress(text, "zstd", asbytes=True)  # one zstd frame
    assert packed[:4] == ZSTD_MAGIC
    assert report_version(packed) == "2025.4.0.0"  # cut by the first 4 MiB chunk's end
    assert report_version(pa.compress(b"no version here", "zstd", asbytes=True)) is None


def refusal(path: Path) -> list[str]:
    done = run_cli("analyze", str(path))
    assert done.returncode == 3, done.stderr  # bad input
    assert "Traceback" not in done.stderr
    lines: list[str] = done.stderr.splitlines()[-2:]
    return lines


REFUSALS = {  # what a .ncu-repz holds → the error after the path, and the hint
    "renamed": (
        REPORT.read_bytes(),  # an uncompressed report
        "not a compressed report (a .ncu-repz is zstd-compressed; this file is not)",
        "it is an uncompressed report: rename it to FILE.ncu-rep",
    ),
    "empty": (b"", "file is empty", "profile again with `ncu-roof profile -- ./app`"),
    "damaged": (
        PACKED.read_bytes()[:4096],  # a zstd stream cut short: ncu_report reads nothing
        "the installed ncu_report cannot read this compressed report (or it is damaged)",
        "pip install -U ncu-report (Nsight Compute 2025.4+ writes .ncu-repz), "
        "or decompress it: zstd -d FILE.ncu-repz -o FILE.ncu-rep",
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_repz_that_cannot_be_read_is_refused_with_the_fix(tmp_path: Path, case: str) -> None:
    pytest.importorskip("ncu_report")
    payload, error, hint = REFUSALS[case]
    path = tmp_path / "run.ncu-repz"
    path.write_bytes(payload)
    assert refusal(path) == [f"error: {path}: {error}", f"hint: {hint}"]


def test_a_repz_in_another_compression_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    packed = tmp_path / "run.ncu-repz"
    packed.write_bytes(b"\x1f\x8b\x08\x00" + bytes(200))  # gzip, not zstd
    assert refusal(packed)[0].startswith(f"error: {packed}: not a compressed report")


def test_without_a_reader_a_compressed_report_names_what_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ncu_roof.errors import MissingToolError
    from ncu_roof.ingest.rep import REP_HINT, read_report

    monkeypatch.setitem(sys.modules, "ncu_report", None)  # `import ncu_report` now fails
    monkeypatch.setenv("PATH", str(tmp_path))  # and no ncu
    with pytest.raises(MissingToolError) as caught:
        read_report(str(PACKED), PACKED.read_bytes())
    assert caught.value.message == f"{PACKED}: reading .ncu-repz needs ncu_report or ncu, 2025.4 or later"
    assert caught.value.hint == REP_HINT
