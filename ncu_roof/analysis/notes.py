"""What a kernel engineer needs to know to trust, or distrust, one verdict: the notes of every
launch of one device at once.

Each rule is a mask over the launches and a sentence made only for the launches it selects; the
rules run in the order the notes are read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from ncu_roof.analysis.columns import distinct_numbers, distinct_rows, shared_texts
from ncu_roof.analysis.model import bit_codes, fixed, is_set, whole_shown
from ncu_roof.analysis.sol import LATENCY_SOL_PCT
from ncu_roof.base.codes import equals, factorize, object_array, truthy
from ncu_roof.base.vocabulary import COMPUTE, PRECISIONS, TIER_NAMES, TIERS, Bound, VerdictBasis
from ncu_roof.recipe import FLOP_OPS
from ncu_roof.recipe.tiers import LOWER_BOUND

Made = list[tuple[np.ndarray, "str | np.ndarray | list[list[str]]"]]  # (rows, their texts) per rule
Texts = Callable[[np.ndarray], "str | np.ndarray | list[list[str]]"]
Adder = Callable[[np.ndarray, Texts], None]


@dataclass(frozen=True)
class NoteInputs:
    """Per launch (arrays of one length): what the notes are made from."""

    failed: np.ndarray  # bool: duration 0 or nothing collected
    collection_failed: np.ndarray  # bool: every counter n/a
    missing: np.ndarray  # object: tuple of missing quantities
    no_compute_roofs: bool  # the device has no compute roofs at all
    unroofed: Mapping[str, np.ndarray]  # tier → bool: traffic but no roof of that counter
    recipe: np.ndarray  # object: {quantity: its formula} per launch
    not_collected: np.ndarray  # object: {precision: terms read n/a}
    flop: Mapping[str, np.ndarray]  # per precision, NaN when not collected
    flop_total_is_lower_bound: np.ndarray  # bool
    tensor_pipe_pct: np.ndarray
    integer_tensor_ops: np.ndarray  # bool: integer tensor operations were counted
    basis: np.ndarray  # object: VerdictBasis
    bound: np.ndarray  # object: Bound
    sol_bound: np.ndarray  # object: Bound (SOL alone)
    sol_unit: np.ndarray  # object: str | None
    disagrees: np.ndarray  # bool
    supported: np.ndarray  # bool: the roofline could be placed
    binding: np.ndarray  # object: str | None
    pct: np.ndarray  # percent of roof, NaN when none
    sol_sm_pct: np.ndarray
    sol_memory_pct: np.ndarray
    waves: np.ndarray
    busiest_pipe: np.ndarray  # object: `alu pipe 76%` or None
    busiest_issue_pipe: np.ndarray  # object: the same of every pipe, load/store ones too
    busiest_tier: np.ndarray  # object: (tier, percent of its bandwidth) or None, only without FLOPs
    tensor_by_pipe: np.ndarray  # bool: tensor FLOPs from pipe instructions x 512
    sol_pct: Mapping[str, np.ndarray]  # per SOL unit, its throughput % (NaN: not in the input)
    pct_of_bandwidth: Mapping[str, np.ndarray]  # per tier, achieved bytes/s as % of its roof
    ceiling: np.ndarray  # object: the compute ceiling ("fp32", "tensor:bf16", "pipe:alu") or None


# the notes of a failed collection (the summary's main reason looks for them)
COLLECTION_FAILED = "collection failed: every counter of this launch reads n/a; ncu measured nothing"
ZERO_DURATION = "duration is 0: this launch's collection failed; its counters are not measurements"


def launch_notes(x: NoteInputs) -> list[tuple[str, ...]]:
    """The notes of every launch, in reading order.

    Each rule makes its sentences for the rows its mask selects at once: one text for all of
    them, an object array of texts built column-wise (numbers formatted per column, joined by
    elementwise `+`), or a list of sentences per row for the few rules that can say several."""
    n = len(x.failed)
    made: Made = []

    def add(mask: np.ndarray, text: Texts) -> None:
        rows = np.flatnonzero(mask)
        if len(rows):
            made.append((rows, text(rows)))

    add(x.collection_failed, lambda _: COLLECTION_FAILED)
    add(x.failed & ~x.collection_failed, lambda _: ZERO_DURATION)
    ok = ~x.failed
    missing = x.missing
    add(
        ok & truthy(missing),
        lambda rows: object_array(
            shared_texts(missing[rows].tolist(), lambda m: "missing counters: " + ", ".join(m))
        ),
    )
    if x.no_compute_roofs:
        add(
            ok,
            lambda _: (
                "no compute roofs for this device (the input names no GPU, and no one built-in GPU "
                "matches the compute capability and SM count it holds): pass --gpu KEY "
                "(`ncu-roof gpus` lists them) or --roofs FILE"
            ),
        )
    unroofed = np.column_stack([x.unroofed[t] for t in x.unroofed]) if x.unroofed else np.zeros((n, 0), bool)
    add(ok & unroofed.any(axis=1), lambda rows: [_unroofed(x, j) for j in rows.tolist()])
    not_collected = x.not_collected
    add(
        ok & truthy(not_collected),
        lambda rows: [_not_collected(not_collected[j]) for j in rows.tolist()],
    )
    add(ok & x.flop_total_is_lower_bound, lambda rows: _lower_bound(x, rows))
    partial_bytes = object_array(shared_texts(x.recipe.tolist(), _partial_bytes))
    add(ok & is_set(partial_bytes), lambda rows: partial_bytes[rows])
    no_tensor = np.isnan(x.flop["tensor"])
    tensor_busy = ~np.isnan(x.tensor_pipe_pct) & (x.tensor_pipe_pct != 0)
    add(
        ok & no_tensor & tensor_busy & ~x.integer_tensor_ops,
        lambda rows: (
            "tensor pipe " + fixed(x.tensor_pipe_pct[rows], 0) + "% busy; tensor FLOPs not counted — collect "
            "sm__ops_path_tensor_* (ncu --metrics regex:sm__ops_path_tensor_.*)"
        ),
    )
    basis_none = equals(x.basis, VerdictBasis.NONE)
    busiest = x.busiest_pipe
    add(
        ok & basis_none & is_set(busiest),
        lambda rows: (
            "busiest pipe: "
            + busiest[rows]
            + "; without memory traffic or SOL percentages no verdict can be made"
        ),
    )
    tiers = x.busiest_tier
    add(
        ok & basis_none & is_set(tiers),
        lambda rows: object_array(
            [
                f"no FLOP counters, so no roof can be said to bind; its busiest tier, {tier}, ran at "
                f"{pct:.0f}% of its bandwidth"
                for tier, pct in tiers[rows].tolist()
            ]
        ),
    )
    _verdict_notes(x, ok, add)
    _busy_notes(x, ok, add)
    add(ok & (x.pct > 100.0), lambda rows: _above_roof(x, rows))
    add(
        ok & x.tensor_by_pipe,
        lambda _: "tensor FLOPs = tensor-pipe instructions x 512 (V100 HMMA shape): approximate here",
    )
    # a latency verdict, or SOL's latency cross-check, already names a grid under one wave
    latency = equals(x.bound, Bound.LATENCY) | (x.disagrees & equals(x.sol_bound, Bound.LATENCY))
    add(
        ok & (x.waves < 1) & ~latency,
        lambda rows: (
            "less than one wave ("
            + fixed(x.waves[rows], 2)
            + " per SM): counters of small launches are noisy"
        ),
    )
    return _per_launch(made, n)


def _per_launch(made: Made, n: int) -> list[tuple[str, ...]]:
    """The rules' sentences gathered per launch, rule order kept: each rule's texts coded, and one
    tuple made per distinct combination of them (launches alike share it)."""
    codes: list[np.ndarray] = []
    texts: list[list[tuple[str, ...]]] = []
    for rows, made_texts in made:
        column = np.full(n, -1, dtype="int64")
        if isinstance(made_texts, str):
            column[rows] = 0
            texts.append([(made_texts,)])
        elif isinstance(made_texts, np.ndarray):  # a sentence per row
            column[rows], distinct = factorize(made_texts)
            texts.append([(text,) for text in distinct])
        else:  # several sentences per row
            column[rows], distinct = factorize([tuple(several) for several in made_texts])
            texts.append(distinct)
        codes.append(column)
    if not codes:
        return [()] * n
    first, inverse = distinct_rows(codes)
    combined = np.empty(len(first), dtype=object)
    combined[:] = [
        tuple(text for rule, code in enumerate(row) if code >= 0 for text in texts[rule][code])
        for row in np.column_stack(codes)[first].tolist()
    ]
    out: list[tuple[str, ...]] = combined[inverse].tolist()
    return out


def _verdict_notes(x: NoteInputs, ok: np.ndarray, add: Adder) -> None:
    """Why the verdict has the basis it has (latency, SOL, no SOL), and where SOL disagrees."""
    latency = equals(x.bound, Bound.LATENCY)
    sol = equals(x.basis, VerdictBasis.SOL)
    add(ok & latency, lambda rows: _latency(x, rows))
    add(ok & ~latency & sol, lambda rows: _sol_basis(x, rows))
    no_sol = np.isnan(x.sol_sm_pct) | np.isnan(x.sol_memory_pct)
    add(
        ok & ~latency & ~sol & ~equals(x.bound, Bound.UNKNOWN) & no_sol,
        lambda _: (
            "no SOL percentages (sm__throughput, gpu__compute_memory_throughput): "
            "the latency-bound check (Nsight's 60% rule) was not made"
        ),
    )
    sol_latency = equals(x.sol_bound, Bound.LATENCY)
    add(ok & x.disagrees & ~latency & ~sol_latency, lambda rows: _disagrees(x, rows))
    add(ok & x.disagrees & sol_latency, lambda rows: _latency_cross_check(x, rows))


# A unit's throughput % and its bytes-based (or FLOP-based) % of roof "differ a lot" when the unit
# is at least half busy and at least twice as busy as the bytes (FLOPs) it moves account for.
BUSY_SOL_PCT = 50.0
BUSY_RATIO = 2.0
_TIER_WHY = {
    "l1": "wavefronts per byte than ideal — uncoalesced access or bank conflicts (shared-memory "
    "accesses count in its throughput too)",
    "l2": "L2 work per byte than ideal — scattered or partial-sector access, or atomics",
    "dram": "DRAM cycles per byte than its peak allows — scattered access (row switches)",
}
_WORK_UNITS = {"fp64": "FP64", "fp32": "FMA", "fp16": "FP16", "tensor": "tensor-core"}


def _busy_notes(x: NoteInputs, ok: np.ndarray, add: Adder) -> None:
    """Where a unit's Speed-of-Light throughput is far above what its bytes (or FLOPs) use of its
    roof: the roofline's saving needs another access pattern or instruction mix."""
    for tier, why in _TIER_WHY.items():
        busy, moved = x.sol_pct.get(tier), x.pct_of_bandwidth.get(tier)
        if busy is None or moved is None:
            continue
        mask = ok & _far_apart(busy, moved)
        if tier == "l2":  # Nsight's L2 measures count only what L2 returns to the SMs
            mask[mask] = shared_texts(x.recipe[mask].tolist(), _counts_all_l2)
        add(mask, partial(_busy_tier, tier, why, busy, moved))
    sm = x.sol_pct.get("sm")
    if sm is None:
        return
    codes, ceilings = factorize(x.ceiling, missing_is_value=True)  # each distinct ceiling once
    precision = object_array([_work_unit(c) for c in ceilings])[codes]
    units = object_array([_WORK_UNITS.get(str(c).partition(":")[0]) for c in ceilings])[codes]
    compute = equals(x.binding, COMPUTE) & is_set(precision)
    add(
        ok & compute & _far_apart(sm, x.pct),
        partial(_busy_sm, sm, x.busiest_issue_pipe, x.pct, precision, units),
    )


def _busy_sm(
    sm: np.ndarray,
    pipe: np.ndarray,
    pct: np.ndarray,
    precision: np.ndarray,
    units: np.ndarray,
    rows: np.ndarray,
) -> np.ndarray:
    """`SM 70% busy (busiest pipe: lsu pipe 70%) at 19% of the fp32 roof: the instruction mix, not
    the FMA units, binds` of these launches."""
    named = is_set(pipe[rows])
    busiest = np.full(len(rows), "", dtype=object)
    busiest[named] = " (busiest pipe: " + pipe[rows][named] + ")"
    out: np.ndarray = (
        "SM "
        + fixed(sm[rows], 0)
        + "% busy"
        + busiest
        + " at "
        + fixed(pct[rows], 0)
        + "% of the "
        + precision[rows]
        + " roof: the instruction mix, not the "
        + units[rows]
        + " units, binds"
    )
    return out


def _busy_tier(tier: str, why: str, busy: np.ndarray, moved: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`L1 is 97% busy moving 10% of its byte peak: about 10x more …` of these launches."""
    out: np.ndarray = (
        f"{TIER_NAMES[tier]} is "
        + fixed(busy[rows], 0)
        + "% busy moving "
        + np.where(moved[rows] < 9.95, fixed(moved[rows], 1), fixed(moved[rows], 0))  # not "0%"
        + "% of its byte peak: about "
        + fixed(busy[rows] / moved[rows], 0)
        + f"x more {why}"
    )
    return out


def _counts_all_l2(recipe: Mapping[str, str]) -> bool:
    """Whether a launch's L2 bytes count every L2 access (lts__t_*), reads and writes."""
    return "lts__t_" in recipe.get("l2_bytes", "")


def _far_apart(busy: np.ndarray, used: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        far: np.ndarray = (busy >= BUSY_SOL_PCT) & (used > 0) & (busy >= BUSY_RATIO * used)
    return far


def _work_unit(ceiling: str | None) -> str | None:
    """The precision a compute ceiling names ("fp32", "tensor:bf16"), None for a pipe's."""
    if ceiling is None or ceiling.partition(":")[0] not in _WORK_UNITS:
        return None
    return ceiling


def _not_collected(not_collected: Mapping[str, tuple[str, ...]]) -> list[str]:
    out = []
    for precision, terms in not_collected.items():
        if precision == "tensor":
            out.append(
                f"tensor: {', '.join(terms)} read n/a; the tensor FLOPs are the sum of the paths measured"
            )
        else:
            collected = [t for t in FLOP_OPS[precision] if t not in terms]
            out.append(
                f"{precision} FLOPs from {'+'.join(collected)} alone ({', '.join(terms)} not collected): "
                "a lower bound"
            )
    return out


def _unroofed(x: NoteInputs, j: int) -> list[str]:
    return [
        f"no roofline verdict: {tier} has traffic ({x.recipe[j].get(f'{tier}_bytes', '')}) but no roof "
        f"of that counter, and may be what binds; give its bandwidth with --roofs FILE "
        f"([bandwidth] {tier} = ...)"
        for tier, unroofed in x.unroofed.items()
        if unroofed[j]
    ]


def _partial_bytes(recipe: Mapping[str, str]) -> str | None:
    """`DRAM bytes from counter:dram__bytes_read.sum alone (…): a lower bound`, or None."""
    labels = [(t, recipe.get(f"{t}_bytes", "")) for t in TIERS]
    partial = [
        f"{TIER_NAMES[t]} bytes from {formula} alone ({why}"
        for t, label in labels
        if LOWER_BOUND in label
        for formula, _, why in [label.partition(" (")]
    ]
    return "; ".join(partial) or None


def _lower_bound(x: NoteInputs, rows: np.ndarray) -> np.ndarray:
    codes = bit_codes([np.isnan(x.flop[p][rows]) for p in PRECISIONS])
    keys = list(zip(codes.tolist(), map(id, x.not_collected[rows].tolist()), strict=True))
    partial = dict(zip(keys, x.not_collected[rows].tolist(), strict=True))

    def make(key: tuple[int, int]) -> str:
        words = [f"{p} not collected" for i, p in enumerate(PRECISIONS) if key[0] >> i & 1]
        words += [f"{p} partial" for p in partial[key]]
        return f"FLOP total is a lower bound ({', '.join(words)})"

    return object_array(shared_texts(keys, make))


def _verdict_words(binding: np.ndarray, pct: np.ndarray) -> np.ndarray:
    """`compute-bound (42% of roof)`, `memory-bound at dram`, `nothing (…)` per launch."""
    memory = "memory-bound at " + binding.astype(str).astype(object)
    where = np.where(binding == COMPUTE, "compute-bound", memory).astype(object)
    known = ~np.isnan(pct)
    words = where.copy()
    words[known] = where[known] + " (" + fixed(pct[known], 0) + "% of roof)"
    out: np.ndarray = np.where(is_set(binding), words, "nothing (no roofs or counters)")
    return out


def _pct(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return fixed(values[rows], 0)


def _latency(x: NoteInputs, rows: np.ndarray) -> np.ndarray:
    """Made once per distinct combination of what it shows (the launches of one kernel share it)."""
    sm_pct, memory_pct, roof_pct, small_grid_waves_per_sm, binding = _latency_inputs(x, rows)
    first, inverse = distinct_numbers(
        [whole_shown(sm_pct), whole_shown(memory_pct), whole_shown(roof_pct), small_grid_waves_per_sm],
        [factorize(binding, missing_is_value=True)[0]],
    )
    made = _latency_texts(
        sm_pct[first], memory_pct[first], roof_pct[first], small_grid_waves_per_sm[first], binding[first]
    )
    out: np.ndarray = made[inverse]
    return out


def _latency_inputs(x: NoteInputs, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """What a latency note shows of each launch: SM and memory % of peak, % of the roof, the waves
    per SM of a small grid (NaN for any other), the roof that binds (None where the roofline could
    not be placed)."""
    waves_per_sm = x.waves[rows]
    small_grid_waves_per_sm = np.where(waves_per_sm < 1, waves_per_sm, np.nan)
    binding = x.binding[rows].copy()
    binding[~x.supported[rows]] = None
    return x.sol_sm_pct[rows], x.sol_memory_pct[rows], x.pct[rows], small_grid_waves_per_sm, binding


def _latency_texts(
    sm_pct: np.ndarray,
    memory_pct: np.ndarray,
    roof_pct: np.ndarray,
    small_grid_waves_per_sm: np.ndarray,
    binding: np.ndarray,
) -> np.ndarray:
    small = ~np.isnan(small_grid_waves_per_sm)
    grid = np.full(len(small), "", dtype=object)
    grid[small] = "; small grid (" + fixed(small_grid_waves_per_sm[small], 2) + " waves per SM)"
    out: np.ndarray = (
        "latency-bound: SM "
        + fixed(sm_pct, 0)
        + "% and memory "
        + fixed(memory_pct, 0)
        + f"% of peak, both under {LATENCY_SOL_PCT:.0f}%"
        + grid
        + "; the roofline alone says "
        + _verdict_words(binding, roof_pct)
    )
    return out


def _unit_words(units: np.ndarray, prefix: str) -> np.ndarray:
    """`prefix + unit` where the launch names its busiest memory unit, else ""."""
    out = np.full(len(units), "", dtype=object)
    named = np.array([bool(u) for u in units.tolist()], dtype=bool)
    out[named] = prefix + units[named].astype(str).astype(object)
    return out


def _sol_pcts(x: NoteInputs, rows: np.ndarray) -> np.ndarray:
    """`SM 62%, memory 31%` per launch."""
    out: np.ndarray = "SM " + _pct(x.sol_sm_pct, rows) + "%, memory " + _pct(x.sol_memory_pct, rows) + "%"
    return out


def _sol_basis(x: NoteInputs, rows: np.ndarray) -> np.ndarray:
    why = np.where(
        is_set(x.binding[rows]),
        "no floating-point or tensor work was counted and no pipe utilisation was collected, so "
        "the roofline cannot see this kernel's (integer) work",
        "the roofline needs FLOP and byte counters with roofs",
    ).astype(object)
    out: np.ndarray = (
        "verdict from Speed of Light (Nsight's rule): "
        + _sol_pcts(x, rows)
        + _unit_words(x.sol_unit[rows], ", busiest memory unit ")
        + "; "
        + why
    )
    return out


def _disagrees(x: NoteInputs, rows: np.ndarray) -> np.ndarray:
    bound = object_array([b.value for b in x.sol_bound[rows].tolist()])
    out: np.ndarray = (
        "Speed of Light disagrees: "
        + _sol_pcts(x, rows)
        + " says "
        + bound
        + "-bound"
        + _unit_words(x.sol_unit[rows], " at ")
        + "; the roofline says "
        + _verdict_words(x.binding[rows], x.pct[rows])
        + np.where(
            equals(x.binding[rows], COMPUTE),
            ": the memory unit is busier than the bytes at their peak explain (uncoalesced access, "
            "bank conflicts, or traffic of a counter not on the roofline)",
            ": the SM is busier than the FLOPs at their peak explain — the instruction mix "
            "(integer, address, conversion work), not the FLOP roof, keeps it busy",
        ).astype(object)
    )
    return out


def _latency_cross_check(x: NoteInputs, rows: np.ndarray) -> np.ndarray:
    """The roofline decided; Speed of Light calls the launch latency-bound: what that means."""
    small = x.waves[rows] < 1
    why = np.where(
        small,
        "too few blocks to fill the GPU (" + fixed(x.waves[rows], 2) + " waves per SM): a larger grid",
        "too few warps in flight or dependent accesses hide no latency: more parallelism "
        "(occupancy, independent work per thread)",
    ).astype(object)
    out: np.ndarray = (
        "Speed of Light says latency-bound: "
        + _sol_pcts(x, rows)
        + f", both under {LATENCY_SOL_PCT:.0f}%; the roofline says "
        + _verdict_words(x.binding[rows], x.pct[rows])
        + ": no unit is near its peak — "
        + why
        + " brings it toward that roof, which then binds"
    )
    return out


def _above_roof(x: NoteInputs, rows: np.ndarray) -> np.ndarray:
    out: np.ndarray = (
        "above its roof ("
        + _pct(x.pct, rows)
        + "% of the "
        + x.binding[rows].astype(str).astype(object)
        + " cap): inconsistent data — "
        "roofs and counters disagree (clock, replay or recipe); check the roofs' source"
    )
    return out
