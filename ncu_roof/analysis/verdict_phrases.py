"""Every launch's verdict in words, from the launch frame: each distinct verdict worded once. A
phrase reads only the parts its bound shows, and a percentage only as its rounded text (half to
even, as `f"{v:.0f}"` rounds it), so launches are told apart by those parts alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ncu_roof.analysis.records import sol_compute_words, verdict_phrase
from ncu_roof.base.vocabulary import Bound, VerdictBasis, with_basis


def verdict_words(launches: pl.DataFrame, *, basis: bool = False) -> pl.Series:
    """`verdict_phrase` of every launch (with `basis`: what each rests on)."""
    codes, phrases = verdict_codes(launches, basis=basis)
    return pl.Series("words", phrases, pl.String).gather(codes)


def verdict_codes(launches: pl.DataFrame, *, basis: bool = False) -> tuple[np.ndarray, list[str]]:
    """`verdict_words` as each launch's code into the distinct phrases (in first-launch order)."""
    if launches.is_empty():  # its structs may have no fields
        return np.zeros(0, dtype=np.int64), []
    bound = pl.col("bound")
    sol = pl.col("verdict_basis") == VerdictBasis.SOL.value
    compute = bound == Bound.COMPUTE.value
    parts = launches.select(
        bound,
        (pl.col("verdict_basis") if basis else pl.lit(None, pl.String)).alias("basis"),
        (sol & compute).alias("sol_compute"),
        pl.when(bound == Bound.MEMORY.value)
        .then(pl.when(sol).then("sol_unit").otherwise("binding"))
        .alias("where"),
        pl.when(sol & compute).then("pipe_pct").alias("pipes"),
        pl.when(sol & compute).then(pl.col("sol_pct").struct.field("sm")).alias("sm"),
        pl.when(compute & ~sol).then("compute_ceiling").alias("ceiling"),
        pl.when(compute & ~sol).then("compute_ceiling_pct").alias("ceiling_pct"),
        (pl.col("small_grid") & (bound == Bound.LATENCY.value)).alias("small_grid"),
    ).with_columns(pl.col("sm", "ceiling_pct").round(0, mode="half_to_even"))  # as their texts show them
    distinct = parts.with_row_index("row").group_by(parts.columns, maintain_order=True).agg("row")
    code: dict[str, int] = {}  # parts that differ may read alike (a percentage only a pipe ceiling shows)
    codes = [code.setdefault(_phrase(r), len(code)) for r in distinct.drop("row").iter_rows(named=True)]
    by_row = distinct.select(pl.Series("code", codes, pl.Int64), "row").explode("row").sort("row")
    return by_row.get_column("code").to_numpy(), list(code)


def _phrase(parts: dict[str, Any]) -> str:
    """One distinct verdict's words, from its parts (a row of `verdict_codes`' table)."""
    bound, basis, sol, pipes, sm = (parts.pop(k) for k in ("bound", "basis", "sol_compute", "pipes", "sm"))
    pipe_pct = {p: v for p, v in (pipes or {}).items() if v is not None}
    words = sol_compute_words(pipe_pct, sm) if sol else ""
    phrase = verdict_phrase(Bound(bound), sol_compute=words, **parts)  # where, ceiling(_pct), small_grid
    return phrase if basis is None else with_basis(phrase, VerdictBasis(basis))
