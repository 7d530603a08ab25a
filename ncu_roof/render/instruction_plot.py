"""The instruction roofline (Ding & Williams, "An Instruction Roofline Model for GPUs", PMBS
2019), one panel per device, as SVG, PNG or PDF bytes in the FLOP roofline's style. x = warp
instructions per memory transaction (a point per tier), y = warp instructions per second; the roof
is the issue peak (SMs x schedulers x SM clock), each diagonal a tier's transaction rate
(bandwidth / transaction size, labelled with the bandwidth). Launches of one kernel and shape are
one marker per tier, at their summed instructions over their summed transactions and time. A
device without warp-instruction counts gets a panel that says so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.groups import KernelGroup
from ncu_roof.analysis.model import TRANSACTION_BYTES
from ncu_roof.analysis.records import Device
from ncu_roof.base.text import si
from ncu_roof.base.vocabulary import TIER_NAMES
from ncu_roof.errors import UsageError
from ncu_roof.render.formats import RenderOptions
from ncu_roof.render.plot import draw_figure, plot_devices, rendered
from ncu_roof.render.plot_draw import draw_chart, panel_title
from ncu_roof.render.plot_panel import (
    OTHER_TIER_COLOUR,
    PRECISION_COLOURS,
    TIER_COLOURS,
    KernelPoint,
    Panel,
    RoofLine,
    device_groups,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure

NO_INSTRUCTIONS_HINT = (
    "collect smsp__inst_executed.sum (with the byte counters), e.g. ncu --set full, "
    "or ncu --metrics smsp__inst_executed.sum,dram__bytes.sum,lts__t_bytes.sum,..."
)
ISSUE_COLOUR = PRECISION_COLOURS["fp32"]  # a compute roof: warm, as the FLOP roofline's
X_LABEL = "Instruction intensity (warp instructions/transaction)"
Y_UNIT = "inst/s"  # warp instructions per second: `100 Ginst/s`, as `100 TFLOP/s`
Y_LABEL = "Performance (warp instructions)"
Roof = dict[str, Any]  # a launch's `instruction_roofline`, as Polars gives a struct


def render_instruction_plot(
    analysis: Analysis, *, fmt: str = "svg", options: RenderOptions | None = None
) -> bytes:
    """The instruction roofline of every device that ran kernels (or of `options.device`)."""
    opts = options or RenderOptions()
    return rendered(fmt, opts, lambda: _figure(analysis, opts))


def _figure(analysis: Analysis, options: RenderOptions) -> Figure:
    drawn = [_panel(analysis, d) for d in plot_devices(analysis, options.device)]
    if not any(p.points for p, _ in drawn):
        which = f"device {options.device}" if options.device is not None else "any device"
        raise UsageError(
            f"nothing to draw: no kernel of {which} has warp-instruction counts and memory traffic",
            hint=NO_INSTRUCTIONS_HINT,
        )
    every = [r for _, roofs in drawn for r in roofs]
    return draw_figure([p for p, _ in drawn], options, lambda wrap: [_caption(every, wrap)], _draw)


def _panel(analysis: Analysis, device: Device) -> tuple[Panel, list[Roof]]:
    """The device's kernel groups that have an instruction roofline, their points and roofs; the
    instruction rooflines of their launches."""
    groups = device_groups(analysis, device)
    rows = [j for g in groups for j in g.rows]
    launches = analysis.launches[rows]
    by_row = dict(zip(rows, launches.select("instruction_roofline", "duration_s").iter_rows(), strict=True))
    drawn = [(g, points) for g in groups if (points := _points(g, by_row))]
    roofs = [roof for g, _ in drawn for j in g.rows if (roof := by_row[j][0]) is not None]
    drawable = sum(g.count for g, _ in drawn)
    return Panel.of(analysis, device, launches, drawn, drawable, (*_roofs(roofs), ())), roofs


def _points(group: KernelGroup, by_row: Mapping[int, tuple[Roof | None, float | None]]) -> list[KernelPoint]:
    """One point per tier: the group's warp instructions over its transactions and its time
    (over the launches that have both), where finite and positive (log axes)."""
    inst = 0.0
    seconds = 0.0
    transactions: dict[str, float] = {}
    for roof, duration_s in (by_row[j] for j in group.rows):
        if roof is None or not roof["warp_inst"] or not duration_s:
            continue
        inst += roof["warp_inst"]
        seconds += duration_s
        for tier, x in roof["intensity_warp_inst_per_transaction"].items():
            if x is not None and math.isfinite(x) and x > 0:
                transactions[tier] = transactions.get(tier, 0.0) + roof["warp_inst"] / x
    if inst <= 0 or seconds <= 0:
        return []
    return [KernelPoint(group, tier, inst / n, inst / seconds) for tier, n in transactions.items() if n > 0]


def _roofs(records: Sequence[Roof]) -> tuple[list[RoofLine], list[RoofLine]]:
    """The issue peak, and one diagonal per tier (largest first): medians over the drawn launches."""
    issues = [r["issue_peak_warp_inst_per_s"] for r in records if r["issue_peak_warp_inst_per_s"]]
    issue = statistics.median(issues) if issues else None
    peaks = [RoofLine("Issue", issue, ISSUE_COLOUR, Y_UNIT)] if issue else []
    bands = []
    for tier in TRANSACTION_BYTES:
        rates = [p for r in records if (p := r["transaction_peak_per_s"].get(tier)) is not None]
        rate = statistics.median(rates) if rates else None
        if rate and math.isfinite(rate) and rate > 0:
            colour = TIER_COLOURS.get(tier, OTHER_TIER_COLOUR)
            shown = si(rate * TRANSACTION_BYTES[tier], "B/s")
            bands.append(RoofLine(TIER_NAMES.get(tier, tier), rate, colour, shown=shown))
    return peaks, sorted(bands, key=lambda b: -b.value)


def _draw(ax: Axes, renderer: RendererBase, p: Panel) -> set[str]:
    if not p.points:
        panel_title(ax, p.device, len(p.launches), p.total_s)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(
            0.5,
            0.5,
            "no warp-instruction counts in this device's launches\n"
            "(collect smsp__inst_executed.sum: ncu --set full)",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=10,
            color="#333333",
        )
        return set()
    ridge_xs = [p.peaks[0].value / b.value for b in p.bands if p.peaks]  # in the limits, not drawn
    return draw_chart(ax, renderer, p, ridge_xs, axis=(X_LABEL, Y_UNIT, Y_LABEL))


def _caption(records: Sequence[Roof], wrap: int) -> str:
    import textwrap

    sizes = ", ".join(f"{TIER_NAMES.get(t, t)} {b:g} B" for t, b in TRANSACTION_BYTES.items())
    source = next((r["issue_peak_source"] for r in records if r["issue_peak_source"]), None)
    text = (
        "Instruction roofline (Ding & Williams): warp instructions per memory transaction; each "
        f"diagonal is a tier's bandwidth over its transaction size ({sizes}); "
        f"issue peak = {source or 'unknown'}."
    )
    return textwrap.fill(text, wrap)
