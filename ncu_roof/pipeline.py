"""Inputs → Analysis, the one pipeline of the CLI and the API (`ncu_roof.api`): read every input
(in a process pool when there are several big ones: reports are independent), analyze them
together against the roofs asked for. Nothing here writes a file or parses a command line; heavy
modules (pandas, pyarrow, ncu_report) load inside the functions, so importing this costs nothing."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ncu_roof.base.text import plural
from ncu_roof.base.vocabulary import TIERS, RoofChoice, Roofs, TrafficDefinition
from ncu_roof.errors import BadInputError, UsageError

if TYPE_CHECKING:
    import polars as pl

    from ncu_roof.analysis.core import Analysis
    from ncu_roof.base.units import NumberStyle
    from ncu_roof.ingest import RunTable

Log = Callable[[str], None]
T = TypeVar("T")

POOL_MIN_INPUTS = 2
POOL_MIN_BYTES = 8_000_000  # below this much input in all, starting worker processes costs more than it saves
PROGRESS_MIN_INPUTS = 4  # fewer inputs than this finish before a progress bar is worth drawing


@dataclass(frozen=True)
class Request:
    """What to analyze and against which roofs (the options shared by the CLI and the API)."""

    gpu: str | None = None  # a built-in GPU key (`ncu-roof gpus`)
    roofs: str | None = None  # a platform TOML file
    number_style: NumberStyle | None = None  # None: detect the number locale of each CSV
    traffic: TrafficDefinition | str = TrafficDefinition.NSIGHT  # which traffic each tier is judged by
    jobs: int | None = None  # worker processes for many inputs (None: decide by size; 1: none)
    # kernels with damaged CSV rows, inputs whose every launch failed: left out (warned), not fatal
    skip_bad_rows: bool = False
    notes: bool = True  # False: only the notes of failed launches, for outputs that show none (diff, plot)


def example_path() -> str:
    """The example report shipped inside the package (made by scripts/make_example.py)."""
    from importlib import resources

    return str(resources.files("ncu_roof") / "data" / "example.csv")


def roof_choice(request: Request) -> RoofChoice:
    """The request's `--gpu KEY` or `--roofs FILE` (not both) → the roofs to judge against (automatic:
    neither), and its traffic definition (`nsight` or `counted`; an enum member passes through)."""
    from ncu_roof.gpus.lookup import gpu_by_key
    from ncu_roof.gpus.roofs import load_roofs_file

    gpu, roofs, traffic = request.gpu, request.roofs, request.traffic
    if gpu and roofs:
        raise UsageError("--gpu and --roofs both name the roofs", hint="pass only one of them")
    if gpu:
        gpu_by_key(gpu)
    user = load_roofs_file(roofs) if roofs else None
    try:
        return RoofChoice(gpu_key=gpu, user=user, traffic=TrafficDefinition(traffic))
    except ValueError:
        names = ", ".join(t.value for t in TrafficDefinition)
        raise UsageError(f"unknown traffic definition {traffic!r}", hint=f"use one of: {names}") from None


def platform(
    gpu: str | None, roofs_file: str | None, peaks: Sequence[str], bandwidths: Sequence[str]
) -> Roofs:
    """The platform of a prediction: exactly one of a built-in GPU key, a TOML file, or peaks and
    bandwidths (`[PRECISION=]FLOP/s`, `TIER=B/s` strings)."""
    from ncu_roof.analysis.prediction import custom_roofs
    from ncu_roof.gpus.lookup import gpu_by_key
    from ncu_roof.gpus.roofs import builtin_roofs, load_roofs_file

    if sum(map(bool, (gpu, roofs_file, peaks or bandwidths))) != 1:
        raise UsageError(
            "give exactly one platform: --gpu KEY, --roofs FILE.toml, or --peak/--bandwidth",
            hint="`ncu-roof gpus` lists the built-in keys",
        )
    if gpu:
        return builtin_roofs(gpu_by_key(gpu))
    return load_roofs_file(roofs_file) if roofs_file else custom_roofs(peaks, bandwidths)


def run(inputs: Sequence[str | RunTable], request: Request = Request(), log: Log | None = None) -> Analysis:
    """Input paths (or tables already read) → Analysis; `log` gets a line per input read, warning, note."""
    choice = roof_choice(request)  # usage errors first
    return _run(_stdin_once(inputs), choice, request, log or (lambda _: None))


def _run(inputs: Sequence[str | RunTable], choice: RoofChoice, request: Request, say: Log) -> Analysis:
    from ncu_roof.analysis.core import analyze
    from ncu_roof.gpus.lookup import gpu_by_key, match_gpu

    tables = read_tables(expand(inputs, say), request)
    for table in tables:
        version = f", ncu {table.ncu_version}" if table.ncu_version else ""
        say(f"read {table.path}: {plural(table.rows, 'launch')} ({table.format.value}{version})")
        for warning in table.warnings:
            say(f"warning: {warning}")
    analysis = analyze(tables, choice, request.notes)
    if request.skip_bad_rows:  # an input whose every launch failed goes, said, where another measured
        failed = {i: n for i, n, every, *_ in _per_input(analysis).iter_rows() if every}
        if 0 < len(failed) < len(tables):
            for index, launches in failed.items():
                path = analysis.inputs[index].path
                say(f"warning: {_failed_words(path, launches)}; left out (--skip-bad-rows)")
            analysis = analyze([t for i, t in enumerate(tables) if i not in failed], choice, request.notes)
    for device in analysis.devices:  # a GPU the input does not name, taken from what it holds
        if device.name is None and device.roofs.name and "inferred from" in device.roofs.name:
            say(f"note: device {device.index}: {device.roofs.name}; --gpu KEY chooses another")
    if request.gpu:  # a --gpu KEY that names another GPU than the report's device: allowed, said
        gpu = gpu_by_key(request.gpu)
        for name in sorted({d.name for d in analysis.devices if d.name}):
            if match_gpu(name) is not gpu:
                say(
                    f"warning: --gpu {request.gpu} ({gpu.name}) is not the report's device {name!r}; "
                    "its built-in figures are used at the measured clocks"
                )
    return analysis


def expand(inputs: Sequence[str | RunTable], log: Log) -> list[str | RunTable]:
    """Paths expanded in place (`-`, directories, globs; what was passed over goes to `log`)."""
    from ncu_roof.ingest import expand_inputs

    out: list[str | RunTable] = []
    for item in inputs:
        if isinstance(item, str):
            expanded = expand_inputs([item])
            for note in expanded.skipped:
                log(f"note: {note}")
            out += expanded.paths
        else:
            out.append(item)
    return out


def run_each(inputs: Sequence[str], request: Request = Request(), log: Log | None = None) -> list[Analysis]:
    """One analysis per input (a diff's sides; a folder's or glob's files together, as `analyze`
    reads them), each read and analyzed in turn: one read table held at a time, the first bad
    input's error raised after the lines of those before it. (A worker process per side paid no
    more: a fresh interpreter's imports and the analysis sent back cost what it saved.)"""
    choice = roof_choice(request)  # usage errors first, once
    return [_run([item], choice, request, log or (lambda _: None)) for item in _stdin_once(inputs)]


def _stdin_once(inputs: Sequence[T]) -> Sequence[T]:
    """The inputs, when `-` (stdin, read once) is among them once at most (no folder or glob gives it)."""
    from ncu_roof.ingest import STDIN

    if sum(item == STDIN for item in inputs) > 1:
        raise BadInputError("`-` (stdin) is named twice", hint="stdin can be read only once")
    return inputs


def read_tables(inputs: Sequence[str | RunTable], request: Request = Request()) -> list[RunTable]:
    """Read every path (tables pass through), in input order; a pool reads many big inputs at once."""
    from ncu_roof.ingest import read_input

    paths = [item for item in inputs if isinstance(item, str)]
    read = partial(read_input, number_style=request.number_style, skip_bad_rows=request.skip_bad_rows)
    workers = pool_size(paths, request.jobs)
    pooled = _read_pooled(paths, read, workers) if workers > 1 else None
    tables = iter(pooled or [read(path) for path in _progress(paths)])
    return [next(tables) if isinstance(item, str) else item for item in inputs]


def _read_pooled(
    paths: Sequence[str], read: Callable[[str], RunTable], workers: int
) -> list[RunTable] | None:
    """The inputs read by `workers` processes, one file a task, in input order (the first error
    raised is the first bad input's); None when no worker could run (workers started as fresh
    interpreters, from a script without a `__main__` guard): read them here. Workers come from a
    fork server (spawned where there is none), never forked from this process: Polars' and
    pyarrow's threads do not survive a fork, a forked child can hang on their locks. The server
    loads `ncu_report` first where this process has (`cli.report_reader_first`)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    context.set_forkserver_preload(["ncu_report"] if "ncu_report" in sys.modules else [])
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    try:
        return [future.result() for future in _progress([pool.submit(read, path) for path in paths])]
    except BrokenProcessPool:
        return None
    finally:
        pool.shutdown(cancel_futures=True)


def pool_size(paths: Sequence[str], jobs: int | None) -> int:
    """Worker processes for these inputs: `jobs` when given, else one per core when it pays."""
    if jobs is not None:
        if jobs < 1:
            raise UsageError(f"jobs {jobs}: must be at least 1", hint="1 reads the inputs one by one")
        return min(jobs, len(paths))
    if len(paths) < POOL_MIN_INPUTS or sum(_size(p) for p in paths) < POOL_MIN_BYTES:
        return 1
    return min(os.cpu_count() or 1, len(paths))


def _size(path: str) -> int:
    """A file's size in bytes; 0 for one that is not there (the reader says so)."""
    with contextlib.suppress(OSError):
        return os.stat(path).st_size
    return 0


def _progress(items: Sequence[T]) -> Iterable[T]:
    """`items`, wrapped in a rich progress bar on stderr when a person watches (a terminal) and
    there are enough of them to matter; it advances as the caller takes each, counting work done."""
    if len(items) < PROGRESS_MIN_INPUTS or not sys.stderr.isatty():
        return items
    from rich.console import Console
    from rich.progress import track

    return track(items, f"reading {len(items)} inputs", console=Console(stderr=True), transient=True)


def _failed_words(path: str, launches: int) -> str:
    return f"{path}: collection failed for every launch ({plural(launches, 'launch')}): ncu measured nothing"


def _per_input(analysis: Analysis) -> pl.DataFrame:
    """Per input: its index, its launches, whether every one failed (`failed`), whether every one
    lacks every quantity ncu-roof reads (`lacking`), and what they lack (`missing`)."""
    import polars as pl

    from ncu_roof.analysis.notes import COLLECTION_FAILED, ZERO_DURATION

    failed = pl.col("notes").list.eval(pl.element().is_in([COLLECTION_FAILED, ZERO_DURATION])).list.any()
    lacking = failed | (pl.col("missing").list.len() == len(TIERS) + 3)  # duration, flop, sol: all of them
    by_input = analysis.launches.group_by("input", maintain_order=True)
    return by_input.agg(
        pl.len(), failed.all().alias("failed"), lacking.all().alias("lacking"), pl.col("missing").explode()
    )


def refuse_failed_captures(analysis: Analysis) -> None:
    """An input in which every launch failed to collect (every counter n/a, or a duration of 0), or
    lacks every quantity ncu-roof reads (duration, FLOPs, bytes, SOL: a roofline chart page's clocks),
    is bad input (exit 3), not unknowns (`skip_bad_rows` left a failed one out if another measured)."""
    from ncu_roof.base.metrics import collect_command

    for index, launches, all_failed, all_lacking, missing in _per_input(analysis).iter_rows():
        path = analysis.inputs[int(index)].path
        if all_failed:
            raise BadInputError(
                _failed_words(path, launches),
                hint="profile again; ncu's own output says why (a crash, a GPU reset, a replay that failed)",
            )
        if all_lacking:
            parts = list(dict.fromkeys(m for m in missing if m))  # (a failed launch lacks none)
            raise BadInputError(
                f"{path}: holds none of the metrics ncu-roof reads (no {', '.join(parts)} counters)",
                hint=f"a run that collects them: {collect_command(parts)}",
            )
