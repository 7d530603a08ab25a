"""Make a big raw-page CSV shaped like a real trace, for the benchmark (scripts/bench.py).

Starts from a corpus re-export (header and units row kept once) and writes `--kernels` launches:

  * `--names` kernel names (the source's names, each with a variant suffix), drawn at Zipf-like
    frequencies (name k with weight 1 / (k + 1));
  * `--shapes` launch shapes (block and grid sizes, the `launch__*` shape counters to match),
    two of them per kernel name;
  * every counter (each numeric column but the IDs, the device attributes, the launch
    configuration, the peaks and the profiler's own figures) times a factor drawn uniformly in
    [0.8, 1.2], percentages capped at 100;

deterministic for one `--seed`. All fields quoted, as ncu writes them.

    python scripts/make_big_csv.py /tmp/big.csv --kernels 100000 --names 300 --shapes 7
"""

from __future__ import annotations

import argparse
import csv
import io
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
DEFAULT_SOURCE = CORPUS / "reexport" / "a10g_rep_2023.1.1_roofline-set.ncu2024.1-raw-base.csv"
FIXED = {"ID", "Process ID", "Context", "Stream", "Device", "CC", "Block Size", "Grid Size"}
FIXED_PREFIXES = ("device__attribute_", "launch__", "profiler__", "nvlink__", "numa__")
# (block, grid) shapes: the first ones the common ones
SHAPES = [
    ((256, 1, 1), (1024, 1, 1)),
    ((128, 1, 1), (4096, 1, 1)),
    ((512, 1, 1), (16, 16, 1)),
    ((256, 1, 1), (8, 8, 1)),
    ((1024, 1, 1), (108, 1, 1)),
    ((64, 4, 1), (32, 32, 1)),
    ((32, 8, 1), (256, 2, 4)),
    ((128, 2, 1), (64, 64, 2)),
]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _two_decimals(values: np.ndarray) -> pa.Array:
    """As ncu prints a fraction: fixed point, two decimals (`8.01`), never an exponent."""
    hundredths = pc.utf8_lpad(pa.array(np.round(values * 100).astype(np.int64)).cast(pa.string()), 3, "0")
    return pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(hundredths, 0, -2), pc.utf8_slice_codeunits(hundredths, -2, 2**31), "."
    )


def _varied(header: list[str], units: list[str], body: list[list[str]]) -> list[int]:
    """The columns of counters: numeric in every source row, not an ID, attribute or peak."""
    return [
        j
        for j, name in enumerate(header)
        if name not in FIXED
        and not name.startswith(FIXED_PREFIXES)
        and not name.endswith(".peak_sustained")
        and all(_number(r[j]) is not None for r in body)
    ]


def make(source: Path, target: Path, kernels: int, names: int = 300, shapes: int = 7, seed: int = 29) -> int:
    rows = list(csv.reader(io.StringIO(source.read_text(encoding="utf-8"))))
    header, units, body = rows[0], rows[1], [r for r in rows[2:] if r]
    if not body:
        raise SystemExit(f"{source}: no kernel rows to repeat")
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, names + 1)
    name_of = rng.choice(names, size=kernels, p=weights / weights.sum())
    # each name two shapes of the first `shapes`, the first three times as often
    shape_of = (name_of + (rng.random(kernels) < 0.25) * (1 + name_of % 3)) % min(shapes, len(SHAPES))
    source_of = name_of % len(body)
    columns: dict[str, pa.Array] = {}
    varied = set(_varied(header, units, body))
    col = {name: j for j, name in enumerate(header)}
    for j, name in enumerate(header):
        base = [r[j] for r in body]
        if j in varied:
            values = np.array([float(v) for v in base])[source_of] * rng.uniform(0.8, 1.2, kernels)
            if units[j] == "%":
                values = np.minimum(values, 100.0)
            if any("." in v for v in base):
                columns[name] = _two_decimals(values)
            else:
                columns[name] = pa.array(np.round(values).astype(np.int64))
        else:
            columns[name] = pa.array(np.array(base, dtype=object)[source_of].astype(str))
    columns["ID"] = pa.array(np.arange(kernels).astype(str))
    kernel_names = np.array(
        [
            re.sub(r"^(void \w+|\w+)", rf"\g<1>_v{k}", body[k % len(body)][col["Kernel Name"]], count=1)
            for k in range(names)
        ]
    )
    columns["Kernel Name"] = pa.array(kernel_names[name_of])
    for key, part in (("Block Size", 0), ("Grid Size", 1)):
        texts = np.array([f"({a}, {b}, {c})" for a, b, c in (s[part] for s in SHAPES)])
        columns[key] = pa.array(texts[shape_of])
    dims = np.array([[*b, *g] for b, g in SHAPES])[shape_of]
    for i, key in enumerate(("block_dim_x", "block_dim_y", "block_dim_z", "grid_dim_x", "grid_dim_y")):
        if f"launch__{key}" in columns:
            columns[f"launch__{key}"] = pa.array(dims[:, i].astype(str))
    if "launch__block_size" in columns:
        columns["launch__block_size"] = pa.array((dims[:, 0] * dims[:, 1] * dims[:, 2]).astype(str))
    if "launch__grid_size" in columns:
        columns["launch__grid_size"] = pa.array((dims[:, 3] * dims[:, 4] * dims[:, 5]).astype(str))
    table = pa.table([columns[name] for name in header], names=[f"c{j}" for j in range(len(header))])
    with target.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        writer.writerow(units)
    with target.open("ab") as out:
        pacsv.write_csv(table, out, pacsv.WriteOptions(include_header=False, quoting_style="all_valid"))
    return target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("target", type=Path)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--kernels", type=int, default=100_000)
    parser.add_argument("--names", type=int, default=300)
    parser.add_argument("--shapes", type=int, default=7)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    size = make(args.source, args.target, args.kernels, args.names, args.shapes, args.seed)
    print(f"{args.target}: {args.kernels} launches, {size / 1e6:.1f} MB (rows of {args.source.name})")


if __name__ == "__main__":
    main()
