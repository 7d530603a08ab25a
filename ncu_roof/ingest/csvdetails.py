"""The details page (`--page details`): one row per (launch, metric), pivoted to one row per launch.

Its metric rows are ragged, so it is read with the csv module; a damaged row taints the kernels
around it, and a kernel whose rows cannot all be its own (`partial_groups`) is damaged too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.units import NumberStyle, effective_unit, parse_numbers, si_factor, unreadable
from ncu_roof.ingest.csvblocks import (
    _CSV_IDENTITY,
    _DEVICE,
    _INTEGER,
    Block,
    Damage,
    choose_style,
    one_cell,
    records,
)
from ncu_roof.ingest.nvtx import nvtx_columns, nvtx_of_cells
from ncu_roof.ingest.rawchecks import check_ids
from ncu_roof.ingest.sanity import unreadable_note
from ncu_roof.ingest.table import Columns, frame_columns

if TYPE_CHECKING:  # pandas pivots a details page; the other readers never load it
    import pandas as pd

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
_LAUNCH_LABELS = {"Grid Size": "launch__grid_size", "Block Size": "launch__block_size"}


def metric_for(name: str, unit: str) -> str | None:
    if "__" in name:
        return name if is_wanted(name) else None
    if unit.endswith(("/second", "/s")) and name in _BANDWIDTH_LABELS:
        return _BANDWIDTH_LABELS[name]
    if unit.endswith(("/second", "/s")) and name in _LABELS and "Throughput" in name:
        return None
    return _LABELS.get(name)


def _identity_problem(ident: str, process: str, device: str) -> str | None:
    if not _INTEGER.match(ident):
        return f"ID {one_cell(ident)} is not an integer index"
    if not _INTEGER.match(process):
        return f"Process ID {one_cell(process)} is not an integer"
    if device.strip() and not _DEVICE.match(device):
        return f"Device {one_cell(device)} is not an integer index"
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
                if _INTEGER.match(ident):
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
        _check_groups(block, kept, damage, tainted)
        if clean:  # a gap beside a damaged row is that row
            first: dict[str, int] = {}  # each launch's first row, in the page's order
            for record in kept:
                first.setdefault(record["ID"], int(record["_line"]))
            check_ids([int(i) for i in first], list(first.values()).__getitem__, run, damage)
        damage.lost_kernels |= {(run, ident) for ident in tainted}
        yield from (r for r in kept if r["ID"] not in tainted)


def partial_groups(
    keys: list[tuple[str, int]], rows: dict[str, list[tuple[str, str]]]
) -> dict[str, tuple[int, str]]:
    """Kernels of a per-metric page whose rows cannot all be theirs: (line, reason) per key.

    `keys` are (kernel key, line) in file order, one per row, and `rows` each kernel's
    (section, metric) sequence. ncu prints every kernel of a run with the same rows, together;
    rows of one kernel split by another's, or a kernel holding only some of the rows of another
    kernel's sequence (the first, the last, all but one in the middle), are what a cut, a lost
    line or a damaged ID leave behind.
    """
    found: dict[str, tuple[int, str]] = {}
    done: set[str] = set()
    previous = None
    for key, line in keys:
        if key != previous and key in done and key not in found:
            found[key] = (line, f"rows of {key} are split by another kernel's (damaged ID?)")
        if previous is not None and key != previous:
            done.add(previous)
        previous = key
    first_line: dict[str, int] = {}
    for key, line in keys:
        first_line.setdefault(key, line)
    shapes = {tuple(seq) for seq in rows.values()}
    for key, seq in rows.items():
        whole = tuple(seq)
        for other in shapes:
            if len(other) > len(whole) and _within(whole, other):
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


def _within(rows: tuple[tuple[str, str], ...], other: tuple[tuple[str, str], ...]) -> bool:
    """`rows` are some of `other`'s, in its order (`other` with rows left out)."""
    remaining = iter(other)
    return all(row in remaining for row in rows)


def _check_groups(block: Block, kept: list[dict[str, str]], damage: Damage, tainted: set[str]) -> None:
    labels = {f"kernel ID {r['ID']} of process {r.get('Process ID', '')}": r["ID"] for r in kept}
    keys = [(f"kernel ID {r['ID']} of process {r.get('Process ID', '')}", int(r["_line"])) for r in kept]
    rows: dict[str, list[tuple[str, str]]] = {}
    for (key, _), record in zip(keys, kept, strict=True):
        rows.setdefault(key, []).append((record.get("Section Name", ""), record["Metric Name"]))
    for key, (line, reason) in partial_groups(keys, rows).items():
        damage.add(line, reason)
        tainted.add(labels[key])


_DETAIL_KEYS = ["run", "ID", "Process ID"]
_DETAIL_IDENTITY = [c for c in _CSV_IDENTITY if c not in ("ID", "Process ID")]


def read_details(
    blocks: list[Block], style: NumberStyle | None, damage: Damage
) -> tuple[Columns | None, int]:
    """One row per kernel: every kernel with a metric row, even one whose metrics are all
    unknown (its values are missing then, but it is not lost)."""
    import pandas as pd

    table = []
    nvtx: dict[tuple[str, ...], str | None] = {}  # the same cells repeat on every metric row
    columns = list(dict.fromkeys(c for b in blocks for c in nvtx_columns(b.header)))
    for r in _details_rows(blocks, damage):
        unit = r.get("Metric Unit", "")
        cells = tuple(r.get(c, "") for c in columns)
        if cells not in nvtx:
            nvtx[cells] = nvtx_of_cells(dict(zip(columns, cells, strict=True)))
        metric = metric_for(r["Metric Name"], unit) or _LAUNCH_LABELS.get(r["Metric Name"])
        table.append(
            (
                r["run"],
                r["ID"],
                r.get("Process ID", ""),
                *(r.get(c) for c in _DETAIL_IDENTITY),
                nvtx[cells],
                r.get("Metric Value", ""),
                metric,
                effective_unit(metric, unit) if metric is not None else unit,
            )
        )
    lost = len(damage.lost_kernels)
    if not table:
        return None, lost
    records = pd.DataFrame(
        table, columns=[*_DETAIL_KEYS, *_DETAIL_IDENTITY, "nvtx", "Metric Value", "metric", "unit"]
    )
    keys = _DETAIL_KEYS
    ident = records.drop_duplicates(subset=keys).set_index(keys)
    rows = records[records["metric"].notna()].copy()
    unread: dict[tuple[str, ...], list[str]] = {}
    if rows.empty:
        wide = pd.DataFrame(index=ident.index)
    else:
        number_style = choose_style(rows["Metric Value"], style)
        rows["value"] = parse_numbers(rows["Metric Value"], number_style) * rows["unit"].map(si_factor)
        unread = _unreadable(rows, keys)
        first = rows.drop_duplicates(subset=[*keys, "metric"], keep="first")
        wide = first.pivot(index=keys, columns="metric", values="value").reindex(ident.index)
        wide.columns = [str(c) for c in wide.columns]
    out = pd.DataFrame(index=ident.index)
    for column in _DETAIL_IDENTITY:
        out[_CSV_IDENTITY[column]] = ident[column]
    out["nvtx"] = ident["nvtx"]
    out = pd.concat([out, wide], axis=1).reset_index()
    out = out.rename(columns={"ID": "id", "Process ID": "process_id"})
    out["device_name"] = None
    if unread:
        launches = zip(*(out[k].tolist() for k in ("run", "id", "process_id")), strict=True)
        notes = np.empty(len(out), dtype=object)
        notes[:] = [tuple(unread[key]) if key in unread else None for key in launches]
        out["input_notes"] = notes
    out["_order"] = pd.to_numeric(out["id"], errors="coerce")
    out = out.sort_values(["run", "_order"], key=_run_key).drop(columns="_order")
    return frame_columns(out.reset_index(drop=True)), lost


def _unreadable(rows: pd.DataFrame, keys: list[str]) -> dict[tuple[str, ...], list[str]]:
    """Per launch (its keys), a note on each metric cell that reads as no number."""
    notes: dict[tuple[str, ...], list[str]] = {}
    texts = rows["Metric Value"].tolist()
    for position, text in unreadable(texts, rows["value"].to_numpy()):
        record = rows.iloc[position]
        key = tuple(record[k] for k in keys)
        notes.setdefault(key, []).append(unreadable_note(record["metric"], text))
    return notes


def _run_key(column: pd.Series) -> pd.Series:
    import pandas as pd

    return pd.to_numeric(column, errors="coerce")
