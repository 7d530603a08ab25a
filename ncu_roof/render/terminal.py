"""The terminal table: kernels by share of time, verdict coloured (plain when colour is off)."""

from __future__ import annotations

import io
from collections.abc import Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncu_roof.analysis import Analysis, Device, Kernel, describe
from ncu_roof.model import TIERS, Bound
from ncu_roof.render.text import launch_shape, one_line, pct, shorten, si

_STYLE = {
    Bound.MEMORY: "cyan",
    Bound.COMPUTE: "green",
    Bound.LATENCY: "yellow",
    Bound.BALANCED: "magenta",
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


# (header, justify, drop below this terminal width, cell)
_COLUMNS: tuple[tuple[str, str, int, Callable[[Kernel], str | Text]], ...] = (
    ("id", "right", 0, lambda k: str(k.id)),
    ("kernel", "left", 0, lambda k: Text(shorten(k.name, 48))),
    ("grid×block", "left", 200, lambda k: launch_shape(k.grid, k.block)),
    ("time", "right", 0, lambda k: si(k.duration_s, "s")),
    ("share", "right", 0, lambda k: pct(None if k.time_share is None else 100 * k.time_share)),
    ("FLOP", "right", 220, lambda k: si(k.flop.get("total"))),
    ("DRAM bytes", "right", 220, lambda k: si(k.bytes.get("dram"), "B")),
    ("achieved", "right", 0, lambda k: si(k.achieved_flop_per_s, "FLOP/s")),
    ("attainable", "right", 160, lambda k: si(k.attainable_flop_per_s, "FLOP/s")),
    ("% roof", "right", 0, lambda k: pct(k.pct_of_roof)),
    ("verdict", "left", 0, lambda k: _verdict(k)),
    ("intensity FLOP/B", "left", 140, lambda k: _intensity(k)),
    ("SOL sm/mem", "right", 120, lambda k: f"{pct(k.sol_pct.get('sm'))}/{pct(k.sol_pct.get('memory'))}"),
)


def kernel_table(kernels: list[Kernel], *, width: int) -> Table:
    """Kernels by share of time; on narrow terminals the less important columns go first."""
    columns = [c for c in _COLUMNS if width >= c[2]]
    table = Table(show_edge=False, pad_edge=False, header_style="bold", expand=False)
    for header, justify, _, _ in columns:
        table.add_column(
            header,
            justify=justify,  # type: ignore[arg-type]
            no_wrap=header != "kernel",
            overflow="fold",
            min_width=16 if header == "kernel" else None,
        )
    for kernel in kernels:
        table.add_row(*(cell(kernel) for _, _, _, cell in columns))
    return table


def _roofs_line(device: Device) -> str:
    roofs = device.roofs
    compute = ", ".join(f"{k} {si(v, 'FLOP/s')}" for k, v in roofs.compute_flop_per_s.items())
    memory = ", ".join(f"{k} {si(v, 'B/s')}" for k, v in roofs.bandwidth_byte_per_s.items())
    name = one_line(device.name or "unknown device")
    return one_line(f"device {device.index}: {name} (cc {device.cc or '?'}) — roofs [{roofs.source}]: ") + (
        f"{compute}; {memory}" if compute or memory else "none"
    )


def render_terminal(analysis: Analysis, *, color: bool, width: int, top: int = 0) -> str:
    """The table of the `top` costliest kernels (0 = all), the roofs above it, a total below."""
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
    ranked = analysis.by_time()
    shown = ranked[:top] if top > 0 else ranked
    console.print(kernel_table(shown, width=width))
    total = analysis.total_duration_s
    console.print(Text(f"{len(ranked)} kernels, {si(total, 's')} in total", style="dim"))
    if len(shown) < len(ranked):
        rest = sum(k.duration_s or 0.0 for k in ranked[len(shown) :])
        share = f" ({100 * rest / total:.1f}% of the time)" if total > 0 else ""
        console.print(
            Text(
                f"{len(ranked) - len(shown)} more kernels{share} not shown: --top 0 shows all, "
                "--format json|csv has every kernel",
                style="dim",
            )
        )
    return buffer.getvalue()
