"""`ncu --import R --print-summary per-kernel|per-gpu --csv`: one row per (kernel, metric).

Header (per-kernel; per-gpu puts "Device Id" after "Host Name"):
`"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","Device Id",
"Invocations","Section Name","Metric Name","Metric Unit","Minimum","Maximum","Average"`.
A newer ncu names the device column "Device" and adds "CC" after it (read as the launches' `cc`).
A kernel is one (process, name, block, grid, device) group; its values are the Average column,
so every metric read is listed in `RunTable.averaged` and each kernel carries a note. A group of
"Invocations N" is N launches of its averages (`repeat_invocations`), so counts and total time
(average x N) are the run's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ncu_roof.base.units import NumberStyle, effective_unit, parse_numbers
from ncu_roof.errors import BadInputError, naming_file
from ncu_roof.ingest.csvblocks import _INTEGER, Damage, choose_style, find_blocks, one_cell, records
from ncu_roof.ingest.csvdetails import metric_for, partial_groups, text_columns
from ncu_roof.ingest.table import InputFormat, RunTable, settle_shapes

_NEEDED = ("Kernel Name", "Metric Name", "Metric Unit", "Average")
_KEY = ("Process ID", "Kernel Name", "Block Size", "Grid Size", "Device Id", "Device", "CC", "Invocations")


def read_summary_csv(
    path: str, raw: bytes, start: int, style: NumberStyle | None, skip_bad_rows: bool = False
) -> RunTable:
    """The summary whose header line starts at `start` (`find_headers(raw).summaries[0]`)."""
    block = find_blocks(raw, [start])[0]
    header = block.header
    missing = [c for c in _NEEDED if c not in header]
    if missing or any(header.count(c) > 1 for c in (*_NEEDED, *_KEY)):
        raise BadInputError(
            f"{path}: a --print-summary CSV header without {missing[0]!r}"
            if missing
            else f"{path}: a --print-summary CSV header names a column twice",
            hint="re-export: `ncu --import R --print-summary per-kernel --csv`",
        )
    damage = Damage(path, skip_bad_rows)
    groups: dict[tuple[str, ...], dict[str, tuple[str, str]]] = {}
    labels: dict[tuple[str, ...], str] = {}
    order: list[tuple[str, int, str, str]] = []  # (kernel, line, section, metric) of every row
    for line, cells in records(block, damage):
        if len(cells) != len(header):
            damage.add(line, f"{len(cells)} cells where the header has {len(header)}")
            continue
        row = dict(zip(header, cells, strict=True))
        device = next((c for c in ("Device Id", "Device") if c in row), None)
        if device is not None and row[device].strip() and not _INTEGER.match(row[device]):
            damage.add(line, f"{device} {row[device][:20]!r} is not an integer index")
            continue
        key = tuple(row.get(c, "") for c in _KEY)
        label = labels.setdefault(key, f"kernel #{len(labels)} {one_cell(row['Kernel Name'])}")
        order.append((label, line, row.get("Section Name", ""), row["Metric Name"]))
        metric = metric_for(row["Metric Name"], row["Metric Unit"])
        values = groups.setdefault(key, {})
        if metric is not None and metric not in values:
            values[metric] = (row["Average"], effective_unit(metric, row["Metric Unit"]))
    partial = partial_groups(order)
    for line, reason in partial.values():
        damage.add(line, reason)
    damage.check()
    groups = {key: values for key, values in groups.items() if labels[key] not in partial}
    if not groups:
        raise BadInputError(
            f"{path}: the --print-summary CSV header is there but no kernel rows follow (truncated file?)",
            hint="re-export: `ncu --import R --print-summary per-kernel --csv`",
        )
    keys = list(groups)
    kernels = [(i, metric, *value) for i, key in enumerate(keys) for metric, value in groups[key].items()]
    process_ids, names, blocks, grids, device_ids, devices, ccs, invocations = zip(*keys, strict=True)
    identity = {
        "run": "0",
        "id": list(range(len(keys))),
        "process_id": [p or None for p in process_ids],
        "name": list(names),
        "device": [(a or b).strip() or None for a, b in zip(device_ids, devices, strict=True)],
        "cc": [c.strip() or None for c in ccs],
        "grid": [g or None for g in grids],
        "block": [b or None for b in blocks],
    }
    notes = [(averages_note("row", n.strip() or None),) for n in invocations]
    with naming_file(path):
        number_style = choose_style([text for _, _, text, _ in kernels], style)
        launches = text_columns(identity, kernels, number_style, notes)
        launches = settle_shapes(repeat_invocations(launches, invocation_counts(invocations, number_style)))
    averaged = sorted({m for values in groups.values() for m in values})
    return RunTable(
        path=path,
        format=InputFormat.SUMMARY_CSV,
        ncu_version=None,
        launches=launches,
        warnings=damage.warnings(len(partial)),
        averaged=tuple(averaged),
    )


def averages_note(what: str, invocations: object) -> str:
    """The note on a launch read from a `--print-summary` row or line of `invocations` (None: unknown)."""
    count = "several" if invocations is None else invocations
    return f"input: a --print-summary {what}: values are averages over {count} invocations"


def invocation_counts(texts: Sequence[str], style: NumberStyle) -> list[int]:
    """How many launches each summary row's averages are over (`Invocations`, a number in the
    file's style: `1,024` in en): a positive whole number, else 1 (unknown: one launch)."""
    numbers = parse_numbers(texts, style)
    whole = np.isfinite(numbers) & (numbers >= 1) & (numbers == np.floor(numbers))
    counts: list[int] = np.where(whole, numbers, 1).astype(np.int64).tolist()
    return counts


MAX_SUMMARY_LAUNCHES = 1_000_000  # a summary's rows are read as this many launches at most


def repeat_invocations(launches: pl.DataFrame, counts: Sequence[int]) -> pl.DataFrame:
    """Each summary kernel's row once per invocation its averages are over: the run's launches
    counted (a row of "Invocations 3" is 3 launches of its average duration, its time 3 x that),
    each with its row's values and notes; IDs numbered again from 0. More launches in all than
    `MAX_SUMMARY_LAUNCHES` is refused: the table would grow with the counts, not the file."""
    repeats = np.asarray(counts, dtype=np.intp)
    if int(repeats.sum()) > MAX_SUMMARY_LAUNCHES:
        raise BadInputError(
            f"its --print-summary rows count {int(repeats.sum()):,} invocations in all, more than the"
            f" {MAX_SUMMARY_LAUNCHES:,} launches ncu-roof reads from a summary",
            hint="export the launches themselves (`ncu --import R --csv --page raw`), or a report with fewer",
        )
    if (repeats == 1).all():
        return launches
    repeated = launches[np.repeat(np.arange(launches.height), repeats)]
    return repeated.with_columns(id=pl.int_range(repeated.height, dtype=pl.Int64))
