"""Golden files: `ncu-roof analyze --example` in every output format, byte for byte.

A change to any output shows here as a diff against `tests/golden/`. When the change is meant,
rewrite the files and review them like code:

    .venv/bin/python -m pytest -q tests/test_golden.py --update-golden
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from conftest import GOLDEN, run_cli

from ncu_roof.pipeline import example_path
from ncu_roof.render.formats import OutputFormat as Format

# every analyze format → the golden file's suffix (a format missing here fails the test below)
SUFFIX = {
    Format.TABLE: "txt",
    Format.JSON: "json",
    Format.CSV: "csv",
    Format.MARKDOWN: "md",
    Format.HTML: "html",
    Format.SVG: "svg",
}
# formats compared elsewhere, not byte for byte: PNG pixels follow the installed FreeType, PDF and
# Parquet embed their writer's version and creation data (tests/test_plot.py, tests/test_parquet.py)
NOT_GOLDEN = {Format.PNG, Format.PDF, Format.PARQUET}
PLOT_SUFFIXES = ("svg",)
EXAMPLE_PLACEHOLDER = "<example>"  # the example's absolute path differs from checkout to checkout


def normalized(data: bytes) -> bytes:
    """The output with the example's absolute path replaced, so that any checkout compares."""
    return data.replace(example_path().encode(), EXAMPLE_PLACEHOLDER.encode())


def compare(name: str, data: bytes, update: bool) -> None:
    """Equal to `tests/golden/NAME`, or (with --update-golden) written there."""
    golden = GOLDEN / name
    if update:
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(data)
        return
    assert golden.is_file(), f"{golden} missing: run pytest --update-golden, then review it"
    expected = golden.read_bytes()
    if data == expected:
        return
    diff = difflib.unified_diff(
        expected.decode("utf-8", "replace").splitlines(),
        data.decode("utf-8", "replace").splitlines(),
        f"golden/{name}",
        "now",
        lineterm="",
    )
    shown = "\n".join(list(diff)[:60])
    pytest.fail(f"{name} differs from its golden file (meant? pytest --update-golden):\n{shown}")


def test_every_format_has_a_golden_file() -> None:
    assert set(SUFFIX) | NOT_GOLDEN == set(Format), "a new format needs its golden file: add it to SUFFIX"
    assert len(set(SUFFIX.values())) == len(SUFFIX)


@pytest.mark.parametrize("fmt", list(SUFFIX), ids=str)
def test_example_matches_its_golden_file(fmt: Format, tmp_path: Path, update_golden: bool) -> None:
    target = tmp_path / f"example.{SUFFIX[fmt]}"
    done = run_cli("analyze", "--example", "--format", fmt.value, "-o", str(target))
    assert done.returncode == 0, done.stderr
    compare(target.name, normalized(target.read_bytes()), update_golden)


@pytest.mark.parametrize("suffix", PLOT_SUFFIXES)
def test_example_plot_matches_its_golden_file(suffix: str, tmp_path: Path, update_golden: bool) -> None:
    target = tmp_path / f"example.{suffix}"
    done = run_cli("analyze", "--example", "--plot", str(target), "-o", str(tmp_path / "table.txt"))
    assert done.returncode == 0, done.stderr
    compare(target.name, normalized(target.read_bytes()), update_golden)


def test_a_changed_output_fails_with_a_diff(tmp_path: Path) -> None:
    name = "example.csv"
    changed = (GOLDEN / name).read_bytes().replace(b"memory", b"m3mory", 1)
    with pytest.raises(pytest.fail.Exception, match=r"(?s)differs from its golden file.*\+.*m3mory"):
        compare(name, changed, update=False)
