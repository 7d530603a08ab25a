"""GitHub-flavoured Markdown for a PR comment or a job summary.

Every string that comes from data (kernel names, device names, paths, roof sources) is put in a
code span (`code_span`), and in table cells its `|` is escaped (`table_cell`); the only raw HTML
emitted is our own constant markup (`<details>`, `<summary>`, the marker comment).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from ncu_roof.analysis import Analysis, Device, Kernel, describe
from ncu_roof.errors import UsageError
from ncu_roof.model import COMPUTE, TIERS, Bound
from ncu_roof.render.text import code_span, one_line, pct, plain, shorten, si, table_cell

GITHUB_LIMIT_CHARS = 65536
MARKER = "<!-- ncu-roof -->"
NAME_WIDTH = 60
BOUND_WORDS = {
    Bound.MEMORY: "memory-bound",
    Bound.COMPUTE: "compute-bound",
    Bound.LATENCY: "latency-bound",
    Bound.BALANCED: "balanced",
    Bound.UNKNOWN: "unclassified",
}
_BACKTICKS = re.compile(r"`+")
def intensity(value: float | None) -> str:
    """An intensity in FLOP/byte as a plain number, 3 significant digits, never an SI prefix.

    `0.0948`, `2.73`, `104`, `1.23e+03`: `si()` would print 0.0948 as `94.8 m`, which reads as
    millions. None or NaN → `–`, infinity (no bytes) → `∞`.
    """
    if value is None or value != value:
        return "–"
    if value in (float("inf"), float("-inf")):
        return "∞" if value > 0 else "-∞"
    return f"{value:.3g}"


def bound_shares(analysis: Analysis) -> dict[Bound, float]:
    """Share of the total time per verdict (kernels without a duration count for nothing)."""
    total = analysis.total_duration_s
    shares = dict.fromkeys(Bound, 0.0)
    if total <= 0:
        return shares
    for kernel in analysis.kernels:
        shares[kernel.bound] += (kernel.duration_s or 0.0) / total
    return shares


def memory_tier_shares(analysis: Analysis) -> dict[str, float]:
    """Share of the total time of memory-bound kernels, per binding tier, largest first."""
    total = analysis.total_duration_s
    shares: dict[str, float] = {}
    if total <= 0:
        return shares
    for kernel in analysis.kernels:
        if kernel.bound is Bound.MEMORY and kernel.binding is not None:
            shares[kernel.binding] = shares.get(kernel.binding, 0.0) + (kernel.duration_s or 0.0)
    return {t: s / total for t, s in sorted(shares.items(), key=lambda item: -item[1])}


def intensity_tiers(analysis: Analysis) -> list[str]:
    """Memory tiers with an intensity for at least one kernel, in hierarchy order."""
    present = {
        tier
        for kernel in analysis.kernels
        for tier, value in kernel.intensity_flop_per_byte.items()
        if value is not None
    }
    return [t for t in TIERS if t in present] + sorted(present - set(TIERS))


def bandwidth_tier(kernel: Kernel) -> str | None:
    """The tier whose achieved bandwidth matters: the binding one, else DRAM, else any with data."""
    achieved = kernel.achieved_byte_per_s
    for tier in (kernel.binding, "dram", *achieved):
        if tier is not None and tier != COMPUTE and achieved.get(tier) is not None:
            return tier
    return None


def render_markdown(
    analysis: Analysis,
    *,
    top: int = 15,
    limit_chars: int = GITHUB_LIMIT_CHARS,
    plot_note: str | None = None,
) -> str:
    """The report as GitHub-flavoured Markdown, at most `limit_chars` characters.

    The `top` kernels by time go in the main table, the rest in a collapsible `<details>`; when
    the whole does not fit, the slowest kernels are kept and a note says how many were left out.
    `plot_note` (e.g. where the plot artifact is) is shown as literal text.
    """
    kernels = analysis.by_time()
    low, high = 0, len(kernels)
    if len(_document(analysis, kernels, top, 0, plot_note)) > limit_chars:
        raise UsageError(
            f"a Markdown report needs more than {limit_chars} characters even without kernel rows",
            hint="raise the character limit",
        )
    while low < high:  # the largest number of kernel rows that fits
        mid = (low + high + 1) // 2
        if len(_document(analysis, kernels, top, mid, plot_note)) <= limit_chars:
            low = mid
        else:
            high = mid - 1
    return _document(analysis, kernels, top, low, plot_note)


def _document(
    analysis: Analysis, kernels: Sequence[Kernel], top: int, shown: int, plot_note: str | None
) -> str:
    tiers = intensity_tiers(analysis)
    head, rest = kernels[: min(top, shown)], kernels[min(top, shown) : shown]
    parts = [MARKER, *_headline(analysis)]
    if plot_note is not None:
        parts.append(f"_Plot:_ {plain(plot_note)}")
    if len(kernels) > shown:
        parts.append(
            f"> [!NOTE]\n> {len(kernels) - shown} of {len(kernels)} kernels (the fastest) are left "
            f"out to stay under the {GITHUB_LIMIT_CHARS:,}-character limit of a GitHub comment; "
            "the JSON and HTML reports list them all."
        )
    if head:
        parts += [f"### Top {len(head)} kernels by time", _table(head, 1, tiers), _legend(tiers)]
    if rest:
        first = len(head) + 1
        parts.append(
            f"<details>\n<summary>The other {len(rest)} kernels</summary>\n\n"
            f"{_table(rest, first, tiers)}\n\n</details>"
        )
    parts += _roofs(analysis)
    parts += _warnings(analysis)
    return "\n\n".join(parts) + "\n"


def _headline(analysis: Analysis) -> list[str]:
    count = len(analysis.kernels)
    total = si(analysis.total_duration_s, "s")
    title = f"## Roofline: {count} kernel{'s' if count != 1 else ''}, {total}"
    lines = [title, _shares_line(analysis)]
    kernels = analysis.by_time()
    if kernels:
        lines.append(_costliest(kernels[0]))
    if analysis.devices:
        lines.append(" · ".join(_device_words(analysis, d) for d in analysis.devices))
    return lines


def _shares_line(analysis: Analysis) -> str:
    shares = sorted(bound_shares(analysis).items(), key=lambda item: -item[1])
    tiers = memory_tier_shares(analysis)
    words = []
    for bound, share in shares:
        if share <= 0:
            continue
        phrase = f"{pct(100 * share)} of time {BOUND_WORDS[bound]}"
        if bound is Bound.MEMORY and tiers:
            phrase += " (" + ", ".join(f"{plain(t)} {pct(100 * s)}" for t, s in tiers.items()) + ")"
        words.append(phrase)
    if not words:
        return "No kernel has a duration."
    return f"**{words[0]}**" + "".join(f" · {w}" for w in words[1:])


def _costliest(kernel: Kernel) -> str:
    verdict = plain(describe(kernel))
    if kernel.pct_of_roof is not None:
        verdict += f" at {pct(kernel.pct_of_roof)} of its roof"
    share = f"{pct(100 * kernel.time_share)} of time, " if kernel.time_share is not None else ""
    name = code_span(shorten(kernel.name, NAME_WIDTH))
    return f"Costliest kernel: {name} ({share}{si(kernel.duration_s, 's')}): **{verdict}**."


def _device_words(analysis: Analysis, device: Device) -> str:
    info = analysis.inputs[device.input]
    gpu = code_span(device.name) if device.name else "unknown GPU"
    cc = f" (CC {plain(device.cc)})" if device.cc else ""
    version = f", ncu {plain(info.ncu_version)}" if info.ncu_version else ""
    return f"GPU {gpu}{cc} from {code_span(PurePath(info.path).name)}{version}"


def _table(kernels: Sequence[Kernel], first: int, tiers: Sequence[str]) -> str:
    header = [
        "#", "Kernel", "Time", "Share", "Verdict", "Binding", "% of roof",
        *(f"AI {plain(t)}" for t in tiers), "FLOP/s", "Bandwidth",
    ]  # fmt: skip
    align = ["---:", ":---", "---:", "---:", ":---", ":---", "---:", *("---:" for _ in tiers)]
    align += ["---:", "---:"]
    lines = [_row(header), _row(align)]
    lines += [_row(_cells(k, first + i, tiers)) for i, k in enumerate(kernels)]
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cells(kernel: Kernel, rank: int, tiers: Sequence[str]) -> list[str]:
    share = pct(100 * kernel.time_share) if kernel.time_share is not None else "–"
    tier = bandwidth_tier(kernel)
    bandwidth = "–"
    if tier is not None:
        bandwidth = f"{si(kernel.achieved_byte_per_s[tier], 'B/s')} ({plain(tier)})"
    return [
        str(rank),
        table_cell(code_span(shorten(kernel.name, NAME_WIDTH))),
        si(kernel.duration_s, "s"),
        share,
        table_cell(plain(describe(kernel))),
        table_cell(plain(kernel.roofline_binding or "–")),
        pct(kernel.pct_of_roof),
        *(intensity(kernel.intensity_flop_per_byte.get(t)) for t in tiers),
        si(kernel.achieved_flop_per_s, "FLOP/s"),
        table_cell(bandwidth),
    ]


def _legend(tiers: Sequence[str]) -> str:
    ai = "AI = arithmetic intensity in FLOP/byte against each memory tier; " if tiers else ""
    return (
        f"<sub>{ai}Binding = the roof that limits the kernel in the roofline model; "
        "% of roof = the roofline's minimum time over the measured time; "
        "Bandwidth = achieved, at the binding tier (DRAM when compute-bound).</sub>"
    )


def _roofs(analysis: Analysis) -> list[str]:
    parts = ["### Roofs"] if analysis.devices else []
    for device in analysis.devices:
        roofs = device.roofs
        rows = [_row(["Roof", "Peak", "Source"]), _row([":---", "---:", ":---"])]
        entries = [(p, v, "FLOP/s") for p, v in roofs.compute_flop_per_s.items()]
        entries += [(t, v, "B/s") for t, v in roofs.bandwidth_byte_per_s.items()]
        for key, value, unit in entries:
            source = roofs.sources.get(key, roofs.source)
            cells = [table_cell(plain(key)), si(value, unit), table_cell(code_span(source))]
            rows.append(_row(cells))
        gpu = code_span(device.name) if device.name else "unknown GPU"
        if len(rows) == 2:
            parts.append(f"{gpu}: no roofs (pass `--gpu KEY` or `--roofs FILE`).")
        else:
            parts.append(f"{gpu}, roofs from {code_span(roofs.source)}:\n\n" + "\n".join(rows))
    return parts


def _warnings(analysis: Analysis) -> list[str]:
    parts = []
    above = sum(1 for k in analysis.kernels if k.above_roof)
    if above:
        parts.append(
            f"> [!WARNING]\n> {above} kernel{'s are' if above != 1 else ' is'} above its roof: "
            "the roofs and the counters disagree (clock, replay or recipe); "
            "check the roofs' source."
        )
    if analysis.collect_hint:
        parts.append(
            "Some counters are missing; profile again with them:\n\n"
            + _code_block(analysis.collect_hint)
        )
    return parts


def _code_block(text: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}sh\n{one_line(text)}\n{fence}"
