"""What every formula of the recipe is built from: the factors, the metric frame, the choosers, and the
row-wise helpers they share. Every quantity is a numpy array with one value per launch: `Numbers` (float64,
NaN = not measured), `Texts` (object: a label, None or NaN) and `Flags` (bool). The metric frame's arrays are
shared and read-only: a formula makes new arrays, never writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import numpy.typing as npt

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.units import cell_number, missing_cell

if TYPE_CHECKING:  # a pandas DataFrame is one of the metric tables the recipe takes (tests, notebooks)
    import pandas as pd
    import polars as pl

# metric → a value per launch: a reader's launches (Polars), a pandas DataFrame, or arrays
Metrics: TypeAlias = "pl.DataFrame | pd.DataFrame | Mapping[str, npt.NDArray[Any]]"

Numbers = npt.NDArray[np.float64]
Texts = npt.NDArray[np.object_]
Flags = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Factors:
    """Every conversion factor of the recipe in one place. [verify] = not yet measured on a GPU."""

    fma_flop: float = 2.0  # one FMA thread instruction = 2 FLOPs
    fp16_lanes: float = 2.0  # [verify] Nsight 2025.3 assumes every H-instruction is packed (HFMA2)
    fp32x2_lanes: float = 2.0  # [verify] Blackwell FADD2/FMUL2/FFMA2 packed FP32
    # FLOPs per tensor-pipe warp instruction (`sm__inst_executed_pipe_tensor`), per compute
    # capability, only where it is known: CC 7.0 (V100, HMMA.884), the constant of Nsight's
    # tensor roofline up to 2024.x (`derived__sm__inst_executed_pipe_tensor_x512`), confirmed by
    # the corpus V100 CUTLASS s884gemm (2 x 20480^3 FLOP in 33,554,432,000 instructions: 512).
    # From Turing on the MMA shape decides (HMMA.1688 2,048, HMMA.16816 4,096; IMMA is integer
    # work): no one factor, so no FLOPs from the instruction count there
    tensor_flop_per_pipe_inst: tuple[tuple[str, float], ...] = (("7.0", 512.0),)
    sector_bytes: float = 32.0  # L1/L2/DRAM sector
    l2_xbar_bytes_per_cycle: float = 32.0  # Nsight 2025.3: lts__lts2xbar_cycles_active × 32 B
    l1_writeback_bytes_per_cycle: float = 128.0  # Nsight: l1tex__lsu_writeback_active × 128 B
    shared_wavefront_bytes: float = 128.0  # [verify] 32 banks × 4 B per shared-memory wavefront


FACTORS = Factors()

Formula = tuple[str, Numbers]


def read_only(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """`values`, from now on refusing in-place writes (an array several columns share)."""
    values.setflags(write=False)
    return values


class MetricFrame:
    """The metric frame's columns as read-only float64 arrays, each converted once; an absent one is NaN
    (one shared array); a name `is_wanted` refuses is a `KeyError` (readers drop it: NaN on every input)."""

    def __init__(self, metrics: Metrics, rows: int | None = None) -> None:
        """`rows`: the number of launches (needed only when `metrics` is a mapping with no column)."""
        if rows is None:  # a DataFrame (pandas or Polars) knows its rows without a column
            rows = len(metrics) if hasattr(metrics, "columns") else len(next(iter(metrics.values()), ()))
        self.rows = rows
        self.nan: Numbers = read_only(np.full(self.rows, np.nan))
        self.no_labels: Texts = read_only(np.full(self.rows, np.nan, dtype=object))
        self._metrics = metrics
        self.names = [str(c) for c in getattr(metrics, "columns", metrics)]  # the metrics it holds
        self._held = set(self.names)
        self._arrays: dict[str, Numbers] = {}

    def __call__(self, name: str) -> Numbers:
        if not is_wanted(name):
            raise KeyError(f"{name}: read by a formula, but not in metrics.FORMULA_METRICS")
        if name not in self._held:
            return self.nan
        if (array := self._arrays.get(name)) is None:
            # a read-only view: the caller's own array is not made read-only by it
            values = np.asarray(self._metrics[name])  # float64 from every reader: no copy
            if values.dtype != np.float64:  # a metric as text: numbers where numbers (as `to_numeric`)
                values = np.array([cell_number(v) for v in values.tolist()], dtype=np.float64)
            array = self._arrays[name] = read_only(values.view())
        return array

    def any_of(self, *names: str) -> Numbers:
        out = self.nan
        for name in names:
            out = fillna(out, self(name))
        return out

    def has(self, name: str) -> bool:
        return name in self._held


def fillna(values: Numbers, other: Numbers | float) -> Numbers:
    return np.where(np.isnan(values), other, values)


def is_missing(labels: Texts) -> Flags:
    """Per row: the label is None or NaN (the one value unequal to itself)."""
    out: Flags = np.equal(labels, np.array(None, dtype=object)) | np.not_equal(labels, labels)
    return out


def sum_present(parts: Sequence[Numbers], rows: int) -> Numbers:
    """Sum of the parts that were measured; NaN only when none was (an n/a never erases a sum).
    Added part after part, as pandas' `sum(axis=1, min_count=1)` adds them."""
    if not parts:
        return np.full(rows, np.nan)
    stacked = np.vstack(parts)
    return np.where(np.isnan(stacked).all(axis=0), np.nan, np.nansum(stacked, axis=0))


def max_present(parts: Sequence[Numbers], rows: int) -> Numbers:
    """Per row, the largest of the parts that were measured (`fmax` skips NaN); NaN when none was."""
    return np.fmax.reduce(np.vstack(parts), axis=0) if parts else np.full(rows, np.nan)


def first_available(candidates: list[Formula]) -> tuple[Numbers, Texts]:
    """Per row, the first candidate with a value; returns (values, recipe label, NaN for none)."""
    rows = len(candidates[0][1])
    values = np.full(rows, np.nan)
    chosen = np.zeros(rows, dtype=np.intp)  # which candidate: 1, 2, …; 0 for none
    for k, (_, candidate) in enumerate(candidates, start=1):
        take = (chosen == 0) & ~np.isnan(candidate)
        values[take] = candidate[take]
        chosen[take] = k
    labels: Texts = np.array([np.nan, *(label for label, _ in candidates)], dtype=object)[chosen]
    return values, labels


def codes_of(labels: Texts) -> tuple[npt.NDArray[np.intp], list[str]]:
    """Each label as a code into the distinct labels (first seen first; -1 for None or NaN)."""
    values = labels.tolist()
    distinct = [v for v in dict.fromkeys(values) if not missing_cell(v)]
    code = {**dict.fromkeys(values, -1), **{label: k for k, label in enumerate(distinct)}}
    codes = np.fromiter(map(code.__getitem__, values), dtype=np.intp, count=len(values))
    return codes, [str(label) for label in distinct]


def prefixed(prefix: str, labels: Texts) -> Texts:
    """`prefix` + each label (a missing one becomes NaN), once per distinct label."""
    codes, distinct = codes_of(labels)
    return np.array([*(prefix + label for label in distinct), np.nan], dtype=object)[codes]


def present_sum(terms: Mapping[str, Numbers], weights: Mapping[str, float]) -> tuple[Numbers, Texts]:
    """Per row: the weighted sum of the terms that were collected (NaN when none was), and the
    names of those that were not (None when all were): an n/a term is absent, never 0."""
    names = list(terms)
    weighted = [terms[n] * weights[n] for n in names]
    rows, absent = len(weighted[0]), np.isnan(np.vstack(weighted)).T
    missing = np.full(rows, None, dtype=object)
    partial = absent.any(axis=1) & ~absent.all(axis=1)
    if partial.any():  # the gaps of a report repeat (fp16: hfma but no hadd/hmul in every row)
        patterns, which = np.unique(absent[partial], axis=0, return_inverse=True)
        texts = [",".join(n for n, gap in zip(names, p, strict=True) if gap) for p in patterns]
        missing[partial] = np.array(texts, dtype=object)[which.reshape(-1)]
    return sum_present(weighted, rows), missing


def join_gaps(first: Texts, second: Texts) -> Texts:
    """Per row, the names of two sums' terms not collected, as one text (None when neither lacks any)."""
    first_missing, second_missing = is_missing(first), is_missing(second)
    joined: Texts = np.where(first_missing, second, first)
    both = ~first_missing & ~second_missing
    joined[both] = first[both] + "," + second[both]
    return joined
