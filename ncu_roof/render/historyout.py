"""`history show` and `history check` as text: a terminal table, JSON, CSV, Markdown, HTML.

`show`'s rows are `history.query.points` (one per kernel group and commit, in commit-time order);
`check`'s are a `CheckResult`. JSON: `ncu-roof/history-show/v1` (groups, each with its points,
each naming its commit) and `ncu-roof/history-check/v1` (every classified movement).
"""

from __future__ import annotations

import csv
import html
import io
import json
import textwrap
from collections.abc import Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any

from ncu_roof.base.text import launch_shape, one_line, plural, shorten, si
from ncu_roof.base.vocabulary import Bound, VerdictBasis, with_basis
from ncu_roof.render.console import rich_text
from ncu_roof.render.text import code_span, csv_cell, folded, md_row, table_cell

if TYPE_CHECKING:
    from ncu_roof.history.check import CheckResult, KernelMovement

Point = dict[str, Any]  # one kernel group at one commit (`history.query.points`)
SHOW_SCHEMA = "ncu-roof/history-show/v1"
CHECK_SCHEMA = "ncu-roof/history-check/v1"
MARKER = "<!-- ncu-roof history check -->"
POINT_FIELDS = (
    *("commit", "time", "median_duration_s", "min_duration_s", "max_duration_s"),
    *("launches", "runs", "verdict", "basis"),
)
GROUP_FIELDS = ("name", "grid", "block", "gpu")
BOUNDS = {b.value for b in Bound}  # a stored verdict that names a colour


def _time(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def show_groups(points: Sequence[Point]) -> list[dict[str, Any]]:
    """The points as groups (name, grid, block, GPU), each with its points in commit-time order."""
    rows = points
    out = []
    for key, members in groupby(rows, key=lambda r: tuple(r[f] for f in GROUP_FIELDS)):
        items = [{f: (_time(r[f]) if f == "time" else r[f]) for f in POINT_FIELDS} for r in members]
        out.append({**dict(zip(GROUP_FIELDS, key, strict=True)), "points": items})
    return out


def show_json(points: Sequence[Point]) -> str:
    doc = {"schema": SHOW_SCHEMA, "groups": show_groups(points)}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _cells(row: dict[str, Any], commit_chars: int = 12) -> list[str]:
    return [
        str(row["commit"])[:commit_chars],
        row["time"][:16].replace("T", " ") if row["time"] is not None else "?",
        si(row["median_duration_s"], "s"),
        f"{si(row['min_duration_s'], 's')}-{si(row['max_duration_s'], 's')}",
        str(row["launches"]),
        verdict_cell(row),
    ]


def verdict_cell(point: Point) -> str:
    """`memory · roofline`: the verdict most launches got and what it rests on (`-`: none)."""
    if point["verdict"] is None:
        return "-"
    if point["basis"] is None:
        return str(point["verdict"])
    return with_basis(str(point["verdict"]), VerdictBasis(point["basis"]))


SHOW_COLUMNS = ("commit", "time", "median", "range", "launches", "verdict")


def show_table(points: Sequence[Point], width: int) -> str:
    """One block per kernel group: its name, shape and GPU, then a row per commit."""
    from rich.table import Table

    groups = show_groups(points)
    if not groups:
        return "no launch matches\n"
    parts = []
    for g in groups:
        table = Table(box=None, pad_edge=False)
        for column in SHOW_COLUMNS:
            table.add_column(column, justify="right" if column in ("median", "launches") else "left")
        for p in g["points"]:
            table.add_row(*_cells(p))
        parts.append(_group_title(g, width) + "\n" + rich_text(table, width))
    return "\n".join(parts)


def _group_title(g: dict[str, Any], width: int) -> str:
    shape = launch_shape(g["grid"], g["block"])
    return one_line(
        f"{shorten(g['name'], max(20, width - len(shape) - len(g['gpu']) - 8))} {shape} on {g['gpu']}"
    )


def show_csv(points: Sequence[Point]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*GROUP_FIELDS, *POINT_FIELDS])
    for g in show_groups(points):
        for p in g["points"]:
            cells = [*(g[f] for f in GROUP_FIELDS), *(p[f] for f in POINT_FIELDS)]
            writer.writerow(
                [csv_cell(c) if isinstance(c, str) else "" if c is None else repr(c) for c in cells]
            )
    return out.getvalue()


def show_markdown(points: Sequence[Point]) -> str:
    parts = ["**ncu-roof history**", ""]
    for g in show_groups(points):
        shape = launch_shape(g["grid"], g["block"])
        parts += [
            f"#### {code_span(shorten(g['name'], 80))} {table_cell(shape)} on {code_span(g['gpu'])}",
            "",
        ]
        parts += [md_row(SHOW_COLUMNS), "|" + "---|" * len(SHOW_COLUMNS)]
        parts += [md_row(table_cell(c) for c in _cells(p)) for p in g["points"]]
        parts.append("")
    return "\n".join(parts)


def show_html(points: Sequence[Point]) -> str:
    """A page in the report's style sheet: per group a table of its commits, each verdict a badge
    in the report's verdict colour."""
    from ncu_roof.render.html import CSS

    left = {"commit", "time", "verdict"}
    head = "".join(f"<th{' class=text' if c in left else ''}>{c}</th>" for c in SHOW_COLUMNS)
    body = []
    for g in show_groups(points):
        shape = launch_shape(g["grid"], g["block"])
        body.append(
            f"<h2><code>{html.escape(g['name'])}</code> {html.escape(shape)} on {html.escape(g['gpu'])}</h2>"
        )
        rows = []
        for p in g["points"]:
            cells = [html.escape(c) for c in _cells(p, 40)]
            if p["verdict"] in BOUNDS:
                cells[-1] = f"<span class='badge {p['verdict']}'>{cells[-1]}</span>"
            rows.append(
                "<tr>"
                + "".join(
                    f"<td{' class=text' if c in left else ''}>{cell}</td>"
                    for c, cell in zip(SHOW_COLUMNS, cells, strict=True)
                )
                + "</tr>"
            )
        body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return (
        "<!doctype html>\n<html><head><meta charset='utf-8'><title>ncu-roof history</title>"
        f"<style>{CSS}</style></head><body><h1>ncu-roof history</h1>{''.join(body)}</body></html>\n"
    )


# --- check ---------------------------------------------------------------------------------


def _movement(m: KernelMovement) -> dict[str, Any]:
    s = m.shift
    return {
        "name": m.name,
        "grid": m.grid,
        "block": m.block,
        "gpu": m.gpu,
        "class": m.kind.value,
        "shift_pct": s.shift_pct if s else None,
        "interval_pct": None if s is None or s.ends is None else list(s.ends),
        "drift_pct": s.drift_pct if s else None,  # the drift band's half-width; None: not estimated
        "head_launches": m.head_launches,
        "baseline_launches": m.baseline_launches,
        "baseline_commits": m.baseline_commits,
        "last_good": m.last_good,
        "first_bad": m.first_bad,
        "reason": m.reason,
    }


def check_json(result: CheckResult) -> str:
    from ncu_roof.history.check import Kind

    doc = {
        "schema": CHECK_SCHEMA,
        "head": result.head,
        "threshold_pct": result.threshold_pct,
        "confidence": result.confidence,
        "baselines": [
            {
                "gpu": b.gpu,
                "commits": list(b.commits),
                "change": {"class": b.change.kind.value, "reason": b.change.reason} if b.change else None,
            }
            for b in result.baselines
        ],
        "counts": {k.value: len(result.of_kind(k)) for k in Kind},
        "movements": [_movement(m) for m in result.movements],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def verdict_line(result: CheckResult) -> str:
    """`1 kernel regressed: slower at 99% confidence by ≥ 3.25% (0.65 of the 5% threshold), its
    interval reaching 5%`."""
    from ncu_roof.base.shift import FIRE_FRACTION
    from ncu_roof.history.check import Kind

    bad = result.of_kind(Kind.REGRESSION)
    floor = FIRE_FRACTION * result.threshold_pct
    share = f"{FIRE_FRACTION:g} of the {result.threshold_pct:g}% threshold"
    rule = (
        f"at {result.confidence:.0%} confidence by ≥ {floor:g}% ({share}),"
        f" its interval reaching {result.threshold_pct:g}%"
    )
    if bad:
        return f"{len(bad)} {'kernel' if len(bad) == 1 else 'kernels'} regressed: slower {rule}"
    return f"no kernel regressed (slower {rule})"


CHECK_COLUMNS = ("class", "kernel", "shape", "gpu", "shift", "interval", "reason")


def _check_cells(m: KernelMovement) -> list[str]:
    s = m.shift
    interval = (s.interval if s else None) or "-"
    return [
        m.kind.value,
        shorten(m.name, 50),
        launch_shape(m.grid, m.block),
        m.gpu,
        f"{s.shift_pct:+.1f}%" if s else "-",
        interval,
        m.reason,
    ]


def _moved(result: CheckResult) -> Sequence[KernelMovement]:
    from ncu_roof.history.check import Kind

    return [m for m in result.movements if m.kind is not Kind.NOISE]


def check_table(result: CheckResult, width: int) -> str:
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for column in CHECK_COLUMNS:
        table.add_column(column, overflow="fold" if column == "reason" else "ellipsis")
    for m in result.movements:
        table.add_row(*(one_line(c) for c in _check_cells(m)))
    lines = [f"history check of {one_line(result.head)}: {verdict_line(result)}"]
    for b in result.baselines:
        change = f"; {b.change.kind.value}: {one_line(b.change.reason)}" if b.change else ""
        lines.append(f"  {b.gpu}: baseline {plural(len(b.commits), 'commit')}{change}")
    # laid out for the width as the table is (folded between words, never inside a GPU key's
    # hyphens, each further line indented)
    folded = (
        textwrap.fill(line, width, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
        for line in lines
    )
    return "\n".join(folded) + "\n\n" + rich_text(table, width)


def check_markdown(result: CheckResult) -> str:
    """A PR comment: marker, verdict, what moved, then every kernel in <details>."""
    moved = _moved(result)
    parts = [MARKER, "", f"**ncu-roof history check: {verdict_line(result)}**", ""]
    parts.append(
        f"Head {code_span(result.head)}; "
        + "; ".join(
            f"{code_span(b.gpu)} against {len(b.commits)} commits"
            + (f" ({b.change.kind.value}: {code_span(b.change.reason)})" if b.change else "")
            for b in result.baselines
        )
    )
    parts += ["", "### Movements", ""]
    parts += [_md_table(moved)] if moved else ["Every kernel moved within the noise."]
    groups = f"All {len(result.movements)} kernel groups"
    parts += ["", folded(groups, _md_table(result.movements), inline=True), ""]
    return "\n".join(parts)


def _md_table(movements: Sequence[KernelMovement]) -> str:
    lines = [md_row(CHECK_COLUMNS), "|" + "---|" * len(CHECK_COLUMNS)]
    for m in movements:
        cells = _check_cells(m)
        cells[1] = code_span(cells[1])
        lines.append(md_row(c if i == 1 else table_cell(c) for i, c in enumerate(cells)))
    return "\n".join(lines)


def check_csv(result: CheckResult) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    fields = list(_movement(result.movements[0])) if result.movements else ["name"]
    writer.writerow(fields)
    for m in result.movements:
        row = _movement(m)
        writer.writerow(
            [csv_cell(v) if isinstance(v, str) else "" if v is None else json.dumps(v) for v in row.values()]
        )
    return out.getvalue()
