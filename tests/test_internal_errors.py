"""The internal errors of issue 27, each now a clean `error:` / `hint:` (or a `TypeError` with a
clear message in the API): diff of folders and globs, symlink loops, stdin or stdout closed,
`ncu --version` printing bytes that are no UTF-8."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

import ncu_roof
from ncu_roof.base.ncu import ncu_version
from ncu_roof.errors import UsageError

RAW = Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv"


def _two_folders(tmp_path: Path) -> None:
    for side in ("base", "head"):
        (tmp_path / side).mkdir()
        for name in ("a.csv", "b.csv"):
            shutil.copyfile(RAW, tmp_path / side / name)


@pytest.mark.parametrize(("base", "head"), [("base", "head"), ("base/*.csv", "head/*.csv")])
def test_diff_of_two_folders_or_globs_compares_their_files_together(
    tmp_path: Path, base: str, head: str
) -> None:
    _two_folders(tmp_path)
    done = run_cli("diff", base, head, "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    kernels = json.loads(done.stdout)["kernels"]
    assert [k["status"] for k in kernels] == ["unchanged"] * 4  # 2 launches of each of the 2 files


def test_folders_whose_symbolic_links_loop_are_clean_errors(tmp_path: Path) -> None:
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "a").symlink_to("b")
    (tmp_path / "loop" / "b").symlink_to("a")
    (tmp_path / "loop" / "up").symlink_to("..")
    (tmp_path / "self").symlink_to("self")
    for argv in (["loop"], ["self"], ["loop/*"]):
        done = run_cli("analyze", *argv, cwd=tmp_path)
        assert done.returncode == 3, (argv, done.stderr)
        assert done.stderr.splitlines()[-2].startswith("error: ") and "internal" not in done.stderr


def _closed(stream: str) -> subprocess.CompletedProcess[str]:
    redirect = "0<&-" if stream == "stdin" else "1>&-"
    return subprocess.run(
        f"{sys.executable} -m ncu_roof analyze {'-' if stream == 'stdin' else RAW} {redirect}",
        shell=True, capture_output=stream == "stdin", stderr=subprocess.PIPE if stream == "stdout" else None,
        text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("stream", "code", "error"),
    [("stdin", 3, "error: -: stdin is closed"), ("stdout", 1, "error: cannot write to stdout: it is closed")],
)
def test_a_closed_stdin_or_stdout_is_a_clean_error(stream: str, code: int, error: str) -> None:
    done = _closed(stream)
    assert done.returncode == code, done.stderr
    assert error in done.stderr.splitlines() and "internal" not in done.stderr


def test_an_ncu_version_that_is_no_utf8_is_read_around(tmp_path: Path) -> None:
    ncu = tmp_path / "ncu"
    ncu.write_bytes(b"#!/bin/sh\nprintf 'NVIDIA \\377\\376 Nsight\\nVersion 2025.1.0.0 (build 1)\\n'\n")
    ncu.chmod(0o755)
    assert ncu_version(str(ncu)) == "2025.1.0.0"
    ncu.write_bytes(b"#!/bin/sh\nprintf '\\377\\376\\n'\n")
    assert ncu_version(str(ncu)) is None


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"gpu": 123}, "gpu must be a str or None, not int (123)"),
        ({"roofs": 3}, "roofs must be a str or os.PathLike path, not int (3)"),
        ({"jobs": "2"}, "jobs must be an int or None, not str ('2')"),
        ({"number_locale": 1}, "number_locale must be a str or None, not int (1)"),
    ],
)
def test_api_arguments_of_the_wrong_type_are_a_clear_type_error(
    keywords: dict[str, object], message: str
) -> None:
    with pytest.raises(TypeError) as raised:
        ncu_roof.analyze(str(RAW), **keywords)  # type: ignore[arg-type]
    assert str(raised.value) == message
    with pytest.raises(TypeError) as raised:  # before any value is judged
        ncu_roof.analyze(str(RAW), **{"number_locale": "xx", "traffic": "bogus", **keywords})  # type: ignore[arg-type]
    assert str(raised.value) == message
    if "gpu" in keywords or "roofs" in keywords:  # predict checks them as analyze does
        with pytest.raises(TypeError) as raised:
            ncu_roof.predict(flops=1e9, bytes=1e9, **keywords)  # type: ignore[arg-type]
        assert str(raised.value) == message


@pytest.mark.parametrize("path", [None, 3, b"x"])
def test_to_parquet_names_no_file_after_a_value_that_is_no_path(
    path: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    analysis = ncu_roof.analyze(str(RAW))
    with pytest.raises(TypeError, match=r"^path must be a str or os\.PathLike path, not "):
        analysis.to_parquet(path)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bandwidth", [{"dram": None}, {"dram": {}}, {"dram": {"x": 1e12}}])
def test_a_figure_that_is_no_number_is_a_type_error(bandwidth: dict[str, object]) -> None:
    # (a nested or empty mapping was an IndexError or a parse error of a made-up `dram=x=…`)
    with pytest.raises(
        TypeError, match=r"^bandwidth must be a dict of numbers or strs with their unit, not "
    ):
        ncu_roof.predict(flops=1e9, bytes=1e8, peak=1e12, bandwidth=bandwidth)  # type: ignore[arg-type]


QUANTITY = "a number or a str with its unit, or a dict of numbers or strs with their unit"


@pytest.mark.parametrize(
    ("function", "keywords", "message"),
    [
        ("diff", {"threshold_pct": "5%"}, "threshold_pct must be a number of percent, not str ('5%')"),
        ("diff", {"threshold_pct": True}, "threshold_pct must be a number of percent, not bool (True)"),
        ("diff", {"allow_mismatch": "no"}, "allow_mismatch must be a bool, not str ('no')"),
        ("diff", {"skip_bad_rows": 1}, "skip_bad_rows must be a bool, not int (1)"),
        (
            "predict",
            {"flops": [2e9]},
            "flops must be a number or a str with its unit or None, not list ([2000000000.0])",
        ),
        (
            "predict",
            {"flops": True},
            "flops must be a number or a str with its unit or None, not bool (True)",
        ),
        ("predict", {"bytes": b"1GB"}, f"bytes must be {QUANTITY} or None, not bytes (b'1GB')"),
        ("predict", {"bytes": {"dram": [1e9]}}, f"bytes must be {QUANTITY}, not list ([1000000000.0])"),
        ("predict", {"peak": True}, f"peak must be {QUANTITY} or None, not bool (True)"),
        (
            "predict",
            {"intensity": 3.0},
            "intensity must be a dict of numbers or strs with their unit or None, not float (3.0)",
        ),
        ("predict", {"precision": 16}, "precision must be a str or None, not int (16)"),
        ("plot", {"device": "0"}, "device must be an int or None, not str ('0')"),
    ],
)
def test_the_apis_numbers_of_the_wrong_type_are_a_type_error(
    function: str, keywords: dict[str, object], message: str
) -> None:
    """diff's, predict's and plot's arguments, checked as analyze's are, each before any value is
    judged (a diff of runs on other GPUs, a prediction without a platform)."""
    a = ncu_roof.analyze(ncu_roof.example_path())
    calls: dict[str, Callable[[], object]] = {
        "diff": lambda: ncu_roof.diff(a, str(RAW), **keywords),  # type: ignore[arg-type]
        "predict": lambda: ncu_roof.predict(**keywords),  # type: ignore[arg-type]
        "plot": lambda: a.plot(**keywords),  # type: ignore[arg-type]
    }
    with pytest.raises(TypeError) as raised:
        calls[function]()
    assert str(raised.value) == message


def test_a_threshold_that_is_no_finite_percentage_is_a_usage_error() -> None:
    a = ncu_roof.analyze(ncu_roof.example_path())
    for threshold in (-1.0, math.nan, math.inf):
        with pytest.raises(UsageError, match="must be a finite, non-negative percentage"):
            ncu_roof.diff(a, a, threshold_pct=threshold)
    assert ncu_roof.diff(a, a, threshold_pct=0).threshold_pct == 0  # an int is a number of percent


def test_a_text_stdout_without_bytes_under_it_takes_the_pieces_as_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ncu_roof.render import output

    class TextOnly(io.StringIO):
        buffer = None  # type: ignore[assignment]  # (a wrapper that hides its bytes stream, as some notebooks' do)

    stream = TextOnly()
    monkeypatch.setattr(sys, "stdout", stream)
    output._write_stdout(("a", b"b"))
    assert stream.getvalue() == "ab"


def test_bytes_to_a_text_stdout_without_bytes_under_it_are_one_output_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ncu_roof.errors import OutputError
    from ncu_roof.render import output

    class TextOnly(io.StringIO):
        buffer = None  # type: ignore[assignment]

    monkeypatch.setattr(sys, "stdout", TextOnly())
    with pytest.raises(OutputError, match="cannot write binary data to this stdout"):
        output._write_stdout(b"PAR1")
