"""One device's launches as columns: every `Kernel` field from the normalized launches and the
verdict arrays, with the notes; text columns coded once (launches share recipes and traffic)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from ncu_roof.analysis.columns import (
    Coded,
    LaunchColumns,
    coded,
    decoded,
    distinct_numbers,
    shared_rows,
    text_value,
)
from ncu_roof.analysis.device_records import instruction_records, ops_columns, tensor_path_columns
from ncu_roof.analysis.frame import (
    instruction_structs,
    launch_frame,
    numbers,
    struct,
    tensor_path_structs,
    texts,
    where,
)
from ncu_roof.analysis.model import (
    bit_codes,
    fixed,
    intensity_array,
    is_set,
    objects,
    per_kernel,
    row_max,
    whole_shown,
)
from ncu_roof.analysis.notes import NoteInputs, launch_notes
from ncu_roof.analysis.records import NON_COMPUTE_PIPES, Device
from ncu_roof.analysis.sol import busiest_unit_arrays, sol_headroom_array
from ncu_roof.analysis.verdicts import Verdicts, unfailed
from ncu_roof.base.codes import object_array, truthy
from ncu_roof.base.vocabulary import PRECISIONS, SOL_KEYS, TIERS, Roofs
from ncu_roof.gpus.roofs import launch_count
from ncu_roof.recipe import PIPE_PREFIX

_RECIPE_KEYS = (
    "duration_s",
    *(f"flop_{p}" for p in PRECISIONS),
    *(f"{t}_bytes" for t in TIERS),
    "warp_inst",
)
NAN = float("nan")


def device_columns(
    ident: Mapping[str, np.ndarray],
    group: Mapping[str, np.ndarray],
    v: Verdicts,
    device: Device,
    input_index: int,
    total_s: float,
) -> tuple[LaunchColumns, pl.DataFrame]:
    """Every `Kernel` field of one device's launches (identity and normalized columns), as columns."""
    n = launch_count(group)
    failed = v.failed

    def measured(column: str) -> np.ndarray:
        return unfailed(group[column], failed) if column in group else np.full(n, NAN)

    duration = measured("duration_s")
    flop = {p: measured(f"flop_{p}") for p in PRECISIONS}
    flop_total = measured("flop_total")
    nbytes = {t: measured(f"{t}_bytes") for t in TIERS}
    sol = {k: measured(f"sol_{k}_pct") for k in SOL_KEYS}
    timed = ~np.isnan(duration) & (duration != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        achieved_bw = {t: np.where(timed & ~np.isnan(b), b / duration, NAN) for t, b in nbytes.items()}
        intensity = {t: intensity_array(flop_total, b) for t, b in nbytes.items()}
        achieved_flop = np.where(timed & ~np.isnan(flop_total), flop_total / duration, NAN)
        at_roof = v.arrays.time_at_roof_s
        pct = np.where(v.supported & ~np.isnan(at_roof) & timed, 100.0 * at_roof / duration, NAN)
        time_share = duration / total_s if total_s > 0 else np.full(n, NAN)
        of_bandwidth = {t: 100.0 * achieved_bw[t] / per_kernel(v.bandwidth.get(t), n) for t in TIERS}
    busiest_pct, busiest_unit = busiest_unit_arrays(sol, n)
    formulas = {key: coded(group, f"{key}_recipe", n, text_value) for key in _RECIPE_KEYS}  # coded once
    recipe = shared_rows(
        list(formulas.values()),
        n,
        lambda texts: {k: t for k, t in zip(_RECIPE_KEYS, texts, strict=True) if t is not None},
    )
    ceiling = np.where(v.supported, v.ceiling, objects(None, n))
    ops_total = measured("ops_total")
    paths = tensor_path_columns(group, failed)
    pipes = {
        c.removeprefix(PIPE_PREFIX).removesuffix("_pct"): measured(c)
        for c in group
        if c.startswith(PIPE_PREFIX) and c.endswith("_pct")
    }
    not_collected = _not_collected(group, failed)
    lower = np.asarray(group["flop_total_is_lower_bound"], dtype=bool) & ~np.isnan(flop_total)
    missing = _missing(failed, duration, flop_total, nbytes, sol)
    values: dict[str, np.ndarray] = {
        **_identity(ident, n, input_index, device.index),
        "duration_s": duration,
        "time_share": time_share,
        "achieved_flop_per_s": achieved_flop,
        "attainable_flop_per_s": v.arrays.attainable_flop_per_s,
        "pct_of_roof": pct,
        "compute_ceiling_pct": np.where(is_set(ceiling), v.ceiling_pct, NAN),
        "headroom_sol_s": sol_headroom_array(duration, busiest_pct),
        "sol_busiest_unit": busiest_unit,
        "small_grid": v.sol.small_grid.astype(bool),
        "flop_total_is_lower_bound": lower,
        "binding": v.arrays.binding,
        "roofline_binding": v.arrays.binding,
        "compute_precision": v.precisions,
        "bound": v.bound,
        "verdict_basis": v.basis,
        "sol_bound": v.sol.bound,
        "sol_unit": v.sol.unit,
        "compute_ceiling": ceiling,
        "recipe": recipe,
        "missing": missing,
        "traffic": _traffic(group, nbytes, formulas),
        "not_collected": not_collected,
        "instructions": instruction_records(v, measured("warp_inst"), recipe),
        **ops_columns(paths, ops_total),
        "tensor_paths": paths.records,
    }
    notes = launch_notes(
        NoteInputs(
            failed=failed,
            collection_failed=v.collection_failed,
            missing=missing,
            no_compute_roofs=not device.roofs.compute_flop_per_s,
            unroofed=v.arrays.unroofed,
            recipe=recipe,
            not_collected=not_collected,
            flop=flop,
            flop_total_is_lower_bound=lower,
            tensor_pipe_pct=measured("tensor_pipe_pct"),
            integer_tensor_ops=~np.isnan(ops_total) & (ops_total != 0),
            basis=v.basis,
            bound=v.bound,
            sol_bound=v.sol.bound,
            sol_unit=v.sol.unit,
            disagrees=v.disagrees,
            supported=v.supported,
            binding=v.arrays.binding,
            pct=pct,
            sol_sm_pct=sol["sm"],
            sol_memory_pct=sol["memory"],
            waves=np.asarray(group["waves_per_sm"], dtype="float64"),
            busiest_pipe=_busiest_pipe(pipes, n),
            busiest_issue_pipe=_busiest_pipe(pipes, n, compute_only=False),
            busiest_tier=_busiest_tier(achieved_bw, device.roofs, ~np.isnan(flop_total)),
            tensor_by_pipe=_by_pipe_shape(formulas["flop_tensor"]) & (np.nan_to_num(flop["tensor"]) > 0),
            shared_wavefronts_per_request=measured("shared_wavefronts_per_request"),
            shared_bank_conflict_pct=measured("shared_bank_conflict_pct"),
            sol_pct=sol,
            pct_of_bandwidth=of_bandwidth,
            ceiling=ceiling,
        )
    )
    values["notes"] = object_array(notes)
    given = ident["input_notes"]
    for j in np.flatnonzero(truthy(given)).tolist():  # the reader's notes first
        values["notes"][j] = (*given[j], *notes[j])
    maps = {
        "flop": {**flop, "total": flop_total},
        "bytes": nbytes,
        "intensity_flop_per_byte": intensity,
        "achieved_byte_per_s": achieved_bw,
        "sol_pct": sol,
        "pct_of_bandwidth": of_bandwidth,
        "cap_flop_per_s": dict(v.arrays.cap_flop_per_s),
        "pipe_pct": pipes,
    }
    records = {
        "recipe": struct({k: texts(decoded(c, None)) for k, c in formulas.items()}, n),
        "traffic": _traffic_structs(group, nbytes, formulas),
        "not_collected": _not_collected_lists(group, failed),
        "tensor_paths": tensor_path_structs(group, failed),
        "ops_total": numbers(ops_total),
        "instruction_roofline": instruction_structs(
            v.instructions,
            measured("warp_inst"),
            v.issue_source,
            texts(decoded(formulas["warp_inst"], None)),
        ),
    }
    return LaunchColumns(n, values, maps), launch_frame(values, maps, records)


def _traffic_structs(
    group: Mapping[str, np.ndarray], nbytes: Mapping[str, np.ndarray], formulas: Mapping[str, Coded]
) -> pl.Series:
    """Per launch and tier with traffic: its definition, the formula of its bytes and of its roof."""
    n = launch_count(group)
    tiers = {}
    for t in TIERS:
        definition = decoded(coded(group, f"{t}_traffic", n, text_value), None)
        missing = "nan" if f"{t}_bytes_recipe" in group else "None"
        entry = {
            "definition": texts(definition),
            "recipe": texts(decoded(formulas[f"{t}_bytes"], missing)),
            "roof": texts(decoded(coded(group, f"bw_{t}_byte_per_s_recipe", n, text_value), None)),
        }
        tiers[t] = where(~np.isnan(nbytes[t]) & is_set(definition), struct(entry, n))
    return struct(tiers, n)


def _not_collected_lists(group: Mapping[str, np.ndarray], failed: np.ndarray) -> pl.Series:
    """Per launch {precision: the FLOP terms that read n/a} (none for a failed launch)."""
    n = len(failed)
    lists = {}
    for p in PRECISIONS:
        terms = texts(decoded(coded(group, f"flop_{p}_not_collected", n, text_value), None))
        lists[p] = where(~failed & (terms.fill_null("").str.len_chars() > 0).to_numpy(), terms.str.split(","))
    return struct(lists, n)


def _by_pipe_shape(recipe: Coded) -> np.ndarray:
    """Whether a launch's tensor FLOPs are tensor-pipe instructions x 512 (its recipe says so)."""
    shaped = np.array([bool(r) and r.endswith("*512") for r in [*recipe.values, None]], dtype=bool)
    out: np.ndarray = shaped[recipe.codes]  # code -1 (no recipe): the last entry
    return out


def _identity(
    ident: Mapping[str, np.ndarray], n: int, input_index: int, device_index: int
) -> dict[str, np.ndarray]:
    return {
        **{c: ident[c] for c in ("id", "run", "name", "grid", "block", "nvtx")},
        "input": np.full(n, input_index, dtype="int64"),
        "device": np.full(n, device_index, dtype="int64"),
    }


def _not_collected(group: Mapping[str, np.ndarray], failed: np.ndarray) -> np.ndarray:
    """Per launch {precision: the FLOP terms that read n/a} ({} for a failed launch)."""
    n = len(failed)
    failure = Coded(failed.astype("int64"), [False, True])
    texts = [coded(group, f"flop_{p}_not_collected", n, text_value) for p in PRECISIONS]

    def make(row: tuple[Any, ...]) -> dict[str, tuple[str, ...]]:
        if row[0]:
            return {}
        return {p: tuple(t.split(",")) for p, t in zip(PRECISIONS, row[1:], strict=True) if t}

    return shared_rows([failure, *texts], n, make)


_MISSING_NAMES = ("duration", "flop", *TIERS, "sol")


def _missing(
    failed: np.ndarray,
    duration: np.ndarray,
    flop_total: np.ndarray,
    nbytes: Mapping[str, np.ndarray],
    sol: Mapping[str, np.ndarray],
) -> np.ndarray:
    """Per launch, the quantities it lacks (none for a failed launch: its notes say why)."""
    absent = [
        np.isnan(duration),
        np.isnan(flop_total),
        *(np.isnan(nbytes[t]) for t in TIERS),
        np.isnan(sol["sm"]) | np.isnan(sol["memory"]),
    ]
    code = bit_codes([lacks & ~failed for lacks in absent])  # bit i: lacks _MISSING_NAMES[i]
    lacking: np.ndarray = _MISSING_TUPLES[code]  # launches that lack the same counters share one tuple
    return lacking


_MISSING_TUPLES = object_array(  # every combination of lacking quantities, by its bits
    [
        tuple(m for i, m in enumerate(_MISSING_NAMES) if code >> i & 1)
        for code in range(1 << len(_MISSING_NAMES))
    ]
)


def _traffic(
    group: Mapping[str, np.ndarray], nbytes: Mapping[str, np.ndarray], formulas: Mapping[str, Coded]
) -> np.ndarray:
    """Per launch and tier with bytes: which traffic definition, bytes formula (`formulas`, the
    recipe's coded, each a text) and roof formula."""
    n = launch_count(group)
    columns = []
    for t in TIERS:
        columns += [
            Coded((~np.isnan(nbytes[t])).astype("int64"), [False, True]),
            coded(group, f"{t}_traffic", n, text_value),
            replace(formulas[f"{t}_bytes"], missing="nan" if f"{t}_bytes_recipe" in group else "None"),
            coded(group, f"bw_{t}_byte_per_s_recipe", n, text_value),
        ]

    def make(row: tuple[Any, ...]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for i, tier in enumerate(TIERS):
            has_bytes, definition, recipe, roof = row[4 * i : 4 * i + 4]
            if has_bytes and definition is not None:
                entry = {"definition": definition, "recipe": recipe}
                out[tier] = entry if roof is None else {**entry, "roof": roof}
        return out

    return shared_rows(columns, n, make)


def _busiest_pipe(pipes: Mapping[str, np.ndarray], n: int, compute_only: bool = True) -> np.ndarray:
    """Per launch, its busiest arithmetic pipe (any pipe: `compute_only` False) as words
    (`alu pipe 76%`), None without pipe figures."""
    compute = {p: a for p, a in pipes.items() if not (compute_only and p.startswith(NON_COMPUTE_PIPES))}
    out = np.full(n, None, dtype=object)
    if not compute:
        return out
    names = np.array([f"{p} pipe " for p in compute], dtype=object)
    busy, best = row_max([np.where(np.isnan(p), -np.inf, p) for p in compute.values()])
    rows = np.flatnonzero(~np.logical_and.reduce([np.isnan(p) for p in compute.values()]))
    pipe, busy = best[rows], busy[rows]
    first, kind = distinct_numbers([whole_shown(busy)], [pipe])  # the words once per pipe and figure
    out[rows] = (names[pipe[first]] + fixed(busy[first], 0) + "%")[kind]
    return out


def _busiest_tier(achieved_bw: Mapping[str, np.ndarray], roofs: Roofs, has_flop: np.ndarray) -> np.ndarray:
    """Per launch without FLOPs: the tier whose bandwidth it used most, (tier, percent of its roof)."""
    n = len(has_flop)
    out = np.full(n, None, dtype=object)
    tiers = [t for t in achieved_bw if roofs.bandwidth_byte_per_s.get(t, 0) > 0]
    if not tiers:
        return out
    used = [100.0 * achieved_bw[t] / roofs.bandwidth_byte_per_s[t] for t in tiers]
    most, best = row_max([np.where(np.isnan(u), -np.inf, u) for u in used])
    for j in np.flatnonzero(~has_flop & ~np.logical_and.reduce([np.isnan(u) for u in used])).tolist():
        out[j] = (tiers[best[j]], float(most[j]))
    return out
