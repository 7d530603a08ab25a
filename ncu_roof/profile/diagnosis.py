"""Why a profile failed: ONE table of ncu's known failures, each with its message and its fix.

`diagnose` speaks for a run that left no usable report, `damaged_report_error` for one whose report
does not load; both look up `KNOWN_FAILURES` first, through `known_failure`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ncu_roof.errors import ProfileError
from ncu_roof.profile.argv import ProfileOptions, filter_args
from ncu_roof.profile.progress import NO_KERNELS, RunOutcome

ANALYZE_ANYWHERE = "profile where you can, analyze anywhere: `ncu-roof analyze REPORT.ncu-rep` needs no GPU"
VERBOSE_HINT = "rerun with --ncu-args=--verbose for details, or profile fewer kernels (-k, -c)"


@dataclass(frozen=True)
class KnownFailure:
    """A pattern in ncu's output, what it means for the user, and what to do about it."""

    pattern: re.Pattern[str]
    message: str
    hint: str


KNOWN_FAILURES = (
    KnownFailure(
        re.compile(r"ERR_NVGPUCTRPERM"),
        "no permission to read the GPU performance counters (ERR_NVGPUCTRPERM)",
        "run as root, or have an admin set `options nvidia NVreg_RestrictProfilingToAdminUsers=0` "
        "and reload the driver; in a container add `--cap-add SYS_ADMIN`; or " + ANALYZE_ANYWHERE,
    ),
    KnownFailure(
        re.compile(r"failed to connect to the CUDA driver|LibraryNotLoaded", re.IGNORECASE),
        "ncu could not reach a CUDA driver: no NVIDIA GPU or driver on this machine",
        "run on a machine with an NVIDIA GPU and driver (check `nvidia-smi`; a stub libcuda.so on "
        "LD_LIBRARY_PATH also causes this); " + ANALYZE_ANYWHERE,
    ),
    KnownFailure(
        re.compile(r"unsupported (gpu|chip|device)|(gpu|chip|device) is not supported", re.IGNORECASE),
        "this ncu does not support the GPU",
        "install a newer Nsight Compute (new GPUs need a recent release); pass it with --ncu PATH",
    ),
    KnownFailure(
        re.compile(r"driver resource was unavailable"),
        "another tool holds the GPU's profiling counters",
        "stop it first (DCGM: `dcgmi profile --pause`; or another ncu/CUPTI client), then retry",
    ),
    KnownFailure(
        re.compile(r"Cannot lock GPU clock frequencies on MIG"),
        "ncu cannot lock clocks on a MIG instance",
        "add `--clock-control none` (lock clocks with `nvidia-smi --lock-gpu-clocks` if you can)",
    ),
    KnownFailure(
        re.compile(r"does not exist or is not an executable"),
        "ncu could not start the program",
        "give the program's path (`./app`), and make sure it is executable",
    ),
)

# ncu warnings the no-kernels diagnosis speaks for: not passed through to the user as well
_SPOKEN_FOR = re.compile(NO_KERNELS.pattern + r"|launched by child processes requires")


def spoken_for(warning: str) -> bool:
    """Whether a `==WARNING==` line is one a diagnosis already explains."""
    return _SPOKEN_FOR.search(warning) is not None


def known_failure(outcome: RunOutcome) -> ProfileError | None:
    """The error of the first known failure in ncu's output, if any."""
    text = outcome.text
    for known in KNOWN_FAILURES:
        if known.pattern.search(text):
            return ProfileError(known.message, hint=known.hint)
    return None


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
