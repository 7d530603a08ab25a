"""One self-contained HTML report: headline, inline plot, sortable/filterable table, details.

No network: CSS, JS and the SVG plot are inline, and a Content-Security-Policy forbids any fetch
and allows only our own script (by hash). Every data string goes through `html.escape`; the data
the script needs is JSON in a `<script type="application/json">` with `<`, `>`, `&` escaped.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from html import escape
from pathlib import PurePath
from typing import Any

from ncu_roof import __version__
from ncu_roof.analysis import Analysis, Device, Kernel, describe
from ncu_roof.errors import NcuRoofError
from ncu_roof.model import PRECISIONS, TIERS, Bound, finite_or_none
from ncu_roof.render.markdown import (
    BOUND_WORDS,
    bandwidth_tier,
    bound_shares,
    intensity,
    intensity_tiers,
    memory_tier_shares,
)
from ncu_roof.render.plot import render_plot
from ncu_roof.render.text import one_line, pct, shorten, si

NAME_WIDTH = 70
_SVG_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", re.IGNORECASE)
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}

_CSS = """
/* verdict colours: the same as render/plot.py's VERDICT_COLOURS */
:root{--memory:#1f5fa8;--compute:#c0392b;--latency:#e08e0b;--balanced:#8e44ad;--unknown:#7f7f7f;--line:#d0d7de}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1400px;padding:1.5rem 2rem;color:#1f2328;background:#fff}
h1{font-size:1.6rem;margin:.2rem 0 .6rem}h2{font-size:1.2rem;margin:2rem 0 .6rem;
border-bottom:1px solid var(--line);padding-bottom:.3rem}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.lead{font-size:1.05rem}.muted{color:#59636e}
.bar{display:flex;height:14px;border-radius:7px;overflow:hidden;max-width:640px;margin:.4rem 0}
.bar span{display:block;height:100%}
.memory{background:var(--memory)}.compute{background:var(--compute)}
.latency{background:var(--latency)}.balanced{background:var(--balanced)}.unknown{background:var(--unknown)}
.key{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin:0 .3em 0 .8em}
.badge{display:inline-block;padding:0 .45em;border-radius:.8em;color:#fff;white-space:nowrap}
figure{margin:0}figure svg{max-width:100%;height:auto}
.controls{display:flex;gap:.8rem;align-items:center;margin:.5rem 0}
input,select{font:inherit;padding:.25rem .5rem;border:1px solid var(--line);border-radius:6px}
input{width:28rem;max-width:60vw}
table{border-collapse:collapse;width:100%}
th,td{padding:.3rem .55rem;border-bottom:1px solid var(--line);text-align:right;
vertical-align:top}
th{position:sticky;top:0;background:#f6f8fa;white-space:nowrap}
th button{all:unset;cursor:pointer;font-weight:600}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
td{white-space:nowrap}td.text,th.text{text-align:left;white-space:normal}
.scroll{overflow-x:auto}
#kernels tbody tr:hover{background:#f6f8fa}
details{border:1px solid var(--line);border-radius:6px;margin:.4rem 0;padding:.3rem .7rem}
details[open]{background:#fbfcfd}summary{cursor:pointer}
.fullname{overflow-wrap:anywhere;margin:.5rem 0}
.facts td,.facts th{font-size:13px}.facts{width:auto;margin:.3rem 0}
.recipe{text-align:left;color:#59636e;white-space:normal;overflow-wrap:anywhere}
"""

_JS = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("ncu-roof-data").textContent);
  var tbody = document.getElementById("kernels").tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var headers = Array.prototype.slice.call(document.querySelectorAll("#kernels th[data-key]"));
  var filter = document.getElementById("filter");
  var verdict = document.getElementById("verdict");
  var shown = document.getElementById("shown");
  var state = { key: "rank", dir: 1 };

  function value(row, key) { return data.kernels[Number(row.dataset.k)][key]; }
  function compare(a, b) {
    var x = value(a, state.key), y = value(b, state.key);
    if (x === null || y === null) { return x === y ? 0 : (x === null ? 1 : -1); }
    if (typeof x === "string") { return state.dir * x.localeCompare(y); }
    return state.dir * (x - y);
  }
  function sortBy(key, dir) {
    state = { key: key, dir: dir };
    rows.sort(function (a, b) { return compare(a, b) || value(a, "rank") - value(b, "rank"); });
    rows.forEach(function (row) { tbody.appendChild(row); });
    headers.forEach(function (th) {
      var sorted = th.dataset.key === key;
      th.setAttribute("aria-sort", sorted ? (dir > 0 ? "ascending" : "descending") : "none");
    });
    document.body.dataset.sorted = key + ":" + (dir > 0 ? "asc" : "desc");
  }
  function applyFilter() {
    var needle = filter.value.toLowerCase(), bound = verdict.value, count = 0;
    rows.forEach(function (row) {
      var k = data.kernels[Number(row.dataset.k)];
      var keep = k.name.toLowerCase().indexOf(needle) >= 0 && (!bound || k.bound === bound);
      row.hidden = !keep;
      count += keep ? 1 : 0;
    });
    shown.textContent = count + " of " + rows.length + " kernels shown";
  }
  function openFromHash() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  headers.forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var key = th.dataset.key;
      var dir = key === state.key ? -state.dir : (th.dataset.type === "text" ? 1 : -1);
      sortBy(key, dir);
    });
  });
  filter.addEventListener("input", applyFilter);
  verdict.addEventListener("change", applyFilter);
  window.addEventListener("hashchange", openFromHash);

  var params = new URLSearchParams(location.search);
  var keys = headers.map(function (th) { return th.dataset.key; });
  var wanted = params.get("sort");
  if (wanted && keys.indexOf(wanted) >= 0) { sortBy(wanted, params.get("dir") === "asc" ? 1 : -1); }
  else { sortBy("rank", 1); }
  filter.value = params.get("q") || "";
  verdict.value = params.get("bound") || "";
  applyFilter();
  openFromHash();
})();
"""


def render_html(analysis: Analysis, *, plot_svg: str | None = None) -> str:
    """The report as one HTML document; `plot_svg` is inlined (by default one roofline per device)."""
    kernels = analysis.by_time()
    tiers = intensity_tiers(analysis)
    plot = plot_svg if plot_svg is not None else _default_plot(analysis)
    script = _JS.strip()
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    title = f"ncu-roof: {len(kernels)} kernels, {si(analysis.total_duration_s, 's')}"
    body = [
        *_headline(analysis),
        *_plot_section(plot),
        *_table_section(kernels, tiers),
        *_details_section(kernels, analysis.total_duration_s),
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
            f"{script_json(_table_data(kernels, tiers))}</script>",
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


def _default_plot(analysis: Analysis) -> str | None:
    """One SVG roofline per device that ran kernels; None (no plot section) when there is none."""
    parts = []
    for device in analysis.devices:
        if not any(k.device == device.index for k in analysis.kernels):
            continue
        try:
            parts.append(render_plot(analysis, fmt="svg", device=device.index).decode("utf-8"))
        except NcuRoofError as error:
            parts.append(f"<p>No plot for device {device.index}: {escape(one_line(error.message))}</p>")
    return "\n".join(parts) or None


def _headline(analysis: Analysis) -> list[str]:
    count = len(analysis.kernels)
    total = si(analysis.total_duration_s, "s")
    shares = sorted(bound_shares(analysis).items(), key=lambda item: -item[1])
    bar = "".join(
        f'<span class="{b.value}" style="width:{100 * s:.3f}%" title="{BOUND_WORDS[b]} '
        f'{pct(100 * s)}"></span>'
        for b, s in shares
        if s > 0
    )
    tiers = memory_tier_shares(analysis)
    words = []
    for bound, share in shares:
        if share <= 0:
            continue
        detail = ""
        if bound is Bound.MEMORY and tiers:
            detail = " (" + ", ".join(f"{escape(t)} {pct(100 * s)}" for t, s in tiers.items()) + ")"
        words.append(
            f'<span class="key {bound.value}"></span><b>{pct(100 * share)}</b> {BOUND_WORDS[bound]}{detail}'
        )
    lines = [
        f"<h1>Roofline: {count} kernel{'s' if count != 1 else ''}, {escape(total)}</h1>",
        f'<div class="bar">{bar}</div>',
        f'<p class="lead">Share of time: {" ".join(words) or "no kernel has a duration"}</p>',
    ]
    kernels = analysis.by_time()
    if kernels:
        lines.append(f'<p class="lead">{_costliest(kernels[0])}</p>')
    devices = "; ".join(_device_words(analysis, d) for d in analysis.devices)
    lines.append(f'<p class="muted">{devices}</p>')
    return lines


def _costliest(kernel: Kernel) -> str:
    verdict = escape(describe(kernel))
    if kernel.pct_of_roof is not None:
        verdict += f" at {pct(kernel.pct_of_roof)} of its roof"
    share = f"{pct(100 * kernel.time_share)} of time, " if kernel.time_share is not None else ""
    name = escape(shorten(kernel.name, NAME_WIDTH))
    return (
        f'Costliest kernel: <a href="#k1"><code>{name}</code></a> '
        f"({share}{escape(si(kernel.duration_s, 's'))}): <b>{verdict}</b>."
    )


def _device_words(analysis: Analysis, device: Device) -> str:
    info = analysis.inputs[device.input]
    gpu = f"<code>{escape(one_line(device.name))}</code>" if device.name else "unknown GPU"
    cc = f" (CC {escape(one_line(device.cc))})" if device.cc else ""
    version = f", ncu {escape(one_line(info.ncu_version))}" if info.ncu_version else ""
    path = escape(one_line(PurePath(info.path).name))
    return f"GPU {gpu}{cc} from <code>{path}</code>{version}"


def _plot_section(plot: str | None) -> list[str]:
    if plot is None:
        return []
    svg = _SVG_PROLOG.sub("", plot)
    return ['<h2 id="plot">Hierarchical roofline</h2>', f"<figure>{svg}</figure>"]


def _columns(tiers: Sequence[str]) -> list[tuple[str, str, str]]:
    """(data key, header, type) of each table column."""
    return [
        ("rank", "#", "number"),
        ("name", "Kernel", "text"),
        ("duration", "Time", "number"),
        ("share", "Share", "number"),
        ("verdict", "Verdict", "text"),
        ("binding", "Binding", "text"),
        ("pct", "% of roof", "number"),
        *((f"ai_{t}", f"AI {t}", "number") for t in tiers),
        ("flops", "FLOP/s", "number"),
        ("bandwidth", "Bandwidth", "number"),
    ]


def _table_section(kernels: Sequence[Kernel], tiers: Sequence[str]) -> list[str]:
    headers = "".join(
        f'<th data-key="{escape(key)}" data-type="{kind}" aria-sort="none"'
        f'{" class=text" if kind == "text" else ""}><button type="button">{escape(label)}'
        "</button></th>"
        for key, label, kind in _columns(tiers)
    )
    options = "".join(f'<option value="{b.value}">{BOUND_WORDS[b]}</option>' for b in Bound)
    rows = [_row(k, i, tiers) for i, k in enumerate(kernels)]
    return [
        '<h2 id="table">Kernels by time</h2>',
        '<div class="controls">'
        '<input type="search" id="filter" placeholder="Filter by kernel name" aria-label="filter">'
        '<select id="verdict" aria-label="verdict">'
        f'<option value="">every verdict</option>{options}</select>'
        f'<span id="shown" class="muted">{len(kernels)} kernels</span></div>',
        f'<div class="scroll"><table id="kernels"><thead><tr>{headers}</tr></thead><tbody>',
        *rows,
        "</tbody></table></div>",
        '<p class="muted">AI = arithmetic intensity (FLOP/byte) against each memory tier; '
        "Binding = the roof that limits the kernel in the roofline model; % of roof = the "
        "roofline's minimum time over the measured time; Bandwidth = achieved, at the binding tier "
        "(DRAM when compute-bound). Click a header to sort; click a name for its details.</p>",
    ]


def _row(kernel: Kernel, index: int, tiers: Sequence[str]) -> str:
    tier = bandwidth_tier(kernel)
    bandwidth = "–"
    if tier is not None:
        bandwidth = f"{si(kernel.achieved_byte_per_s[tier], 'B/s')} ({tier})"
    cells = [
        str(index + 1),
        f'<a href="#k{index + 1}" title="{escape(one_line(kernel.name))}">'
        f"<code>{escape(shorten(kernel.name, NAME_WIDTH))}</code></a>",
        escape(si(kernel.duration_s, "s")),
        pct(100 * kernel.time_share) if kernel.time_share is not None else "–",
        _badge(kernel),
        escape(kernel.roofline_binding or "–"),
        pct(kernel.pct_of_roof),
        *(escape(intensity(kernel.intensity_flop_per_byte.get(t))) for t in tiers),
        escape(si(kernel.achieved_flop_per_s, "FLOP/s")),
        escape(bandwidth),
    ]
    text_columns = {1, 4, 5}
    tds = "".join(
        f'<td class="text">{cell}</td>' if i in text_columns else f"<td>{cell}</td>"
        for i, cell in enumerate(cells)
    )
    return f'<tr data-k="{index}" data-bound="{kernel.bound.value}">{tds}</tr>'


def _badge(kernel: Kernel) -> str:
    return f'<span class="badge {kernel.bound.value}">{escape(describe(kernel))}</span>'


def _table_data(kernels: Sequence[Kernel], tiers: Sequence[str]) -> dict[str, Any]:
    rows = []
    for index, kernel in enumerate(kernels):
        tier = bandwidth_tier(kernel)
        rows.append(
            {
                "rank": index + 1,
                "name": kernel.name,
                "duration": finite_or_none(kernel.duration_s),
                "share": finite_or_none(kernel.time_share),
                "verdict": describe(kernel),
                "bound": kernel.bound.value,
                "binding": kernel.roofline_binding,
                "pct": finite_or_none(kernel.pct_of_roof),
                **{f"ai_{t}": finite_or_none(kernel.intensity_flop_per_byte.get(t)) for t in tiers},
                "flops": finite_or_none(kernel.achieved_flop_per_s),
                "bandwidth": finite_or_none(kernel.achieved_byte_per_s[tier]) if tier else None,
            }
        )
    return {"kernels": rows}


def _details_section(kernels: Sequence[Kernel], total_s: float) -> list[str]:
    if not kernels:
        return []
    return [
        '<h2 id="details">Kernel details</h2>',
        *(_details(k, i + 1, total_s) for i, k in enumerate(kernels)),
    ]


def _details(kernel: Kernel, rank: int, total_s: float) -> str:
    launch = f"grid {kernel.grid or '–'}, block {kernel.block or '–'}, device {kernel.device}"
    notes = "".join(f"<li>{escape(one_line(note))}</li>" for note in kernel.notes)
    facts = "".join(
        f"<tr><th class=text>{escape(label)}</th><td>{escape(value)}</td>"
        f'<td class="recipe"><code>{escape(one_line(recipe))}</code></td></tr>'
        for label, value, recipe in _facts(kernel, total_s)
    )
    return (
        f'<details id="k{rank}"><summary>#{rank} <code>{escape(shorten(kernel.name, NAME_WIDTH))}'
        f"</code> — {_badge(kernel)}</summary>"
        f'<p class="fullname"><code>{escape(one_line(kernel.name))}</code></p>'
        f'<p class="muted">ID {kernel.id}, {escape(one_line(launch))}</p>'
        f'<table class="facts"><thead><tr><th class=text>Quantity</th><th>Value</th>'
        f'<th class="text">Recipe</th></tr></thead><tbody>{facts}</tbody></table>'
        + (f"<ul>{notes}</ul>" if notes else "")
        + "</details>"
    )


def _facts(kernel: Kernel, total_s: float) -> list[tuple[str, str, str]]:
    """(quantity, value, recipe) for every number the analysis has for one kernel."""
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
            f"<p>{gpu}, roofs from <code>{escape(one_line(roofs.source))}</code>:</p>"
            '<table class="facts"><thead><tr><th class=text>Roof</th><th>Peak</th>'
            f'<th class="text">Source</th></tr></thead><tbody>{rows}</tbody></table>'
        )
    return parts


def _hint_section(hint: str | None) -> list[str]:
    if not hint:
        return []
    return [
        '<h2 id="missing">Missing counters</h2>',
        f"<p>Profile again with them:</p><pre><code>{escape(one_line(hint))}</code></pre>",
    ]
