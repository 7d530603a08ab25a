"""The hierarchical roofline, one panel per device, as SVG, PNG or PDF bytes (no pyplot).

One diagonal per memory tier and one horizontal roof per precision, coloured by family (memory
tiers in blues, compute precisions in warm colours) and labelled along their lines; ridge points
against the reference compute roof are marked on it. Launches of one kernel (name, launch shape,
device) are one marker per tier, placed at their summed FLOPs over summed bytes and time, with
area ∝ their share of the device's time; colour = verdict, shape = tier. Markers are drawn as one
collection per tier and verdict, so 100,000 launches cost about what 100 do; past
`MAX_MARKERS` kernels the smallest are thinned out (the caption says how many). The top kernels
are labelled by a greedy placer that keeps labels off other labels, markers and roof lines.
The same input gives byte-identical SVG and PDF.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from io import BytesIO
from typing import TYPE_CHECKING, Literal

from ncu_roof.analysis import Analysis, Device, Kernel
from ncu_roof.arch import arch_for_cc
from ncu_roof.errors import UsageError
from ncu_roof.groups import GroupBy, KernelGroup, group_kernels, ranked
from ncu_roof.render.placement import Placer, Segment
from ncu_roof.render.summary import VERDICT_COLOURS, VERDICT_WORDS, plural
from ncu_roof.text import one_line, shorten, si
from ncu_roof.vocabulary import PRECISION_NAMES, TIER_NAMES, Bound

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    from ncu_roof.render.formats import RenderOptions

FORMATS = ("svg", "png", "pdf")
Arrow = tuple[Kernel, Kernel]  # (base, head): drawn as a before → after arrow

TIER_MARKERS = {"dram": "o", "l2": "s", "l1": "^", "shared": "D"}
OTHER_TIER_MARKER = "v"
# roofs by family: memory tiers in blues (darkest = farthest from the SMs), compute in warm tones
TIER_COLOURS = {"dram": "#08306b", "l2": "#2171b5", "l1": "#4292c6", "shared": "#6baed6"}
OTHER_TIER_COLOUR = "#9ecae1"
PRECISION_COLOURS = {"fp64": "#7f2704", "fp32": "#a63603", "fp16": "#d94801", "tensor": "#54278f"}
OTHER_PRECISION_COLOUR = "#8c6d31"
TENSOR_PATH_COLOUR = "#807dba"  # a tensor data path a kernel was judged against (FLOP/s or ops/s)
XU_COLOUR = "#238b45"  # the special-function unit (results/s)
LABELLED_KERNELS = 8
LABEL_CHARS = 30
MAX_MARKERS = 2000  # kernel groups drawn per panel; the rest (the shortest) are thinned out
SAME_ROOF_REL = 0.005  # roofs within 0.5 % share one line
PANEL_SIZE_IN = (10.0, 6.5)
PNG_DPI = 200
CAPTION_CHARS_PER_IN = 15  # characters of 8 pt text per inch of figure width
RC = {
    "svg.hashsalt": "ncu-roof",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 11.0,
    "mathtext.fontset": "dejavusans",
    "axes.unicode_minus": False,
    "path.simplify": False,
    "pdf.compression": 6,
}


@dataclass(frozen=True)
class PlotOptions:
    device: int | None = None  # one device only (default: one panel per device with kernels)
    width_in: float | None = None
    height_in: float | None = None
    dpi: float | None = None
    caption: str = "short"  # short | full | none
    arrows: Sequence[Arrow] = field(default_factory=tuple)

    @staticmethod
    def from_render(options: RenderOptions) -> PlotOptions:
        return PlotOptions(
            device=options.device,
            width_in=options.width_in,
            height_in=options.height_in,
            dpi=options.dpi,
            caption=options.caption.value,
        )


@dataclass(frozen=True)
class KernelPoint:
    """Where one kernel group sits for one tier: its summed FLOPs over summed bytes and time."""

    group: KernelGroup
    tier: str
    intensity_flop_per_byte: float
    flop_per_s: float


@dataclass(frozen=True)
class RoofLine:
    """One drawn roof: the names sharing it (`L1/Shared`), its value, its colour."""

    label: str
    value: float
    colour: str
    unit: str = "FLOP/s"  # "ops/s" for a ceiling of operations that are not FLOPs


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
    options: PlotOptions | None = None,
    device: int | None = None,
    arrows: Sequence[Arrow] | None = None,
) -> bytes:
    """The roofline of every device with kernels (or of `device` alone), as SVG, PNG or PDF."""
    if fmt not in FORMATS:
        raise UsageError(f"plot format {fmt!r} is not supported", hint="write .svg, .png or .pdf")
    opts = options or PlotOptions()
    if device is not None or arrows:
        opts = PlotOptions(
            device=device if device is not None else opts.device,
            width_in=opts.width_in,
            height_in=opts.height_in,
            dpi=opts.dpi,
            caption=opts.caption,
            arrows=tuple(arrows or opts.arrows),
        )
    from matplotlib import rc_context

    with rc_context(RC):  # type: ignore[arg-type]
        figure = _figure(analysis, plot_devices(analysis, opts.device), opts)
        return _save(figure, fmt, opts.dpi or PNG_DPI)


def plot_figure(
    analysis: Analysis, *, device: int | None = None, arrows: Sequence[Arrow] | None = None
) -> Figure:
    """The roofline of `device` (default: one panel per device) as a matplotlib `Figure` (the
    Python API's `Analysis.plot()`)."""
    from matplotlib import rc_context

    opts = PlotOptions(device=device, arrows=tuple(arrows or ()))
    with rc_context(RC):  # type: ignore[arg-type]
        return _figure(analysis, plot_devices(analysis, opts.device), opts)


def plot_devices(analysis: Analysis, index: int | None) -> list[Device]:
    """The devices to draw: `index` alone, else every device that ran kernels (most time first)."""
    if not analysis.devices:
        raise UsageError("nothing to plot: the input has no devices", hint="check the report")
    if index is not None:
        for dev in analysis.devices:
            if dev.index == index:
                return [dev]
        raise UsageError(f"no device {index}", hint=f"devices: 0..{len(analysis.devices) - 1}")
    busy = [d for d in analysis.devices if any(k.device == d.index for k in analysis.kernels)]
    return busy or [analysis.devices[0]]


def pick_device(analysis: Analysis, index: int | None) -> Device:
    """One device: `index`, else the one with the most kernel time."""
    if index is not None:
        return plot_devices(analysis, index)[0]
    devices = plot_devices(analysis, None)
    return max(
        devices,
        key=lambda d: (sum(k.duration_s or 0.0 for k in analysis.kernels if k.device == d.index), -d.index),
    )


def _sum(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None and math.isfinite(v)]
    return sum(present) if present else None


def group_points(group: KernelGroup) -> list[KernelPoint]:
    """Drawable points of a group: finite, positive intensity and FLOP/s (log axes).

    Launches without FLOPs, duration or bytes of a tier are left out of that tier's sums.
    """
    points = []
    tiers = dict.fromkeys(t for k in group.launches for t in k.intensity_flop_per_byte)
    for tier in tiers:
        usable = [
            k
            for k in group.launches
            if k.flop.get("total") is not None and k.duration_s and k.bytes.get(tier) is not None
        ]
        flop = _sum(k.flop.get("total") for k in usable)
        nbytes = _sum(k.bytes.get(tier) for k in usable)
        time = _sum(k.duration_s for k in usable)
        if flop is None or not nbytes or not time or flop <= 0:
            continue
        points.append(KernelPoint(group, tier, flop / nbytes, flop / time))
    return points


def kernel_points(kernel: Kernel) -> list[KernelPoint]:
    """Drawable points of one launch (a group of one)."""
    key = (kernel.name, kernel.grid, kernel.block, kernel.device)
    one = KernelGroup(key, (kernel,), None, None, kernel.duration_s)
    return group_points(one)


def merged_roofs(
    values: Mapping[str, float], names: Mapping[str, str], colours: Mapping[str, str], other: str
) -> list[RoofLine]:
    """Roofs by value, largest first; keys whose values agree within 0.5 % share one line."""
    groups: list[tuple[list[str], float]] = []
    for key, value in sorted(values.items(), key=lambda kv: (-kv[1], kv[0])):
        if not (math.isfinite(value) and value > 0):
            continue
        if groups and abs(groups[-1][1] - value) <= SAME_ROOF_REL * groups[-1][1]:
            groups[-1][0].append(key)
        else:
            groups.append(([key], value))
    return [
        RoofLine(one_line("/".join(names.get(k, k) for k in keys)), value, colours.get(keys[0], other))
        for keys, value in groups
    ]


def ops_ceilings(device: Device, kernels: Sequence[Kernel]) -> list[RoofLine]:
    """The ceilings the device's kernels were judged against beyond the per-precision roofs: each
    tensor data path with a peak (`Tensor BF16` in FLOP/s, `Tensor INT8` in ops/s), and the
    special-function (XU) ceiling, in results/s, where a kernel was bound by its pipe."""
    paths: dict[str, tuple[float, str]] = {}
    for k in kernels:
        for path, t in k.tensor_paths.items():
            if t.peak_per_s and t.count and math.isfinite(t.peak_per_s):
                paths[path] = (t.peak_per_s, "ops/s" if t.unit == "OP" else "FLOP/s")
    out = [
        RoofLine(f"Tensor {path.upper()}", value, TENSOR_PATH_COLOUR, unit)
        for path, (value, unit) in sorted(paths.items(), key=lambda kv: -kv[1][0])
    ]
    arch = arch_for_cc(device.cc)
    # only where the XU pipe binds: a memory-bound kernel whose busiest pipe is XU would sit above a
    # line in other units that limits nothing
    xu_bound = any(k.compute_ceiling == "pipe:xu" and k.bound is Bound.COMPUTE for k in kernels)
    if xu_bound and arch is not None and device.sm_count and device.sm_clock_hz:
        rate = arch.xu_ops.per_sm_per_clock * device.sm_count * device.sm_clock_hz
        out.append(RoofLine("XU (special functions)", rate, XU_COLOUR, "ops/s"))
    return out


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
    x_lo, x_hi = _span(list(xs), (1e-2, 1e3), right_margin=10.0)
    y_lo, y_hi = _span(list(ys), (1e9, 1e15), right_margin=3.0)
    return Limits(x_lo, x_hi, y_lo, y_hi)


def _span(values: list[float], default: tuple[float, float], right_margin: float) -> tuple[float, float]:
    good = [v for v in values if math.isfinite(v) and v > 0]
    if not good:
        return default
    lo = 10.0 ** math.floor(math.log10(min(good) / 2.0))
    hi = max(good) * right_margin
    if hi / lo < 1e3:
        lo = hi / 1e3
    return lo, hi


def label_text(name: str, launches: int, share: float | None) -> str:
    """`name ×3 · 41% of time` (the share of its device's time)."""
    text = shorten(name, LABEL_CHARS)
    if launches > 1:
        text += f" ×{launches}"
    if share is not None:
        text += f" · {100.0 * share:.0f}% of time"
    return text


@dataclass(frozen=True)
class Panel:
    device: Device
    kernels: tuple[Kernel, ...]
    groups: tuple[KernelGroup, ...]  # drawn, by time
    points: tuple[KernelPoint, ...]  # of the drawn groups
    thinned: int  # groups not drawn to keep the figure light
    undrawable: int  # launches with nothing to place on log axes
    total_s: float


def drawable(kernel: Kernel) -> bool:
    """Whether a launch can be placed on log axes: FLOPs, a duration and bytes of some tier."""
    flop = kernel.flop.get("total")
    return bool(flop and flop > 0 and kernel.duration_s and any(kernel.bytes.values()))


def panel(analysis: Analysis, device: Device) -> Panel:
    kernels = tuple(k for k in analysis.kernels if k.device == device.index)
    mine = Analysis(analysis.inputs, analysis.devices, kernels)
    groups: list[KernelGroup] = []
    points: list[KernelPoint] = []
    for group in ranked(group_kernels(mine, GroupBy.KERNEL)):
        if len(groups) == MAX_MARKERS:
            break
        found = group_points(group)
        if found:
            groups.append(group)
            points += found
    shown = sum(g.count for g in groups)
    return Panel(
        device=device,
        kernels=kernels,
        groups=tuple(groups),
        points=tuple(points),
        thinned=sum(1 for k in kernels if drawable(k)) - shown,
        undrawable=sum(1 for k in kernels if not drawable(k)),
        total_s=sum(k.duration_s or 0.0 for k in kernels),
    )


LEFT_IN, RIGHT_IN, TOP_IN, GAP_X_IN, GAP_Y_IN, BOTTOM_IN, CAPTION_LINE_IN = (
    1.3,
    0.3,
    1.05,
    1.5,
    1.05,
    0.65,
    0.16,
)


def _figure(analysis: Analysis, devices: Sequence[Device], options: PlotOptions) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = [panel(analysis, d) for d in devices]
    columns = min(2, len(panels))
    rows = math.ceil(len(panels) / columns)
    width = options.width_in or PANEL_SIZE_IN[0] * (1.0 if columns == 1 else 0.8 * columns)
    wrap = max(40, int(width * CAPTION_CHARS_PER_IN))
    captions = (
        []
        if options.caption == "none"
        else [caption(p, options.caption == "full", len(panels) > 1, wrap) for p in panels]
    )
    caption_lines = sum(c.count("\n") + 1 for c in captions)
    bottom = BOTTOM_IN + CAPTION_LINE_IN * caption_lines + 0.1
    height = options.height_in or (
        TOP_IN + bottom + (PANEL_SIZE_IN[1] - 1.6) * (1.0 if rows == 1 else 0.85 * rows)
    )
    figure = Figure(figsize=(width, height))
    canvas = FigureCanvasAgg(figure)
    panel_w = (width - LEFT_IN - RIGHT_IN - GAP_X_IN * (columns - 1)) / columns
    panel_h = (height - TOP_IN - bottom - GAP_Y_IN * (rows - 1)) / rows
    if panel_w < 1.0 or panel_h < 1.0:
        raise UsageError(
            f"a {width:g} × {height:g} in figure leaves no room for {plural(len(panels), 'panel')}",
            hint="raise --width/--height, or draw one device with --device N",
        )
    bounds: set[Bound] = set()
    tiers: set[str] = set()
    for i, p in enumerate(panels):
        row, col = divmod(i, columns)
        x0 = LEFT_IN + col * (panel_w + GAP_X_IN)
        y0 = height - TOP_IN - (row + 1) * panel_h - row * GAP_Y_IN
        ax = figure.add_axes((x0 / width, y0 / height, panel_w / width, panel_h / height))
        tiers |= _panel(ax, canvas.get_renderer(), p, options.arrows)  # type: ignore[no-untyped-call]
        bounds |= {g.lead.bound for g in p.groups}
    _legend(figure, bounds, tiers, bool(options.arrows), height)
    if captions:
        figure.text(
            0.01,
            0.08 / height,
            "\n".join(captions),
            fontsize=8,
            color="#333333",
            va="bottom",
            ha="left",
            parse_math=False,
            linespacing=1.3,
        )
    return figure


def _panel(ax: Axes, renderer: RendererBase, p: Panel, arrows: Sequence[Arrow]) -> set[str]:
    roofs = p.device.roofs
    peaks = merged_roofs(roofs.compute_flop_per_s, PRECISION_NAMES, PRECISION_COLOURS, OTHER_PRECISION_COLOUR)
    peaks += ops_ceilings(p.device, p.kernels)  # after the top roof: the bands end at that one
    bands = merged_roofs(roofs.bandwidth_byte_per_s, TIER_NAMES, TIER_COLOURS, OTHER_TIER_COLOUR)
    ref = reference_precision(p.kernels, roofs.compute_flop_per_s)
    ref_peak = roofs.compute_flop_per_s.get(ref) if ref else None
    ridges = [(ref_peak / b.value, ref_peak) for b in bands] if ref_peak else []
    points = p.points
    arrow_pairs = arrow_points(arrows, p.groups)
    ends = [pt for pair in arrow_pairs for pt in pair]
    limits = axis_limits(
        [pt.intensity_flop_per_byte for pt in (*points, *ends)] + [x for x, _ in ridges],
        [pt.flop_per_s for pt in (*points, *ends)] + [r.value for r in peaks],
    )
    _axes(ax, limits)
    placer = Placer(ax.get_window_extent(renderer), renderer)
    placer.lines = _draw_roofs(ax, peaks, bands, ridges, limits)
    _draw_markers(ax, points, p.total_s, placer)
    _draw_arrows(ax, arrow_pairs, p.total_s)
    _label_roofs(ax, peaks, bands, limits, placer)
    _label_kernels(ax, p, placer)
    title = one_line(p.device.name or p.device.roofs.name or "unknown GPU")
    ax.set_title(
        f"{title} (device {p.device.index}): {plural(len(p.kernels), 'launch')}, {si(p.total_s, 's')}",
        fontsize=12,
        parse_math=False,
        loc="left",
    )
    return {pt.tier for pt in points}


def _si_ticks(unit: str) -> Callable[[float, int], str]:
    def label(value: float, _pos: int) -> str:
        return si(value, unit, digits=3) if value > 0 else ""

    return label


def _plain_ticks(value: float, _pos: int) -> str:
    return f"{value:g}" if value > 0 else ""


def _axes(ax: Axes, limits: Limits) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(limits.x_lo, limits.x_hi)
    ax.set_ylim(limits.y_lo, limits.y_hi)
    ax.xaxis.set_major_locator(LogLocator(base=10.0))
    ax.yaxis.set_major_locator(LogLocator(base=10.0))
    ax.xaxis.set_major_formatter(FuncFormatter(_plain_ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(_si_ticks("FLOP/s")))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("Arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("Performance")
    ax.grid(True, which="major", color="#e3e3e3", linewidth=0.6)
    ax.set_axisbelow(True)


def _marker_size_pt2(share: float | None) -> float:
    return 20.0 + 380.0 * (share or 0.0)


def _share(group: KernelGroup, total_s: float) -> float | None:
    time = group.total_duration_s
    return time / total_s if time is not None and total_s > 0 else None


def _draw_markers(ax: Axes, points: Sequence[KernelPoint], total_s: float, placer: Placer) -> None:
    """One scatter per (tier, verdict), largest markers first; one LineCollection joins each
    group's markers across tiers; every marker blocks label space."""
    from matplotlib.collections import LineCollection
    from matplotlib.transforms import Bbox

    by_group: dict[int, list[KernelPoint]] = {}
    for pt in points:
        by_group.setdefault(id(pt.group), []).append(pt)
    joins = [
        sorted(pts, key=lambda q: q.intensity_flop_per_byte) for pts in by_group.values() if len(pts) > 1
    ]
    if joins:
        ax.add_collection(
            LineCollection(
                [[(q.intensity_flop_per_byte, q.flop_per_s) for q in pts] for pts in joins],
                colors=[VERDICT_COLOURS[pts[0].group.lead.bound] for pts in joins],
                linewidths=0.8,
                alpha=0.5,
                zorder=2.5,
            )
        )
    buckets: dict[tuple[str, Bound], list[KernelPoint]] = {}
    for pt in points:
        buckets.setdefault((pt.tier, pt.group.lead.bound), []).append(pt)
    px_per_pt = ax.figure.dpi / 72.0
    for (tier, bound), pts in sorted(buckets.items(), key=lambda item: (item[0][0], item[0][1].value)):
        pts = sorted(pts, key=lambda q: -(q.group.total_duration_s or 0.0))
        sizes = [_marker_size_pt2(_share(q.group, total_s)) for q in pts]
        ax.scatter(
            [q.intensity_flop_per_byte for q in pts],
            [q.flop_per_s for q in pts],
            s=sizes,
            marker=TIER_MARKERS.get(tier, OTHER_TIER_MARKER),
            c=VERDICT_COLOURS[bound],
            edgecolors="black",
            linewidths=0.5,
            alpha=0.85,
            zorder=3,
            gid=f"points-{tier}-{bound.value}",
        )
        for q, size in zip(pts[:200], sizes[:200], strict=False):  # the big ones matter for labels
            x, y = ax.transData.transform((q.intensity_flop_per_byte, q.flop_per_s))
            r = math.sqrt(size) / 2.0 * px_per_pt
            placer.block(Bbox.from_extents(x - r, y - r, x + r, y + r))


def arrow_points(
    arrows: Sequence[Arrow], groups: Sequence[KernelGroup]
) -> list[tuple[KernelPoint, KernelPoint]]:
    """One before → after pair per drawn head group: the base launches matched to its launches,
    summed as the group is, at one tier both sides have (the head's binding tier, else DRAM)."""
    group_of = {id(k): g for g in groups for k in g.launches}
    bases: dict[int, list[Kernel]] = {}
    for base, head in arrows:
        if id(head) in group_of:
            bases.setdefault(id(group_of[id(head)]), []).append(base)
    pairs = []
    for group in groups:
        matched = bases.get(id(group))
        if not matched:
            continue
        before = KernelGroup(group.key, tuple(matched), None, None, _sum(k.duration_s for k in matched))
        base_points = {q.tier: q for q in group_points(before)}
        head_points = {q.tier: q for q in group_points(group)}
        common = [t for t in head_points if t in base_points]
        if common:
            tier = next((t for t in (group.lead.binding, "dram") if t in common), common[0])
            pairs.append((base_points[tier], head_points[tier]))
    return pairs


def _draw_arrows(ax: Axes, pairs: Sequence[tuple[KernelPoint, KernelPoint]], total_s: float) -> None:
    for base, head in pairs:
        slower = (head.group.total_duration_s or 0.0) > (base.group.total_duration_s or 0.0)
        colour = "#c62828" if slower else "#2e7d32"
        start = (base.intensity_flop_per_byte, base.flop_per_s)
        end = (head.intensity_flop_per_byte, head.flop_per_s)
        ax.scatter(
            [start[0]],
            [start[1]],
            s=_marker_size_pt2(_share(base.group, total_s)),
            marker=TIER_MARKERS.get(base.tier, OTHER_TIER_MARKER),
            facecolors="none",
            edgecolors="#444444",
            linewidths=1.0,
            linestyle="--",
            zorder=3,
            gid=f"base-{base.group.lead.id}",
        )
        ax.annotate(
            "",
            xy=end,
            xytext=start,
            zorder=4.5,
            arrowprops={
                "arrowstyle": "-|>,head_length=0.6,head_width=0.35",
                "color": colour,
                "linewidth": 2.0,
                "shrinkA": 4,
                "shrinkB": 6,
            },
        )


def _draw_roofs(
    ax: Axes,
    peaks: Sequence[RoofLine],
    bands: Sequence[RoofLine],
    ridges: Sequence[tuple[float, float]],
    limits: Limits,
) -> list[Segment]:
    """The roofs, and their segments in display coordinates (labels must not cross them)."""
    top_peak = peaks[0].value if peaks else None
    widest = bands[0].value if bands else None
    segments: list[Segment] = []

    def line(xs: tuple[float, float], ys: tuple[float, float], colour: str, **style: object) -> None:
        ax.plot(list(xs), list(ys), color=colour, zorder=2, solid_capstyle="butt", **style)  # type: ignore[arg-type]
        a, b = ax.transData.transform([(xs[0], ys[0]), (xs[1], ys[1])])
        segments.append(((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))))

    for band in bands:
        x_end = top_peak / band.value if top_peak else limits.x_hi
        line((limits.x_lo, x_end), (band.value * limits.x_lo, band.value * x_end), band.colour, linewidth=1.6)
    for peak in peaks:
        x_start = peak.value / widest if widest else limits.x_lo
        dashed = peak is not peaks[0]
        line(
            (x_start, limits.x_hi),
            (peak.value, peak.value),
            peak.colour,
            linewidth=1.3 if dashed else 1.8,
            linestyle="--" if dashed else "-",
        )
    for ridge_x, ridge_y in ridges:
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


def _label_box() -> dict[str, object]:
    return {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}


def _label_roofs(
    ax: Axes, peaks: Sequence[RoofLine], bands: Sequence[RoofLine], limits: Limits, placer: Placer
) -> None:
    top_peak = peaks[0].value if peaks else None
    for i, band in enumerate(bands):
        _diagonal_label(ax, band, limits, top_peak, placer, i)
    for j, peak in enumerate(peaks):
        _horizontal_label(ax, peak, limits, placer, len(bands) + j)


def _diagonal_label(
    ax: Axes, band: RoofLine, limits: Limits, top_peak: float | None, placer: Placer, index: int
) -> None:
    (x0, y0), (x1, y1) = ax.transData.transform([(1.0, band.value), (10.0, 10.0 * band.value)])
    angle = math.degrees(math.atan2(y1 - y0, x1 - x0))
    x_first = max(limits.x_lo, limits.y_lo / band.value) * 1.4
    x_last = (top_peak / band.value) if top_peak else limits.x_hi
    text = ax.text(
        x_first,
        band.value * x_first,
        f"{band.label} {si(band.value, 'B/s')}",
        rotation=angle,
        rotation_mode="anchor",
        ha="left",
        va="bottom",
        fontsize=9,
        color=band.colour,
        zorder=5,
        bbox=_label_box(),
        parse_math=False,
    )
    steps = [x_first * 1.35 ** (i + index) for i in range(24)]
    xs = [x for x in steps if x * 4 < x_last] or [x_first]
    sides: tuple[Literal["bottom", "top"], ...] = ("bottom", "top")
    candidates = [_mover(text, (x, band.value * x), va) for va in sides for x in xs]
    placer.place(text, candidates, own_line=index)


def _horizontal_label(ax: Axes, peak: RoofLine, limits: Limits, placer: Placer, index: int) -> None:
    text = ax.text(
        limits.x_hi,
        peak.value,
        f"{peak.label} {si(peak.value, peak.unit)}",
        ha="right",
        va="bottom",
        fontsize=9,
        color=peak.colour,
        zorder=5,
        bbox=_label_box(),
        parse_math=False,
    )
    candidates = []
    for shift in (1.15, 3.0, 8.0, 25.0):
        x = limits.x_hi / shift
        candidates += [
            _mover(text, (x, peak.value * 1.04), "bottom"),
            _mover(text, (x, peak.value / 1.04), "top"),
        ]
    placer.place(text, candidates, own_line=index)


def _mover(
    text: Text, xy: tuple[float, float], va: Literal["top", "bottom"] | None = None
) -> Callable[[], None]:
    def move() -> None:
        text.set_position(xy)
        if va is not None:
            text.set_verticalalignment(va)

    return move


def _label_kernels(ax: Axes, p: Panel, placer: Placer) -> None:
    """The top kernel groups by time, `name ×launches · share of time`."""
    by_group: dict[int, list[KernelPoint]] = {}
    for q in p.points:
        by_group.setdefault(id(q.group), []).append(q)
    for group in p.groups[:LABELLED_KERNELS]:
        anchor = max(by_group[id(group)], key=lambda q: q.intensity_flop_per_byte)
        label = label_text(group.name, group.count, _share(group, p.total_s))
        note = ax.annotate(
            label,
            xy=(anchor.intensity_flop_per_byte, anchor.flop_per_s),
            xytext=(10, 8),
            textcoords="offset points",
            fontsize=8,
            zorder=6,
            bbox=_label_box(),
            parse_math=False,
            arrowprops={"arrowstyle": "-", "color": "#666666", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4},
        )
        x, y = ax.transData.transform((anchor.intensity_flop_per_byte, anchor.flop_per_s))
        candidates = [_offset(note, dx, dy) for dx, dy in KERNEL_LABEL_OFFSETS_PT]
        placer.place(note, candidates, anchor=(float(x), float(y)))


KERNEL_LABEL_OFFSETS_PT = [
    (dx * scale, dy * scale)
    for scale in (1.0, 1.6, 2.5, 4.0, 6.0, 9.0, 13.0)
    for dx, dy in ((10, 8), (10, -16), (-10, 8), (-10, -16), (0, 12), (0, -20), (14, -4), (-14, -4))
]


def _offset(note: Text, dx: float, dy: float) -> Callable[[], None]:
    def move() -> None:
        note.set_position((dx, dy))
        note.set_horizontalalignment("left" if dx > 0 else "right" if dx < 0 else "center")

    return move


def _legend(figure: Figure, bounds: set[Bound], tiers: set[str], arrows: bool, height_in: float) -> None:
    """One compact row above the panels: verdict colours, then tier shapes."""
    from matplotlib.lines import Line2D

    def handle(marker: str, face: str, edge: str = "black") -> Line2D:
        return Line2D(
            [],
            [],
            linestyle="none",
            marker=marker,
            markersize=7,
            markerfacecolor=face,
            markeredgecolor=edge,
            markeredgewidth=0.6,
        )

    verdicts = [b for b in Bound if b in bounds]
    shown = [t for t in TIER_MARKERS if t in tiers] + sorted(tiers - set(TIER_MARKERS))
    handles = [handle("o", VERDICT_COLOURS[b]) for b in verdicts]
    labels = [VERDICT_WORDS[b] for b in verdicts]
    handles += [handle(TIER_MARKERS.get(t, OTHER_TIER_MARKER), "white") for t in shown]
    labels += [f"vs {one_line(TIER_NAMES.get(t, t))}" for t in shown]
    if arrows:
        handles.append(handle("o", "none", "#444444"))
        labels.append("before (diff base)")
    if handles:
        figure.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 1 - 0.05 / height_in),
            ncols=len(handles),
            fontsize=9,
            frameon=False,
            handletextpad=0.3,
            columnspacing=1.1,
            title="colour = verdict · shape = tier of the intensity · area = time share",
            title_fontsize=8.5,
        )


def caption(p: Panel, full: bool, name_device: bool, wrap: int = 150) -> str:
    """Where the roofs come from; with `full`, every roof's source (the formulas); what was not drawn.

    Every piece passes through `one_line`: sources and roof names come from the data (a roofs
    file, a report), and a control character would make the SVG ill-formed XML.
    """
    import textwrap

    roofs = p.device.roofs
    head = f"Device {p.device.index}: roofs" if name_device else "Roofs"
    lines = [f"{head} {source_words(roofs.source)}."]
    if full:
        by_source: dict[str, list[str]] = {}
        for key, source in roofs.sources.items():
            name = PRECISION_NAMES.get(key) or TIER_NAMES.get(key, key)
            by_source.setdefault(one_line(source), []).append(one_line(name))
        details = "; ".join(f"{', '.join(names)}: {source}" for source, names in by_source.items())
        if details:
            lines += textwrap.wrap(details, wrap, max_lines=8, placeholder=" …")
    not_flops = [c.label for c in ops_ceilings(p.device, p.kernels) if c.unit != "FLOP/s"]
    if not_flops:
        xu = arch_for_cc(p.device.cc)
        lines.append(
            f"{' and '.join(not_flops)}: operations per second, not FLOPs"
            + (
                f" (XU: {xu.xu_ops.per_sm_per_clock:g} results/clk/SM, {xu.xu_ops.describe()}, "
                "x SMs x the measured SM clock)."
                if xu is not None and any(label.startswith("XU") for label in not_flops)
                else "."
            )
        )
    if p.undrawable:
        lines.append(
            f"{p.undrawable} of {plural(len(p.kernels), 'launch')} not drawn: no FLOPs, no duration "
            "or no bytes to place them on log axes."
        )
    if p.thinned > 0:
        lines.append(
            f"{plural(p.thinned, 'launch')} of the kernels with the least time not drawn (thinned to "
            f"{MAX_MARKERS:,} kernels)."
        )
    if not roofs.compute_flop_per_s and not roofs.bandwidth_byte_per_s:
        lines.append("No roofs for this device: pass --gpu KEY or --roofs FILE.")
    return "\n".join(part for line in lines for part in textwrap.wrap(line, wrap))


def source_words(source: str) -> str:
    """Where the roofs come from, in words: `report` → measured in the report, …"""
    text = one_line(source)
    if text == "report":
        return "measured in the report (peak per cycle × the measured clock, as Nsight Compute does)"
    if text.startswith("builtin:"):
        return f"from the built-in {text.removeprefix('builtin:')} datasheet figures (ncu-roof gpus)"
    if text.startswith("user"):
        return f"from the roofs file ({text})"
    return f"from {text}"


def _save(figure: Figure, fmt: str, dpi: float) -> bytes:
    """Fixed metadata (no date, no tool versions): the same figure gives the same bytes."""
    buffer = BytesIO()
    metadata: dict[str, str | None]
    if fmt == "svg":
        metadata = {"Date": None, "Creator": None}
    elif fmt == "pdf":
        metadata = {"CreationDate": None, "Creator": None, "Producer": None}
    else:
        metadata = {"Software": None}
    figure.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()
