"""A `Diff` as a terminal table (rich) or JSON (its Markdown: `render.diffmarkdown`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ncu_roof.analysis.model import finite_or_none
from ncu_roof.base.text import launch_shape, one_line, shorten, si
from ncu_roof.base.vocabulary import TIER_NAMES
from ncu_roof.compare.comparison import Diff
from ncu_roof.compare.pairs import Change, KernelDiff, Status
from ncu_roof.render.console import PIPE_WIDTH, rich_text, sized
from ncu_roof.render.jsonout import CHUNK_KERNELS, document_pieces, json_objects
from ncu_roof.render.output import Piece

SCHEMA = "ncu-roof/diff/v1"
# each status: its mark in every table, its rank in their order, its colour in the terminal
_STATUS = {
    Status.REGRESSED: ("❌ slower", 0, "red"),
    Status.IMPROVED: ("⚡ faster", 1, "green"),
    Status.ONLY_HEAD: ("🆕 new", 2, "cyan"),
    Status.ONLY_BASE: ("➖ removed", 3, "yellow"),
    Status.UNCHANGED: ("✅ same", 4, ""),
    Status.UNKNOWN: ("? no time", 5, "dim"),
}
STATUS_MARK = {status: mark for status, (mark, _, _) in _STATUS.items()}


def signed_pct(value: float | None) -> str:
    """`+3.2%`, `-1.0%`, `0.0%` (never `-0.0%`), `–` when unknown."""
    if value is None:
        return "–"
    return "0.0%" if round(value, 1) == 0 else f"{value:+.1f}%"


def tier_changes(changes: Mapping[str, Change]) -> str:
    """`DRAM +3.0%, L2 −1.2%` for the tiers with a change to report."""
    known = {t: c.delta_pct for t, c in changes.items() if c.delta_pct is not None}
    return ", ".join(f"{TIER_NAMES.get(t, t)} {signed_pct(pct)}" for t, pct in known.items()) or "–"


def time_pair(change: Change) -> str:
    return f"{si(change.base, 's')} → {si(change.head, 's')}"


def row_cells(k: KernelDiff) -> list[str]:
    """Every column but the name, as plain text (callers escape for their sink)."""
    shape = launch_shape(k.grid, k.block)
    verdict = k.verdict_head or k.verdict_base or "–"
    return [
        f"{shape} #{k.occurrence + 1}" if k.occurrence else shape,
        time_pair(k.duration_s),
        signed_pct(k.duration_s.delta_pct),
        signed_pct(k.flop_per_s.delta_pct),
        tier_changes(k.bytes),
        tier_changes(k.intensity_flop_per_byte),
        f"{k.verdict_base} → {k.verdict_head}" if k.verdict_changed else verdict,
        STATUS_MARK[k.status],
    ]


def order_key(k: KernelDiff) -> tuple[int, float]:
    """Regressions (worst first), improvements (best first), new, removed, the rest by time."""
    change = k.duration_s.delta_pct
    if k.status in (Status.REGRESSED, Status.IMPROVED) and change is not None:
        return _STATUS[k.status][1], -abs(change)
    return _STATUS[k.status][1], -(k.duration_s.head or k.duration_s.base or 0.0)


def headline(result: Diff) -> str:
    counts = {s: result.count(s) for s in Status}
    total = result.total_duration_s
    return (
        f"total time {time_pair(total)} ({signed_pct(total.delta_pct)}); "
        f"{counts[Status.REGRESSED]} slower, {counts[Status.IMPROVED]} faster, "
        f"{counts[Status.UNCHANGED]} within ±{result.threshold_pct:g}%, "
        f"{counts[Status.ONLY_HEAD]} new, {counts[Status.ONLY_BASE]} removed"
    )


# Terminal table: (header, justify, drop rank), the eight columns of the diff's Markdown (the
# launch shape ends the Kernel cell); numbers are never squeezed or cut, only the kernel's name is
# shortened (the Kernel cell down to KERNEL_MIN, the name never below NAME_MIN: its shape stays).
KERNEL_MIN = 24
NAME_MIN = 12
_VERDICT_BREAKS = re.compile(r" (?=· )|(?<= →) ")
KERNEL_MAX = 60
_TABLE_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("Kernel", "left", 0),
    ("Time base → head", "right", 3),
    ("Δ time", "right", 0),
    ("Δ FLOP/s", "right", 4),
    ("Δ bytes", "left", 6),
    ("Δ intensity", "left", 7),
    ("Verdict", "left", 5),
    ("Status", "left", 1),
)
HEADERS = [h for h, _, _ in _TABLE_COLUMNS]  # the terminal's and the Markdown's
_RANK = {h: rank for h, _, rank in _TABLE_COLUMNS}
_VERDICT = HEADERS.index("Verdict")


def render_diff_table(result: Diff, *, width: int = PIPE_WIDTH, color: bool = False) -> str:
    """A rich table `width` cells wide at most (pass the terminal's); colour only when `color`.
    Every column but Kernel keeps its natural (widest cell) width; Kernel gets what is left, between
    its minimum and its natural width. While even its minimum does not fit, the column with the
    highest drop rank goes (the per-tier changes first, then the verdict; 0: never); the room then
    left widens the Verdict (natural: its widest phrase) up to its widest cell."""
    from rich.cells import cell_len
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    kernels = sorted(result.kernels, key=order_key)
    rows = [[one_line(c) for c in row_cells(k)] for k in kernels]  # the launch shape first
    # each column's widest cell (its header included); Kernel's at its shortened names; the
    # Verdict's at its widest phrase (a verdict wraps before ` · basis` and after ` → `)
    natural = {h: max([cell_len(h), *(cell_len(r[i]) for r in rows)]) for i, h in enumerate(HEADERS)}
    whole, shapes = natural["Verdict"], natural["Kernel"]  # the widest verdict, the widest launch shape
    natural["Verdict"] = max(
        [cell_len("Verdict"), *(cell_len(p) for r in rows for p in _VERDICT_BREAKS.split(r[_VERDICT]))]
    )
    names = [cell_len(f"{shorten(k.name, KERNEL_MAX)} {r[0]}") for k, r in zip(kernels, rows, strict=True)]
    natural["Kernel"] = max([cell_len("Kernel"), *names])
    kernel_min, shown = max(KERNEL_MIN, NAME_MIN + 1 + shapes), list(HEADERS)

    def room() -> int:  # rich: a border and a space each side
        return width - (3 * len(shown) + 1) - sum(natural[h] for h in shown if h != "Kernel")

    while room() < kernel_min and any(_RANK[h] for h in shown):
        shown.remove(max(shown, key=_RANK.__getitem__))
    widths = {h: natural[h] for h in shown}
    widths["Kernel"] = max(kernel_min, min(natural["Kernel"], room()))
    if "Verdict" in widths:
        widths["Verdict"] += max(0, min(whole - widths["Verdict"], room() - widths["Kernel"]))
    table = Table(title=one_line(headline(result)), title_justify="left")
    sized(table, ((h, justify, widths[h]) for h, justify, _ in _TABLE_COLUMNS if h in widths))
    for k, cells in zip(kernels, rows, strict=True):
        style = _STATUS[k.status][2] if color else ""
        cells[0] = f"{shorten(k.name, max(1, widths['Kernel'] - 1 - cell_len(cells[0])))} {cells[0]}"
        if cell_len(cells[_VERDICT]) > widths.get("Verdict", 0):  # one phrase a line
            cells[_VERDICT] = _VERDICT_BREAKS.sub("\n", cells[_VERDICT])
        marked = zip(HEADERS, cells, strict=True)
        table.add_row(
            *(Text(t, style=style if h in ("Δ time", "Status") else "") for h, t in marked if h in widths)
        )
    parts: list[Table | Text] = [table]
    if dropped := ", ".join(h for h in HEADERS if h not in widths):
        wider = "a wider terminal, or --format json|markdown, has them"
        parts.append(Text(f"not shown at this width: {dropped} ({wider})", style="dim"))
    if result.mismatch:
        parts.append(Text(f"warning: compared anyway: {one_line(result.mismatch)}"))
    parts += [Text(f"note: {one_line(note)}") for note in result.notes]
    return rich_text(Group(*parts), width, color=color)


def diff_json_pieces(result: Diff) -> Iterator[Piece]:
    """Base SI units, NaN/inf as null, stable key order; a pair's object is its row of `Diff.pairs`
    (less its launches' rows) as Polars writes it, indented up to `PRETTY_MAX_KERNELS` pairs, else
    compact. In pieces, made as they are written: a big diff is never held whole."""
    total = result.total_duration_s
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "threshold_pct": result.threshold_pct,
        "base_devices": list(result.base_devices),
        "head_devices": list(result.head_devices),
        "mismatch": result.mismatch,
        "notes": list(result.notes),
        "total": {
            "base": finite_or_none(total.base),
            "head": finite_or_none(total.head),
            "delta_pct": finite_or_none(total.delta_pct),
            "status": result.total_status.value,
        },
        "kernels": None,
    }
    pairs = json_objects(result.pairs.drop("base_row", "head_row"), CHUNK_KERNELS)
    yield from document_pieces(document, pairs, len(result.kernels))
