"""The headline's sentences about one device, worded once for every sink (terminal, Markdown,
HTML): the memory-bound time per tier, the kernel to fix first, the costliest kernel. Each sink
passes its escaping of data text (`esc`) and its emphasis (`strong`), and shows the name itself.
And the rate cells of every table (`achieved_words`): FLOP/s, or OP/s of integer tensor work."""

from __future__ import annotations

from collections.abc import Callable

from ncu_roof.analysis.groups import KernelGroup
from ncu_roof.analysis.records import VERDICT_WORDS, Kernel, ceiling_words
from ncu_roof.analysis.sol import HIGH_THROUGHPUT_SOL_PCT
from ncu_roof.base.text import pct, si
from ncu_roof.base.vocabulary import COMPUTE, TIER_NAMES, Bound
from ncu_roof.render.summary import DeviceView, Summary, verdict_words

Words = Callable[[str], str]


def share_phrases(view: DeviceView, esc: Words = str, of: str = "", strong: Words = str) -> list[str]:
    """`36% memory-bound (dram 30%, l2 6%) · roofline`: the device's time per verdict, the most
    first, each with its basis (`of`: words after the share, as ` of time`; `strong`: the share's)."""
    memory = ", ".join(f"{esc(t)} {pct(100 * s)}" for t, s in view.memory_tiers)  # per binding tier
    tiers = f" ({memory})" if memory else ""
    return [
        f"{strong(pct(100 * s))}{of} {VERDICT_WORDS[b]}{tiers if b is Bound.MEMORY else ''}"
        + (f" · {view.bases[b]}" if view.bases.get(b) else "")
        for b, s in view.shares
    ]


def times(count: int) -> str:
    return f" ×{count}" if count > 1 else ""


BARELY_PCT = 10.0  # a kernel under this share of its roof barely uses it: the roof ranks, not explains


def fix_first_words(summary: Summary, view: DeviceView, esc: Words = str, strong: Words = str) -> str:
    """`could save 1.2 ms (29% of the time) if it reached its dram roof (ranked by this); as it runs,
    DRAM is 67% busy, which allows 1.2 ms: the fix is …; now memory-bound (dram), 67% of roof`;
    with several devices `(29% of its device's time, 17% of all)`; where the kernel barely uses the
    roof it is ranked by, `— far below that roof: a distance to its peak, not a diagnosis`."""
    ff = view.fix_first
    assert ff is not None
    share, total_s = "", summary.total_s
    if ff.share is not None:
        overall = f", {pct(100 * ff.saving_s / total_s)} of all" if total_s > 0 else ""
        of = f"of its device's time{overall}" if summary.multi_device else "of the time"
        share = f" ({esc(f'{pct(100 * ff.share)} {of}')})"
    lead = ff.group.lead  # its saving is measured to its memory tier, else to its compute ceiling
    ceiling = ceiling_words(lead.compute_ceiling, None) if lead.compute_ceiling else COMPUTE
    roof = esc(ceiling if lead.binding == COMPUTE else lead.binding or "binding")
    at_least = "" if ff.group.headroom_complete else "at least "  # a launch of it has no roof
    far, reached = "", ff.group.figures.pct_of_roof
    if reached is not None and reached < BARELY_PCT:  # the saving is a distance to a peak it is far from
        sol = ff.group.figures.sol_pct.get("sm") is not None
        why = "" if sol else " (without SOL counters, the latency check was not made)"
        far = f" — far below that roof: a distance to its peak, not a diagnosis{why}"
    return (
        f"could save {at_least}{strong(si(ff.saving_s, 's'))}{share} "
        f"if it reached its {roof} roof (ranked by this); "
        f"{_needs(ff.group, ff.saving_s, esc)}; "
        f"now {esc(verdict_words(ff.group))}, {pct(reached)} of roof{far}"
    )


# what a unit that is busy far beyond the roofline's share asks to change
_UNIT_FIX = {
    "l1": "fewer L1 wavefronts per byte (coalesced access, no shared-memory bank conflicts)",
    "l2": "fewer L2 accesses per byte (whole sectors, fewer atomics)",
    "dram": "fewer DRAM bytes (fusion, more reuse in cache)",
    "sm": "a leaner instruction mix (fewer instructions per FLOP or byte)",
    "memory": "less memory traffic",
}
_UNIT_NAMES = {**TIER_NAMES, "sm": "SM", "memory": "memory"}


def _needs(group: KernelGroup, saving_s: float, esc: Words) -> str:
    """What reaching the roof needs, by the busiest Speed-of-Light unit: where that unit allows
    under half the roofline's saving as the kernel runs, a change of what keeps it busy (access
    pattern, instruction mix); else more work in flight to hide latency."""
    unit, sol_s = group.lead.sol_busiest_unit, group.headroom_sol_s
    busy = group.figures.sol_pct.get(unit) if unit is not None else None
    if unit is None or sol_s is None or busy is None:
        return "no Speed-of-Light figures say what it needs"
    name = esc(_UNIT_NAMES.get(unit, unit))
    saturated = sol_s < saving_s / 2 or busy >= HIGH_THROUGHPUT_SOL_PCT
    fix = _UNIT_FIX.get(unit, "less work for that unit") if saturated else _LATENCY_FIX
    return f"as it runs, {name} is {pct(busy)} busy, which allows {si(sol_s, 's')}: the fix is {esc(fix)}"


_LATENCY_FIX = "more work in flight (occupancy, instruction-level parallelism) to hide latency"


def device_sentences(
    summary: Summary, view: DeviceView, name: Callable[[KernelGroup], str], esc: Words, strong: Words
) -> list[str]:
    """`Fix first: <name> could save …` and, unless it is that kernel, `Costliest: <name> (41% of its
    time, 1.2 ms): memory-bound`; `name` shows a kernel as the sink does."""
    lines = []
    if view.fix_first is not None:
        words = fix_first_words(summary, view, esc, strong)
        lines.append(f"{strong('Fix first:')} {name(view.fix_first.group)} {words}")
    group = view.costliest
    if group is not None and (view.fix_first is None or group is not view.fix_first.group):
        share = f"{pct(100 * group.device_share)} of its time, " if group.device_share is not None else ""
        words = f"({share}{si(group.total_duration_s, 's')}): {esc(verdict_words(group))}"
        lines.append(f"Costliest: {name(group)} {words}")
    return lines


def integer_ops_rate(k: Kernel, over_s: float | None) -> tuple[float, str] | None:
    """A kernel whose work is integer tensor operations alone (no FLOPs): its operations over
    `over_s` seconds and the paths that did them (`int8`); None for any other kernel."""
    flop, ops = k.flop.get("total"), k.ops.get("total")
    if flop or not ops or not over_s or over_s <= 0:
        return None
    return ops / over_s, "+".join(p for p, v in k.ops.items() if p != "total" and v)


def achieved_words(k: Kernel, duration_s: float | None = None) -> str:
    """`27.7 TFLOP/s`; `39.4 TOP/s (int8)` for integer tensor work without FLOPs (`0 FLOP/s` reads as
    nothing done). `duration_s`: a group's summed time (its figures keep the lead launch's)."""
    ops = integer_ops_rate(k, duration_s or k.duration_s)
    return si(k.achieved_flop_per_s, "FLOP/s") if ops is None else f"{si(ops[0], 'OP/s')} ({ops[1]})"


def attainable_words(k: Kernel, duration_s: float | None = None) -> str:
    """`145 TFLOP/s`; integer tensor work without FLOPs: its operations over the roofline's time."""
    time_s = duration_s or k.duration_s
    at_roof_s = None if time_s is None or k.pct_of_roof is None else time_s * k.pct_of_roof / 100
    ops = integer_ops_rate(k, at_roof_s)
    return si(k.attainable_flop_per_s, "FLOP/s") if ops is None else f"{si(ops[0], 'OP/s')} ({ops[1]})"
