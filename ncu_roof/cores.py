"""Work on a second core: a thread, for work that releases the GIL (a file read, pyarrow's
kernels), or a forked child, for Python work (it has a GIL of its own).

A thread's result or error comes back when it is asked for (`on_thread`). A child writes its
result as bytes into an anonymous in-memory file (`memfd`), says through a pipe that it is done,
and leaves with `os._exit` (no `atexit` handlers, no flush of this process' buffers); the caller
gets the file back, or None when the child could not run or failed — then it does the work
itself, so a fork is only ever a speed-up, never a new way to fail. Forks happen only on Linux,
and only while this process runs no other thread (a child would inherit the locks that thread
holds: an import's, say).

The CLI's process runs OpenBLAS with one thread (`one_blas_thread`): the cores are this module's.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Generic, TypeVar

T = TypeVar("T")
Write = Callable[[IO[bytes]], object]  # what it returns is not used


class Thread(Generic[T]):
    """`work()` running on a thread of its own; `result()` waits for it."""

    def __init__(self, work: Callable[[], T], name: str) -> None:
        self._done: list[T] = []
        self._failed: list[BaseException] = []
        self._finished = threading.Event()
        # not a daemon: an interpreter that exits (Ctrl-C) waits for it, never tears down the C
        # libraries (pyarrow) a thread is still running in
        threading.Thread(target=self._run, args=(work,), name=name).start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._done.append(work())
        except BaseException as err:  # raised by `result`, not printed by the thread
            self._failed.append(err)
        finally:
            self._finished.set()

    def result(self) -> T:
        """What `work()` returned; what it raised is raised here. (It waits on an event, not on
        `Thread.join`: a join that Ctrl-C interrupts marks the thread stopped while it still runs
        (CPython 3.11), and the interpreter would then exit under it.)"""
        self._finished.wait()
        if self._failed:
            raise self._failed[0]
        return self._done[0]


BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_SET_HERE: list[str] = []  # the variables `one_blas_thread` set (not the user's)


def one_blas_thread() -> None:
    """OpenBLAS with one thread, for a process of ncu-roof's own (the CLI; before numpy loads,
    unless the user chose). ncu-roof does no BLAS work, and OpenBLAS starts a thread per core whose
    busy waiting takes the cores that pyarrow, the forked children and the analysis run on: 0.1-0.2 s
    of a 100,000-launch `analyze` on two cores. Programs this process runs (ncu, the profiled
    application) get the user's environment without it (`environ_for_programs`)."""
    if BLAS_THREADS not in os.environ and "numpy" not in sys.modules:
        os.environ[BLAS_THREADS] = "1"
        _SET_HERE.append(BLAS_THREADS)


def environ_for_programs() -> dict[str, str]:
    """This process' environment as a program it runs should see it: the user's own."""
    return {name: value for name, value in os.environ.items() if name not in _SET_HERE}


def on_thread(work: Callable[[], T], name: str = "ncu-roof-worker") -> Thread[T]:
    return Thread(work, name)


class Child:
    """A forked child writing into `file`; `result()` waits for it, `close()` reaps it."""

    def __init__(self, pid: int, file: IO[bytes], done: int) -> None:
        self.pid = pid
        self._file = file
        self._done = done  # the pipe the child writes one byte to once `file` holds its result
        self._said = False  # it did
        self._reaped = False

    def result(self) -> IO[bytes] | None:
        """The child's bytes (positioned at the start), or None when it failed. Its word comes
        through a pipe, not its exit: a process that leaves a large memory behind takes ~20 ms
        to end. Asked again: None."""
        if self._done == -1:
            return None
        try:
            self._said = os.read(self._done, 1) == _DONE
        finally:
            os.close(self._done)
            self._done = -1
        if not self._said:
            self.close()
            return None
        self._file.seek(0)
        return self._file

    def close(self) -> None:
        """Let the child and its file go: one that said it is done is reaped once it has ended
        (now or at a later `close`, not waited for), any other is stopped and reaped now."""
        if not self._reaped:
            self._reaped = True
            if self._said:
                _end_later(self.pid)
            else:
                _stop(self.pid)
        if self._done != -1:
            os.close(self._done)
            self._done = -1
        _reap_ended()
        self._file.close()


def _stop(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):  # (SIGCHLD ignored: reaped already)
        pass


_DONE = b"1"
_ENDING: list[int] = []  # children that are done, ending on their own


def _end_later(pid: int) -> None:
    """Reap this child once it has ended: at a later `close`, or when this process exits (by then
    it has: it had only `os._exit` left to do), never leaving a zombie to init."""
    if not _ENDING:
        import atexit

        atexit.unregister(_reap_all)
        atexit.register(_reap_all)
    _ENDING.append(pid)


def _reap_all() -> None:
    for pid in _ENDING:
        with contextlib.suppress(ChildProcessError):  # reaped already (SIGCHLD ignored)
            os.waitpid(pid, 0)
    _ENDING.clear()


def _reap_ended() -> None:
    """Reap the children in `_ENDING` that have ended."""
    for pid in list(_ENDING):
        try:
            ended, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already (SIGCHLD ignored)
            ended = pid
        if ended:
            _ENDING.remove(pid)


def can_fork() -> bool:
    """Linux, and no other thread running in this process."""
    linux = sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(os, "memfd_create")
    return linux and alone()


def alone() -> bool:
    """No other thread runs in this process (a test runner's or a notebook's may)."""
    return threading.active_count() == 1


def start(write: Write) -> Child | None:
    """Run `write(file)` in a forked child; None when no child could be started."""
    if not can_fork():
        return None
    import warnings

    try:  # in memory (tmpfs): a file on disk cost the child a fifth of a second per 80 MB
        file = os.fdopen(os.memfd_create("ncu-roof"), "w+b")
    except OSError:
        return None
    try:
        done, said = os.pipe()
    except OSError:
        file.close()
        return None
    try:  # (the child leaves by `os._exit`: the buffers it inherits are never written twice)
        with warnings.catch_warnings():  # 3.12+: "this process is multi-threaded" (pyarrow's pool)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        file.close()
        os.close(done)
        os.close(said)
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(done)
            write(file)
            file.flush()
            os.write(said, _DONE)
            code = 0
        finally:
            os._exit(code)
    os.close(said)
    return Child(pid, file, done)
