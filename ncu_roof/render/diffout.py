"""A `Diff` as a terminal table (rich), JSON, or GitHub Markdown for a sticky PR comment (hostile
names escaped: a verdict line, the changed kernels, every kernel in `<details>`; eight columns, the
launches of one kernel (name and launch shape) folded into one row, as `analyze` folds them).

A folded row is a kernel (`Diff.changes`): its time and status as judged there (the time summed
over the pairs timed on both sides, but on one side only), and sums on each side over the launches
with the figure: FLOPs over that time, bytes per tier, FLOPs over bytes; its verdict its first
launch's. `slower` counts its launches that regressed on their own: a faster total can hold a
slower one (shown, not gated: the kernel is judged as one)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ncu_roof.analysis.frame import FrameRows
from ncu_roof.analysis.model import finite_or_none, known_sum, nan_to_none
from ncu_roof.base.text import distinct_names, launch_shape, one_line, plural, si
from ncu_roof.base.vocabulary import TIER_NAMES
from ncu_roof.compare.comparison import Diff, KernelChange
from ncu_roof.compare.pairs import Change, KernelDiff, Status, kernel_diff, sides
from ncu_roof.render.console import PIPE_WIDTH, rich_text, sized
from ncu_roof.render.headline import times
from ncu_roof.render.jsonout import CHUNK_KERNELS, document_pieces, json_objects
from ncu_roof.render.markdown import GITHUB_LIMIT_CHARS
from ncu_roof.render.output import Piece
from ncu_roof.render.text import code_span, folded, md_row, table_cell

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
_RANK_OF = {status.value: rank for status, (_, rank, _) in _STATUS.items()}


def signed_pct(value: float | None) -> str:
    """`+3.2%`, `-1.0%`, `0.0%` (never `-0.0%`), `–` when unknown."""
    return "–" if value is None else ("0.0%" if round(value, 1) == 0 else f"{value:+.1f}%")


def tier_changes(changes: Mapping[str, Change]) -> str:
    """`DRAM +3.0%, L2 −1.2%` for the tiers with a change to report."""
    known = {t: c.delta_pct for t, c in changes.items() if c.delta_pct is not None}
    return ", ".join(f"{TIER_NAMES.get(t, t)} {signed_pct(pct)}" for t, pct in known.items()) or "–"


def time_pair(change: Change) -> str:
    return f"{si(change.base, 's')} → {si(change.head, 's')}"


def pair_name(k: KernelDiff) -> str:
    """The kernel's name, `base → head` where the base's differs (`--match order`)."""
    return k.name if k.base_name is None else f"{k.base_name} → {k.name}"


def place(k: KernelDiff, result: Diff) -> str:
    """`8192×256`, then ` in fwd` (its NVTX range) and ` on device 1` where launches pair by it."""
    where = f" in {k.nvtx}" if k.nvtx is not None else ""
    device = k.head_device if k.head_device is not None else k.base_device
    on = f" on device {device}" if "ordinal" in result.paired_on else ""
    return launch_shape(k.grid, k.block) + where + on


def row_cells(k: KernelDiff, result: Diff) -> list[str]:
    """Every column but the name, as plain text (callers escape for their sink)."""
    shape = place(k, result)
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


def pair_order(statuses: Sequence[str], duration_s: np.ndarray) -> np.ndarray:
    """The tables' order of pairs (stable) by their status and their durations (a row each: base,
    head, `delta_pct`; NaN: none): regressions (worst first), improvements (best first), new, removed,
    the rest by time (the head's, else the base's)."""
    rank = np.array([_RANK_OF[s] for s in statuses], dtype=np.int64)
    base_s, head_s, change_pct = duration_s.T
    by_change = np.isin(rank, [_RANK_OF[Status.REGRESSED], _RANK_OF[Status.IMPROVED]]) & ~np.isnan(change_pct)
    base, head = (np.where(np.isfinite(v), v, 0.0) for v in (base_s, head_s))
    return np.lexsort((np.where(by_change, -np.abs(change_pct), -np.where(head != 0, head, base)), rank))


def headline(result: Diff) -> str:
    """The total over pairs timed on both sides, one-sided time apart, kernels per status (`Diff.count`)."""
    counts = {s: result.count(s) for s in Status}
    total = result.total_duration_s
    apart = [
        f"{si(t, 's')} {what}" for t, what in ((result.new_s, "new"), (result.removed_s, "removed")) if t
    ]
    return (
        f"total time {time_pair(total)} ({signed_pct(total.delta_pct)})"
        + "".join(f", {words}" for words in apart)
        + f"; kernels: {counts[Status.REGRESSED]} slower, {counts[Status.IMPROVED]} faster, "
        f"{counts[Status.UNCHANGED]} within ±{result.threshold_pct:g}%, "
        f"{counts[Status.UNKNOWN]} without a time, "
        f"{counts[Status.ONLY_HEAD]} new, {counts[Status.ONLY_BASE]} removed"
    )


# Terminal table: (header, justify, drop rank), the eight columns of the diff's Markdown; the launch
# shape ends the Kernel cell (down to KERNEL_MIN), whose name alone is shortened (never below NAME_MIN).
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


def render_diff_table(result: Diff, *, width: int = PIPE_WIDTH, color: bool = False, top: int = 0) -> str:
    """A rich table `width` cells wide at most (pass the terminal's), of the `top` first launch
    pairs (0: all; rich lays out 100,000 rows in ~30 s); colour only when `color`.
    Every column but Kernel keeps its natural (widest cell) width; Kernel gets what is left, between
    its minimum and its natural width. While even its minimum does not fit, the column with the
    highest drop rank goes (the per-tier changes first, then the verdict; 0: never); the room then
    left widens the Verdict (natural: its widest phrase) up to its widest cell."""
    from rich.cells import cell_len
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    duration_s = result.pairs.get_column("duration_s").struct.unnest().select("base", "head", "delta_pct")
    order = pair_order(result.pairs.get_column("status").to_list(), duration_s.to_numpy())
    kernels = list(FrameRows(result.pairs[order[:top] if top else order], kernel_diff))  # those shown only
    rows = [[one_line(c) for c in row_cells(k, result)] for k in kernels]  # the launch shape first
    # each column's widest cell, its header included (Kernel's at its shortened names, Verdict's a phrase)
    natural = {h: max([cell_len(h), *(cell_len(r[i]) for r in rows)]) for i, h in enumerate(HEADERS)}
    whole, shapes = natural["Verdict"], natural["Kernel"]  # the widest verdict, the widest launch shape
    natural["Verdict"] = max(
        [cell_len("Verdict"), *(cell_len(p) for r in rows for p in _VERDICT_BREAKS.split(r[_VERDICT]))]
    )
    labels = distinct_names([pair_name(k) for k in kernels], KERNEL_MAX)[0]
    natural["Kernel"] = max(
        map(cell_len, ["Kernel", *(f"{n} {r[0]}" for n, r in zip(labels, rows, strict=True))])
    )
    # at most what the names need: short ones leave their room to the other columns
    kernel_min, shown = min(natural["Kernel"], max(KERNEL_MIN, NAME_MIN + 1 + shapes)), list(HEADERS)

    def room() -> int:  # rich: a border and a space each side
        return width - (3 * len(shown) + 1) - sum(natural[h] for h in shown if h != "Kernel")

    while room() < kernel_min and any(_RANK[h] for h in shown):
        shown.remove(max(shown, key=_RANK.__getitem__))
    widths = {h: natural[h] for h in shown}
    widths["Kernel"] = max(kernel_min, min(natural["Kernel"], room()))
    room_for_name = [max(1, widths["Kernel"] - 1 - cell_len(cells[0])) for cells in rows]
    names, keys = distinct_names([pair_name(k) for k in kernels], room_for_name)
    for name, cells in zip(names, rows, strict=True):
        cells[0] = f"{name} {cells[0]}"
    # the names as shortened: the room they leave goes to the Verdict
    widths["Kernel"] = max([cell_len("Kernel"), *(cell_len(cells[0]) for cells in rows)])
    if "Verdict" in widths:
        widths["Verdict"] += max(0, min(whole - widths["Verdict"], room() - widths["Kernel"]))
    table = Table()
    sized(table, ((h, justify, widths[h]) for h, justify, _ in _TABLE_COLUMNS if h in widths))
    for k, cells in zip(kernels, rows, strict=True):
        style = _STATUS[k.status][2] if color else ""
        if cell_len(cells[_VERDICT]) > widths.get("Verdict", 0):  # one phrase a line
            cells[_VERDICT] = _VERDICT_BREAKS.sub("\n", cells[_VERDICT])
        marked = zip(HEADERS, cells, strict=True)
        table.add_row(
            *(Text(t, style=style if h in ("Δ time", "Status") else "") for h, t in marked if h in widths)
        )
    # the headline above the table, folded at the terminal's width (as a title, at the table's)
    parts: list[Table | Text] = [Text(one_line(headline(result))), table, *map(Text, map(one_line, keys))]
    if len(kernels) < len(order):
        more = f"{plural(len(order) - len(kernels), 'more launch')} not shown"
        parts.append(Text(f"{more}: --top 0 shows all, --format json has every launch", style="dim"))
    if any(len(c.rows) > 1 for c in result.changes):  # a row's mark may differ from its kernel's
        words = "rows are launch pairs, each marked by its own change; the headline judges kernels"
        parts.append(Text(f"{words} over all their launches", style="dim"))
    if dropped := ", ".join(h for h in HEADERS if h not in widths):
        wider = "a wider terminal, or --format json|markdown, has them"
        parts.append(Text(f"not shown at this width: {dropped} ({wider})", style="dim"))
    if result.mismatch:
        parts.append(Text(f"warning: compared anyway: {one_line(result.mismatch)}"))
    parts += [Text(f"note: {one_line(note)}") for note in result.notes]
    return rich_text(Group(*parts), width, color=color)


def diff_json_pieces(result: Diff) -> Iterator[Piece]:
    """Base SI units, NaN/inf as null, stable key order; a pair's object is its row of `Diff.pairs`
    (less its launches' rows) as Polars writes it (`document_pieces`: a big diff never held whole)."""
    total = result.total_duration_s
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "threshold_pct": result.threshold_pct,
        "base_devices": list(result.base_devices),
        "head_devices": list(result.head_devices),
        "mismatch": result.mismatch,
        "notes": list(result.notes),
        "paired_on": list(result.paired_on),
        "total": {
            "base": finite_or_none(total.base),
            "head": finite_or_none(total.head),
            "delta_pct": finite_or_none(total.delta_pct),
            "status": result.total_status.value,
            "new": result.new_s,
            "removed": result.removed_s,
        },
        "judged": [_judged(c) for c in result.changes],
        "kernels": None,
    }
    pairs = json_objects(result.pairs.drop("base_row", "head_row"), CHUNK_KERNELS)
    yield from document_pieces(document, pairs, len(result.kernels))


def _judged(change: KernelChange) -> dict[str, Any]:
    """A kernel as `judge` judged it for the headline and the gate (pairs: indices into `kernels`)."""
    time, found = change.duration_s, change.shift
    return {
        "name": change.name,
        "pairs": list(change.rows),
        "duration_s": {"base": time.base, "head": time.head, "delta_pct": finite_or_none(time.delta_pct)},
        "shift_pct": None if found is None else found.shift_pct,
        "interval_pct": None if found is None or found.ends is None else list(found.ends),
        "status": change.status.value,
    }


MARKER = "<!-- ncu-roof:diff -->"
TOP_ROWS = 20


@dataclass(frozen=True)
class FoldedRow:
    kernel: KernelDiff  # its launches' sums (the launch itself when alone)
    base_launches: int
    head_launches: int
    slower: int  # launches slower beyond the threshold, each on its own


def folded_rows(result: Diff) -> list[FoldedRow]:
    """One row per kernel (`Diff.changes`), in first-pair order."""
    pairs = result.pairs
    duration_s = np.stack(sides(pairs, "duration_s"))
    flop = np.stack(sides(pairs, "achieved_flop_per_s")) * duration_s
    tier_bytes = {t: np.stack(sides(pairs, "bytes", t)) for t in pairs.get_column("bytes").struct.fields}
    on_side = [pairs.get_column(c).is_not_null().to_numpy() for c in ("base_row", "head_row")]
    regressed = (pairs.get_column("status") == Status.REGRESSED.value).to_numpy()

    def fold(change: KernelChange) -> FoldedRow:
        rows = np.array(change.rows)
        first = result.kernels[int(rows[0])]
        bases, heads = (int(side[rows].sum()) for side in on_side)
        slower = int(regressed[rows].sum())
        if len(rows) == 1:
            return FoldedRow(replace(first, status=change.status), bases, heads, slower)
        duration, work = duration_s[:, rows], flop[:, rows]
        summed_bytes = {t: b[:, rows] for t, b in tier_bytes.items()}
        kernel = replace(
            first,
            occurrence=0,
            duration_s=change.duration_s if bases and heads else _sums(duration),
            flop_per_s=_ratio(work, duration),
            bytes={t: _sums(b) for t, b in summed_bytes.items()},
            intensity_flop_per_byte={t: _ratio(work, b) for t, b in summed_bytes.items()},
            status=change.status,
        )
        return FoldedRow(kernel, bases, heads, slower)

    return [fold(change) for change in result.changes]


def _sums(figure: np.ndarray) -> Change:
    """A figure (rows: base, head; NaN: not known) summed on each side (None where no pair has it)."""
    return Change(*(nan_to_none(known_sum(values, exact=True)) for values in figure))


def _ratio(top: np.ndarray, bottom: np.ndarray) -> Change:
    """Σ top / Σ bottom on each side, over the pairs that have both (None where none has)."""
    work, over = (_sums(np.where(np.isnan(top) | np.isnan(bottom), np.nan, f)) for f in (top, bottom))
    pairs = ((work.base, over.base), (work.head, over.head))
    return Change(*(a / b if a is not None and b is not None and b > 0 else None for a, b in pairs))


def render_diff_markdown(result: Diff, *, limit_chars: int = GITHUB_LIMIT_CHARS) -> str:
    """A sticky-comment body: marker, verdict line, changed kernels, everything in <details>."""
    every = folded_rows(result)
    times = [(c.base, c.head, c.delta_pct) for c in (r.kernel.duration_s for r in every)]
    order = pair_order([r.kernel.status for r in every], np.array(times, dtype=float).reshape(-1, 3))
    rows = [every[i] for i in order]  # (None: NaN)
    changed = [r for r in rows if r.kernel.status is not Status.UNCHANGED or r.slower][:TOP_ROWS]
    slower = result.count(Status.REGRESSED)  # kernels, as the headline and the gate count
    many = plural(slower, "kernel") if slower else "no kernel"
    if not slower and result.total_status is Status.REGRESSED:  # the gate fails on the total alone
        many = f"the total time ({result.total_duration_s.delta_pct or 0.0:+.1f}%)"
    verdict_line = f"**ncu-roof diff: {many} slower by more than {result.threshold_pct:g}%**"
    if not result.compared:  # as the gate says it
        verdict_line = "**ncu-roof diff: nothing compared: no kernel has a time on both sides**"
    parts = [MARKER, "", verdict_line, "", headline(result) + ".", ""]
    gpus = [code_span(", ".join(d)) for d in (result.base_devices, result.head_devices)]
    parts.append(f"GPU: {gpus[1]}" if gpus[0] == gpus[1] else f"GPU: base {gpus[0]}, head {gpus[1]}")
    if result.mismatch:
        parts += ["", "> [!WARNING]", f"> Compared anyway: {code_span(result.mismatch)}"]
    for note in result.notes:
        parts += ["", "> [!NOTE]", f"> {code_span(note)}"]
    parts += ["", "### Changed kernels", ""]
    table = md_row(HEADERS) + "\n|" + "---|" * len(HEADERS)  # the header both tables start with
    names = list(dict.fromkeys(pair_name(r.kernel) for r in rows))
    labels, keys = distinct_names(names, KERNEL_MAX)  # both tables' (`[K1] …`: under the first)
    label = dict(zip(names, labels, strict=True))
    listed = "".join("\n" + _md_row(r, label[pair_name(r.kernel)], result) for r in changed)
    parts.append(table + listed if changed else "No kernel changed beyond the threshold.")
    parts += ["", "  \n".join(code_span(key) for key in keys)] if keys else []
    head = "\n".join(parts) + "\n"
    budget = limit_chars - len(head) - 200
    details, left_out = table, 0  # the rows that fit in the budget, the rest left out
    for i, r in enumerate(rows):
        line = "\n" + _md_row(r, label[pair_name(r.kernel)], result)
        if len(details) + len(line) > budget:
            left_out = len(rows) - i
            break
        details += line
    launches = len(result.kernels)
    what = plural(len(rows), "kernel") + (f" ({plural(launches, 'launch')})" if launches != len(rows) else "")
    tail = ["", folded(f"All {what}", details, inline=True)]
    if left_out:
        tail.append(
            f"\n{plural(left_out, 'kernel')} left out to stay under GitHub's "
            "comment limit; see the JSON output for all."
        )
    return head + "\n".join(tail) + "\n"


def _md_row(row: FoldedRow, name: str, result: Diff) -> str:
    """The terminal table's cells (`row_cells`), the kernel's cell its label `name`, launch shape and
    launches (` ×3`, ` ×3 → 2` when the count changed), the status that of the summed time, with the
    launches that got slower on their own if not all."""
    k, base, head = row.kernel, row.base_launches, row.head_launches
    count = f" ×{base} → {head}" if base and head and base != head else times(max(base, head))
    name = f"{code_span(name)} {code_span(place(k, result))}{count}"
    status = STATUS_MARK[k.status]
    if row.slower and k.status is not Status.REGRESSED:
        status += f" ({row.slower} of {plural(max(base, head), 'launch')} slower)"
    return md_row(table_cell(c) for c in [name, *row_cells(k, result)[1:-1], status])
