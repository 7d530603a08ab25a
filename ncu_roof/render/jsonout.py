"""`--format json`: the stable `ncu-roof/analysis/v1` contract (docs/analysis-schema.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ncu_roof.analysis import SCHEMA, Analysis, Device, InstructionRoofline, Kernel
from ncu_roof.model import PRECISIONS, SOL_KEYS, TIERS, TRANSACTION_BYTES, finite_or_none


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
        "traffic": {tier: dict(entry) for tier, entry in kernel.traffic.items()},
        "notes": list(kernel.notes),
        "verdict_basis": kernel.verdict_basis.value,
        "sol_verdict": {
            "bound": kernel.sol_bound.value,
            "unit": kernel.sol_unit,
            "small_grid": kernel.small_grid,
        },
        "flop_total_is_lower_bound": kernel.flop_total_is_lower_bound,
        "not_collected": {k: list(v) for k, v in kernel.not_collected.items()},
        "ops": {k: finite_or_none(v) for k, v in kernel.ops.items()},
        "ops_total_is_lower_bound": kernel.ops_total_is_lower_bound,
        "tensor_paths": {
            path: {
                "unit": t.unit,
                "count": finite_or_none(t.count),
                "peak_per_s": finite_or_none(t.peak_per_s),
            }
            for path, t in kernel.tensor_paths.items()
        },
        "pipe_pct": {k: finite_or_none(v) for k, v in kernel.pipe_pct.items()},
        "compute_ceiling": kernel.compute_ceiling,
        "compute_ceiling_pct": finite_or_none(kernel.compute_ceiling_pct),
        "instruction_roofline": _instructions(kernel.instructions),
    }


def _instructions(roof: InstructionRoofline | None) -> dict[str, Any] | None:
    if roof is None:
        return None
    return {
        "warp_inst": finite_or_none(roof.warp_inst),
        "warp_inst_per_s": finite_or_none(roof.warp_inst_per_s),
        "issue_peak_warp_inst_per_s": finite_or_none(roof.issue_peak_warp_inst_per_s),
        "issue_peak_source": roof.issue_peak_source,
        "intensity_warp_inst_per_transaction": {
            k: finite_or_none(v) for k, v in roof.intensity_warp_inst_per_transaction.items()
        },
        "transaction_peak_per_s": {k: finite_or_none(v) for k, v in roof.transaction_peak_per_s.items()},
        "transaction_bytes": {k: TRANSACTION_BYTES[k] for k in roof.intensity_warp_inst_per_transaction},
        "recipe": roof.recipe,
    }


def analysis_json(analysis: Analysis) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "inputs": [
            {
                "path": i.path,
                "format": i.format,
                "ncu_version": i.ncu_version,
                "kernels": i.kernels,
                "averaged": list(i.averaged),
            }
            for i in analysis.inputs
        ],
        "devices": [device_json(d) for d in analysis.devices],
        "kernels": [kernel_json(k) for k in analysis.kernels],
        "total_duration_s": finite_or_none(analysis.total_duration_s),
        "collect_command": analysis.collect_hint,
        **analysis.extra,
    }


PRETTY_MAX_KERNELS = 500  # larger analyses are written compact: the C encoder is ~5x faster


def render_json(analysis: Analysis) -> str:
    indent = 2 if len(analysis.kernels) <= PRETTY_MAX_KERNELS else None
    return json.dumps(analysis_json(analysis), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
