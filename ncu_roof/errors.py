"""The one error base of ncu-roof. The CLI catches it once and prints `error:` / `hint:`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum


class ExitCode(IntEnum):
    """Documented process exit codes (README, "Exit codes")."""

    OK = 0
    FAILED = 1  # the analysis failed or a gate (regression, expectation) tripped
    USAGE = 2  # bad command line
    BAD_INPUT = 3  # unreadable, empty, garbage or truncated input; a capture that measured nothing
    MISSING_TOOL = 4  # ncu, ncu_report or another optional tool is not installed
    PROFILE_FAILED = 5  # ncu ran but could not profile (permissions, no GPU, no kernels)


class NcuRoofError(Exception):
    """Base of every error a user can cause; carries a one-line message, a hint and an exit code."""

    exit_code: ExitCode = ExitCode.FAILED

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled as `__new__(cls, message)` (setting `args`) and every attribute, never through a
        subclass's `__init__`: errors raised in a worker process reach the CLI's one handler intact."""
        return (type(self).__new__, (type(self), self.message), dict(self.__dict__))


@contextmanager
def naming_file(path: str, copy: str | None = None) -> Iterator[None]:
    """An error raised inside says which file it is about (`path: message`), or, read through a
    temporary `copy` of it, names it as the user did (`path` where it names `copy`)."""
    try:
        yield
    except NcuRoofError as err:
        err.message = err.message.replace(copy, path) if copy else f"{path}: {err.message}"
        err.args = (err.message,)
        raise


class UsageError(NcuRoofError):
    exit_code = ExitCode.USAGE


class BadInputError(NcuRoofError):
    exit_code = ExitCode.BAD_INPUT


class MissingToolError(NcuRoofError):
    exit_code = ExitCode.MISSING_TOOL


class ProfileError(NcuRoofError):
    exit_code = ExitCode.PROFILE_FAILED


class OutputError(NcuRoofError):
    """An output file could not be written (the analysis itself may have worked)."""


class GateError(NcuRoofError):
    """A check the user asked for did not pass (regression, contradicted expectation)."""


class NcuRoofWarning(UserWarning):
    """A warning or note the CLI prints on stderr (`warning: …`, `note: …`), issued by the Python
    API with `warnings.warn` (docs/api.md); its text is the CLI's line."""
