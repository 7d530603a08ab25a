"""`history show --format png|svg`: each kernel group's duration over commits, one panel per GPU.

x: the commits in commit-time order (every GPU's panel on its own commits), y: the median launch
duration (log scale), a band from the fastest to the slowest launch; a marker's colour is the
verdict most launches of that commit got (the verdict colours of the summary). At most
`MAX_LINES` groups per panel: the slowest at their last commit (the caption says how many more).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ncu_roof.base.text import launch_shape, plural, shorten
from ncu_roof.render.historyout import Point, show_groups
from ncu_roof.render.plot import PNG_DPI, RC, save_figure

MAX_LINES = 8
PANEL_IN = (10.0, 4.5)
VERDICT_COLORS = {"memory": "#1f77b4", "compute": "#d62728", "latency": "#7f7f7f"}
VERDICT_WORDS = (("memory", "blue"), ("compute", "red"), ("latency", "grey"))


def render_history_plot(points: Sequence[Point], fmt: str) -> bytes:
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    groups = show_groups(points)
    gpus = list(dict.fromkeys(g["gpu"] for g in groups)) or ["(no launches)"]
    with rc_context(RC):  # type: ignore[arg-type]
        figure = Figure(figsize=(PANEL_IN[0], PANEL_IN[1] * len(gpus)), layout="constrained")
        axes = figure.subplots(len(gpus), 1, squeeze=False)[:, 0]
        for ax, gpu in zip(axes, gpus, strict=True):
            _panel(ax, gpu, [g for g in groups if g["gpu"] == gpu])
        return save_figure(figure, fmt, PNG_DPI)


def _panel(ax: Any, gpu: str, groups: list[dict[str, Any]]) -> None:
    commits = list(dict.fromkeys(p["commit"] for g in groups for p in sorted(g["points"], key=_when)))
    commits.sort(key=lambda c: min(_when(p) for g in groups for p in g["points"] if p["commit"] == c))
    at = {c: i for i, c in enumerate(commits)}
    shown = sorted(groups, key=lambda g: -(g["points"][-1]["median_duration_s"] or 0.0))[:MAX_LINES]
    for g in shown:
        xs = [at[p["commit"]] for p in g["points"]]
        ys = [p["median_duration_s"] * 1e6 for p in g["points"]]
        low = [p["min_duration_s"] * 1e6 for p in g["points"]]
        high = [p["max_duration_s"] * 1e6 for p in g["points"]]
        label = f"{shorten(g['name'], 40)} {launch_shape(g['grid'], g['block'])}"
        (line,) = ax.plot(xs, ys, linewidth=1.4, label=label)
        ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
        colors = [VERDICT_COLORS.get(p["verdict"] or "", "#bbbbbb") for p in g["points"]]
        ax.scatter(xs, ys, c=colors, s=14, zorder=3, edgecolors="none")
    from matplotlib.ticker import FuncFormatter

    ax.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_ylabel("median duration (µs)")
    ax.set_title(
        f"{gpu}: {plural(len(groups), 'kernel group')} over {plural(len(commits), 'commit')}", loc="left"
    )
    step = max(1, len(commits) // 12)
    ticks = list(range(0, len(commits), step))
    ax.set_xticks(ticks, [commits[i][:8] for i in ticks], rotation=30, ha="right", fontsize=8)
    ax.grid(True, which="both", alpha=0.25)
    if shown:
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.12), ncols=2, fontsize=7, frameon=False)
    words = ", ".join(f"{verdict} {name}" for verdict, name in VERDICT_WORDS)
    ax.annotate(
        f"markers: the verdict most launches got ({words})",
        xy=(0, 0),
        xycoords="axes fraction",
        xytext=(4, 4),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=7,
        color="#555555",
    )
    if len(groups) > len(shown):
        ax.annotate(
            f"{len(groups) - len(shown)} more groups not drawn (--kernel REGEX picks)",
            xy=(1, 0),
            xycoords="axes fraction",
            ha="right",
            va="bottom",
            fontsize=7,
        )


def _when(point: dict[str, Any]) -> str:
    return str(point["time"])
