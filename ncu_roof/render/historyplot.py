"""`history show --format png|svg`: each kernel group's duration over commits, one panel per GPU.

x: the commits in commit-time order (every GPU's panel on its own commits), y: the median launch
duration (log scale, SI ticks as every plot's), a grey band from the fastest to the slowest
launch. A group is a line in its own marker shape and dash; a marker's colour is the verdict most
launches of that commit got and its fill what the verdict rests on, as on every plot
(`plot_marks`: filled: roofline; a ring: Speed of Light or none). At most `MAX_LINES` groups per
panel: the slowest at their last commit (the panel's title says so).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ncu_roof.base.text import launch_shape, plural, shorten, si
from ncu_roof.base.vocabulary import Bound, VerdictBasis
from ncu_roof.render.historyout import Point, show_groups
from ncu_roof.render.plot import PNG_DPI, RC, save_figure
from ncu_roof.render.plot_marks import Verdict, handle, legend_order, marker_fill, verdict_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_LINES = 8
PANEL_IN = (10.0, 4.5)
LINE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")  # a group's shape (MAX_LINES of them)
LineStyle = Literal["-", "--", ":", "-.", "none"]
LINE_STYLES: tuple[LineStyle, ...] = ("-", "--", ":", "-.")
LINE_COLOUR, BAND_COLOUR = "#444444", "#999999"
MARKER_PT = 7.0  # up to `CROWD` commits; more: smaller, down to `MIN_MARKER_PT`
CROWD, MIN_MARKER_PT = 20, 4.0
TITLE_CHARS, COMMIT_CHARS = 95, 12  # a title line at 12 pt over 10 in; a commit as the table shows it
MIN_SPAN, PAD = 3.0, 1.3  # the duration axis: at least 3× from bottom to top, 30 % beyond the data
LEGEND_TITLE = (
    "colour = the verdict most launches got, fill = its basis (filled: roofline; ring: SOL or none)"
    " · shape = kernel group"
)


def render_history_plot(points: Sequence[Point], fmt: str) -> bytes:
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    groups = show_groups(points)
    gpus = list(dict.fromkeys(g["gpu"] for g in groups)) or ["(no launches)"]
    with rc_context(RC):  # type: ignore[arg-type]
        figure = Figure(figsize=(PANEL_IN[0], PANEL_IN[1] * len(gpus) + 0.5), layout="constrained")
        axes = figure.subplots(len(gpus), 1, squeeze=False)[:, 0]
        verdicts: set[Verdict] = set()
        for ax, gpu in zip(axes, gpus, strict=True):
            verdicts |= _panel(ax, gpu, [g for g in groups if g["gpu"] == gpu])
        _verdict_legend(figure, verdicts)
        return save_figure(figure, fmt, PNG_DPI)


def point_verdict(point: Point) -> Verdict:
    """The verdict and basis a marker shows (none stored: unknown, resting on nothing)."""
    bound = Bound(point["verdict"]) if point["verdict"] else Bound.UNKNOWN
    return bound, VerdictBasis(point["basis"]) if point["basis"] else VerdictBasis.NONE


def _panel(ax: Axes, gpu: str, groups: list[dict[str, Any]]) -> set[Verdict]:
    commits = list(dict.fromkeys(p["commit"] for g in groups for p in sorted(g["points"], key=_when)))
    commits.sort(key=lambda c: min(_when(p) for g in groups for p in g["points"] if p["commit"] == c))
    at = {c: i for i, c in enumerate(commits)}
    shown = sorted(groups, key=lambda g: -(g["points"][-1]["median_duration_s"] or 0.0))[:MAX_LINES]
    verdicts: set[Verdict] = set()
    handles, labels, durations_s = [], [], []
    size_pt = max(MIN_MARKER_PT, MARKER_PT * min(1.0, CROWD / max(len(commits), 1)))
    for i, g in enumerate(shown):
        drawn = [p for p in g["points"] if p["median_duration_s"]]
        xs = [at[p["commit"]] for p in drawn]
        marker, style = LINE_MARKERS[i], LINE_STYLES[i % len(LINE_STYLES)]
        ax.plot(xs, [p["median_duration_s"] for p in drawn], color=LINE_COLOUR, linestyle=style, lw=1.2)
        low = [p["min_duration_s"] for p in drawn]
        high = [p["max_duration_s"] for p in drawn]
        ax.fill_between(xs, low, high, color=BAND_COLOUR, alpha=0.15, linewidth=0)
        durations_s += [d for d in (*low, *high) if d]
        fills = [marker_fill(point_verdict(p)) for p in drawn]
        verdicts |= {point_verdict(p) for p in drawn}
        ax.scatter(
            xs,
            [p["median_duration_s"] for p in drawn],
            s=size_pt**2,
            marker=marker,
            c=[f.face for f in fills],
            edgecolors=[f.edge for f in fills],
            linewidths=[f.edge_width for f in fills],
            zorder=3,
        )
        handles.append(handle(marker, "white", "#333333", 1.0, color=LINE_COLOUR, linestyle=style))
        labels.append(f"{shorten(g['name'], 48)} {launch_shape(g['grid'], g['block'])}")
    picked = f"the {len(shown)} slowest of " if len(groups) > len(shown) else ""
    title = f"{gpu}: {picked}{plural(len(groups), 'kernel group')} over {plural(len(commits), 'commit')}"
    ax.set_title(
        textwrap.fill(title + (" (--kernel REGEX picks others)" if picked else ""), TITLE_CHARS),
        loc="left",
        fontsize=12,
        parse_math=False,
    )
    _duration_axis(ax, durations_s)
    step = max(1, math.ceil(len(commits) / 12))
    ticks = list(range(0, len(commits), step))
    names = [commits[i][:COMMIT_CHARS] for i in ticks]
    ax.set_xticks(ticks, names, rotation=30, ha="right", fontsize=8)
    ax.set_xlim(-0.5, max(len(commits) - 0.5, 0.5))
    ax.grid(True, which="major", color="#e3e3e3", linewidth=0.6)
    ax.set_axisbelow(True)
    if handles:
        from matplotlib.transforms import ScaledTranslation

        # under the slanted commit names: 8 pt characters ~0.6 em wide, sin 30° = 0.5, and the ticks
        drop_in = (12.0 + 8.0 * 0.6 * 0.5 * max(map(len, names), default=0)) / 72.0
        ax.legend(
            handles,
            labels,
            loc="upper left",
            bbox_to_anchor=(0.0, 0.0),
            bbox_transform=ax.transAxes + ScaledTranslation(0.0, -drop_in, ax.figure.dpi_scale_trans),
            ncols=2,
            fontsize=8,
            frameon=False,
        )
    return verdicts


def _duration_axis(ax: Axes, durations_s: Sequence[float]) -> None:
    """Log axis of durations with SI ticks (`10 µs`), spanning at least `MIN_SPAN` (a flat trend
    sits in the middle, not across the whole panel); between the decades the 2 and 5 labelled
    when the axis spans under three decades, every tick under one (else one tick or none shows)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    if durations_s:
        low, high = min(durations_s), max(durations_s)
        pad = max(PAD, math.sqrt(MIN_SPAN * low / high))
        ax.set_ylim(low / pad, high * pad)
    low, high = ax.get_ylim()
    decades = math.log10(high / low)
    ticks = FuncFormatter(lambda value, _: si(value, "s", digits=3) if value > 0 else "")
    ax.yaxis.set_major_locator(LogLocator(base=10.0))
    ax.yaxis.set_major_formatter(ticks)
    subs = (2.0, 5.0) if decades >= 1 else tuple(float(k) for k in range(2, 10))
    ax.yaxis.set_minor_locator(LogLocator(base=10.0, subs=subs))
    ax.yaxis.set_minor_formatter(ticks if decades < 3 else NullFormatter())
    ax.tick_params(axis="y", which="both", labelsize=9)
    ax.set_ylabel("median launch duration")


def _verdict_legend(figure: Figure, verdicts: set[Verdict]) -> None:
    """The verdicts drawn, each with its basis (`memory-bound · SOL`), as on every plot."""
    if not verdicts:
        return
    shown = legend_order(verdicts)
    handles = [handle("o", *marker_fill(v), color=LINE_COLOUR) for v in shown]
    figure.legend(
        handles,
        [verdict_label(v) for v in shown],
        loc="outside upper center",
        ncols=min(len(shown), 5),
        fontsize=9,
        frameon=False,
        handletextpad=0.3,
        columnspacing=1.1,
        title=LEGEND_TITLE,
        title_fontsize=8.5,
    )


def _when(point: dict[str, Any]) -> str:
    return str(point["time"])
