"""Where roofs come from: the report itself, the built-in GPU table, or the user's roofs file.

Automatic: the report's own `*.peak_sustained × clock` (Nsight's method, at the clock the kernel ran
at), what it lacks from the built-in row of its device. `--gpu KEY` or `--roofs FILE` replaces both."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ncu_roof.base.tomlfile import read_toml
from ncu_roof.base.units import Dimension, missing_cell, toml_quantity
from ncu_roof.base.vocabulary import PRECISIONS, TIERS, Roofs
from ncu_roof.errors import BadInputError
from ncu_roof.gpus.lookup import infer_gpu, match_gpu
from ncu_roof.gpus.specs import Gpu, Hardware, hardware_from_attributes

if TYPE_CHECKING:  # `gpus` reads this module without loading numpy
    import numpy as np


def builtin_roofs(gpu: Gpu) -> Roofs:
    """A product's datasheet roofs at its boost clock (what `gpus` and `predict` use)."""
    return Roofs(
        compute_flop_per_s=gpu.compute_flop_per_s,
        bandwidth_byte_per_s=gpu.bandwidth_byte_per_s,
        source=f"builtin:{gpu.key}",
        sources={k: f"builtin:{gpu.key} ({v})" for k, v in gpu.sources.items()},
        name=gpu.name,
    )


# Which measured clock each roof scales with (the column of the normalized table).
CLOCK_COLUMNS = {"sm": "sm_clock_hz", "l1": "l1_clock_hz", "l2": "l2_clock_hz", "dram": "dram_clock_hz"}
_ROOF_CLOCK = {**{p: "sm" for p in PRECISIONS}, "dram": "dram", "l2": "l2", "l1": "l1", "shared": "l1"}


def roof_column(key: str) -> str:
    return f"peak_{key}_flop_per_s" if key in PRECISIONS else f"bw_{key}_byte_per_s"


def ghz_text(hz: float) -> str:
    """1.1e9 → `1.10`, 1.755e9 → `1.755`, 5.4054e8 → `0.541` (GHz, as clocks are quoted)."""
    text = f"{hz / 1e9:.3f}".rstrip("0")
    return text + "0" * max(0, 2 - len(text.partition(".")[2]))


def launch_count(launches: Mapping[str, np.ndarray]) -> int:
    """How many launches normalized columns hold (every column has one value per launch)."""
    return len(launches["duration_s"])


def median(values: np.ndarray) -> float:
    """A column's median, NaN without numbers (pandas' `median`, no warning): the middle one or mean of the
    two, as `np.median` (which imports numpy.ma), but halves summed where the sum would overflow."""
    import numpy as np

    numbers = np.asarray(values, dtype="float64")
    if not (n := len(numbers) - int(np.isnan(numbers).sum())):
        return math.nan
    middle = np.partition(numbers, [(n - 1) // 2, n // 2])  # those two in place, NaN after them
    low, high = float(middle[(n - 1) // 2]), float(middle[n // 2])  # (-inf, inf: NaN, no warning)
    return (low + high) / 2 if math.isfinite(low + high) else low / 2 + high / 2


def first_label(values: np.ndarray) -> str | None:
    """The first label of a column that is there (neither None nor NaN), as text."""
    return next((str(v) for v in values.tolist() if not missing_cell(v)), None)


# Turing TU116/TU117 (GeForce GTX 1650, 1660 and their Super/Ti/mobile forms) have no tensor
# cores, though they share CC 7.5 with the TU10x parts that do (NVIDIA's Turing tuning guide)
NO_TENSOR_CORES = re.compile(r"\bGTX 16[56]0\b", re.IGNORECASE)


def device_hardware(
    norm: Mapping[str, np.ndarray], device_name: str | None, cc_column: str | None = None
) -> Hardware | None:
    """The built-in figures of one device: its product row, else its `device__attribute_*`, else
    its CC column and launch SM count (per-SM figures, no memory bus); no tensor roof without tensor cores."""
    gpu = match_gpu(device_name)
    hardware = (
        gpu.hardware()
        if gpu is not None
        else hardware_from_attributes(
            _attribute(norm, "device_sm_count") or _attribute(norm, "sm_count"),
            _attribute(norm, "device_clock_hz"),
            _attribute(norm, "device_memory_clock_hz"),
            _attribute(norm, "device_memory_bus_bits"),
            _device_cc(norm, cc_column),
            _attribute(norm, "device_l2_slices"),
        )
    )
    if hardware is None or not device_name or NO_TENSOR_CORES.search(device_name) is None:
        return hardware
    return dataclasses.replace(hardware, overrides={**hardware.overrides, "tensor": 0.0})  # 0: no roof


def _attribute(norm: Mapping[str, np.ndarray], *columns: str) -> float | None:
    """The median of the first of `columns` whose launches have a number, else None."""
    return next((v for c in columns if c in norm and math.isfinite(v := median(norm[c]))), None)


def _device_cc(norm: Mapping[str, np.ndarray], cc_column: str | None) -> str | None:
    """The compute capability of the `device__attribute_*` values, else `cc_column`."""
    major, minor = (_attribute(norm, f"device_cc_{part}") for part in ("major", "minor"))
    return f"{int(major)}.{int(minor)}" if major is not None and minor is not None else cc_column


def infer_device(norm: Mapping[str, np.ndarray], cc: str | None) -> tuple[Hardware, str] | None:
    """The built-in product of an unnamed device, by its CC (`device__attribute_*`, else the CC column), SM
    count and memory bus width where known: its per-clock figures and name, each said inferred; or None."""
    sms = _attribute(norm, "device_sm_count", "sm_count")
    inference = infer_gpu(_device_cc(norm, cc), sms, _attribute(norm, "device_memory_bus_bits"))
    if inference is None or inference.gpu is None:
        return None
    gpu, how = inference.gpu, inference.describe()
    return dataclasses.replace(gpu.hardware(), origin=f"builtin:{gpu.key}, {how}"), f"{gpu.name} ({how})"


def fill_builtin(
    norm: Mapping[str, np.ndarray], hardware: Hardware | None, replace: bool = False
) -> dict[str, np.ndarray]:
    """Each launch's roofs the report lacks (all when `replace`): the built-in per-clock figures × its clock
    (`_clock`); a memory tier's, the built-in peak of the counter its traffic was counted with, else of the
    one Nsight draws (`bw_<tier>_counter`, `arch.counter_peaks`); the columns given (maybe shared) stay."""
    import numpy as np

    columns = dict(norm)
    if hardware is None:
        return columns
    everywhere = np.ones(launch_count(columns), dtype=bool)
    fills = [  # (roof column, its launches, built-in figure per clock, the clock's kind, recipe)
        (roof_column(key), everywhere, per_clock, "sm", f"{hardware.origin} ({how})")
        for key, (per_clock, how) in hardware.per_clock().items()
    ]
    for tier in (t for t in TIERS if roof_column(t) in columns):
        counters = columns[f"bw_{tier}_counter"]  # the counter each launch takes its roof from
        for counter in (c for c in dict.fromkeys(counters.tolist()) if isinstance(c, str)):
            if (found := hardware.counter_per_clock(counter)) is not None:
                per_clock, kind, how = found
                rows = np.equal(counters, counter)
                fills.append((roof_column(tier), rows, per_clock, kind, f"{hardware.origin} ({how})"))
    clocks = {kind: _clock(columns, kind, hardware) for kind in {fill[3] for fill in fills}}  # once each
    for column, rows, per_clock, kind, recipe in fills:
        if column not in columns:
            continue
        measured = columns[CLOCK_COLUMNS[kind]]
        clock, at_boost, said = clocks[kind]
        value = per_clock * clock
        lacking = ~(columns[column] > 0)  # missing, or 0 as a failed collection writes it
        take = rows & ~np.isnan(value) & (lacking | replace)
        columns[column] = np.where(take, value, columns[column])
        labels = np.array(columns[f"{column}_recipe"], dtype=object, copy=True)
        labels[take] = recipe  # one shared text, not one per launch
        for words in {w for w in said[take].tolist() if w is not None}:
            labels[take & (said == words)] = f"{recipe}; {words}"
        columns[f"{column}_recipe"] = labels
        columns[f"{column}_clock_hz"] = np.where(take, clock, columns.get(f"{column}_clock_hz", measured))
        columns[f"{column}_at_boost"] = np.where(take, at_boost, columns.get(f"{column}_at_boost", False))
    return columns


def _clock(
    columns: Mapping[str, np.ndarray], kind: str, hardware: Hardware
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each launch's clock of `kind` (boost where it has none), whether built in, and words naming any clock
    not the launch's own. The L2's (Nsight scales the L2 peak by `lts__cycles_elapsed.avg.per_second`) is one
    clock per device: a launch without one takes its other launches' median; a device without any, the
    product's built-in one; a product without one, the SM clock, said so (GH100: ~16 % off)."""
    import numpy as np

    measured = columns[CLOCK_COLUMNS[kind]]
    own, n = measured > 0, len(measured)
    said = np.full(n, None, dtype=object)
    if kind == "l2" and not own.all():
        if own.any():
            device = median(measured[own])
            said[~own] = f"at the device's median L2 clock {ghz_text(device)} GHz: this launch has none"
            return np.where(own, measured, device), np.zeros(n, dtype=bool), said
        if hardware.l2_clock_hz is not None:
            built_in = f"{ghz_text(hardware.l2_clock_hz)} GHz ({hardware.l2_clock_source})"
            said[:] = f"at the built-in L2 clock {built_in}: the report has no L2 clock"
            return np.full(n, hardware.l2_clock_hz), np.ones(n, dtype=bool), said
        clock, at_boost, _ = _clock(columns, "sm", hardware)
        said[:] = "at the SM clock: the report has no L2 clock"
        return clock, at_boost, said
    boost = hardware.dram_boost_clock_hz if kind == "dram" else hardware.boost_clock_hz
    return np.where(own, measured, np.nan if boost is None else boost), ~own, said


def report_roofs(
    normalized: Mapping[str, np.ndarray], name: str | None = None, source: str | None = None
) -> Roofs:
    """Median over the device's launches of each roof (SI), saying where it came from and at which clock:
    `report: … at measured 1.10 GHz`, `builtin:t4 (…) at boost 1.59 GHz`. A launch that measured nothing (a
    failed collection) is left out while others measured (its boost-clock roofs are no figure of the run)."""
    timed = normalized["duration_s"] > 0
    if timed.any() and not timed.all():
        normalized = {c: a[timed] for c, a in normalized.items()}
    n = launch_count(normalized)
    sources: dict[str, str] = {}
    origins: list[str] = []
    compute: dict[str, float] = {}
    bandwidth: dict[str, float] = {}
    for key in (*PRECISIONS, *TIERS):
        column = roof_column(key)
        value = median(normalized[column]) if column in normalized else math.nan
        if not value > 0:
            continue
        (compute if key in PRECISIONS else bandwidth)[key] = value
        has = normalized[column] == normalized[column]  # the launches it is the median of (not NaN)
        recipe = first_label(normalized[f"{column}_recipe"]) or "report"
        origins.append("report" if recipe.startswith("report") else recipe.split(" (", 1)[0])
        measured = normalized[CLOCK_COLUMNS[_ROOF_CLOCK[key]]]
        clock = median(normalized.get(f"{column}_clock_hz", measured)[has])
        at_boost = normalized.get(f"{column}_at_boost")
        when = "at boost" if at_boost is not None and at_boost[has].any() else "at measured"
        at = f" {when} {ghz_text(clock)} GHz" if not math.isnan(clock) else " at the measured clock"
        of = f"{has.sum()} of {n}" if not has.all() else f"{n}"
        sources[key] = f"{recipe}{at} (median of {of} launches)"
    if not sources:
        source = "none"
    elif source is None:
        source = "report" if "report" in origins else origins[0]
    return Roofs(compute, bandwidth, source=source, sources=sources, name=name)


def load_roofs_file(path: str) -> Roofs:
    """A user platform: `[peak]` FLOP/s per precision and `[bandwidth]` byte/s per tier (any names)."""
    data = read_toml(path, "roofs", ROOFS_HINT)
    peaks, bands = data.get("peak", {}), data.get("bandwidth", {})
    if not isinstance(peaks, dict) or not isinstance(bands, dict) or not (peaks or bands):
        raise BadInputError(f"{path}: needs a [peak] and/or a [bandwidth] table", hint=ROOFS_HINT)
    compute = {str(k): _roof(path, "peak", str(k), v, Dimension.FLOP_PER_S) for k, v in peaks.items()}
    bandwidth = {str(k): _roof(path, "bandwidth", str(k), v, Dimension.BYTE_PER_S) for k, v in bands.items()}
    name = data.get("name")
    sources = {k: f"user:{path}" for k in (*compute, *bandwidth)}
    return Roofs(
        compute, bandwidth, source="user", sources=sources, name=str(name) if name is not None else None
    )


def _roof(path: str, table: str, key: str, value: object, dimension: Dimension) -> float:
    """One roofs-file entry: a string with units or a plain number, finite and above zero."""
    where = f"{path}: [{table}] {key}"
    wrong_type = "{where} = {value!r} is not a {unit} value (a string or a number)"
    number = toml_quantity(value, dimension, where, ROOFS_HINT, wrong_type)
    if not (math.isfinite(number) and number > 0):
        raise BadInputError(
            f"{where} = {value!r}: a roof must be a finite, positive {dimension.value}", hint=ROOFS_HINT
        )
    return number


ROOFS_HINT = (
    'write e.g.  name = "my-gpu"  [peak] fp32 = "19.5TFLOP/s"  [bandwidth] dram = "2039GB/s" '
    'l2 = "5TB/s"  (see docs/analysis-schema.md)'
)
