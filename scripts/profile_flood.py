"""The memory `profile` holds while ncu floods its output (issue 27: 200 MB of progress output
cost 998 MB). `run_ncu` runs a stand-in that prints MB megabytes of `==PROF== Profiling` lines,
`==WARNING==` lines and program output (half of it one line without an end); the peak resident
memory of this process is printed before and after, and the tool lines and launches kept.

    python scripts/profile_flood.py --megabytes 200
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

from ncu_roof.profile.progress import KernelProgress
from ncu_roof.profile.run import run_ncu

FLOOD = """
import sys
out = sys.stdout.buffer
mb = int(sys.argv[1])
line = b'==PROF== Profiling "k" - %d: 0%%....50%%....100%% - 1 pass\\n'
for i in range(mb * 1024 * 1024 // 2 // 60):
    out.write(line % i)
out.write(b"==WARNING== flood\\n" * 1000)
out.write(b"." * (mb * 1024 * 1024 // 2))
"""


class Null:
    """A sink that shows nothing (the flood is not printed)."""

    def kernel(self, progress: KernelProgress) -> None:
        pass

    def passthrough(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=200)
    args = parser.parse_args()
    before = peak_mb()
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.ncu-rep"
        outcome = run_ncu([sys.executable, "-c", FLOOD, str(args.megabytes)], report, Null(), None)
    print(
        f"{args.megabytes} MB of ncu output: peak resident memory {before:.0f} MB before, "
        f"{peak_mb():.0f} MB after"
    )
    print(f"kept: {len(outcome.tool_lines)} tool lines, {len(outcome.kernels)} launches' progress")


if __name__ == "__main__":
    main()
