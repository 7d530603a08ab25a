"""Stopping signals: SIGTERM (what `timeout` and a cancelled CI job send) and SIGHUP (a closed
terminal) act as Ctrl-C does, so one path cleans up after each: ncu and the profiled program
stopped and reaped, temporary files and partial reports removed, exit 128 + the signal's number.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []  # the stopping signals caught while `as_interrupts` is in force


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


@contextmanager
def as_interrupts() -> Iterator[None]:
    """Inside, SIGTERM and SIGHUP raise `KeyboardInterrupt` where the program is, as SIGINT does
    (a signal ignored when the process started, `nohup`'s SIGHUP, stays ignored). Main thread
    only, as `signal` requires; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    previous = {
        sig: signal.signal(sig, _interrupt)
        for sig in (signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(sig) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_status() -> int:
    """128 + the number of the stopping signal last caught (SIGINT's 130 when none was)."""
    return 128 + int(_received[-1] if _received else signal.SIGINT)


def interruption() -> str:
    """The `error:` line's words: `interrupted` (Ctrl-C), or the signal that stopped the run."""
    if not _received or _received[-1] == signal.SIGINT:
        return "interrupted"
    return f"stopped by {signal.Signals(_received[-1]).name}"


@contextmanager
def held() -> Iterator[None]:
    """No stopping signal stops what runs inside (the killing of ncu, the renames of outputs):
    they are ignored meanwhile. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOPPING}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
