"""Writing output: atomically to a file (temp file + rename), or to stdout."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ncu_roof.errors import BadInputError


def write_output(data: str | bytes, path: str | None) -> None:
    """Write to `path` atomically (never a half-written file), or to stdout when path is None/-."""
    if path is None or path == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data)
        sys.stdout.flush()
        return
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if target.exists() and not target.is_file() and not target.is_dir():
        # a device or pipe (/dev/null, /dev/stdout, a FIFO): write through, never replace it
        with target.open("wb") as handle:
            handle.write(payload)
        return
    if target.is_dir():
        raise BadInputError(f"{path}: is a directory", hint="name a file to write")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise BadInputError(f"{path}: directory {directory} does not exist", hint="create it first")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def append_summary(markdown: str) -> bool:
    """Append to $GITHUB_STEP_SUMMARY when it is set; returns whether it was."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(markdown.rstrip("\n") + "\n")
    return True
