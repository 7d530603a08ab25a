"""`ncu-roof gpus`: the built-in GPUs' datasheet peaks, bandwidths and ridge points."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cli

from ncu_roof.gpus.lookup import builtin_gpus


def table_row(key: str) -> list[str]:
    result = run_cli("gpus")
    assert result.returncode == 0, result.stderr
    for line in result.stdout.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line) if c.strip()]
        if cells and cells[0] == key:
            return cells
    raise AssertionError(f"{key} not in the table")


def test_seed_000_ridge_table_a100_h100() -> None:
    assert table_row("a100-sxm4")[-2:] == ["9.6", "153.0"]
    assert table_row("h100-sxm5")[-2:] == ["20.0", "295.2"]


def test_seed_000_ridge_table_v100_pcie() -> None:
    # the seed prints 15.5 for the FP32 ridge, a rounding slip: 14.0 / 0.9 = 15.56 → 15.6
    assert table_row("v100-pcie")[-2:] == ["15.6", "124.4"]


def test_seed_000_ridge_table_b200_tensor() -> None:
    # 2250 / 8 = 281.25, printed with one decimal as the seed does: 281.2
    assert table_row("b200")[-1] == "281.2"


def test_json_lists_every_gpu_in_si() -> None:
    result = run_cli("gpus", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["schema"] == "ncu-roof/gpus/v1"
    assert [g["key"] for g in doc["gpus"]] == list(builtin_gpus())
    a100 = next(g for g in doc["gpus"] if g["key"] == "a100-sxm4")
    assert a100["peak_flop_per_s"]["fp32"] == 19.5e12
    assert a100["bandwidth_byte_per_s"]["dram"] == 2039e9
    assert round(a100["ridge_flop_per_byte"]["tensor"], 1) == 153.0
    assert a100["source"] == "NVIDIA A100 datasheet (SXM4 80GB; INT8 tensor 624 TOPS dense)"


def test_no_source_cites_a_document_the_user_cannot_find() -> None:
    """Every source is a datasheet, a derivation or an estimate said to be one, never a name
    only this project knows."""
    doc = json.loads(run_cli("gpus", "--format", "json").stdout)
    sources = {s for g in doc["gpus"] for s in (g["source"], *g["sources"].values())}
    assert not [s for s in sources if "seed" in s.lower() or "roofline lab" in s.lower()]
    h100 = next(g for g in doc["gpus"] if g["key"] == "h100-sxm5")
    assert "not a datasheet figure" in h100["sources"]["l2"]


def test_at_80_columns_no_figure_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = run_cli("gpus").stdout
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if line.startswith("a100-sxm4 ")]
    assert rows and "…" not in text
    cells = [c.strip() for c in rows[0].split("│")]
    assert cells[:9] == ["a100-sxm4", "9.7", "19.5", "78", "312", "2039", "7.2+", "19.5", "9.6"]
    assert "not shown at this width: ridge tensor (--format json has them)" in text


def test_sources_are_listed_under_the_table() -> None:
    result = run_cli("gpus")
    assert "h100-sxm5: NVIDIA H100 datasheet" in result.stdout


def test_unknown_format_is_a_usage_error() -> None:
    result = run_cli("gpus", "--format", "xml")
    assert result.returncode == 2 and "gpus has no --format" in result.stderr.splitlines()[0]


def test_json_lists_per_clock_figures_and_device_names() -> None:
    doc = json.loads(run_cli("gpus", "--format", "json").stdout)
    h100 = next(g for g in doc["gpus"] if g["key"] == "h100-pcie")
    assert (h100["cc"], h100["sm_count"], h100["memory_bus_bits"]) == ("9.0", 114, 5120)
    assert "h100 pcie" in h100["device_names"]
    hopper = next(a for a in doc["architectures"] if a["cc"] == "9.0")
    assert hopper["flop_per_sm_per_clk"] == {"fp64": 128.0, "fp32": 256.0, "fp16": 512.0, "tensor": 4096.0}
    assert hopper["unverified"] == []
    blackwell = next(a for a in doc["architectures"] if a["cc"] == "10.0")
    assert "tensor" in blackwell["unverified"]
