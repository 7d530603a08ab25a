"""The cores of this process: OpenBLAS held to one thread (`one_blas_thread`), and the
environment the programs it runs get (`environ_for_programs`)."""

from __future__ import annotations

import os
import sys

BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_SET_HERE: list[str] = []  # the variables `one_blas_thread` set (not the user's)


def one_blas_thread() -> None:
    """OpenBLAS with one thread, for a process of ncu-roof's own (the CLI; before numpy loads,
    unless the user chose). ncu-roof does no BLAS work, and OpenBLAS starts a thread per core whose
    busy waiting takes the cores that pyarrow's threads and the analysis run on: 0.1-0.2 s
    of a 100,000-launch `analyze` on two cores. Programs this process runs (ncu, the profiled
    application) get the user's environment without it (`environ_for_programs`)."""
    if BLAS_THREADS not in os.environ and "numpy" not in sys.modules:
        os.environ[BLAS_THREADS] = "1"
        _SET_HERE.append(BLAS_THREADS)


def environ_for_programs() -> dict[str, str]:
    """This process' environment as a program it runs should see it: the user's own."""
    return {name: value for name, value in os.environ.items() if name not in _SET_HERE}
