"""`pairs.match_rows`: the kernels of two runs matched as one pandas merge on the compared fields
and the occurrence among equals would match them (the oracle below), for every `MatchBy`; and
`verdict_phrases.verdict_words`: each launch's verdict as `describe` (below) words its `Kernel`."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import polars as pl
import pytest
from conftest import FIXTURES, analyzed
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.frame import frame_of
from ncu_roof.analysis.records import Kernel, sol_compute_words, verdict_phrase
from ncu_roof.analysis.verdict_phrases import verdict_words
from ncu_roof.base.vocabulary import MatchBy, VerdictBasis, with_basis
from ncu_roof.compare.pairs import match_rows, pair_frame

FIELDS = ("name", "grid", "block")
Launch = tuple[str, str | None, str | None]
ON = {MatchBy.NAME_SHAPE: list(FIELDS), MatchBy.NAME: ["name"], MatchBy.ORDER: []}


def launches(rows: Sequence[Launch]) -> pl.DataFrame:
    """Launches on one device, in no NVTX range (neither a pairing key)."""
    frame = pl.DataFrame(list(rows), schema=dict.fromkeys(FIELDS, pl.String), orient="row")
    return frame.with_columns(
        run=pl.lit(0, pl.Int64), ordinal=pl.lit(0, pl.Int64), nvtx=pl.lit(None, pl.String)
    )


def matched(
    base: Sequence[Launch], head: Sequence[Launch], match: MatchBy = MatchBy.NAME_SHAPE
) -> list[list[int]]:
    """`match_rows`' base rows, head rows (-1: none) and occurrences."""
    got = match_rows(launches(base), launches(head), match)
    return [got.get_column(c).fill_null(-1).to_list() for c in ("base_row", "head_row", "occurrence")]


def merged(base: list[Launch], head: list[Launch], match: MatchBy) -> tuple[list[int], list[int], list[int]]:
    """The oracle: a left merge of the head on the base (a missing grid matches a missing grid)."""

    def frame(rows: list[Launch]) -> pd.DataFrame:
        cells = [[("\x00" if v is None else v) for v in row] for row in rows]
        out = pd.DataFrame(cells, columns=list(FIELDS), dtype=object)
        keys = ON[match]
        out["occurrence"] = out.groupby(keys, sort=False).cumcount() if keys else range(len(out))
        out["row"] = range(len(out))
        return out

    heads, bases = frame(head), frame(base)
    joined = heads.merge(bases, how="left", on=[*ON[match], "occurrence"], suffixes=("", "_base"))
    base_of_head = joined["row_base"].fillna(-1).astype("int64").tolist()
    only_base = bases[~bases["row"].isin([r for r in base_of_head if r >= 0])]
    return (
        base_of_head + only_base["row"].tolist(),
        joined["row"].tolist() + [-1] * len(only_base),
        joined["occurrence"].tolist() + only_base["occurrence"].tolist(),
    )


LAUNCH = st.tuples(
    st.sampled_from(["gemm", "add", "norm"]),
    st.sampled_from(["(1, 1, 1)", "(8, 1, 1)", None]),
    st.sampled_from(["(128, 1, 1)", None]),
)


@given(st.lists(LAUNCH, max_size=12), st.lists(LAUNCH, max_size=12), st.sampled_from(list(MatchBy)))
def test_match_rows_is_the_merge(
    base: list[Launch],
    head: list[Launch],
    match: MatchBy,
) -> None:
    assert tuple(matched(base, head, match)) == merged(base, head, match)


def test_the_nth_launch_of_a_shape_pairs_with_the_nth() -> None:
    base = [("gemm", "(8, 1, 1)", None), ("add", None, None), ("gemm", "(8, 1, 1)", None)]
    head = [("gemm", "(8, 1, 1)", None), ("gemm", "(8, 1, 1)", None), ("gemm", "(8, 1, 1)", None)]
    base_rows, head_rows, occurrence = matched(base, head)
    assert base_rows == [0, 2, -1, 1]  # the third gemm has no base; add only in the base
    assert head_rows == [0, 1, 2, -1]
    assert occurrence == [0, 1, 2, 0]


def test_missing_names_and_grids_pair_with_missing_ones() -> None:
    """A missing name or grid (null, as a merge takes None) pairs with a missing one."""
    launch = [(None, None, "(1, 1, 1)")]
    for match in MatchBy:
        assert matched(launch, launch, match) == [[0], [0], [0]]  # type: ignore[arg-type]


def test_base_only_launches_are_numbered_among_their_equals() -> None:
    base = [("add", None, None), ("add", None, None), ("gemm", None, None)]
    base_rows, head_rows, occurrence = matched(base, [("add", None, None)])
    assert base_rows == [0, 1, 2] and head_rows == [0, -1, -1]
    assert occurrence == [0, 1, 0]


def describe(kernel: Kernel) -> str:
    """The oracle: a verdict's phrase from one `Kernel`'s fields."""
    sol = kernel.verdict_basis is VerdictBasis.SOL
    return verdict_phrase(
        kernel.bound,
        where=kernel.sol_unit if sol else kernel.binding,
        sol_compute=sol_compute_words(kernel.pipe_pct, kernel.sol_pct.get("sm")) if sol else "",
        ceiling=kernel.compute_ceiling,
        ceiling_pct=kernel.compute_ceiling_pct,
        small_grid=kernel.small_grid,
    )


@pytest.mark.parametrize(
    "name",
    [
        "ceiling_pipes.csv",  # pipe and tensor ceilings, memory
        "console_details_2024.txt",  # SOL by the SM's percentage, unknown
        "verdict_sol_unknown_gpu.csv",  # every SOL bound, small grid
        "verdict_int_reduction.csv",
        "headroom_sol_busy_units.csv",
        "verdict_int8_gemm.csv",
    ],
)
def test_verdict_texts_word_each_launch_as_describe_does(name: str) -> None:
    analysis = analyzed(FIXTURES / name)
    expected = [with_basis(describe(k), k.verdict_basis) for k in analysis.kernels]
    assert verdict_words(analysis.launches, basis=True).to_list() == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_percentage_rounded_by_polars_reads_as_the_percentage(pct: float) -> None:
    """`verdict_words` words a verdict once per rounded percentage: Polars' `round(0)` must read
    as `:.0f` reads the percentage itself."""
    rounded = pl.Series([pct]).round(0).item()
    assert f"{rounded:.0f}" == f"{pct:.0f}"


def test_a_side_without_launches_leaves_every_launch_of_the_other_alone() -> None:
    launches, empty = (
        f.with_columns(ordinal=0) for f in (analyzed(FIXTURES / "raw_base.csv").launches, frame_of(()))
    )
    only_head = pair_frame(empty, launches, MatchBy.NAME_SHAPE, 5.0)
    assert only_head.get_column("status").to_list() == ["only-head"] * len(launches) == ["only-head"] * 2
    assert only_head.get_column("head_row").to_list() == [0, 1]
    only_base = pair_frame(launches, empty, MatchBy.NAME_SHAPE, 5.0)
    assert only_base.get_column("status").to_list() == ["only-base"] * 2
    assert len(pair_frame(empty, empty, MatchBy.NAME_SHAPE, 5.0)) == 0


def test_a_diffs_kernels_are_a_sequence_as_an_analysis_kernels_are() -> None:
    """Sliced, counted and searched like `Analysis.kernels` (a slice crashed in a list-like class)."""
    import ncu_roof

    analysis = ncu_roof.analyze(ncu_roof.example_path())
    pairs = ncu_roof.diff(analysis, analysis).kernels
    assert isinstance(pairs, Sequence) and len(pairs) == 7
    assert pairs[1:3] == [pairs[1], pairs[2]] and pairs[-1] == list(pairs)[-1]
    assert pairs.index(pairs[2]) == 2 and pairs.count(pairs[0]) == 1
