"""Finding and running the `ncu` command-line tool (shared by `profile` and the `.ncu-rep` fallback),
and the environment of the programs this process runs (`c_locale_env`: without the OpenBLAS
setting `one_blas_thread` made for this process)."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ncu_roof.errors import BadInputError, MissingToolError

INSTALL_HINT = (
    "install Nsight Compute (CUDA toolkit, NVIDIA's standalone installer, or Debian's non-free "
    "`nsight-compute` package), or pass --ncu PATH"
)
# The start of ncu's progress line, through the launch's result ID where there is one (`- 7`; not
# in old releases): `==PROF== Profiling "k" - 7: 0%....50%....100% - 9 passes`.
PROFILING = r'^==PROF== Profiling "(?P<name>.*)"(?: - (?P<id>\d+))?'
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_SET_HERE: list[str] = []  # the variables `one_blas_thread` set (not the user's)


@dataclass(frozen=True)
class NcuTool:
    """An ncu executable and the version it reports (None when it did not say)."""

    path: str
    version: str | None


def version_tuple(version: str | None) -> tuple[int, ...]:
    """`2024.1.1.0` (or a path holding it) → (2024, 1, 1, 0); an unknown version reads as the newest."""
    return tuple(int(n) for n in re.findall(r"\d+", version)[:4]) if version else (9999,)


def candidate_paths(explicit: str | None = None) -> list[str]:
    """Where ncu may be, in the order it is searched: --ncu, $NCU, PATH, CUDA, standalone installs."""
    found = [path for path in (explicit, os.environ.get("NCU"), shutil.which("ncu")) if path]
    found += sorted(glob.glob("/usr/local/cuda*/bin/ncu"), key=version_tuple, reverse=True)
    found += sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), key=version_tuple, reverse=True)
    return found


def find_ncu(explicit: str | None = None) -> NcuTool:
    """The first executable of `candidate_paths`; an explicit `--ncu` that is not one is refused."""
    for path in candidate_paths(explicit):
        if Path(path).is_file() and os.access(path, os.X_OK):
            return NcuTool(path=path, version=ncu_version(path))
        if explicit and path == explicit:
            raise MissingToolError(f"--ncu {explicit}: not an executable file", hint=INSTALL_HINT)
    raise MissingToolError("ncu (Nsight Compute CLI) not found", hint=INSTALL_HINT)


def ncu_version(path: str) -> str | None:
    """`ncu --version`'s version (`2025.1.0.0`), or None when it cannot be run or read."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, timeout=60, env=c_locale_env())
    except (OSError, subprocess.TimeoutExpired):
        return None
    said = done.stdout.decode("utf-8", "replace")  # bytes that are no UTF-8 are no version either
    match = re.search(r"Version (\S+)", said) or re.search(r"(\d{4}\.\d+\.\d+\S*)", said)
    return match.group(1) if match else None


def one_blas_thread() -> None:
    """OpenBLAS with one thread, for a process of ncu-roof's own (the CLI; before numpy loads, unless
    the user chose). ncu-roof does no BLAS work, and OpenBLAS starts a thread per core whose busy
    waiting takes the cores pyarrow's threads and the analysis run on: 0.1-0.2 s of a 100,000-launch
    `analyze` on two cores. ncu and the profiled program get the environment without it (`c_locale_env`)."""
    if BLAS_THREADS not in os.environ and "numpy" not in sys.modules:
        os.environ[BLAS_THREADS] = "1"
        _SET_HERE.append(BLAS_THREADS)


def c_locale_env() -> dict[str, str]:
    """The environment ncu (and the program it profiles) runs under: the user's own, without what
    `one_blas_thread` set for this process; numbers in C locale, never `1,234` or `1.234,5`."""
    return {k: v for k, v in os.environ.items() if k not in _SET_HERE} | {"LC_ALL": "C", "LANG": "C"}


IMPORT_TIMEOUT_S = 600.0
IMPORT_HINT = "the report may be damaged or newer than this ncu; try `pip install 'ncu-roof[rep]'`"


def import_raw_csv(tool: NcuTool, report: str | Path) -> bytes:
    """A report's raw page as CSV bytes (every metric, base SI units), read by `tool` in the C locale with a
    private, empty HOME (no user settings read, nothing written beside them). A failing or hanging ncu raises
    `BadInputError` (`REPORT: `ncu --import` failed: <its last line>`); callers may re-raise it."""
    argv = [tool.path, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"]
    with tempfile.TemporaryDirectory(prefix="ncu-roof-home-") as home:
        env = c_locale_env() | {"HOME": home}
        try:
            done = subprocess.run(argv, capture_output=True, env=env, timeout=IMPORT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BadInputError(
                f"{report}: `ncu --import` did not finish in {IMPORT_TIMEOUT_S:g} s", hint=IMPORT_HINT
            ) from None
        except OSError as err:
            raise MissingToolError(
                f"{tool.path}: cannot run ncu ({err.strerror or err})", hint=INSTALL_HINT
            ) from None
    if done.returncode != 0:
        lines = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
        last = lines[-1].strip() if lines else f"exit code {done.returncode}"
        raise BadInputError(f"{report}: `ncu --import` failed: {last}", hint=IMPORT_HINT)
    return done.stdout
