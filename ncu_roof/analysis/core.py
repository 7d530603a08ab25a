"""The analysis: normalized launches + roofs → a verdict per launch, kept as the launch frame.

`analyze` runs the verdict ladder (`analysis.verdicts`) and the notes (`analysis.notes`) over
every launch of a device at once and keeps the result as the launch frame; `Analysis.kernels`
makes a `Kernel` only for the rows a renderer asks for. Renderers read only this."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np
import polars as pl

from ncu_roof.analysis.device_frame import device_frame
from ncu_roof.analysis.frame import FrameRows, each_distinct, frame_of, kernel_of
from ncu_roof.analysis.model import known_sum, nan_to_none
from ncu_roof.analysis.records import Device, InputInfo, Kernel
from ncu_roof.analysis.verdicts import verdicts
from ncu_roof.base.arrays import object_array
from ncu_roof.base.metrics import collect_command
from ncu_roof.base.units import cell_number, missing_cell
from ncu_roof.base.vocabulary import RoofChoice, Roofs, TrafficDefinition
from ncu_roof.errors import BadInputError
from ncu_roof.gpus.lookup import gpu_by_key, match_gpu
from ncu_roof.gpus.roofs import (
    device_hardware,
    fill_builtin,
    first_label,
    infer_device,
    launch_count,
    median,
    report_roofs,
)
from ncu_roof.ingest import RunTable
from ncu_roof.recipe import TENSOR_PATH_PREFIX, normalize_columns

SCHEMA = "ncu-roof/analysis/v1"
T = TypeVar("T")


@dataclass(frozen=True)
class Analysis:
    inputs: tuple[InputInfo, ...]
    devices: tuple[Device, ...]
    kernels: Sequence[Kernel]  # `FrameRows` (the launch frame, a Kernel per row on demand) or Kernels
    collect_hint: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def launches(self) -> pl.DataFrame:
        kernels = self.kernels
        return kernels.frame if isinstance(kernels, FrameRows) else frame_of(kernels)

    def derived(self, key: Hashable, make: Callable[[], T], fuller: Hashable = None) -> T:
        """A view of this analysis (its groups, say) made once: an analysis never changes, and the
        summary, the plot and the JSON all ask for the same groups; one made under `fuller` serves too."""
        views: dict[Hashable, Any] = self.__dict__.setdefault("_views", {})
        key = fuller if fuller in views else key
        return cast(T, views[key] if key in views else views.setdefault(key, make()))

    @property
    def total_duration_s(self) -> float:
        """The sum of the launches' durations; NaN (never 0) when there are launches and none has one."""
        duration = self.launches.get_column("duration_s").to_numpy()
        return known_sum(duration, exact=True) if len(duration) else 0.0


@np.errstate(all="ignore")  # x/0 is inf, 0/0 NaN and an overflow inf, without a warning (as in the recipe)
def analyze(tables: Sequence[RunTable], choice: RoofChoice = RoofChoice(), notes: bool = True) -> Analysis:
    normalized = [_normalized(t, choice.traffic) for t in tables]
    durations = np.concatenate([n["duration_s"] for n in normalized]) if normalized else np.zeros(0)
    total_s = float(durations[durations > 0].sum())
    inputs: list[InputInfo] = []
    devices: list[Device] = []
    frames: list[pl.DataFrame] = []
    for i, (table, norm) in enumerate(zip(tables, normalized, strict=True)):
        ident, labels = _identity(table), _labels(table)
        inputs.append(
            InputInfo(table.path, table.format.value, table.ncu_version, len(ident["id"]), table.averaged)
        )
        for rows in _device_rows(ident):
            texts = labels if rows.all() else labels.filter(pl.Series(rows))
            name, cc = (
                cast(str | None, texts.get_column(c).drop_nulls().first()) for c in ("device_name", "cc")
            )
            group, roofs = _device_roofs(_rows(norm, rows), name, choice, cc)
            clock = nan_to_none(median(group["sm_clock_hz"]))
            sms = nan_to_none(median(group["sm_count"]))  # the launches' median, else the built-in GPU's
            gpu = match_gpu(name) if sms is None else None
            sms = float(gpu.sm_count) if gpu is not None and gpu.sm_count else sms
            ordinal = int(ident["device"][rows][0])
            clock_recipe = first_label(group["sm_clock_hz_recipe"])
            device = Device(len(devices), i, name, cc, roofs, clock, sms, ordinal, clock_recipe)
            devices.append(device)
            # report and built-in roofs (automatic): each launch at its clocks
            v = verdicts(group, device, automatic=choice.user is None)
            frames.append(device_frame(_rows(ident, rows), texts, group, v, device, i, total_s, notes))
    launches = pl.concat(frames, how="diagonal_relaxed") if frames else frame_of(())
    missing = launches.get_column("missing").explode().drop_nulls().unique().sort().to_list()
    hint = collect_command(missing) if missing else None
    extra = {"traffic_definition": choice.traffic.value}
    return Analysis(tuple(inputs), tuple(devices), FrameRows(launches, kernel_of), hint, extra)


def _normalized(table: RunTable, traffic: TrafficDefinition) -> Mapping[str, np.ndarray]:
    launches = table.launches
    return normalize_columns(
        launches.select(table.metric_columns),
        ncu_version=table.ncu_version,
        traffic=traffic,
        rows=table.rows,  # a table without metric columns still has its launches
        cc=launches.get_column("cc").to_numpy(),
    )


def _identity(table: RunTable) -> Mapping[str, np.ndarray]:
    """The identity numbers as arrays: ID, run and device index as integers (a missing run or
    device index is 0); and the input's notes on each launch, as lists."""
    frame = table.launches
    return {
        "id": _indices(table.path, "id", frame.get_column("id"), missing=None),
        **{c: _indices(table.path, c, frame.get_column(c), missing=0) for c in ("run", "device")},
        "input_notes": object_array(frame.get_column("input_notes").to_list()),
    }


def _labels(table: RunTable) -> pl.DataFrame:
    """The identity texts, kept as Polars columns (a missing name "")."""
    labels = pl.col("name", "grid", "block", "nvtx", "device_name", "cc").cast(pl.String)
    return table.launches.select(labels).with_columns(pl.col("name").fill_null(""))


def _indices(path: str, column: str, values: pl.Series, missing: int | None) -> np.ndarray:
    """An ID, run or device index per launch as int64 (runs are texts, the others numbers; null or
    NaN where missing): a missing one is `missing`; where that is None, or a value is no whole number
    int64 holds, the table is refused (a reader never makes one; a table built by hand can)."""
    given = each_distinct(values, _run_number, pl.Float64()) if values.dtype == pl.String else values
    numbers = given.cast(pl.Float64).to_numpy()  # null: NaN (runs that are all null stay String: cast)
    numbers = np.where(np.isnan(numbers), np.nan if missing is None else float(missing), numbers)
    whole = np.isfinite(numbers) & (numbers == np.round(numbers)) & (np.abs(numbers) < 2.0**62)
    if not whole.all():
        bad = values[int(np.flatnonzero(~whole)[0])]
        shown = "missing" if bad is None else f"{bad:g}" if isinstance(bad, float) else repr(bad)
        raise BadInputError(
            f"{path}: a launch's {column} is {shown}, not a whole number",
            hint="give every launch an integer ID, and a run and device index that are integers or none",
        )
    return numbers.astype("int64")


def _run_number(run: object) -> float:
    """A run's text as a number: NaN for a missing run, infinity (refused) for a text that is none."""
    if missing_cell(run):
        return math.nan
    number = cell_number(run)
    return math.inf if math.isnan(number) else number


def _device_rows(ident: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Each device's launches (a mask per run and device index), in the table's first-seen order."""
    pairs = np.column_stack([ident["run"], ident["device"]])
    _, first, inverse = np.unique(pairs, axis=0, return_index=True, return_inverse=True)
    return [inverse.ravel() == k for k in np.argsort(first).tolist()]


def _rows(columns: Mapping[str, np.ndarray], rows: np.ndarray) -> Mapping[str, np.ndarray]:
    """One device's rows (the columns themselves when it is all one device: no big table copied)."""
    return columns if rows.all() else {c: a[rows] for c, a in columns.items()}


def _device_roofs(
    norm: Mapping[str, np.ndarray], device_name: str | None, choice: RoofChoice, cc: str | None = None
) -> tuple[Mapping[str, np.ndarray], Roofs]:
    """One device's launches with every roof filled in, and the device's (median) roofs. Automatic:
    the report's own roofs, what it lacks from the built-in figures at the measured clocks; `--gpu
    KEY`: that GPU's built-in figures at the measured clocks replace the report's (tiers it has no
    figure for keep the report's); `--roofs FILE`: the file's, as they are."""
    if choice.user is not None:
        return _without_report_path_peaks(norm), choice.user
    gpu = gpu_by_key(choice.gpu_key) if choice.gpu_key is not None else None
    # a device the input does not name: the built-in product its CC and SM count match
    inferred = infer_device(norm, cc) if gpu is None and not device_name else None
    if inferred is None:
        hardware = gpu.hardware() if gpu is not None else device_hardware(norm, device_name, cc)
    else:
        hardware, device_name = inferred
    filled = fill_builtin(norm, hardware, replace=gpu is not None)
    if gpu is not None:
        without = _without_report_path_peaks(filled)
        return without, report_roofs(without, name=gpu.name, source=f"builtin:{gpu.key}")
    return filled, report_roofs(filled, name=device_name)


def _without_report_path_peaks(norm: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]:
    """Roofs named by the user replace the report's: its per-path tensor peaks are not theirs."""
    n = launch_count(norm)
    return {**norm, **{c: np.full(n, np.nan) for c in norm if c.startswith(f"peak_{TENSOR_PATH_PREFIX}")}}
