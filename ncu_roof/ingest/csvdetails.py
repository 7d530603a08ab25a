"""The pages of one row per (kernel, metric), pivoted to one row per launch (`text_columns`, as
console text is): the details page (`--page details`) and `--print-summary per-kernel|per-gpu
--csv`, read with the csv module (their rows are ragged). A kernel a damaged row taints, or whose
rows cannot all be its own (`partial_groups`), is damaged.

A summary's header (per-kernel; per-gpu puts "Device Id" after "Host Name"):
`"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","Device Id",
"Invocations","Section Name","Metric Name","Metric Unit","Minimum","Maximum","Average"`.
A newer ncu names the device column "Device" and adds "CC" after it (read as the launches' `cc`).
A kernel is one (process, name, block, grid, device) group; its values are the Average column (each
metric listed in `RunTable.averaged`, each kernel noted), "Invocations N" N launches (`kernel_launches`)."""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.units import (
    GROUP_MARKS,
    NumberStyle,
    detect_number_style,
    effective_unit,
    parse_numbers,
    si_factor,
    unreadable,
)
from ncu_roof.errors import BadInputError, naming_file
from ncu_roof.ingest.csvblocks import (
    _CSV_IDENTITY,
    _DEVICE,
    _INTEGER,
    LAUNCH_ID,
    Block,
    Damage,
    check_ids,
    device_problem,
    find_blocks,
    id_problem,
    one_cell,
    records,
    unreadable_note,
)
from ncu_roof.ingest.nvtx import nvtx_columns, nvtx_of_cells
from ncu_roof.ingest.table import InputFormat, RunTable, identity_frame, settle_shapes

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


@functools.lru_cache(maxsize=4096)  # the same IDs repeat on every row
def _identity_problem(ident: str, process: str, device: str) -> str | None:
    if not LAUNCH_ID.match(ident):
        return id_problem(ident)
    if not _INTEGER.match(process):
        return f"Process ID {one_cell(process)} is not an integer"
    return device_problem(device) if device.strip() and not _DEVICE.match(device) else None


def _details_rows(block: Block, damage: Damage) -> list[dict[str, str]]:
    """The metric rows of one block; a damaged row taints the kernels on either side of it (left out
    whole when skipping: a partial kernel would be read with other formulas)."""
    header = block.header
    least = header.index("Metric Value") + 1
    tainted: set[str] = set()
    previous: str | None = None
    seen = before = len(damage.rows)
    kept: list[tuple[str, int, dict[str, str]]] = []  # (kernel, line, record)
    for line, row in records(block, damage):
        record = dict(zip(header, row, strict=False))
        ident = record.get("ID", "").strip()
        problem = _identity_problem(ident, record.get("Process ID", "0"), record.get("Device", ""))
        if not least <= len(row) <= len(header):
            problem = f"{len(row)} cells where the header has {least} to {len(header)}"
        if problem is not None:
            damage.add(line, problem)
            if LAUNCH_ID.match(ident):
                tainted.add(ident)
            continue
        if len(damage.rows) > seen:  # damaged rows since the last good one
            tainted.update(i for i in (ident, previous) if i is not None)
        seen = len(damage.rows)
        previous = record["ID"] = ident
        if record.get("Metric Name", ""):
            kept.append((f"kernel ID {ident} of process {record.get('Process ID', '')}", line, record))
    if len(damage.rows) > seen and previous is not None:
        tainted.add(previous)
    if len(damage.rows) == before:  # a gap beside a damaged row is that row
        first: dict[str, int] = {}  # each launch's first row, in the page's order
        for _, line, record in kept:
            first.setdefault(record["ID"], line)
        check_ids([int(i) for i in first], list(first.values()).__getitem__, damage)
    order = [
        (k, n, r.get("Section Name", ""), r["Metric Name"], r.get("Metric Value", "")) for k, n, r in kept
    ]
    ids = {k: r["ID"] for k, _, r in kept}
    for label, (line, reason) in partial_groups(order).items():
        damage.add(line, reason)
        tainted.add(ids[label])
    damage.lost_kernels += len(tainted)
    return [r for _, _, r in kept if r["ID"] not in tainted]


def partial_groups(rows: list[tuple[str, int, str, str, str]]) -> dict[str, tuple[int, str]]:
    """Kernels of a per-metric page whose rows cannot all be theirs: (line, reason) per key; `rows`: (key,
    line, section, metric, value) in file order. ncu prints a run's kernels with the same rows, together: one
    kernel's rows split by another's, a kernel with some of another's rows (first, last, all but one in the
    middle) or a row twice with two values are what cuts, lost lines, damaged IDs or pasted exports leave."""
    found: dict[str, tuple[int, str]] = {}
    first_line: dict[str, int] = {}
    sequences: dict[str, list[tuple[str, str]]] = {}  # each kernel's (section, metric) rows
    values: dict[str, dict[tuple[str, str], str]] = {}  # each kernel's first value of each row
    for key, together in itertools.groupby(rows, key=operator.itemgetter(0)):
        run = list(together)
        if key in first_line and key not in found:
            found[key] = (run[0][1], f"rows of {key} are split by another kernel's (damaged ID?)")
        first_line.setdefault(key, run[0][1])
        sequences.setdefault(key, []).extend((section, metric) for _, _, section, metric, _ in run)
        first = values.setdefault(key, {})
        for _, line, section, metric, value in run:
            if first.setdefault((section, metric), value) != value and key not in found:
                found[key] = (line, f"{key} has {one_cell(metric)} twice, with two values (pasted exports?)")
    shapes = dict.fromkeys(tuple(seq) for seq in sequences.values())  # (first seen first)
    for key, seq in sequences.items():
        whole = tuple(seq)
        for other in shapes:
            remaining = iter(other)  # `whole` is `other` with rows left out, in its order
            if len(other) > len(whole) and all(row in remaining for row in whole):
                lacking = next((metric for section, metric in other if (section, metric) not in whole), None)
                if lacking is None:  # `other` repeats a row: `whole` lost none
                    continue
                reason = f"{key} has {len(whole)} of the {len(other)} metric rows other kernels have, "
                reason += f"{one_cell(lacking)} not among them (truncated file or a lost line?)"
                found.setdefault(key, (first_line[key], reason))
                break
    return found


_DETAIL_IDENTITY = [c for c in _CSV_IDENTITY if c not in ("ID", "Process ID")]


def read_details(blocks: list[Block], style: NumberStyle | None, damage: Damage) -> pl.DataFrame | None:
    """One row per kernel (in the order of run and ID): every kernel with a metric row, even one
    whose metrics are all unknown (its values are missing then, but it is not lost)."""
    launches: dict[tuple[str, str, str], dict[str, str | None]] = {}  # (run, ID, process) → identity
    cells: list[tuple[tuple[str, str, str], str, str, str]] = []
    columns = list(dict.fromkeys(c for b in blocks for c in nvtx_columns(b.header)))
    for run, block in enumerate(blocks):
        for r in _details_rows(block, damage):
            key = (str(run), r["ID"], r.get("Process ID", ""))
            if key not in launches:  # a launch's identity: its first row's
                launches[key] = {_CSV_IDENTITY[c]: r.get(c) for c in _DETAIL_IDENTITY}
                launches[key]["nvtx"] = nvtx_of_cells({c: r.get(c, "") for c in columns})
            unit = r.get("Metric Unit", "")
            metric = metric_for(r["Metric Name"], unit) or LAUNCH_LABELS.get(r["Metric Name"])
            if metric is not None:
                cells.append((key, metric, r.get("Metric Value", ""), unit))
    if not launches:
        return None
    order = sorted(launches, key=lambda key: (int(key[0]), int(key[1])))
    row = {key: i for i, key in enumerate(order)}
    identity: dict[str, Any] = dict(zip(("run", "id", "process_id"), zip(*order, strict=True), strict=True))
    identity |= {name: [launches[k][name] for k in order] for name in launches[order[0]]}
    number_style = detect_number_style([text for _, _, text, _ in cells], style)
    ordered = [(row[k], metric, text, unit) for k, metric, text, unit in cells]
    return text_columns(identity, ordered, number_style, sort=True)


Cell = tuple[int, str, str, str]  # a launch (its row), a metric, its text and unit as printed


def text_columns(
    identity: Mapping[str, Any],
    cells: Sequence[Cell],
    style: NumberStyle,
    notes: Sequence[tuple[str, ...]] | None = None,
    *,
    sort: bool = False,
) -> pl.DataFrame:
    """Launches whose metrics are texts as printed (the details page, a summary, console text) →
    `RunTable.launches`: a launch's first cell of each metric in SI (`effective_unit`; NaN if none),
    metrics in first-seen order (`sort`: by name); a cell that reads as no number is a note, after `notes`."""
    rows = len(identity["id"])
    lines = [list(n) for n in notes] if notes is not None else [[] for _ in range(rows)]
    values: list[pl.Series] = []
    if cells:
        launch, metric, texts, units = zip(*cells, strict=True)
        numbers = parse_numbers(texts, style)
        for i, text in unreadable(texts, numbers):
            lines[launch[i]].append(unreadable_note(metric[i], text))
        code = {name: k for k, name in enumerate(sorted(set(metric)) if sort else dict.fromkeys(metric))}
        keys = list(zip(metric, units, strict=True))
        factor = {key: si_factor(effective_unit(*key)) for key in dict.fromkeys(keys)}
        where = np.array(launch) + rows * np.array([code[m] for m in metric])
        _, first = np.unique(where, return_index=True)  # a launch's first cell of a metric
        table = np.full((len(code), rows), np.nan)
        table.flat[where[first]] = (numbers * np.array([factor[key] for key in keys]))[first]
        values = [pl.Series(name, row) for name, row in zip(code, table, strict=True)]
    return identity_frame({**identity, "input_notes": [n or None for n in lines]}, rows).hstack(values)


# --- `--print-summary --csv` -------------------------------------------------------------------

_NEEDED = ("Kernel Name", "Metric Name", "Metric Unit", "Average")
_KEY = ("Process ID", "Kernel Name", "Block Size", "Grid Size", "Device Id", "Device", "CC", "Invocations")
_REEXPORT = "re-export: `ncu --import R --print-summary per-kernel --csv`"


def read_summary_csv(
    path: str, raw: bytes, start: int, style: NumberStyle | None, skip_bad_rows: bool = False
) -> RunTable:
    """The summary whose header line starts at `start` (`find_headers(raw)[1][0]`)."""
    block = find_blocks(raw, [start])[0]
    header = block.header
    missing = [c for c in _NEEDED if c not in header]
    if missing or any(header.count(c) > 1 for c in (*_NEEDED, *_KEY)):
        what = f"without {missing[0]!r}" if missing else "names a column twice"
        raise BadInputError(f"{path}: a --print-summary CSV header {what}", hint=_REEXPORT)
    damage = Damage(path, skip_bad_rows)
    kernels: dict[tuple[str, ...], tuple[str, int, dict[str, tuple[str, str]]]] = {}  # (label, line, values)
    order: list[tuple[str, int, str, str, str]] = []  # (kernel, line, section, metric, average) per row
    damaged: set[tuple[str, ...]] = set()  # kernels with a damaged row (with all of them: lost whole)
    for line, cells in records(block, damage):
        if len(cells) != len(header):
            damage.add(line, f"{len(cells)} cells where the header has {len(header)}")
            continue
        row = dict(zip(header, cells, strict=True))
        key = tuple(row.get(c, "") for c in _KEY)
        device = next((c for c in ("Device Id", "Device") if c in row), None)
        if device is not None and row[device].strip() and not _INTEGER.match(row[device]):
            damage.add(line, f"{device} {row[device][:20]!r} is not an integer index")
            damaged.add(key)
            continue
        if not _COUNT.match(row.get("Invocations", "")):
            damage.add(line, f"Invocations {one_cell(row['Invocations'])} is not a count of launches")
            damaged.add(key)
            continue
        label, _, values = kernels.setdefault(
            key, (f"kernel #{len(kernels)} {one_cell(row['Kernel Name'])}", line, {})
        )
        order.append((label, line, row.get("Section Name", ""), row["Metric Name"], row["Average"]))
        if (metric := metric_for(row["Metric Name"], row["Metric Unit"])) is not None:
            values.setdefault(metric, (row["Average"], row["Metric Unit"]))
    partial = partial_groups(order)
    with naming_file(path):
        number_style = detect_number_style([average for *_, average in order], style)
    # each row's averages are over its `Invocations` launches: `1,000` is 1000 in en, 1 in de (a count
    # in the file's style), 1 where the cell is empty (unknown)
    texts = [key[-1] for key in kernels]
    numbers = np.where([not t.strip() for t in texts], 1.0, parse_numbers(texts, number_style))
    counts = dict(zip(kernels, numbers.tolist(), strict=True))
    for (key, count), (label, line, _) in zip(counts.items(), kernels.values(), strict=True):
        if not (count >= 1 and count == int(count)):
            reason = f"Invocations {one_cell(key[-1])} is no count of launches in this file's number style"
            partial.setdefault(label, (line, reason))
    for line, reason in partial.values():
        damage.add(line, reason)
    damage.check()
    if not (intact := {key: values for key, (label, _, values) in kernels.items() if label not in partial}):
        raise BadInputError(
            f"{path}: the --print-summary CSV header is there but no kernel rows follow (truncated file?)",
            hint=_REEXPORT,
        )
    process_ids, names, blocks, grids, device_ids, devices, ccs, invocations = zip(*intact, strict=True)
    identity = {
        "process_id": [p or None for p in process_ids],
        "name": list(names),
        "device": [(a or b).strip() or None for a, b in zip(device_ids, devices, strict=True)],
        "cc": [c.strip() or None for c in ccs],
        "grid": [g or None for g in grids],
        "block": [b or None for b in blocks],
    }
    notes = [(averages_note("row", n.strip() or None),) for n in invocations]
    with naming_file(path):
        launches = kernel_launches(
            identity, list(intact.values()), number_style, notes, [counts[k] for k in intact]
        )
    warnings = damage.warnings(len(partial) + len(damaged - kernels.keys()))
    averaged = tuple(sorted({m for values in intact.values() for m in values}))
    return RunTable(path, InputFormat.SUMMARY_CSV, None, settle_shapes(launches), warnings, averaged)


# a count of launches (≥ 1; its digits grouped as a number may be, in any style), or empty
_COUNT = re.compile(rf"^\s*(?:(?=[^1-9]*[1-9])[0-9]{{1,3}}(?:[,.{GROUP_MARKS}]?[0-9]{{3}})*)?\s*$")


def averages_note(what: str, invocations: object) -> str:
    """The note on a launch read from a `--print-summary` row or line of `invocations` (None: unknown)."""
    count = "several" if invocations is None else invocations
    return f"input: a --print-summary {what}: values are averages over {count} invocations"


MAX_SUMMARY_LAUNCHES = 1_000_000  # a summary's rows are read as this many launches at most


def kernel_launches(
    identity: Mapping[str, Any],
    kernels: Sequence[Mapping[str, tuple[str, str]]],
    style: NumberStyle,
    notes: Sequence[tuple[str, ...]],
    counts: Sequence[int] | np.ndarray,
) -> pl.DataFrame:
    """The launches of summary kernels (a `--print-summary` CSV's or console text's; each kernel's
    metrics as (text, unit)): each kernel's row once per invocation its averages are over ("Invocations
    3": 3 launches of its average duration, 3 x that time), with its values and notes; IDs from 0.
    Over `MAX_SUMMARY_LAUNCHES` in all is refused: the table would grow with the counts, not the file."""
    cells = [(i, metric, *value) for i, kernel in enumerate(kernels) for metric, value in kernel.items()]
    launches = text_columns({"run": "0", "id": list(range(len(kernels))), **identity}, cells, style, notes)
    total = sum(int(count) for count in counts)  # exact: a count beyond int64 is no wrapped number
    if total > MAX_SUMMARY_LAUNCHES:
        raise BadInputError(
            f"its --print-summary rows count {total:,} invocations in all, more than the"
            f" {MAX_SUMMARY_LAUNCHES:,} launches ncu-roof reads from a summary",
            hint="export the launches themselves (`ncu --import R --csv --page raw`), or a report with fewer",
        )
    repeated = launches[np.repeat(np.arange(launches.height), np.asarray(counts, dtype=np.intp))]
    return repeated.with_columns(id=pl.int_range(repeated.height, dtype=pl.Int64))
