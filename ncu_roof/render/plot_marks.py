"""The plot's marks and their legend, for every plot kind: a marker shape per memory tier, an area
per share of time, a diff's before-crosses and arrows, and the one legend row that explains them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from ncu_roof.base.text import one_line
from ncu_roof.base.vocabulary import TIER_NAMES, Bound
from ncu_roof.render.plot_panel import KernelPoint, time_share
from ncu_roof.render.summary import VERDICT_COLOURS, VERDICT_WORDS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TIER_MARKERS = {"dram": "o", "l2": "s", "l1": "^", "shared": "D"}
OTHER_TIER_MARKER = "v"
# a diff: a grey cross where the base was, an arrow to the head (faster: solid, slower: dashed)
BEFORE_MARKER, BEFORE_COLOUR, BEFORE_SIZE_PT2 = "X", "#555555", 70.0


class ArrowStyle(NamedTuple):
    colour: str
    linestyle: Literal["-", "--"]
    label: str


ARROW_STYLES = {  # by "slower"
    False: ArrowStyle("#1a1a1a", "-", "faster (before → after)"),
    True: ArrowStyle("#d55e00", "--", "slower (before → after)"),
}


def marker_size_pt2(share: float | None) -> float:
    return 20.0 + 380.0 * (share or 0.0)


def draw_arrows(ax: Axes, pairs: Sequence[tuple[KernelPoint, KernelPoint]], total_s: float) -> None:
    """Each pair as a cross where the base was and an arrow to the head's marker: solid and dark
    when the kernel got faster, dashed vermillion when slower (the legend names both)."""
    for base, head in pairs:
        slower = (head.group.total_duration_s or 0.0) > (base.group.total_duration_s or 0.0)
        style = ARROW_STYLES[slower]
        start = (base.intensity_flop_per_byte, base.flop_per_s)
        end = (head.intensity_flop_per_byte, head.flop_per_s)
        ax.scatter(
            [start[0]],
            [start[1]],
            s=BEFORE_SIZE_PT2,
            marker=BEFORE_MARKER,
            c=BEFORE_COLOUR,
            edgecolors="white",
            linewidths=0.6,
            zorder=4,
            gid=f"base-{base.group.lead.id}",
        )
        head_radius_pt = math.sqrt(marker_size_pt2(time_share(head.group, total_s))) / 2.0
        ax.annotate(
            "",
            xy=end,
            xytext=start,
            zorder=4.5,
            arrowprops={
                "arrowstyle": "-|>,head_length=0.8,head_width=0.45",
                "color": style.colour,
                "linestyle": style.linestyle,
                "linewidth": 2.2,
                "shrinkA": 3,
                "shrinkB": head_radius_pt,
            },
        )


def draw_legend(figure: Figure, bounds: set[Bound], tiers: set[str], arrows: bool, height_in: float) -> None:
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
        handles.append(handle(BEFORE_MARKER, BEFORE_COLOUR, "white"))
        labels.append("before (diff base)")
        for style in ARROW_STYLES.values():
            handles.append(
                Line2D(
                    [],
                    [],
                    color=style.colour,
                    linestyle=style.linestyle,
                    linewidth=2.2,
                    marker=">",
                    markersize=7,
                    markevery=[1],
                )
            )
            labels.append(style.label)
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
