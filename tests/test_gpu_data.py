"""The built-in tables as data files (`ncu_roof/data/{gpus,archs,tier_peaks}.toml`): every row has
the fields its type takes and a source beside every figure, and the figures are the ones the
tables held as Python before they moved (hand-checked against datasheets and the corpus)."""

from __future__ import annotations

import dataclasses

import pytest

from ncu_roof.base.tomlfile import package_table
from ncu_roof.gpus.arch import WRITEBACKS, Arch, archs, counter_peak, counter_peaks
from ncu_roof.gpus.lookup import builtin_gpus, gpu_by_key
from ncu_roof.gpus.specs import Gpu


def test_every_gpu_row_has_its_fields_and_sources() -> None:
    rows = package_table("gpus")["gpu"]
    fields = {f.name for f in dataclasses.fields(Gpu)}
    optional = {"fp64_tflop_per_s", "fp16_tflop_per_s", "l2_tbyte_per_s", "l2_source", "overrides"}
    optional |= {"l2_clock_ghz", "l2_clock_source"}
    for row in rows:
        assert fields - optional <= set(row) <= fields, row["key"]
        assert row["source"].strip(), row["key"]
        assert ("l2_tbyte_per_s" in row) == ("l2_source" in row), row["key"]
        assert ("l2_clock_ghz" in row) == ("l2_clock_source" in row), row["key"]
        assert row["cc"] in archs(), row["key"]
    assert len({row["key"] for row in rows}) == len(rows) == len(builtin_gpus()) == 24


def test_every_arch_figure_has_its_source() -> None:
    for row in package_table("archs")["arch"]:
        assert row["source"].strip(), row["cc"]
        assert set(row.get("unverified", ())) <= set(row["flop_per_sm_per_clk"]), row["cc"]
    for arch in archs().values():  # a row's figures with the table's defaults
        figures = [
            arch.schedulers_per_sm,
            arch.xu_ops,
            *([arch.int8_tensor_ops] if arch.int8_tensor_ops else []),
        ]
        sources = [f.source for f in figures] + [p.source for p in arch.tensor_paths.values()]
        assert all(s.strip() for s in sources), arch.cc
    assert list(archs()) == ["7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "12.0"]


def test_every_tier_peak_has_its_source_and_every_counter_a_figure() -> None:
    table = package_table("tier_peaks")
    assert {(u["unit"], u["clock"]) for u in table["counter"].values()} <= {
        ("SM", "l1"),
        ("SM", "l2"),
        ("L2 slice", "l2"),
    }
    listed: list[str] = []
    for cc, figures in table["cc"].items():
        if "assumed_as" in figures:
            assert figures["assumed_as"] in listed, cc  # an architecture above it in the file
            continue
        listed.append(cc)
        named = {**table["default"], **figures}
        wanted = {"writeback" if c in WRITEBACKS else c for c in table["counter"]}
        assert set(named) == wanted, cc
        assert all(f["source"].strip() and f["per_clock"] > 0 for f in named.values()), cc
    assert list(counter_peaks()) == list(table["cc"])


def test_figures_are_the_tables_before_they_moved() -> None:
    h100 = gpu_by_key("h100-sxm5")
    assert (h100.dram_gbyte_per_s, h100.sm_count, h100.memory_bus_bits) == (3350.0, 132, 5120)
    assert (h100.tensor_tflop_per_s, h100.boost_clock_ghz, h100.l2_tbyte_per_s) == (989.0, 1.98, 5.2)
    assert h100.names == ("h100 80gb hbm3", "h100 sxm5 80gb", "h100 sxm5", "h100 sxm", "h100")
    a100 = gpu_by_key("a100-sxm4")
    assert (a100.dram_gbyte_per_s, a100.sm_count, a100.fp64_tflop_per_s) == (2039.0, 108, 9.7)
    b200 = gpu_by_key("b200")
    assert b200.fp16_tflop_per_s is None and b200.tensor_tflop_per_s == 2250.0
    assert gpu_by_key("h800").overrides == {"fp64": 4.0}
    assert gpu_by_key("h200").l2_clock_ghz == 1.709
    ga100: Arch = archs()["8.0"]
    assert ga100.flop_per_sm_per_clk == {"fp64": 64.0, "fp32": 128.0, "fp16": 512.0, "tensor": 2048.0}
    assert ga100.int8_tensor_ops is not None and ga100.int8_tensor_ops.per_sm_per_clock == 4096
    assert not ga100.int8_tensor_ops.verified and ga100.tensor_paths["tf32"].ratio == 0.5
    assert archs()["10.0"].unverified == ("fp64", "fp32", "fp16", "tensor")
    sectors = counter_peak("8.0", "lts__t_sectors.sum")
    assert sectors is not None and sectors[0].per_clock == 3 and sectors[0].older_ncu == ("ncu 2020.3", 2.0)
    tags = counter_peak("9.0", "l1tex__t_sectors.sum")
    assert tags is not None and (tags[0].per_clock, tags[0].verified) == (16, True)
    assumed = counter_peak("12.0", "lts__t_sectors.sum")
    assert assumed is not None and assumed[0].per_clock == 2 and not assumed[0].verified
    assert assumed[0].source.startswith("assumed as CC 8.9 (ncu reports of the RTX 4090")


@pytest.mark.parametrize("cc", ["7.0", "9.0"])
def test_writeback_scopes_share_one_figure(cc: str) -> None:
    figures = counter_peaks()[cc]
    assert len({figures[w] for w in WRITEBACKS}) == 1
