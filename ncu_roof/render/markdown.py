"""GitHub-flavoured Markdown for a PR comment or a job summary. Every string from data is put
in a code span (`code_span`), its `|` escaped in table cells (`table_cell`); the only raw HTML is
our own constant markup (`<details>`, `<summary>`, the marker comment)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from pathlib import PurePath
from urllib.parse import quote

import polars as pl

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.records import Device, Kernel, device_name
from ncu_roof.base.text import intensity, pct, plural, shorten, si
from ncu_roof.base.vocabulary import COMPUTE, TIERS
from ncu_roof.errors import UsageError
from ncu_roof.render.expectout import HEADER, TEXTS, expectations
from ncu_roof.render.headline import achieved_words, device_sentences, share_phrases, times
from ncu_roof.render.summary import (
    DeviceView,
    Row,
    Summary,
    lack_counters,
    roof_rows,
    roofs_clock_words,
    summarize,
)
from ncu_roof.render.text import code_block, code_span, folded, md_table, plain, table_cell, unbroken

GITHUB_LIMIT_CHARS = 65_536  # a GitHub comment or job summary holds no more
MARKER = "<!-- ncu-roof -->"
NAME_WIDTH = 60


def bandwidth_tier(kernel: Kernel) -> str | None:
    """The tier whose achieved bandwidth matters: the binding one, else DRAM, else any with data."""
    achieved = kernel.achieved_byte_per_s
    tiers = (kernel.binding, "dram", *achieved)
    return next((t for t in tiers if t is not None and t != COMPUTE and achieved.get(t) is not None), None)


def intensity_tiers(summary: Summary, rows: Sequence[Row]) -> list[str]:
    """Memory tiers with an intensity for the longest launch of at least one row, in hierarchy order."""
    leads = summary.analysis.launches[[r.group.rows[0] for r in rows]]
    known = leads.get_column("intensity_flop_per_byte").struct.unnest().count()  # per tier
    present = {tier for tier in known.columns if known.item(0, tier)}
    return [t for t in TIERS if t in present] + sorted(present - set(TIERS))


def render_markdown(
    source: Analysis | Summary,
    *,
    top: int = 15,
    limit_chars: int = GITHUB_LIMIT_CHARS,
    plot_ref: str | None = None,
) -> str:
    """The report in at most `limit_chars` characters: the `top` rows in the main table (8 columns
    at most; one per device when there are several), other rows, columns and roofs in `<details>`;
    the first rows that fit, a note saying how many were left out. `plot_ref`: from the Markdown."""
    summary = source if isinstance(source, Summary) else summarize(source)
    shown = range(len(summary.rows) + 1)  # the most rows that fit: the lengths grow with them
    expected = _expectations(summary.analysis)  # (made once: the search renders the document again and again)
    fits = bisect_right(shown, limit_chars, key=lambda n: len(_document(summary, top, n, plot_ref, expected)))
    if not fits:
        raise UsageError(
            f"a Markdown report needs more than {limit_chars} characters even without kernel rows",
            hint="raise the character limit",
        )
    return _document(summary, top, fits - 1, plot_ref, expected)


def _document(summary: Summary, top: int, shown: int, plot_ref: str | None, expected: list[str]) -> str:
    rows = summary.rows
    head, rest = rows[: min(top, shown)], rows[min(top, shown) : shown]
    noun = "NVTX range" if summary.by_nvtx else "kernel" if summary.grouped else "launch"
    what = plural(2, noun).removeprefix("2 ")
    devices = [_device_paragraph(summary, v) for v in summary.devices] or ["No kernel has a duration."]
    parts = [MARKER, f"## Roofline: {summary.title()}", *devices]
    if plot_ref is not None:
        parts.append(f"Plot: [{code_span(plot_ref)}](<{quote(plot_ref)}>)")
    if len(rows) > shown:
        parts.append(
            f"> [!NOTE]\n> {len(rows) - shown} of {len(rows)} {what} (the last by "
            f"{summary.sort.value}) are left out to stay under the {GITHUB_LIMIT_CHARS:,}-character "
            "limit of a GitHub comment; the JSON and HTML reports list them all."
        )
    if summary.missing_reason:
        parts.append(f"> [!WARNING]\n> Not on a roofline: {plain(summary.missing_reason)}.")
    parts += expected
    if head:
        order = "by time" if summary.sort.value == "time" else "by time they could save"
        for view in summary.devices if summary.multi_device else [None]:  # with several, a table each
            mine = [r for r in head if view is None or r.group.device == view.device.index]
            where = "Top" if view is None else f"Device {view.device.index}: {_gpu(view.device)} — top"
            if mine:
                parts += [f"### {where} {plural(len(mine), noun)} {order}", _main_table(summary, mine)]
        parts.append(f"<sub>{plain('; '.join(summary.legend()))}.</sub>")
        keys = summary.names(NAME_WIDTH)[1]  # what tells apart the names shown with an index (`[K1] …`)
        parts += ["  \n".join(code_span(key) for key in keys)] if keys else []
        parts.append(folded(f"More columns for these {len(head)} {what}", _more_table(summary, head)))
    if rest:
        parts.append(folded(f"The other {len(rest)} {what}", _main_table(summary, rest, device_column=True)))
    parts += [*_notes(summary), *_roofs(summary), *_warnings(summary)]
    return "\n\n".join(parts) + "\n"


def _expectations(analysis: Analysis) -> list[str]:
    """`--expect`'s section: the counts, the patterns no kernel matches, the checks listed."""
    if (section := expectations(analysis)) is None:
        return []
    rows = (
        [str(int(c["kernel_id"])), table_cell(code_span(shorten(c["kernel_name"], NAME_WIDTH)))]
        + [table_cell(plain(c[key])) for key in TEXTS]
        for c in section.checks
    )
    lines = ["### Expectations", plain(section.said)]
    if section.unmatched:
        lines.append(f"No kernel matches {', '.join(map(code_span, section.unmatched))}.")
    return lines + ([md_table(HEADER, HEADER[1:], rows)] if section.checks else [])


def _gpu(device: Device) -> str:
    return code_span(device.name) if device.name else plain(device_name(device))


def _device_paragraph(summary: Summary, view: DeviceView) -> str:
    info = summary.analysis.inputs[view.device.input]
    cc = f"CC {plain(view.device.cc)}, " if view.device.cc else ""
    version = f", ncu {plain(info.ncu_version)}" if info.ncu_version else ""
    source = code_span(PurePath(info.path).name)
    where = f"**{_gpu(view.device)}** ({cc}device {view.device.index}) from {source}{version}"
    words = share_phrases(view, plain, " of time")
    # `, ` between verdicts: ` · ` precedes a verdict's basis
    shares = ", ".join([f"**{words[0]}**", *words[1:]]) if words else "no kernel has a duration"
    lines = [f"{where}: {si(view.total_s, 's')} in {plural(view.launches, 'launch')}; {shares}"]
    lines += device_sentences(
        summary, view, lambda g: code_span(_label(summary, g.name)) + times(g.count), plain, "**{}**".format
    )
    return "  \n".join(f"{line}." for line in lines)


def _label(summary: Summary, name: str, row: Row | None = None) -> str:
    """A name as the report shows it: different names never alike (`Summary.names`); with a `row`,
    its launch shape beside it where rows of its name have several (`Summary.shape_words`)."""
    label = summary.names(NAME_WIDTH)[0].get(name) or shorten(name, NAME_WIDTH)
    return label + (summary.shape_words(row) if row else "")


def _main_table(summary: Summary, rows: Sequence[Row], *, device_column: bool = False) -> str:
    columns: list[tuple[str, Callable[[Row], str]]] = [
        ("#", lambda r: str(r.rank)),
        *([("Dev", lambda r: str(r.group.device))] if device_column and summary.multi_device else []),
        (summary.name_title, lambda r: table_cell(code_span(_label(summary, r.group.name, r)))),
        *([("Launches", lambda r: str(r.group.count))] if summary.grouped else []),
        ("Time", lambda r: unbroken(si(r.group.total_duration_s, "s"))),
        ("Share", lambda r: r.share(summary.multi_device)),
        ("Verdict [notes]", lambda r: table_cell(plain(r.flagged(notes=True)))),
        ("% of roof", lambda r: pct(r.group.figures.pct_of_roof)),
        ("Could save", lambda r: unbroken(r.saving())),
    ]
    lines = ([cell(r) for _, cell in columns] for r in rows)
    return md_table([h for h, _ in columns], (summary.name_title, "Verdict [notes]"), lines)


def _more_table(summary: Summary, rows: Sequence[Row]) -> str:
    tiers = intensity_tiers(summary, rows)
    launch = "Longest launch" if summary.by_nvtx else "Launch"  # an NVTX range: its kernel too
    mean, mixed = ["Mean / min / max"] if summary.grouped else [], any(len(r.verdicts) > 1 for r in rows)
    header = ["#", launch, *mean, "Binding", *(f"AI {plain(t)}" for t in tiers), "FLOP/s", "Bandwidth"]
    lines = []
    for r in rows:
        g, lead = r.group, r.group.figures
        tier = bandwidth_tier(lead)
        bandwidth = f"{si(lead.achieved_byte_per_s[tier], 'B/s')} ({plain(tier)})" if tier else "–"
        shown = f"{_label(summary, lead.name)} {r.shape}" if summary.by_nvtx else r.shape
        spread = (g.mean_duration_s, g.min_duration_s, g.max_duration_s)
        # `67% memory-bound (dram) · roofline; 33% compute-bound (fp32) · roofline`
        by_time = "; ".join(f"{pct(100 * share)} {verdict}" for verdict, share in r.verdicts)
        lines.append(
            [
                str(r.rank),
                table_cell(code_span(shown)),
                *([" / ".join(si(v, "s") for v in spread)] if mean else []),
                table_cell(plain(lead.roofline_binding or "–")),
                *(intensity(lead.intensity_flop_per_byte.get(t)) for t in tiers),
                achieved_words(lead, g.total_duration_s),
                table_cell(bandwidth),
                *([table_cell(plain(by_time))] if mixed else []),
            ]
        )
    header = [*header, *(["Verdicts by time"] if mixed else [])]
    return md_table(header, (launch, "Binding", "Verdicts by time"), lines)


def _notes(summary: Summary) -> list[str]:
    lines = [f"{n.number}. {plural(n.launches, 'launch')}{n.vary}: {plain(n.text)}" for n in summary.notes]
    return [("### Notes\n\n" + "\n".join(lines)).rstrip()] if lines else []


def _roofs(summary: Summary) -> list[str]:
    parts = []
    for device in summary.analysis.devices:
        rows = [[table_cell(plain(k)), peak, table_cell(code_span(s))] for k, peak, s in roof_rows(device)]
        if not rows:
            parts.append(f"{_gpu(device)}: no roofs (pass `--gpu KEY` or `--roofs FILE`).")
        else:  # a <summary> is raw HTML to GitHub: only our own words go in it
            at = roofs_clock_words(device)
            table = md_table(("Roof", "Peak", "Source"), ("Roof", "Source"), rows)
            body = f"{_gpu(device)}, roofs from {code_span(device.roofs.source)}{at}:\n\n{table}"
            parts.append(folded(f"Roofs of device {device.index}", body))
    return parts


def _warnings(summary: Summary) -> list[str]:
    parts = []
    if above := summary.analysis.launches.filter(pl.col("pct_of_roof") > 100.0).height:
        parts.append(
            f"> [!WARNING]\n> {plural(above, 'launch')} {'are' if above != 1 else 'is'} above "
            "its roof: the roofs and the counters disagree (clock, replay or recipe); "
            "check the roofs' source."
        )
    if hint := summary.analysis.collect_hint:
        what = f"{lack_counters(summary.analysis)}: an ncu run that collects them"
        parts.append(folded(what, code_block(hint, "sh")))
    return parts
