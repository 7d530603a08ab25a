"""The options several commands take, declared once (name, metavar, help), so that `analyze`, `plot`,
`diff`, `profile` and `predict` spell and explain them alike. A command writes `gpu: GpuKey = None`;
its default stays in its signature."""

from __future__ import annotations

from typing import Annotated

import typer

from ncu_roof.base.vocabulary import TrafficDefinition
from ncu_roof.render.formats import Caption

TRAFFIC_HELP = (
    "Memory-tier traffic: nsight = what the Nsight Compute version that wrote the report draws; "
    "counted = all traffic through each tier. Each against its own counter's peak."
)

GpuKey = Annotated[
    str | None,
    typer.Option("--gpu", metavar="KEY", help="Use the built-in roofs of this GPU (see `ncu-roof gpus`)."),
]
RoofsFile = Annotated[
    str | None, typer.Option("--roofs", metavar="FILE", help="Use the roofs of this TOML platform file.")
]
Traffic = Annotated[TrafficDefinition, typer.Option("--traffic", metavar="nsight|counted", help=TRAFFIC_HELP)]
SkipBadRows = Annotated[
    bool,
    typer.Option(
        "--skip-bad-rows",
        help="Leave out kernels with damaged CSV rows, and inputs in which every launch failed "
        "(with a warning), instead of failing.",
    ),
]
Top = Annotated[int, typer.Option("--top", min=0, metavar="N", help="Table: the N first rows (0 = all).")]
WidthIn = Annotated[float | None, typer.Option("--width", metavar="INCHES", help="Plot width.")]
HeightIn = Annotated[float | None, typer.Option("--height", metavar="INCHES", help="Plot height.")]
Dpi = Annotated[float | None, typer.Option("--dpi", metavar="DPI", help="PNG resolution (default 200).")]
PlotCaption = Annotated[
    Caption,
    typer.Option(
        "--caption", metavar="short|full|none", help="Plot caption; full: every roof's source and formula."
    ),
]
