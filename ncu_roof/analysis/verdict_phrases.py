"""Every launch's verdict in words, from the launch columns: one phrase per distinct verdict, each
launch a code into them.
"""

from __future__ import annotations

import math

import numpy as np

from ncu_roof.analysis.columns import LaunchColumns, distinct_rows, factorized, identity_codes
from ncu_roof.analysis.model import fixed
from ncu_roof.analysis.records import busiest_compute_pipe, verdict_phrase
from ncu_roof.base.vocabulary import Bound, VerdictBasis, with_basis


def verdict_words(columns: LaunchColumns, *, basis: bool = False) -> list[str]:
    """`describe` of every launch, from the columns (with `basis`: what each rests on)."""
    codes, phrases = verdict_codes(columns, basis=basis)
    words: list[str] = phrases[codes].tolist()
    return words


def verdict_codes(columns: LaunchColumns, *, basis: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """`describe` of every launch as codes into its distinct phrases: one phrase per distinct
    verdict (a phrase reads only the parts its bound shows, a percentage only as its rounded text);
    with `basis`, each phrase says what it rests on (`with_basis`)."""
    c = columns.values
    n = len(columns)
    bound = c["bound"]
    memory, compute, latency = (bound == b for b in (Bound.MEMORY, Bound.COMPUTE, Bound.LATENCY))
    sol = c["verdict_basis"] == VerdictBasis.SOL
    where = np.where(sol, c["sol_unit"], c["binding"])
    where[~memory] = None
    sol_compute = np.full(n, "", dtype=object)
    pipes, sm = columns.maps["pipe_pct"], columns.key("sol_pct", "sm")
    for j in np.flatnonzero(sol & compute).tolist():
        busiest = busiest_compute_pipe({p: float(a[j]) for p, a in pipes.items() if not math.isnan(a[j])})
        sol_compute[j] = busiest or "SM " + ("–" if math.isnan(sm[j]) else f"{sm[j]:.0f}%")
    by_ceiling = compute & ~sol
    ceiling = c["compute_ceiling"].copy()
    ceiling[~by_ceiling] = None
    pct = c["compute_ceiling_pct"]
    pct_text = np.full(n, None, dtype=object)
    shown = np.flatnonzero(by_ceiling & ~np.isnan(pct))
    pct_text[shown] = fixed(pct[shown], 0)
    small = c["small_grid"] & latency
    bases = c["verdict_basis"] if basis else np.full(n, VerdictBasis.NONE, dtype=object)
    texts = [factorized(p)[0] for p in (where, sol_compute, ceiling, pct_text)]
    enums = [identity_codes(p.tolist())[1] for p in (bound, bases)]  # each member is one object
    first, inverse = distinct_rows([*texts, *enums, (sol & compute).view(np.int8), small.view(np.int8)])
    phrases = np.empty(len(first), dtype=object)
    phrases[:] = [
        verdict_phrase(
            bound[j],
            VerdictBasis.SOL if sol[j] and compute[j] else VerdictBasis.ROOFLINE,
            where=where[j],
            sol_compute=sol_compute[j],
            ceiling=ceiling[j],
            ceiling_pct=None if pct_text[j] is None else float(pct[j]),
            small_grid=bool(small[j]),
        )
        for j in first.tolist()
    ]
    if basis:
        phrases[:] = [with_basis(p, bases[j]) for p, j in zip(phrases.tolist(), first.tolist(), strict=True)]
    # parts that differ can read the same (a percentage only a pipe ceiling shows): one code a text
    by_text, distinct_texts = factorized(phrases)
    distinct = np.empty(len(distinct_texts), dtype=object)
    distinct[:] = distinct_texts
    return by_text[inverse], distinct
