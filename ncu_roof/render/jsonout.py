"""`--format json`: the stable `ncu-roof/analysis/v1` contract (docs/analysis-schema.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ncu_roof.analysis import SCHEMA, Analysis, Device, Kernel
from ncu_roof.groups import KernelGroup, device_totals_s, fix_first, group_kernels, headroom_s, ranked
from ncu_roof.model import PRECISIONS, SOL_KEYS, TIERS, finite_or_none


def _map(values: Mapping[str, float | None], keys: tuple[str, ...]) -> dict[str, float | None]:
    return {k: finite_or_none(values.get(k)) for k in keys}


def device_json(device: Device) -> dict[str, Any]:
    roofs = device.roofs
    return {
        "index": device.index,
        "input": device.input,
        "name": device.name,
        "cc": device.cc,
        "roofs": {
            "compute_flop_per_s": {k: finite_or_none(v) for k, v in roofs.compute_flop_per_s.items()},
            "bandwidth_byte_per_s": {k: finite_or_none(v) for k, v in roofs.bandwidth_byte_per_s.items()},
        },
        "sm_clock_hz": finite_or_none(device.sm_clock_hz),
        "roof_source": roofs.source,
        "roof_sources": dict(roofs.sources),
    }


def kernel_json(kernel: Kernel) -> dict[str, Any]:
    return {
        "id": kernel.id,
        "name": kernel.name,
        "input": kernel.input,
        "run": kernel.run,
        "device": kernel.device,
        "grid": kernel.grid,
        "block": kernel.block,
        "duration_s": finite_or_none(kernel.duration_s),
        "time_share": finite_or_none(kernel.time_share),
        "flop": _map(kernel.flop, (*PRECISIONS, "total")),
        "bytes": _map(kernel.bytes, TIERS),
        "intensity_flop_per_byte": _map(kernel.intensity_flop_per_byte, TIERS),
        "achieved_flop_per_s": finite_or_none(kernel.achieved_flop_per_s),
        "achieved_byte_per_s": _map(kernel.achieved_byte_per_s, TIERS),
        "attainable_flop_per_s": finite_or_none(kernel.attainable_flop_per_s),
        "cap_flop_per_s": {k: finite_or_none(v) for k, v in kernel.cap_flop_per_s.items()},
        "binding": kernel.binding,
        "bound": kernel.bound.value,
        "compute_precision": kernel.compute_precision,
        "pct_of_roof": finite_or_none(kernel.pct_of_roof),
        "above_roof": kernel.above_roof,
        "sol_pct": _map(kernel.sol_pct, SOL_KEYS),
        "recipe": dict(kernel.recipe),
        "notes": list(kernel.notes),
        "headroom_s": finite_or_none(headroom_s(kernel)),
    }


def analysis_json(analysis: Analysis) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "inputs": [
            {"path": i.path, "format": i.format, "ncu_version": i.ncu_version, "kernels": i.kernels}
            for i in analysis.inputs
        ],
        "devices": [device_json(d) for d in analysis.devices],
        "kernels": [kernel_json(k) for k in analysis.kernels],
        "total_duration_s": finite_or_none(analysis.total_duration_s),
        "collect_command": analysis.collect_hint,
        **groups_json(analysis),
        **analysis.extra,
    }


def group_json(group: KernelGroup, index_of: Mapping[int, int]) -> dict[str, Any]:
    return {
        "name": group.name,
        "grid": group.key[1],
        "block": group.key[2],
        "device": group.device,
        "launches": group.count,
        "kernels": sorted(index_of[id(k)] for k in group.launches),
        "total_duration_s": finite_or_none(group.total_duration_s),
        "mean_duration_s": finite_or_none(group.mean_duration_s),
        "min_duration_s": finite_or_none(group.min_duration_s),
        "max_duration_s": finite_or_none(group.max_duration_s),
        "time_share": finite_or_none(group.time_share),
        "device_share": finite_or_none(group.device_share),
        "verdicts": list(group.verdicts),
        "headroom_s": finite_or_none(group.headroom_s),
        "headroom_complete": group.headroom_complete,
    }


def groups_json(analysis: Analysis) -> dict[str, Any]:
    """`groups` (launches of one kernel, launch shape and device; by total time) and `fix_first`."""
    index_of = {id(k): i for i, k in enumerate(analysis.kernels)}
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
                }
            )
    return {"groups": [group_json(g, index_of) for g in groups], "fix_first": first}


PRETTY_MAX_KERNELS = 500  # larger analyses are written compact: the C encoder is ~5x faster


def render_json(analysis: Analysis) -> str:
    indent = 2 if len(analysis.kernels) <= PRETTY_MAX_KERNELS else None
    return json.dumps(analysis_json(analysis), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
