"""`ncu-roof gpus`: seed 000's hardware ridge-point table."""

from __future__ import annotations

import json
import re

from conftest import run_cli

from ncu_roof.gpu_table import GPUS


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
    assert [g["key"] for g in doc["gpus"]] == [g.key for g in GPUS]
    a100 = next(g for g in doc["gpus"] if g["key"] == "a100-sxm4")
    assert a100["peak_flop_per_s"]["fp32"] == 19.5e12
    assert a100["bandwidth_byte_per_s"]["dram"] == 2039e9
    assert round(a100["ridge_flop_per_byte"]["tensor"], 1) == 153.0
    assert "seed 000" in a100["source"]


def test_sources_are_listed_under_the_table() -> None:
    result = run_cli("gpus")
    assert "h100-sxm5: NVIDIA H100 datasheet" in result.stdout


def test_unknown_format_is_a_usage_error() -> None:
    result = run_cli("gpus", "--format", "xml")
    assert result.returncode == 2 and "unknown format" in result.stderr.splitlines()[0]


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
