"""The HTML report's inline assets: its style sheet (verdict colours from `render.summary`) and
its one script, which lays out, sorts, filters and pages the table from the page's JSON data
with `textContent` only (the Content-Security-Policy allows it by hash).
"""

from __future__ import annotations

from ncu_roof.base.vocabulary import Bound
from ncu_roof.render.summary import VERDICT_COLOURS

CSS = (
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
td.name{white-space:normal;min-width:9rem;overflow-wrap:anywhere}td.wrap{white-space:normal}
#kernels{font-size:14px}#kernels th,#kernels td{padding:.3rem .28rem}
#kernels th{white-space:normal;vertical-align:bottom}
#kernels td.text{white-space:normal}#kernels td.text .badge{white-space:normal}
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

SCRIPT = """
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
    else if (c.wrap) { td.className = "wrap"; }
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
