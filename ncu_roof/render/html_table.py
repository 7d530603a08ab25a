"""The HTML report's kernel table: its columns, the cells of every row formatted once (sort
value and text), the JSON data its script pages through, and the table's section."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from ncu_roof.analysis.model import finite_or_none
from ncu_roof.analysis.records import VERDICT_WORDS
from ncu_roof.base.text import intensity, one_line, pct, si
from ncu_roof.base.vocabulary import Bound
from ncu_roof.render.headline import achieved_words
from ncu_roof.render.markdown import bandwidth_tier, intensity_tiers
from ncu_roof.render.summary import Row, Summary
from ncu_roof.render.text import unbroken

NAME_WIDTH = 70
PAGE_ROWS = 100  # table rows in the DOM at once
DETAILS_ROWS = 100  # rows with a details section (the JSON has every launch)
TABLE_MAX_ROWS = 20_000  # rows in the table's data: 100,000 launches stay under 20 MB

Column = tuple[str, str, bool]  # (data key, header, text column)
WRAPPED = ("bandwidth",)  # number columns whose cells may wrap (`1.82 TB/s` / `(dram)`): 1280 px fit


def table_columns(summary: Summary) -> list[Column]:
    return [
        ("rank", "#", False),
        *([("device", "Dev", False)] if summary.multi_device else []),
        ("name", summary.name_title, True),
        *([("launches", "Launches", False)] if summary.grouped else []),
        ("duration", "Time", False),
        ("share", "Share of device" if summary.multi_device else "Share", False),
        ("pct", "% of roof", False),
        ("headroom", "Could save", False),
        ("verdict", "Verdict", True),
        ("notes", "Notes", True),
        ("binding", "Binding", True),
        *((f"ai_{t}", f"AI {t}", False) for t in intensity_tiers(summary, summary.rows)),
        ("flops", "FLOP/s", False),
        ("bandwidth", "Bandwidth", False),
    ]


def row_cells(summary: Summary, row: Row) -> dict[str, tuple[Any, str]]:
    """Data key → (sort value, displayed text) of every cell of one row."""
    g, lead = row.group, row.group.figures
    tier = bandwidth_tier(lead)
    notes = ", ".join(map(str, row.notes))  # `1, 2, 3`: a cell that may wrap (1280 px fit)
    return {
        "rank": (row.rank, str(row.rank)),
        "device": (g.device, str(g.device)),
        "name": (None, summary.names(NAME_WIDTH)[0][g.name] + summary.shape_words(row)),  # sort: full name
        "launches": (g.count, str(g.count)),
        "duration": (g.total_duration_s, si(g.total_duration_s, "s")),
        "share": (g.device_share if summary.multi_device else g.time_share, row.share(summary.multi_device)),
        "verdict": (None, _verdict_lines(row.verdict)),
        "notes": (None, notes),
        "pct": (lead.pct_of_roof, pct(lead.pct_of_roof)),
        "headroom": (g.headroom_s, row.saving()),
        "binding": (None, lead.roofline_binding or "–"),
        "flops": (lead.achieved_flop_per_s, achieved_words(lead, g.total_duration_s)),
        "bandwidth": (
            lead.achieved_byte_per_s[tier] if tier else None,
            f"{unbroken(si(lead.achieved_byte_per_s[tier], 'B/s'))} ({tier})" if tier else "–",
        ),
        **{f"ai_{t}": (value, intensity(value)) for t, value in lead.intensity_flop_per_byte.items()},
    }


def _verdict_lines(text: str) -> str:
    """A verdict that breaks only between its parts: `memory-bound` / `(dram)` / `· SOL`."""
    whole = text.replace("-", "\u2011").replace(" ", "\u00a0")  # non-breaking hyphens and spaces
    return whole.replace("\u00a0(", " (").replace("\u00a0·\u00a0", " · ")


def _sort_value(value: Any) -> Any:
    """Enough digits to order rows (6), so that 100,000 rows stay small; text sorts by its cell."""
    if isinstance(value, float):
        number = finite_or_none(value)
        return None if number is None else float(f"{number:.6g}")
    return value


def table_data(summary: Summary, columns: Sequence[Column]) -> dict[str, Any]:
    """What the script lays out: names once, per row its sort values and cell texts (TABLE_MAX_ROWS)."""
    names: dict[str, int] = {}
    rows = []
    for row in summary.rows[:TABLE_MAX_ROWS]:
        cells = row_cells(summary, row)
        values = [cells.get(key, (None, "–")) for key, _, _ in columns]
        rows.append(
            {
                "name": names.setdefault(row.group.name, len(names)),
                "bound": row.bound.value,
                "details": row.rank <= DETAILS_ROWS,
                "sort": [_sort_value(v) for v, _ in values],
                "cells": [one_line(t) for _, t in values],
            }
        )
    return {
        "columns": [{"key": key, "text": text, "wrap": key in WRAPPED} for key, _, text in columns],
        "names": list(names),
        "rows": rows,
        "page": PAGE_ROWS,
        "total": len(summary.rows),
        "what": "kernels" if summary.grouped else "launches",
    }


def table_section(summary: Summary, columns: Sequence[Column]) -> dict[str, str]:
    """The table's words in the page (report.html): its title, verdict options, headers, notes."""
    headers = "".join(
        f'<th data-key="{escape(key)}" aria-sort="none"{" class=text" if text else ""}>'
        f'<button type="button">{escape(label)}</button></th>'
        for key, label, text in columns
    )
    what = "kernels" if summary.grouped else "launches"
    order = "by time" if summary.sort.value == "time" else "by the time they could save"
    folded = "in one NVTX range" if summary.by_nvtx else "of one kernel, launch shape"
    grouped = f" Launches {folded} and device are one row." if summary.grouped else ""
    keys = "<br>".join(escape(key) for key in summary.names(NAME_WIDTH)[1])  # what tells `[K1] …` apart
    truncated = (
        f'<p class="muted">The table holds the first {TABLE_MAX_ROWS:,} of {len(summary.rows):,} '
        f"{what}; the JSON and CSV outputs have every launch.</p>\n"
    )
    return {
        "table_title": f"{what.capitalize()} {order}",
        "verdicts": "".join(f'<option value="{b.value}">{VERDICT_WORDS[b]}</option>' for b in Bound),
        "shown": f"{len(summary.rows)} {what}",
        "headers": headers,
        "truncated": truncated if len(summary.rows) > TABLE_MAX_ROWS else "",
        "legend": f'<p class="muted">{escape("; ".join(summary.legend()))}.{grouped} '
        "Click a header to sort; a name for its details.</p>" + (keys and f'<p class="muted">{keys}</p>'),
    }
