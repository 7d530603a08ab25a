"""`ncu-roof gpus` rendered: the `ncu-roof/gpus/v1` JSON (every product row and architecture,
SI) and the table of datasheet peaks, bandwidths and ridge points with each row's source."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ncu_roof.gpus.arch import Arch, archs
from ncu_roof.gpus.lookup import builtin_gpus
from ncu_roof.gpus.specs import Gpu
from ncu_roof.render.console import PIPE_WIDTH, rich_text

SCHEMA = "ncu-roof/gpus/v1"


def render_json() -> str:
    doc = {
        "schema": SCHEMA,
        "gpus": [gpu_row(g) for g in builtin_gpus().values()],
        "architectures": [arch_row(a) for a in archs().values()],
    }
    return json.dumps(doc, indent=2) + "\n"


def gpu_row(gpu: Gpu) -> dict[str, Any]:
    return {
        "key": gpu.key,
        "name": gpu.name,
        "peak_flop_per_s": gpu.compute_flop_per_s,
        "bandwidth_byte_per_s": gpu.bandwidth_byte_per_s,
        "ridge_flop_per_byte": {p: gpu.ridge_flop_per_byte(p) for p in ("fp32", "tensor")},
        "source": gpu.source,
        "sources": gpu.sources,
        "cc": gpu.cc,
        "sm_count": gpu.sm_count,
        "boost_clock_hz": gpu.hardware().boost_clock_hz,
        "memory_bus_bits": gpu.memory_bus_bits,
        "device_names": list(gpu.names),
    }


def arch_row(arch: Arch) -> dict[str, Any]:
    """One architecture's per-SM, per-clock figures (what `analyze` scales by the measured clock)."""
    return {
        "cc": arch.cc,
        "name": arch.name,
        "flop_per_sm_per_clk": dict(arch.flop_per_sm_per_clk),
        "l1_byte_per_sm_per_clk": arch.l1_byte_per_sm_per_clk,
        "shared_byte_per_sm_per_clk": arch.shared_byte_per_sm_per_clk,
        "source": arch.source,
        "unverified": list(arch.unverified),
    }


def _cell(value: float | None, spec: str = "g") -> str:
    return "–" if value is None else format(value, spec)


def _l2(gpu: Gpu) -> str:
    """The datasheet's L2 figure, else the derived one (marked +)."""
    if gpu.l2_tbyte_per_s is not None:
        return f"{gpu.l2_tbyte_per_s:g}"
    derived = gpu.bandwidth_byte_per_s.get("l2")
    return "–" if derived is None else f"{derived / 1e12:.1f}+"


COLUMNS: tuple[tuple[str, Callable[[Gpu], str]], ...] = (  # header, cell
    ("key", lambda g: g.key),
    ("FP64", lambda g: _cell(g.fp64_tflop_per_s)),
    ("FP32", lambda g: _cell(g.fp32_tflop_per_s)),
    ("FP16", lambda g: _cell(g.fp16_tflop_per_s)),
    ("tensor", lambda g: _cell(g.tensor_tflop_per_s)),
    ("DRAM GB/s", lambda g: f"{g.dram_gbyte_per_s:g}"),
    ("L2 TB/s", _l2),
    ("L1 TB/s*", lambda g: f"{g.l1_byte_per_s / 1e12:.1f}"),
    ("ridge FP32", lambda g: _cell(g.ridge_flop_per_byte("fp32"), ".1f")),
    ("ridge tensor", lambda g: _cell(g.ridge_flop_per_byte("tensor"), ".1f")),
)
HEADERS = tuple(header for header, _ in COLUMNS)
_GAP = 3  # columns between two cells: " │ "


def render_text(width: int = PIPE_WIDTH, *, color: bool = False) -> str:
    """The table, then each row's source, `width` columns wide, coloured only when `color`. A column is
    never narrower than its widest cell: narrow, the headers wrap and the ridges give way (said below)."""
    rows = [[cell(gpu) for _, cell in COLUMNS] for gpu in builtin_gpus().values()]
    widest = [max(map(len, column)) for column in zip(*rows, strict=True)]
    shown = next((n for n in range(len(HEADERS), 2, -1) if sum(widest[:n]) + _GAP * (n - 1) <= width), 2)
    # each column's widest cell, widened towards its header's length while `width` has room
    sizes, room = widest[:shown], max(0, width - sum(widest[:shown]) - _GAP * (shown - 1))
    for i, header in enumerate(HEADERS[:shown]):
        grow = min(max(0, len(header) - sizes[i]), room)
        sizes[i] += grow
        room -= grow
    table = Table(show_edge=False, pad_edge=False)
    for header, size in zip(HEADERS, sizes, strict=False):
        table.add_column(header, justify="left" if header == "key" else "right", width=size, overflow="fold")
    for row in rows:
        table.add_row(*row[:shown])
    title = (
        "Built-in GPUs: datasheet dense peaks at boost clock in TFLOP/s; "
        "ridge = peak / DRAM bandwidth in FLOP/B"
    )
    notes = [
        "* L1 derived: SMs x 128 B/clk x boost clock (not a datasheet figure)",
        "+ L2 derived: L2 slices x Nsight's L2 measure per slice per clock (lts__lts2xbar_cycles_active"
        " x 32 B) x the L2 clock where ncu measured it on that product, else the SM boost clock"
        " (no L2 clock is published)",
    ]
    if shown < len(HEADERS):
        notes.append(f"not shown at this width: {', '.join(HEADERS[shown:])} (--format json has them)")
    notes += ["sources:", *(f"  {gpu.key}: {gpu.source}" for gpu in builtin_gpus().values())]
    return rich_text(Group(Text(title), table, Text("\n".join(notes))), width, color=color)
