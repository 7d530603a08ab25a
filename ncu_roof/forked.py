"""Work on a second core: a forked child computes while this process goes on.

The child writes its result as bytes into an anonymous in-memory file (`memfd`) and leaves with `os._exit`
(no `atexit` handlers, no flush of this process' buffers, no second copy of the output). The
caller gets the file back, or None when the child could not run or failed — then it does the
work itself, so a fork is only ever a speed-up, never a new way to fail. Only on Linux, where
`fork` of a numpy process is safe; elsewhere `start` returns None at once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import IO

Write = Callable[[IO[bytes]], object]  # what it returns is not used


class Child:
    """A forked child writing into `file`; `result()` waits for it."""

    def __init__(self, pid: int, file: IO[bytes]) -> None:
        self._pid = pid
        self._file = file

    def result(self) -> IO[bytes] | None:
        """The child's bytes (positioned at the start), or None when it failed."""
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        if os.waitstatus_to_exitcode(status) != 0:
            self._file.close()
            return None
        self._file.seek(0)
        return self._file

    def cancel(self) -> None:
        """Stop the child (the caller was interrupted or failed) and let its file go."""
        if self._pid:
            import signal

            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self._pid = 0
        self._file.close()


def can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(os, "memfd_create")


def start(write: Write) -> Child | None:
    """Run `write(file)` in a forked child; None when no child could be started."""
    if not can_fork():
        return None
    import warnings

    try:  # in memory (tmpfs): a file on disk cost the child a fifth of a second per 80 MB
        file = os.fdopen(os.memfd_create("ncu-roof"), "w+b")
    except OSError:
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        with warnings.catch_warnings():  # 3.12+: "this process is multi-threaded" (pyarrow's pool)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        file.close()
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            write(file)
            file.flush()
            code = 0
        finally:
            os._exit(code)
    return Child(pid, file)
