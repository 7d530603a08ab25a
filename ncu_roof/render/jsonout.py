"""`--format json`: the stable `ncu-roof/analysis/v1` contract (docs/analysis-schema.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import Any

import polars as pl

from ncu_roof.analysis.core import SCHEMA, Analysis
from ncu_roof.analysis.groups import KernelGroup, device_totals_s, fix_first, group_kernels, ranked
from ncu_roof.analysis.model import finite_map, finite_or_none
from ncu_roof.analysis.records import Device
from ncu_roof.base.vocabulary import GroupBy
from ncu_roof.render.output import Piece, joined


def device_json(device: Device) -> dict[str, Any]:
    roofs = device.roofs
    return {
        "index": device.index,
        "input": device.input,
        "name": device.name,
        "cc": device.cc,
        "roofs": {
            "compute_flop_per_s": finite_map(roofs.compute_flop_per_s),
            "bandwidth_byte_per_s": finite_map(roofs.bandwidth_byte_per_s),
        },
        "sm_clock_hz": finite_or_none(device.sm_clock_hz),
        "roof_source": roofs.source,
        "roof_sources": dict(roofs.sources),
    }


def outline(analysis: Analysis) -> dict[str, Any]:
    """The document, its kernels (written as they come: `json_pieces`) left null."""
    return {
        "schema": SCHEMA,
        "inputs": [asdict(i) for i in analysis.inputs],
        "devices": [device_json(d) for d in analysis.devices],
        "kernels": None,
        "total_duration_s": finite_or_none(analysis.total_duration_s),
        "collect_command": analysis.collect_hint,
        **groups_json(analysis),
        **analysis.extra,
    }


DURATIONS = ("total_duration_s", "mean_duration_s", "min_duration_s", "max_duration_s")


def group_json(group: KernelGroup) -> dict[str, Any]:
    return {
        "name": group.name,
        "grid": group.key[1],
        "block": group.key[2],
        "device": group.device,
        "launches": group.count,
        "kernels": sorted(group.rows),
        **{k: finite_or_none(getattr(group, k)) for k in (*DURATIONS, "time_share", "device_share")},
        "verdicts": list(group.verdicts),
        "headroom_s": finite_or_none(group.headroom_s),
        "headroom_complete": group.headroom_complete,
        "headroom_sol_s": finite_or_none(group.headroom_sol_s),
    }


def groups_json(analysis: Analysis) -> dict[str, Any]:
    """`groups` (launches of one kernel, launch shape and device; by total time), `fix_first`, and
    `nvtx_groups` (launches of one NVTX range and device; empty when no launch ran in one)."""
    groups = ranked(group_kernels(analysis))
    position = {id(g): i for i, g in enumerate(groups)}
    totals = device_totals_s(analysis)
    first = []
    for device in analysis.devices:
        best = fix_first([g for g in groups if g.device == device.index], totals.get(device.index, 0.0))
        if best is not None:
            first.append(
                {
                    "device": device.index,
                    "group": position[id(best.group)],
                    "name": best.group.name,
                    "headroom_s": finite_or_none(best.saving_s),
                    "device_share": finite_or_none(best.share),
                    "ranked_by": "headroom_s",
                    "headroom_sol_s": finite_or_none(best.group.headroom_sol_s),
                    "sol_busiest_unit": best.group.lead.sol_busiest_unit,
                }
            )
    in_ranges = analysis.launches.select((pl.col("nvtx") != "").any()).item()
    by_nvtx = ranked(group_kernels(analysis, GroupBy.NVTX)) if in_ranges else []
    return {
        "groups": [group_json(g) for g in groups],
        "fix_first": first,
        "nvtx_groups": [group_json(g) for g in by_nvtx],
    }


PRETTY_MAX_KERNELS = 500  # up to this many: indented (Polars' kernels parsed); beyond: compact
CHUNK_KERNELS = 512  # kernels written at once: bounds the memory of a big document (as fast as 1,024)

_compact = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def render_json(analysis: Analysis) -> str:
    return joined(json_pieces(analysis))


def json_pieces(analysis: Analysis) -> Iterator[Piece]:
    """The document in pieces, made as they are written: a big one is never held whole."""
    from ncu_roof.render.jsonkernels import json_array, kernel_objects

    kernels = json_array(kernel_objects(analysis.launches, CHUNK_KERNELS))
    yield from document_pieces(outline(analysis), kernels, len(analysis.kernels) <= PRETTY_MAX_KERNELS)


def document_pieces(
    document: dict[str, Any], kernels: Iterable[bytes | memoryview], pretty: bool
) -> Iterator[Piece]:
    """`document` with the JSON array `kernels` (pieces of UTF-8) at its key "kernels": indented
    when `pretty` (the array parsed), else compact, the array written as it comes."""
    if pretty:
        whole = {**document, "kernels": json.loads(b"".join(kernels))}
        yield json.dumps(whole, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        return
    yield "{"
    for i, (key, value) in enumerate(document.items()):
        yield f"{',' if i else ''}{_compact(key)}:"
        yield from kernels if key == "kernels" else (_compact(value),)
    yield "}\n"
