"""How `analyze`'s cost grows with the width of a raw page's header (issue 27: 40,000 tensor-variant
columns took 48 s, 20,000 10.5 s: quadratic). Each page is fixtures/raw_base.csv with N extra
`sm__ops_path_tensor_src_fp16_dst_fp32_v<i>.sum` columns; each run is `ncu-roof analyze PAGE -o
JSON` in a fresh process, its CPU seconds (user + system, which a loaded machine does not inflate)
and wall seconds printed. Linear means each doubling of N at most doubles the CPU seconds.

    python scripts/wide_header.py --columns 10000 20000 40000
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_page(path: Path, columns: int) -> None:
    header, units, *rows = (ROOT / "fixtures" / "raw_base.csv").read_text(encoding="utf-8").splitlines()
    names = ",".join(f'"sm__ops_path_tensor_src_fp16_dst_fp32_v{i}.sum"' for i in range(columns))
    lines = [f"{header},{names}", units + ',""' * columns]
    lines += [row + ',"1"' * columns for row in rows if row]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def measure(page: Path, output: Path) -> tuple[float, float]:
    """CPU and wall seconds of one `ncu-roof analyze` of `page`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ncu_roof", "analyze", str(page), "-q", "-o", str(output)], check=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--columns", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ncu-roof-wide"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    for columns in args.columns:
        page = args.work / f"wide{columns}.csv"
        write_page(page, columns)
        cpu, wall = measure(page, args.work / "out.json")
        print(f"{columns:>7} tensor-variant columns: {cpu:6.2f} s CPU, {wall:6.2f} s wall")


if __name__ == "__main__":
    main()
