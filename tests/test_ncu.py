"""Finding ncu: the documented search order (docs/profile.md, `--ncu`), versions compared as numbers."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from ncu_roof.base import ncu
from ncu_roof.errors import MissingToolError


def executable(path: Path, version: str = "2025.1.0.0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!/bin/sh\necho 'NVIDIA (R) Nsight Compute Command Line Profiler'\necho 'Version {version}'\n"
    )
    path.chmod(0o755)
    return path


@pytest.fixture
def installs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """CUDA toolkits and standalone installs under tmp_path, as the globs would find them."""
    found = {
        "/usr/local/cuda*/bin/ncu": [
            str(tmp_path / "usr/local/cuda-12.9/bin/ncu"),
            str(tmp_path / "usr/local/cuda-12.10/bin/ncu"),
            str(tmp_path / "usr/local/cuda-11.8/bin/ncu"),
        ],
        "/opt/nvidia/nsight-compute/*/ncu": [
            str(tmp_path / "opt/nvidia/nsight-compute/2023.3.1/ncu"),
            str(tmp_path / "opt/nvidia/nsight-compute/2025.2.0/ncu"),
        ],
    }
    real_glob = glob.glob
    monkeypatch.setattr(glob, "glob", lambda pattern: found.get(pattern, real_glob(pattern)))
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    return found


def test_search_order_is_option_env_path_then_newest_toolkit_then_newest_standalone(
    tmp_path: Path, installs: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    found = {  # as the globs return them: in no useful order
        "/usr/local/cuda*/bin/ncu": [
            "/usr/local/cuda-12.9/bin/ncu",
            "/usr/local/cuda-12.10/bin/ncu",  # newer than 12.9, though it sorts first as text
            "/usr/local/cuda-11.8/bin/ncu",
        ],
        "/opt/nvidia/nsight-compute/*/ncu": [
            "/opt/nvidia/nsight-compute/2023.3.1/ncu",
            "/opt/nvidia/nsight-compute/2025.2.0/ncu",
        ],
    }
    monkeypatch.setattr(glob, "glob", lambda pattern: found[pattern])
    on_path = executable(tmp_path / "bin" / "ncu")
    monkeypatch.setenv("PATH", str(on_path.parent))
    monkeypatch.setenv("NCU", "/env/ncu")
    assert ncu.candidate_paths("/given/ncu") == [
        "/given/ncu",
        "/env/ncu",
        str(on_path),
        "/usr/local/cuda-12.10/bin/ncu",
        "/usr/local/cuda-12.9/bin/ncu",
        "/usr/local/cuda-11.8/bin/ncu",
        "/opt/nvidia/nsight-compute/2025.2.0/ncu",
        "/opt/nvidia/nsight-compute/2023.3.1/ncu",
    ]


def test_the_first_executable_candidate_is_used_with_its_version(
    tmp_path: Path, installs: dict[str, list[str]]
) -> None:
    executable(Path(installs["/usr/local/cuda*/bin/ncu"][0]), "2025.2.1.0")  # cuda-12.9
    executable(Path(installs["/opt/nvidia/nsight-compute/*/ncu"][1]), "2025.2.0.0")
    tool = ncu.find_ncu()
    assert tool.path == installs["/usr/local/cuda*/bin/ncu"][0]  # 12.10 is newer but not installed
    assert tool.version == "2025.2.1.0"


def test_an_explicit_ncu_that_is_not_executable_is_refused_not_skipped(
    tmp_path: Path, installs: dict[str, list[str]]
) -> None:
    executable(Path(installs["/usr/local/cuda*/bin/ncu"][1]))
    plain = tmp_path / "not-executable"
    plain.write_text("")
    with pytest.raises(MissingToolError, match=f"--ncu {plain}: not an executable file"):
        ncu.find_ncu(str(plain))


def test_nothing_found_names_the_install_routes(installs: dict[str, list[str]]) -> None:
    with pytest.raises(MissingToolError, match=r"ncu \(Nsight Compute CLI\) not found") as raised:
        ncu.find_ncu()
    assert "--ncu PATH" in raised.value.hint


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2024.1.1.0", (2024, 1, 1, 0)), ("/usr/local/cuda-12.10/bin/ncu", (12, 10)), (None, (9999,))],
)
def test_version_tuple_compares_numbers_not_text(text: str | None, expected: tuple[int, ...]) -> None:
    assert ncu.version_tuple(text) == expected
