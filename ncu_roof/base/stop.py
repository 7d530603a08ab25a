"""Stopping signals: SIGTERM (what `timeout` and a cancelled CI job send) and SIGHUP (a closed
terminal) act as Ctrl-C does, so one path cleans up after each: ncu and the profiled program
stopped and reaped, temporary files and partial reports removed, exit 128 + the signal's number."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []  # the stopping signals caught while `as_interrupts` is in force


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


@contextmanager
def _handled(signals: list[signal.Signals], handler: signal.Handlers | Callable[..., None]) -> Iterator[None]:
    """`handler` for `signals` inside, the previous handlers again after. Main thread only, as
    `signal` requires; elsewhere nothing changes."""
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, handler) for sig in signals} if main else {}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def as_interrupts() -> AbstractContextManager[None]:
    """Inside, SIGTERM and SIGHUP raise `KeyboardInterrupt` where the program is, as SIGINT does
    (a signal ignored when the process started, `nohup`'s SIGHUP, stays ignored)."""
    _received.clear()
    caught = [sig for sig in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) is not signal.SIG_IGN]
    return _handled(caught, _interrupt)


def interruption() -> tuple[str, int]:
    """The `error:` line's words, `interrupted` (Ctrl-C) or the signal that stopped the run, and the
    exit status: 128 + the number of the stopping signal last caught (SIGINT's 130 when none was)."""
    number = _received[-1] if _received else signal.SIGINT
    words = "interrupted" if number == signal.SIGINT else f"stopped by {signal.Signals(number).name}"
    return words, 128 + int(number)


def held() -> AbstractContextManager[None]:
    """No stopping signal stops what runs inside (the killing of ncu, the renames of outputs)."""
    return _handled(list(STOPPING), signal.SIG_IGN)
