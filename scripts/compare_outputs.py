"""Run `ncu-roof` over every fixture and corpus file and save what it printed, to compare two trees.

    python scripts/compare_outputs.py /tmp/before        # on the untouched code
    python scripts/compare_outputs.py /tmp/after         # after a change
    diff -r /tmp/before /tmp/after                       # any difference is a bug or a fixed defect

Each case is one whole process (`python -m ncu_roof ...`, COLUMNS=120, LC_ALL=C.UTF-8); its stdout,
stderr and exit status go to `<folder>/<case>.out`. The corpus (../shared/ncu-corpus and its
reexport/) is used when present; the paths of the tree and the corpus are written as <ROOT> and
<CORPUS>.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "ncu-corpus"
FORMATS = ("json", "csv", "markdown", "table")


def inputs() -> list[Path]:
    files = sorted((ROOT / "fixtures").glob("*"))
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.glob("*") if p.is_file() and p.name != "MANIFEST.md")
        files += sorted((CORPUS / "reexport").glob("*"))
    return [p for p in files if p.is_file()]


def cases() -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    files = inputs()
    for path in files:
        for fmt in FORMATS:
            out.append((f"{path.name}.{fmt}", ["analyze", str(path), "--format", fmt]))
        out.append((f"{path.name}.launches.json", ["analyze", str(path), "--launches", "--format", "json"]))
    for name in ("raw_truncated.csv", "garbage.csv"):
        out.append((f"{name}.skip", ["analyze", str(ROOT / "fixtures" / name), "--skip-bad-rows"]))
    for name in ("raw_nvtx.csv",):
        for group in ("nvtx", "none"):
            out.append(
                (f"{name}.group-{group}", ["analyze", str(ROOT / "fixtures" / name), "--group-by", group])
            )
    reexport = CORPUS / "reexport"
    pairs = [
        (ROOT / "fixtures" / "raw_base.csv", ROOT / "fixtures" / "raw_auto.csv"),
        (
            reexport / "a10_rep_2023.2.0_105-kernels-llm.ncu2024.1-raw-base.csv",
            reexport / "a10_rep_2023.2.0_105-kernels-llm.ncu2024.1-details.csv",
        ),
        (
            reexport / "h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv",
            reexport / "a100sxm_rep_2025.1_full_silu.ncu2024.1-raw-base.csv",
        ),
        (
            reexport / "rtx3070_rep_2020.3.1_scan.ncu2022.3-raw-auto.csv",
            reexport / "rtx3070_rep_2020.3.1_scan.ncu2024.1-raw-base.csv",
        ),
    ]
    for i, (a, b) in enumerate(pairs):
        if a.is_file() and b.is_file():
            for fmt in ("table", "json", "markdown"):
                out.append((f"diff{i}.{fmt}", ["diff", str(a), str(b), "--format", fmt]))
    return out


def run(folder: Path, name: str, args: list[str]) -> None:
    env = os.environ | {"COLUMNS": "120", "LC_ALL": "C.UTF-8", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "ncu_roof", *args], capture_output=True, env=env, cwd=ROOT, check=False
    )
    text = b"".join((b"rc=%d\n--- stdout\n" % proc.returncode, proc.stdout, b"\n--- stderr\n", proc.stderr))
    for path, label in (
        (os.path.normpath(CORPUS), b"<CORPUS>"),
        (CORPUS.resolve(), b"<CORPUS>"),
        (ROOT, b"<ROOT>"),
    ):
        text = text.replace(str(path).encode(), label)
    (folder / f"{name}.out").write_bytes(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", help="only the cases whose name contains this text")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    todo = [(n, a) for n, a in cases() if not args.only or args.only in n]
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda case: run(args.folder, *case), todo))
    print(f"{len(todo)} cases in {args.folder}")


if __name__ == "__main__":
    main()
