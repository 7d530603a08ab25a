"""The terminal table, laid out from the summary view (`render/summary.py`): per device what to fix
first, then kernels (groups of launches) by time, the least important columns dropped (with a note)
until it fits (`fit`): numbers and verdicts are never cut, only the kernel name is shortened."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text

from ncu_roof.analysis.records import Device, device_name
from ncu_roof.base.text import intensity, one_line, pct, plural, si
from ncu_roof.base.vocabulary import TIERS
from ncu_roof.render.console import rich_text, sized
from ncu_roof.render.headline import achieved_words, attainable_words, fix_first_words, share_phrases, times
from ncu_roof.render.summary import VERDICT_COLOURS, DeviceView, Row, Summary, roofs_clock_words

KERNEL_MIN = 16
KERNEL_COMFORT = 40  # columns of rank ≥ COMFORT_RANK give way until the name gets this much
COMFORT_RANK = 6
WRAP_RANK = 4  # columns of a lower rank stay while the verdict wraps
KERNEL_MAX = 48


def _intensity(row: Row) -> str:
    ai = row.group.figures.intensity_flop_per_byte
    return " · ".join(f"{t} {intensity(ai[t])}" for t in TIERS if ai.get(t) is not None) or "–"


@dataclass(frozen=True)
class Column:
    header: str
    justify: str
    drop: int  # dropped first: highest; 0 = never
    cell: Callable[[Row], str]
    needed: bool = True  # False: not a column of this summary


def columns(summary: Summary) -> list[Column]:
    """The columns this summary needs (launch counts only for groups, a device column for several);
    the verdict, % of roof and could save are never dropped: they are the answer."""
    grouped, mixed = summary.grouped, any(len(r.verdicts) > 1 for r in summary.rows)
    cols = [
        Column("#", "right", 0, lambda r: str(r.rank)),
        Column("dev", "right", 0, lambda r: str(r.group.device), summary.multi_device),
        Column("id", "right", 9, lambda r: str(r.group.lead.id), not grouped),
        Column(summary.name_header, "left", 0, lambda r: summary.names(KERNEL_MAX)[0][r.group.name]),
        Column("launches", "right", 4, lambda r: str(r.group.count), grouped),
        Column("grid×block", "left", 8, lambda r: r.shape, not summary.by_nvtx),  # (NVTX ranges: many)
        Column("time", "right", 0, lambda r: si(r.group.total_duration_s, "s")),
        Column("share", "right", 3, lambda r: r.share(summary.multi_device)),  # legend: of what
        Column("mean", "right", 10, lambda r: si(r.group.mean_duration_s, "s"), grouped),
        Column("FLOP", "right", 13, lambda r: si(r.group.figures.flop.get("total"))),
        Column("DRAM bytes", "right", 12, lambda r: si(r.group.figures.bytes.get("dram"), "B")),
        Column("achieved", "right", 6, lambda r: achieved_words(r.group.figures, r.group.total_duration_s)),
        Column(
            "attainable", "right", 7, lambda r: attainable_words(r.group.figures, r.group.total_duration_s)
        ),
        Column("% roof", "right", 0, lambda r: pct(r.group.figures.pct_of_roof)),
        Column("could save", "right", 0, Row.saving),
        Column("verdict", "left", 0, Row.flagged),  # wraps between its phrases, never inside one
        Column(
            "of its time", "right", 2, lambda r: pct(100 * r.verdicts[0][1]) if r.verdicts[1:] else "", mixed
        ),
        Column("notes", "left", 1, lambda r: ",".join(map(str, r.notes))),
        Column("intensity FLOP/B", "left", 14, _intensity),
        Column("SOL sm/mem", "right", 11, _sol),
    ]
    return [c for c in cols if c.needed]


def _sol(row: Row) -> str:
    return "/".join(pct(row.group.figures.sol_pct.get(unit)) for unit in ("sm", "memory"))


_PHRASE = re.compile(r" (?=[(·⚠\[])")  # a verdict may wrap before "(…)", "· basis", "⚠ …", "[notes]"


def wrapped(text: str, width: int) -> str:
    """`text`'s phrases packed into lines of at most `width`; a list of notes longer than that
    (`[1,2,3,4,5,6,7]`) broken after its commas, never cut; any other phrase longer stays whole."""
    lines: list[str] = []
    for phrase in _PHRASE.split(text):
        long_notes = phrase.startswith("[") and cell_len(phrase) > width
        for i, part in enumerate(re.findall(r"[^,]+,?", phrase) if long_notes else [phrase]):
            glue = "" if i else " "
            if lines and cell_len(lines[-1]) + len(glue) + cell_len(part) <= width:
                lines[-1] += glue + part
            else:
                lines.append(part)
    return "\n".join(lines)


def fit(
    cols: Sequence[Column], cells: Sequence[Sequence[str]], width: int, name: int, verdict: int
) -> dict[int, int]:
    """Column index → width, for the columns that fit `width`, in order: each its widest cell's, the
    kernel `name` what is left. While the name would get less than KERNEL_COMFORT, the details (drop
    rank ≥ COMFORT_RANK) go; then, while less than KERNEL_MIN, the other optional columns (highest
    rank first; the `verdict` wraps between its phrases before share and notes go). Rank 0 stays."""
    sizes = [max([cell_len(c.header), *(cell_len(r[i]) for r in cells)]) for i, c in enumerate(cols)]
    natural, shown = list(sizes), list(range(len(cols)))

    def room(indexes: list[int]) -> int:
        return width - sum(sizes[i] for i in indexes if i != name) - 3 * (len(indexes) - 1)

    def drop_while(too_narrow: int, rank: int) -> None:
        while room(shown) < too_narrow and any(cols[i].drop >= rank for i in shown):
            shown.remove(max(shown, key=lambda i: cols[i].drop))

    kernel_min = min(KERNEL_MIN, natural[name])
    drop_while(min(KERNEL_COMFORT, natural[name]), COMFORT_RANK)  # details give way to the name
    drop_while(kernel_min, WRAP_RANK)
    if room(shown) < kernel_min:  # the verdict wraps, then the last optional columns go
        phrases = (cell_len(p) for r in cells for p in _PHRASE.split(r[verdict]))
        sizes[verdict] = max([cell_len(cols[verdict].header), *phrases])
        drop_while(kernel_min, 1)  # what is left widens the verdict first: as few lines as may be
        sizes[verdict] += max(0, min(natural[verdict] - sizes[verdict], room(shown) - kernel_min))
    kernel = max(kernel_min, min(natural[name], room(shown)))
    return {i: kernel if i == name else sizes[i] for i in shown}


def roofs_line(device: Device) -> str:
    roofs = device.roofs
    compute = ", ".join(f"{k} {si(v, 'FLOP/s')}" for k, v in roofs.compute_flop_per_s.items())
    memory = ", ".join(f"{k} {si(v, 'B/s')}" for k, v in roofs.bandwidth_byte_per_s.items())
    where = f"roofs [{roofs.source}]{roofs_clock_words(device)}"
    return one_line(f"device {device.index}: {device_name(device)} (cc {device.cc or '?'}) — {where}: ") + (
        "; ".join(part for part in (compute, memory) if part) or "none"
    )


def device_lines(summary: Summary, view: DeviceView, labels: dict[str, str]) -> list[str]:
    """Time per verdict, the costliest kernel and the kernel to fix first, of one device."""
    where = f"device {view.device.index}" if summary.multi_device else "time"
    shares = ", ".join(share_phrases(view)) or "no durations"
    lines = [f"{where}: {si(view.total_s, 's')} in {plural(view.launches, 'launch')}: {shares}"]
    if view.fix_first is not None:
        group = view.fix_first.group
        wide = summary.names(KERNEL_MAX)[0][group.name]  # a sentence has room for it
        label = wide if "[K" not in wide else labels[group.name]
        lines.append(f"  fix first: {label}{times(group.count)} — {fix_first_words(summary, view)}")
    return lines


def render_terminal(summary: Summary, *, color: bool, width: int, top: int = 0) -> str:
    """Roofs and per-device headline, the `top` first rows (0 = all) fit to `width` (wider if it must, never
    cut), notes below; where the notes column gave way, a row's note numbers follow its verdict (`[1,4]`)."""
    shown = summary.rows[:top] if top > 0 else summary.rows
    cols = columns(summary)
    index = {c.header: i for i, c in enumerate(cols)}
    name, verdict = index[summary.name_header], index["verdict"]
    cells = [[one_line(c.cell(r)) for c in cols] for r in shown]  # names at their widest: `fit` narrows
    widths = fit(cols, cells, width, name, verdict)
    labels, keys = summary.names(min(widths[name], KERNEL_MAX))
    shapes = index.get("grid×block") not in widths  # a name of several shapes: the row's below it
    table = Table(show_edge=False, pad_edge=False, header_style="bold", expand=False)
    sized(table, ((cols[i].header, cols[i].justify, size) for i, size in widths.items()))
    for values, row in zip(cells, shown, strict=True):
        values[name] = labels[row.group.name] + (summary.shape_words(row, "\n") if shapes else "")
        flagged = one_line(row.flagged(notes=True)) if index["notes"] not in widths else values[verdict]
        values[verdict] = wrapped(flagged, widths[verdict])
        colour = Style(color=VERDICT_COLOURS[row.bound])
        table.add_row(*(Text(values[i], style=colour if i == verdict else "") for i in widths))
    dropped = [c.header for i, c in enumerate(cols) if i not in widths]
    head = [Text(roofs_line(view.device), style="dim") for view in summary.devices]
    head += [Text(one_line(line)) for view in summary.devices for line in device_lines(summary, view, labels)]
    notes = [f"[{n.number}] {plural(n.launches, 'launch')}{n.vary}: {n.text}" for n in summary.notes]
    missing = [f"not on a roofline: {summary.missing_reason}"] if summary.missing_reason else []
    tail = [Text(line, style="dim") for line in _footnotes(summary, shown, dropped)]
    tail += [Text(one_line(line)) for line in [*keys, *notes, *missing]]
    return (
        rich_text(Group(*head), width, color=color)
        + rich_text(table, max(width, sum(widths.values()) + 3 * (len(widths) - 1)), color=color)
        + rich_text(Group(*tail), width, color=color)
    )


def _footnotes(summary: Summary, shown: Sequence[Row], dropped: Sequence[str]) -> list[str]:
    """The lines under the table, dimmed: totals, what is not shown and why, the legend."""
    rows, lines = summary.rows, [f"{summary.title(devices=True)} in total"]
    if len(shown) < len(rows):
        rest = sum(r.group.total_duration_s or 0.0 for r in rows[len(shown) :])
        share = f" ({pct(100 * rest / summary.total_s)} of the time)" if summary.total_s > 0 else ""
        what = "groups" if summary.grouped else "launches"
        lines.append(
            f"{len(rows) - len(shown)} more {what}{share} not shown: --top 0 shows all, "
            "--format json|csv has every launch"
        )
    if summary.grouped:
        folded = "launches in one NVTX range" if summary.by_nvtx else "launches of one kernel and shape"
        lines.append(f"{folded} are one row: --launches shows each")
    if dropped:
        lines.append(f"not shown at this width: {', '.join(dropped)} (a wider terminal or --format has them)")
    if rows:
        lines.append(one_line("; ".join(summary.legend(figures=False))))
    return lines
