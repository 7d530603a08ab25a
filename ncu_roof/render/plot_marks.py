"""The plot's marks and their legend, for every plot kind: a colour per verdict, a fill per basis
(filled: the roofline decided; a ring: Speed of Light did), a marker shape per memory tier, an area
per share of time, a diff's before-crosses and arrows, and the one legend row that explains them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any, NamedTuple

from ncu_roof.analysis.groups import KernelGroup
from ncu_roof.analysis.records import VERDICT_WORDS
from ncu_roof.base.text import one_line
from ncu_roof.base.vocabulary import BASIS_WORDS, TIER_NAMES, Bound, VerdictBasis, with_basis
from ncu_roof.render.plot_panel import KernelPoint
from ncu_roof.render.summary import VERDICT_COLOURS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

TIER_MARKERS = {"dram": "o", "l2": "s", "l1": "^", "shared": "D"}
OTHER_TIER_MARKER = "v"
# a diff: a grey cross where the base was, an arrow to the head (faster: solid, slower: dashed)
BEFORE_MARKER, BEFORE_COLOUR, BEFORE_SIZE_PT2 = "X", "#555555", 70.0
MAX_LEGEND_ROWS = 3  # what the room above the panels holds


Verdict = tuple[Bound, VerdictBasis]  # what a marker's colour and fill say: `memory-bound · SOL`


class MarkerFill(NamedTuple):
    face: str
    edge: str
    edge_width: float


def group_verdict(group: KernelGroup) -> Verdict:
    """The verdict a group's marker shows (its lead launch's, as its colour) and its basis."""
    return group.lead.bound, group.lead.verdict_basis


def marker_fill(verdict: Verdict) -> MarkerFill:
    """Filled in the verdict's colour when the roofline decided it, else a ring of it around white."""
    colour = VERDICT_COLOURS[verdict[0]]
    if verdict[1] is VerdictBasis.ROOFLINE:
        return MarkerFill(colour, "black", 0.5)
    return MarkerFill("white", colour, 1.8)


def verdict_label(verdict: Verdict) -> str:
    """`memory-bound · SOL`: the legend's words for a colour and fill, as every text sink's."""
    return with_basis(VERDICT_WORDS[verdict[0]], verdict[1])


def legend_order(verdicts: Iterable[Verdict]) -> list[Verdict]:
    """Verdicts as every legend lists them: by bound (`Bound`'s order), then by basis."""
    bases = list(BASIS_WORDS)
    return sorted(verdicts, key=lambda v: (list(Bound).index(v[0]), bases.index(v[1])))


ARROW_STYLES = {  # by "slower": colour, line style, legend label
    False: ("#1a1a1a", "-", "faster (before → after)"),
    True: ("#d55e00", "--", "slower (before → after)"),
}


def marker_size_pt2(group: KernelGroup) -> float:
    return 20.0 + 380.0 * (group.device_share or 0.0)


def draw_arrows(ax: Axes, pairs: Sequence[tuple[KernelPoint, KernelPoint]]) -> None:
    """Each pair as a cross where the base was and an arrow to the head's marker (`ARROW_STYLES`)."""
    for base, head in pairs:
        slower = (head.group.total_duration_s or 0.0) > (base.group.total_duration_s or 0.0)
        colour, linestyle, _ = ARROW_STYLES[slower]
        ax.scatter(
            [base.intensity_flop_per_byte],
            [base.flop_per_s],
            s=BEFORE_SIZE_PT2,
            marker=BEFORE_MARKER,
            c=BEFORE_COLOUR,
            edgecolors="white",
            linewidths=0.6,
            zorder=4,
            gid=f"base-{base.group.lead.id}",
        )
        head_radius_pt = math.sqrt(marker_size_pt2(head.group)) / 2.0
        ax.annotate(
            "",
            xy=(head.intensity_flop_per_byte, head.flop_per_s),
            xytext=(base.intensity_flop_per_byte, base.flop_per_s),
            zorder=4.5,
            arrowprops={
                "arrowstyle": "-|>,head_length=0.8,head_width=0.45",
                "color": colour,
                "linestyle": linestyle,
                "linewidth": 2.2,
                "shrinkA": 3,
                "shrinkB": head_radius_pt,
            },
        )


def draw_markers(ax: Axes, points: Sequence[KernelPoint], taken: list[Sequence[float]]) -> None:
    """One scatter per (tier, verdict), largest markers first; one LineCollection joins each
    group's markers across tiers; the biggest block label space (`taken`: extents, in pixels)."""
    from matplotlib.collections import LineCollection

    by_group = [list(pts) for _, pts in groupby(points, key=lambda q: id(q.group))]  # together in a panel
    if joins := [sorted(pts, key=lambda q: q.intensity_flop_per_byte) for pts in by_group if len(pts) > 1]:
        ax.add_collection(
            LineCollection(
                [[(q.intensity_flop_per_byte, q.flop_per_s) for q in pts] for pts in joins],
                colors=[VERDICT_COLOURS[pts[0].group.lead.bound] for pts in joins],
                linewidths=0.8,
                alpha=0.5,
                zorder=2.5,
            )
        )

    def bucket(q: KernelPoint) -> tuple[str, str, str]:  # one scatter each
        bound, basis = group_verdict(q.group)
        return q.tier, bound.value, basis.value

    px_per_pt = ax.figure.dpi / 72.0
    for (tier, bound, basis), found in groupby(sorted(points, key=bucket), key=bucket):
        pts = sorted(found, key=lambda q: -(q.group.total_duration_s or 0.0))
        sizes = [marker_size_pt2(q.group) for q in pts]
        fill = marker_fill(group_verdict(pts[0].group))
        ax.scatter(
            [q.intensity_flop_per_byte for q in pts],
            [q.flop_per_s for q in pts],
            s=sizes,
            marker=TIER_MARKERS.get(tier, OTHER_TIER_MARKER),
            c=fill.face,
            edgecolors=fill.edge,
            linewidths=fill.edge_width,
            alpha=0.85,
            zorder=3,
            gid=f"points-{tier}-{bound}-{basis}",
        )
        for q, size in zip(pts[:200], sizes[:200], strict=False):  # the big ones matter for labels
            x, y = ax.transData.transform((q.intensity_flop_per_byte, q.flop_per_s))
            r = math.sqrt(size) / 2.0 * px_per_pt
            taken.append((x - r, y - r, x + r, y + r))


def handle(marker: str, face: str, edge: str = "black", edge_width: float = 0.6, **line: Any) -> Line2D:
    """A legend entry: a 7 pt marker, no line unless `line` asks for one (the trend plot's too)."""
    from matplotlib.lines import Line2D

    line.setdefault("linestyle", "none")
    return Line2D(
        [],
        [],
        marker=marker,
        markersize=7,
        markerfacecolor=face,
        markeredgecolor=edge,
        markeredgewidth=edge_width,
        **line,
    )


def draw_legend(figure: Figure, verdicts: set[Verdict], tiers: set[str], arrows: bool) -> None:
    """One compact row above the panels (two or three where one is wider than the figure):
    verdict colours with their basis, tier shapes, a diff's marks."""
    shown_verdicts = legend_order(verdicts)
    shown = [t for t in TIER_MARKERS if t in tiers] + sorted(tiers - set(TIER_MARKERS))
    handles = [handle("o", *marker_fill(v)) for v in shown_verdicts]
    handles += [handle(TIER_MARKERS.get(t, OTHER_TIER_MARKER), "white") for t in shown]
    labels = [verdict_label(v) for v in shown_verdicts]
    labels += [f"vs {one_line(TIER_NAMES.get(t, t))}" for t in shown]
    if arrows:
        handles.append(handle(BEFORE_MARKER, BEFORE_COLOUR, "white"))
        labels.append("before (diff base)")
        for colour, linestyle, label in ARROW_STYLES.values():  # a line with a head
            line = {"color": colour, "linestyle": linestyle, "linewidth": 2.2, "markevery": [1]}
            handles.append(handle(">", colour, colour, 1.0, **line))
            labels.append(label)
    if not handles:
        return
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    for rows in range(1, MAX_LEGEND_ROWS + 1):  # the fewest rows that fit the figure's width
        legend = figure.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 1 - 0.05 / figure.get_figheight()),
            ncols=math.ceil(len(handles) / rows),
            fontsize=9,
            frameon=False,
            handletextpad=0.3,
            columnspacing=1.1,
            title="colour = verdict, fill = its basis (filled: roofline; ring: SOL or none) · "
            "shape = tier of the intensity · area = time share",
            title_fontsize=8.5,
        )
        if legend.get_window_extent(renderer).width <= figure.bbox.width or rows == MAX_LEGEND_ROWS:
            return
        legend.remove()
