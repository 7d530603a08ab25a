"""Writing output: atomically to a file (temp file + rename), or to stdout."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from ncu_roof.errors import OutputError

WRITE_HINT = "check that the directory exists and that you may write there"


def check_writable(path: str | None) -> None:
    """Fail before any work when `path` could not be written (None and `-` mean stdout)."""
    if path is None or path == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{path}: is a directory", hint="name a file to write")
    if target.exists() and not target.is_file():
        return  # a device or pipe: written through
    directory = target.parent
    if not directory.is_dir():
        raise OutputError(f"cannot write {path}: directory {directory} does not exist", hint=WRITE_HINT)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {path}: directory {directory} is not writable", hint=WRITE_HINT)


def write_output(data: str | bytes, path: str | None) -> None:
    """Write to `path` atomically (never a half-written file), or to stdout when path is None/-."""
    if path is None or path == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data)
        sys.stdout.flush()
        return
    check_writable(path)
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if target.exists() and not target.is_file():
            # a device or pipe (/dev/null, /dev/stdout, a FIFO): write through, never replace it
            with target.open("wb") as handle:
                handle.write(payload)
            return
        _replace_atomically(target, payload)
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}", hint=WRITE_HINT) from None


def _replace_atomically(target: Path, payload: bytes) -> None:
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.chmod(tmp, mode)  # mkstemp makes 0600; a report should be as readable as any new file
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _default_mode() -> int:
    """0666 less the process umask: the mode `open()` would give a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def check_summary() -> None:
    """Fail before any work when $GITHUB_STEP_SUMMARY is set but cannot be appended to."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    target = Path(path)
    writable = os.access(target, os.W_OK) if target.exists() else os.access(target.parent, os.W_OK)
    if not writable or target.is_dir():
        raise OutputError(f"cannot append to $GITHUB_STEP_SUMMARY ({path})", hint=WRITE_HINT)


def append_summary(markdown: str) -> bool:
    """Append to $GITHUB_STEP_SUMMARY when it is set; returns whether it was."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown.rstrip("\n") + "\n")
    except OSError as err:
        raise OutputError(
            f"cannot append to $GITHUB_STEP_SUMMARY ({path}): {err.strerror or err}", hint=WRITE_HINT
        ) from None
    return True
