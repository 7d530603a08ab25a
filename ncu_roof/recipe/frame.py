"""What every formula of the recipe is built from: the factors, the metric frame, the choosers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ncu_roof.metrics import is_wanted


@dataclass(frozen=True)
class Factors:
    """Every conversion factor of the recipe in one place. [verify] = not yet measured on a GPU."""

    fma_flop: float = 2.0  # one FMA thread instruction = 2 FLOPs
    fp16_lanes: float = 2.0  # [verify] Nsight 2025.3 assumes every H-instruction is packed (HFMA2)
    fp32x2_lanes: float = 2.0  # [verify] Blackwell FADD2/FMUL2/FFMA2 packed FP32
    tensor_flop_per_pipe_inst: float = 512.0  # [verify] V100 HMMA shape; wrong on later archs
    sector_bytes: float = 32.0  # L1/L2/DRAM sector
    l2_xbar_bytes_per_cycle: float = 32.0  # Nsight 2025.3: lts__lts2xbar_cycles_active × 32 B
    l1_writeback_bytes_per_cycle: float = 128.0  # Nsight: l1tex__lsu_writeback_active × 128 B
    shared_wavefront_bytes: float = 128.0  # [verify] 32 banks × 4 B per shared-memory wavefront


FACTORS = Factors()

Formula = tuple[str, pd.Series]


class MetricFrame:
    """Column access on the metric frame where an absent metric reads as NaN.

    A formula may read only the names `metrics` declares (the readers drop every other column,
    so an undeclared name would read as NaN on every input): any other is a `KeyError`.
    """

    def __init__(self, metrics: pd.DataFrame) -> None:
        self.df = metrics
        self.nan = pd.Series(np.nan, index=metrics.index, dtype="float64")

    def __call__(self, name: str) -> pd.Series:
        if not is_wanted(name):
            raise KeyError(f"{name}: read by a formula, but not in metrics.FORMULA_METRICS")
        if name not in self.df.columns:
            return self.nan
        column = self.df[name]
        if column.dtype == "float64":  # what every reader gives: no copy
            return column
        return pd.to_numeric(column, errors="coerce").astype("float64")

    def any_of(self, *names: str) -> pd.Series:
        out = self.nan
        for name in names:
            out = out.fillna(self(name))
        return out

    def names(self) -> Iterable[str]:
        return (str(c) for c in self.df.columns)


def first_available(candidates: list[Formula], index: pd.Index) -> tuple[pd.Series, pd.Series]:
    """Per row, the first candidate with a value; returns (values, recipe label, NaN for none)."""
    values, chosen = choose(candidates, index)
    return values, pd.Series(labels_of(candidates)[chosen], index=index, dtype="object")


def choose(candidates: list[Formula], index: pd.Index) -> tuple[pd.Series, np.ndarray]:
    """Per row, the first candidate with a value, and which it was (1, 2, …; 0 for none)."""
    values = np.full(len(index), np.nan)
    chosen = np.zeros(len(index), dtype=np.intp)
    for k, (_, series) in enumerate(candidates, start=1):
        candidate = series.to_numpy(dtype="float64", na_value=np.nan)
        take = (chosen == 0) & ~np.isnan(candidate)
        values[take] = candidate[take]
        chosen[take] = k
    return pd.Series(values, index=index), chosen


def labels_of(candidates: list[Formula]) -> np.ndarray:
    """The candidates' labels, indexed as `choose` counts them (NaN first: the label of a row none fits)."""
    return np.array([np.nan, *(label for label, _ in candidates)], dtype=object)


def prefixed(prefix: str, labels: pd.Series) -> pd.Series:
    """`prefix` + each label (a missing one stays NaN), once per distinct label."""
    codes, distinct = pd.factorize(labels)
    texts = np.array([*(prefix + str(label) for label in distinct), np.nan], dtype=object)
    return pd.Series(texts[codes], index=labels.index, dtype="object")


def present_sum(terms: Mapping[str, pd.Series], weights: Mapping[str, float]) -> tuple[pd.Series, pd.Series]:
    """Per row: the weighted sum of the terms that were collected (NaN when none was), and the
    names of those that were not (None when all were): an n/a term is absent, never 0."""
    names = list(terms)
    index = next(iter(terms.values())).index
    values = np.column_stack([terms[n].to_numpy(dtype="float64") * weights[n] for n in names])
    absent = np.isnan(values)
    total = np.where(absent.all(axis=1), np.nan, np.where(absent, 0.0, values).sum(axis=1))
    missing = np.full(len(index), None, dtype=object)
    partial = absent.any(axis=1) & ~absent.all(axis=1)
    if partial.any():  # the gaps of a report repeat (fp16: hfma but no hadd/hmul in every row)
        patterns, which = np.unique(absent[partial], axis=0, return_inverse=True)
        texts = [",".join(n for n, gap in zip(names, p, strict=True) if gap) for p in patterns]
        missing[partial] = np.array(texts, dtype=object)[which.reshape(-1)]
    return pd.Series(total, index=index), pd.Series(missing, index=index, dtype="object")


def join_gaps(first: pd.Series, second: pd.Series) -> pd.Series:
    """Per row, the names of two sums' terms not collected, as one text (None when neither lacks any)."""
    joined = first.where(first.isna() | second.isna(), first + "," + second)
    return joined.where(first.notna(), second)


def sum_present(parts: list[pd.Series], index: pd.Index) -> pd.Series:
    """Sum of the parts that were measured; NaN only when none was (an n/a never erases a sum)."""
    if not parts:
        return pd.Series(np.nan, index=index, dtype="float64")
    return pd.concat(parts, axis=1).sum(axis=1, min_count=1)
