"""What a kernel engineer needs to know to trust, or distrust, one verdict: the notes of every
launch of one device at once.

Each rule is a mask over the launches and a sentence made only for the launches it selects; the
rules run in the order the notes are read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ncu_roof.model import is_set
from ncu_roof.recipe import FLOP_OPS
from ncu_roof.sol import LATENCY_SOL_PCT
from ncu_roof.vocabulary import COMPUTE, PRECISIONS, Bound, VerdictBasis

Adder = Callable[[np.ndarray, Callable[[int], str | list[str]]], None]


@dataclass(frozen=True)
class NoteInputs:
    """Per launch (arrays of one length): what the notes are made from."""

    failed: np.ndarray  # bool: duration 0 or nothing collected
    collection_failed: np.ndarray  # bool: every counter n/a
    missing: np.ndarray  # object: tuple of missing quantities
    no_compute_roofs: bool  # the device has no compute roofs at all
    unroofed: Mapping[str, np.ndarray]  # tier → bool: traffic but no roof of that counter
    bytes_recipe: Mapping[str, list[str]]  # tier → the formula of its bytes ("" when none)
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
    busiest_tier: np.ndarray  # object: (tier, percent of its bandwidth) or None, only without FLOPs
    tensor_by_pipe: np.ndarray  # bool: tensor FLOPs from pipe instructions x 512


def launch_notes(x: NoteInputs) -> list[list[str]]:
    """The notes of every launch, in reading order."""
    n = len(x.failed)
    notes: list[list[str]] = [[] for _ in range(n)]

    def add(mask: np.ndarray, text: Callable[[int], str | list[str]]) -> None:
        for j in np.flatnonzero(mask).tolist():
            made = text(j)
            notes[j] += [made] if isinstance(made, str) else made

    add(
        x.collection_failed,
        lambda _: "collection failed: every counter of this launch reads n/a; ncu measured nothing",
    )
    add(
        x.failed & ~x.collection_failed,
        lambda _: "duration is 0: this launch's collection failed; its counters are not measurements",
    )
    ok = ~x.failed
    missing = x.missing
    add(
        ok & np.array([bool(m) for m in missing], dtype=bool),
        lambda j: "missing counters: " + ", ".join(missing[j]),
    )
    if x.no_compute_roofs:
        add(
            ok,
            lambda _: (
                "no compute roofs for this device (the input names no GPU): pass --gpu KEY or --roofs FILE"
            ),
        )
    unroofed = np.column_stack([x.unroofed[t] for t in x.unroofed]) if x.unroofed else np.zeros((n, 0), bool)
    add(ok & unroofed.any(axis=1), lambda j: _unroofed(x, j))
    not_collected = x.not_collected
    add(
        ok & np.array([bool(c) for c in not_collected], dtype=bool),
        lambda j: _not_collected(not_collected[j]),
    )
    add(ok & x.flop_total_is_lower_bound, lambda j: _lower_bound(x, j))
    no_tensor = np.isnan(x.flop["tensor"])
    tensor_busy = ~np.isnan(x.tensor_pipe_pct) & (x.tensor_pipe_pct != 0)
    add(
        ok & no_tensor & tensor_busy & ~x.integer_tensor_ops,
        lambda j: (
            f"tensor pipe {x.tensor_pipe_pct[j]:.0f}% busy; tensor FLOPs not counted — collect "
            "sm__ops_path_tensor_* (ncu --metrics regex:sm__ops_path_tensor_.*)"
        ),
    )
    basis_none = x.basis == VerdictBasis.NONE
    busiest = x.busiest_pipe
    add(
        ok & basis_none & is_set(busiest),
        lambda j: (
            f"busiest pipe: {busiest[j]}; without memory traffic or SOL percentages no verdict can be made"
        ),
    )
    tiers = x.busiest_tier
    add(
        ok & basis_none & is_set(tiers),
        lambda j: (
            f"no FLOP counters, so no roof can be said to bind; its busiest tier, {tiers[j][0]}, ran at "
            f"{tiers[j][1]:.0f}% of its bandwidth"
        ),
    )
    _verdict_notes(x, ok, add)
    add(ok & (x.pct > 100.0), lambda j: _above_roof(x, j))
    add(
        ok & x.tensor_by_pipe,
        lambda _: "tensor FLOPs = tensor-pipe instructions x 512 (V100 HMMA shape): approximate here",
    )
    latency = x.bound == Bound.LATENCY
    add(
        ok & (x.waves < 1) & ~latency,
        lambda j: f"less than one wave ({x.waves[j]:.2f} per SM): counters of small launches are noisy",
    )
    return notes


def _verdict_notes(x: NoteInputs, ok: np.ndarray, add: Adder) -> None:
    """Why the verdict has the basis it has (latency, SOL, no SOL), and where SOL disagrees."""
    latency = x.bound == Bound.LATENCY
    sol = x.basis == VerdictBasis.SOL
    add(ok & latency, lambda j: _latency(x, j))
    add(ok & ~latency & sol, lambda j: _sol_basis(x, j))
    no_sol = np.isnan(x.sol_sm_pct) | np.isnan(x.sol_memory_pct)
    add(
        ok & ~latency & ~sol & (x.bound != Bound.UNKNOWN) & no_sol,
        lambda _: (
            "no SOL percentages (sm__throughput, gpu__compute_memory_throughput): "
            "the latency-bound check (Nsight's 60% rule) was not made"
        ),
    )
    add(ok & x.disagrees & ~latency, lambda j: _disagrees(x, j))


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
        f"no roofline verdict: {tier} has traffic ({x.bytes_recipe[tier][j]}) but no roof of that counter, "
        f"and may be what binds; give its bandwidth with --roofs FILE ([bandwidth] {tier} = ...)"
        for tier, unroofed in x.unroofed.items()
        if unroofed[j]
    ]


def _lower_bound(x: NoteInputs, j: int) -> str:
    absent = [f"{p} not collected" for p in PRECISIONS if np.isnan(x.flop[p][j])]
    absent += [f"{p} partial" for p in x.not_collected[j]]
    return f"FLOP total is a lower bound ({', '.join(absent)})"


def _verdict_words(binding: str | None, pct: float) -> str:
    if binding is None:
        return "nothing (no roofs or counters)"
    where = "compute-bound" if binding == COMPUTE else f"memory-bound at {binding}"
    return where if np.isnan(pct) else f"{where} ({pct:.0f}% of roof)"


def _latency(x: NoteInputs, j: int) -> str:
    waves = x.waves[j]
    grid = f"; small grid ({waves:.2f} waves per SM)" if waves < 1 else ""
    binding = x.binding[j] if x.supported[j] else None
    return (
        f"latency-bound: SM {x.sol_sm_pct[j]:.0f}% and memory {x.sol_memory_pct[j]:.0f}% of peak, both under "
        f"{LATENCY_SOL_PCT:.0f}%{grid}; the roofline alone says {_verdict_words(binding, x.pct[j])}"
    )


def _sol_basis(x: NoteInputs, j: int) -> str:
    why = (
        "no floating-point or tensor work was counted and no pipe utilisation was collected, so "
        "the roofline cannot see this kernel's (integer) work"
        if x.binding[j] is not None
        else "the roofline needs FLOP and byte counters with roofs"
    )
    unit = f", busiest memory unit {x.sol_unit[j]}" if x.sol_unit[j] else ""
    return (
        f"verdict from Speed of Light (Nsight's rule): SM {x.sol_sm_pct[j]:.0f}%, memory "
        f"{x.sol_memory_pct[j]:.0f}%{unit}; {why}"
    )


def _disagrees(x: NoteInputs, j: int) -> str:
    unit = f" at {x.sol_unit[j]}" if x.sol_unit[j] else ""
    return (
        f"Speed of Light disagrees: SM {x.sol_sm_pct[j]:.0f}%, memory {x.sol_memory_pct[j]:.0f}% says "
        f"{x.sol_bound[j].value}-bound{unit}; the roofline says {_verdict_words(x.binding[j], x.pct[j])}"
    )


def _above_roof(x: NoteInputs, j: int) -> str:
    return (
        f"above its roof ({x.pct[j]:.0f}% of the {x.binding[j]} cap): inconsistent data — "
        "roofs and counters disagree (clock, replay or recipe); check the roofs' source"
    )
