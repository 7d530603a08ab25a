"""The records of one device's launches that are more than a number: tensor paths, integer tensor
operations, the instruction roofline; one record per distinct launch, shared by the launches
like it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ncu_roof.analysis.columns import distinct_numbers, identity_codes
from ncu_roof.analysis.records import InstructionRoofline, TensorPath
from ncu_roof.analysis.verdicts import Verdicts
from ncu_roof.base.codes import factorize, object_array
from ncu_roof.recipe import TENSOR_PATH_PREFIX, is_integer_path


@dataclass(frozen=True)
class TensorPathColumns:
    records: np.ndarray  # object: {path: TensorPath} per launch ({} for a failed one)
    op_counts: Mapping[str, np.ndarray]  # integer paths: operations per launch (NaN: n/a)
    present: np.ndarray  # bool: the launch has its paths (not failed, and the input has some)


def tensor_path_columns(group: Mapping[str, np.ndarray], failed: np.ndarray) -> TensorPathColumns:
    columns = [c for c in group if c.startswith(TENSOR_PATH_PREFIX)]
    n = len(failed)
    if not columns:
        return TensorPathColumns(object_array([{}] * n), {}, np.zeros(n, dtype=bool))
    paths = [c.removeprefix(TENSOR_PATH_PREFIX) for c in columns]
    units = ["OP" if is_integer_path(p) else "FLOP" for p in paths]
    counts = [np.asarray(group[c], dtype="float64") for c in columns]
    peaks = [
        np.asarray(group[peak], dtype="float64") if peak in group else np.full(n, np.nan)
        for peak in (f"peak_{c}_per_s" for c in columns)
    ]
    first, kind = distinct_numbers([*counts, *peaks], [failed.astype("int64")])
    cells = [
        list(zip(_numbers(c[first]), _numbers(k[first]), strict=True))
        for c, k in zip(counts, peaks, strict=True)
    ]
    records = [  # one per distinct row, shared by the launches like it
        {} if bad else {p: TensorPath(u, *cell) for p, u, cell in zip(paths, units, row, strict=True)}
        for bad, row in zip(failed[first].tolist(), zip(*cells, strict=True), strict=True)
    ]
    ops = {p: c for p, u, c in zip(paths, units, counts, strict=True) if u == "OP"}
    return TensorPathColumns(object_array(records)[kind], ops, ~failed)


def ops_columns(paths: TensorPathColumns, ops_total: np.ndarray) -> dict[str, np.ndarray]:
    """`ops` (integer tensor paths + "total", only where the launch has integer paths) and whether
    its total is a lower bound (some path read n/a)."""
    n = len(ops_total)
    if not paths.op_counts:
        return {"ops": object_array([{}] * n), "ops_total_is_lower_bound": np.zeros(n, dtype=bool)}
    counts = paths.op_counts
    first, kind = distinct_numbers([*counts.values(), ops_total], [paths.present.astype("int64")])
    rows = [
        {**{p: number(c[j]) for p, c in counts.items()}, "total": number(ops_total[j])}
        if paths.present[j]
        else {}
        for j in first.tolist()
    ]
    partial = np.column_stack([np.isnan(c) for c in counts.values()]).any(axis=1)
    return {
        "ops": object_array(rows)[kind],
        "ops_total_is_lower_bound": paths.present & ~np.isnan(ops_total) & partial,
    }


def instruction_records(v: Verdicts, warp_inst: np.ndarray, recipe: np.ndarray) -> np.ndarray:
    """Ding & Williams' instruction roofline per launch (None without warp instructions); one
    record per distinct row, shared by the launches like it."""
    arrays = v.instructions
    out = np.full(len(warp_inst), None, dtype=object)
    measured = np.flatnonzero(~np.isnan(warp_inst))
    numbers = [
        warp_inst,
        arrays.warp_inst_per_s,
        arrays.issue_peak_warp_inst_per_s,
        *arrays.intensity_warp_inst_per_transaction.values(),
        *arrays.transaction_peak_per_s.values(),
    ]
    first, kind = distinct_numbers(
        [a[measured] for a in numbers],
        [
            factorize(v.issue_source[measured], missing_is_value=True)[0],
            identity_codes(recipe[measured].tolist())[1],
        ],
    )
    rows = measured[first]

    def present(values: Mapping[str, np.ndarray]) -> list[dict[str, float]]:
        """Per row, the finite values by key."""
        keys = list(values)
        columns = [np.where(np.isfinite(a[rows]), a[rows], np.nan) for a in values.values()]
        cells = zip(*(_numbers(c) for c in columns), strict=True) if keys else ((),) * len(rows)
        return [{k: x for k, x in zip(keys, row, strict=True) if x is not None} for row in cells]

    records = [
        InstructionRoofline(
            warp_inst=inst,
            warp_inst_per_s=rate,
            issue_peak_warp_inst_per_s=peak,
            issue_peak_source=source,
            intensity_warp_inst_per_transaction=intensity,
            transaction_peak_per_s=transactions,
            recipe=formulas.get("warp_inst"),
        )
        for inst, rate, peak, source, intensity, transactions, formulas in zip(
            warp_inst[rows].tolist(),
            _numbers(arrays.warp_inst_per_s[rows]),
            _numbers(arrays.issue_peak_warp_inst_per_s[rows]),
            v.issue_source[rows].tolist(),
            present(arrays.intensity_warp_inst_per_transaction),
            present(arrays.transaction_peak_per_s),
            recipe[rows].tolist(),
            strict=True,
        )
    ]
    out[measured] = object_array(records)[kind]
    return out


def _numbers(values: np.ndarray) -> list[float | None]:
    """A float column as Python numbers, None where NaN."""
    out = values.astype(object)
    out[np.isnan(values)] = None
    numbers: list[float | None] = out.tolist()
    return numbers


def number(value: float) -> float | None:
    """A number, None where it is NaN."""
    return None if math.isnan(value) else float(value)
