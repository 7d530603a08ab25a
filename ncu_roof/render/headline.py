"""The headline's sentences about one device, worded once for every sink (terminal, Markdown,
HTML): the memory-bound time per tier, the kernel to fix first, the costliest kernel. Each sink
passes the escaping its format needs for data text (`esc`) and its emphasis (`strong`), and lays
the sentence out with the kernel's name as it shows names.
"""

from __future__ import annotations

from collections.abc import Callable

from ncu_roof.groups import KernelGroup
from ncu_roof.render.summary import DeviceView, Summary, verdict_words
from ncu_roof.text import pct, si

Words = Callable[[str], str]


def _same(text: str) -> str:
    return text


def memory_tier_words(view: DeviceView, esc: Words = _same) -> str:
    """` (dram 60%, l2 10%)`: the memory-bound time per binding tier; empty when none is known."""
    if not view.memory_tiers:
        return ""
    return " (" + ", ".join(f"{esc(t)} {pct(100 * s)}" for t, s in view.memory_tiers) + ")"


def fix_first_words(summary: Summary, view: DeviceView, esc: Words = _same, strong: Words = _same) -> str:
    """`could save 1.2 ms (29% of the time) at its dram roof; now memory-bound, 30% of roof`
    (the view must have a kernel to fix first)."""
    ff = view.fix_first
    assert ff is not None
    saving = summary.saving_share(view)
    share = f" ({esc(saving)})" if saving else ""
    roof = esc(ff.group.lead.binding or "its")
    return (
        f"could save {strong(si(ff.saving_s, 's'))}{share} at its {roof} roof; "
        f"now {esc(verdict_words(ff.group))}, {pct(ff.group.figures.pct_of_roof)} of roof"
    ) + far_from_roof_words(ff.group)


BARELY_PCT = 10.0  # a kernel under this share of its roof barely uses it: the roof ranks, not explains


def far_from_roof_words(group: KernelGroup) -> str:
    """What a headline adds when the kernel it ranks barely uses the roof it is ranked by: the
    saving is the distance to a peak it is far from, not a diagnosis. Empty otherwise."""
    reached = group.figures.pct_of_roof
    if reached is None or reached >= BARELY_PCT:
        return ""
    sol = group.figures.sol_pct.get("sm") is not None
    why = "" if sol else " (without SOL counters, the latency check was not made)"
    return f" — far below that roof: a distance to its peak, not a diagnosis{why}"


def shown_costliest(view: DeviceView) -> KernelGroup | None:
    """The costliest kernel group, unless it is the one to fix first (said once, not twice)."""
    costliest = view.costliest
    ff = view.fix_first
    return costliest if costliest is not None and (ff is None or costliest is not ff.group) else None


def costliest_words(group: KernelGroup, esc: Words = _same) -> str:
    """`(41% of its time, 1.2 ms): memory-bound`."""
    share = f"{pct(100 * group.device_share)} of its time, " if group.device_share is not None else ""
    return f"({share}{si(group.total_duration_s, 's')}): {esc(verdict_words(group))}"
