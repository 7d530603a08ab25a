"""How much the CLI says on stderr: `--quiet` (errors only) or `--verbose`."""

from __future__ import annotations

from enum import Enum


class Level(Enum):
    QUIET = "quiet"  # errors only
    NORMAL = "normal"  # plus progress (`read …`, `wrote …`) and warnings (`launches lack counters`)
    VERBOSE = "verbose"  # plus details (the full ncu command that collects missing counters)


_current = [Level.NORMAL]


def level() -> Level:
    return _current[0]


def set_level(value: Level) -> None:
    _current[0] = value
