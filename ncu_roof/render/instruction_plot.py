"""The instruction roofline of one device (Ding & Williams, "An Instruction Roofline Model for GPUs",
PMBS 2019), as SVG or PNG bytes (matplotlib object API, no pyplot).

x = instruction intensity (warp instructions per memory transaction, one point per tier),
y = warp instructions per second; the horizontal roof is the issue peak (SMs x schedulers x SM
clock), each diagonal a tier's transaction rate (bandwidth / transaction size). Same input, same
bytes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ncu_roof.analysis import Analysis
from ncu_roof.errors import UsageError
from ncu_roof.model import TRANSACTION_BYTES
from ncu_roof.records import Device, InstructionRoofline, Kernel
from ncu_roof.render.plot import FORMATS, PANEL_SIZE_IN, PNG_DPI, RC, pick_device, save_figure
from ncu_roof.render.plot_draw import OTHER_TIER_MARKER, TIER_MARKERS
from ncu_roof.render.summary import VERDICT_COLOURS
from ncu_roof.text import one_line, si
from ncu_roof.vocabulary import TIER_NAMES, Bound

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

NO_INSTRUCTIONS_HINT = (
    "collect smsp__inst_executed.sum (with the byte counters), e.g. ncu --set full, "
    "or ncu --metrics smsp__inst_executed.sum,dram__bytes.sum,lts__t_bytes.sum,..."
)


def render_instruction_plot(analysis: Analysis, *, fmt: str = "svg", device: int | None = None) -> bytes:
    if fmt not in FORMATS:
        raise UsageError(f"plot format {fmt!r} is not supported", hint="write .svg or .png")
    from matplotlib import rc_context

    chosen = pick_device(analysis, device)
    kernels = [k for k in analysis.kernels if k.device == chosen.index and _points(k)]
    if not kernels:
        raise UsageError(
            "nothing to draw: no kernel of this device has warp-instruction counts and memory traffic",
            hint=NO_INSTRUCTIONS_HINT,
        )
    with rc_context(RC):  # type: ignore[arg-type]
        return save_figure(_figure(chosen, kernels), fmt, PNG_DPI)


def _points(kernel: Kernel) -> list[tuple[str, float, float]]:
    """(tier, warp instructions per transaction, warp instructions per second) of one kernel."""
    roof = kernel.instructions
    if roof is None or roof.warp_inst_per_s is None or roof.warp_inst_per_s <= 0:
        return []
    return [
        (tier, x, roof.warp_inst_per_s)
        for tier, x in roof.intensity_warp_inst_per_transaction.items()
        if math.isfinite(x) and x > 0
    ]


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _figure(device: Device, kernels: Sequence[Kernel]) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rooflines = [k.instructions for k in kernels if k.instructions is not None]
    issue = _median([r.issue_peak_warp_inst_per_s for r in rooflines if r.issue_peak_warp_inst_per_s])
    tiers = sorted(
        {t for r in rooflines for t in r.transaction_peak_per_s}, key=list(TRANSACTION_BYTES).index
    )
    roofs = {
        t: _median([r.transaction_peak_per_s[t] for r in rooflines if t in r.transaction_peak_per_s])
        for t in tiers
    }
    points = [(k, p) for k in kernels for p in _points(k)]
    xs = [x for _, (_, x, _) in points]
    ys = [y for _, (_, _, y) in points] + ([issue] if issue else [])
    x_lo, x_hi = min(xs) / 10, max(xs) * 10
    y_lo, y_hi = min(ys) / 10, max(ys) * 3

    figure = Figure(figsize=PANEL_SIZE_IN)
    FigureCanvasAgg(figure)
    ax = figure.add_axes((0.08, 0.14, 0.70, 0.78))
    _axes(ax, x_lo, x_hi, y_lo, y_hi)
    _draw_roofs(ax, roofs, issue, (x_lo, x_hi, y_lo, y_hi))
    for kernel, (tier, x, y) in points:
        ax.scatter(
            [x],
            [y],
            s=36,
            marker=TIER_MARKERS.get(tier, OTHER_TIER_MARKER),
            c=VERDICT_COLOURS[kernel.bound],
            edgecolors="black",
            linewidths=0.5,
            zorder=3,
        )
    _legend(figure, {t for _, (t, _, _) in points}, {k.bound for k in kernels})
    title = one_line(device.name or device.roofs.name or "unknown GPU")
    ax.set_title(f"{title} — instruction roofline ({len(kernels)} kernels)", fontsize=12, loc="left")
    figure.text(
        0.01, 0.01, _caption(tiers, rooflines), fontsize=7, color="#333333", va="bottom", ha="left", wrap=True
    )
    return figure


def _draw_roofs(
    ax: Axes,
    roofs: Mapping[str, float | None],
    issue: float | None,
    limits: tuple[float, float, float, float],
) -> None:
    """One diagonal per tier (transactions per second), up to the issue peak's horizontal."""
    x_lo, x_hi, y_lo, y_hi = limits
    for tier, rate in roofs.items():
        if rate is None:
            continue
        ceiling = issue if issue else y_hi
        x_ridge = ceiling / rate
        ax.plot([x_lo, min(x_ridge, x_hi)], [rate * x_lo, rate * min(x_ridge, x_hi)], color="#555555", lw=1.0)
        x_label = max(x_lo * 1.5, y_lo * 1.5 / rate)  # where the diagonal enters the axes
        ax.annotate(
            f"{TIER_NAMES.get(tier, tier)} {si(rate, 'trans/s')}",
            (x_label, rate * x_label),
            fontsize=8,
            color="#333333",
            rotation=30,
        )
    if issue:
        ax.axhline(issue, color="black", lw=1.4)
        ax.annotate(f"issue peak {si(issue, 'warp inst/s')}", (x_hi / 40, issue * 1.1), fontsize=8)


def _caption(tiers: Sequence[str], rooflines: Sequence[InstructionRoofline]) -> str:
    sizes = ", ".join(f"{TIER_NAMES.get(t, t)} {TRANSACTION_BYTES[t]:g} B" for t in tiers)
    source = next((r.issue_peak_source for r in rooflines if r.issue_peak_source), None)
    return (
        f"Ding & Williams instruction roofline: warp instructions per transaction ({sizes}); "
        f"issue peak = {source or 'unknown'}. Marker shape = tier, colour = verdict."
    )


def _axes(ax: Axes, x_lo: float, x_hi: float, y_lo: float, y_hi: float) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("Instruction intensity [warp instructions / transaction]")
    ax.set_ylabel("Performance [warp instructions / s]")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


def _legend(figure: Figure, tiers: set[str], bounds: set[Bound]) -> None:
    from matplotlib.lines import Line2D

    def handle(marker: str, face: str) -> Line2D:
        return Line2D([], [], marker=marker, linestyle="", markerfacecolor=face, markeredgecolor="black")

    shapes = [handle(TIER_MARKERS.get(t, OTHER_TIER_MARKER), "white") for t in sorted(tiers)]
    colours = [handle("o", VERDICT_COLOURS[b]) for b in sorted(bounds, key=lambda b: b.value)]
    labels = [TIER_NAMES.get(t, t) for t in sorted(tiers)] + [
        b.value for b in sorted(bounds, key=lambda b: b.value)
    ]
    figure.legend(shapes + colours, labels, loc="upper left", bbox_to_anchor=(0.79, 0.92), fontsize=8)
