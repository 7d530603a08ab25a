"""One self-contained HTML report: per-device headline, the roofline at full width, a paged
sortable/filterable table of kernel groups (or launches), details of the first rows, roofs.

No network: CSS, JS and the SVG plot are inline, and a Content-Security-Policy forbids any fetch
and allows only our own script (by hash). Every data string goes through `html.escape`; the data
the script needs is JSON in a `<script type="application/json">` with `<`, `>`, `&` escaped, and
the script writes it with `textContent` only. The table holds one page of rows in the DOM (100,000
launches stay a page of 100 rows); cells are formatted here, once, so the script only lays out.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from html import escape
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from ncu_roof import __version__
from ncu_roof.analysis import Analysis, Device, Kernel
from ncu_roof.errors import NcuRoofError
from ncu_roof.model import finite_or_none
from ncu_roof.render.markdown import bandwidth_tier, intensity, intensity_tiers
from ncu_roof.render.summary import (
    VERDICT_COLOURS,
    VERDICT_WORDS,
    DeviceView,
    Row,
    Summary,
    plural,
    summarize,
)
from ncu_roof.text import one_line, pct, shorten, si
from ncu_roof.vocabulary import PRECISIONS, TIERS, Bound

if TYPE_CHECKING:
    from ncu_roof.render.formats import RenderOptions

NAME_WIDTH = 70
HTML_PLOT_WIDTH_IN = {False: 8.0, True: 13.0}  # one panel, two side by side
PAGE_ROWS = 100  # table rows in the DOM at once
DETAILS_ROWS = 100  # rows with a details section (the JSON has every launch)
TABLE_MAX_ROWS = 20_000  # rows in the table's data: 100,000 launches stay under 20 MB
_SVG_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", re.IGNORECASE)
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}

_CSS = (
    ":root{"
    + "".join(f"--{b.value}:{VERDICT_COLOURS[b]};" for b in Bound)
    + """--line:#d0d7de}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1600px;padding:1.5rem 2rem;color:#1f2328;background:#fff}
h1{font-size:1.7rem;margin:.2rem 0 .6rem}h2{font-size:1.25rem;margin:2rem 0 .6rem;
border-bottom:1px solid var(--line);padding-bottom:.3rem}
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.lead{font-size:1.05rem;overflow-wrap:anywhere}.muted{color:#59636e}
.device{margin:.8rem 0 1.2rem}
.bar{display:flex;height:14px;border-radius:7px;overflow:hidden;max-width:640px;margin:.4rem 0}
.bar span{display:block;height:100%}
"""
    + "".join(f".{b.value}{{background:var(--{b.value})}}" for b in Bound)
    + """
.key{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin:0 .3em 0 .8em}
.badge{display:inline-block;padding:0 .45em;border-radius:.8em;color:#fff;white-space:nowrap}
figure{margin:0}figure svg{width:100%;height:auto;display:block}
.controls{display:flex;gap:.8rem;align-items:center;margin:.5rem 0;flex-wrap:wrap}
input,select,button.page{font:inherit;padding:.25rem .5rem;border:1px solid var(--line);border-radius:6px;
background:#fff}
input{width:28rem;max-width:60vw}
table{border-collapse:collapse;width:100%}
th,td{padding:.3rem .55rem;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
th{position:sticky;top:0;background:#f6f8fa;white-space:nowrap}
th button{all:unset;cursor:pointer;font-weight:600}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
td{white-space:nowrap}td.text,th.text{text-align:left}
td.name{white-space:normal;min-width:18rem;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
#kernels tbody tr:hover{background:#f6f8fa}
details{border:1px solid var(--line);border-radius:6px;margin:.4rem 0;padding:.3rem .7rem}
details[open]{background:#fbfcfd}summary{cursor:pointer;overflow-wrap:anywhere}
.fullname{overflow-wrap:anywhere;margin:.5rem 0}
.facts td,.facts th{font-size:14px}.facts{width:auto;margin:.3rem 0}
.recipe{text-align:left;color:#59636e;white-space:normal;overflow-wrap:anywhere}
ol.notes li{overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
"""
)

_JS = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("ncu-roof-data").textContent);
  var keys = data.columns.map(function (c) { return c.key; });
  var text = {}; data.columns.forEach(function (c, i) { text[c.key] = c.text; });
  var rows = data.rows.map(function (r, i) { return { i: i, r: r }; });
  var tbody = document.getElementById("kernels").tBodies[0];
  var headers = Array.prototype.slice.call(document.querySelectorAll("#kernels th[data-key]"));
  var filter = document.getElementById("filter");
  var verdict = document.getElementById("verdict");
  var shown = document.getElementById("shown");
  var prev = document.getElementById("prev"), next = document.getElementById("next");
  var state = { key: "rank", dir: 1, page: 0, list: rows };

  function value(row, key) {
    var j = keys.indexOf(key);
    if (key === "name") { return data.names[row.r.name]; }
    return text[key] ? row.r.cells[j] : row.r.sort[j];
  }
  function compare(a, b) {
    var x = value(a, state.key), y = value(b, state.key);
    if (x === null || y === null) { return x === y ? 0 : (x === null ? 1 : -1); }
    if (typeof x === "string") { return state.dir * x.localeCompare(y); }
    return state.dir * (x - y);
  }
  function cell(row, j) {
    var td = document.createElement("td");
    var c = data.columns[j];
    if (c.text) { td.className = c.key === "name" ? "text name" : "text"; }
    if (c.key === "name") {
      var code = document.createElement("code");
      code.textContent = row.r.cells[j];
      code.title = data.names[row.r.name];
      if (row.r.details) {
        var a = document.createElement("a");
        a.href = "#k" + row.r.cells[0]; a.appendChild(code); td.appendChild(a);
      } else { td.appendChild(code); }
    } else if (c.key === "verdict") {
      var span = document.createElement("span");
      span.className = "badge " + row.r.bound; span.textContent = row.r.cells[j]; td.appendChild(span);
    } else { td.textContent = row.r.cells[j]; }
    return td;
  }
  function draw() {
    var pages = Math.max(1, Math.ceil(state.list.length / data.page));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * data.page;
    while (tbody.firstChild) { tbody.removeChild(tbody.firstChild); }
    state.list.slice(start, start + data.page).forEach(function (row) {
      var tr = document.createElement("tr");
      tr.dataset.k = String(row.i);
      tr.dataset.bound = row.r.bound;
      for (var j = 0; j < data.columns.length; j++) { tr.appendChild(cell(row, j)); }
      tbody.appendChild(tr);
    });
    shown.textContent = state.list.length + " of " + rows.length + " " + data.what + " shown" +
      (data.total > rows.length ? " (the first " + rows.length + " of " + data.total + ")" : "") +
      (pages > 1 ? "; page " + (state.page + 1) + " of " + pages : "");
    prev.disabled = state.page === 0; next.disabled = state.page >= pages - 1;
  }
  function apply() {
    var needle = filter.value.toLowerCase(), bound = verdict.value;
    state.list = rows.filter(function (row) {
      return data.names[row.r.name].toLowerCase().indexOf(needle) >= 0 && (!bound || row.r.bound === bound);
    });
    state.list.sort(function (a, b) { return compare(a, b) || a.i - b.i; });
    headers.forEach(function (th) {
      var sorted = th.dataset.key === state.key;
      th.setAttribute("aria-sort", sorted ? (state.dir > 0 ? "ascending" : "descending") : "none");
    });
    document.body.dataset.sorted = state.key + ":" + (state.dir > 0 ? "asc" : "desc");
    draw();
  }
  function openFromHash() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  headers.forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var key = th.dataset.key;
      state.dir = key === state.key ? -state.dir : (text[key] ? 1 : -1);
      state.key = key; state.page = 0; apply();
    });
  });
  filter.addEventListener("input", function () { state.page = 0; apply(); });
  verdict.addEventListener("change", function () { state.page = 0; apply(); });
  prev.addEventListener("click", function () { state.page -= 1; draw(); });
  next.addEventListener("click", function () { state.page += 1; draw(); });
  window.addEventListener("hashchange", openFromHash);

  var params = new URLSearchParams(location.search);
  var wanted = params.get("sort");
  if (wanted && keys.indexOf(wanted) >= 0) {
    state.key = wanted; state.dir = params.get("dir") === "asc" ? 1 : -1;
  }
  filter.value = params.get("q") || "";
  verdict.value = params.get("bound") || "";
  apply();
  openFromHash();
})();
"""


def render_html(
    source: Analysis | Summary, *, plot: RenderOptions | None = None, plot_svg: str | None = None
) -> str:
    """The report as one HTML document; `plot_svg` is inlined (by default the roofline of every
    device, drawn with `plot`'s size and caption options)."""
    summary = source if isinstance(source, Summary) else summarize(source)
    analysis = summary.analysis
    svg = plot_svg if plot_svg is not None else _default_plot(analysis, plot)
    script = _JS.strip()
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    title = f"ncu-roof: {plural(summary.launches, 'launch')}, {si(summary.total_s, 's')}"
    columns = _columns(summary)
    body = [
        *_headline(summary),
        *_plot_section(svg),
        *_table_section(summary, columns),
        *_notes_section(summary),
        *_details_section(summary),
        *_roofs_section(analysis),
        *_hint_section(analysis.collect_hint),
        f'<p class="muted">Generated by ncu-roof {escape(__version__)}.</p>',
    ]
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            *body,
            '<script type="application/json" id="ncu-roof-data">'
            f"{script_json(table_data(summary, columns))}</script>",
            f"<script>{script}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


def script_json(value: Any) -> str:
    """JSON safe inside a `<script>` element: no `<`, `>` or `&` (so no `</script>`), no NaN."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return re.sub("[<>&]", lambda match: _JSON_ESCAPES[match.group(0)], text)


def _default_plot(analysis: Analysis, options: RenderOptions | None) -> str | None:
    """The roofline of every device that ran kernels; None (no plot section) when there is none."""
    from ncu_roof.render.plot import PlotOptions, render_plot

    if not analysis.kernels:
        return None
    opts = PlotOptions.from_render(options) if options is not None else PlotOptions()
    if opts.width_in is None:  # drawn smaller than for print, so that its text reads at page width
        many = len({k.device for k in analysis.kernels}) > 1 and opts.device is None
        opts = replace(opts, width_in=HTML_PLOT_WIDTH_IN[many])
    try:
        return render_plot(analysis, fmt="svg", options=opts).decode("utf-8")
    except NcuRoofError as error:
        return f"<p>No plot: {escape(one_line(error.message))}</p>"


def _headline(summary: Summary) -> list[str]:
    kernels = f" of {plural(len(summary.rows), 'kernel')}" if summary.grouped else ""
    lines = [
        f"<h1>Roofline: {plural(summary.launches, 'launch')}{kernels}, "
        f"{escape(si(summary.total_s, 's'))}</h1>"
    ]
    lines += [_device_block(summary, view) for view in summary.devices]
    if summary.missing_reason:
        lines.append(f'<p class="lead"><b>Not on a roofline:</b> {escape(summary.missing_reason)}.</p>')
    return lines


def _device_block(summary: Summary, view: DeviceView) -> str:
    bar = "".join(
        f'<span class="{b.value}" style="width:{100 * s:.3f}%" '
        f'title="{VERDICT_WORDS[b]} {pct(100 * s)}"></span>'
        for b, s in view.shares
    )
    words = []
    for bound, part in view.shares:
        detail = ""
        if bound is Bound.MEMORY and view.memory_tiers:
            detail = " (" + ", ".join(f"{escape(t)} {pct(100 * s)}" for t, s in view.memory_tiers) + ")"
        words.append(
            f'<span class="key {bound.value}"></span><b>{pct(100 * part)}</b> {VERDICT_WORDS[bound]}{detail}'
        )
    parts = [
        f'<div class="device"><p class="muted">{_device_words(summary.analysis, view.device)}: '
        f"{escape(si(view.total_s, 's'))} in {plural(view.launches, 'launch')}</p>",
        f'<div class="bar">{bar}</div>',
        f'<p class="lead">Share of time: {" ".join(words) or "no kernel has a duration"}</p>',
    ]
    ff = view.fix_first
    if ff is not None:
        rank = _rank_of(summary, ff.group)
        saving = summary.saving_share(view)
        share = f" ({escape(saving)})" if saving else ""
        parts.append(
            f'<p class="lead"><b>Fix first:</b> {_group_link(ff.group.name, ff.group.count, rank)} '
            f"could save <b>{escape(si(ff.saving_s, 's'))}</b>{share} at its "
            f"{escape(ff.group.lead.binding or 'its')} roof; "
            f"now {escape(ff.group.verdicts[0])}, {pct(ff.group.lead.pct_of_roof)} of roof.</p>"
        )
    costliest = view.costliest
    if costliest is not None and (ff is None or costliest is not ff.group):
        share = (
            f"{pct(100 * costliest.device_share)} of its time, " if costliest.device_share is not None else ""
        )
        parts.append(
            f'<p class="lead">Costliest: '
            f"{_group_link(costliest.name, costliest.count, _rank_of(summary, costliest))} "
            f"({share}{escape(si(costliest.total_duration_s, 's'))}): {escape(costliest.verdicts[0])}.</p>"
        )
    return "\n".join(parts) + "</div>"


def _rank_of(summary: Summary, group: object) -> int | None:
    return next((r.rank for r in summary.rows if r.group is group), None)


def _group_link(name: str, count: int, rank: int | None) -> str:
    code = f"<code>{escape(shorten(name, NAME_WIDTH))}</code>"
    launches = f" ×{count}" if count > 1 else ""
    if rank is not None and rank <= DETAILS_ROWS:
        return f'<a href="#k{rank}">{code}</a>{launches}'
    return code + launches


def _device_words(analysis: Analysis, device: Device) -> str:
    info = analysis.inputs[device.input]
    gpu = f"<code>{escape(one_line(device.name))}</code>" if device.name else "unknown GPU"
    cc = f" (CC {escape(one_line(device.cc))})" if device.cc else ""
    version = f", ncu {escape(one_line(info.ncu_version))}" if info.ncu_version else ""
    path = escape(one_line(PurePath(info.path).name))
    return f"Device {device.index}: {gpu}{cc} from <code>{path}</code>{version}"


def _plot_section(plot: str | None) -> list[str]:
    if plot is None:
        return []
    svg = _SVG_PROLOG.sub("", plot)
    return ['<h2 id="plot">Hierarchical roofline</h2>', f"<figure>{svg}</figure>"]


Column = tuple[str, str, bool]  # (data key, header, text column)


def _columns(summary: Summary) -> list[Column]:
    tiers = intensity_tiers([r.group.lead for r in summary.rows])
    columns: list[Column] = [("rank", "#", False)]
    if summary.multi_device:
        columns.append(("device", "Dev", False))
    columns.append(("name", summary.name_title, True))
    if summary.grouped:
        columns.append(("launches", "Launches", False))
    columns += [
        ("duration", "Time", False),
        ("share", "Share of device" if summary.multi_device else "Share", False),
        ("verdict", "Verdict", True),
        ("notes", "Notes", True),
        ("pct", "% of roof", False),
        ("headroom", "Could save", False),
        ("binding", "Binding", True),
        *((f"ai_{t}", f"AI {t}", False) for t in tiers),
        ("flops", "FLOP/s", False),
        ("bandwidth", "Bandwidth", False),
    ]
    return columns


def _row_cells(summary: Summary, row: Row) -> dict[str, tuple[Any, str]]:
    """Data key → (sort value, displayed text) of every cell of one row."""
    g, lead = row.group, row.group.lead
    share = g.device_share if summary.multi_device else g.time_share
    tier = bandwidth_tier(lead)
    notes = ",".join(map(str, row.notes))
    cells: dict[str, tuple[Any, str]] = {
        "rank": (row.rank, str(row.rank)),
        "device": (g.device, str(g.device)),
        "name": (None, shorten(g.name, NAME_WIDTH)),  # sorted by the full name, `names`
        "launches": (g.count, str(g.count)),
        "duration": (g.total_duration_s, si(g.total_duration_s, "s")),
        "share": (share, pct(None if share is None else 100 * share)),
        "verdict": (None, row.verdict),
        "notes": (None, notes),
        "pct": (lead.pct_of_roof, pct(lead.pct_of_roof)),
        "headroom": (g.headroom_s, "–" if g.headroom_s is None else si(g.headroom_s, "s")),
        "binding": (None, lead.roofline_binding or "–"),
        "flops": (lead.achieved_flop_per_s, si(lead.achieved_flop_per_s, "FLOP/s")),
        "bandwidth": (
            lead.achieved_byte_per_s[tier] if tier else None,
            f"{si(lead.achieved_byte_per_s[tier], 'B/s')} ({tier})" if tier else "–",
        ),
    }
    for tier_name, value in lead.intensity_flop_per_byte.items():
        cells[f"ai_{tier_name}"] = (value, intensity(value))
    return cells


def _sort_value(value: Any) -> Any:
    """Enough digits to order rows (6), so that 100,000 rows stay small; text sorts by its cell."""
    if isinstance(value, float):
        number = finite_or_none(value)
        return None if number is None else float(f"{number:.6g}")
    return value


def table_data(summary: Summary, columns: Sequence[Column]) -> dict[str, Any]:
    """What the script lays out: names once, then per row its sort values and its cells' text.

    At most TABLE_MAX_ROWS rows (the first by the summary's order); the JSON has every launch.
    """
    names: dict[str, int] = {}
    rows = []
    for row in summary.rows[:TABLE_MAX_ROWS]:
        cells = _row_cells(summary, row)
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
        "columns": [{"key": key, "text": text} for key, _, text in columns],
        "names": list(names),
        "rows": rows,
        "page": PAGE_ROWS,
        "total": len(summary.rows),
        "what": "kernels" if summary.grouped else "launches",
    }


def _table_section(summary: Summary, columns: Sequence[Column]) -> list[str]:
    headers = "".join(
        f'<th data-key="{escape(key)}" aria-sort="none"{" class=text" if text else ""}>'
        f'<button type="button">{escape(label)}</button></th>'
        for key, label, text in columns
    )
    options = "".join(f'<option value="{b.value}">{VERDICT_WORDS[b]}</option>' for b in Bound)
    what = "kernels" if summary.grouped else "launches"
    order = "by time" if summary.sort.value == "time" else "by the time they could save"
    folded = "in one NVTX range" if summary.by_nvtx else "of one kernel, launch shape"
    grouped = f" Launches {folded} and device are one row." if summary.grouped else ""
    return [
        f'<h2 id="table">{what.capitalize()} {order}</h2>',
        '<div class="controls">'
        '<input type="search" id="filter" placeholder="Filter by kernel name" aria-label="filter">'
        '<select id="verdict" aria-label="verdict">'
        f'<option value="">every verdict</option>{options}</select>'
        '<button type="button" class="page" id="prev">previous</button>'
        '<button type="button" class="page" id="next">next</button>'
        f'<span id="shown" class="muted">{len(summary.rows)} {what}</span></div>',
        f'<div class="scroll"><table id="kernels"><thead><tr>{headers}</tr></thead>'
        "<tbody></tbody></table></div>",
        "<noscript><p>The table needs JavaScript; the JSON and CSV outputs hold the same rows.</p>"
        "</noscript>",
        *(
            [
                f'<p class="muted">The table holds the first {TABLE_MAX_ROWS:,} of {len(summary.rows):,} '
                f"{what}; the JSON and CSV outputs have every launch.</p>"
            ]
            if len(summary.rows) > TABLE_MAX_ROWS
            else []
        ),
        f'<p class="muted">{escape("; ".join(summary.legend()))}.{grouped} '
        "Click a header to sort; a name for its details.</p>",
    ]


def _notes_section(summary: Summary) -> list[str]:
    if not summary.notes:
        return []
    items = "".join(
        f'<li value="{n.number}"><b>{plural(n.launches, "launch")}</b>'
        f"{' (numbers vary)' if n.variants > 1 else ''}: {escape(one_line(n.text))}</li>"
        for n in summary.notes
    )
    return ['<h2 id="notes">Notes</h2>', f'<ol class="notes">{items}</ol>']


def _details_section(summary: Summary) -> list[str]:
    rows = summary.rows[:DETAILS_ROWS]
    if not rows:
        return []
    more = len(summary.rows) - len(rows)
    tail = (
        [f'<p class="muted">Details of the first {len(rows)} rows; the JSON has every launch.</p>']
        if more
        else []
    )
    return [
        '<h2 id="details">Details</h2>',
        *(_details(r, summary.total_s) for r in rows),
        *tail,
    ]


def _details(row: Row, total_s: float) -> str:
    kernel = row.group.lead
    g = row.group
    launch = f"grid {kernel.grid or '–'}, block {kernel.block or '–'}, device {kernel.device}"
    if g.count > 1:
        launch += (
            f"; {g.count} launches, mean {si(g.mean_duration_s, 's')}, min {si(g.min_duration_s, 's')}, "
            f"max {si(g.max_duration_s, 's')}; the numbers below are of the longest launch"
        )
    notes = "".join(f"<li>{escape(one_line(note))}</li>" for note in g.notes)
    facts = "".join(
        f"<tr><th class=text>{escape(label)}</th><td>{escape(value)}</td>"
        f'<td class="recipe"><code>{escape(one_line(recipe))}</code></td></tr>'
        for label, value, recipe in _facts(kernel, total_s)
    )
    badge = f'<span class="badge {row.bound.value}">{escape(row.verdict)}</span>'
    return (
        f'<details id="k{row.rank}"><summary>#{row.rank} <code>{escape(shorten(kernel.name, NAME_WIDTH))}'
        f"</code> — {badge}</summary>"
        f'<p class="fullname"><code>{escape(one_line(kernel.name))}</code></p>'
        f'<p class="muted">ID {kernel.id}, {escape(one_line(launch))}</p>'
        f'<table class="facts"><thead><tr><th class=text>Quantity</th><th>Value</th>'
        f'<th class="text">Recipe</th></tr></thead><tbody>{facts}</tbody></table>'
        + (f"<ul>{notes}</ul>" if notes else "")
        + "</details>"
    )


def _facts(kernel: Kernel, total_s: float) -> list[tuple[str, str, str]]:
    """(quantity, value, recipe) for every number the analysis has for one launch."""
    from ncu_roof.groups import headroom_s

    recipe = kernel.recipe
    facts = [("duration", si(kernel.duration_s, "s"), recipe.get("duration_s", "–"))]
    if kernel.time_share is not None:
        share = pct(100 * kernel.time_share)
        facts.append(("share of time", share, f"duration / {si(total_s, 's')}"))
    for precision in PRECISIONS:
        key, value = f"flop_{precision}", kernel.flop.get(precision)
        if value is not None or key in recipe:
            facts.append((f"FLOP {precision}", si(value, "FLOP"), recipe.get(key, "–")))
    facts.append(("FLOP total", si(kernel.flop.get("total"), "FLOP"), "sum over precisions"))
    for tier in [*TIERS, *sorted(set(kernel.bytes) - set(TIERS))]:
        key, value = f"{tier}_bytes", kernel.bytes.get(tier)
        if value is not None or key in recipe:
            facts.append((f"bytes {tier}", si(value, "B"), recipe.get(key, "–")))
    facts += [
        (f"intensity {tier}", f"{intensity(value)} FLOP/B", f"FLOP total / bytes {tier}")
        for tier, value in kernel.intensity_flop_per_byte.items()
        if value is not None
    ]
    achieved = si(kernel.achieved_flop_per_s, "FLOP/s")
    facts.append(("achieved FLOP/s", achieved, "FLOP total / duration"))
    facts += [
        (f"bandwidth {tier}", si(rate, "B/s"), f"bytes {tier} / duration")
        for tier, rate in kernel.achieved_byte_per_s.items()
        if rate is not None
    ]
    facts += [(f"cap {r}", si(c, "FLOP/s"), _cap_recipe(r)) for r, c in kernel.cap_flop_per_s.items()]
    facts += [
        ("attainable FLOP/s", si(kernel.attainable_flop_per_s, "FLOP/s"), "lowest cap"),
        ("% of roof", pct(kernel.pct_of_roof), "roofline minimum time / duration"),
        ("could save", si(headroom_s(kernel), "s"), "duration × (1 − % of roof / 100)"),
    ]
    facts += [
        (f"SOL {unit}", pct(value), "ncu speed of light, % of peak")
        for unit, value in kernel.sol_pct.items()
        if value is not None
    ]
    return facts


def _cap_recipe(roof: str) -> str:
    if roof == "compute":
        return "compute peak of the kernel's precisions"
    return f"min(compute peak, {roof} bandwidth x intensity {roof})"


def _roofs_section(analysis: Analysis) -> list[str]:
    parts = ['<h2 id="roofs">Roofs</h2>']
    for device in analysis.devices:
        roofs = device.roofs
        entries = [(p, v, "FLOP/s") for p, v in roofs.compute_flop_per_s.items()]
        entries += [(t, v, "B/s") for t, v in roofs.bandwidth_byte_per_s.items()]
        gpu = f"<code>{escape(one_line(device.name))}</code>" if device.name else "unknown GPU"
        if not entries:
            parts.append(
                f"<p>{gpu}: no roofs (pass <code>--gpu KEY</code> or <code>--roofs FILE</code>).</p>"
            )
            continue
        rows = "".join(
            f"<tr><th class=text>{escape(one_line(key))}</th><td>{escape(si(value, unit))}</td>"
            f'<td class="recipe"><code>{escape(one_line(roofs.sources.get(key, roofs.source)))}'
            "</code></td></tr>"
            for key, value, unit in entries
        )
        parts.append(
            f"<details><summary>Device {device.index}: {gpu}, roofs from "
            f"<code>{escape(one_line(roofs.source))}</code></summary>"
            '<table class="facts"><thead><tr><th class=text>Roof</th><th>Peak</th>'
            f'<th class="text">Source</th></tr></thead><tbody>{rows}</tbody></table></details>'
        )
    return parts


def _hint_section(hint: str | None) -> list[str]:
    if not hint:
        return []
    return [
        '<h2 id="missing">Missing counters</h2>',
        f"<p>Profile again with them:</p><pre><code>{escape(one_line(hint))}</code></pre>",
    ]
