"""`pairs.match_rows`: the kernels of two runs matched as one pandas merge on the compared fields
and the occurrence among equals would match them (the oracle below), for every `MatchBy`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.columns import LaunchColumns
from ncu_roof.base.matching import MatchBy
from ncu_roof.compare.pairs import match_rows

FIELDS = ("name", "grid", "block")
Launch = tuple[str, str | None, str | None]
ON = {MatchBy.NAME_SHAPE: list(FIELDS), MatchBy.NAME: ["name"], MatchBy.ORDER: []}


def launches(rows: Sequence[Launch]) -> LaunchColumns:
    values = {}
    for i, field in enumerate(FIELDS):
        column = np.empty(len(rows), dtype=object)
        column[:] = [row[i] for row in rows]
        values[field] = column
    return LaunchColumns(len(rows), values, {})


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
    got = match_rows(launches(base), launches(head), match)
    assert tuple(a.tolist() for a in got) == merged(base, head, match)


def test_the_nth_launch_of_a_shape_pairs_with_the_nth() -> None:
    base = [("gemm", "(8, 1, 1)", None), ("add", None, None), ("gemm", "(8, 1, 1)", None)]
    head = [("gemm", "(8, 1, 1)", None), ("gemm", "(8, 1, 1)", None), ("gemm", "(8, 1, 1)", None)]
    base_rows, head_rows, occurrence = match_rows(launches(base), launches(head))
    assert base_rows.tolist() == [0, 2, -1, 1]  # the third gemm has no base; add only in the base
    assert head_rows.tolist() == [0, 1, 2, -1]
    assert occurrence.tolist() == [0, 1, 2, 0]


def test_missing_names_and_grids_pair_with_missing_ones() -> None:
    """None and NaN are both missing (as a merge takes them): they pair with each other."""
    base = launches([(None, None, "(1, 1, 1)")])  # type: ignore[list-item]
    head = launches([(float("nan"), None, "(1, 1, 1)")])  # type: ignore[list-item]
    for match in MatchBy:
        base_rows, head_rows, occurrence = match_rows(base, head, match)
        assert (base_rows.tolist(), head_rows.tolist(), occurrence.tolist()) == ([0], [0], [0])


def test_base_only_launches_are_numbered_among_their_equals() -> None:
    base = [("add", None, None), ("add", None, None), ("gemm", None, None)]
    base_rows, head_rows, occurrence = match_rows(launches(base), launches([("add", None, None)]))
    assert base_rows.tolist() == [0, 1, 2] and head_rows.tolist() == [0, -1, -1]
    assert occurrence.tolist() == [0, 1, 0]
