"""`ncu-roof profile`: build the ncu command, run it safely, follow its progress, diagnose failures.

The parts, one module each: `argv` (what to run), `progress` (what ncu's output says),
`diagnosis` (the one table of known failures), `publish` (the target, the private folder, the
report check and the rename) and `run` (the only code that starts ncu). Showing the progress is
the CLI's (`ncu_roof.cli.progress`).
"""

from __future__ import annotations

from ncu_roof.profile.argv import (
    REPORT_SUFFIX,
    ROOFLINE_SECTIONS,
    ProfileOptions,
    build_argv,
    check_version,
    csv_path,
    fast_metrics,
    report_path,
)
from ncu_roof.profile.diagnosis import KNOWN_FAILURES, diagnose
from ncu_roof.profile.progress import KernelProgress, ProgressSink, RunOutcome, parse_progress
from ncu_roof.profile.publish import check_report, export_csv
from ncu_roof.profile.run import ProfileResult, run_ncu, run_profile

__all__ = [
    "KNOWN_FAILURES",
    "REPORT_SUFFIX",
    "ROOFLINE_SECTIONS",
    "KernelProgress",
    "ProfileOptions",
    "ProfileResult",
    "ProgressSink",
    "RunOutcome",
    "build_argv",
    "check_report",
    "check_version",
    "csv_path",
    "diagnose",
    "export_csv",
    "fast_metrics",
    "parse_progress",
    "report_path",
    "run_ncu",
    "run_profile",
]
