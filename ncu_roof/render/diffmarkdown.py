"""A `Diff` as GitHub Markdown for a sticky PR comment (hostile names escaped): a verdict line,
the changed kernels, every kernel in `<details>`; eight columns, the launches of one kernel (name
and launch shape) folded into one row, as `analyze` folds them.

A folded row is a `KernelDiff` of sums: its time is the launches' summed time on each side, its
FLOP/s their summed FLOPs over that time, its bytes per tier their sums, its intensity their
summed FLOPs over their summed bytes (each over the launches that have the figure); its status
follows the summed time against the diff's threshold (or says the kernel is only on one side), and
its verdict is its first launch's. `slower` counts its launches that regressed on their own (what
the regression gate reads): a row whose total got faster can hold a launch that got slower.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ncu_roof.base.text import launch_shape, plural, shorten
from ncu_roof.compare.comparison import Diff
from ncu_roof.compare.pairs import Change, KernelDiff, Status, classify
from ncu_roof.render.diffout import STATUS_MARK, headline, order_key, row_cells
from ncu_roof.render.markdown import GITHUB_LIMIT_CHARS
from ncu_roof.render.text import code_span, table_cell

Key = tuple[str, str | None, str | None]  # name, grid, block
MARKER = "<!-- ncu-roof:diff -->"
TOP_ROWS = 20
COLUMNS = (
    "Kernel",
    "Time base → head",
    "Δ time",
    "Δ FLOP/s",
    "Δ bytes",
    "Δ intensity",
    "Verdict",
    "Status",
)


@dataclass(frozen=True)
class FoldedRow:
    kernel: KernelDiff  # its launches' sums (the launch itself when alone)
    base_launches: int
    head_launches: int
    slower: int  # launches slower beyond the threshold, each on its own

    @property
    def changed(self) -> bool:
        return self.kernel.status is not Status.UNCHANGED or self.slower > 0


def folded_rows(result: Diff) -> list[FoldedRow]:
    """One row per kernel and launch shape, in first-pair order."""
    groups: dict[Key, list[KernelDiff]] = {}
    for k in result.kernels:
        groups.setdefault((k.name, k.grid, k.block), []).append(k)
    return [_fold(pairs, result.threshold_pct) for pairs in groups.values()]


def _fold(pairs: Sequence[KernelDiff], threshold_pct: float) -> FoldedRow:
    first = pairs[0]
    bases = sum(k.base_id is not None for k in pairs)
    heads = sum(k.head_id is not None for k in pairs)
    slower = sum(k.status is Status.REGRESSED for k in pairs)
    if len(pairs) == 1:
        return FoldedRow(first, bases, heads, slower)
    duration = _side_sums(pairs, _duration)
    tiers = dict.fromkeys(t for k in pairs for t in k.bytes)
    tier_bytes = {t: _tier_bytes(t) for t in tiers}
    if bases == 0 or heads == 0:
        status = Status.ONLY_HEAD if bases == 0 else Status.ONLY_BASE
    else:
        status = classify(duration, threshold_pct)
    kernel = replace(
        first,
        occurrence=0,
        duration_s=duration,
        flop_per_s=_ratio(pairs, _flop, _duration),
        bytes={t: _side_sums(pairs, b) for t, b in tier_bytes.items()},
        intensity_flop_per_byte={t: _ratio(pairs, _flop, b) for t, b in tier_bytes.items()},
        status=status,
    )
    return FoldedRow(kernel, bases, heads, slower)


Side = Callable[[KernelDiff, int], float | None]  # a pair's figure on side 0 (base) or 1 (head)


def _side(change: Change | None, side: int) -> float | None:
    if change is None:
        return None
    value = change.base if side == 0 else change.head
    return value if value is not None and math.isfinite(value) else None


def _duration(k: KernelDiff, side: int) -> float | None:
    return _side(k.duration_s, side)


def _flop(k: KernelDiff, side: int) -> float | None:
    rate, time = _side(k.flop_per_s, side), _side(k.duration_s, side)
    return None if rate is None or time is None else rate * time


def _tier_bytes(tier: str) -> Side:
    def figure(k: KernelDiff, side: int) -> float | None:
        return _side(k.bytes.get(tier), side)

    return figure


def _side_sums(pairs: Sequence[KernelDiff], figure: Side) -> Change:
    """The figure summed on each side over the launches that have it (None where none has)."""
    sums = []
    for side in (0, 1):
        known = [v for v in (figure(k, side) for k in pairs) if v is not None]
        sums.append(math.fsum(known) if known else None)
    return Change(sums[0], sums[1])


def _ratio(pairs: Sequence[KernelDiff], top: Side, bottom: Side) -> Change:
    """Σ top / Σ bottom on each side, over the launches that have both (None where none has)."""
    ratios = []
    for side in (0, 1):
        both = [(a, b) for a, b in ((top(k, side), bottom(k, side)) for k in pairs) if None not in (a, b)]
        below = math.fsum(b for _, b in both if b is not None)
        above = math.fsum(a for a, _ in both if a is not None)
        ratios.append(above / below if both and below > 0 else None)
    return Change(ratios[0], ratios[1])


def render_diff_markdown(result: Diff, *, limit_chars: int = GITHUB_LIMIT_CHARS) -> str:
    """A sticky-comment body: marker, verdict line, changed kernels, everything in <details>."""
    rows = sorted(folded_rows(result), key=lambda r: order_key(r.kernel))
    changed = [r for r in rows if r.changed][:TOP_ROWS]
    slower = result.with_status(Status.REGRESSED)  # launches, as the headline and the gate count
    verdict_line = (
        f"**ncu-roof diff: {plural(len(slower), 'kernel')} slower by more than {result.threshold_pct:g}%**"
        if slower or result.total_status is Status.REGRESSED
        else f"**ncu-roof diff: no kernel slower by more than {result.threshold_pct:g}%**"
    )
    parts = [MARKER, "", verdict_line, "", headline(result) + ".", ""]
    parts.append(f"GPU: {code_span(', '.join(result.head_devices))}")
    if result.mismatch:
        parts += ["", "> [!WARNING]", f"> Compared anyway: {code_span(result.mismatch)}"]
    for note in result.notes:
        parts += ["", "> [!NOTE]", f"> {code_span(note)}"]
    parts += ["", "### Changed kernels", ""]
    parts += [_md_table(changed)] if changed else ["No kernel changed beyond the threshold."]
    head = "\n".join(parts) + "\n"
    budget = limit_chars - len(head) - 200
    details, left_out = _md_rows_within(rows, budget)
    launches = len(result.kernels)
    what = plural(len(rows), "kernel") + (f" ({plural(launches, 'launch')})" if launches != len(rows) else "")
    tail = ["", f"<details><summary>All {what}</summary>", "", details, "", "</details>"]
    if left_out:
        tail.append(
            f"\n{plural(left_out, 'kernel')} left out to stay under GitHub's "
            "comment limit; see the JSON output for all."
        )
    return head + "\n".join(tail) + "\n"


def _md_table(rows: Sequence[FoldedRow]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += [_md_row(r) for r in rows]
    return "\n".join(lines)


def _md_row(row: FoldedRow) -> str:
    """The terminal table's cells (`diffout.row_cells`), the launch shape joined to the kernel's
    cell and the status of the folded row in place of the pair's."""
    k = row.kernel
    name = f"{code_span(shorten(k.name, 60))} {code_span(launch_shape(k.grid, k.block))}{_count(row)}"
    cells = [name, *row_cells(k)[1:-1], _status(row)]
    return "| " + " | ".join(table_cell(c) for c in cells) + " |"


def _count(row: FoldedRow) -> str:
    """` ×3`, or ` ×3 → 2` when the launch count changed; nothing for one launch."""
    base, head = row.base_launches, row.head_launches
    if base and head and base != head:
        return f" ×{base} → {head}"
    most = max(base, head)
    return f" ×{most}" if most > 1 else ""


def _status(row: FoldedRow) -> str:
    """The status of the summed time; with the launches that got slower on their own, if not all."""
    mark = STATUS_MARK[row.kernel.status]
    if row.slower and row.kernel.status is not Status.REGRESSED:
        launches = plural(max(row.base_launches, row.head_launches), "launch")
        return f"{mark} ({row.slower} of {launches} slower)"
    return mark


def _md_rows_within(rows: Sequence[FoldedRow], budget_chars: int) -> tuple[str, int]:
    table = _md_table([])
    for i, r in enumerate(rows):
        line = "\n" + _md_row(r)
        if len(table) + len(line) > budget_chars:
            return table, len(rows) - i
        table += line
    return table, 0
