"""Where roofs come from: the report itself, the built-in GPU table, or the user's roofs file.

Automatic order: the report's own `*.peak_sustained × clock` (Nsight's method, at the clock the
kernel ran at), with entries the report lacks filled from the built-in row matched by device name.
An explicit `--gpu KEY` or `--roofs FILE` replaces both.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ncu_roof.errors import BadInputError, NcuRoofError
from ncu_roof.gpus import Gpu, match_gpu
from ncu_roof.model import PRECISIONS, TIERS, Roofs
from ncu_roof.tomlfile import read_toml
from ncu_roof.units import Dimension, parse_quantity

if TYPE_CHECKING:
    import pandas as pd


def builtin_roofs(gpu: Gpu) -> Roofs:
    return Roofs(
        compute_flop_per_s=gpu.compute_flop_per_s,
        bandwidth_byte_per_s=gpu.bandwidth_byte_per_s,
        source=f"builtin:{gpu.key}",
        sources={k: f"builtin:{gpu.key} ({v})" for k, v in gpu.sources.items()},
        name=gpu.name,
    )


def report_roofs(normalized: pd.DataFrame) -> Roofs:
    """Median over the device's launches of each roof measured in the report (SI)."""
    import pandas as pd

    clock = normalized["sm_clock_hz"].median()
    clock_note = f"at measured SM clock {clock / 1e9:.3g} GHz" if pd.notna(clock) else "at measured clock"
    n = len(normalized)
    sources: dict[str, str] = {}

    def medians(columns: dict[str, tuple[str, str]], describe: str) -> dict[str, float]:
        found: dict[str, float] = {}
        for key, (value_column, recipe_column) in columns.items():
            value = normalized[value_column].median()
            if pd.notna(value) and value > 0:
                found[key] = float(value)
                labels = normalized[recipe_column].dropna()
                recipe = labels.iloc[0] if len(labels) else "report"
                sources[key] = describe.format(recipe=recipe) + f" (median of {n} launches)"
        return found

    compute = medians(
        {p: (f"peak_{p}_flop_per_s", f"peak_{p}_flop_per_s_recipe") for p in PRECISIONS},
        "{recipe} " + clock_note,
    )
    bandwidth = medians(
        {t: (f"bw_{t}_byte_per_s", f"bw_{t}_byte_per_s_recipe") for t in TIERS},
        "report: peak_sustained x clock of {recipe}",
    )
    return Roofs(compute, bandwidth, source="report" if sources else "none", sources=sources)


def combine(report: Roofs, device_name: str | None) -> Roofs:
    """Report roofs, with what the report lacks filled from the built-in table."""
    gpu = match_gpu(device_name)
    if gpu is None:
        return Roofs(
            report.compute_flop_per_s,
            report.bandwidth_byte_per_s,
            report.source,
            report.sources,
            name=device_name,
        )
    table = builtin_roofs(gpu)
    if not report.compute_flop_per_s and not report.bandwidth_byte_per_s:
        return table
    compute = {**table.compute_flop_per_s, **report.compute_flop_per_s}
    bandwidth = {**table.bandwidth_byte_per_s, **report.bandwidth_byte_per_s}
    sources = {**table.sources, **report.sources}
    return Roofs(compute, bandwidth, source="report", sources=sources, name=device_name)


def load_roofs_file(path: str) -> Roofs:
    """A user platform: `[peak]` FLOP/s per precision and `[bandwidth]` byte/s per tier (any names)."""
    data = read_toml(path, "roofs", ROOFS_HINT)
    peaks = data.get("peak", {})
    bands = data.get("bandwidth", {})
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
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise BadInputError(
            f"{where} = {value!r} is not a {dimension.value} value (a string or a number)",
            hint=ROOFS_HINT,
        )
    try:
        number = parse_quantity(value, dimension)
    except NcuRoofError as err:
        raise BadInputError(f"{where}: {err.message}", hint=err.hint) from None
    if not (math.isfinite(number) and number > 0):
        raise BadInputError(
            f"{where} = {value!r}: a roof must be a finite, positive {dimension.value}", hint=ROOFS_HINT
        )
    return number


ROOFS_HINT = (
    'write e.g.  name = "my-gpu"  [peak] fp32 = "19.5TFLOP/s"  [bandwidth] dram = "2039GB/s" '
    'l2 = "5TB/s"  (see docs/analysis-schema.md)'
)
