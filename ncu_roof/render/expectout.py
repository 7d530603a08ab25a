"""The Markdown and HTML reports' expectations (`analyze --expect`), from the JSON form the analysis
carries (`extra["expectations"]`): all three say the same, contradicted launches first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncu_roof.analysis.core import Analysis
from ncu_roof.base.text import plural
from ncu_roof.compare.expect import Status, tally

ROWS = 20  # launches listed (the JSON's `expectations` has every check)
ORDER = (Status.CONTRADICTED.value, Status.UNKNOWN.value, Status.CONFIRMED.value)  # what needs a look first
HEADER = ("ID", "Kernel", "Expected", "Measured", "Status", "Why")
TEXTS = ("expected", "measured", "status", "reason")  # the columns after the kernel's name


@dataclass(frozen=True)
class Section:
    checks: list[Mapping[str, Any]]  # the checks listed (none where no kernel matched)
    said: str  # the counts, and how many checks are listed
    unmatched: list[str]  # the patterns no kernel matches


def expectations(analysis: Analysis) -> Section | None:
    """The reports' expectations section; None without `--expect`."""
    if (report := analysis.extra.get("expectations")) is None:
        return None
    checks = sorted(report["checks"], key=lambda c: ORDER.index(c["status"]))
    said = f"{tally(report['counts'])}."
    if len(checks) > ROWS:
        said += f" The first {ROWS} of {plural(len(checks), 'launch')}; the JSON lists every check."
    return Section(checks[:ROWS], said, list(report["unmatched_patterns"]))
