"""One device's launches as the launch frame: every `Kernel` field from the normalized launches and
the verdict arrays, with the notes."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from ncu_roof.analysis.frame import launch_frame, numbers, struct, texts, where
from ncu_roof.analysis.model import (
    InstructionArrays,
    bit_codes,
    busiest,
    intensity_array,
    is_set,
    objects,
    per_kernel,
)
from ncu_roof.analysis.notes import NoteInputs, failure_notes, launch_notes
from ncu_roof.analysis.records import Device
from ncu_roof.analysis.sol import busiest_unit_arrays, headroom_array
from ncu_roof.analysis.verdicts import Verdicts, unfailed
from ncu_roof.base.vocabulary import PRECISIONS, SOL_KEYS, TIERS
from ncu_roof.gpus.roofs import launch_count
from ncu_roof.recipe import TENSOR_PATH_PREFIX, is_integer_path

_RECIPE_KEYS = ("duration_s", *(f"flop_{p}" for p in PRECISIONS), *(f"{t}_bytes" for t in TIERS), "warp_inst")
NAN = float("nan")


def device_frame(
    ident: Mapping[str, np.ndarray],
    labels: pl.DataFrame,
    group: Mapping[str, np.ndarray],
    v: Verdicts,
    device: Device,
    input_index: int,
    total_s: float,
    with_notes: bool = True,
) -> pl.DataFrame:
    """Every `Kernel` field of one device's launches (identity and normalized columns), as a frame;
    `with_notes` False: only those of a failed launch (`failure_notes`), a fifth of the analysis."""
    n, failed = launch_count(group), v.failed

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
    formulas = {key: formula_texts(group, f"{key}_recipe", n) for key in _RECIPE_KEYS}
    recipe = {k: texts(t) for k, t in formulas.items()}
    ceiling = np.where(v.supported, v.ceiling, objects(None, n))
    ops_total = measured("ops_total")
    paths = {c.removeprefix(TENSOR_PATH_PREFIX): group[c] for c in group if c.startswith(TENSOR_PATH_PREFIX)}
    # integer tensor operations are a lower bound where some integer path read n/a
    partial = np.logical_or.reduce(
        [np.isnan(a) for p, a in paths.items() if is_integer_path(p)], initial=False
    )
    # per precision, the FLOP terms that read n/a (`a,b`), None where none did or the launch failed
    not_collected = {p: formula_texts(group, f"flop_{p}_not_collected", n) for p in PRECISIONS}
    for terms in not_collected.values():
        terms[failed | ~terms.astype(bool)] = None
    lower = np.asarray(group["flop_total_is_lower_bound"], dtype=bool) & ~np.isnan(flop_total)
    sol_pair = np.where(np.isnan(sol["sm"]), NAN, sol["memory"])  # SOL is SM and memory
    missing = _missing(failed, {"duration": duration, "flop": flop_total, **nbytes, "sol": sol_pair})
    values: dict[str, np.ndarray | pl.Series] = {
        **{c: ident[c] for c in ("id", "run")},
        **{c: labels.get_column(c) for c in ("name", "grid", "block", "nvtx")},
        "input": np.full(n, input_index, dtype="int64"),
        "device": np.full(n, device.index, dtype="int64"),
        "duration_s": duration,
        "time_share": time_share,
        "achieved_flop_per_s": achieved_flop,
        "attainable_flop_per_s": v.arrays.attainable_flop_per_s,
        "pct_of_roof": pct,
        "compute_ceiling_pct": np.where(is_set(ceiling), v.ceiling_pct, NAN),
        "headroom_sol_s": headroom_array(duration, busiest_pct),
        "sol_busiest_unit": busiest_unit,
        "small_grid": v.sol.small_grid.astype(bool),
        "flop_total_is_lower_bound": lower,
        "ops_total_is_lower_bound": ~failed & ~np.isnan(ops_total) & partial,
        "binding": v.arrays.binding,
        "compute_precision": v.precisions,
        "bound": v.verdict.bound,
        "verdict_basis": v.verdict.basis,
        "sol_bound": v.sol.bound,
        "sol_unit": v.sol.unit,
        "compute_ceiling": ceiling,
    }
    if not with_notes:
        notes = failure_notes(v, ident["input_notes"])
    else:
        # whether the tensor FLOPs are tensor-pipe instructions x 512 (their recipe says so)
        by_pipe = recipe["flop_tensor"].str.ends_with("*512").fill_null(False).to_numpy()
        # per launch without FLOPs, the tier whose bandwidth it used most, and its percent of that roof:
        # the launch's own roof (its counter's peak at its clocks), never the device's median one
        tier_pct, tier = busiest({t: np.where(np.isfinite(p), p, NAN) for t, p in of_bandwidth.items()}, n)
        notes = launch_notes(
            NoteInputs(
                v=v,
                missing=missing,
                no_compute_roofs=not device.roofs.compute_flop_per_s,
                recipe=formulas,
                not_collected=not_collected,
                flop=flop,
                flop_total_is_lower_bound=lower,
                tensor_pipe_pct=measured("tensor_pipe_pct"),
                integer_tensor_ops=~np.isnan(ops_total) & (ops_total != 0),
                pct=pct,
                waves=np.asarray(group["waves_per_sm"], dtype="float64"),
                busiest_tier=np.where(np.isnan(flop_total), tier, objects(None, n)),
                busiest_tier_pct=tier_pct,
                tensor_by_pipe=by_pipe & (np.nan_to_num(flop["tensor"]) > 0),
                input_notes=ident["input_notes"],
                shared_wavefronts_per_request=measured("shared_wavefronts_per_request"),
                shared_bank_conflict_pct=measured("shared_bank_conflict_pct"),
                sol_pct=sol,
                pct_of_bandwidth=of_bandwidth,
                ceiling=ceiling,
            )
        )
    maps = {
        "flop": {**flop, "total": flop_total},
        "bytes": nbytes,
        "intensity_flop_per_byte": intensity,
        "achieved_byte_per_s": achieved_bw,
        "sol_pct": sol,
        "pct_of_bandwidth": of_bandwidth,
        "cap_flop_per_s": dict(v.arrays.cap_flop_per_s),
        "pipe_pct": v.pipe_pct,
    }
    records = {
        **{f: struct({k: numbers(a) for k, a in m.items()}, n) for f, m in maps.items()},
        "notes": notes,
        "missing": missing,
        "recipe": struct(recipe, n),
        "traffic": _traffic(group, nbytes, recipe),
        "not_collected": struct(
            {p: where(is_set(t), texts(t).str.split(",")) for p, t in not_collected.items()}, n
        ),
        "tensor_paths": _tensor_paths(group, paths, failed),
        "ops_total": numbers(ops_total),
        "instruction_roofline": _instruction_roofline(
            v.instructions, measured("warp_inst"), v.issue_source, recipe["warp_inst"]
        ),
    }
    return launch_frame({**values, **records})


def formula_texts(group: Mapping[str, np.ndarray], column: str, n: int) -> np.ndarray:
    """Texts (formulas, traffic definitions) as an object array, None where there is none (NaN, no column)."""
    values, missing = group.get(column), objects(None, n)
    return missing if values is None else np.where(values == values, values, missing)  # NaN ≠ NaN


def _missing(failed: np.ndarray, quantities: Mapping[str, np.ndarray]) -> pl.Series:
    """Per launch, the quantities it lacks (NaN; none for a failed launch: its notes say why): the
    combination of them its bits say (bit i: the i-th quantity), each combination made once."""
    names = list(quantities)
    codes, place = np.unique(
        bit_codes([np.isnan(v) & ~failed for v in quantities.values()]), return_inverse=True
    )
    lists = [[q for i, q in enumerate(names) if code >> i & 1] for code in codes.tolist()]
    return pl.Series("missing", lists, dtype=pl.List(pl.String)).gather(place)


def _traffic(
    group: Mapping[str, np.ndarray], nbytes: Mapping[str, np.ndarray], recipe: Mapping[str, pl.Series]
) -> pl.Series:
    """Per launch and tier with traffic: its traffic definition and the formulas of its bytes and roof."""
    n = launch_count(group)
    tiers = {}
    for t in TIERS:
        definition = formula_texts(group, f"{t}_traffic", n)
        no_formula = "nan" if f"{t}_bytes_recipe" in group else "None"
        entry = {
            "definition": texts(definition),
            "recipe": recipe[f"{t}_bytes"].fill_null(no_formula),
            "roof": texts(formula_texts(group, f"bw_{t}_byte_per_s_recipe", n)),
        }
        tiers[t] = where(~np.isnan(nbytes[t]) & is_set(definition), struct(entry, n))
    return struct(tiers, n)


def _tensor_paths(
    group: Mapping[str, np.ndarray], counts: Mapping[str, np.ndarray], failed: np.ndarray
) -> pl.Series:
    """Per launch {path: {unit, count, peak_per_s}} of each path in `counts` (a failed launch's: all null)."""
    n = len(failed)
    records: dict[str, pl.Series] = {}
    for path, count in counts.items():
        peak = group.get(f"peak_{TENSOR_PATH_PREFIX}{path}_per_s", np.full(n, np.nan))
        unit = pl.Series(["OP" if is_integer_path(path) else "FLOP"]).new_from_index(0, n)
        record = struct({"unit": unit, "count": numbers(count), "peak_per_s": numbers(peak)}, n)
        records[path] = where(~failed, record)
    return struct(records, n)


def _instruction_roofline(
    arrays: InstructionArrays, warp_inst: np.ndarray, source: np.ndarray, recipe: pl.Series
) -> pl.Series:
    """Ding & Williams' instruction roofline per launch (null: no warp instructions; tier maps: finite)."""
    n = len(warp_inst)

    def finite_map(values: Mapping[str, np.ndarray]) -> pl.Series:
        return struct({k: numbers(np.where(np.isfinite(a), a, np.nan)) for k, a in values.items()}, n)

    record = struct(
        {
            "warp_inst": numbers(warp_inst),
            "warp_inst_per_s": numbers(arrays.warp_inst_per_s),
            "issue_peak_warp_inst_per_s": numbers(arrays.issue_peak_warp_inst_per_s),
            "issue_peak_source": texts(source),
            "intensity_warp_inst_per_transaction": finite_map(arrays.intensity_warp_inst_per_transaction),
            "transaction_peak_per_s": finite_map(arrays.transaction_peak_per_s),
            "recipe": recipe,
        },
        n,
    )
    return where(~np.isnan(warp_inst), record)
