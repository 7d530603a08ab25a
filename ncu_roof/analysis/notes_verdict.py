"""The notes on a verdict's basis (`verdict_notes`) and on a launch above its roof, for every
launch of one device at once."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ncu_roof.analysis.frame import sentences
from ncu_roof.analysis.model import fixed, is_set, objects
from ncu_roof.analysis.records import VERDICT_WORDS
from ncu_roof.analysis.sol import LATENCY_SOL_PCT
from ncu_roof.base.arrays import equals, object_array
from ncu_roof.base.vocabulary import COMPUTE, Bound, VerdictBasis

if TYPE_CHECKING:
    from ncu_roof.analysis.notes import Adder, NoteInputs


def verdict_notes(x: NoteInputs, ok: np.ndarray, add: Adder) -> None:
    """Why the verdict has the basis it has (latency, SOL, no SOL), and where SOL disagrees."""
    latency = equals(x.v.verdict.bound, Bound.LATENCY)
    sol = equals(x.v.verdict.basis, VerdictBasis.SOL)
    add(ok & latency, lambda rows: _latency(x, rows))
    add(ok & ~latency & sol, lambda rows: _sol_basis(x, rows))
    no_sol = np.isnan(x.sol_pct["sm"]) | np.isnan(x.sol_pct["memory"])
    add(
        ok & ~latency & ~sol & ~equals(x.v.verdict.bound, Bound.UNKNOWN) & no_sol,
        "no SOL percentages (sm__throughput, gpu__compute_memory_throughput): "
        "the latency-bound check (Nsight's 60% rule) was not made",
    )
    sol_latency = equals(x.v.sol.bound, Bound.LATENCY)
    add(ok & x.v.verdict.disagrees & ~latency & ~sol_latency, lambda rows: _disagrees(x, rows))
    add(ok & x.v.verdict.disagrees & sol_latency, lambda rows: _latency_cross_check(x, rows))


def _verdict_words(binding: np.ndarray, pct: np.ndarray) -> np.ndarray:
    """`compute-bound (42% of roof)`, `memory-bound at dram`, `nothing (…)` per launch."""
    memory = f"{VERDICT_WORDS[Bound.MEMORY]} at " + binding.astype(str).astype(object)
    words = np.where(binding == COMPUTE, VERDICT_WORDS[Bound.COMPUTE], memory).astype(object)
    known = ~np.isnan(pct)
    words[known] = words[known] + " (" + fixed(pct[known], 0) + "% of roof)"
    return np.where(is_set(binding), words, "nothing (no roofs or counters)")


def _latency(x: NoteInputs, rows: np.ndarray) -> pl.Series:
    """A latency note per launch, made once per distinct combination of what it shows: SM and memory
    % of peak, % of the roof, a small grid's waves per SM (else NaN), the binding roof (or None)."""
    small_grid_waves_per_sm = np.where(x.waves[rows] < 1, x.waves[rows], np.nan)
    binding = np.where(x.v.supported[rows], x.v.arrays.binding[rows], objects(None, len(rows)))
    shown = [np.rint(x.sol_pct["sm"][rows]), np.rint(x.sol_pct["memory"][rows]), np.rint(x.pct[rows])]
    return per_distinct(
        [*shown, small_grid_waves_per_sm],
        binding,
        lambda first: _latency_texts(x, rows[first], small_grid_waves_per_sm[first], binding[first]),
    )


def per_distinct(
    numbers: list[np.ndarray], texts: np.ndarray, make: Callable[[np.ndarray], pl.Series]
) -> pl.Series:
    """`make(rows)` of one row of each distinct combination of numbers (bit for bit: -0.0
    is not 0.0, their texts differ; NaN is one value) and texts, spread to every row."""
    keys = [np.where(np.isnan(a), np.nan, a).view(np.int64) for a in numbers]
    distinct = pl.struct(pl.all()).rank("dense").cast(pl.Int64) - 1
    combination = pl.DataFrame([*keys, texts.tolist()]).select(distinct).to_series().to_numpy()
    first = np.empty(combination.max() + 1, dtype=np.int64)  # a row of each (any: they show alike)
    first[combination] = np.arange(len(combination))
    return make(first).gather(combination)


def _latency_texts(x: NoteInputs, rows: np.ndarray, waves: np.ndarray, binding: np.ndarray) -> pl.Series:
    small = ~np.isnan(waves)
    grid = np.full(len(small), "", dtype=object)
    grid[small] = "; small grid (" + fixed(waves[small], 2) + " waves per SM)"
    said = f"latency-bound: SM {{}}% and memory {{}}% of peak, both under {LATENCY_SOL_PCT:.0f}%"
    pcts = _sol_pcts(x, rows, said, LATENCY_SOL_PCT - 1)
    return sentences("{}{}; the roofline alone says {}", pcts, grid, _verdict_words(binding, x.pct[rows]))


def _unit_words(units: np.ndarray, prefix: str) -> np.ndarray:
    """`prefix + unit` where the launch names its busiest memory unit, else ""."""
    out, named = np.full(len(units), "", dtype=object), units.astype(bool)
    out[named] = prefix + units[named].astype(str).astype(object)
    return out


def _sol_pcts(
    x: NoteInputs, rows: np.ndarray, template: str = "SM {}%, memory {}%", below: float = math.inf
) -> pl.Series:
    """`SM 62%, memory 31%` per launch, each shown no higher than `below` (under the 60% latency
    threshold, 59.6% reads 59%: never "60%, both under 60%")."""
    return sentences(template, *(fixed(np.minimum(x.sol_pct[u][rows], below), 0) for u in ("sm", "memory")))


def _sol_basis(x: NoteInputs, rows: np.ndarray) -> pl.Series:
    why = np.where(
        is_set(x.v.arrays.binding[rows]),
        "no floating-point or tensor work was counted and no pipe utilisation was collected, so "
        "the roofline cannot see this kernel's (integer) work",
        "the roofline needs FLOP and byte counters with roofs",
    ).astype(object)
    units = _unit_words(x.v.sol.unit[rows], ", busiest memory unit ")
    return sentences("verdict from Speed of Light (Nsight's rule): {}{}; {}", _sol_pcts(x, rows), units, why)


def _disagrees(x: NoteInputs, rows: np.ndarray) -> pl.Series:
    bound = object_array([b.value for b in x.v.sol.bound[rows].tolist()])
    why = np.where(
        equals(x.v.arrays.binding[rows], COMPUTE),
        "the memory unit is busier than the bytes at their peak explain (uncoalesced access, bank "
        "conflicts, or traffic of a counter not on the roofline)",
        "the SM is busier than the FLOPs at their peak explain — the instruction mix (integer, "
        "address, conversion work), not the FLOP roof, keeps it busy",
    ).astype(object)
    roofline = _verdict_words(x.v.arrays.binding[rows], x.pct[rows])
    return sentences(
        "Speed of Light disagrees: {} says {}-bound{}; the roofline says {}: {}",
        *(_sol_pcts(x, rows), bound, _unit_words(x.v.sol.unit[rows], " at "), roofline, why),
    )


def _latency_cross_check(x: NoteInputs, rows: np.ndarray) -> pl.Series:
    """The roofline decided; SOL calls the launch latency-bound: what that means (made as `_latency`'s)."""
    shown = [np.rint(x.sol_pct["sm"][rows]), np.rint(x.sol_pct["memory"][rows]), np.rint(x.pct[rows])]
    return per_distinct(
        [*shown, x.waves[rows]], x.v.arrays.binding[rows], lambda first: _cross_check_texts(x, rows[first])
    )


def _cross_check_texts(x: NoteInputs, rows: np.ndarray) -> pl.Series:
    small = x.waves[rows] < 1
    why = np.where(
        small,
        "too few blocks to fill the GPU (" + fixed(x.waves[rows], 2) + " waves per SM): a larger grid",
        "too few warps in flight or dependent accesses hide no latency: more parallelism "
        "(occupancy, independent work per thread)",
    ).astype(object)
    said = f"SM {{}}%, memory {{}}%, both under {LATENCY_SOL_PCT:.0f}%"
    pcts = _sol_pcts(x, rows, said, LATENCY_SOL_PCT - 1)
    return sentences(
        "Speed of Light says latency-bound: {}; the roofline says {}: no unit is near its peak — {} "
        "brings it toward that roof, which then binds",
        *(pcts, _verdict_words(x.v.arrays.binding[rows], x.pct[rows]), why),
    )


def above_roof(x: NoteInputs, rows: np.ndarray) -> pl.Series:
    return sentences(
        "above its roof ({}% of the {} cap): inconsistent data — roofs and counters disagree (clock, "
        "replay or recipe); check the roofs' source",
        *(fixed(x.pct[rows], 0), x.v.arrays.binding[rows].astype(str).astype(object)),
    )
