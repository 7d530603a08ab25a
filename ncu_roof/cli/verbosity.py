"""How much the CLI says on stderr: `--quiet` (only what the reader must know) or `--verbose`."""

from __future__ import annotations

from enum import Enum


class Level(Enum):
    QUIET = "quiet"  # warnings and errors only
    NORMAL = "normal"  # plus progress (`read …`, `wrote …`)
    VERBOSE = "verbose"  # plus details (the full ncu command that collects missing counters)


_current = [Level.NORMAL]


def level() -> Level:
    return _current[0]


def set_level(value: Level) -> None:
    _current[0] = value
