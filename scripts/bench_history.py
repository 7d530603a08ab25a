"""Time `ncu-roof history` on a synthetic history: 500 commits × 4 GPUs × 200 kernels.

    .venv/bin/python scripts/bench_history.py [--folder /tmp/ncu-roof-bench-history] [--commits 500]

One real run of 200 kernels is made from the example report's H100 block (`ncu_roof/data/
example.csv`, each launch a kernel of its own name) and added with `history add`; its launch rows
(`details/`) are the template of every other run, written into the dataset's layout as `add`
writes it (details, lean launches, provenance), with realistic noise (1–3 % launch jitter per
kernel, 0.3 % run-to-run drift, 1 % outlier launches). Then each
command runs as a user runs it (a fresh process), and its wall and CPU time (user + system, the
child's; the median of `--repeat` runs) are printed: `add` of one more run, `show` of one kernel
on one GPU, `check` of the head against 20 commits. The issue's targets: < 1 s, < 0.5 s, < 2 s.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import resource
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ncu_roof.history.record import lean, run_id
from ncu_roof.history.store import DETAILS, launches_path, open_dataset, runs_path, write_parquet
from ncu_roof.pipeline import example_path

GPUS = (  # partitions as `history add` names them: ncu's device name, CC and SM count
    "nvidia-h100-pcie-cc90-114sm",
    "nvidia-a100-sxm4-80gb-cc80-108sm",
    "nvidia-l4-cc89-58sm",
    "nvidia-geforce-rtx-4090-cc89-128sm",
)
KERNELS = 200
ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "ncu_roof"]


def template_csv(folder: Path, name: str, factor: float) -> Path:
    """The example's H100 block as a raw page of `KERNELS` launches, each its own kernel."""
    lines = Path(example_path()).read_text(encoding="utf-8").splitlines()
    rows = list(csv.reader(lines[1:6]))
    header, units, data = rows[0], rows[1], rows[2:]
    at, named = header.index("gpu__time_duration.sum"), header.index("Kernel Name")
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows([header, units])
    for i in range(KERNELS):
        row = list(data[i % len(data)])
        row[0], row[named] = str(i), f"kernel_{i:03d}(float *, int)"
        row[at] = f"{float(row[at]) * factor * (1 + i / 100):.0f}"
        writer.writerow(row)
    path = folder / f"{name}.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def child_env(folder: Path) -> dict[str, str]:
    """The commands' environment: Python's bytecode cached (under `folder`), as an installed
    package's is, whatever PYTHONDONTWRITEBYTECODE says here."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(folder / "pycache")}


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, exit code) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, check=False, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed: {done.stderr.decode()}")
    return wall, cpu, done.returncode


def synthesize(dataset: Path, commits: int, template: pa.Table, runs_row: pa.Table) -> None:
    """Every commit × GPU as a run of the template's kernels, with noise, in the stored layout."""
    rng = np.random.default_rng(25)
    local = open_dataset(str(dataset))  # written as `history add` writes
    base = template.column("duration_s").to_numpy()
    jitter = rng.uniform(0.01, 0.03, (len(GPUS), len(base)))
    start = datetime(2025, 1, 1, tzinfo=UTC)
    durations = template.column_names.index("duration_s")
    counters = template.column_names.index("counters")
    stored = template.column("counters").combine_chunks()
    at = np.flatnonzero(np.asarray(stored.keys.to_pylist()) == "gpu__time_duration.sum")
    run_ids = template.column_names.index("run_id")
    times = template.column_names.index("time")
    for c in range(commits):
        commit = f"{c:040x}"
        for g, gpu in enumerate(GPUS):
            rid = f"synthetic{c:05d}{g}"
            noise = np.exp(rng.normal(0, 0.003) + jitter[g] * rng.standard_normal(len(base)))
            noise[rng.random(len(base)) < 0.01] *= 2.0
            values = pa.array(base * (1 + g * 0.2) * noise)
            table = template.set_column(durations, "duration_s", values)
            items = stored.items.to_numpy(zero_copy_only=False).copy()
            items[at] = values.to_numpy()
            entries = pa.MapArray.from_arrays(stored.offsets, stored.keys, pa.array(items))
            table = table.set_column(counters, "counters", entries)
            table = table.set_column(run_ids, "run_id", pa.array([rid] * table.num_rows))
            when = start + timedelta(hours=c)
            table = table.set_column(
                times, "time", pa.array([when] * table.num_rows, template.schema.field("time").type)
            )
            write_parquet(local, table, launches_path(local, gpu, commit, rid, DETAILS))
            write_parquet(local, lean(table), launches_path(local, gpu, commit, rid))
            row = runs_row.set_column(0, "run_id", pa.array([rid]))
            row = row.set_column(1, "gpu", pa.array([gpu]))
            row = row.set_column(2, "commit", pa.array([commit]))
            row = row.set_column(3, "time", pa.array([when], runs_row.schema.field("time").type))
            write_parquet(local, row, runs_path(local, gpu, rid))


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path("/tmp/ncu-roof-bench-history"))
    parser.add_argument("--commits", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command (the median is shown)")
    parser.add_argument("--keep", action="store_true", help="time the dataset --folder holds (no new one)")
    options = parser.parse_args()
    folder: Path = options.folder
    dataset = folder / "dataset"
    env = child_env(folder)
    if not (options.keep and dataset.is_dir()):
        build(folder, dataset, options.commits, env)
    head = f"{options.commits - 1:040x}"
    slower = template_csv(folder, "slower", 1.2)
    show = ["history", "show", str(dataset), "--kernel", "^kernel_017\\("]
    steps = [
        ("add of one run", ["history", "add", str(dataset), str(slower), "--commit", "next{i}"], 1.0),
        ("show of one kernel", [*show, "--gpu", GPUS[2], "-F", "json"], 0.5),
        ("check against 20 commits", ["history", "check", str(dataset), "--head", head, "-F", "json"], 2.0),
    ]
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    for label, args, target in steps:
        timed([a.format(i=f"{time.time_ns()}-warm") for a in args], env)  # bytecode compiled, files cached
        runs = [
            timed([a.format(i=f"{time.time_ns()}-{i}") for a in args], env) for i in range(options.repeat)
        ]
        wall, cpu = (float(np.median([r[k] for r in runs])) for k in (0, 1))
        code = runs[-1][2]
        print(
            f"{label:26s} wall {wall:5.2f} s  CPU {cpu:5.2f} s  "
            f"(median of {options.repeat}; target < {target:g} s; exit {code})"
        )
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {folder} can be removed")


def build(folder: Path, dataset: Path, commits: int, env: dict[str, str]) -> None:
    """A new synthetic history of `commits` commits in `folder`/dataset."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    first = template_csv(folder, "template", 1.0)
    timed(["history", "add", str(dataset), str(first), "--commit", "template", "--time", "2024-12-31"], env)
    rid = run_id("template", [str(first)])
    template = pq.read_table(dataset / "details" / f"gpu={GPUS[0]}" / "commit=template" / f"{rid}.parquet")
    runs_row = pq.read_table(dataset / "runs" / f"gpu={GPUS[0]}" / f"{rid}.parquet")
    started = time.perf_counter()
    synthesize(dataset, commits, template, runs_row)
    rows = commits * len(GPUS) * KERNELS
    print(
        f"synthetic history: {commits} commits × {len(GPUS)} GPUs × {KERNELS} kernels = {rows:,} "
        f"launch rows, {size_mb(dataset):.0f} MB of Parquet, written in {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
