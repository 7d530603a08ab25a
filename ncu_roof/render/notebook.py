"""An analysis as a notebook shows it, from the one summary view (`render.summary`): a short
`repr` and an HTML view for Jupyter's `_repr_html_` (the fix-first sentences as the report words
them, the first rows of the table). The HTML is a fragment: no script, a style sheet scoped to its
own `div` (a notebook page is not ours to restyle), every data string escaped."""

from __future__ import annotations

from html import escape

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.groups import fix_first, group_kernels
from ncu_roof.analysis.records import device_name
from ncu_roof.base.text import one_line, plural, shorten, si
from ncu_roof.render.headline import Words, fix_first_words, share_phrases, times
from ncu_roof.render.html_table import row_cells, table_columns
from ncu_roof.render.summary import VERDICT_COLOURS, DeviceView, Summary, summarize

REPR_DEVICES = 4  # device lines in the repr; the rest are counted
REPR_NAME = 48
HTML_ROWS = 10
MARKUP = {"name": "<code>{0}</code>", "verdict": '<span class="badge" style="background:{1}">{0}</span>'}
HTML_KEYS = ("rank", "device", "name", "launches", "duration", "share", "pct", "headroom", "verdict")
STYLE = (
    ".ncu-roof table{border-collapse:collapse;margin:.3em 0}"
    ".ncu-roof th,.ncu-roof td{padding:.15em .5em;text-align:right;border-bottom:1px solid #d0d7de}"
    ".ncu-roof td{white-space:nowrap}.ncu-roof td.text{white-space:normal}"
    ".ncu-roof th.text,.ncu-roof td.text{text-align:left}"
    ".ncu-roof .badge{padding:0 .4em;border-radius:.7em;color:#fff;white-space:nowrap}"
    ".ncu-roof p{margin:.25em 0}"
)


def _shares(view: DeviceView, esc: Words = str) -> str:
    """`64% latency-bound · SOL, 36% memory-bound (dram 30%, l2 6%) · roofline`, as every headline."""
    return ", ".join(share_phrases(view, esc)) or "no kernel has a duration"


def analysis_repr(analysis: Analysis) -> str:
    """A few lines: what was read, each device's time by verdict, the kernel to fix first."""
    summary = summarize(analysis)
    lines = [f"<ncu_roof.Analysis: {summary.title(devices=True, kernels=True)}>"]
    for view in summary.devices[:REPR_DEVICES]:
        time = f"{si(view.total_s, 's')}, {_shares(view)}"
        lines.append(f"  device {view.device.index} {device_name(view.device)}: {time}")
    if len(summary.devices) > REPR_DEVICES:
        lines.append(f"  … {plural(len(summary.devices) - REPR_DEVICES, 'more device')}")
    if (best := fix_first(group_kernels(analysis), summary.total_s)) is not None:
        group = best.group
        where = f" on device {group.device}" if summary.multi_device else ""
        lines.append(
            f"  fix first: {one_line(shorten(group.name, REPR_NAME))}{where} could save "
            f"{'' if group.headroom_complete else 'at least '}{si(best.saving_s, 's')} "
            f"at its {group.lead.binding or 'binding'} roof"
        )
    lines.append("  .to_pandas(): one row per launch · .plot(): the rooflines · docs/api.md")
    return "\n".join(lines)


def analysis_html(analysis: Analysis) -> str:
    """The notebook view: the summary, each device's fix first, the first rows of the table."""
    summary = summarize(analysis)
    title = escape(summary.title(devices=True, kernels=True))
    parts = [f"<style>{STYLE}</style>", '<div class="ncu-roof">', f"<p><b>ncu-roof</b>: {title}</p>"]
    for view in summary.devices:
        parts.append(
            f"<p>Device {view.device.index} <code>{escape(device_name(view.device))}</code>: "
            f"{escape(si(view.total_s, 's'))}, {_shares(view, escape)}</p>"
        )
        if (ff := view.fix_first) is not None:
            name = escape(one_line(shorten(ff.group.name, REPR_NAME)))
            parts.append(
                f"<p><b>Fix first:</b> <code>{name}</code>{times(ff.group.count)} "
                f"{fix_first_words(summary, view, escape, '<b>{}</b>'.format)}.</p>"
            )
    return "\n".join([*parts, *_table(summary), "</div>"])


def _table(summary: Summary) -> list[str]:
    columns = [c for c in table_columns(summary) if c[0] in HTML_KEYS]
    if not summary.rows:
        return []
    head = "".join(f"<th{' class=text' if text else ''}>{escape(label)}</th>" for _, label, text in columns)
    rows = []
    for row in summary.rows[:HTML_ROWS]:
        texts, cells = row_cells(summary, row), []
        for key, _, text in columns:
            content = MARKUP.get(key, "{}").format(
                escape(one_line(texts[key][1])), VERDICT_COLOURS[row.bound]
            )
            cells.append(f"<td{' class=text' if text else ''}>{content}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = len(summary.rows) - HTML_ROWS
    tail = [f"<p>… {more} more rows: <code>.to_pandas()</code> has every launch.</p>"] if more > 0 else []
    return [f"<table><thead><tr>{head}</tr></thead><tbody>", *rows, "</tbody></table>", *tail]
