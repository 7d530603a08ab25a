"""Speed benchmark: every figure of the README's "Speed" section, against its baseline, in one run.

    python scripts/bench.py                   # makes its inputs under /tmp/ncu-roof-bench first
    python scripts/bench.py --repeat 5 --work DIR

Every figure is a whole process (interpreter start and imports included, bytecode cached as in
an installed package), run once untimed and then timed `--repeat` times, ours and its baseline
alternating; the median counts. Peak memory is the process's
maximum resident set (getrusage of the child). Inputs (made by scripts/make_big_csv.py from the
corpus in ../shared/ncu-corpus):

  * 5k:   5,000 launches of an H100 `--set full` raw-page CSV (~72 MB, ~2,100 columns);
  * 100k: 100,000 launches of the 105-kernel A10 LLM raw-page CSV (~200 MB, 294 columns), and a
          copy of it as the head of the diff;
  * the 105-kernel A10 `.ncu-rep` itself.

Baselines: `python -c 'import pandas; pandas.read_csv(F)'` of the same file (the naive read), and
for the report a minimal `ncu_report` loop reading three metrics of every kernel. The
"read + normalize" lines time the readers and the metric recipe alone (what ingest costs, without
the analysis and the rendering), against the same baselines: parts of the figure above them, not
figures of their own (a plain Python process, without the console script's read-ahead), so they
have no target ("part").
"""

from __future__ import annotations

import argparse
import os
import shutil
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
LONG_SOURCE = CORPUS / "reexport" / "a10_rep_2023.2.0_105-kernels-llm.ncu2024.1-raw-base.csv"
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

INGEST = """
import sys
from ncu_roof.ingest import read_input
from ncu_roof.recipe import normalize_columns

table = read_input(sys.argv[1])
print(len(normalize_columns(table.metrics(), ncu_version=table.ncu_version, rows=table.rows)))
"""


@dataclass(frozen=True)
class Run:
    seconds: float  # wall clock: what the figures are about
    cpu_seconds: float  # user + system: steadier than the wall clock on a busy machine
    peak_rss_bytes: int


def run_once(cmd: list[str]) -> Run:
    """One whole process: wall time and peak resident memory (from its own rusage)."""
    # as an installed package runs: bytecode cached (an environment that forbids writing it would
    # compile the whole package in every timed process)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr.decode()[-2000:]}")
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)  # maxrss: KiB


def medians(cmds: list[list[str]], repeat: int) -> list[Run]:
    """Each command `repeat` times, interleaved (so a busy moment hits all alike); medians."""
    runs: list[list[Run]] = [[] for _ in cmds]
    for cmd in cmds:  # once untimed: bytecode written, the input in the page cache, for all alike
        run_once(cmd)
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            runs[i].append(run_once(cmd))
    return [
        Run(
            statistics.median(r.seconds for r in rs),
            statistics.median(r.cpu_seconds for r in rs),
            max(r.peak_rss_bytes for r in rs),
        )
        for rs in runs
    ]


def make_inputs(work: Path) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_big_csv import make

    work.mkdir(parents=True, exist_ok=True)
    files = {"5k": work / "big5k.csv", "100k": work / "big100k.csv", "100k-head": work / "big100k-head.csv"}
    if not files["5k"].exists():
        make(WIDE_SOURCE, files["5k"], 5000)
    if not files["100k"].exists():
        make(LONG_SOURCE, files["100k"], 100_000)
    if not files["100k-head"].exists():
        shutil.copyfile(files["100k"], files["100k-head"])
    loop = work / "ncu_report_loop.py"
    loop.write_text(NCU_REPORT_LOOP, encoding="utf-8")
    files["loop"] = loop
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ncu-roof-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run only the figures whose label contains this text")
    args = parser.parse_args()
    if not REPORT.is_file():
        raise SystemExit(f"needs the corpus at {CORPUS}")
    files = make_inputs(args.work)
    py = sys.executable
    ours = [py, "-m", "ncu_roof"]
    to_null = ["--format", "json", "-o", os.devnull]

    def naive(path: Path) -> list[str]:
        return [py, "-W", "ignore", "-c", f"import pandas; pandas.read_csv({str(path)!r})"]

    def ingest(path: Path) -> list[str]:
        """The readers and the recipe alone (no analysis, no rendering): what ingest costs."""
        return [py, "-c", INGEST, str(path)]

    html = args.work / "report-100k.html"
    # label, ours, baseline, target ratio (None: a part of the figure above it, shown for where the
    # time goes), input whose size bounds the memory
    cases: list[tuple[str, list[str], list[str], float | None, Path | None]] = [
        (
            "5k-launch CSV → JSON vs naive read",
            [*ours, "analyze", str(files["5k"]), *to_null],
            naive(files["5k"]),
            0.5,
            files["5k"],
        ),
        (
            "5k-launch CSV read + normalize vs naive read",
            ingest(files["5k"]),
            naive(files["5k"]),
            None,
            files["5k"],
        ),
        (
            "105-kernel .ncu-rep → JSON vs ncu_report loop",
            [*ours, "analyze", str(REPORT), *to_null],
            [py, str(files["loop"]), str(REPORT)],
            2.0,
            None,
        ),
        (
            "100k-launch CSV → JSON vs naive read",
            [*ours, "analyze", str(files["100k"]), *to_null],
            naive(files["100k"]),
            0.5,
            files["100k"],
        ),
        (
            "105-kernel .ncu-rep read + normalize vs ncu_report loop",
            ingest(REPORT),
            [py, str(files["loop"]), str(REPORT)],
            None,
            None,
        ),
        (
            "100k-launch CSV read + normalize vs naive read",
            ingest(files["100k"]),
            naive(files["100k"]),
            None,
            files["100k"],
        ),
        (
            "100k-launch CSV → roofline PNG vs naive read",
            [*ours, "plot", str(files["100k"]), "-o", str(args.work / "roofline-100k.png")],
            naive(files["100k"]),
            1.0,
            files["100k"],
        ),
        (
            "100k-launch CSV → HTML report vs naive read",
            [*ours, "analyze", str(files["100k"]), "--format", "html", "-o", str(html)],
            naive(files["100k"]),
            1.0,
            files["100k"],
        ),
        (
            "diff of two 100k CSVs → JSON vs naive read of one",
            [*ours, "diff", str(files["100k"]), str(files["100k-head"]), *to_null],
            naive(files["100k"]),
            1.0,
            files["100k"],
        ),
    ]
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
        f"median of {args.repeat}"
    )
    print(
        f"{'figure':<56} {'ours s':>8} {'base s':>8} {'ratio':>6} {'target':>7} {'cpu ratio':>9}"
        "  peak MB / input MB"
    )
    met = True
    for label, cmd, base, target, sized in cases:
        if args.only and args.only not in label:
            continue
        mine, baseline = medians([cmd, base], args.repeat)
        ratio = mine.seconds / baseline.seconds
        memory = ""
        if sized is not None:
            size = sized.stat().st_size
            mem_ratio = mine.peak_rss_bytes / size
            memory = f"{mine.peak_rss_bytes / 1e6:7.0f} / {size / 1e6:.0f} = {mem_ratio:.2f}x (≤ 3)"
            met &= mem_ratio <= 3.0
        ok = target is None or ratio <= target
        met &= ok
        cpu = mine.cpu_seconds / baseline.cpu_seconds
        shown = "part" if target is None else f"≤ {target}"
        print(
            f"{label:<56} {mine.seconds:8.2f} {baseline.seconds:8.2f} {ratio:6.2f} {shown:>7}"
            f" {cpu:9.2f}{'' if ok else ' MISS'}  {memory}"
        )
    if html.exists():
        size_mb = html.stat().st_size / 1e6
        met &= size_mb <= 20.0
        verdict = "" if size_mb <= 20 else " MISS"
        print(f"{'HTML report of 100k launches: size':<50} {size_mb:8.2f} MB (≤ 20 MB){verdict}")
    if args.only and args.only not in "--help gpus predict commands":
        print("every figure run met" if met else "some figures missed (MISS)")
        return
    bare = medians([[py, "-c", "pass"]], args.repeat)[0]
    for label, cmd, limit in (
        ("--help", [*ours, "--help"], 0.3),
        ("gpus", [*ours, "gpus"], 0.4),
        ("predict", [*ours, "predict", "--flops", "1e9", "--bytes", "1e8", "--gpu", "a100-sxm4"], 0.4),
    ):
        mine = medians([cmd], args.repeat)[0]
        ok = mine.seconds <= limit
        met &= ok
        print(
            f"{label:<56} {mine.seconds:8.2f} {'':>8} {'':>6} {'≤ ' + str(limit) + ' s':>7}"
            f"{'' if ok else ' MISS'}  cpu {mine.cpu_seconds:.2f} s"
            f" (bare interpreter: {bare.seconds:.2f} s, cpu {bare.cpu_seconds:.2f} s)"
        )
    print("every figure met" if met else "some figures missed (MISS)")


if __name__ == "__main__":
    main()
