"""A `Diff` as GitHub Markdown for a sticky PR comment (hostile names escaped): a verdict line,
the changed kernels, every kernel in `<details>`; eight columns, the launches of one kernel (name
and launch shape) folded into one row, as `analyze` folds them.

A folded row is a `KernelDiff` of sums on each side (each over the launches with the figure):
time, FLOPs over that time, bytes per tier, FLOPs over bytes; its status is the summed time's
against the threshold (or only on one side), its verdict its first launch's. `slower` counts its
launches that regressed on their own (what the gate reads): a faster total can hold a slower one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ncu_roof.analysis.model import known_sum, nan_to_none
from ncu_roof.base.text import launch_shape, plural, shorten
from ncu_roof.compare.comparison import Diff, kernel_pairs
from ncu_roof.compare.pairs import Change, KernelDiff, Status, classify, sides
from ncu_roof.render.diffout import HEADERS, KERNEL_MAX, STATUS_MARK, headline, order_key, row_cells
from ncu_roof.render.headline import times
from ncu_roof.render.markdown import GITHUB_LIMIT_CHARS
from ncu_roof.render.text import code_span, folded, md_row, table_cell

MARKER = "<!-- ncu-roof:diff -->"
TOP_ROWS = 20


@dataclass(frozen=True)
class FoldedRow:
    kernel: KernelDiff  # its launches' sums (the launch itself when alone)
    base_launches: int
    head_launches: int
    slower: int  # launches slower beyond the threshold, each on its own


def folded_rows(result: Diff) -> list[FoldedRow]:
    """One row per kernel and launch shape, in first-pair order."""
    pairs = result.pairs

    def known(column: str, tier: str | None = None) -> np.ndarray:
        figure = np.stack(sides(pairs, column, tier))
        return np.where(np.isfinite(figure), figure, np.nan)

    duration_s = known("duration_s")
    flop = known("achieved_flop_per_s") * duration_s
    tier_bytes = {t: known("bytes", t) for t in pairs.get_column("bytes").struct.fields}
    on_side = [pairs.get_column(c).is_not_null().to_numpy() for c in ("base_row", "head_row")]
    regressed = (pairs.get_column("status") == Status.REGRESSED.value).to_numpy()
    kernels = result.kernels

    def fold(rows: np.ndarray) -> FoldedRow:
        """The pairs at `rows` (of one kernel and launch shape) as one row."""
        first = kernels[int(rows[0])]
        bases, heads = (int(side[rows].sum()) for side in on_side)
        slower = int(regressed[rows].sum())
        if len(rows) == 1:
            return FoldedRow(first, bases, heads, slower)
        duration, work = duration_s[:, rows], flop[:, rows]
        summed_bytes = {t: b[:, rows] for t, b in tier_bytes.items()}
        time_s = _sums(duration)
        one_side = Status.ONLY_HEAD if bases == 0 else Status.ONLY_BASE
        kernel = replace(
            first,
            occurrence=0,
            duration_s=time_s,
            flop_per_s=_ratio(work, duration),
            bytes={t: _sums(b) for t, b in summed_bytes.items()},
            intensity_flop_per_byte={t: _ratio(work, b) for t, b in summed_bytes.items()},
            status=classify(time_s, result.threshold_pct) if bases and heads else one_side,
        )
        return FoldedRow(kernel, bases, heads, slower)

    return [fold(np.array(rows)) for rows in kernel_pairs(result).values()]


def _sums(figure: np.ndarray) -> Change:
    """A figure (a row on the base, a row on the head; NaN: not known) summed on each side over
    the pairs that have it (None where none has)."""
    return Change(*(nan_to_none(known_sum(values, exact=True)) for values in figure))


def _ratio(top: np.ndarray, bottom: np.ndarray) -> Change:
    """Σ top / Σ bottom on each side, over the pairs that have both (None where none has)."""
    work, over = (_sums(np.where(np.isnan(top) | np.isnan(bottom), np.nan, f)) for f in (top, bottom))
    pairs = ((work.base, over.base), (work.head, over.head))
    return Change(*(a / b if a is not None and b is not None and b > 0 else None for a, b in pairs))


def render_diff_markdown(result: Diff, *, limit_chars: int = GITHUB_LIMIT_CHARS) -> str:
    """A sticky-comment body: marker, verdict line, changed kernels, everything in <details>."""
    rows = sorted(folded_rows(result), key=lambda r: order_key(r.kernel))
    changed = [r for r in rows if r.kernel.status is not Status.UNCHANGED or r.slower][:TOP_ROWS]
    slower = result.count(Status.REGRESSED)  # launches, as the headline and the gate count
    many = plural(slower, "kernel") if slower or result.total_status is Status.REGRESSED else "no kernel"
    verdict_line = f"**ncu-roof diff: {many} slower by more than {result.threshold_pct:g}%**"
    parts = [MARKER, "", verdict_line, "", headline(result) + ".", ""]
    parts.append(f"GPU: {code_span(', '.join(result.head_devices))}")
    if result.mismatch:
        parts += ["", "> [!WARNING]", f"> Compared anyway: {code_span(result.mismatch)}"]
    for note in result.notes:
        parts += ["", "> [!NOTE]", f"> {code_span(note)}"]
    parts += ["", "### Changed kernels", ""]
    table = md_row(HEADERS) + "\n|" + "---|" * len(HEADERS)  # the header both tables start with
    listed = "".join("\n" + _md_row(r) for r in changed)
    parts.append(table + listed if changed else "No kernel changed beyond the threshold.")
    head = "\n".join(parts) + "\n"
    budget = limit_chars - len(head) - 200
    details, left_out = table, 0  # the rows that fit in the budget, the rest left out
    for i, r in enumerate(rows):
        line = "\n" + _md_row(r)
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


def _md_row(row: FoldedRow) -> str:
    """The terminal table's cells (`diffout.row_cells`), the launch shape joined to the kernel's
    cell with its launches (` ×3`, ` ×3 → 2` when the count changed, nothing for one), and the
    status of the summed time in place of the pair's, with the launches that got slower on their
    own if not all."""
    k, base, head = row.kernel, row.base_launches, row.head_launches
    count = f" ×{base} → {head}" if base and head and base != head else times(max(base, head))
    name = f"{code_span(shorten(k.name, KERNEL_MAX))} {code_span(launch_shape(k.grid, k.block))}{count}"
    status = STATUS_MARK[k.status]
    if row.slower and k.status is not Status.REGRESSED:
        status += f" ({row.slower} of {plural(max(base, head), 'launch')} slower)"
    return md_row(table_cell(c) for c in [name, *row_cells(k)[1:-1], status])
