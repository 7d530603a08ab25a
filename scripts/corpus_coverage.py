"""How much of the corpus the roofline decides: launches, launches whose file holds their duration,
work (FLOP or ops) and the bytes of at least one tier, and the verdict basis of each.

Run as a new user would: default options, `--gpu` only where the file names no GPU (its product
from the corpus MANIFEST, `GPU_OF_UNNAMED`) and ncu-roof cannot infer one from it.

usage: python scripts/corpus_coverage.py [CORPUS] [--by-file]   (CORPUS: ../shared/ncu-corpus)
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.records import Kernel
from ncu_roof.base.vocabulary import TIERS
from ncu_roof.errors import NcuRoofError
from ncu_roof.pipeline import Request, run

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"

# The corpus files whose device the file does not name, and the built-in product the MANIFEST
# gives them (by the start of their name; the RTX 5060 Ti and the console captures of an unnamed
# RTX 30xx have none); used only where ncu-roof infers none from the file.
GPU_OF_UNNAMED = {
    "a100_": "a100-sxm4-40gb",
    "rtx4090_": "rtx4090",
    "rtx5090_": "rtx5090",
    "a10g_": "a10g",
    "gh200_": "gh200",
}


@dataclass
class Tally:
    launches: int = 0
    with_inputs: int = 0  # duration, work and the bytes of a tier
    basis: Counter[str] = field(default_factory=Counter)  # of the launches with inputs
    basis_all: Counter[str] = field(default_factory=Counter)


def _known(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def has_roofline_inputs(kernel: Kernel) -> bool:
    """Duration, work (FLOP or ops above zero: zero FLOPs say nothing of the integer work no
    counter counts) and the bytes of at least one tier."""
    flop, ops = kernel.flop.get("total"), kernel.ops.get("total")
    work = (_known(flop) and (flop or 0) > 0) or (_known(ops) and (ops or 0) > 0)
    traffic = any(_known(kernel.bytes.get(t)) for t in TIERS)
    return _known(kernel.duration_s) and (kernel.duration_s or 0) > 0 and work and traffic


Analyze = Callable[[Path, "str | None"], Analysis]


def _run(path: Path, gpu: str | None) -> Analysis:
    return run([str(path)], Request(gpu=gpu))


def analyze_file(path: Path, analyze: Analyze = _run) -> Analysis | None:
    """The analysis a new user gets: default options, `--gpu` only where no device is named or
    inferred. None when the file is not an ncu output (the corpus' edge cases)."""
    try:
        analysis = analyze(path, None)
    except NcuRoofError:
        return None
    unnamed = any(d.name is None and d.roofs.name is None for d in analysis.devices)
    key = next((k for prefix, k in GPU_OF_UNNAMED.items() if path.name.startswith(prefix)), None)
    if unnamed and key is not None:
        try:
            return analyze(path, key)
        except NcuRoofError:
            return analysis
    return analysis


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.is_file() and p.name != "MANIFEST.md")


def tally(paths: list[Path], by_file: bool = False, analyze: Analyze = _run) -> Tally:
    total = Tally()
    for path in paths:
        analysis = analyze_file(path, analyze)
        if analysis is None:
            continue
        here = Tally()
        for kernel in analysis.kernels:
            basis = kernel.verdict_basis.value
            here.launches += 1
            here.basis_all[basis] += 1
            if has_roofline_inputs(kernel):
                here.with_inputs += 1
                here.basis[basis] += 1
        if by_file:
            print(f"{path.name}: {here.launches} launches, {here.with_inputs} with inputs {dict(here.basis)}")
        total.launches += here.launches
        total.with_inputs += here.with_inputs
        total.basis.update(here.basis)
        total.basis_all.update(here.basis_all)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--by-file", action="store_true", help="one line per file too")
    args = parser.parse_args(argv)
    corpus: Path = args.corpus
    if not corpus.is_dir():
        print(f"error: no corpus at {corpus}", file=sys.stderr)
        return 2
    t = tally(corpus_files(corpus), args.by_file)
    print(f"launches: {t.launches}; by verdict basis: {dict(sorted(t.basis_all.items()))}")
    share = 100.0 * t.basis["roofline"] / t.with_inputs if t.with_inputs else math.nan
    print(
        f"with duration, work and bytes: {t.with_inputs}; by verdict basis: {dict(sorted(t.basis.items()))}"
        f" ({share:.0f} % on the roofline)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
