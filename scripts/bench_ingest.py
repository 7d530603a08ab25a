"""Ingest benchmark (issue 2, item 9): ncu-roof against a naive `pandas.read_csv` of the same file.

    python scripts/make_big_csv.py /tmp/big.csv
    python scripts/bench_ingest.py /tmp/big.csv

Times, each repeated `--repeat` times (the best run counts; the median is printed too):
  (a) in this process, `pandas.read_csv(FILE)` — the baseline;
  (b) in this process, `ncu_roof.ingest.read_input(FILE)` + `analyze()`;
  (c) whole processes: `python -m ncu_roof analyze FILE` (table) and `… --format json -o /dev/null`
      against
      `python -c 'import pandas; pandas.read_csv(FILE)'` (interpreter start-up and imports included).
Ratios below 1 mean ncu-roof is faster than the naive read.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def run(cmd: list[str]) -> None:
    env = os.environ | {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr.decode()[-2000:]}")


def line(label: str, times: list[float], base: list[float] | None) -> str:
    best, median = min(times), statistics.median(times)
    ratio = f"  ratio {best / min(base):.2f} (median {median / statistics.median(base):.2f})" if base else ""
    return f"{label:<48} best {best:6.3f} s  median {median:6.3f} s{ratio}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path = str(args.file)

    import pandas as pd

    sys.path.insert(0, str(ROOT))
    from ncu_roof.analysis import analyze
    from ncu_roof.ingest import read_input

    def naive() -> object:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DtypeWarning: the units row makes every column mixed
            return pd.read_csv(path)

    def ours() -> object:
        return analyze([read_input(path)])

    def ingest_only() -> object:
        return read_input(path)

    size_mb = args.file.stat().st_size / 1e6
    kernels = len(read_input(path).frame)
    print(f"{path}: {size_mb:.1f} MB, {kernels} kernels, {args.repeat} runs each")
    base = timed(naive, args.repeat)
    print(line("(a) pandas.read_csv (in process)", base, None))
    print(line("(b1) read_input (in process)", timed(ingest_only, args.repeat), base))
    print(line("(b) read_input + analyze (in process)", timed(ours, args.repeat), base))

    py = sys.executable
    proc_base = timed(lambda: run([py, "-c", f"import pandas; pandas.read_csv({path!r})"]), args.repeat)
    print(line("(c0) process: python -c 'pandas.read_csv'", proc_base, None))
    table = [py, "-m", "ncu_roof", "analyze", path]
    print(line("(c) process: ncu-roof analyze (table)", timed(lambda: run(table), args.repeat), proc_base))
    cli = [py, "-m", "ncu_roof", "analyze", path, "--format", "json", "-o", os.devnull]
    proc = timed(lambda: run(cli), args.repeat)
    print(line("(c) process: ncu-roof analyze --format json", proc, proc_base))


if __name__ == "__main__":
    main()
