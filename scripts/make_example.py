"""Write ncu_roof/data/example.csv from two real corpus runs (re-exported raw pages, base units).

The example keeps only the columns ncu-roof reads, from:
  * block 1: H100 PCIe, ncu 2025.1 `--set full`, three `silu_kernel_vector` launches
    (corpus: h100pcie_rep_2025.1_full_silu, re-exported by ncu 2024.1 `--page raw --print-units base`)
  * block 2: A10G, ncu 2023.1.1 `--set roofline`, four SGEMM tiling kernels
    (corpus: a10g_rep_2023.1.1_roofline-set, same re-export)
Every number is the measured value from those reports; nothing is edited.

usage: python scripts/make_example.py ../shared/ncu-corpus/reexport ncu_roof/data/example.csv
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

from ncu_roof.base.metrics import is_wanted

RUNS = (
    "h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv",
    "a10g_rep_2023.1.1_roofline-set.ncu2024.1-raw-base.csv",
)
IDENTITY = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)


def subset(path: Path) -> str:
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))
    header = rows[0]
    keep = [i for i, name in enumerate(header) if name in IDENTITY or is_wanted(name)]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in rows:
        writer.writerow([row[i] for i in keep])
    return out.getvalue()


def main(corpus: str, target: str) -> None:
    text = "".join(
        f"==PROF== example block {n}: {run}\n" + subset(Path(corpus) / run) for n, run in enumerate(RUNS, 1)
    )
    Path(target).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
