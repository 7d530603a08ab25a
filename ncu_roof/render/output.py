"""Writing output: atomically to a file (temp file + rename), or to stdout."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

from ncu_roof.base.stop import held
from ncu_roof.errors import OutputError, UsageError

WRITE_HINT = "check that the directory exists and that you may write there"

# What a renderer gives: text, bytes, or text in pieces made as written (a big JSON never held whole)
Piece = str | bytes | memoryview
Document = str | bytes | Iterable[Piece]


class StdoutClosedError(Exception):
    """stdout's reader went away (`| head`): the CLI stops quietly, as Unix tools do. Not an
    OSError, so that no layer in between mistakes it for a write failure to report."""


def through_links(path: str) -> Path:
    """Where writing `path` lands: a symbolic link's target (the link kept, its file replaced)."""
    return Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)


def refuse_inputs(outputs: Iterable[str | None], inputs: Iterable[str]) -> None:
    """An output that is a file this run read (by any name or link) is refused, before any write."""
    read = [path for path in inputs if path != "-" and os.path.isfile(path)]
    for output in outputs:
        if output is None or output == "-" or not os.path.isfile(output):
            continue
        for path in read:
            if os.path.samefile(output, path):  # both files: both stat
                also = "" if output == path else f" (read as {path})"
                raise UsageError(
                    f"{output} is an input of this run{also}: writing it would replace what was read",
                    hint="name another output file",
                )


def same_target(path: str, other: str | os.PathLike[str]) -> bool:
    """Two output paths that name one file (through links, `..`, a relative path), written yet or not."""
    return os.path.realpath(path) == os.path.realpath(other)


def check_writable(path: str | None) -> None:
    """Fail before any work when `path` could not be written (None and `-` mean stdout)."""
    if path is None or path == "-":
        return
    target = through_links(path)
    try:
        if target.is_dir():
            raise OutputError(f"{target}: is a directory", hint="name a file to write")
        if target.exists() and not target.is_file():
            return  # a device or pipe: written through
        directory = target.parent
        if directory.is_dir() and os.access(directory, os.W_OK | os.X_OK):
            return
    except OSError as err:  # e.g. a name too long for the file system
        raise OutputError(f"cannot write {path}: {err.strerror or err}", hint=WRITE_HINT) from None
    problem = (
        "is not writable" if directory.is_dir() else "is a file" if directory.exists() else "does not exist"
    )
    raise OutputError(f"cannot write {target}: {directory} {problem}", hint=WRITE_HINT)


def joined(pieces: Iterable[Piece]) -> str:
    return "".join(p if isinstance(p, str) else str(p, "utf-8") for p in pieces)


def _write_pieces(handle: IO[bytes], data: Document) -> None:
    for piece in (data,) if isinstance(data, str | bytes) else data:
        handle.write(piece.encode("utf-8") if isinstance(piece, str) else piece)


def write_output(data: Document, path: str | None) -> None:
    """Write to `path` atomically (never a half-written file), or to stdout when path is None/-."""
    write_all([(data, path)])


def _write_stdout(whole: str | bytes | tuple[Piece, ...]) -> None:
    """To stdout; a closed pipe is `StdoutClosedError` (the CLI exits quietly), any other
    failure (a full disk, an I/O error) is one `OutputError`."""
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise OutputError("cannot write to stdout: it is closed", hint="write to a file instead: -o FILE")
    try:
        buffer = getattr(sys.stdout, "buffer", None)  # None: a text stream alone (some notebooks')
        if isinstance(whole, str) or (buffer is None and not isinstance(whole, bytes)):
            sys.stdout.write(whole if isinstance(whole, str) else joined(whole))
        elif buffer is None:  # bytes: a text stream cannot take them
            raise OutputError("cannot write binary data to this stdout: it takes text only", hint="-o FILE")
        else:  # bytes, or pieces: UTF-8 straight to the bytes under the text already written
            sys.stdout.flush()
            _write_pieces(buffer, whole)
        sys.stdout.flush()
    except BrokenPipeError:
        raise StdoutClosedError from None
    except OSError as err:
        raise OutputError(
            f"cannot write to stdout: {err.strerror or err}", hint="check the disk or the pipe stdout goes to"
        ) from None


def write_all(outputs: Sequence[tuple[Document, str | None]]) -> None:
    """Several outputs, all or none: files are staged first, then devices and pipes (/dev/null, a
    FIFO: written through, never replaced) are written, then the staged files are renamed into
    place, and stdout (None or `-`) comes last, rendered whole before any file is written."""
    import tempfile

    stdout = [
        d if isinstance(d, str | bytes) else tuple(d) for d, path in outputs if path is None or path == "-"
    ]
    files = [(data, path, through_links(path)) for data, path in outputs if path is not None and path != "-"]
    for _, path, _ in files:
        check_writable(path)
    files.sort(key=lambda file: file[2].exists() and not file[2].is_file())  # devices and pipes last
    staged: list[tuple[Path, Path]] = []
    current: str | None = None
    try:
        for data, path, target in files:
            current = path
            if target.exists() and not target.is_file():
                handle = target.open("wb")
            else:
                if target.exists():  # staged beside it, with the mode it will have
                    mode = stat.S_IMODE(target.stat().st_mode)
                else:  # 0666 less the process umask: the mode `open()` would give a new file
                    os.umask(umask := os.umask(0))
                    mode = 0o666 & ~umask
                fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
                staged.append((Path(name), target))
                os.chmod(fd, mode)  # mkstemp makes 0600; a report should be as readable as any new file
                handle = os.fdopen(fd, "wb")
            with handle:
                _write_pieces(handle, data)
        with held():  # the renames all happen, not some
            for tmp, target in staged:
                current = str(target)
                os.replace(tmp, target)
    except BaseException as err:  # a failure, or Ctrl-C / SIGTERM: no temporary file stays behind
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if not isinstance(err, OSError):
            raise
        raise OutputError(f"cannot write {current}: {err.strerror or err}", hint=WRITE_HINT) from None
    for whole in stdout:
        _write_stdout(whole)


def check_summary() -> None:
    """Fail before any work when $GITHUB_STEP_SUMMARY is set but cannot be appended to."""
    if not (path := os.environ.get("GITHUB_STEP_SUMMARY")):
        return
    target = Path(path)
    if target.is_dir() or not os.access(target if target.exists() else target.parent, os.W_OK):
        raise OutputError(f"cannot append to $GITHUB_STEP_SUMMARY ({path})", hint=WRITE_HINT)


def append_summary(markdown: str) -> bool:
    if not (path := os.environ.get("GITHUB_STEP_SUMMARY")):
        return False
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown.rstrip("\n") + "\n")
    except OSError as err:
        raise OutputError(
            f"cannot append to $GITHUB_STEP_SUMMARY ({path}): {err.strerror or err}", hint=WRITE_HINT
        ) from None
    return True
