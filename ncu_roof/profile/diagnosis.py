"""Why a profile failed: ONE table of ncu's known failures, each with its message and its fix
(data/known_failures.toml), looked up first by `diagnose` (a run that left no usable report) and
`damaged_report_error` (a report that does not load).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ncu_roof.base.tomlfile import package_table
from ncu_roof.errors import ProfileError
from ncu_roof.profile.argv import ProfileOptions, filter_args
from ncu_roof.profile.progress import NO_KERNELS, RunOutcome

VERBOSE_HINT = "rerun with --ncu-args=--verbose for details, or profile fewer kernels (-k, -c)"


@dataclass(frozen=True)
class KnownFailure:
    """A pattern in ncu's output, what it means for the user, and what to do about it."""

    pattern: re.Pattern[str]
    message: str
    hint: str


def _known_failures() -> tuple[KnownFailure, ...]:
    """The table, from the package's data/known_failures.toml."""
    table = package_table("known_failures")
    anywhere = table["analyze_anywhere"]
    return tuple(
        KnownFailure(
            re.compile(f["pattern"]), f["message"], f["hint"].replace("{analyze_anywhere}", anywhere)
        )
        for f in table["failure"]
    )


KNOWN_FAILURES = _known_failures()

# ncu warnings the no-kernels diagnosis speaks for: not passed through to the user as well
_SPOKEN_FOR = re.compile(NO_KERNELS.pattern + r"|launched by child processes requires")


def spoken_for(warning: str) -> bool:
    """Whether a `==WARNING==` line is one a diagnosis already explains."""
    return _SPOKEN_FOR.search(warning) is not None


def known_failure(outcome: RunOutcome) -> ProfileError | None:
    """The error of the first known failure in ncu's output, if any."""
    found = (k for k in KNOWN_FAILURES if k.pattern.search(outcome.text))
    return next((ProfileError(k.message, hint=k.hint) for k in found), None)


def no_kernels_hint(options: ProfileOptions) -> str:
    """Which filters were used, and the child-process hint when it applies."""
    used = filter_args(options)[2:]
    shown = " ".join(used) if used else "none"
    hint = f"check the filters (used: {shown}) and that the program launches CUDA kernels"
    if options.target_processes != "all":
        hint += "; kernels of child processes need --target-processes all"
    return hint


def diagnose(outcome: RunOutcome, options: ProfileOptions) -> ProfileError | None:
    """The error for a run that produced no usable report (None when it did)."""
    if outcome.profiled:
        return None
    known = known_failure(outcome)
    if known is not None:
        return known
    if outcome.no_kernels:
        app = outcome.app_exit_code
        exited = f" (the program exited with code {app})" if app is not None else ""
        return ProfileError(f"no kernels were profiled{exited}", hint=no_kernels_hint(options))
    last = outcome.last_error_line() or "no report was written"
    return ProfileError(f"ncu failed (exit code {outcome.returncode}): {last}", hint=VERBOSE_HINT)


def damaged_report_error(outcome: RunOutcome, reason: str, kept: str) -> ProfileError:
    """ncu wrote a report that does not load: say why, quoting ncu's last error if it failed.

    `kept` says what became of the user's target (`runs/x.ncu-rep was left as it was`).
    """
    known = known_failure(outcome)
    if known is not None:
        return known
    if outcome.returncode == 0:
        return ProfileError(
            f"ncu exited normally but its report does not load: {reason}",
            hint=f"{kept}; check the free disk space, then {VERBOSE_HINT}",
        )
    last = outcome.last_error_line()
    if last is None:
        return ProfileError(
            f"ncu failed (exit code {outcome.returncode}) and its report does not load: {reason}",
            hint=f"{kept}; {VERBOSE_HINT}",
        )
    return ProfileError(
        f"ncu failed (exit code {outcome.returncode}): {last}",
        hint=f"{kept}; its new report does not load ({reason}); {VERBOSE_HINT}",
    )
