"""The Markdown and HTML reports' expectations (`analyze --expect`), from the JSON form the analysis
carries (`extra["expectations"]`), so all three say the same: each matched launch's expected and
measured verdicts and status, contradicted first; the patterns no kernel matches. Every text is data."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from ncu_roof.analysis.core import Analysis
from ncu_roof.base.text import one_line, plural, shorten
from ncu_roof.compare.expect import Status, tally
from ncu_roof.render.text import code_span, md_row, plain, table_cell

ROWS = 20  # launches listed (the JSON's `expectations` has every check)
NAME_WIDTH = 60
ORDER = (Status.CONTRADICTED.value, Status.UNKNOWN.value, Status.CONFIRMED.value)  # what needs a look first
HEADER = ("ID", "Kernel", "Expected", "Measured", "Status", "Why")
TEXTS = ("expected", "measured", "status", "explanation")


def _section(analysis: Analysis) -> tuple[list[Mapping[str, Any]], str, list[str]] | None:
    """(the checks listed, the counts said before them, the unmatched patterns); None without any."""
    if (report := analysis.extra.get("expectations")) is None:
        return None
    checks = sorted(report["checks"], key=lambda c: ORDER.index(c["status"]))
    said = f"{tally(report['counts'])}."
    if len(checks) > ROWS:
        said += f" The first {ROWS} of {plural(len(checks), 'launch')}; the JSON lists every check."
    return checks[:ROWS], said, list(report["unmatched_patterns"])


def expectations_markdown(analysis: Analysis) -> list[str]:
    if (section := _section(analysis)) is None:
        return []
    checks, said, unmatched = section
    rows = (
        [
            str(int(c["kernel_id"])),
            table_cell(code_span(shorten(c["kernel_name"], NAME_WIDTH))),
            *(table_cell(plain(c[key])) for key in TEXTS),
        ]
        for c in checks
    )
    align = ["---:", *[":---"] * (len(HEADER) - 1)]
    table = "\n".join(md_row(cells) for cells in (HEADER, align, *rows))
    unmatched_line = [f"No kernel matches {', '.join(map(code_span, unmatched))}."] if unmatched else []
    return ["### Expectations", plain(said), *unmatched_line, table]


def expectations_html(analysis: Analysis) -> list[str]:
    if (section := _section(analysis)) is None:
        return []
    checks, said, unmatched = section
    head = "".join(f"<th{'' if h == 'ID' else ' class=text'}>{h}</th>" for h in HEADER)
    body = "".join(
        f"<tr><td>{int(c['kernel_id'])}</td>"
        f'<td class="text name"><code>{escape(shorten(c["kernel_name"], NAME_WIDTH))}</code></td>'
        + "".join(f'<td class="text wrap">{escape(one_line(c[key]))}</td>' for key in TEXTS)
        + "</tr>"
        for c in checks
    )
    patterns = ", ".join(f"<code>{escape(one_line(p))}</code>" for p in unmatched)
    return [
        '<h2 id="expectations">Expectations</h2>',
        f'<p class="lead">{escape(said)}</p>',
        *([f"<p>No kernel matches {patterns}.</p>"] if unmatched else []),
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>',
    ]
