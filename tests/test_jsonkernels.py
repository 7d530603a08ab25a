"""The kernels of `--format json`, written by Polars from the launch columns: each object says
what its launch's `Kernel` says, key for key and type for type, whatever the chunk, whichever
keys a launch's maps and records have (sparse maps, recipes of other quantities)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, analyzed

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.frame import frame_of
from ncu_roof.analysis.groups import headroom_s
from ncu_roof.analysis.model import TRANSACTION_BYTES
from ncu_roof.analysis.records import Kernel, TensorPath
from ncu_roof.base.vocabulary import PRECISIONS, SOL_KEYS, TIERS
from ncu_roof.recipe import is_integer_path
from ncu_roof.render import jsonout

INPUTS = (  # raw CSV of a full set; a report with tensor paths; a details page; an instruction roofline
    "reexport/h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv",
    "a10g_rep_2023.1.1_roofline-set.ncu-rep",
    "a100_details-kerneltime-rules_hier-roofline_bert-attn.csv",
    "rtx5090_details_cublas-gemv_metrics-sol-mwa-occ.csv",
)


def plain(value: Any) -> Any:
    """A `Kernel` value as JSON holds it: enums by value, non-finite numbers null, records as objects."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def integer_ops(paths: Mapping[str, TensorPath], total: float | None) -> dict[str, float | None]:
    """A launch's integer operations: its integer paths' counts and the total (none: {})."""
    counts = {p: t.count for p, t in paths.items() if is_integer_path(p)}
    return {**counts, "total": total} if counts else {}


def expected(k: Kernel) -> dict[str, Any]:
    """The contract's kernel object (docs/analysis-schema.md), from the `Kernel` alone."""
    roof = plain(k.instructions)
    if roof is not None:  # the transaction sizes before the recipe
        recipe = roof.pop("recipe")
        tiers = roof["intensity_warp_inst_per_transaction"]
        roof |= {"transaction_bytes": {t: TRANSACTION_BYTES[t] for t in tiers}}
        roof["recipe"] = recipe

    def dense(m: Mapping[str, float | None], keys: tuple[str, ...]) -> dict[str, Any]:
        return {key: plain(m.get(key)) for key in keys}

    return {
        **{f: getattr(k, f) for f in ("id", "name", "input", "run", "device", "grid", "block", "nvtx")},
        "duration_s": plain(k.duration_s),
        "time_share": plain(k.time_share),
        "flop": dense(k.flop, (*PRECISIONS, "total")),
        "bytes": dense(k.bytes, TIERS),
        "intensity_flop_per_byte": dense(k.intensity_flop_per_byte, TIERS),
        "achieved_flop_per_s": plain(k.achieved_flop_per_s),
        "achieved_byte_per_s": dense(k.achieved_byte_per_s, TIERS),
        "attainable_flop_per_s": plain(k.attainable_flop_per_s),
        "cap_flop_per_s": plain(k.cap_flop_per_s),
        "binding": k.binding,
        "bound": k.bound.value,
        "compute_precision": k.compute_precision,
        "pct_of_roof": plain(k.pct_of_roof),
        "above_roof": k.pct_of_roof is not None and k.pct_of_roof > 100.0,
        "sol_pct": dense(k.sol_pct, SOL_KEYS),
        "pct_of_bandwidth": dense(k.pct_of_bandwidth, TIERS),
        "recipe": plain(k.recipe),
        "traffic": plain(k.traffic),
        "notes": plain(k.notes),
        "verdict_basis": k.verdict_basis.value,
        "sol_verdict": {"bound": k.sol_bound.value, "unit": k.sol_unit, "small_grid": k.small_grid},
        "flop_total_is_lower_bound": k.flop_total_is_lower_bound,
        "not_collected": plain(k.not_collected),
        "ops": plain(k.ops),
        "ops_total_is_lower_bound": k.ops_total_is_lower_bound,
        "tensor_paths": plain(k.tensor_paths),
        "pipe_pct": plain(k.pipe_pct),
        "compute_ceiling": k.compute_ceiling,
        "compute_ceiling_pct": plain(k.compute_ceiling_pct),
        "instruction_roofline": roof,
        "headroom_s": headroom_s(k),
        "headroom_sol_s": plain(k.headroom_sol_s),
        "sol_busiest_unit": k.sol_busiest_unit,
    }


def assert_same(got: Any, want: Any, at: str = "") -> None:
    """Equal, keys in the same order, and of the same types (1.0 is not 1, nor True 1)."""
    assert type(got) is type(want), f"{at}: {got!r} is not {want!r}"
    if isinstance(want, dict):
        assert list(got) == list(want), at
        for key in want:
            assert_same(got[key], want[key], f"{at}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), at
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{at}[{i}]")
    else:
        assert got == want, at


def written(analysis: Analysis, monkeypatch: pytest.MonkeyPatch, chunk: int) -> tuple[str, list[Any]]:
    """The compact document (the path past PRETTY_MAX_KERNELS) of chunks of `chunk` kernels."""
    monkeypatch.setattr(jsonout, "PRETTY_MAX_KERNELS", 0)
    monkeypatch.setattr(jsonout, "CHUNK_KERNELS", chunk)
    text = jsonout.render_json(analysis)
    kernels: list[Any] = json.loads(text)["kernels"]
    return text, kernels


@pytest.mark.parametrize("chunk", [7, jsonout.CHUNK_KERNELS])
@pytest.mark.parametrize("name", INPUTS)
def test_each_kernel_object_is_what_its_kernel_says(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, name: str, chunk: int
) -> None:
    assert_each_kernel(analyzed(corpus / name), monkeypatch, chunk)


@pytest.mark.parametrize("name", ["raw_nvtx.csv", "ceiling_pipes.csv", "raw_base.csv"])
def test_each_kernel_object_of_a_fixture_is_what_its_kernel_says(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """NVTX ranges; launches of other pipes and recipes (a frame per shape)."""
    assert_each_kernel(analyzed(FIXTURES / name), monkeypatch, 2)


def assert_each_kernel(analysis: Analysis, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    text, kernels = written(analysis, monkeypatch, chunk)
    assert text.count("\n") == 1 and len(kernels) == len(analysis.kernels) > 0
    for k, got in zip(analysis.kernels, kernels, strict=True):
        assert_same(got, expected(k), f"kernel {k.id}")


def test_launches_of_other_keys_keep_their_own_keys_in_their_order(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame per shape of objects, the lines put back in launch order: a sparse map has only the
    keys it has numbers for (in the order of the launches' columns: the first launch's first)."""
    analysis = analyzed(corpus / INPUTS[0])
    k = analysis.kernels[0]
    launches = [
        replace(k, id=0),
        replace(k, id=1, cap_flop_per_s={"dram": 1.5e12}, pipe_pct={"fma": 12.5}),
        replace(k, id=2, cap_flop_per_s={}, notes=("a note",), name='a "quoted"\nname, ünï€𝄞 100%'),
        replace(k, id=3, duration_s=math.nan, pct_of_roof=math.inf, cap_flop_per_s={"l2": -math.inf}),
        replace(k, id=4, cap_flop_per_s={"dram": 1e-05, "compute": 2e12}),
    ]
    _, kernels = written(Analysis(analysis.inputs, analysis.devices, launches), monkeypatch, 2)
    assert [got["id"] for got in kernels] == [0, 1, 2, 3, 4]
    assert kernels[1]["cap_flop_per_s"] == {"dram": 1.5e12} and kernels[1]["pipe_pct"] == {"fma": 12.5}
    assert kernels[2]["cap_flop_per_s"] == {} and kernels[2]["name"] == 'a "quoted"\nname, ünï€𝄞 100%'
    assert kernels[3]["duration_s"] is None and kernels[3]["pct_of_roof"] is None
    assert kernels[3]["cap_flop_per_s"] == {"l2": None}  # a key with a number, though not a finite one
    assert kernels[4]["cap_flop_per_s"] == {"dram": 1e-05, "compute": 2e12}
    for launch, got in zip(launches, kernels, strict=True):
        assert_same(got, expected(launch), f"kernel {launch.id}")


def test_records_of_other_keys_keep_their_own_keys(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each launch differs from the first in the keys of one record only: a recipe of fewer
    quantities, traffic of fewer tiers, no terms missing, no integer operations, fewer tensor
    paths, no instruction roofline, an instruction roofline of fewer tiers, a tier's traffic
    of fewer formulas."""
    analysis = analyzed(corpus / INPUTS[0])
    k = analysis.kernels[0]
    assert min(len(k.recipe), len(k.traffic), len(k.tensor_paths)) > 1 and k.not_collected and k.ops
    roof = k.instructions
    assert roof is not None
    one_quantity = dict(list(k.recipe.items())[:1])
    fewer = dict(list(roof.intensity_warp_inst_per_transaction.items())[:1])
    one_path = dict(list(k.tensor_paths.items())[:1])
    floating = {p: t for p, t in k.tensor_paths.items() if not is_integer_path(p)}
    launches = [
        replace(k, id=0),
        replace(k, id=1, recipe=one_quantity),
        replace(k, id=2, traffic=dict(list(k.traffic.items())[:1])),
        replace(k, id=3, tensor_paths=one_path, ops=integer_ops(one_path, k.ops["total"])),
        replace(k, id=4, not_collected={}),
        replace(k, id=5, tensor_paths=floating, ops={}),  # the operations are the integer paths' counts
        replace(k, id=6, instructions=None),
        replace(k, id=7, instructions=replace(roof, intensity_warp_inst_per_transaction=fewer)),
        replace(k, id=8, instructions=replace(roof, transaction_peak_per_s=fewer)),
        replace(k, id=9, traffic={t: dict(list(e.items())[:1]) for t, e in k.traffic.items()}),
    ]
    _, kernels = written(Analysis(analysis.inputs, analysis.devices, launches), monkeypatch, 3)
    assert kernels[1]["recipe"] == one_quantity and kernels[0]["recipe"] == dict(k.recipe)
    assert kernels[6]["instruction_roofline"] is None
    assert list(kernels[7]["instruction_roofline"]["transaction_bytes"]) == list(fewer)
    for launch, got in zip(launches, kernels, strict=True):
        assert_same(got, expected(launch), f"kernel {launch.id}")


def test_kernels_of_a_list_and_of_no_launch(corpus: Path) -> None:
    analysis = analyzed(corpus / INPUTS[2])
    kernels = json.loads(b"[%s]" % b",".join(jsonout.kernel_objects(frame_of(list(analysis.kernels)), 4)))
    assert kernels == json.loads(b"[%s]" % b",".join(jsonout.kernel_objects(analysis.launches, 4)))
    assert [got["name"] for got in kernels] == [k.name for k in analysis.kernels]
    assert list(jsonout.kernel_objects(frame_of(()), 4)) == []


def test_big_documents_are_compact_and_equal(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    analysis = analyzed(corpus / INPUTS[0])
    pretty = jsonout.render_json(analysis)
    compact, _ = written(analysis, monkeypatch, 3)
    assert "\n  " in pretty and compact.count("\n") == 1
    assert json.loads(compact) == json.loads(pretty)
