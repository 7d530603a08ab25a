"""Drawing one roofline panel with matplotlib's object API: log axes, roof lines and their labels,
kernel markers (one collection per tier and verdict) and diff arrows (`plot_marks`), kernel labels;
the labels placed greedily off other labels, markers and roof lines (`Placer`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.path import Path

from ncu_roof.analysis.records import device_name
from ncu_roof.base.text import launch_shape, plural, si
from ncu_roof.render.headline import times
from ncu_roof.render.plot_marks import draw_arrows, draw_markers
from ncu_roof.render.plot_panel import LABELLED_KERNELS, KernelPoint, Limits, Panel, RoofLine, axis_limits

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

TITLE_CHARS_PER_IN = 10  # characters of the 12 pt title per inch of panel width
FLOP_AXIS = ("Arithmetic intensity (FLOP/byte)", "FLOP/s", "Performance")  # x label, y unit, y label
LABEL_BOX = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}


def draw_chart(
    ax: Axes,
    renderer: RendererBase,
    p: Panel,
    ridge_xs: Sequence[float],
    pairs: Sequence[tuple[KernelPoint, KernelPoint]] = (),
    axis: tuple[str, str, str] = FLOP_AXIS,
) -> set[str]:
    """Every plot kind's panel (its log axes holding the points, arrows and `ridge_xs`), in the
    order the module says; the tiers it marked."""
    shown = [*p.points, *(pt for pair in pairs for pt in pair)]
    limits = axis_limits(
        [pt.intensity_flop_per_byte for pt in shown] + list(ridge_xs),
        [pt.flop_per_s for pt in shown] + [r.value for r in p.peaks],
    )
    log_axes(ax, limits, *axis)
    placer = Placer(ax.get_window_extent(renderer), renderer)
    placer.lines = draw_roofs(ax, p, limits)
    draw_markers(ax, p.points, placer.taken)
    draw_arrows(ax, pairs)
    label_roofs(ax, p, limits, placer)
    label_kernels(ax, p, placer)
    panel_title(ax, p)
    return {pt.tier for pt in p.points}


def panel_title(ax: Axes, p: Panel) -> None:
    """`NVIDIA A10G (device 1): 4 launches, 1.21 ms`: every plot's panel title (`device_name`), wrapped."""
    import textwrap

    chars = max(30, int(ax.bbox.width / ax.figure.dpi * TITLE_CHARS_PER_IN))  # a line of the title
    launches = plural(len(p.launches), "launch")
    title = f"{device_name(p.device)} (device {p.device.index}): {launches}, {si(p.total_s, 's')}"
    ax.set_title(textwrap.fill(title, chars), fontsize=12, parse_math=False, loc="left")


def log_axes(ax: Axes, limits: Limits, x_label: str, y_unit: str, y_label: str) -> None:
    """Log-log axes with SI-prefixed performance ticks (`10 TFLOP/s`) and plain intensity ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set(xscale="log", yscale="log", xlim=(limits.x_lo, limits.x_hi), ylim=(limits.y_lo, limits.y_hi))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10.0))
        axis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}" if value > 0 else ""))
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda value, _: si(value, y_unit, digits=3) if value > 0 else "")
    )
    ax.set(xlabel=x_label, ylabel=y_label)
    ax.grid(True, which="major", color="#e3e3e3", linewidth=0.6)
    ax.set_axisbelow(True)


def draw_roofs(ax: Axes, p: Panel, limits: Limits) -> list[Path]:
    """The panel's roofs, and their lines in display coordinates (labels must not cross them)."""
    top_peak = p.peaks[0].value if p.peaks else None
    widest = p.bands[0].value if p.bands else None
    segments: list[Path] = []

    def line(xs: tuple[float, float], ys: tuple[float, float], colour: str, **style: object) -> None:
        ax.plot(list(xs), list(ys), color=colour, zorder=2, solid_capstyle="butt", **style)  # type: ignore[arg-type]
        segments.append(Path(ax.transData.transform([(xs[0], ys[0]), (xs[1], ys[1])])))

    for band in p.bands:
        x_end = top_peak / band.value if top_peak else limits.x_hi
        line((limits.x_lo, x_end), (band.value * limits.x_lo, band.value * x_end), band.colour, linewidth=1.6)
    for peak in p.peaks:
        x_start = peak.value / widest if widest else limits.x_lo
        width, style = (1.8, "-") if peak is p.peaks[0] else (1.3, "--")  # below the top roof: dashed
        line((x_start, limits.x_hi), (peak.value, peak.value), peak.colour, linewidth=width, linestyle=style)
    for ridge_x, ridge_y in p.ridges:
        ax.plot(
            [ridge_x],
            [ridge_y],
            marker="o",
            markersize=5,
            markerfacecolor="white",
            markeredgecolor="black",
            markeredgewidth=1.0,
            zorder=4,
            linestyle="none",
        )
    return segments


def _roof_text(ax: Axes, xy: tuple[float, float], roof: RoofLine, shown: str, **style: Any) -> Text:
    """A roof's label, `DRAM 2.04 TB/s`, in its colour, boxed on white."""
    text = f"{roof.label} {roof.shown or shown}"
    return ax.text(
        *xy, text, fontsize=9, color=roof.colour, zorder=5, bbox=LABEL_BOX, parse_math=False, **style
    )


def label_roofs(ax: Axes, p: Panel, limits: Limits, placer: Placer) -> None:
    """Each roof's label on its line (a roof line is `placer.lines`' at its index: bands, then peaks)."""
    top_peak = p.peaks[0].value if p.peaks else None
    for index, band in enumerate(p.bands):
        (x0, y0), (x1, y1) = ax.transData.transform([(1.0, band.value), (10.0, 10.0 * band.value)])
        angle = math.degrees(math.atan2(y1 - y0, x1 - x0))
        x_first = max(limits.x_lo, limits.y_lo / band.value) * 1.4
        x_last = (top_peak / band.value) if top_peak else limits.x_hi
        xy = (x_first, band.value * x_first)
        style = {"rotation": angle, "rotation_mode": "anchor", "ha": "left", "va": "bottom"}
        text = _roof_text(ax, xy, band, si(band.value, "B/s"), **style)
        steps = [x_first * 1.35 ** (i + index) for i in range(24)]
        xs = [x for x in steps if x * 4 < x_last] or [x_first]
        candidates = [{"position": (x, band.value * x), "va": va} for va in ("bottom", "top") for x in xs]
        placer.place(text, candidates, own_line=index)
    for index, peak in enumerate(p.peaks, start=len(p.bands)):
        shown = si(peak.value, peak.unit)
        text = _roof_text(ax, (limits.x_hi, peak.value), peak, shown, ha="right", va="bottom")
        ys = ((peak.value * 1.04, "bottom"), (peak.value / 1.04, "top"))
        candidates = [
            {"position": (limits.x_hi / s, y), "va": va} for s in (1.15, 3.0, 8.0, 25.0) for y, va in ys
        ]
        placer.place(text, candidates, own_line=index)


def label_kernels(ax: Axes, p: Panel, placer: Placer) -> None:
    """The top kernel groups by time, `name ×3 · 41% of time` (of the device's time)."""
    names = [group.name for group, _ in p.drawn[:LABELLED_KERNELS]]  # one at two shapes: each its shape
    for (group, points), name in zip(p.drawn[:LABELLED_KERNELS], p.labels[0], strict=True):
        anchor = max(points, key=lambda q: q.intensity_flop_per_byte)
        shape = f" {launch_shape(group.lead.grid, group.lead.block)}" if names.count(group.name) > 1 else ""
        label = name + shape + times(group.count)
        if group.device_share is not None:
            label += f" · {100.0 * group.device_share:.0f}% of time"
        note = ax.annotate(
            label,
            xy=(anchor.intensity_flop_per_byte, anchor.flop_per_s),
            xytext=(10, 8),
            textcoords="offset points",
            fontsize=8,
            zorder=6,
            bbox=LABEL_BOX,
            parse_math=False,
            arrowprops={"arrowstyle": "-", "color": "#666666", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4},
        )
        x, y = ax.transData.transform((anchor.intensity_flop_per_byte, anchor.flop_per_s))
        placer.place(note, KERNEL_LABEL_PLACES, anchor=(float(x), float(y)))


KERNEL_LABEL_PLACES = [  # offset in points, aligned away from the marker
    {"position": (dx * scale, dy * scale), "ha": "left" if dx > 0 else "right" if dx < 0 else "center"}
    for scale in (1.0, 1.6, 2.5, 4.0, 6.0, 9.0, 13.0)
    for dx, dy in ((10, 8), (10, -16), (-10, 8), (-10, -16), (0, 12), (0, -20), (14, -4), (-14, -4))
]


class Placer:
    """Greedy label placement, in display coordinates (pixels): the first candidate whose box stays
    inside and overlaps nothing (other labels, markers) and crosses no roof line."""

    PAD_PX = 2.0

    def __init__(self, area: Bbox, renderer: RendererBase) -> None:
        self.area = area
        self.renderer = renderer
        self.taken: list[Sequence[float]] = []  # the extents (x0, y0, x1, y1) of labels and markers
        self.lines: list[Path] = []  # the roof lines, in display coordinates

    def cost(self, box: Bbox, own_line: int | None, anchor: tuple[float, float] | None) -> float:
        """Area outside the axes and over other labels and markers; a roof line through the box
        costs most, and one across the leader line from `anchor` (display coordinates) a lot."""
        crossing = sum(
            1 for i, line in enumerate(self.lines) if i != own_line and line.intersects_bbox(box, False)
        )
        leader = 0
        if anchor is not None:
            to_box = Path([anchor, ((box.x0 + box.x1) / 2.0, (box.y0 + box.y1) / 2.0)])
            leader = sum(1 for line in self.lines if line.intersects_path(to_box, False))
        overlap = _overlap_px2(box, self.taken)
        outside = box.width * box.height - _overlap_px2(box, [self.area.extents])
        return 10.0 * outside + 5.0 * overlap + 1e6 * crossing + 1e5 * leader

    def place(
        self,
        text: Text,
        candidates: Sequence[Mapping[str, Any]],
        own_line: int | None = None,
        anchor: tuple[float, float] | None = None,
    ) -> None:
        """Try each candidate (`text`'s properties there: position, alignment; an annotation's
        position in offset points): the first free one wins, else the first that costs least."""
        costs: list[float] = []
        for move in candidates:
            text.set(**move)
            costs.append(self.cost(self.box(text), own_line, anchor))
            if costs[-1] == 0.0:
                break
        text.set(**candidates[costs.index(min(costs))])
        self.taken.append(self.box(text).extents)

    def box(self, text: Text) -> Bbox:
        """The text's own box (an annotation's extent would include its leader line)."""
        from matplotlib.text import Annotation
        from matplotlib.text import Text as PlainText

        if isinstance(text, Annotation):
            text.update_positions(self.renderer)
        return PlainText.get_window_extent(text, self.renderer).padded(self.PAD_PX)


def _overlap_px2(a: Bbox, extents: Sequence[Sequence[float]]) -> float:
    """The area of `a` over each box, summed in order (as Python 3.11's `sum`, which 3.12 made
    compensated): in numpy, for a 100,000-launch panel's ~600 markers made ~140,000 Python calls."""
    if not extents:
        return 0.0
    b = np.array(extents, dtype=float)
    width = np.minimum(a.x1, b[:, 2]) - np.maximum(a.x0, b[:, 0])
    height = np.minimum(a.y1, b[:, 3]) - np.maximum(a.y0, b[:, 1])
    return float(np.cumsum(np.where((width > 0) & (height > 0), width * height, 0.0))[-1])
