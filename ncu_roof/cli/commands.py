"""Which module registers each command on the app: `main` imports only the one a command line
names (`ncu-roof predict` never loads the analysis), every one for the help or a typo."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

COMMAND_MODULES = {  # in the order the help lists them
    "analyze": "analyze",
    "gpus": "predict",
    "predict": "predict",
    "profile": "profile",
    "plot": "report",
    "diff": "report",
    "history": "history",
}
_HELP = ("-h", "--help")


def register(args: Sequence[str]) -> None:
    """Import the module of the command `args` name (the first word not an option: the root
    options take no value), or every command module when they name none or ask for the root
    help first (`ncu-roof -h gpus` lists every command)."""
    from ncu_roof.cli import app

    at = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    word = args[at] if at is not None else None
    root_help = any(a in _HELP for a in args[:at])
    names = [COMMAND_MODULES[word]] if word in COMMAND_MODULES and not root_help else COMMAND_MODULES.values()
    for name in dict.fromkeys(names):
        importlib.import_module(f"ncu_roof.cli.{name}")
    order = list(COMMAND_MODULES)  # the help's order, whichever command a process registered first
    app.registered_commands.sort(key=lambda c: order.index(c.name) if c.name in order else len(order))
