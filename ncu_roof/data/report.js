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
