"""The hierarchical roofline, one panel per device, as SVG, PNG or PDF bytes (no pyplot); the same
input gives byte-identical SVG and PDF. Launches of one kernel (name, launch shape, device) are one
marker per tier (`plot_panel`; their marks: `plot_marks`), one collection per tier and verdict, so
100,000 launches cost about what 100 do; past `MAX_MARKERS` kernels the smallest are thinned out.

The instruction roofline (Ding & Williams, "An Instruction Roofline Model for GPUs", PMBS 2019), likewise: x =
warp instructions per memory transaction, y = warp instructions per second; the roof is the issue peak (SMs x
schedulers x SM clock), each diagonal a tier's transaction rate (bandwidth / transaction size, labelled with
the bandwidth); a kernel's marker per tier is at its launches' summed instructions over summed transactions
and time. A device without warp-instruction counts gets a panel that says so."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from io import BytesIO
from typing import TYPE_CHECKING, Any

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.model import TRANSACTION_BYTES
from ncu_roof.analysis.records import Device
from ncu_roof.base.text import plural
from ncu_roof.base.vocabulary import TIER_NAMES
from ncu_roof.errors import UsageError
from ncu_roof.render.formats import RenderOptions
from ncu_roof.render.plot_draw import draw_chart, panel_title
from ncu_roof.render.plot_marks import draw_legend, group_verdict
from ncu_roof.render.plot_panel import INST_UNIT, Panel, Roof, arrow_points, caption, instruction_panel, panel

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure


PANEL_SIZE_IN = (10.0, 6.5)
PNG_DPI = 200
CAPTION_CHARS_PER_IN = 15  # characters of 8 pt text per inch of figure width
CAPTION_STYLE: dict[str, Any] = {"fontsize": 8, "color": "#333333", "linespacing": 1.3, "parse_math": False}
RC = {
    "svg.hashsalt": "ncu-roof",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 11.0,
    "mathtext.fontset": "dejavusans",
    "axes.unicode_minus": False,
    "path.simplify": False,
    "pdf.compression": 6,
    "axes.titley": 1.0,  # titles at the axes' top: nothing is drawn above the panels to place them over
}
NO_METADATA: dict[str, dict[str, str | None]] = {  # each format saved: the metadata it leaves out
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
    "png": {"Software": None},
}


def render_plot(
    analysis: Analysis, *, kind: str = "roofline", fmt: str = "svg", options: RenderOptions | None = None
) -> bytes:
    """The roofline (`kind` "instruction": the instruction roofline) of every device that ran kernels
    (or of `options.device`), drawn in the house style (`RC`) as SVG, PNG or PDF bytes."""
    if fmt not in NO_METADATA:  # not a format it saves
        raise UsageError(f"plot format {fmt!r} is not supported", hint="write .svg, .png or .pdf")
    from matplotlib import rc_context

    opts = options or RenderOptions()
    with rc_context(RC):  # type: ignore[arg-type]
        figure = _instruction_figure(analysis, opts) if kind == "instruction" else _figure(analysis, opts)
        return save_figure(figure, fmt, opts.dpi or PNG_DPI)


def plot_figure(analysis: Analysis, *, device: int | None = None) -> Figure:
    """The roofline of `device` (default: a panel per device) as a matplotlib `Figure` (`Analysis.plot()`)."""
    from matplotlib import rc_context

    with rc_context(RC):  # type: ignore[arg-type]
        return _figure(analysis, RenderOptions(device=device))


def plot_devices(analysis: Analysis, index: int | None) -> list[Device]:
    """The devices to draw: `index` alone, else every device that ran kernels, in device order."""
    if not analysis.devices:
        raise UsageError("nothing to plot: the input has no devices", hint="check the report")
    if index is not None:
        if (chosen := next((d for d in analysis.devices if d.index == index), None)) is None:
            raise UsageError(f"no device {index}", hint=f"devices: 0..{len(analysis.devices) - 1}")
        return [chosen]
    ran = set(analysis.launches.get_column("device").to_list())
    return [d for d in analysis.devices if d.index in ran] or [analysis.devices[0]]


LEFT_IN, RIGHT_IN, TOP_IN, BOTTOM_IN = 1.3, 0.3, 1.05, 0.65  # the margins around the panels
GAP_X_IN, GAP_Y_IN = 1.5, 1.05  # between panels
CAPTION_LINE_IN = 0.16  # a caption line's height
TITLE_ROOM_IN = 0.45  # above the panels when no legend is drawn: the panel titles alone


def _figure(analysis: Analysis, options: RenderOptions) -> Figure:
    panels = [panel(analysis, d) for d in plot_devices(analysis, options.device)]
    return draw_figure(
        panels,
        options,
        lambda wrap: [caption(p, options.caption == "full", len(panels) > 1, wrap) for p in panels],
        lambda ax, renderer, p: draw_chart(
            ax, renderer, p, [x for x, _ in p.ridges], arrow_points(options.arrows, p.groups)
        ),
    )


def draw_figure(
    panels: Sequence[Panel],
    options: RenderOptions,
    captions: Callable[[int], list[str]],
    draw: Callable[[Axes, RendererBase, Panel], set[str]],
) -> Figure:
    """Every plot kind's figure, laid out alike: panels two per row, each by `draw` (which returns its tiers);
    above, the legend's room (titles' only without kernels or arrows); below, `captions` wrapped."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    columns = min(2, len(panels))
    rows = math.ceil(len(panels) / columns)
    width = options.width_in or PANEL_SIZE_IN[0] * (1.0 if columns == 1 else 0.8 * columns)
    wrap = max(40, int(width * CAPTION_CHARS_PER_IN))  # characters per caption line
    texts = [] if options.caption == "none" else captions(wrap)
    bottom = BOTTOM_IN + CAPTION_LINE_IN * sum(c.count("\n") + 1 for c in texts) + 0.1
    top = TOP_IN if options.arrows or any(p.groups for p in panels) else TITLE_ROOM_IN
    height = options.height_in or (
        top + bottom + (PANEL_SIZE_IN[1] - 1.6) * (1.0 if rows == 1 else 0.85 * rows)
    )
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    panel_w = (width - LEFT_IN - RIGHT_IN - GAP_X_IN * (columns - 1)) / columns
    panel_h = (height - top - bottom - GAP_Y_IN * (rows - 1)) / rows
    if panel_w < 1.0 or panel_h < 1.0:
        raise UsageError(
            f"a {width:g} × {height:g} in figure leaves no room for {plural(len(panels), 'panel')}",
            hint="raise --width/--height, or draw one device with --device N",
        )
    if texts:
        figure.text(0.01, 0.08 / height, "\n".join(texts), va="bottom", ha="left", **CAPTION_STYLE)
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    tiers: set[str] = set()
    for i, p in enumerate(panels):
        row, col = divmod(i, columns)
        x0 = LEFT_IN + col * (panel_w + GAP_X_IN)
        y0 = height - top - (row + 1) * panel_h - row * GAP_Y_IN
        tiers |= draw(
            figure.add_axes((x0 / width, y0 / height, panel_w / width, panel_h / height)), renderer, p
        )
    draw_legend(figure, {group_verdict(g) for p in panels for g in p.groups}, tiers, bool(options.arrows))
    return figure


def save_figure(figure: Figure, fmt: str, dpi: float) -> bytes:
    """Fixed metadata (no date, no tool versions): the same figure gives the same bytes."""
    buffer = BytesIO()
    figure.savefig(buffer, format=fmt, dpi=dpi, metadata=NO_METADATA[fmt])
    return buffer.getvalue()


NO_INSTRUCTIONS_HINT = (
    "collect smsp__inst_executed.sum (with the byte counters), e.g. ncu --set full, "
    "or ncu --metrics smsp__inst_executed.sum,dram__bytes.sum,lts__t_bytes.sum,..."
)
X_LABEL = "Instruction intensity (warp instructions/transaction)"
Y_LABEL = "Performance (warp instructions)"


def _instruction_figure(analysis: Analysis, options: RenderOptions) -> Figure:
    drawn = [instruction_panel(analysis, d) for d in plot_devices(analysis, options.device)]
    if not any(p.points for p, _ in drawn):
        which = f"device {options.device}" if options.device is not None else "any device"
        raise UsageError(
            f"nothing to draw: no kernel of {which} has warp-instruction counts and memory traffic",
            hint=NO_INSTRUCTIONS_HINT,
        )
    every, panels = [r for _, roofs in drawn for r in roofs], [p for p, _ in drawn]
    return draw_figure(
        panels, options, lambda wrap: [_instruction_caption(every, panels, wrap)], _draw_instructions
    )


def _draw_instructions(ax: Axes, renderer: RendererBase, p: Panel) -> set[str]:
    if not p.points:
        panel_title(ax, p)
        ax.set(xticks=[], yticks=[])
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
    return draw_chart(ax, renderer, p, ridge_xs, axis=(X_LABEL, INST_UNIT, Y_LABEL))


def _instruction_caption(records: Sequence[Roof], panels: Sequence[Panel], wrap: int) -> str:
    """What is drawn, and the `[K1] …` lines of each panel's labels (`Device N:` where several)."""
    import textwrap

    sizes = ", ".join(f"{TIER_NAMES.get(t, t)} {b:g} B" for t, b in TRANSACTION_BYTES.items())
    source = next((r["issue_peak_source"] for r in records if r["issue_peak_source"]), None)
    text = (
        "Instruction roofline (Ding & Williams): warp instructions per memory transaction; each "
        f"diagonal is a tier's bandwidth over its transaction size ({sizes}); "
        f"issue peak = {source or 'unknown'}."
    )
    keys = [f"Device {p.device.index}: {k}" if len(panels) > 1 else k for p in panels for k in p.labels[1]]
    return "\n".join(textwrap.fill(line, wrap) for line in [text, *keys])
