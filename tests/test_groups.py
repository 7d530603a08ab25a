"""A group's row (several launches of one kernel and shape): its figures are its launches',
combined, so that time, % of roof and what it could save tell one story."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import polars as pl
import pytest
from conftest import analyzed
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.core import analyze
from ncu_roof.analysis.groups import NO_NVTX, KernelGroup, _grouped, group_kernels
from ncu_roof.base.vocabulary import GroupBy
from ncu_roof.ingest import read_input
from ncu_roof.pipeline import example_path


def _multi_launch_groups(path: Path) -> list[KernelGroup]:
    return [g for g in group_kernels(analyzed(path)) if g.count > 1]


def test_a_groups_figures_combine_its_launches() -> None:
    groups = _multi_launch_groups(Path(example_path()))
    assert groups, "the example repeats silu_kernel_vector"
    for g in groups:
        launches, figures = [g.kernels[j] for j in g.rows], g.figures
        assert figures.name == g.lead.name and figures.id == g.lead.id
        flop = math.fsum(k.flop["total"] or 0.0 for k in launches)
        dram = math.fsum(k.bytes["dram"] or 0.0 for k in launches)
        time = math.fsum(k.duration_s or 0.0 for k in launches)
        assert figures.flop["total"] == pytest.approx(flop) and figures.bytes["dram"] == pytest.approx(dram)
        assert figures.achieved_flop_per_s == pytest.approx(flop / time)
        assert figures.intensity_flop_per_byte["dram"] == pytest.approx(flop / dram)
        # % of roof is the time at the roofs over the time: what the group could save agrees
        assert g.headroom_complete and g.headroom_s is not None and g.total_duration_s is not None
        assert figures.pct_of_roof == pytest.approx(100 * (1 - g.headroom_s / g.total_duration_s))
        assert figures.attainable_flop_per_s is not None and figures.achieved_flop_per_s is not None
        assert 100 * figures.achieved_flop_per_s / figures.attainable_flop_per_s == pytest.approx(
            figures.pct_of_roof
        )
        # SOL percentages weighted by each launch's time
        sm = math.fsum((k.sol_pct["sm"] or 0.0) * (k.duration_s or 0.0) for k in launches) / time
        assert figures.sol_pct["sm"] == pytest.approx(sm)
        l1 = math.fsum((k.pct_of_bandwidth["l1"] or 0.0) * (k.duration_s or 0.0) for k in launches) / time
        assert figures.pct_of_bandwidth["l1"] == pytest.approx(l1)
        # and what its busiest units allow as they run, summed (the group's own figure too)
        allowed = math.fsum(k.headroom_sol_s or 0.0 for k in launches)
        assert figures.headroom_sol_s == pytest.approx(allowed) == g.headroom_sol_s


def test_a_single_launchs_figures_are_its_own() -> None:
    for g in group_kernels(analyzed(Path(example_path()))):
        if g.count == 1:
            assert g.figures == g.lead


_CELLS = st.sampled_from(["k", "k2", "", None, "(no NVTX range)"])


@given(
    st.lists(
        st.tuples(_CELLS, _CELLS, _CELLS, _CELLS, st.integers(0, 2), st.sampled_from([None, 1.0, 2.0])),
        max_size=40,
    )
)
def test_launches_are_grouped_by_their_key_in_first_launch_order(
    rows: list[tuple[str | None, str | None, str | None, str | None, int, float | None]],
) -> None:
    """The groups are those of a dict of the launches' keys: the same keys, in
    first-launch order, each launch in its key's group, slowest first and ties in launch order
    (by kernel and launch shape, and by NVTX range, a launch in none grouped as `NO_NVTX`)."""
    names, grids, blocks, nvtx, devices, durations = (
        (list(c) for c in zip(*rows, strict=True)) if rows else ([],) * 6
    )
    launches = pl.DataFrame(
        {
            "name": [n or "" for n in names],
            "grid": grids,
            "block": blocks,
            "nvtx": nvtx,
            "device": devices,
            "duration_s": durations,
            "notes": [[] for _ in rows],
        },
        schema_overrides={c: pl.String for c in ("name", "grid", "block", "nvtx")}
        | {"device": pl.Int64, "duration_s": pl.Float64, "notes": pl.List(pl.String)},
    ).with_row_index("row")
    by_kernel = [(n or "", g, b, d) for n, g, b, d in zip(names, grids, blocks, devices, strict=True)]
    by_range = [(NO_NVTX if r is None else r, d) for r, d in zip(nvtx, devices, strict=True)]
    for by, keys in ((GroupBy.KERNEL, by_kernel), (GroupBy.NVTX, by_range)):
        expected: dict[object, list[int]] = {}
        for j, key in enumerate(keys):
            expected.setdefault(key, []).append(j)
        slowest = {k: sorted(r, key=lambda j: -(durations[j] or -1.0)) for k, r in expected.items()}
        for notes in (True, False):  # the grouping alike with and without the groups' notes
            table = _grouped(launches, by, notes)
            columns = ["name", "grid", "block", "device"] if by is GroupBy.KERNEL else ["nvtx", "device"]
            assert list(table.select(columns).iter_rows()) == list(slowest)
            assert table.get_column("rows").to_list() == list(slowest.values())


def test_groups_made_without_their_notes_differ_only_in_them() -> None:
    for by in GroupBy:
        analysis = analyze([read_input(example_path())])  # its own: `analyzed` keeps one per session
        without, with_notes = group_kernels(analysis, by, notes=False), group_kernels(analysis, by)
        assert any(g.notes for g in with_notes) and not any(g.notes for g in without)
        assert [dataclasses.replace(g, notes=()) for g in with_notes] == without
        # once made with their notes (the HTML's summary), those serve where notes are not needed (its plot)
        assert group_kernels(analysis, by, notes=False) == with_notes
        # each group's notes: its launches' notes, each once, the slowest launch's first
        for g in with_notes:
            said = [n for j in g.rows for n in g.kernels[j].notes]
            assert g.notes == tuple(dict.fromkeys(said))
