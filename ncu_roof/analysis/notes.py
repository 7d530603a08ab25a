"""What a kernel engineer needs to know to trust, or distrust, one verdict: the notes of every
launch of one device at once. Each rule is a mask over the launches and a sentence made only for
the launches it selects; the rules run in the order the notes are read."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import TypeVar

import numpy as np
import polars as pl

from ncu_roof.analysis.frame import sentences
from ncu_roof.analysis.model import bit_codes, busiest_pipe, fixed, is_set, objects
from ncu_roof.analysis.notes_verdict import above_roof, verdict_notes
from ncu_roof.analysis.verdicts import Verdicts
from ncu_roof.base.arrays import equals, object_array
from ncu_roof.base.metrics import FLOP_OPS
from ncu_roof.base.vocabulary import COMPUTE, PRECISIONS, TIER_NAMES, TIERS, Bound, VerdictBasis
from ncu_roof.recipe.tensor import TENSOR_FLOP_UNKNOWN
from ncu_roof.recipe.tiers import LOWER_BOUND

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
Said = str | np.ndarray | pl.Series | list[list[str]]  # one text for all rows, one per row, or a list per row
Made = list[tuple[np.ndarray, Said]]  # (rows, their texts) per rule
Texts = Callable[[np.ndarray], Said]
Adder = Callable[[np.ndarray, Texts | str], None]  # a rule's mask, its texts (or one text for all)


@dataclass(frozen=True)
class NoteInputs:
    """Per launch (arrays of one length): what the notes are made from, beside the verdicts."""

    v: Verdicts  # failed, collection_failed, the roofline (binding, unroofed), SOL, the verdict, supported
    missing: pl.Series  # list of the quantities it lacks
    no_compute_roofs: bool  # the device has no compute roofs at all
    recipe: Mapping[str, np.ndarray]  # per quantity, each launch's formula (object: text or None)
    not_collected: Mapping[str, np.ndarray]  # per precision, the terms read n/a (`a,b`) or None
    flop: Mapping[str, np.ndarray]  # per precision, NaN when not collected
    flop_total_is_lower_bound: np.ndarray  # bool
    tensor_pipe_pct: np.ndarray
    integer_tensor_ops: np.ndarray  # bool: integer tensor operations were counted
    pct: np.ndarray  # percent of roof, NaN when none
    waves: np.ndarray
    busiest_tier: np.ndarray  # object: the tier it used most of its bandwidth, or None; only without FLOPs
    busiest_tier_pct: np.ndarray  # that percentage of its bandwidth
    tensor_by_pipe: np.ndarray  # bool: tensor FLOPs from pipe instructions x 512
    shared_wavefronts_per_request: np.ndarray  # shared loads and stores (NaN: not collected)
    shared_bank_conflict_pct: np.ndarray  # of their wavefronts (NaN: not collected)
    sol_pct: Mapping[str, np.ndarray]  # per SOL unit, its throughput % (NaN: not in the input)
    pct_of_bandwidth: Mapping[str, np.ndarray]  # per tier, achieved bytes/s as % of its roof
    ceiling: np.ndarray  # object: the compute ceiling ("fp32", "tensor:bf16", "pipe:alu") or None
    input_notes: np.ndarray  # object: the reader's notes (a list) or None: they come first


_TENSOR_PATHS_COLLECT = "ncu --metrics regex:sm__ops_path_tensor_.*"
# the notes of a failed collection (the summary's main reason looks for them)
COLLECTION_FAILED = "collection failed: every counter of this launch reads n/a; ncu measured nothing"
ZERO_DURATION = "duration is 0: this launch's collection failed; its counters are not measurements"


def each(values: Sequence[K], make: Callable[[K], T]) -> list[T]:
    """`[make(v) for v in values]`, made once per distinct value (launches share their formulas)."""
    made = cache(make)
    return [made(v) for v in values]


def launch_notes(x: NoteInputs) -> pl.Series:
    """Every launch's notes in reading order: each rule's sentences (`Said`) for the rows its mask selects."""
    made = _failures(x.v, x.input_notes)

    def add(mask: np.ndarray, text: Texts | str) -> None:
        rows = np.flatnonzero(mask)
        if len(rows):
            made.append((rows, text if isinstance(text, str) else text(rows)))

    ok = ~x.v.failed
    add(
        ok & (x.missing.list.len() > 0).to_numpy(),
        lambda rows: "missing counters: " + x.missing.gather(rows).list.join(", "),
    )
    if x.no_compute_roofs:
        add(
            ok,
            "no compute roofs for this device (the input names no GPU, and no one built-in GPU "
            "matches the compute capability and SM count it holds): pass --gpu KEY "
            "(`ncu-roof gpus` lists them) or --roofs FILE",
        )
    unroofed = np.logical_or.reduce(list(x.v.arrays.unroofed.values()), initial=False)
    add(ok & unroofed, lambda rows: [_unroofed(x, j) for j in rows.tolist()])
    not_collected = _per_precision(x.not_collected)
    add(ok & not_collected.astype(bool), lambda rows: each(not_collected[rows].tolist(), _not_collected))
    unknown = object_array(each(x.recipe["flop_tensor"].tolist(), _tensor_unknown))
    add(ok & x.flop_total_is_lower_bound, lambda rows: _lower_bound(x, rows, is_set(unknown), not_collected))
    byte_formulas = object_array(list(zip(*(x.recipe[f"{t}_bytes"].tolist() for t in TIERS), strict=True)))
    partial_bytes = object_array(each(byte_formulas.tolist(), _partial_bytes))
    add(ok & is_set(partial_bytes), lambda rows: partial_bytes[rows])
    no_tensor = np.isnan(x.flop["tensor"])
    add(ok & is_set(unknown), lambda rows: unknown[rows])
    tensor_busy = ~np.isnan(x.tensor_pipe_pct) & (x.tensor_pipe_pct != 0)
    add(
        ok & no_tensor & tensor_busy & ~x.integer_tensor_ops & ~is_set(unknown),
        lambda rows: sentences(
            "tensor pipe {}% busy; tensor FLOPs not counted — collect sm__ops_path_tensor_* "
            f"({_TENSOR_PATHS_COLLECT})",
            fixed(x.tensor_pipe_pct[rows], 0),
        ),
    )
    basis_none = equals(x.v.verdict.basis, VerdictBasis.NONE)
    pipe = objects(None, len(ok))
    pipe[ok & basis_none] = busiest_pipe(x.v.pipe_pct, np.flatnonzero(ok & basis_none))
    add(
        is_set(pipe),
        lambda rows: sentences(
            "busiest pipe: {}; without memory traffic or SOL percentages no verdict can be made", pipe[rows]
        ),
    )
    add(
        ok & basis_none & is_set(x.busiest_tier),
        lambda rows: sentences(
            "no FLOP counters, so no roof can be said to bind; its busiest tier, {}, ran at {}% of its "
            "bandwidth",
            x.busiest_tier[rows],
            fixed(x.busiest_tier_pct[rows], 0),
        ),
    )
    verdict_notes(x, ok, add)
    _busy_notes(x, ok, add)
    add(ok & (x.pct > 100.0), lambda rows: above_roof(x, rows))
    # Nsight's SharedMemoryConflicts threshold: a tenth of the wavefronts are conflicts
    per_request, conflicts = x.shared_wavefronts_per_request, x.shared_bank_conflict_pct
    add(
        ok & (conflicts >= 10.0) & (per_request > 1.0),
        lambda rows: sentences(
            "shared-memory bank conflicts: {} wavefronts per shared load or store request, {}% of them "
            "conflicts: the shared roof counts every wavefront, so its % is replays, not bytes; fix: pad "
            "the shared array (float tile[32][33], not [32][32]) or swizzle its index so the 32 threads of "
            "a warp hit 32 different banks",
            fixed(per_request[rows], 1),
            fixed(conflicts[rows], 0),
        ),
    )
    add(
        ok & x.tensor_by_pipe,
        "tensor FLOPs = tensor-pipe instructions x 512 (a V100 HMMA instruction's FLOPs, as Nsight counts"
        " them)",
    )
    # a latency verdict, or SOL's latency cross-check, already names a grid under one wave
    latency = equals(x.v.verdict.bound, Bound.LATENCY) | (
        x.v.verdict.disagrees & equals(x.v.sol.bound, Bound.LATENCY)
    )
    add(
        ok & (x.waves < 1) & ~latency,
        lambda rows: sentences(
            "less than one wave ({} per SM): counters of small launches are noisy", fixed(x.waves[rows], 2)
        ),
    )
    return _gathered(made, len(ok))


def failure_notes(v: Verdicts, given: np.ndarray) -> pl.Series:
    """Only the reader's notes (`given`) and those of a failed collection: a launch's notes where no
    output shows them (a diff, a plot: `ncu_roof.pipeline` refuses a failed capture by them)."""
    return _gathered(_failures(v, given), len(given))


def _failures(v: Verdicts, given: np.ndarray) -> Made:
    """The first notes of a launch: the reader's, then a failed collection's."""
    rows = [
        np.flatnonzero(m) for m in (given.astype(bool), v.collection_failed, v.failed & ~v.collection_failed)
    ]
    return [(rows[0], given[rows[0]].tolist()), (rows[1], COLLECTION_FAILED), (rows[2], ZERO_DURATION)]


def _gathered(made: Made, n: int) -> pl.Series:
    """Each launch's sentences, in the order of the rules that said them: the rules' (rows, texts)
    as one long table, grouped by row (a stable sort keeps the rules' order)."""
    rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    said: list[pl.Series] = [pl.Series([], dtype=pl.String)]
    for at, texts in made:
        if isinstance(texts, str):
            said.append(pl.Series([texts], dtype=pl.String).new_from_index(0, len(at)))
        elif isinstance(texts, list):  # a list of sentences per row
            at = np.repeat(at, [len(t) for t in texts])
            said.append(pl.Series([t for row in texts for t in row], dtype=pl.String))
        else:  # one text (or None) per row: an object array, or a Series
            said.append(pl.Series(texts if isinstance(texts, pl.Series) else texts.tolist(), dtype=pl.String))
        rows.append(at)
    long = pl.DataFrame({"row": np.concatenate(rows), "note": pl.concat(said)}).drop_nulls()
    lists = long.sort("row", maintain_order=True).group_by("row", maintain_order=True).agg("note")
    every = pl.DataFrame({"row": np.arange(n)}).join(lists, on="row", how="left", maintain_order="left")
    return every.get_column("note").fill_null([]).alias("notes")  # [] for a launch without notes


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
        busy, moved = x.sol_pct[tier], x.pct_of_bandwidth[tier]
        mask = ok & _far_apart(busy, moved)
        if tier == "l2":  # Nsight's L2 measures count only what L2 returns to the SMs: the bytes
            # must count every L2 access (lts__t_*), reads and writes
            mask[mask] = each(x.recipe["l2_bytes"][mask].tolist(), lambda f: "lts__t_" in (f or ""))
        add(mask, partial(_busy_tier, tier, why, busy, moved))
    # the precision a compute ceiling names ("fp32", "tensor:bf16"; not a pipe), and its units
    units = object_array(each(x.ceiling.tolist(), lambda c: _WORK_UNITS.get(str(c).partition(":")[0])))
    precision = np.where(is_set(units), x.ceiling, objects(None, len(units)))
    compute = equals(x.v.arrays.binding, COMPUTE) & is_set(precision)
    add(ok & compute & _far_apart(x.sol_pct["sm"], x.pct), partial(_busy_sm, x, precision, units))


def _busy_sm(x: NoteInputs, precision: np.ndarray, units: np.ndarray, rows: np.ndarray) -> pl.Series:
    """`SM 70% busy (busiest pipe: lsu pipe 70%) at 19% of the fp32 roof: the instruction mix, not
    the FMA units, binds` of these launches."""
    pipe = busiest_pipe(x.v.pipe_pct, rows, compute_only=False)
    shown = np.full(len(rows), "", dtype=object)
    shown[is_set(pipe)] = " (busiest pipe: " + pipe[is_set(pipe)] + ")"
    return sentences(
        "SM {}% busy{} at {}% of the {} roof: the instruction mix, not the {} units, binds",
        *(fixed(x.sol_pct["sm"][rows], 0), shown, fixed(x.pct[rows], 0), precision[rows], units[rows]),
    )


def _busy_tier(tier: str, why: str, busy: np.ndarray, moved: np.ndarray, rows: np.ndarray) -> pl.Series:
    """`L1 is 97% busy moving 10% of its byte peak: about 10x more …` of these launches."""
    used = moved[rows]
    small = used < 9.95  # one decimal, not "0%"
    used_text = np.empty(len(rows), dtype=object)
    used_text[small], used_text[~small] = fixed(used[small], 1), fixed(used[~small], 0)
    return sentences(
        f"{TIER_NAMES[tier]} is {{}}% busy moving {{}}% of its byte peak: about {{}}x more {why}",
        *(fixed(busy[rows], 0), used_text, fixed(busy[rows] / moved[rows], 0)),
    )


def _far_apart(busy: np.ndarray, used: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        far: np.ndarray = (busy >= BUSY_SOL_PCT) & (used > 0) & (busy >= BUSY_RATIO * used)
    return far


def _per_precision(not_collected: Mapping[str, np.ndarray]) -> np.ndarray:
    """Per launch, ((precision, its terms read n/a), …) of the precisions that have some."""
    some = np.logical_or.reduce([is_set(t) for t in not_collected.values()])
    out = object_array([()] * len(some))
    rows = zip(*(t[some].tolist() for t in not_collected.values()), strict=True)
    precisions = list(not_collected)
    out[some] = object_array(
        [tuple((p, tuple(t.split(","))) for p, t in zip(precisions, row, strict=True) if t) for row in rows]
    )
    return out


def _not_collected(not_collected: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
    return [
        f"tensor: {', '.join(terms)} read n/a; the tensor FLOPs are the sum of the paths measured"
        if precision == "tensor"
        else f"{precision} FLOPs from {'+'.join(t for t in FLOP_OPS[precision] if t not in terms)} alone "
        f"({', '.join(terms)} not collected): a lower bound"
        for precision, terms in not_collected
    ]


def _unroofed(x: NoteInputs, j: int) -> list[str]:
    return [
        f"no roofline verdict: {tier} has traffic ({x.recipe[f'{tier}_bytes'][j] or ''}) but no roof "
        f"of that counter, and may be what binds; give its bandwidth with --roofs FILE "
        f"([bandwidth] {tier} = ...)"
        if tier in TIERS
        else f"no roofline verdict: {tier} FLOPs but no {_peak_key(tier)} peak, and compute may be what "
        f"binds; give it with --roofs FILE ([peak] {_peak_key(tier)} = ...)"
        for tier, unroofed in x.v.arrays.unroofed.items()
        if unroofed[j]
    ]


def _peak_key(precision: str) -> str:
    """The `[peak]` key whose roof a precision's FLOPs are timed at: a tensor data path's
    (`tensor:bf16`) at the file's `tensor` (`verdicts`: no roofs file key names one path)."""
    return "tensor" if precision.startswith("tensor:") else precision


def _tensor_unknown(label: str | None) -> str | None:
    """Why tensor FLOPs are unknown where tensor-pipe instructions ran (the formula says), or None."""
    if label is None or not label.startswith(TENSOR_FLOP_UNKNOWN):
        return None
    why = label.removeprefix(TENSOR_FLOP_UNKNOWN)
    return f"tensor FLOPs unknown: {why}; collect sm__ops_path_tensor_* ({_TENSOR_PATHS_COLLECT})"


def _partial_bytes(formulas: tuple[str | None, ...]) -> str | None:
    """`DRAM bytes from counter:dram__bytes_read.sum alone (…): a lower bound`, or None (the
    formulas of the tiers' bytes, in tier order)."""
    partial = [
        f"{TIER_NAMES[t]} bytes from {label.replace(' (', ' alone (', 1)}"  # formula (why: a lower bound)
        for t, label in zip(TIERS, formulas, strict=True)
        if label and LOWER_BOUND in label
    ]
    return "; ".join(partial) or None


def _lower_bound(
    x: NoteInputs, rows: np.ndarray, tensor_unknown: np.ndarray, not_collected: np.ndarray
) -> np.ndarray:
    # a tensor count whose FLOPs are unknown was collected: "tensor unknown" (its note says why)
    unknown = tensor_unknown[rows]
    absent = [np.isnan(x.flop[p][rows]) & (~unknown if p == "tensor" else True) for p in PRECISIONS]
    codes = bit_codes([*absent, unknown])

    def make(key: tuple[int, tuple[tuple[str, tuple[str, ...]], ...]]) -> str:
        words = [f"{p} not collected" for i, p in enumerate(PRECISIONS) if key[0] >> i & 1]
        words += ["tensor unknown"] if key[0] >> len(PRECISIONS) & 1 else []
        words += [f"{p} partial" for p, _ in key[1]]
        return f"FLOP total is a lower bound ({', '.join(words)})"

    return object_array(each(list(zip(codes.tolist(), not_collected[rows].tolist(), strict=True)), make))
