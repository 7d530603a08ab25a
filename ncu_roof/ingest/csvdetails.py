"""The details page (`--page details`): one row per (launch, metric), pivoted to one row per launch.

Its metric rows are ragged, so it is read with the csv module; a damaged row taints the kernels
around it, and a kernel whose rows cannot all be its own (`partial_groups`) is damaged too.
`text_columns` makes the launch table of any page of values as printed: this one, a
`--print-summary` CSV and console text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.units import NumberStyle, effective_unit, parse_numbers, si_factor, unreadable
from ncu_roof.ingest.csvblocks import (
    _CSV_IDENTITY,
    _DEVICE,
    _INTEGER,
    LAUNCH_ID,
    Block,
    Damage,
    check_ids,
    choose_style,
    device_problem,
    id_problem,
    one_cell,
    records,
)
from ncu_roof.ingest.nvtx import nvtx_columns, nvtx_of_cells
from ncu_roof.ingest.sanity import unreadable_note
from ncu_roof.ingest.table import identity_frame

# Section-header labels of the details page (all known spellings) → the metric they print.
_LABELS: dict[str, str] = {
    "Duration": "gpu__time_duration.sum",
    "Elapsed Cycles": "gpc__cycles_elapsed.max",
    "SM Frequency": "gpc__cycles_elapsed.avg.per_second",
    "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
    "Compute (SM) Throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "Compute (SM) [%]": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "SM [%]": "sm__throughput.avg.pct_of_peak_sustained_elapsed",  # ncu 2019.x-2020.x pages
    "SOL SM": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "Memory Throughput": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "Memory [%]": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL Memory": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAM Throughput": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL DRAM": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "L1/TEX Cache Throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "SOL L1/TEX Cache": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "L2 Cache Throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL L2 Cache": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "Waves Per SM": "launch__waves_per_multiprocessor",
    "# SMs": "launch__sm_count",  # Launch Statistics: what a GPU the page does not name is inferred by
}
# "Memory Throughput" in Memory Workload Analysis is a bandwidth, not a percentage.
_BANDWIDTH_LABELS = {"Memory Throughput": "dram__bytes.sum.per_second"}
# Launch Statistics: the launch's totals, which `settle_shapes` checks ncu's Grid Size and Block
# Size columns against (the console reader reads these labels too; `--print-summary` does not).
LAUNCH_LABELS = {"Grid Size": "launch__grid_size", "Block Size": "launch__block_size"}


def metric_for(name: str, unit: str) -> str | None:
    if "__" in name:
        return name if is_wanted(name) else None
    if unit.endswith(("/second", "/s")) and "Throughput" in name:  # a bandwidth, not a percentage
        return _BANDWIDTH_LABELS.get(name)
    return _LABELS.get(name)


def _identity_problem(ident: str, process: str, device: str) -> str | None:
    if not LAUNCH_ID.match(ident):
        return id_problem(ident)
    if not _INTEGER.match(process):
        return f"Process ID {one_cell(process)} is not an integer"
    if device.strip() and not _DEVICE.match(device):
        return device_problem(device)
    return None


def _details_rows(blocks: list[Block], damage: Damage) -> Iterator[dict[str, str]]:
    """The metric rows of every block; a damaged row taints the kernels on either side of it
    (with `skip_bad_rows` those kernels are left out whole: a partial kernel would be read
    with other formulas)."""
    for run, block in enumerate(blocks):
        header = block.header
        least = header.index("Metric Value") + 1
        tainted: set[str] = set()
        previous: str | None = None
        seen = before = len(damage.rows)
        kept: list[dict[str, str]] = []
        checked: dict[tuple[str, str, str], str | None] = {}  # the same IDs repeat on every row
        for line, row in records(block, damage):
            record = dict(zip(header, row, strict=False))
            ident, device = record.get("ID", "").strip(), record.get("Device", "")
            cells = (ident, record.get("Process ID", "0"), device)
            if cells not in checked:
                checked[cells] = _identity_problem(*cells)
            problem = checked[cells]
            if not least <= len(row) <= len(header):
                problem = f"{len(row)} cells where the header has {least} to {len(header)}"
            if problem is not None:
                damage.add(line, problem)
                if LAUNCH_ID.match(ident):
                    tainted.add(ident)
                continue
            if len(damage.rows) > seen:  # damaged rows since the last good one
                tainted.update({ident} | ({previous} if previous is not None else set()))
            seen = len(damage.rows)
            previous = record["ID"] = ident
            if record.get("Metric Name", ""):
                record["run"] = str(run)
                record["_line"] = str(line)
                kept.append(record)
        if len(damage.rows) > seen and previous is not None:
            tainted.add(previous)
        clean = len(damage.rows) == before
        rows = [(f"kernel ID {r['ID']} of process {r.get('Process ID', '')}", r) for r in kept]
        ids = {label: r["ID"] for label, r in rows}
        order = [(label, int(r["_line"]), r.get("Section Name", ""), r["Metric Name"]) for label, r in rows]
        for label, (line, reason) in partial_groups(order).items():
            damage.add(line, reason)
            tainted.add(ids[label])
        if clean:  # a gap beside a damaged row is that row
            first: dict[str, int] = {}  # each launch's first row, in the page's order
            for record in kept:
                first.setdefault(record["ID"], int(record["_line"]))
            check_ids([int(i) for i in first], list(first.values()).__getitem__, damage)
        damage.lost_kernels += len(tainted)
        yield from (r for r in kept if r["ID"] not in tainted)


def partial_groups(rows: list[tuple[str, int, str, str]]) -> dict[str, tuple[int, str]]:
    """Kernels of a per-metric page whose rows cannot all be theirs: (line, reason) per key.

    `rows` are (kernel key, line, section, metric) in file order, one per row. ncu prints every
    kernel of a run with the same rows, together; rows of one kernel split by another's, or a
    kernel holding only some of the rows of another kernel's sequence (the first, the last, all
    but one in the middle), are what a cut, a lost line or a damaged ID leave behind.
    """
    found: dict[str, tuple[int, str]] = {}
    done: set[str] = set()
    previous = None
    first_line: dict[str, int] = {}
    sequences: dict[str, list[tuple[str, str]]] = {}  # each kernel's (section, metric) rows
    for key, line, section, metric in rows:
        if key != previous and key in done and key not in found:
            found[key] = (line, f"rows of {key} are split by another kernel's (damaged ID?)")
        if previous is not None and key != previous:
            done.add(previous)
        previous = key
        first_line.setdefault(key, line)
        sequences.setdefault(key, []).append((section, metric))
    shapes = {tuple(seq) for seq in sequences.values()}
    for key, seq in sequences.items():
        whole = tuple(seq)
        for other in shapes:
            remaining = iter(other)  # `whole` is `other` with rows left out, in its order
            if len(other) > len(whole) and all(row in remaining for row in whole):
                lacking = next(metric for section, metric in other if (section, metric) not in whole)
                found.setdefault(
                    key,
                    (
                        first_line[key],
                        f"{key} has {len(whole)} of the {len(other)} metric rows other kernels have, "
                        f"{one_cell(lacking)} not among them (truncated file or a lost line?)",
                    ),
                )
                break
    return found


_DETAIL_IDENTITY = [c for c in _CSV_IDENTITY if c not in ("ID", "Process ID")]


def read_details(
    blocks: list[Block], style: NumberStyle | None, damage: Damage
) -> tuple[pl.DataFrame | None, int]:
    """One row per kernel (in the order of run and ID): every kernel with a metric row, even one
    whose metrics are all unknown (its values are missing then, but it is not lost)."""
    launches: dict[tuple[str, str, str], dict[str, str | None]] = {}  # (run, ID, process) → identity
    cells: list[tuple[tuple[str, str, str], str, str, str]] = []
    columns = list(dict.fromkeys(c for b in blocks for c in nvtx_columns(b.header)))
    for r in _details_rows(blocks, damage):
        key = (r["run"], r["ID"], r.get("Process ID", ""))
        if key not in launches:  # a launch's identity: its first row's
            launches[key] = {_CSV_IDENTITY[c]: r.get(c) for c in _DETAIL_IDENTITY}
            launches[key]["nvtx"] = nvtx_of_cells({c: r.get(c, "") for c in columns})
        unit = r.get("Metric Unit", "")
        metric = metric_for(r["Metric Name"], unit) or LAUNCH_LABELS.get(r["Metric Name"])
        if metric is not None:
            cells.append((key, metric, r.get("Metric Value", ""), effective_unit(metric, unit)))
    lost = damage.lost_kernels
    if not launches:
        return None, lost
    order = sorted(launches, key=lambda key: (int(key[0]), int(key[1])))
    row = {key: i for i, key in enumerate(order)}
    identity: dict[str, Any] = dict(zip(("run", "id", "process_id"), zip(*order, strict=True), strict=True))
    identity |= {name: [launches[k][name] for k in order] for name in launches[order[0]]}
    number_style = choose_style([text for _, _, text, _ in cells], style)
    ordered = [(row[k], metric, text, unit) for k, metric, text, unit in cells]
    return text_columns(identity, ordered, number_style, sort=True), lost


Cell = tuple[int, str, str, str]  # a launch (its row), a metric, its text as printed, its unit


def text_columns(
    identity: Mapping[str, Any],
    cells: Sequence[Cell],
    style: NumberStyle,
    notes: Sequence[tuple[str, ...]] | None = None,
    *,
    sort: bool = False,
) -> pl.DataFrame:
    """Launches whose metrics are texts as printed (the details page, a summary, console text) →
    `RunTable.launches`: a launch's first cell of each metric parsed in SI (NaN where it has none),
    the metrics in the order first seen (`sort`: by name); each cell that reads as no number is a
    note on its launch, after its `notes`."""
    rows = len(identity["id"])
    lines = [list(n) for n in notes] if notes is not None else [[] for _ in range(rows)]
    metrics = list(dict.fromkeys(metric for _, metric, _, _ in cells))
    values: list[pl.Series] = []
    if cells:
        launch, metric, texts, units = zip(*cells, strict=True)
        numbers = parse_numbers(texts, style)
        for i, text in unreadable(texts, numbers):
            lines[launch[i]].append(unreadable_note(metric[i], text))
        code = {name: k for k, name in enumerate(sorted(metrics) if sort else metrics)}
        factor = {unit: si_factor(unit) for unit in dict.fromkeys(units)}
        where = np.array(launch) + rows * np.array([code[m] for m in metric])
        _, first = np.unique(where, return_index=True)  # a launch's first cell of a metric
        table = np.full((len(code), rows), np.nan)
        table.flat[where[first]] = (numbers * np.array([factor[u] for u in units]))[first]
        values = [pl.Series(name, row) for name, row in zip(code, table, strict=True)]
    notes_column = [n or None for n in lines]
    return identity_frame({**identity, "input_notes": notes_column}, rows).hstack(values)
