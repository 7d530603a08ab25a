"""The terminal table: kernels by share of time, verdict coloured (plain when colour is off)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncu_roof.analysis import Analysis, Device, Kernel, describe
from ncu_roof.model import Bound
from ncu_roof.recipe import TIERS
from ncu_roof.render.text import one_line, pct, shorten, si

_STYLE = {
    Bound.MEMORY: "cyan",
    Bound.COMPUTE: "green",
    Bound.LATENCY: "yellow",
    Bound.UNKNOWN: "dim",
}


def _intensity(kernel: Kernel) -> str:
    parts = []
    for tier in TIERS:
        value = kernel.intensity_flop_per_byte.get(tier)
        if value is not None:
            parts.append(f"{tier} {value:.3g}" if value != float("inf") else f"{tier} ∞")
    return " · ".join(parts) or "–"


def _verdict(kernel: Kernel) -> Text:
    text = describe(kernel)
    if kernel.above_roof:
        text += " ⚠ above roof"
    return Text(text, style=_STYLE[kernel.bound])


def kernel_table(analysis: Analysis, *, name_width: int = 48) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold", expand=False)
    for header, justify in (
        ("id", "right"),
        ("kernel", "left"),
        ("time", "right"),
        ("share", "right"),
        ("achieved", "right"),
        ("attainable", "right"),
        ("% roof", "right"),
        ("verdict", "left"),
        ("intensity FLOP/B", "left"),
        ("SOL sm/mem", "right"),
    ):
        table.add_column(header, justify=justify, no_wrap=header != "kernel")  # type: ignore[arg-type]
    for kernel in analysis.by_time():
        share = kernel.time_share
        table.add_row(
            str(kernel.id),
            Text(shorten(kernel.name, name_width)),
            si(kernel.duration_s, "s"),
            pct(None if share is None else 100 * share),
            si(kernel.achieved_flop_per_s, "FLOP/s"),
            si(kernel.attainable_flop_per_s, "FLOP/s"),
            pct(kernel.pct_of_roof),
            _verdict(kernel),
            _intensity(kernel),
            f"{pct(kernel.sol_pct.get('sm'))}/{pct(kernel.sol_pct.get('memory'))}",
        )
    return table


def _roofs_line(device: Device) -> str:
    roofs = device.roofs
    compute = ", ".join(f"{k} {si(v, 'FLOP/s')}" for k, v in roofs.compute_flop_per_s.items())
    memory = ", ".join(f"{k} {si(v, 'B/s')}" for k, v in roofs.bandwidth_byte_per_s.items())
    name = one_line(device.name or "unknown device")
    return f"device {device.index}: {name} (cc {device.cc or '?'}) — roofs [{roofs.source}]: " + (
        f"{compute}; {memory}" if compute or memory else "none"
    )


def render_terminal(analysis: Analysis, *, color: bool, width: int) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=width,
        highlight=False,
        emoji=False,
        markup=False,
    )
    for device in analysis.devices:
        console.print(Text(_roofs_line(device), style="dim"))
    console.print(kernel_table(analysis))
    total = analysis.total_duration_s
    console.print(Text(f"{len(analysis.kernels)} kernels, {si(total, 's')} in total", style="dim"))
    return buffer.getvalue()
