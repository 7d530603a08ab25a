"""`--format json`: the stable `ncu-roof/analysis/v1` contract (docs/analysis-schema.md).

Its kernel objects are the launch frame written by Polars' `write_json`: each key a column of the
launch frame (`ncu_roof.analysis.frame`) or following from them (`above_roof`, `sol_verdict`,
`ops`, `headroom_s`, `transaction_bytes`). A struct has the same fields in every row where JSON
objects do not (a sparse map leaves out keys without a number; one recipe names more quantities
than another): launches are written by shape, lines put back in order."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from typing import Any

import numpy as np
import polars as pl

from ncu_roof.analysis.core import SCHEMA, Analysis
from ncu_roof.analysis.frame import (
    integer_ops,
    integer_paths,
    kept,
    numbers,
    roof_columns,
    shapes,
    struct,
    where,
)
from ncu_roof.analysis.groups import KernelGroup, device_totals_s, fix_first, group_kernels, ranked
from ncu_roof.analysis.model import TRANSACTION_BYTES, finite_map, finite_or_none
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


def group_json(group: KernelGroup) -> dict[str, Any]:
    durations = ("total_duration_s", "mean_duration_s", "min_duration_s", "max_duration_s")
    return {
        "name": group.name,
        "grid": group.key[1],
        "block": group.key[2],
        "device": group.device,
        "launches": group.count,
        "kernels": sorted(group.rows),
        **{k: finite_or_none(getattr(group, k)) for k in (*durations, "time_share", "device_share")},
        "verdicts": list(group.verdicts),
        "headroom_s": finite_or_none(group.headroom_s),
        "headroom_complete": group.headroom_complete,
        "headroom_sol_s": finite_or_none(group.headroom_sol_s),
    }


def outline(analysis: Analysis) -> dict[str, Any]:
    """The document, its kernels (written as they come: `json_pieces`) null; its `groups` (of one
    kernel, launch shape and device; by time), `fix_first`, `nvtx_groups` (of one range and device)."""
    groups, totals = ranked(group_kernels(analysis, notes=False)), device_totals_s(analysis)
    first = []
    for device in analysis.devices:
        best = fix_first([g for g in groups if g.device == device.index], totals.get(device.index, 0.0))
        if best is not None:
            first.append(
                {
                    "device": device.index,
                    "group": groups.index(best.group),  # keys differ: the one group equal to it
                    "name": best.group.name,
                    "headroom_s": finite_or_none(best.saving_s),
                    "device_share": finite_or_none(best.share),
                    "ranked_by": "headroom_s",
                    "headroom_sol_s": finite_or_none(best.group.headroom_sol_s),
                    "sol_busiest_unit": best.group.lead.sol_busiest_unit,
                }
            )
    in_ranges = analysis.launches.select((pl.col("nvtx") != "").any()).item()
    by_nvtx = ranked(group_kernels(analysis, GroupBy.NVTX, notes=False)) if in_ranges else []
    return {
        "schema": SCHEMA,
        "inputs": [asdict(i) for i in analysis.inputs],
        "devices": [device_json(d) for d in analysis.devices],
        "kernels": None,
        "total_duration_s": finite_or_none(analysis.total_duration_s),
        "collect_command": analysis.collect_hint,
        "groups": [group_json(g) for g in groups],
        "fix_first": first,
        "nvtx_groups": [group_json(g) for g in by_nvtx],
        **analysis.extra,
    }


PRETTY_MAX_KERNELS = 500  # up to this many: indented (Polars' kernels parsed); beyond: compact
CHUNK_KERNELS = 512  # kernels written at once: bounds the memory of a big document (as fast as 1,024)

_compact = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def render_json(analysis: Analysis) -> str:
    return joined(json_pieces(analysis))


def json_pieces(analysis: Analysis) -> Iterator[Piece]:
    """The document in pieces, made as they are written: a big one is never held whole."""
    kernels = kernel_objects(analysis.launches, CHUNK_KERNELS)
    yield from document_pieces(outline(analysis), kernels, len(analysis.kernels))


def document_pieces(
    document: dict[str, Any], objects: Iterable[bytes | memoryview], count: int
) -> Iterator[Piece]:
    """`document` with the array of its `count` objects (UTF-8 pieces, `,`-separated) at "kernels":
    indented up to `PRETTY_MAX_KERNELS` (the array parsed), else compact, written as it comes."""
    if count <= PRETTY_MAX_KERNELS:
        whole = {**document, "kernels": json.loads(b"[" + b",".join(objects) + b"]")}
        yield json.dumps(whole, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        return
    yield "{"
    for i, (key, value) in enumerate(document.items()):
        yield f"{',' if i else ''}{_compact(key)}:"
        if key != "kernels":
            yield _compact(value)
            continue
        yield "["
        for j, chunk in enumerate(objects):
            yield from (",", chunk) if j else (chunk,)
        yield "]"
    yield "}\n"


# The kernel object's keys, in the order of the contract (docs/schemas/analysis.v1.schema.json)
KERNEL = (
    *("id", "name", "input", "run", "device", "grid", "block", "nvtx", "duration_s", "time_share"),
    *("flop", "bytes", "intensity_flop_per_byte", "achieved_flop_per_s", "achieved_byte_per_s"),
    *("attainable_flop_per_s", "cap_flop_per_s", "binding", "bound", "compute_precision"),
    *("pct_of_roof", "above_roof", "sol_pct", "pct_of_bandwidth", "recipe", "traffic", "notes"),
    *("verdict_basis", "sol_verdict", "flop_total_is_lower_bound", "not_collected", "ops"),
    *("ops_total_is_lower_bound", "tensor_paths", "pipe_pct", "compute_ceiling"),
    *("compute_ceiling_pct", "instruction_roofline", "headroom_s", "headroom_sol_s", "sol_busiest_unit"),
)


def kernel_frame(launches: pl.DataFrame) -> pl.DataFrame:
    n = len(launches)
    sol = {"bound": launches["sol_bound"], "unit": launches["sol_unit"], "small_grid": launches["small_grid"]}
    above, headroom = roof_columns(launches)
    derived = {
        "above_roof": above,
        "sol_verdict": struct(sol, n),
        "ops": struct(integer_ops(launches), n),
        "instruction_roofline": _with_bytes(launches.get_column("instruction_roofline")),
        "headroom_s": headroom,
    }
    return pl.DataFrame([(derived[k] if k in derived else launches.get_column(k)).alias(k) for k in KERNEL])


def _with_bytes(roof: pl.Series) -> pl.Series:
    """The instruction roofline with `transaction_bytes` (per tier with an intensity) after its peaks."""
    fields, n = roof.struct.unnest(), len(roof)
    intensity = fields.get_column("intensity_warp_inst_per_transaction")
    known = {t: intensity.struct.field(t).is_not_null().to_numpy() for t in intensity.struct.fields}
    transaction_bytes = {t: where(has, numbers([TRANSACTION_BYTES[t]] * n)) for t, has in known.items()}
    made = fields.insert_column(
        fields.get_column_index("recipe"), struct(transaction_bytes, n).alias("transaction_bytes")
    )
    return where(roof.is_not_null().to_numpy(), made.to_struct())


def kernel_objects(launches: pl.DataFrame, chunk: int) -> Iterator[bytes | memoryview]:
    """The kernels' JSON objects, `,`-separated, `chunk` launches at a time, as UTF-8 Polars writes."""
    if not len(launches):
        return
    by_shape = shapes(launches)
    if len(by_shape) == 1:
        yield from json_objects(_shaped(launches, by_shape[0][0]), chunk)
        return
    order = np.concatenate([rows for _, rows in by_shape])
    lines = pl.concat(
        [
            _shaped(launches[rows], has).select(pl.struct(pl.all()).struct.json_encode()).to_series()
            for has, rows in by_shape
        ]
    ).gather(np.argsort(order, kind="stable"))
    for start in range(0, len(launches), chunk):
        yield lines.slice(start, chunk).str.join(",").item().encode()


def _shaped(launches: pl.DataFrame, has: Mapping[str, bool]) -> pl.DataFrame:
    """The kernel objects of launches of one shape, without the keys they lack: the stored
    instruction roofline's flags, and the JSON's `transaction_bytes` (one per intensity); of `ops`,
    their integer tensor paths, and the total where they have one."""
    intensity = "instruction_roofline.intensity_warp_inst_per_transaction."
    ops = {f"ops.{p}": has[f"tensor_paths.{p}"] for p in integer_paths(launches)}
    has = {
        **has,
        **{k.replace(intensity, "instruction_roofline.transaction_bytes."): v for k, v in has.items()},
        **ops,
        "ops.total": any(ops.values()),
    }
    frame = kernel_frame(launches)
    return pl.DataFrame([kept(frame.get_column(c), (c,), has).alias(c) for c in frame.columns])


def json_objects(frame: pl.DataFrame, chunk: int) -> Iterator[memoryview]:
    """The frame's rows as `,`-separated JSON objects, `chunk` rows at a time (UTF-8): the JSON
    array Polars writes of each chunk, without its brackets (not copied)."""
    for start in range(0, len(frame), chunk):
        frame.slice(start, chunk).write_json(written := io.BytesIO())
        yield written.getbuffer()[1:-1]
