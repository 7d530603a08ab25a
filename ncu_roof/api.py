"""The Python API, for notebooks and scripts: the same pipeline as the CLI, results as objects.

    import ncu_roof
    a = ncu_roof.analyze("run.ncu-rep", gpu="a100-sxm4")
    df = a.to_pandas()                 # one row per launch, units in the column names
    fig = a.plot()                     # a matplotlib Figure
    p = ncu_roof.predict(flops=2e9, bytes=1e9, gpu="a100-sxm4")
    d = ncu_roof.diff("base.ncu-rep", "head.ncu-rep")

Errors are `ncu_roof.errors.NcuRoofError` (with `.message`, `.hint`), as the CLI prints them; its
warnings and notes are `ncu_roof.errors.NcuRoofWarning`s (`warnings.warn`). See docs/api.md."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from functools import partial
from os import PathLike
from typing import TYPE_CHECKING, Any, cast

from ncu_roof import pipeline
from ncu_roof.analysis import core
from ncu_roof.base.units import Dimension, NumberStyle, parse_quantity
from ncu_roof.errors import NcuRoofWarning, UsageError
from ncu_roof.pipeline import example_path

__all__ = ["Analysis", "analyze", "diff", "example_path", "predict"]

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from matplotlib.figure import Figure

    from ncu_roof.analysis.prediction import Prediction
    from ncu_roof.compare.comparison import Diff

Path = str | PathLike[str]
Analyses = list[core.Analysis]
Quantity = float | str  # a number in SI base units, or a string with its unit: "2.5GFLOP", "1.5TB/s"


@dataclass(frozen=True)
class Analysis(core.Analysis):
    """The analysis every renderer reads (inputs, devices, one `Kernel` per launch) with notebook
    helpers: `to_arrow()` / `to_pandas()` give a row per launch (columns: ncu_roof.analysis.launches);
    `warnings`: each warning and note the CLI prints, as it words them (each issued as well)."""

    warnings: tuple[str, ...] = ()

    def to_arrow(self) -> pa.Table:
        from ncu_roof.analysis.launches import to_arrow

        return to_arrow(self)

    def to_pandas(self) -> pd.DataFrame:
        return cast("pd.DataFrame", self.to_arrow().to_pandas())

    def to_parquet(self, path: Path) -> None:
        """Write the launch table to a Parquet file (atomically), as `analyze --format parquet`."""
        from ncu_roof.render.formats import OutputFormat, RenderOptions, render
        from ncu_roof.render.output import write_output

        write_output(render(self, OutputFormat.PARQUET, RenderOptions()), _path("path", path))

    def to_json(self) -> str:
        """The `ncu-roof/analysis/v1` JSON document, as `analyze --format json` writes it."""
        from ncu_roof.render.jsonout import render_json

        return render_json(self)

    def plot(self, device: int | None = None) -> Figure:
        """The hierarchical roofline as a matplotlib `Figure`: one panel per device that ran
        kernels (in device order), as `ncu-roof plot` draws it, or of `device` alone."""
        from ncu_roof.render.plot import plot_figure

        _typed("device", device, int, "an int")
        return plot_figure(self, device=device)

    def __repr__(self) -> str:
        from ncu_roof.render.notebook import analysis_repr

        return analysis_repr(self)

    def _repr_html_(self) -> str:  # Jupyter's view
        from ncu_roof.render.notebook import analysis_html

        return analysis_html(self)

    @classmethod
    def of(cls, analysis: core.Analysis, warnings: tuple[str, ...] = ()) -> Analysis:
        return cls(**{f.name: getattr(analysis, f.name) for f in fields(core.Analysis)}, warnings=warnings)


def analyze(
    *paths: Path,
    gpu: str | None = None,
    roofs: Path | None = None,
    traffic: str = "nsight",
    number_locale: str | None = None,
    jobs: int | None = None,
    skip_bad_rows: bool = False,
) -> Analysis:
    """Analyze ncu outputs (.ncu-rep, raw-page or details CSV) together, as `ncu-roof analyze`.

    gpu: a built-in GPU key (`ncu-roof gpus`) whose datasheet roofs to use; roofs: a platform TOML
    file; neither: the roofs measured in the reports. traffic: "nsight" (each tier's traffic as
    the Nsight Compute version that wrote the report draws it) or "counted" (all traffic through
    the tier), each judged against its own counter's peak. number_locale: "C", "en" or "de" for CSV
    numbers (None: detect per file). jobs: worker processes for many inputs (None: by size).
    skip_bad_rows: as `--skip-bad-rows` (an input that measured nothing raises the CLI's error
    unless it leaves it out). What the CLI warns is an `NcuRoofWarning`, kept in `.warnings`.
    """
    if not paths:
        raise UsageError("no input files", hint='ncu_roof.analyze("report.ncu-rep")')
    inputs = [_path("each path", p) for p in paths]
    request = _request(gpu, roofs, skip_bad_rows, traffic=traffic, jobs=jobs)  # types first (TypeError)
    _typed("number_locale", number_locale)
    _typed("traffic", traffic)
    _typed("jobs", jobs, int, "an int")
    try:
        style = NumberStyle(number_locale) if number_locale is not None else None
    except ValueError:
        raise UsageError(
            f"number_locale {number_locale!r} is not one of C, en, de",
            hint="or leave it out: it is detected per file",
        ) from None
    request = replace(request, number_style=style)
    (analysis,), said = _checked(lambda log: [pipeline.run(inputs, request, log)])
    return Analysis.of(analysis, said)


def predict(
    flops: Quantity | None = None,
    bytes: Quantity | Mapping[str, Quantity] | None = None,
    *,
    intensity: Mapping[str, float] | None = None,
    gpu: str | None = None,
    roofs: Path | None = None,
    peak: Quantity | Mapping[str, Quantity] | None = None,
    bandwidth: Mapping[str, Quantity] | None = None,
    precision: str | None = None,
) -> Prediction:
    """Place a kernel on a platform's roofline before it exists, as `ncu-roof predict`.

    bytes: a number (DRAM bytes) or {tier: bytes}; intensity: {tier: FLOP/byte}. The platform is
    one of gpu (built-in key), roofs (TOML file), or peak ([{precision:}] FLOP/s) with bandwidth
    ({tier: byte/s}). precision: fp64, fp32, fp16, tensor, or one tensor data path `tensor:tf32`,
    `tensor:bf16`, `tensor:fp16`, `tensor:fp8` (None: the platform's fp32 first).
    The result has `bound`, `binding`, `attainable_flop_per_s` and `point` (the full roofline).
    """
    from ncu_roof.analysis import prediction

    request = _request(gpu, roofs)  # every type checked first (a TypeError naming each)
    _typed("flops", flops, (int, float, str), "a number or a str with its unit")
    _typed("precision", precision)
    peaks, bandwidths = _assignments("peak", peak), _assignments("bandwidth", bandwidth, scalar=False)
    traffic, intensities = _assignments("bytes", bytes), _assignments("intensity", intensity, scalar=False)
    return prediction.predict(
        pipeline.platform(request.gpu, request.roofs, peaks, bandwidths),
        parse_quantity(flops, Dimension.FLOP) if flops is not None else None,
        prediction.parse_assignments(traffic, Dimension.BYTE, prediction.DEFAULT_TIER),
        prediction.parse_assignments(intensities, Dimension.FLOP_PER_BYTE, None, positive=True),
        precision,
        tensor_peaks=prediction.builtin_peaks(gpu)[0],
    )


def diff(
    base: core.Analysis | Path,
    head: core.Analysis | Path,
    *,
    threshold_pct: float = 5.0,
    allow_mismatch: bool = False,
    gpu: str | None = None,
    roofs: Path | None = None,
    skip_bad_rows: bool = False,
) -> Diff:
    """Compare two runs kernel by kernel, as `ncu-roof diff` (analyses, or paths to analyze as
    `analyze` does: its warnings issued, an input that measured nothing refused)."""
    from ncu_roof.compare.comparison import diff as compare

    paths = [_path("base and head", run) for run in (base, head) if not isinstance(run, core.Analysis)]
    request = _request(gpu, roofs, skip_bad_rows, notes=False)
    _typed("threshold_pct", threshold_pct, (int, float), "a number of percent", optional=False)
    _typed("allow_mismatch", allow_mismatch, bool, "a bool", optional=False)
    analyzed = iter(_checked(partial(pipeline.run_each, paths, request))[0])
    sides = [run if isinstance(run, core.Analysis) else next(analyzed) for run in (base, head)]
    return compare(*sides, threshold_pct=threshold_pct, allow_mismatch=allow_mismatch)


def _request(
    gpu: str | None, roofs: Path | None, skip_bad_rows: bool = False, **more: Any
) -> pipeline.Request:
    _typed("gpu", gpu)
    _typed("skip_bad_rows", skip_bad_rows, bool, "a bool", optional=False)
    roofs_file = _path("roofs", roofs) if roofs is not None else None
    return pipeline.Request(gpu=gpu, roofs=roofs_file, skip_bad_rows=skip_bad_rows, **more)


def _checked(run: Callable[[pipeline.Log], Analyses]) -> tuple[Analyses, tuple[str, ...]]:
    """The analyses `run(log)` makes, an input that measured nothing refused (as the CLI), and the
    warnings and notes it logs, each an `NcuRoofWarning` at the API's caller (before an error too)."""
    lines: list[str] = []
    try:
        analyses = run(lines.append)
        for analysis in analyses:  # each refused before any is used
            pipeline.refuse_failed_captures(analysis)
    finally:
        said = tuple(line for line in lines if line.startswith(("warning: ", "note: ")))
        for line in said:
            warnings.warn(line, NcuRoofWarning, stacklevel=3)
    return analyses, said


def _assignments(
    name: str, value: Quantity | Mapping[str, Quantity] | Mapping[str, float] | None, scalar: bool = True
) -> list[str]:
    """A value or {key: value} ({key: value} alone unless `scalar`) as the CLI's `[KEY=]VALUE`
    strings (the parser the CLI uses); anything else is a `TypeError` naming the argument."""
    many = "a dict of numbers or strs with their unit"
    words = f"a number or a str with its unit, or {many}" if scalar else many
    _typed(name, value, (Mapping, int, float, str) if scalar else Mapping, words)
    pairs = [] if value is None else value.items() if isinstance(value, Mapping) else [(None, value)]
    for _, v in pairs:
        _typed(name, v, (int, float, str), words, optional=False)
    texts = ((key, v if isinstance(v, str) else repr(float(v))) for key, v in pairs)
    return [text if key is None else f"{key}={text}" for key, text in texts]


def _path(name: str, value: object) -> str:
    """A path argument as text; anything else (None, a number, bytes) is a `TypeError` naming it
    (`str(3)` would be a file named `3`)."""
    path = value.__fspath__() if isinstance(value, PathLike) else value
    if isinstance(path, str):
        return path
    raise TypeError(f"{name} must be a str or os.PathLike path, not {type(value).__name__} ({value!r})")


def _typed(
    name: str, value: object, kind: type | tuple[type, ...] = str, words: str = "a str", optional: bool = True
) -> None:
    """A `TypeError` naming the argument unless it is a `kind` (a bool is no number, a number no
    bool), or None where `optional`."""
    if value is None and optional:
        return
    if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
        words += " or None" if optional else ""
        raise TypeError(f"{name} must be {words}, not {type(value).__name__} ({value!r})")
