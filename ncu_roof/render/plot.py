"""The hierarchical roofline of one device, as SVG or PNG bytes (matplotlib object API, no pyplot).

One diagonal per memory tier and one horizontal roof per precision, each labelled along its line
(tiers or precisions with the same value share a line); ridge points against the reference compute
roof are marked on it. Each kernel is drawn at its intensity for every tier it has, its markers
joined: area ∝ share of time, colour = verdict, shape = tier. The top kernels are labelled by a
greedy placer that avoids other labels and markers. The same input gives byte-identical SVG.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING, Literal

from ncu_roof.analysis import Analysis, Device, Kernel
from ncu_roof.errors import UsageError
from ncu_roof.model import Bound
from ncu_roof.render.text import TIER_NAMES, one_line, shorten, si

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

FORMATS = ("svg", "png")
Arrow = tuple[Kernel, Kernel]  # (base, head): drawn as a before → after arrow

VERDICT_COLOURS = {
    Bound.MEMORY: "#1f5fa8",
    Bound.COMPUTE: "#c0392b",
    Bound.LATENCY: "#e08e0b",
    Bound.BALANCED: "#8e44ad",
    Bound.UNKNOWN: "#7f7f7f",
}
VERDICT_WORDS = {
    Bound.MEMORY: "memory-bound",
    Bound.COMPUTE: "compute-bound",
    Bound.LATENCY: "latency-bound",
    Bound.BALANCED: "balanced",
    Bound.UNKNOWN: "unknown",
}
TIER_MARKERS = {"dram": "o", "l2": "s", "l1": "^", "shared": "D"}
OTHER_TIER_MARKER = "v"
PRECISION_NAMES = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "tensor": "Tensor"}
LABELLED_KERNELS = 8
SAME_ROOF_REL = 0.005  # roofs within 0.5 % share one line
FIG_SIZE_IN = (11.0, 7.0)
PNG_DPI = 200
RC = {
    "svg.hashsalt": "ncu-roof",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 10.0,
    "mathtext.fontset": "dejavusans",
    "axes.unicode_minus": False,
    "path.simplify": False,
}


@dataclass(frozen=True)
class KernelPoint:
    kernel: Kernel
    tier: str
    intensity_flop_per_byte: float
    flop_per_s: float


@dataclass(frozen=True)
class RoofLine:
    """One drawn roof: names sharing it (`L1/Shared`), its value in FLOP/s or byte/s."""

    label: str
    value: float


@dataclass(frozen=True)
class Limits:
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float


def render_plot(
    analysis: Analysis,
    *,
    fmt: str = "svg",
    device: int | None = None,
    arrows: list[Arrow] | None = None,
) -> bytes:
    """The roofline of `device` (default: the device with the most kernel time) as SVG or PNG."""
    if fmt not in FORMATS:
        raise UsageError(f"plot format {fmt!r} is not supported", hint="write .svg or .png")
    from matplotlib import rc_context

    with rc_context(RC):  # type: ignore[arg-type]
        return _save(plot_figure(analysis, device=device, arrows=arrows), fmt)


def plot_figure(
    analysis: Analysis, *, device: int | None = None, arrows: list[Arrow] | None = None
) -> Figure:
    """The roofline of `device` as a matplotlib `Figure` (the Python API's `Analysis.plot()`)."""
    from matplotlib import rc_context

    with rc_context(RC):  # type: ignore[arg-type]
        return _figure(analysis, pick_device(analysis, device), arrows or [])


def pick_device(analysis: Analysis, index: int | None) -> Device:
    if not analysis.devices:
        raise UsageError("nothing to plot: the input has no devices", hint="check the report")
    if index is not None:
        for dev in analysis.devices:
            if dev.index == index:
                return dev
        raise UsageError(f"no device {index}", hint=f"devices: 0..{len(analysis.devices) - 1}")
    return max(analysis.devices, key=lambda d: (_device_time_s(analysis, d), -d.index))


def _device_time_s(analysis: Analysis, device: Device) -> float:
    return sum(k.duration_s or 0.0 for k in analysis.kernels if k.device == device.index)


def kernel_points(kernel: Kernel) -> list[KernelPoint]:
    """Drawable points of a kernel: finite, positive intensity and FLOP/s (log axes)."""
    perf = kernel.achieved_flop_per_s
    if perf is None or not math.isfinite(perf) or perf <= 0:
        return []
    return [
        KernelPoint(kernel, tier, ai, perf)
        for tier, ai in kernel.intensity_flop_per_byte.items()
        if ai is not None and math.isfinite(ai) and ai > 0
    ]


def merged_roofs(values: Mapping[str, float], names: Mapping[str, str]) -> list[RoofLine]:
    """Roofs by value, largest first; keys whose values agree within 0.5 % share one line."""
    groups: list[tuple[list[str], float]] = []
    for key, value in sorted(values.items(), key=lambda kv: (-kv[1], kv[0])):
        if not (math.isfinite(value) and value > 0):
            continue
        if groups and abs(groups[-1][1] - value) <= SAME_ROOF_REL * groups[-1][1]:
            groups[-1][0].append(key)
        else:
            groups.append(([key], value))
    return [RoofLine(one_line("/".join(names.get(k, k) for k in keys)), value) for keys, value in groups]


def reference_precision(kernels: Sequence[Kernel], peaks: Mapping[str, float]) -> str | None:
    """The precision whose roof the ridge points use: the one most kernel time is spent in."""
    time_by_precision: dict[str, float] = {}
    for k in kernels:
        key = k.compute_precision
        if key is not None and key in peaks:
            time_by_precision[key] = time_by_precision.get(key, 0.0) + (k.duration_s or 0.0)
    if time_by_precision:
        return max(sorted(time_by_precision), key=lambda p: time_by_precision[p])
    return next((p for p in ("fp32", "fp64", "fp16", "tensor") if p in peaks), None)


def axis_limits(xs: Iterable[float], ys: Iterable[float]) -> Limits:
    """Limits that hold every point and ridge with margin; at least three decades each way."""
    x_values, y_values = list(xs), list(ys)
    x_lo, x_hi = _span(x_values, (1e-2, 1e3), right_margin=10.0)
    y_lo, y_hi = _span(y_values, (1e9, 1e15), right_margin=3.0)
    return Limits(x_lo, x_hi, y_lo, y_hi)


def _span(
    values: list[float], default: tuple[float, float], right_margin: float
) -> tuple[float, float]:
    good = [v for v in values if math.isfinite(v) and v > 0]
    if not good:
        return default
    lo = 10.0 ** math.floor(math.log10(min(good) / 2.0))
    hi = max(good) * right_margin
    if hi / lo < 1e3:
        lo = hi / 1e3
    return lo, hi


def label_text(name: str, launches: int, share: float | None) -> str:
    text = shorten(name, 40)
    if launches > 1:
        text += f" ×{launches}"
    if share is not None:
        text += f" · {100.0 * share:.0f}%"
    return text


def _figure(analysis: Analysis, device: Device, arrows: list[Arrow]) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    kernels = [k for k in analysis.kernels if k.device == device.index]
    points = [p for k in kernels for p in kernel_points(k)]
    arrow_pairs = [(a, b) for a, b in (_arrow_points(pair) for pair in arrows) if a and b]
    roofs = device.roofs
    peaks = merged_roofs(roofs.compute_flop_per_s, PRECISION_NAMES)
    bands = merged_roofs(roofs.bandwidth_byte_per_s, TIER_NAMES)
    ref = reference_precision(kernels, roofs.compute_flop_per_s)
    ref_peak = roofs.compute_flop_per_s.get(ref) if ref else None
    ridges = [(b, ref_peak / b.value, ref_peak) for b in bands] if ref_peak else []
    arrow_ends = [p for pair in arrow_pairs for p in pair]
    limits = axis_limits(
        [p.intensity_flop_per_byte for p in (*points, *arrow_ends)] + [x for _, x, _ in ridges],
        [p.flop_per_s for p in (*points, *arrow_ends)] + [r.value for r in peaks],
    )

    figure = Figure(figsize=FIG_SIZE_IN)
    canvas = FigureCanvasAgg(figure)
    ax = figure.add_axes((0.075, 0.17, 0.70, 0.74))
    _axes(ax, limits)
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
    placer = Placer(ax.get_window_extent(renderer), renderer)
    _draw_kernels(ax, kernels, placer)
    _draw_arrows(ax, arrow_pairs)
    _draw_roofs(ax, peaks, bands, ridges, limits, placer)
    _label_kernels(ax, kernels, placer)
    _legends(figure, {k.bound for k in kernels if kernel_points(k)}, {p.tier for p in points},
             bool(arrow_pairs))
    title = one_line(device.name or device.roofs.name or "unknown GPU")
    total_s = sum(k.duration_s or 0.0 for k in kernels)
    ax.set_title(
        f"{title} — hierarchical roofline ({len(kernels)} kernels, {si(total_s, 's')})",
        fontsize=12, parse_math=False, loc="left",
    )
    figure.text(0.01, 0.01, caption(device, kernels, ref), fontsize=7, color="#333333",
                va="bottom", ha="left", parse_math=False, linespacing=1.35)
    return figure


def _axes(ax: Axes, limits: Limits) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(limits.x_lo, limits.x_hi)
    ax.set_ylim(limits.y_lo, limits.y_hi)
    ax.set_xlabel("Arithmetic intensity [FLOP/byte]")
    ax.set_ylabel("Performance [FLOP/s]")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


class Placer:
    """Greedy label placement: the first candidate whose box stays inside and overlaps nothing."""

    PAD_PX = 2.0

    def __init__(self, area: Bbox, renderer: RendererBase) -> None:
        self.area = area
        self.renderer = renderer
        self.taken: list[Bbox] = []

    def block(self, box: Bbox) -> None:
        self.taken.append(box)

    def place(self, text: Text, candidates: Sequence[Callable[[], None]]) -> None:
        """Try each candidate (a function that moves `text`): the first free one wins, else the
        one that overlaps least (area outside the axes counts double)."""
        best: tuple[float, int] | None = None
        for i, move in enumerate(candidates):
            move()
            box = text.get_window_extent(self.renderer).padded(self.PAD_PX)
            cost = 2.0 * _outside_px2(box, self.area) + sum(_overlap_px2(box, t) for t in self.taken)
            if cost == 0.0:
                self.block(box)
                return
            if best is None or cost < best[0]:
                best = (cost, i)
        if best is not None:
            candidates[best[1]]()
            self.block(text.get_window_extent(self.renderer))


def _overlap_px2(a: Bbox, b: Bbox) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


def _outside_px2(box: Bbox, area: Bbox) -> float:
    return box.width * box.height - _overlap_px2(box, area)


def _marker_size_pt2(kernel: Kernel) -> float:
    return 25.0 + 400.0 * (kernel.time_share or 0.0)


def _draw_kernels(ax: Axes, kernels: Sequence[Kernel], placer: Placer) -> None:
    """Largest first, so small markers stay visible on top; each marker blocks label space."""
    from matplotlib.transforms import Bbox

    px_per_pt = ax.figure.dpi / 72.0
    for kernel in sorted(kernels, key=lambda k: (-(k.duration_s or 0.0), k.id)):
        points = sorted(kernel_points(kernel), key=lambda p: p.intensity_flop_per_byte)
        if not points:
            continue
        colour = VERDICT_COLOURS[kernel.bound]
        size = _marker_size_pt2(kernel)
        if len(points) > 1:
            ax.plot([p.intensity_flop_per_byte for p in points], [p.flop_per_s for p in points],
                    color=colour, linewidth=0.8, alpha=0.6, zorder=2.5)
        for point in points:
            ax.scatter([point.intensity_flop_per_byte], [point.flop_per_s], s=size,
                       marker=TIER_MARKERS.get(point.tier, OTHER_TIER_MARKER), c=colour,
                       edgecolors="black", linewidths=0.5, alpha=0.85, zorder=3,
                       gid=f"kernel-{kernel.id}-{point.tier}")
            x, y = ax.transData.transform((point.intensity_flop_per_byte, point.flop_per_s))
            r = math.sqrt(size) / 2.0 * px_per_pt
            placer.block(Bbox.from_extents(x - r, y - r, x + r, y + r))


def _arrow_points(pair: Arrow) -> tuple[KernelPoint | None, KernelPoint | None]:
    """Before and after at one tier both kernels have: the head's binding tier, else DRAM."""
    base = {p.tier: p for p in kernel_points(pair[0])}
    head = {p.tier: p for p in kernel_points(pair[1])}
    common = [t for t in head if t in base]
    if not common:
        return None, None
    tier = next((t for t in (pair[1].binding, "dram") if t in common), common[0])
    return base[tier], head[tier]


def _draw_arrows(ax: Axes, pairs: Sequence[tuple[KernelPoint, KernelPoint]]) -> None:
    for base, head in pairs:
        slower = (head.kernel.duration_s or 0.0) > (base.kernel.duration_s or 0.0)
        colour = "#c62828" if slower else "#2e7d32"
        start = (base.intensity_flop_per_byte, base.flop_per_s)
        end = (head.intensity_flop_per_byte, head.flop_per_s)
        ax.scatter([start[0]], [start[1]], s=_marker_size_pt2(base.kernel),
                   marker=TIER_MARKERS.get(base.tier, OTHER_TIER_MARKER), facecolors="none",
                   edgecolors="#555555", linewidths=0.8, zorder=3, gid=f"base-{base.kernel.id}")
        ax.annotate("", xy=end, xytext=start, zorder=3.5,
                    arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": 1.0,
                                "shrinkA": 3, "shrinkB": 5})


def _draw_roofs(
    ax: Axes,
    peaks: Sequence[RoofLine],
    bands: Sequence[RoofLine],
    ridges: Sequence[tuple[RoofLine, float, float]],
    limits: Limits,
    placer: Placer,
) -> None:
    top_peak = peaks[0].value if peaks else None
    widest = bands[0].value if bands else None
    for i, band in enumerate(bands):
        x_end = top_peak / band.value if top_peak else limits.x_hi
        ax.plot([limits.x_lo, x_end], [band.value * limits.x_lo, band.value * x_end],
                color="#222222", linewidth=1.4, zorder=2, solid_capstyle="butt")
        _diagonal_label(ax, band, limits, top_peak, placer, i)
    for peak in peaks:
        x_start = peak.value / widest if widest else limits.x_lo
        dashed = peak is not peaks[0]
        ax.plot([x_start, limits.x_hi], [peak.value, peak.value], color="#222222",
                linewidth=1.2 if dashed else 1.6, linestyle="--" if dashed else "-", zorder=2)
        _horizontal_label(ax, peak, limits, placer)
    for _band, ridge_x, ridge_y in ridges:
        ax.plot([ridge_x], [ridge_y], marker="o", markersize=5, markerfacecolor="white",
                markeredgecolor="black", markeredgewidth=1.0, zorder=4, linestyle="none")


def _label_box() -> dict[str, object]:
    return {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}


def _diagonal_label(
    ax: Axes, band: RoofLine, limits: Limits, top_peak: float | None, placer: Placer, rank: int
) -> None:
    (x0, y0), (x1, y1) = ax.transData.transform([(1.0, band.value), (10.0, 10.0 * band.value)])
    angle = math.degrees(math.atan2(y1 - y0, x1 - x0))
    x_first = max(limits.x_lo, limits.y_lo / band.value) * 1.4
    x_last = (top_peak / band.value) if top_peak else limits.x_hi
    text = ax.text(x_first, band.value * x_first, f"{band.label} {si(band.value, 'B/s')}",
                   rotation=angle, rotation_mode="anchor", ha="left", va="bottom", fontsize=8.5,
                   color="#111111", zorder=5, bbox=_label_box(), parse_math=False)
    steps = [x_first * 1.6 ** (i + rank) for i in range(14)]
    xs = [x for x in steps if x * 4 < x_last] or [x_first]
    placer.place(text, [_mover(text, (x, band.value * x)) for x in xs])


def _horizontal_label(ax: Axes, peak: RoofLine, limits: Limits, placer: Placer) -> None:
    text = ax.text(limits.x_hi, peak.value, f"{peak.label} {si(peak.value, 'FLOP/s')}",
                   ha="right", va="bottom", fontsize=8.5, color="#111111", zorder=5,
                   bbox=_label_box(), parse_math=False)
    candidates = []
    for shift in (1.15, 3.0, 8.0, 25.0):
        x = limits.x_hi / shift
        candidates += [_mover(text, (x, peak.value * 1.04), "bottom"),
                       _mover(text, (x, peak.value / 1.04), "top")]
    placer.place(text, candidates)


def _mover(
    text: Text, xy: tuple[float, float], va: Literal["top", "bottom"] | None = None
) -> Callable[[], None]:
    def move() -> None:
        text.set_position(xy)
        if va is not None:
            text.set_verticalalignment(va)

    return move


def _label_kernels(ax: Axes, kernels: Sequence[Kernel], placer: Placer) -> None:
    """The top kernels by time, one label per name (launches of one name counted)."""
    groups: dict[str, list[Kernel]] = {}
    for kernel in kernels:
        if kernel_points(kernel):
            groups.setdefault(kernel.name, []).append(kernel)
    ranked = sorted(groups.values(), key=lambda g: -sum(k.duration_s or 0.0 for k in g))
    for group in ranked[:LABELLED_KERNELS]:
        lead = max(group, key=lambda k: (k.duration_s or 0.0, -k.id))
        anchor = max(kernel_points(lead), key=lambda p: p.intensity_flop_per_byte)
        shares = [k.time_share for k in group if k.time_share is not None]
        label = label_text(lead.name, len(group), sum(shares) if shares else None)
        note = ax.annotate(
            label, xy=(anchor.intensity_flop_per_byte, anchor.flop_per_s),
            xytext=(10, 8), textcoords="offset points", fontsize=8, zorder=6,
            bbox=_label_box(), parse_math=False,
            arrowprops={"arrowstyle": "-", "color": "#666666", "linewidth": 0.6,
                        "shrinkA": 0, "shrinkB": 4},
        )
        placer.place(note, [_offset(note, dx, dy) for dx, dy in KERNEL_LABEL_OFFSETS_PT])


KERNEL_LABEL_OFFSETS_PT = [
    (dx * scale, dy * scale)
    for scale in (1.0, 1.6, 2.5, 4.0, 6.0)
    for dx, dy in ((10, 8), (10, -16), (-10, 8), (-10, -16), (0, 18), (0, -26))
]


def _offset(note: Text, dx: float, dy: float) -> Callable[[], None]:
    def move() -> None:
        note.set_position((dx, dy))
        note.set_horizontalalignment("left" if dx >= 0 else "right")

    return move


def _legends(figure: Figure, bounds: set[Bound], tiers: set[str], arrows: bool) -> None:
    from matplotlib.lines import Line2D

    def handle(marker: str, face: str, edge: str = "black") -> Line2D:
        return Line2D([], [], linestyle="none", marker=marker, markersize=8,
                      markerfacecolor=face, markeredgecolor=edge, markeredgewidth=0.6)

    verdicts = [b for b in Bound if b in bounds]
    shown = [t for t in TIER_MARKERS if t in tiers] + sorted(tiers - set(TIER_MARKERS))
    if not verdicts:
        return
    figure.legend(
        [handle("o", VERDICT_COLOURS[b]) for b in verdicts],
        [VERDICT_WORDS[b] for b in verdicts],
        title="Verdict (colour)", loc="upper left", bbox_to_anchor=(0.79, 0.91),
        fontsize=8.5, title_fontsize=9, frameon=False, alignment="left",
    )
    tier_handles = [handle(TIER_MARKERS.get(t, OTHER_TIER_MARKER), "white") for t in shown]
    tier_labels = [one_line(TIER_NAMES.get(t, t)) for t in shown]
    if arrows:
        tier_handles.append(handle("o", "none", "#555555"))
        tier_labels.append("before (diff base)")
    figure.legend(tier_handles, tier_labels, title="Intensity against (shape)",
                  loc="upper left", bbox_to_anchor=(0.79, 0.70), fontsize=8.5, title_fontsize=9,
                  frameon=False, alignment="left")
    figure.text(0.795, 0.45, "Marker area ∝ share of time;\none kernel's markers are joined.\n"
                "○ on a roof: ridge point.", fontsize=8, va="top", color="#333333")


def caption(device: Device, kernels: Sequence[Kernel], ref: str | None) -> str:
    """Where the roofs come from (grouped by source), and what was not drawn.

    Every line is passed through `one_line`: sources and roof names come from the data (a roofs
    file, a report), and a control character would make the SVG ill-formed XML.
    """
    roofs = device.roofs
    head = f"Roofs: {one_line(roofs.source)}"
    if ref:
        head += f"; ridge points against the {one_line(PRECISION_NAMES.get(ref, ref))} roof"
    by_source: dict[str, list[str]] = {}
    for key, source in roofs.sources.items():
        name = PRECISION_NAMES.get(key) or TIER_NAMES.get(key, key)
        by_source.setdefault(one_line(source), []).append(one_line(name))
    details = "; ".join(f"{', '.join(names)}: {source}" for source, names in by_source.items())
    lines = [head + "."]
    if details:
        lines += textwrap.wrap(details, CAPTION_WIDTH, max_lines=5, placeholder=" …")
    hidden = sum(1 for k in kernels if not kernel_points(k))
    if hidden:
        lines.append(f"{hidden} of {len(kernels)} kernels not drawn: no FLOPs, no duration or no "
                     "bytes to place them on log axes.")
    if not roofs.compute_flop_per_s and not roofs.bandwidth_byte_per_s:
        lines.append("No roofs for this device: pass --gpu KEY or --roofs FILE.")
    return "\n".join(lines)


CAPTION_WIDTH = 190


def _save(figure: Figure, fmt: str) -> bytes:
    """Fixed metadata (no date, no tool versions): the same figure gives the same bytes."""
    buffer = BytesIO()
    metadata = {"Date": None, "Creator": None} if fmt == "svg" else {"Software": None}
    figure.savefig(buffer, format=fmt, dpi=PNG_DPI, metadata=metadata)
    return buffer.getvalue()
