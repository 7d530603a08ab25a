"""A group's row (several launches of one kernel and shape): its figures are its launches',
combined, so that time, % of roof and what it could save tell one story."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import analyzed

from ncu_roof.cli.analyze import example_path
from ncu_roof.groups import KernelGroup, group_kernels


def _multi_launch_groups(path: Path) -> list[KernelGroup]:
    return [g for g in group_kernels(analyzed(path)) if g.count > 1]


def test_a_groups_figures_combine_its_launches() -> None:
    groups = _multi_launch_groups(Path(example_path()))
    assert groups, "the example repeats silu_kernel_vector"
    for g in groups:
        launches, figures = g.launches, g.figures
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


def test_a_single_launchs_figures_are_its_own() -> None:
    for g in group_kernels(analyzed(Path(example_path()))):
        if g.count == 1:
            assert g.figures == g.lead
