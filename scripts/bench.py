"""Speed benchmark on inputs shaped like real traces, against the targets of issue 29.

    python scripts/bench.py                 # inputs made once under /tmp/ncu-roof-bench (not in git)
    python scripts/bench.py --quick         # one timed run each, no untimed warm-up: a few minutes
    python scripts/bench.py --repeat 5 --only 100k

Inputs (made by scripts/make_big_csv.py from the corpus in ../shared/ncu-corpus, seed 29; the
diff's head with seed 30):

  * 5k:   5,000 launches of the H100 `--set full` raw export (~2,100 columns), 30 kernel names;
  * 100k: 100,000 launches of the A10G `--set roofline` raw export (322 columns), 300 kernel
          names at Zipf-like frequencies, 7 launch shapes, every counter varied by ±20 %;
  * the 105-kernel A10 `.ncu-rep` itself.

Every figure is a whole process (interpreter start and imports included, bytecode cached as in an
installed package), ours and its baselines interleaved, the median of `--repeat` runs. Baselines,
each a process too: "naive" = `pandas.read_csv(F)`; "floor" = `pyarrow.csv.read_csv(F)` (threaded,
the units row skipped): what reading the file costs at the least; for the report, a minimal
`ncu_report` loop reading three metrics of every kernel, and as its floor the same loop after
`import numpy, polars` (the engine every launch table lives in: what any analysis of the report
costs at the least). Wall time is the clock; CPU time is user
+ system of the process and every child it waited for (wait4's rusage), so a figure met by
spending a second core shows as a CPU ratio above its wall ratio. Peak memory is the largest
resident set (the process or a child), against the size of what it reads (a diff: both its
inputs, since the first's analysis is held while the second is read): the inputs are made in processes
of their own, so that this one stays small (a child's ru_maxrss starts at its parent's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "ncu-corpus"
REPORT = CORPUS / "a10_rep_2023.2.0_105-kernels-llm.ncu-rep"
WIDE_SOURCE = CORPUS / "reexport" / "h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv"
LONG_SOURCE = CORPUS / "reexport" / "a10g_rep_2023.1.1_roofline-set.ncu2024.1-raw-base.csv"
NCU_REPORT_LOOP = """
import sys
import ncu_report

METRICS = ("gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
context = ncu_report.load_report(sys.argv[1])
rows = []
for i in range(context.num_ranges()):
    launches = context.range_by_idx(i)
    for j in range(launches.num_actions()):
        action = launches.action_by_idx(j)
        rows.append([m.value() if (m := action.metric_by_name(n)) is not None else None for n in METRICS])
print(len(rows))
"""
FLOOR = (
    "import sys, pyarrow.csv as c; "
    "print(c.read_csv(sys.argv[1], c.ReadOptions(skip_rows_after_names=1, use_threads=True)).num_rows)"
)
# the report's floor: the loop with the engine loaded
ENGINE_LOOP = NCU_REPORT_LOOP.replace("import ncu_report\n", "import ncu_report\nimport numpy, polars\n")
NAIVE = "import sys, pandas; print(len(pandas.read_csv(sys.argv[1])))"
MEMORY_LIMIT = 3.0  # peak resident memory ≤ 3× the input (a diff: its two inputs together)


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float  # user + system, the process and the children it waited for
    peak_rss_bytes: int


def run_once(cmd: list[str]) -> Run:
    """One whole process: wall, CPU (its rusage, children included) and peak resident memory."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall_s = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr.decode()[-2000:]}")
    return Run(wall_s, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)  # maxrss: KiB


def medians(cmds: dict[str, list[str]], repeat: int, warm: bool) -> dict[str, Run]:
    """Each command `repeat` times, interleaved (a busy moment hits all alike); medians."""
    runs: dict[str, list[Run]] = {name: [] for name in cmds}
    if warm:  # once untimed: bytecode written, the input in the page cache, for all alike
        for cmd in cmds.values():
            run_once(cmd)
    for _ in range(repeat):
        for name, cmd in cmds.items():
            runs[name].append(run_once(cmd))
    return {
        name: Run(
            statistics.median(r.wall_s for r in rs),
            statistics.median(r.cpu_s for r in rs),
            max(r.peak_rss_bytes for r in rs),
        )
        for name, rs in runs.items()
    }


def make(source: Path, target: Path, kernels: int, names: int, shapes: int, seed: int) -> None:
    """One input, by scripts/make_big_csv.py in a process of its own: this process stays small, for
    a child's peak resident set (wait4's ru_maxrss) starts at its parent's, which fork and exec keep."""
    options = {"--source": source, "--kernels": kernels, "--names": names, "--shapes": shapes, "--seed": seed}
    script = ROOT / "scripts" / "make_big_csv.py"
    argv = [str(x) for option in options.items() for x in option]
    subprocess.run([sys.executable, str(script), str(target), *argv], check=True)


def make_inputs(work: Path) -> dict[str, Path]:
    work.mkdir(parents=True, exist_ok=True)
    files = {
        "5k": work / "full-5k.csv",
        "100k": work / "trace-100k.csv",
        "100k-head": work / "trace-100k-head.csv",
    }
    if not files["5k"].exists():
        make(WIDE_SOURCE, files["5k"], 5000, names=30, shapes=3, seed=29)
    if not files["100k"].exists():
        make(LONG_SOURCE, files["100k"], 100_000, names=300, shapes=7, seed=29)
    if not files["100k-head"].exists():
        make(LONG_SOURCE, files["100k-head"], 100_000, names=300, shapes=7, seed=30)
    loop = work / "ncu_report_loop.py"
    loop.write_text(NCU_REPORT_LOOP, encoding="utf-8")
    (engine_loop := work / "ncu_report_engine_loop.py").write_text(ENGINE_LOOP, encoding="utf-8")
    files |= {"loop": loop, "engine-loop": engine_loop}
    return files


@dataclass(frozen=True)
class Case:
    label: str
    cmd: list[str]
    base: str  # the key of its baseline among the baseline runs
    target: float  # wall ratio to the baseline
    sized: tuple[Path, ...]  # the inputs it reads, whose sizes together bound its memory


def cases(files: dict[str, Path], work: Path) -> list[Case]:
    ours = [sys.executable, "-m", "ncu_roof"]
    null = ["--format", "json", "-o", os.devnull]
    big = str(files["100k"])
    return [
        Case("5k full CSV → JSON", [*ours, "analyze", str(files["5k"]), *null], "5k", 0.5, (files["5k"],)),
        Case("105-kernel .ncu-rep → JSON", [*ours, "analyze", str(REPORT), *null], "rep", 2.0, ()),
        Case("100k trace → JSON", [*ours, "analyze", big, *null], "100k", 1.0, (files["100k"],)),
        Case(
            "100k trace → table",
            [*ours, "analyze", big, "--format", "table", "-o", os.devnull],
            "100k",
            1.0,
            (files["100k"],),
        ),
        Case(
            "100k trace → PNG",
            [*ours, "plot", big, "-o", str(work / "roofline-100k.png")],
            "100k",
            1.5,
            (files["100k"],),
        ),
        Case(
            "100k trace → HTML",
            [*ours, "analyze", big, "--format", "html", "-o", str(work / "report-100k.html")],
            "100k",
            1.5,
            (files["100k"],),
        ),
        Case(
            "diff of two 100k traces → JSON",
            [*ours, "diff", str(files["100k-head"]), big, *null],
            "100k",
            1.5,
            (files["100k-head"], files["100k"]),
        ),
    ]


def baselines(files: dict[str, Path]) -> dict[str, dict[str, list[str]]]:
    py = sys.executable
    return {
        "5k": {
            "naive": [py, "-W", "ignore", "-c", NAIVE, str(files["5k"])],
            "floor": [py, "-c", FLOOR, str(files["5k"])],
        },
        "100k": {
            "naive": [py, "-W", "ignore", "-c", NAIVE, str(files["100k"])],
            "floor": [py, "-c", FLOOR, str(files["100k"])],
        },
        "rep": {
            "naive": [py, str(files["loop"]), str(REPORT)],
            "floor": [py, str(files["engine-loop"]), str(REPORT)],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ncu-roof-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one timed run each, no warm-up run")
    parser.add_argument("--only", help="run only the figures whose label contains this text")
    args = parser.parse_args()
    if not REPORT.is_file():
        raise SystemExit(f"needs the corpus at {CORPUS}")
    repeat, warm = (1, False) if args.quick else (args.repeat, True)
    files = make_inputs(args.work)
    chosen = [c for c in cases(files, args.work) if not args.only or args.only in c.label]
    commands: dict[str, list[str]] = {c.label: c.cmd for c in chosen}
    for key in {c.base for c in chosen}:
        for kind, cmd in baselines(files)[key].items():
            commands[f"{key}:{kind}"] = cmd
    got = medians(commands, repeat, warm)
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
        f"median of {repeat}; sizes: "
        + ", ".join(f"{k} {files[k].stat().st_size / 1e6:.0f} MB" for k in ("5k", "100k"))
    )
    print(
        f"{'figure':<32} {'wall s':>7} {'cpu s':>6} {'naive s':>7} {'floor s':>7}"
        f" {'wall×':>6} {'cpu×':>5} {'target':>7} {'×floor':>6}  peak MB (×input ≤ 3)"
    )
    met = True
    for case in chosen:
        mine, naive = got[case.label], got[f"{case.base}:naive"]
        floor = got.get(f"{case.base}:floor")
        ratio = mine.wall_s / naive.wall_s
        ok = ratio <= case.target
        memory = f"{mine.peak_rss_bytes / 1e6:6.0f}"
        if case.sized:
            mem_ratio = mine.peak_rss_bytes / sum(p.stat().st_size for p in case.sized)
            of = f" of {len(case.sized)} inputs" if len(case.sized) > 1 else ""
            memory += f" ({mem_ratio:.2f}×{of}{'' if mem_ratio <= MEMORY_LIMIT else ' MISS'})"
            ok &= mem_ratio <= MEMORY_LIMIT
        met &= ok
        print(
            f"{case.label:<32} {mine.wall_s:7.2f} {mine.cpu_s:6.2f} {naive.wall_s:7.2f}"
            f" {floor.wall_s if floor else float('nan'):7.2f} {ratio:6.2f} {mine.cpu_s / naive.cpu_s:5.2f}"
            f" {'≤ ' + str(case.target):>7}{'' if ratio <= case.target else ' MISS'}"
            f" {mine.wall_s / floor.wall_s if floor else float('nan'):6.2f}  {memory}"
        )
    for key in sorted({c.base for c in chosen}):
        for kind in ("naive", "floor"):
            if (run := got.get(f"{key}:{kind}")) is not None:
                print(
                    f"  baseline {key} {kind}: wall {run.wall_s:.2f} s, cpu {run.cpu_s:.2f} s,"
                    f" peak {run.peak_rss_bytes / 1e6:.0f} MB"
                )
    if not args.only or args.only in "--help gpus predict":
        ours = [sys.executable, "-m", "ncu_roof"]
        starts = {
            "--help": ([*ours, "--help"], 0.3),
            "gpus": ([*ours, "gpus"], 0.4),
            "predict": ([*ours, "predict", "--flops", "1e9", "--bytes", "1e8", "--gpu", "a100-sxm4"], 0.4),
        }
        timed = medians({k: v[0] for k, v in starts.items()}, repeat, warm)
        for label, (_, limit) in starts.items():
            run = timed[label]
            met &= run.wall_s <= limit
            print(
                f"{label:<32} {run.wall_s:7.2f} {run.cpu_s:6.2f}  (≤ {limit} s)"
                f"{'' if run.wall_s <= limit else ' MISS'}"
            )
    print("every figure met" if met else "some figures missed (MISS)")


if __name__ == "__main__":
    main()
