"""The package's size as issue 29 counts it: lines of ncu_roof/**/*.py, history modules aside.

python scripts/package_lines.py            # total, then the ten largest modules
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ncu_roof"
TARGET_LINES = 15_000


def module_lines() -> dict[str, int]:
    """Lines per module (`wc -l`: newline characters), every module whose path does not say history."""
    return {
        str(path.relative_to(PACKAGE.parent)): path.read_bytes().count(b"\n")
        for path in sorted(PACKAGE.rglob("*.py"))
        if "history" not in str(path.relative_to(PACKAGE))
    }


def main() -> None:
    lines = module_lines()
    total = sum(lines.values())
    print(f"{total:,} lines in {len(lines)} modules (target {TARGET_LINES:,}; history modules aside)")
    for name, count in sorted(lines.items(), key=lambda item: -item[1])[:10]:
        print(f"  {count:5d}  {name}")


if __name__ == "__main__":
    main()
