"""The test suite's time, as issue 29 asks for it (< 60 s): the README's test command, whole.

    python scripts/suite_time.py              # three runs: each run's wall and CPU, then the median
    python scripts/suite_time.py --repeat 5

Each run is `python -m pytest -q -n auto` in a process of its own, from the repository root, with
bytecode caches on (as `.ci/run` runs it). Wall time is the clock around the process; CPU time is
user + system of it and every process it waited for (the pytest-xdist workers, the `ncu-roof`,
fake `ncu` and chromium processes the tests start), so that a figure met by spending more cores
shows. A run that fails or collects nothing is reported and fails the script.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run() -> tuple[float, float, str]:
    """(wall s, CPU s, pytest's last line) of one run of the suite."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "pytest", "-q", "-n", "auto"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    if done.returncode != 0 or not re.search(r"\d+ passed", last):
        sys.exit(f"the suite did not pass (exit {done.returncode}): {last}")
    return wall, cpu, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    walls, cpus = [], []
    for i in range(args.repeat):
        wall, cpu, last = one_run()
        walls.append(wall)
        cpus.append(cpu)
        print(f"run {i + 1}: wall {wall:.1f} s, CPU {cpu:.1f} s  ({last})", flush=True)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"median: wall {wall:.1f} s, CPU {cpu:.1f} s (target: wall < 60 s)")


if __name__ == "__main__":
    main()
