"""Finding and running the `ncu` command-line tool (shared by `profile` and the `.ncu-rep` fallback)."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ncu_roof.errors import MissingToolError

INSTALL_HINT = (
    "install Nsight Compute (CUDA toolkit, NVIDIA's standalone installer, or Debian's non-free "
    "`nsight-compute` package), or pass --ncu PATH"
)


@dataclass(frozen=True)
class NcuTool:
    path: str
    version: str | None


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path))


def candidate_paths(explicit: str | None = None) -> list[str]:
    """Where ncu may be, in the order it is searched: --ncu, $NCU, PATH, CUDA, standalone installs."""
    found: list[str] = []
    if explicit:
        found.append(explicit)
    if os.environ.get("NCU"):
        found.append(os.environ["NCU"])
    on_path = shutil.which("ncu")
    if on_path:
        found.append(on_path)
    found += sorted(glob.glob("/usr/local/cuda*/bin/ncu"), key=_version_key, reverse=True)
    found += sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), key=_version_key, reverse=True)
    return found


def find_ncu(explicit: str | None = None) -> NcuTool:
    for path in candidate_paths(explicit):
        if Path(path).is_file() and os.access(path, os.X_OK):
            return NcuTool(path=path, version=ncu_version(path))
        if explicit and path == explicit:
            raise MissingToolError(f"--ncu {explicit}: not an executable file", hint=INSTALL_HINT)
    raise MissingToolError("ncu (Nsight Compute CLI) not found", hint=INSTALL_HINT)


def ncu_version(path: str) -> str | None:
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, env=c_locale_env()
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"Version (\S+)", done.stdout) or re.search(r"(\d{4}\.\d+\.\d+\S*)", done.stdout)
    return match.group(1) if match else None


def c_locale_env() -> dict[str, str]:
    """The environment ncu runs under: numbers in C locale, never `1,234` or `1.234,5`."""
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    return env
