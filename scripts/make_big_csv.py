"""Make a big `--set full` raw-page CSV for the ingest benchmark (issue 2, item 9).

Repeats the kernel rows of a corpus re-export (header and units row kept once) until the file holds
`--kernels` launches, renumbering the `ID` column so every launch is distinct:

    python scripts/make_big_csv.py /tmp/big.csv            # ~5,000 kernels, ~70 MB
    python scripts/make_big_csv.py /tmp/big.csv --source PATH --kernels 2000
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
DEFAULT_SOURCE = CORPUS / "reexport" / "h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv"


def make(source: Path, target: Path, kernels: int) -> int:
    rows = list(csv.reader(io.StringIO(source.read_text(encoding="utf-8"))))
    header, units, body = rows[0], rows[1], [r for r in rows[2:] if r]
    if not body:
        raise SystemExit(f"{source}: no kernel rows to repeat")
    id_col = header.index("ID")
    with target.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        writer.writerow(units)
        for i in range(kernels):
            row = list(body[i % len(body)])
            row[id_col] = str(i)
            writer.writerow(row)
    return target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("target", type=Path)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--kernels", type=int, default=5000)
    args = parser.parse_args()
    size = make(args.source, args.target, args.kernels)
    print(f"{args.target}: {args.kernels} kernels, {size / 1e6:.1f} MB (rows of {args.source.name})")


if __name__ == "__main__":
    main()
